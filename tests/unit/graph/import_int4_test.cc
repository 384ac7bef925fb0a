// JSON import of int4 weights, dynamic activations, int8 inputs, q8to outputs and the glue ops,
// starting from the examples in docs/graph-json.md (read from the source tree, so the documented
// JSON is what is tested), plus one Rejects... test per import check.
#include <nlohmann/json.hpp>

#include "compiler/graph/import_json.h"
#include "compiler/graph/safetensors.h"
#include "compiler/graph/vkqg_io.h"
#include "graph_test_util.h"

namespace vkqc {
namespace {

using nlohmann::json;
using testing_util::ConstBytes;
using testing_util::DocJsonBlocks;
using testing_util::ExpectSameGraph;
using testing_util::FailsWith;
using testing_util::Int4Pattern;
using testing_util::MakeInt4MlpGraph;
using testing_util::MakeQ8toGraph;
using testing_util::MakeTempDir;
using testing_util::Pack4;
using testing_util::Pattern;
using testing_util::QuantizeGraphWeights;
using testing_util::Scales;
using testing_util::ToBytes;

std::vector<uint8_t> AsBytes(const std::vector<int>& v) {
  std::vector<uint8_t> out;
  for (int x : v) out.push_back(static_cast<uint8_t>(x));
  return out;
}

// Constant bytes of tensor `name` in MakeInt4MlpGraph / MakeQ8toGraph.
std::vector<uint8_t> Bytes(const ir::Graph& g, const std::string& name) {
  return ConstBytes(g.tensors[g.FindTensor(name)]);
}

// Every entry the documented examples name (with the data of the IR test graphs), plus the
// variants the tests below switch to.
void WriteAllWeights(const std::string& dir) {
  const ir::Graph mlp = MakeInt4MlpGraph();
  const ir::Graph q8to = MakeQ8toGraph();
  const ir::Quant& gq = *mlp.tensors[1].quant;
  const ir::Quant& uq = *mlp.tensors[2].quant;
  const ir::Quant& dq = *mlp.tensors[7].quant;
  std::vector<uint8_t> up_zp;
  for (int32_t z : uq.zero_points) up_zp.push_back(static_cast<uint8_t>(z));
  std::vector<SafetensorsEntry> int4 = {
      {"gate.weight", "U8", {96, 32}, Bytes(mlp, "gate.weight")},
      {"gate.scales", "F32", {96, 2}, ToBytes(gq.scales)},
      {"up.weight", "U8", {96, 32}, Bytes(mlp, "up.weight")},
      {"up.scales", "F32", {96, 2}, ToBytes(uq.scales)},
      {"up.zero_points", "U8", {96, 2}, up_zp},
      {"down.weight", "U8", {64, 48}, Bytes(mlp, "down.weight")},
      {"down.scales", "F32", {64, 3}, ToBytes(dq.scales)},
      {"down.bias", "F32", {64}, Bytes(mlp, "down.bias")},
      // Variants: one value per byte (i4 as int8 bytes in U8 or I8), flat packed, wrong shape,
      // I32 zero points, and out-of-range values.
      {"gate.weight_bytes", "U8", {96, 64}, AsBytes(Int4Pattern(96 * 64, 1, true))},
      {"gate.weight_i8", "I8", {96, 64}, AsBytes(Int4Pattern(96 * 64, 1, true))},
      {"up.weight_bytes", "U8", {96, 64}, AsBytes(Int4Pattern(96 * 64, 2, false))},
      {"gate.weight_flat", "U8", {3072}, Bytes(mlp, "gate.weight")},
      {"gate.weight_wrong", "U8", {96, 33}, std::vector<uint8_t>(96 * 33, 0)},
      {"gate.weight_f32", "F32", {96, 64}, std::vector<uint8_t>(96 * 64 * 4, 0)},
      {"up.zero_points_i32", "I32", {192}, ToBytes(uq.zero_points)},
  };
  std::vector<uint8_t> bad_u4(96 * 64, 3);
  bad_u4[5] = 16;                              // element [0, 5]
  std::vector<uint8_t> bad_i4(96 * 64, 0xF9);  // -7 as int8
  bad_i4[64 * 2 + 7] = 8;                      // element [2, 7]: 8 > 7
  std::vector<uint8_t> bad_i4_low(96 * 64, 1);
  bad_i4_low[64 + 1] = 0xF7;  // element [1, 1]: -9 < -8
  int4.push_back({"up.weight_bad", "U8", {96, 64}, bad_u4});
  int4.push_back({"gate.weight_bad", "U8", {96, 64}, bad_i4});
  int4.push_back({"gate.weight_bad_low", "I8", {96, 64}, bad_i4_low});
  ASSERT_TRUE(WriteSafetensors(dir + "/mlp_int4.safetensors", int4).ok());

  ASSERT_TRUE(
      WriteSafetensors(dir + "/proj.safetensors",
                       {{"proj.weight", "I8", {8, 16}, Bytes(q8to, "proj.weight")},
                        {"proj.scales", "F32", {8}, ToBytes(q8to.tensors[1].quant->scales)}})
          .ok());

  ASSERT_TRUE(WriteSafetensors(dir + "/shared.safetensors", QuantizeGraphWeights()).ok());
  ASSERT_TRUE(WriteSafetensors(dir + "/cnn.safetensors", testing_util::CnnGraphWeights()).ok());
  auto floats = [](size_t n, float base) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = base + 0.01f * float(i % 7);
    return v;
  };
  ASSERT_TRUE(WriteSafetensors(dir + "/decoder.safetensors",
                               {{"emb.weight", "I8", {16, 8}, ToBytes(Pattern(128, 3))},
                                {"emb.scales", "F32", {16}, ToBytes(floats(16, 0.02f))},
                                {"norm.weight", "F32", {8}, ToBytes(floats(8, 1.0f))},
                                {"q.weight", "I8", {8, 8}, ToBytes(Pattern(64, 4))},
                                {"q.scales", "F32", {8}, ToBytes(floats(8, 0.01f))},
                                {"k.weight", "I8", {4, 8}, ToBytes(Pattern(32, 5))},
                                {"k.scales", "F32", {4}, ToBytes(floats(4, 0.01f))},
                                {"v.weight", "I8", {4, 8}, ToBytes(Pattern(32, 6))},
                                {"v.scales", "F32", {4}, ToBytes(floats(4, 0.01f))}})
                  .ok());

