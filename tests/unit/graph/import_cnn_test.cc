// JSON import of the static-int8 CNN ops, starting from the CNN example of docs/graph-json.md
// (its fifth ```json block): the documented example, .vkqg round trips of every attribute, and
// one Rejects... test per import check (verifier checks through JSON are sampled).
#include <functional>
#include <nlohmann/json.hpp>

#include "compiler/graph/import_json.h"
#include "compiler/graph/safetensors.h"
#include "compiler/graph/vkqg_io.h"
#include "graph_test_util.h"
#include "schema/graph_generated.h"

namespace vkqc {
namespace {

using nlohmann::json;
using testing_util::CnnGraphWeights;
using testing_util::DocJsonBlocks;
using testing_util::ExpectSameGraph;
using testing_util::FailsWith;
using testing_util::MakeCnnGraph;
using testing_util::MakeTempDir;

class ImportCnnTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    json_path_ = dir_ + "/model.json";
    ASSERT_TRUE(WriteSafetensors(dir_ + "/cnn.safetensors", CnnGraphWeights()).ok());
    const std::vector<std::string> blocks = DocJsonBlocks();
    ASSERT_GE(blocks.size(), 5u) << "docs/graph-json.md lacks the CNN example";
    block_ = blocks[4];
    ASSERT_NE(block_.find("\"conv2d\""), std::string::npos) << block_;
    doc_ = json::parse(block_);
  }
  Result<ir::Graph> ImportText(const std::string& text) {
    EXPECT_TRUE(WriteFileBytes(json_path_, text.data(), text.size()).ok());
    return ImportJsonGraph(json_path_);
  }
  Result<ir::Graph> Import() { return ImportText(doc_.dump(2)); }
  json& Tensor(const std::string& name) {
    for (json& t : doc_["tensors"]) {
      if (t["name"] == name) return t;
    }
    ADD_FAILURE() << "no tensor " << name;
    return doc_["tensors"][0];
  }
  json& Op(int i) { return doc_["ops"][i]; }
  // Imports, writes .vkqg, reads it back and compares.
  void ExpectRoundTrip(const ir::Graph& g) {
    const std::string vkqg = dir_ + "/cnn.vkqg";
    ASSERT_TRUE(WriteGraphFile(g, vkqg).ok());
    auto back = ReadGraphFile(vkqg);
    ASSERT_TRUE(back.ok()) << back.error().message;
    ExpectSameGraph(g, back.value());
  }

  std::string dir_, json_path_, block_;
  json doc_;
};

TEST_F(ImportCnnTest, DocumentedExampleMatchesIrAndRoundTrips) {
  auto r = ImportText(block_);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectSameGraph(MakeCnnGraph(), r.value());
  const ir::Graph& g = r.value();
  EXPECT_EQ(g.ops[1].type, ir::OpType::Conv2d);
  EXPECT_EQ(g.ops[1].conv2d.stride[0], 2);
  EXPECT_EQ(g.ops[1].conv2d.activation, ir::Activation::Relu6);
  EXPECT_EQ(g.ops[2].conv2d.groups, 8);
  EXPECT_EQ(g.ops[4].type, ir::OpType::Add);
  EXPECT_EQ(g.ops[5].type, ir::OpType::AvgPool2d);
  EXPECT_TRUE(g.ops[5].pool.global);
  EXPECT_EQ(g.ops[6].type, ir::OpType::Dequantize);
  EXPECT_EQ(g.tensors[4].quant->scheme, ir::Scheme::Q8TO);  // given by the importer
  EXPECT_EQ(g.symbolic_dim, "batch");
  ExpectRoundTrip(g);
}

