// transpose, reshape and clip in the graph front end: VerifyGraph (one Rejects... test per check),
// the JSON importer and the .vkqg round trip (with its reader checks).
#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "compiler/graph/import_json.h"
#include "compiler/graph/verify.h"
#include "compiler/graph/vkqg_io.h"
#include "graph_test_util.h"
#include "schema/graph_generated.h"

namespace vkqc {
namespace {

namespace fbg = vkqc::fb::graph;
using nlohmann::json;
using testing_util::FailsWith;
using testing_util::MakeTempDir;
using testing_util::Own;

constexpr const char* kOrigin = "layout.vkqg";
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int64_t S = ir::kSymbolicDim;

ir::Quant Q8(ir::Scheme s, float scale, int32_t zp) { return ir::Quant{s, {scale}, {zp}, 0, 0}; }

// x -> one op -> y, x a graph input, y the graph output.
struct OneOp {
  ir::Graph g;
  OneOp(ir::OpType type, std::vector<int64_t> xs, std::vector<int64_t> ys, ir::DType dt = ir::DType::F32,
        std::optional<ir::Quant> xq = {}, std::optional<ir::Quant> yq = {}) {
    g.symbolic_dim = "tokens";
    g.tensors.push_back({"x", std::move(xs), dt, std::move(xq), {}});
    g.tensors.push_back({"y", std::move(ys), dt, std::move(yq), {}});
    ir::Op op;
    op.name = "op";
    op.type = type;
    op.inputs = {0};
    op.outputs = {1};
    g.ops = {op};
    g.inputs = {0};
    g.outputs = {1};
  }
  ir::Op& op() { return g.ops[0]; }
  ir::Tensor& x() { return g.tensors[0]; }
  ir::Tensor& y() { return g.tensors[1]; }
  Status Verify() const { return VerifyGraph(g, kOrigin); }
};

OneOp Transpose(std::vector<int64_t> xs, std::vector<int32_t> perm, ir::DType dt = ir::DType::F32) {
  std::vector<int64_t> ys;
  for (int32_t a : perm) ys.push_back(xs[size_t(a)]);
  std::optional<ir::Quant> q;
  if (dt == ir::DType::I8) q = Q8(ir::Scheme::Q8TA, 0.05f, 3);
  OneOp o(ir::OpType::Transpose, std::move(xs), ys, dt, q, q);
  o.op().transpose.perm = std::move(perm);
  return o;
}

OneOp Clip(float lo, float hi) {
  OneOp o(ir::OpType::Clip, {2, 7}, {2, 7});
  o.op().unary = {lo, hi};
  return o;
}

// ---- verifier: transpose ------------------------------------------------------------------------
TEST(VerifyLayoutTest, AcceptsEveryPermOf4dF32AndI8) {
  std::vector<int32_t> perm{0, 1, 2, 3};
  int n = 0;
  do {
    for (ir::DType dt : {ir::DType::F32, ir::DType::I8}) {
      OneOp o = Transpose({2, 3, 5, 17}, perm, dt);
      Status s = o.Verify();
      EXPECT_TRUE(s.ok()) << s.error().message;
    }
    ++n;
  } while (std::next_permutation(perm.begin(), perm.end()));
  EXPECT_EQ(n, 24);
}

TEST(VerifyLayoutTest, AcceptsRank1To6AndSymbolicKeptFirst) {
  for (std::vector<int32_t> perm : {std::vector<int32_t>{0}, {1, 0}, {5, 4, 3, 2, 1, 0}}) {
    std::vector<int64_t> xs;
    for (size_t i = 0; i < perm.size(); ++i) xs.push_back(int64_t(i) + 2);
    Status s = Transpose(xs, perm).Verify();
    EXPECT_TRUE(s.ok()) << s.error().message;
  }
  Status s = Transpose({S, 3, 5}, {0, 2, 1}).Verify();
  EXPECT_TRUE(s.ok()) << s.error().message;
}

TEST(VerifyLayoutTest, RejectsTransposeOfConstant) {
  OneOp o = Transpose({2, 3}, {1, 0});
  std::vector<float> v(6, 1.0f);
  o.x().data = Own(testing_util::ToBytes(v));
  o.g.inputs.clear();
  EXPECT_TRUE(FailsWith(o.Verify(), {kOrigin, "op 0 'op' (transpose)", "input 'x' is a constant",
                                     "transpose takes a computed tensor"}));
}

TEST(VerifyLayoutTest, RejectsTransposeOfI32) {
  OneOp o = Transpose({2, 3}, {1, 0});
  o.x().dtype = o.y().dtype = ir::DType::I32;
  EXPECT_TRUE(FailsWith(o.Verify(), {"input 'x' is i32", "transpose takes f32, or i8 with a per-tensor q8ta/q8to"}));
}

TEST(VerifyLayoutTest, RejectsI8WithoutPerTensorQuant) {
  OneOp o = Transpose({2, 3}, {1, 0}, ir::DType::I8);
  o.x().quant.reset();
  EXPECT_TRUE(FailsWith(o.Verify(), {"input 'x' is i8 without quantization", "per-tensor q8ta/q8to"}));
  o = Transpose({2, 3}, {1, 0}, ir::DType::I8);
  ir::Quant pc{ir::Scheme::Q8PC, {0.1f, 0.2f}, {0, 0}, 0, 0};
  o.x().quant = pc;
  EXPECT_TRUE(FailsWith(o.Verify(), {"input 'x' is i8 with quant q8pc"}));
}

TEST(VerifyLayoutTest, RejectsPerTokenInt8) {
  // f32 -> quantize (dq8ca) -> transpose.
  ir::Graph g;
  g.tensors.push_back({"x", {3, 8}, ir::DType::F32, {}, {}});
  g.tensors.push_back({"q", {3, 8}, ir::DType::I8, ir::Quant{ir::Scheme::DQ8CA, {}, {}, 0, 0}, {}});
  g.tensors.push_back({"t", {8, 3}, ir::DType::I8, ir::Quant{ir::Scheme::DQ8CA, {}, {}, 0, 0}, {}});
  g.tensors.push_back({"y", {8, 3}, ir::DType::F32, {}, {}});
  ir::Op quant, tr, deq;
  quant.name = "quant";
  quant.type = ir::OpType::Quantize;
  quant.inputs = {0};
  quant.outputs = {1};
  tr.name = "tr";
  tr.type = ir::OpType::Transpose;
  tr.inputs = {1};
  tr.outputs = {2};
  tr.transpose.perm = {1, 0};
  deq.name = "deq";
  deq.type = ir::OpType::Dequantize;
  deq.inputs = {2};
  deq.outputs = {3};
  g.ops = {quant, tr, deq};
  g.inputs = {0};
  g.outputs = {3};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"per-token int8 tensor 't'"}));
  g.tensors[2].quant = Q8(ir::Scheme::Q8TA, 0.1f, 0);
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"op 1 'tr' (transpose)", "input 'q' is i8 with quant dq8ca",
                                                  "per-token parameters belong to rows"}));
}