  std::vector<uint8_t> u8_weight;
  for (int8_t v : Pattern(15, 2)) u8_weight.push_back(static_cast<uint8_t>(v + 128));
  ASSERT_TRUE(WriteSafetensors(
                  dir + "/mlp.safetensors",
                  {{"fc1.weight", "I8", {5, 8}, ToBytes(Pattern(40, 1))},
                   {"fc1.bias", "F32", {5}, ToBytes(std::vector<float>{-1, -0.5f, 0, 0.5f, 1})},
                   {"fc2.weight_u8", "U8", {3, 5}, u8_weight},
                   {"fc2.weight_scale", "F32", {3}, ToBytes(std::vector<float>{.1f, .2f, .3f})}})
                  .ok());
}

class ImportDocTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    json_path_ = dir_ + "/model.json";
    WriteAllWeights(dir_);
    blocks_ = DocJsonBlocks();
    ASSERT_GE(blocks_.size(), 7u) << "docs/graph-json.md should hold (at least) seven ```json examples";
  }
  Result<ir::Graph> ImportText(const std::string& text) {
    EXPECT_TRUE(WriteFileBytes(json_path_, text.data(), text.size()).ok());
    return ImportJsonGraph(json_path_);
  }
  Result<ir::Graph> Import() { return ImportText(doc_.dump(2)); }
  int T(const std::string& name) {
    for (size_t i = 0; i < doc_["tensors"].size(); ++i) {
      if (doc_["tensors"][i]["name"] == name) return static_cast<int>(i);
    }
    ADD_FAILURE() << "no tensor " << name;
    return 0;
  }
  json& Tensor(const std::string& name) { return doc_["tensors"][T(name)]; }
  json& Op(int i) { return doc_["ops"][i]; }

  std::string dir_, json_path_;
  std::vector<std::string> blocks_;
  json doc_;
};