TEST_F(ImportCnnTest, ImportsAndRoundTripsEveryAttribute) {
  // stem: f32 input quantized by the op, asymmetric stride/padding, dilation, relu.
  Op(1)["inputs"][0] = "x";
  Op(1)["input_quant"] = {{"scheme", "q8ta"}, {"scale", 0.03}, {"zero_point", -2}};
  Op(1)["stride"] = {2, 1};
  Op(1)["padding"] = {1, 2, 1, 0};
  Op(1)["dilation"] = {1, 2};
  Op(1)["activation"] = "relu";
  // (8 + 1 + 1 - 3) / 2 + 1 = 4 rows; (8 + 2 + 0 - 2*2 - 1) / 1 + 1 = 6 columns.
  Tensor("h1")["shape"] = {"batch", 4, 6, 8};
  Tensor("h2")["shape"] = {"batch", 4, 6, 8};
  Op(2)["padding"] = {1, 1, 1, 1};
  // pw reads the stem output too, and the add uses relu6 and pools a 2x3 window.
  Tensor("h3")["shape"] = {"batch", 4, 6, 8};
  Tensor("h4")["shape"] = {"batch", 4, 6, 8};
  Op(4)["activation"] = "relu6";
  Op(5).erase("global");
  Op(5)["kernel"] = {2, 3};
  Op(5)["stride"] = {2, 3};
  Op(5)["padding"] = {0, 1, 1, 0};
  // (4 + 0 + 1 - 2) / 2 + 1 = 2; (6 + 1 + 0 - 3) / 3 + 1 = 2.
  Tensor("pooled")["shape"] = {"batch", 2, 2, 8};
  Tensor("feat")["shape"] = {"batch", 2, 2, 8};
  doc_["ops"].erase(7);
  for (const char* t : {"y", "fc.bias", "fc.weight"}) {
    auto& ts = doc_["tensors"];
    for (size_t i = 0; i < ts.size(); ++i) {
      if (ts[i]["name"] == t) ts.erase(i);
    }
  }
  doc_["outputs"] = {"feat"};
  auto r = Import();
  ASSERT_TRUE(r.ok()) << r.error().message;
  const ir::Graph& g = r.value();
  const ir::Conv2dAttrs& c = g.ops[1].conv2d;
  EXPECT_EQ(c.input_quant.scheme, ir::Scheme::Q8TA);
  EXPECT_EQ(c.input_quant.zero_points, std::vector<int32_t>{-2});
  EXPECT_EQ(std::vector<int32_t>(c.stride, c.stride + 2), (std::vector<int32_t>{2, 1}));
  EXPECT_EQ(std::vector<int32_t>(c.padding, c.padding + 4), (std::vector<int32_t>{1, 2, 1, 0}));
  EXPECT_EQ(std::vector<int32_t>(c.dilation, c.dilation + 2), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(c.activation, ir::Activation::Relu);
  EXPECT_EQ(g.ops[4].add.activation, ir::Activation::Relu6);
  const ir::Pool2dAttrs& p = g.ops[5].pool;
  EXPECT_FALSE(p.global);
  EXPECT_EQ(std::vector<int32_t>(p.kernel, p.kernel + 2), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(std::vector<int32_t>(p.padding, p.padding + 4), (std::vector<int32_t>{0, 1, 1, 0}));
  ExpectRoundTrip(g);
}

TEST_F(ImportCnnTest, ImportsLinearFusedRelu6AndRoundTrips) {
  Op(7)["fused_relu6"] = true;
  auto r = Import();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->ops[7].linear.fused_relu6);
  EXPECT_FALSE(r->ops[7].linear.fused_relu);
  ExpectRoundTrip(r.value());
}

TEST_F(ImportCnnTest, RejectsReluAndRelu6Together) {
  Op(7)["fused_relu"] = true;
  Op(7)["fused_relu6"] = true;
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "op 7 'fc' (linear)",
                                   "sets both fused_relu and fused_relu6"}));
  Op(7)["fused_relu6"] = "yes";
  EXPECT_TRUE(
      FailsWith(Import(), {json_path_, "ops[7] 'fc'", "fused_relu6 must be true or false"}));
}

TEST_F(ImportCnnTest, RejectsUnknownActivation) {
  Op(1)["activation"] = "gelu";
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[1] 'stem'",
                                   "activation must be \"none\", \"relu\" or \"relu6\", "
                                   "not \"gelu\""}));
  Op(1)["activation"] = 1;
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[1] 'stem'", "activation must be"}));
}

TEST_F(ImportCnnTest, RejectsWrongLengthArrays) {
  Op(1)["stride"] = {2};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[1] 'stem'",
                                   "stride must be an array of 2 integers [h, w], not [2]"}));
  Op(1)["stride"] = {2, 2};
  Op(1)["padding"] = {1, 1};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[1] 'stem'",
                                   "padding must be an array of 4 integers [top, left, bottom, "
                                   "right]"}));
  Op(1)["padding"] = {1, 1, 1, 1.5};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[1] 'stem'", "padding must be an array"}));
  Op(1)["padding"] = {1, 1, 1, 1};
  Op(5)["kernel"] = "3x3";
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[5] 'pool'", "kernel must be an array of 2"}));
}

