// JSON import of the quantize op and per-token int8 tensors, starting from the "quantize once"
// example of docs/graph-json.md (its fourth ```json block), plus one Rejects... test per check.
#include <nlohmann/json.hpp>

#include "compiler/graph/import_json.h"
#include "compiler/graph/safetensors.h"
#include "compiler/graph/vkqg_io.h"
#include "graph_test_util.h"

namespace vkqc {
namespace {

using nlohmann::json;
using testing_util::DocJsonBlocks;
using testing_util::ExpectSameGraph;
using testing_util::FailsWith;
using testing_util::MakeQuantizeGraph;
using testing_util::MakeTempDir;
using testing_util::QuantizeGraphWeights;

constexpr const char* kQuantOp = "op 0 'quant_x' (quantize)";

class ImportQuantizeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    json_path_ = dir_ + "/model.json";
    ASSERT_TRUE(WriteSafetensors(dir_ + "/shared.safetensors", QuantizeGraphWeights()).ok());
    const std::vector<std::string> blocks = DocJsonBlocks();
    ASSERT_GE(blocks.size(), 4u) << "docs/graph-json.md lacks the quantize example";
    block_ = blocks[3];
    ASSERT_NE(block_.find("\"quantize\""), std::string::npos) << block_;
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

  std::string dir_, json_path_, block_;
  json doc_;
};

TEST_F(ImportQuantizeTest, DocumentedExampleMatchesIrAndRoundTrips) {
  auto r = ImportText(block_);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectSameGraph(MakeQuantizeGraph(), r.value());
  EXPECT_EQ(r->ops[0].type, ir::OpType::Quantize);
  EXPECT_EQ(r->tensors[1].quant->scheme, ir::Scheme::DQ8CA);
  EXPECT_TRUE(r->tensors[1].quant->scales.empty());
  EXPECT_EQ(r->ops[1].linear.input_quant.scheme, ir::Scheme::None);
  const std::string vkqg = dir_ + "/shared.vkqg";
  ASSERT_TRUE(WriteGraphFile(r.value(), vkqg).ok());
  auto back = ReadGraphFile(vkqg);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ExpectSameGraph(r.value(), back.value());
}

TEST_F(ImportQuantizeTest, AcceptsStaticPerTensorQuantize) {
  Tensor("xq")["quant"] = {{"scheme", "q8ta"}, {"scale", 0.1}, {"zero_point", -3}};
  auto r = Import();
  ASSERT_TRUE(r.ok()) << r.error().message;
  const ir::Quant& q = *r->tensors[1].quant;
  EXPECT_EQ(q.scheme, ir::Scheme::Q8TA);
  EXPECT_EQ(q.scales, std::vector<float>{0.1f});
  EXPECT_EQ(q.zero_points, std::vector<int32_t>{-3});
}

TEST_F(ImportQuantizeTest, RejectsDq8caWithParameterKeys) {
  for (auto [key, value] : {std::pair<const char*, json>{"scale", 0.1},
                            {"zero_point", 0},
                            {"scales", json::array({0.1})},
                            {"zero_points", json::array({0})}}) {
    SCOPED_TRACE(key);
    doc_ = json::parse(block_);
    Tensor("xq")["quant"][key] = value;
    EXPECT_TRUE(FailsWith(
        Import(), {json_path_, "tensors[1] 'xq'", std::string("quant dq8ca takes no '") + key + "'",
                   "computed at run time", "use q8ta"}));
  }
}

TEST_F(ImportQuantizeTest, RejectsOutputNotI8) {
  Tensor("xq").erase("dtype");
  EXPECT_TRUE(FailsWith(Import(), {json_path_, kQuantOp, "output 'xq' is f32", "writes i8"}));
  Tensor("xq")["dtype"] = "i32";
  EXPECT_TRUE(FailsWith(Import(), {json_path_, kQuantOp, "output 'xq' is i32"}));
}

TEST_F(ImportQuantizeTest, RejectsOutputWithoutQuantOrWithWeightScheme) {
  Tensor("xq").erase("quant");
  EXPECT_TRUE(FailsWith(Import(), {json_path_, kQuantOp, "output 'xq' has no quant"}));
  Tensor("xq")["quant"] = {{"scheme", "q8csw"}, {"scales", {0.1}}};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, kQuantOp, "output 'xq' has quant q8csw",
                                   "use q8ta (static per tensor), q8pc (static per channel) or dq8ca"}));
}

TEST_F(ImportQuantizeTest, RejectsQ8taZeroScale) {
  Tensor("xq")["quant"] = {{"scheme", "q8ta"}, {"scale", 0}, {"zero_point", 0}};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "tensor 'xq'", "scale[0] is 0", "> 0"}));
}

TEST_F(ImportQuantizeTest, RejectsConstantInput) {
  Op(0)["inputs"] = {"b.bias"};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, kQuantOp, "input 'b.bias' is a constant"}));
}

TEST_F(ImportQuantizeTest, RejectsInputNotRank2) {
  Tensor("x")["shape"] = {"tokens", 2, 8};
  Tensor("xq")["shape"] = {"tokens", 2, 8};
  EXPECT_TRUE(
      FailsWith(Import(), {json_path_, kQuantOp, "input 'x' has shape [tokens, 2, 8]", "rank 2"}));
}

TEST_F(ImportQuantizeTest, RejectsShapeMismatch) {
  Tensor("xq")["shape"] = {"tokens", 8};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, kQuantOp, "output 'xq' has shape [tokens, 8]",
                                   "input 'x' has shape [tokens, 16]"}));
}

TEST_F(ImportQuantizeTest, RejectsPerTokenGraphInput) {
  doc_["ops"].erase(0);
  doc_["inputs"] = {"xq"};
  EXPECT_TRUE(FailsWith(Import(), {json_path_,
                                   "per-token int8 tensor 'xq' cannot be a graph input/output in "
                                   "this version",
                                   "listed as a graph input"}));
}

TEST_F(ImportQuantizeTest, RejectsPerTokenGraphOutput) {
  doc_["outputs"] = {"ya", "yb", "xq"};
  EXPECT_TRUE(FailsWith(Import(), {json_path_,
                                   "per-token int8 tensor 'xq' cannot be a graph input/output in "
                                   "this version",
                                   "listed as a graph output"}));
}

TEST_F(ImportQuantizeTest, RejectsAttributesOnQuantize) {
  Op(0)["input_quant"] = {{"scheme", "dq8ca"}};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[0] 'quant_x'", "unknown key 'input_quant'"}));
}

TEST_F(ImportQuantizeTest, RejectsInputQuantOnLinearReadingPerTokenInt8) {
  Op(1)["input_quant"] = {{"scheme", "dq8ca"}};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "op 1 'proj_a' (linear)",
                                   "input 'xq' is already int8", "remove input_quant"}));
}

}  // namespace
}  // namespace vkqc