TEST(VerifyLayoutTest, RejectsScalar) {
  OneOp o(ir::OpType::Reshape, {}, {1});
  EXPECT_TRUE(FailsWith(o.Verify(), {"input 'x' is a scalar (rank 0); reshape takes rank >= 1"}));
  OneOp p(ir::OpType::Reshape, {1}, {});
  EXPECT_TRUE(FailsWith(p.Verify(), {"output 'y' is a scalar (rank 0)"}));
}

TEST(VerifyLayoutTest, RejectsOutputDtypeChange) {
  OneOp o = Transpose({2, 3}, {1, 0}, ir::DType::I8);
  o.y().dtype = ir::DType::F32;
  o.y().quant.reset();
  EXPECT_TRUE(FailsWith(o.Verify(), {"output 'y' is f32 but input 'x' is i8", "the output has the input's dtype"}));
}

TEST(VerifyLayoutTest, RejectsOutputQuantChange) {
  OneOp o = Transpose({2, 3}, {1, 0}, ir::DType::I8);
  o.y().quant = Q8(ir::Scheme::Q8TA, 0.07f, 3);
  EXPECT_TRUE(FailsWith(o.Verify(), {"output 'y' has quant q8ta scale 0.07 zero point 3",
                                     "input 'x' has q8ta scale 0.05 zero point 3",
                                     "carries the input's scale and zero point"}));
  o.y().quant.reset();
  EXPECT_TRUE(FailsWith(o.Verify(), {"output 'y' has no quantization"}));
  // q8to with the same parameters is the same quantization.
  o.y().quant = Q8(ir::Scheme::Q8TO, 0.05f, 3);
  Status s = o.Verify();
  EXPECT_TRUE(s.ok()) << s.error().message;
}