TEST_F(ImportCnnTest, RejectsBadGroupsValue) {
  Op(2)["groups"] = "depthwise";
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[2] 'dw'", "groups must be an integer"}));
  Op(2)["groups"] = 3;
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "op 2 'dw' (conv2d)", "groups 3 must be >= 1 and "
                                   "divide the 8 input channels of 'h1'"}));
}

TEST_F(ImportCnnTest, RejectsUnknownKeys) {
  Op(1)["kernel"] = {3, 3};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[1] 'stem'", "unknown key 'kernel'",
                                   "stride, padding, dilation, groups, activation"}));
  Op(1).erase("kernel");
  Op(4)["stride"] = {1, 1};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[4] 'residual'", "unknown key 'stride'"}));
  Op(4).erase("stride");
  Op(6)["output_quant"] = {{"scheme", "q8to"}, {"scale", 0.1}};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[6] 'dequant'", "unknown key 'output_quant'"}));
  Op(6).erase("output_quant");
  Op(5)["count_include_pad"] = true;
  EXPECT_TRUE(
      FailsWith(Import(), {json_path_, "ops[5] 'pool'", "unknown key 'count_include_pad'"}));
}

TEST_F(ImportCnnTest, RejectsQ8toOutputNotDeclaredI8) {
  Tensor("h3").erase("dtype");
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[3] 'pw'", "output_quant q8to writes int8",
                                   "'h3' must be declared \"dtype\": \"i8\""}));
  Tensor("h3")["dtype"] = "i8";
  Tensor("pooled")["dtype"] = "f32";
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[5] 'pool'", "'pooled' must be declared"}));
}

TEST_F(ImportCnnTest, RejectsAddOfInt8WithoutQ8to) {
  Op(4).erase("output_quant");
  Tensor("h4")["quant"] = {{"scheme", "q8to"}, {"scale", 0.05}, {"zero_point", -10}};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "op 4 'residual' (add)",
                                   "int8 inputs 'h1' and 'h3' need output_quant q8to"}));
}

TEST_F(ImportCnnTest, RejectsAddShapeMismatch) {
  Op(4)["inputs"] = {"h1", "xq"};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "op 4 'residual' (add)",
                                   "inputs 'h1' [batch, 4, 4, 8] and 'xq' [batch, 8, 8, 3] "
                                   "differ in shape"}));
}

TEST_F(ImportCnnTest, RejectsPoolKernelMissing) {
  Op(5)["global"] = false;
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "op 5 'pool' (avg_pool2d)", "kernel [0, 0] is "
                                   "missing", "set global"}));
}

TEST_F(ImportCnnTest, RejectsConvOutputBelowOne) {
  Op(3)["inputs"] = {"h2", "stem.weight"};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "op 3 'pw' (conv2d)", "weight 'stem.weight' has "
                                   "shape [8, 3, 3, 3]", "needs [Cout, KH, KW, 8]"}));
  Op(3)["inputs"] = {"h2", "pw.weight"};
  Op(1)["dilation"] = {5, 5};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "op 1 'stem' (conv2d)", "does not fit input 'xq'",
                                   "the output would be 0x0"}));
}

TEST_F(ImportCnnTest, RejectsDequantizeOfF32) {
  Op(6)["inputs"] = {"x"};
  Tensor("feat")["shape"] = {"batch", 8, 8, 3};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "op 6 'dequant' (dequantize)", "input 'x' is f32",
                                   "drop the dequantize"}));
}

// ---- .vkqg reader: the new attribute tables are checked like the others ------------------------

namespace fbg = vkqc::fb::graph;

// A graph of one op `type` reading a [1, 4, 4, 8] tensor with the given attrs table.
std::vector<uint8_t> RawOneOp(fbg::OpType type, fbg::OpAttrs attrs_type,
                              std::function<flatbuffers::Offset<void>(
                                  flatbuffers::FlatBufferBuilder&)> attrs) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fbg::Tensor>> tensors;
  for (const char* name : {"a", "y"}) {
    tensors.push_back(fbg::CreateTensor(fbb, fbb.CreateString(name),
                                        fbb.CreateVector(std::vector<int64_t>{1, 4, 4, 8})));
  }
  auto a = attrs(fbb);
  auto op = fbg::CreateOp(fbb, fbb.CreateString("raw"), type,
                          fbb.CreateVector(std::vector<int32_t>{0, 0}),
                          fbb.CreateVector(std::vector<int32_t>{1}), attrs_type, a);
  auto root = fbg::CreateGraph(fbb, 1, fbb.CreateVector(tensors),
                               fbb.CreateVector(std::vector<flatbuffers::Offset<fbg::Op>>{op}),
                               fbb.CreateVector(std::vector<int32_t>{0}),
                               fbb.CreateVector(std::vector<int32_t>{1}),
                               fbb.CreateString("tokens"), 0);
  fbg::FinishSizePrefixedGraphBuffer(fbb, root);
  std::vector<uint8_t> out(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  out.resize((out.size() + 63) / 64 * 64, 0);
  return out;
}