TEST_F(ImportDocTest, EveryDocumentedExampleImports) {
  for (const std::string& block : blocks_) {
    auto r = ImportText(block);
    EXPECT_TRUE(r.ok()) << r.error().message << "\n" << block;
  }
}

TEST_F(ImportDocTest, DocumentedDecoderImportsWithItsAttributes) {
  auto r = ImportText(blocks_[5]);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const ir::Graph& g = r.value();
  EXPECT_TRUE(g.tensors[size_t(g.FindTensor("k_cache"))].state);
  EXPECT_EQ(g.tensors[size_t(g.FindTensor("k_cache"))].dtype, ir::DType::F16);
  const ir::Op& rope = g.ops[5];
  ASSERT_EQ(rope.type, ir::OpType::Rope);
  EXPECT_EQ(rope.rope.head_dim, 4);
  EXPECT_EQ(rope.rope.max_positions, 32);
  EXPECT_TRUE(rope.rope.llama3);
  EXPECT_EQ(rope.rope.factor, 32.0f);
  EXPECT_EQ(rope.rope.high_freq_factor, 4.0f);  // the default
  const ir::Op& attn = g.ops[7];
  ASSERT_EQ(attn.type, ir::OpType::Attention);
  EXPECT_EQ(attn.attention.num_heads, 2);
  EXPECT_EQ(attn.attention.num_kv_heads, 1);
  EXPECT_EQ(g.ops[1].norm.eps, 1e-5f);
  // The .vkqg keeps all of it.
  const std::string vkqg = dir_ + "/decoder.vkqg";
  ASSERT_TRUE(WriteGraphFile(g, vkqg).ok());
  auto back = ReadGraphFile(vkqg);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ExpectSameGraph(g, back.value());
}

TEST_F(ImportDocTest, DocumentedInt4MlpMatchesIrAndRoundTrips) {
  auto r = ImportText(blocks_[1]);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectSameGraph(MakeInt4MlpGraph(), r.value());
  EXPECT_EQ(r->tensors[1].data->size, 96u * 64 / 2);
  const std::string vkqg = dir_ + "/mlp.vkqg";
  ASSERT_TRUE(WriteGraphFile(r.value(), vkqg).ok());
  auto back = ReadGraphFile(vkqg);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ExpectSameGraph(r.value(), back.value());
}

TEST_F(ImportDocTest, DocumentedQ8toExampleMatchesIr) {
  auto r = ImportText(blocks_[2]);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectSameGraph(MakeQ8toGraph(), r.value());
  ASSERT_TRUE(r->tensors[2].quant.has_value());
  EXPECT_EQ(r->tensors[2].quant->scheme, ir::Scheme::Q8TO);
}

// ---- int4 MLP (docs example 2) -----------------------------------------------------------------

class ImportInt4Test : public ImportDocTest {
 protected:
  void SetUp() override {
    ImportDocTest::SetUp();
    doc_ = json::parse(blocks_[1]);
  }
};

TEST_F(ImportInt4Test, PacksOneValuePerByteWeights) {
  const ir::Graph want = MakeInt4MlpGraph();
  Tensor("up.weight")["data"] = "up.weight_bytes";
  for (const char* gate : {"gate.weight_bytes", "gate.weight_i8", "gate.weight_flat"}) {
    SCOPED_TRACE(gate);
    Tensor("gate.weight")["data"] = gate;
    auto r = Import();
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(ConstBytes(r->tensors[1]), Bytes(want, "gate.weight"));
    EXPECT_EQ(ConstBytes(r->tensors[2]), Bytes(want, "up.weight"));
  }
  // The packing itself: [-8, 7, 0, -1] -> 0x78, 0xF0.
  EXPECT_EQ(Pack4({-8, 7, 0, -1}), (std::vector<uint8_t>{0x78, 0xF0}));
}