TEST(VerifyLayoutTest, RejectsQuantOnF32Output) {
  OneOp o = Transpose({2, 3}, {1, 0});
  o.y().quant = Q8(ir::Scheme::Q8TA, 0.1f, 0);
  EXPECT_TRUE(FailsWith(o.Verify(), {"output 'y' is f32 but carries quant q8ta"}));
}

TEST(VerifyLayoutTest, RejectsRankAbove6) {
  OneOp o = Transpose({2, 1, 1, 1, 1, 1, 3}, {0, 1, 2, 3, 4, 6, 5});
  EXPECT_TRUE(FailsWith(o.Verify(), {"has rank 7; transpose takes rank 1 to 6"}));
}

TEST(VerifyLayoutTest, RejectsPermOfWrongLength) {
  OneOp o = Transpose({2, 3, 5}, {0, 2, 1});
  o.op().transpose.perm = {1, 0};
  EXPECT_TRUE(FailsWith(o.Verify(), {"perm [1, 0] has 2 entries but input 'x' [2, 3, 5] has rank 3",
                                     "one entry per dimension"}));
  o.op().transpose.perm.clear();
  EXPECT_TRUE(FailsWith(o.Verify(), {"perm [] has 0 entries"}));
}

TEST(VerifyLayoutTest, RejectsPermNotAPermutation) {
  for (std::vector<int32_t> perm : {std::vector<int32_t>{0, 0, 1}, {0, 1, 3}, {-1, 0, 1}}) {
    OneOp o = Transpose({2, 3, 5}, {0, 1, 2});
    o.op().transpose.perm = perm;
    EXPECT_TRUE(FailsWith(o.Verify(), {"is not a permutation of 0..2", "each axis exactly once"}));
  }
}

TEST(VerifyLayoutTest, RejectsMovingTheSymbolicDimension) {
  OneOp o = Transpose({S, 3}, {0, 1});
  o.op().transpose.perm = {1, 0};  // y [3, tokens] could not even be declared
  EXPECT_TRUE(FailsWith(o.Verify(), {"leads with the symbolic dimension 'tokens', which must stay first",
                                     "perm [1, 0] must start with 0"}));
}

TEST(VerifyLayoutTest, RejectsWrongTransposedShape) {
  OneOp o = Transpose({2, 3, 5, 7}, {0, 2, 3, 1});
  o.y().shape = {2, 3, 5, 7};
  EXPECT_TRUE(FailsWith(o.Verify(), {"output 'y' has shape [2, 3, 5, 7]",
                                     "input 'x' [2, 3, 5, 7] transposed by perm [0, 2, 3, 1] is [2, 5, 7, 3]"}));
}

TEST(VerifyLayoutTest, RejectsForeignAttributes) {
  OneOp o(ir::OpType::Reshape, {2, 3}, {3, 2});
  o.op().transpose.perm = {1, 0};
  EXPECT_TRUE(FailsWith(o.Verify(), {"carries transpose attributes (perm); a reshape op takes none"}));
  OneOp t = Transpose({2, 3}, {1, 0});
  t.op().unary = {0.0f, 6.0f};
  EXPECT_TRUE(FailsWith(t.Verify(), {"carries hard_sigmoid or clip attributes", "transpose op takes only its own"}));
  OneOp c = Clip(0.0f, 6.0f);
  c.op().transpose.perm = {1, 0};
  EXPECT_TRUE(FailsWith(c.Verify(), {"carries transpose attributes", "clip op takes only its own"}));
}