Result<ir::Graph> ReadRaw(std::vector<uint8_t> bytes) {
  return ReadGraphBytes(std::make_shared<const std::vector<uint8_t>>(std::move(bytes)),
                        "raw.vkqg");
}

TEST(VkqgCnnTest, ReadsRawAddWithAttrs) {
  auto r = ReadRaw(RawOneOp(fbg::OpType::Add, fbg::OpAttrs::AddAttrs, [](auto& fbb) {
    return fbg::CreateAddAttrs(fbb, fbg::Activation::Relu6).Union();
  }));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->ops[0].add.activation, ir::Activation::Relu6);
}

TEST(VkqgCnnTest, RejectsAttrsOfAnotherOp) {
  EXPECT_TRUE(FailsWith(
      ReadRaw(RawOneOp(fbg::OpType::Add, fbg::OpAttrs::Conv2dAttrs,
                       [](auto& fbb) { return fbg::CreateConv2dAttrs(fbb).Union(); })),
      {"raw.vkqg", "op 0 'raw'", "add op carries Conv2dAttrs (attributes of conv2d)"}));
  EXPECT_TRUE(FailsWith(
      ReadRaw(RawOneOp(fbg::OpType::Dequantize, fbg::OpAttrs::Pool2dAttrs,
                       [](auto& fbb) { return fbg::CreatePool2dAttrs(fbb).Union(); })),
      {"raw.vkqg", "op 0 'raw'", "dequantize op carries Pool2dAttrs", "takes no attributes"}));
}

TEST(VkqgCnnTest, RejectsUnknownActivation) {
  EXPECT_TRUE(FailsWith(
      ReadRaw(RawOneOp(fbg::OpType::Add, fbg::OpAttrs::AddAttrs,
                       [](auto& fbb) {
                         return fbg::CreateAddAttrs(fbb, static_cast<fbg::Activation>(5)).Union();
                       })),
      {"raw.vkqg", "op 0 'raw'", "unknown activation 5", "newer vkqc"}));
}

TEST(VkqgCnnTest, RejectsWrongLengthVectors) {
  EXPECT_TRUE(FailsWith(
      ReadRaw(RawOneOp(fbg::OpType::AvgPool2d, fbg::OpAttrs::Pool2dAttrs,
                       [](auto& fbb) {
                         return fbg::CreatePool2dAttrs(
                                    fbb, fbb.CreateVector(std::vector<int32_t>{2, 2, 2}))
                             .Union();
                       })),
      {"raw.vkqg", "op 0 'raw': kernel has 3 values, expected 2"}));
  EXPECT_TRUE(FailsWith(
      ReadRaw(RawOneOp(fbg::OpType::Conv2d, fbg::OpAttrs::Conv2dAttrs,
                       [](auto& fbb) {
                         auto pad = fbb.CreateVector(std::vector<int32_t>{1, 1});
                         return fbg::CreateConv2dAttrs(fbb, 0, pad).Union();
                       })),
      {"raw.vkqg", "op 0 'raw': padding has 2 values, expected 4"}));
}

TEST(VkqgCnnTest, WriterRefusesForeignAttrs) {
  ir::Graph g = MakeCnnGraph();
  g.ops[4].pool.global = true;  // pool attrs on the add
  auto r = SerializeGraph(g);
  EXPECT_TRUE(FailsWith(r, {"op 'residual' (add) carries pool attributes"}));
}

TEST(VkqgCnnTest, RoundTripIsByteStable) {
  const ir::Graph g = MakeCnnGraph();
  auto a = SerializeGraph(g);
  ASSERT_TRUE(a.ok()) << a.error().message;
  auto r = ReadRaw(a.value());
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectSameGraph(g, r.value());
  auto b = SerializeGraph(r.value());
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a.value(), b.value());
}

}  // namespace
}  // namespace vkqc