TEST_F(ImportInt4Test, AcceptsInlineScalesAndI32ZeroPoints) {
  const ir::Graph want = MakeInt4MlpGraph();
  Tensor("up.weight")["quant"]["zero_points"] = "up.zero_points_i32";
  Tensor("down.weight")["quant"]["scales"] = want.tensors[7].quant->scales;
  Tensor("up.weight")["quant"]["scales"] = want.tensors[2].quant->scales;
  auto r = Import();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectSameGraph(want, r.value());
}

TEST_F(ImportInt4Test, RejectsNibbleOutOfRangeInOneValuePerByte) {
  Tensor("up.weight")["data"] = "up.weight_bad";
  EXPECT_TRUE(FailsWith(
      Import(), {json_path_, "tensors[2] 'up.weight'", "'up.weight_bad'", "mlp_int4.safetensors",
                 "one value per byte", "element [0, 5] is 16", "u4 range [0, 15]"}));
  Tensor("up.weight")["data"] = "up.weight";
  Tensor("gate.weight")["data"] = "gate.weight_bad";
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "tensors[1] 'gate.weight'", "'gate.weight_bad'",
                                   "element [2, 7] is 8", "[-8, 7]"}));
  Tensor("gate.weight")["data"] = "gate.weight_bad_low";
  EXPECT_TRUE(FailsWith(
      Import(), {json_path_, "tensors[1] 'gate.weight'", "element [1, 1] is -9", "[-8, 7]"}));
}

TEST_F(ImportInt4Test, RejectsInt4EntryShape) {
  Tensor("gate.weight")["data"] = "gate.weight_wrong";
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "tensors[1] 'gate.weight'", "declared i4 [96, 64]",
                                   "U8 entry of shape [96, 32]", "3072 bytes",
                                   "'gate.weight_wrong'", "U8 [96, 33]"}));
  Tensor("gate.weight")["data"] = "gate.weight_f32";
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "tensors[1] 'gate.weight'", "declared i4",
                                   "'gate.weight_f32'", "F32", "U8"}));
  Tensor("gate.weight")["data"] = "gate.weight";
  Tensor("up.weight")["data"] = "gate.weight_i8";  // I8 holds one value per byte for i4 only
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "tensors[2] 'up.weight'", "declared u4", "I8"}));
}

TEST_F(ImportInt4Test, RejectsBadGroupSize) {
  Tensor("gate.weight")["quant"]["group_size"] = 20;
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "op 0 'gate_proj'", "'gate.weight'",
                                   "group_size 20 must be a multiple of 8 that divides K=64"}));
  Tensor("gate.weight")["quant"].erase("group_size");
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "op 0 'gate_proj'", "group_size 0"}));
}

TEST_F(ImportInt4Test, RejectsWrongScaleCount) {
  Tensor("down.weight")["quant"]["scales"] = std::vector<float>(64, 0.1f);
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "op 4 'down_proj'", "'down.weight'", "64 scales",
                                   "3 groups of 32", "needs 192"}));
}

TEST_F(ImportInt4Test, RejectsZeroPointOutOfRange) {
  std::vector<int> zps(192, 8);
  zps[7] = 16;  // [3][1]
  Tensor("up.weight")["quant"]["zero_points"] = zps;
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "op 1 'up_proj'", "'up.weight'",
                                   "zero point [3][1] is 16", "[0, 15]"}));
}

TEST_F(ImportInt4Test, RejectsZeroPointsOnQ4gsw) {
  Tensor("gate.weight")["quant"]["zero_points"] = "up.zero_points";
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "op 0 'gate_proj'", "'gate.weight'",
                                   "192 zero points", "q4gsw is symmetric"}));
}

TEST_F(ImportInt4Test, RejectsDq8caWithScale) {
  Op(4)["input_quant"]["scale"] = 0.1;
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[4] 'down_proj' input_quant",
                                   "dq8ca takes no scale, zero_point or dtype"}));
}

TEST_F(ImportInt4Test, RejectsMulShapeMismatch) {
  Op(3)["inputs"] = {"act", "x"};
  EXPECT_TRUE(
      FailsWith(Import(), {json_path_, "op 3 'gated' (mul)",
                           "inputs 'act' [tokens, 96] and 'x' [tokens, 64]", "identical shapes"}));
}