// ---- verifier: reshape ----------------------------------------------------------------------------
TEST(VerifyLayoutTest, AcceptsReshapes) {
  Status s = OneOp(ir::OpType::Reshape, {2, 3, 5}, {30}).Verify();
  EXPECT_TRUE(s.ok()) << s.error().message;
  s = OneOp(ir::OpType::Reshape, {S, 3, 5}, {S, 15}).Verify();
  EXPECT_TRUE(s.ok()) << s.error().message;
  const ir::Quant q = Q8(ir::Scheme::Q8TO, 0.1f, -2);
  s = OneOp(ir::OpType::Reshape, {4, 6}, {2, 2, 6}, ir::DType::I8, q, q).Verify();
  EXPECT_TRUE(s.ok()) << s.error().message;
}

TEST(VerifyLayoutTest, RejectsElementCountChange) {
  EXPECT_TRUE(FailsWith(OneOp(ir::OpType::Reshape, {3, 4}, {2, 5}).Verify(),
                        {"op 0 'op' (reshape)", "output 'y' [2, 5] has 10 elements but input 'x' [3, 4] has 12",
                         "reshape keeps the element count"}));
  EXPECT_TRUE(FailsWith(OneOp(ir::OpType::Reshape, {S, 4}, {S, 2, 3}).Verify(),
                        {"has 6 elements but input 'x' [tokens, 4] has 4 (per 'tokens')"}));
}

TEST(VerifyLayoutTest, RejectsSymbolicOnOneSide) {
  EXPECT_TRUE(FailsWith(OneOp(ir::OpType::Reshape, {S, 4}, {4, 1}).Verify(),
                        {"input 'x' [tokens, 4] leads with the symbolic dimension 'tokens' but output 'y' [4, 1]",
                         "keeps it leading in both"}));
}

// ---- verifier: clip -------------------------------------------------------------------------------
TEST(VerifyLayoutTest, AcceptsClipBounds) {
  for (auto [lo, hi] : {std::pair{0.0f, 6.0f}, {0.0f, kInf}, {-kInf, 1.5f}, {-kInf, kInf}, {2.0f, 2.0f}}) {
    Status s = Clip(lo, hi).Verify();
    EXPECT_TRUE(s.ok()) << s.error().message;
  }
}

TEST(VerifyLayoutTest, RejectsClipNan) {
  EXPECT_TRUE(FailsWith(Clip(std::nanf(""), 1.0f).Verify(), {"op 0 'op' (clip)", "min nan and max 1", "not nan"}));
}

TEST(VerifyLayoutTest, RejectsClipMinAboveMax) {
  EXPECT_TRUE(FailsWith(Clip(6.0f, 0.0f).Verify(), {"min 6 is greater than max 0; give min <= max"}));
}

TEST(VerifyLayoutTest, RejectsClipOfI8AndShapeChange) {
  OneOp o = Clip(0.0f, 6.0f);
  o.x().dtype = ir::DType::I8;
  o.x().quant = Q8(ir::Scheme::Q8TA, 0.1f, 0);
  EXPECT_TRUE(FailsWith(o.Verify(), {"input 'x' is i8; clip takes f32 inputs"}));
  OneOp p = Clip(0.0f, 6.0f);
  p.y().shape = {7, 2};
  EXPECT_TRUE(FailsWith(p.Verify(), {"output 'y' is f32 [7, 2]; it must be f32 [2, 7]"}));
}

// ---- JSON import ----------------------------------------------------------------------------------
class ImportLayoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = MakeTempDir() + "/layout.json";
    doc_ = json::parse(R"({
      "format": "vkqc-graph", "version": 1, "inputs": ["x"], "outputs": ["y"],
      "tensors": [
        {"name": "x", "shape": [2, 3, 5, 4], "dtype": "i8", "quant": {"scheme": "q8ta", "scale": 0.5, "zero_point": 1}},
        {"name": "t", "shape": [2, 5, 4, 3], "dtype": "i8"},
        {"name": "r", "shape": [40, 3], "dtype": "i8"},
        {"name": "f", "shape": [40, 3]},
        {"name": "y", "shape": [40, 3]}
      ],
      "ops": [
        {"type": "transpose", "name": "tr", "inputs": ["x"], "outputs": ["t"], "perm": [0, 2, 3, 1]},
        {"type": "reshape", "name": "rs", "inputs": ["t"], "outputs": ["r"]},
        {"type": "dequantize", "name": "dq", "inputs": ["r"], "outputs": ["f"]},
        {"type": "clip", "name": "cl", "inputs": ["f"], "outputs": ["y"], "min": -1, "max": 6}
      ]})");
  }
  Result<ir::Graph> Import() {
    const std::string text = doc_.dump(2);
    EXPECT_TRUE(WriteFileBytes(path_, text.data(), text.size()).ok());
    return ImportJsonGraph(path_);
  }
  std::string path_;
  json doc_;
};

TEST_F(ImportLayoutTest, ImportsAndRoundTrips) {
  auto g = Import();
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->ops[0].type, ir::OpType::Transpose);
  EXPECT_EQ(g->ops[0].transpose.perm, (std::vector<int32_t>{0, 2, 3, 1}));
  EXPECT_EQ(g->ops[1].type, ir::OpType::Reshape);
  EXPECT_EQ(g->ops[3].type, ir::OpType::Clip);
  EXPECT_EQ(g->ops[3].unary.alpha, -1.0f);
  EXPECT_EQ(g->ops[3].unary.beta, 6.0f);
  // i8 outputs declared without a quant take their input's.
  for (int t : {1, 2}) {
    ASSERT_TRUE(g->tensors[size_t(t)].quant.has_value());
    EXPECT_TRUE(*g->tensors[size_t(t)].quant == *g->tensors[0].quant);
  }
  auto bytes = SerializeGraph(*g);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  auto back = ReadGraphBytes(std::make_shared<const std::vector<uint8_t>>(*bytes), kOrigin);
  ASSERT_TRUE(back.ok()) << back.error().message;
  testing_util::ExpectSameGraph(*g, *back);
  for (size_t i = 0; i < g->ops.size(); ++i) {
    EXPECT_TRUE(g->ops[i].transpose == back->ops[i].transpose) << i;
    EXPECT_TRUE(g->ops[i].unary == back->ops[i].unary) << i;
  }
  auto again = SerializeGraph(*back);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *bytes);
}

TEST_F(ImportLayoutTest, ClipBoundsDefaultToInfinityAndRoundTrip) {
  doc_["ops"][3].erase("min");
  doc_["ops"][3].erase("max");
  auto g = Import();
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->ops[3].unary.alpha, -kInf);
  EXPECT_EQ(g->ops[3].unary.beta, kInf);
  doc_["ops"][3]["min"] = 0;  // relu
  g = Import();
  ASSERT_TRUE(g.ok()) << g.error().message;
  auto bytes = SerializeGraph(*g);
  ASSERT_TRUE(bytes.ok());
  auto back = ReadGraphBytes(std::make_shared<const std::vector<uint8_t>>(*bytes), kOrigin);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->ops[3].unary.alpha, 0.0f);
  EXPECT_EQ(back->ops[3].unary.beta, kInf);
}

TEST_F(ImportLayoutTest, RejectsMissingOrBadPerm) {
  doc_["ops"][0].erase("perm");
  EXPECT_TRUE(FailsWith(Import(), {"ops[0] 'tr'", "missing required key 'perm'"}));
  doc_["ops"][0]["perm"] = "0231";
  EXPECT_TRUE(FailsWith(Import(), {"perm must be an array of at most 6 axis indices", "\"0231\""}));
  doc_["ops"][0]["perm"] = {0, 1, 2, 3, 4, 5, 6};
  EXPECT_TRUE(FailsWith(Import(), {"perm must be an array of at most 6"}));
  doc_["ops"][0]["perm"] = {0, 2.5, 3, 1};
  EXPECT_TRUE(FailsWith(Import(), {"perm must be an array"}));
  doc_["ops"][0]["perm"] = {0, 2, 2, 1};
  EXPECT_TRUE(FailsWith(Import(), {"op 0 'tr' (transpose)", "perm [0, 2, 2, 1] is not a permutation of 0..3"}));
}