TEST_F(ImportInt4Test, RejectsSiluDtype) {
  Tensor("act")["dtype"] = "f16";
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "op 2 'act_fn' (silu)", "output 'act' is f16",
                                   "must be f32 [tokens, 96]"}));
}

TEST_F(ImportInt4Test, RejectsAttributesOnGlueOps) {
  Op(2)["fused_relu"] = true;
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[2] 'act_fn'", "unknown key 'fused_relu'"}));
  Op(2).erase("fused_relu");
  Op(3)["input_quant"] = {{"scheme", "dq8ca"}};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[3] 'gated'", "unknown key 'input_quant'"}));
}

// ---- int8 in, int8 out (docs example 3) --------------------------------------------------------

class ImportQ8toTest : public ImportDocTest {
 protected:
  void SetUp() override {
    ImportDocTest::SetUp();
    doc_ = json::parse(blocks_[2]);
  }
};

TEST_F(ImportQ8toTest, AcceptsMatchingDeclaredQuantAndU8Parameters) {
  Tensor("y")["quant"] = {{"scheme", "q8to"}, {"scale", 0.2}, {"zero_point", -5}};
  auto r = Import();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectSameGraph(MakeQ8toGraph(), r.value());
  Tensor("y").erase("quant");
  Op(0)["output_quant"] = {
      {"scheme", "q8to"}, {"scale", 0.2}, {"zero_point", 123}, {"dtype", "u8"}};
  r = Import();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectSameGraph(MakeQ8toGraph(), r.value());
}

TEST_F(ImportQ8toTest, RejectsQ8toOutputNotI8) {
  Tensor("y").erase("dtype");
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[0] 'proj'", "output tensor 'y'",
                                   "\"dtype\": \"i8\"", "it is f32"}));
  Tensor("y")["dtype"] = "u8";
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[0] 'proj'", "'y'", "it is u8"}));
}

TEST_F(ImportQ8toTest, RejectsQ8toQuantMismatch) {
  Tensor("y")["quant"] = {{"scheme", "q8to"}, {"scale", 0.3}, {"zero_point", -5}};
  EXPECT_TRUE(FailsWith(
      Import(), {json_path_, "op 0 'proj'", "output 'y'", "same q8to quant", "scale 0.300000"}));
}

TEST_F(ImportQ8toTest, RejectsInt8InputWithInputQuant) {
  Op(0)["input_quant"] = {{"scheme", "q8ta"}, {"scale", 0.1}, {"zero_point", 3}};
  EXPECT_TRUE(FailsWith(
      Import(), {json_path_, "op 0 'proj'", "input 'x'", "already int8", "remove input_quant"}));
  Op(0)["input_quant"] = {{"scheme", "dq8ca"}};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "op 0 'proj'", "it is dq8ca"}));
}

// A per-token int8 tensor has no place in the graph's inputs (docs: quantize).
TEST_F(ImportQ8toTest, RejectsInt8GraphInputWithDq8caQuant) {
  Tensor("x")["quant"] = {{"scheme", "dq8ca"}};
  EXPECT_TRUE(FailsWith(Import(), {json_path_,
                                   "per-token int8 tensor 'x' cannot be a graph input/output in "
                                   "this version",
                                   "listed as a graph input", "quantize op"}));
}

TEST_F(ImportQ8toTest, RejectsTensorQuantParameterForms) {
  Tensor("x")["quant"]["scales"] = {0.1};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "tensors[0] 'x'",
                                   "both scale/zero_point and "
                                   "scales/zero_points"}));
  Tensor("x")["quant"].erase("scales");
  Tensor("x")["quant"]["zero_point"] = 128;
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "tensors[0] 'x'", "zero_point 128", "[-128, 127]"}));
  Tensor("x")["quant"]["zero_point"] = 3;
  Tensor("x")["quant"]["scale"] = "big";
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "tensors[0] 'x'", "needs \"scale\""}));
  Tensor("x")["quant"] = {{"scheme", "q8ta"}, {"scales", {0.1}}, {"zero_points", {3}}};
  auto r = Import();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectSameGraph(MakeQ8toGraph(), r.value());
}

}  // namespace
}  // namespace vkqc