TEST_F(ImportLayoutTest, RejectsBadClipBounds) {
  doc_["ops"][3]["max"] = "inf";
  EXPECT_TRUE(FailsWith(Import(), {"ops[3] 'cl'", "max must be a finite number in float range", "leave it out"}));
  doc_["ops"][3]["max"] = 1e39;
  EXPECT_TRUE(FailsWith(Import(), {"max must be a finite number in float range"}));
  doc_["ops"][3]["max"] = -2;
  EXPECT_TRUE(FailsWith(Import(), {"op 3 'cl' (clip)", "min -1 is greater than max -2"}));
  doc_["ops"][3]["max"] = 6;
  doc_["ops"][3]["alpha"] = 0.1;
  EXPECT_TRUE(FailsWith(Import(), {"unknown key 'alpha'", "min, max"}));
}

TEST_F(ImportLayoutTest, RejectsReshapeAttributesAndBadCount) {
  doc_["ops"][1]["shape"] = {40, 3};
  EXPECT_TRUE(FailsWith(Import(), {"ops[1] 'rs'", "unknown key 'shape'"}));
  doc_["ops"][1].erase("shape");
  doc_["tensors"][2]["shape"] = {41, 3};
  EXPECT_TRUE(FailsWith(Import(), {"op 1 'rs' (reshape)", "has 123 elements but input 't' [2, 5, 4, 3] has 120"}));
}

TEST(ImportLayoutDocTest, DocExampleImports) {
  std::string block;
  for (const std::string& b : testing_util::DocJsonBlocks())
    if (b.find("\"to_nhwc\"") != std::string::npos) block = b;
  ASSERT_FALSE(block.empty()) << "docs/graph-json.md lacks the layout example";
  const std::string path = MakeTempDir() + "/doc.json";
  ASSERT_TRUE(WriteFileBytes(path, block.data(), block.size()).ok());
  auto g = ImportJsonGraph(path);
  ASSERT_TRUE(g.ok()) << g.error().message;
  ASSERT_EQ(g->ops.size(), 4u);
  EXPECT_EQ(g->ops[0].transpose.perm, (std::vector<int32_t>{0, 2, 3, 1}));
  EXPECT_EQ(g->ops[1].unary.beta, 6.0f);
  EXPECT_EQ(g->ops[2].type, ir::OpType::Reshape);
  EXPECT_EQ(g->ops[3].unary.beta, kInf);
}

// ---- .vkqg reader ---------------------------------------------------------------------------------
// "a" [2, 3] -> op -> "y" [3, 2] ([2, 3] for clip), with the given type and attributes, built directly.
std::vector<uint8_t> RawOp(fbg::OpType type, fbg::OpAttrs attrs_type, bool long_perm = false) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fbg::Tensor>> tensors;
  tensors.push_back(fbg::CreateTensor(fbb, fbb.CreateString("a"), fbb.CreateVector(std::vector<int64_t>{2, 3})));
  tensors.push_back(fbg::CreateTensor(fbb, fbb.CreateString("y"), fbb.CreateVector(type == fbg::OpType::Clip ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{3, 2})));
  flatbuffers::Offset<void> attrs = 0;
  if (attrs_type == fbg::OpAttrs::TransposeAttrs)
    attrs = fbg::CreateTransposeAttrs(fbb, fbb.CreateVector(std::vector<int32_t>(long_perm ? 100 : 2, 1))).Union();
  if (attrs_type == fbg::OpAttrs::UnaryAttrs) attrs = fbg::CreateUnaryAttrs(fbb, 0.0f, 6.0f).Union();
  auto op = fbg::CreateOp(fbb, fbb.CreateString("raw"), type, fbb.CreateVector(std::vector<int32_t>{0}),
                          fbb.CreateVector(std::vector<int32_t>{1}), attrs_type, attrs);
  auto root = fbg::CreateGraph(fbb, 1, fbb.CreateVector(tensors),
                               fbb.CreateVector(std::vector<flatbuffers::Offset<fbg::Op>>{op}),
                               fbb.CreateVector(std::vector<int32_t>{0}), fbb.CreateVector(std::vector<int32_t>{1}),
                               fbb.CreateString("tokens"), 0);
  fbg::FinishSizePrefixedGraphBuffer(fbb, root);
  std::vector<uint8_t> out(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  out.resize((out.size() + 63) / 64 * 64, 0);
  return out;
}

Result<ir::Graph> Read(std::vector<uint8_t> bytes) {
  return ReadGraphBytes(std::make_shared<const std::vector<uint8_t>>(std::move(bytes)), kOrigin);
}

TEST(VkqgLayoutTest, SchemaNumbersMatchIr) {
  EXPECT_EQ(int(fbg::OpType::Transpose), int(ir::OpType::Transpose));
  EXPECT_EQ(int(fbg::OpType::Reshape), int(ir::OpType::Reshape));
  EXPECT_EQ(int(fbg::OpType::Clip), int(ir::OpType::Clip));
  EXPECT_EQ(int(ir::OpType::Transpose), 20);
  EXPECT_EQ(int(ir::OpType::Clip), 22);
  EXPECT_STREQ(ir::OpTypeName(ir::OpType::Transpose), "transpose");
  EXPECT_STREQ(ir::OpTypeName(ir::OpType::Reshape), "reshape");
  EXPECT_STREQ(ir::OpTypeName(ir::OpType::Clip), "clip");
}

TEST(VkqgLayoutTest, ReadsRawOps) {
  auto r = Read(RawOp(fbg::OpType::Reshape, fbg::OpAttrs::NONE));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->ops[0].type, ir::OpType::Reshape);
  r = Read(RawOp(fbg::OpType::Clip, fbg::OpAttrs::UnaryAttrs));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->ops[0].unary.beta, 6.0f);
}

TEST(VkqgLayoutTest, RejectsClipWithoutBounds) {
  EXPECT_TRUE(FailsWith(Read(RawOp(fbg::OpType::Clip, fbg::OpAttrs::NONE)),
                        {kOrigin, "op 0 'raw'", "a clip op without UnaryAttrs (its min and max)"}));
}

TEST(VkqgLayoutTest, RejectsAttributesOfAnotherOp) {
  EXPECT_TRUE(FailsWith(Read(RawOp(fbg::OpType::Reshape, fbg::OpAttrs::TransposeAttrs)),
                        {"a reshape op carries TransposeAttrs (attributes of transpose)", "it takes no attributes"}));
  EXPECT_TRUE(FailsWith(Read(RawOp(fbg::OpType::Transpose, fbg::OpAttrs::UnaryAttrs)),
                        {"a transpose op carries UnaryAttrs", "it takes its own attribute table"}));
}

TEST(VkqgLayoutTest, RejectsHugePermAndBadPerm) {
  EXPECT_TRUE(FailsWith(Read(RawOp(fbg::OpType::Transpose, fbg::OpAttrs::TransposeAttrs, true)),
                        {"perm has 100 entries"}));
  EXPECT_TRUE(FailsWith(Read(RawOp(fbg::OpType::Transpose, fbg::OpAttrs::TransposeAttrs)),
                        {"op 0 'raw' (transpose)", "perm [1, 1] is not a permutation of 0..1"}));
}

TEST(VkqgLayoutTest, SerializeRefusesForeignAttributes) {
  OneOp o(ir::OpType::Reshape, {2, 3}, {6});
  o.op().transpose.perm = {1, 0};
  auto r = SerializeGraph(o.g);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(testing_util::MessageHas(r.error(), {"'op'", "transpose attributes"}));
}

}  // namespace
}  // namespace vkqc
