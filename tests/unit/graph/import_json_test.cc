// JSON authoring import (docs/graph-json.md): a 2-layer graph, u8 conversion, and one Rejects...
// test per check; every error must name the file and the thing at fault.
#include "compiler/graph/import_json.h"

#include <nlohmann/json.hpp>

#include "compiler/graph/safetensors.h"
#include "compiler/graph/vkqg_io.h"
#include "graph_test_util.h"

namespace vkqc {
namespace {

using nlohmann::json;
using testing_util::ConstBytes;
using testing_util::FailsWith;
using testing_util::MakeTempDir;
using testing_util::Pattern;
using testing_util::ToBytes;

std::vector<uint8_t> U8Pattern(size_t n, int seed) {
  std::vector<uint8_t> out;
  for (int8_t v : Pattern(n, seed)) out.push_back(static_cast<uint8_t>(v + 128));
  return out;
}

class ImportJsonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    json_path_ = dir_ + "/model.json";
    weights_path_ = dir_ + "/w.safetensors";
    Status s = WriteSafetensors(
        weights_path_,
        {
            {"fc1.weight", "I8", {5, 8}, ToBytes(Pattern(40, 1))},
            {"fc1.bias", "F32", {5}, ToBytes(std::vector<float>{-1, -0.5f, 0, 0.5f, 1})},
            {"fc2.weight", "I8", {3, 5}, ToBytes(Pattern(15, 2))},
            {"fc2.scales", "F32", {3}, ToBytes(std::vector<float>{0.02f, 0.04f, 0.06f})},
            {"fc2.zp", "I32", {3}, ToBytes(std::vector<int32_t>{0, 0, 0})},
            {"u8.weight", "U8", {3, 5}, U8Pattern(15, 2)},
            {"u8.zp", "U8", {3}, {128, 128, 128}},
            {"u8.bad_zp", "U8", {3}, {128, 127, 128}},
            {"fc2.packed4", "U8", {8}, std::vector<uint8_t>(8, 0x98)},
        });
    ASSERT_TRUE(s.ok()) << s.error().message;
    doc_ = json::parse(R"({
      "format": "vkqc-graph",
      "version": 1,
      "weights": "w.safetensors",
      "symbolic_dim": "tokens",
      "inputs": ["x"],
      "outputs": ["y"],
      "tensors": [
        {"name": "x", "shape": ["tokens", 8], "dtype": "f32"},
        {"name": "fc1.weight", "shape": [5, 8], "dtype": "i8", "data": "fc1.weight",
         "quant": {"scheme": "q8csw", "scales": [0.01, 0.02, 0.03, 0.04, 0.05], "axis": 0}},
        {"name": "fc1.bias", "shape": [5], "dtype": "f32", "data": "fc1.bias"},
        {"name": "h1", "shape": ["tokens", 5], "comment": "dtype defaults to f32"},
        {"name": "fc2.weight", "shape": [3, 5], "dtype": "i8", "data": "fc2.weight",
         "quant": {"scheme": "q8csw", "scales": "fc2.scales", "zero_points": "fc2.zp"}},
        {"name": "y", "shape": ["tokens", 3], "dtype": "f32"}
      ],
      "ops": [
        {"type": "linear", "name": "fc1", "inputs": ["x", "fc1.weight", "fc1.bias"],
         "outputs": ["h1"], "input_quant": {"scheme": "q8ta", "scale": 0.05, "zero_point": -3},
         "fused_relu": true},
        {"type": "linear", "name": "fc2", "inputs": ["h1", "fc2.weight"], "outputs": ["y"],
         "input_quant": {"scheme": "float"}}
      ]
    })");
  }

  Result<ir::Graph> ImportText(const std::string& text) {
    Status s = WriteFileBytes(json_path_, text.data(), text.size());
    EXPECT_TRUE(s.ok());
    return ImportJsonGraph(json_path_);
  }
  Result<ir::Graph> Import() { return ImportText(doc_.dump(2)); }
  json& Tensor(int i) { return doc_["tensors"][i]; }
  json& Op(int i) { return doc_["ops"][i]; }

  std::string dir_, json_path_, weights_path_;
  json doc_;
};

TEST_F(ImportJsonTest, ImportsTwoLayerGraph) {
  auto r = Import();
  ASSERT_TRUE(r.ok()) << r.error().message;
  const ir::Graph& g = r.value();
  ASSERT_EQ(g.tensors.size(), 6u);
  ASSERT_EQ(g.ops.size(), 2u);
  EXPECT_EQ(g.symbolic_dim, "tokens");
  EXPECT_EQ(g.inputs, std::vector<int>{0});
  EXPECT_EQ(g.outputs, std::vector<int>{5});
  EXPECT_EQ(g.tensors[0].shape, (std::vector<int64_t>{ir::kSymbolicDim, 8}));
  EXPECT_EQ(g.tensors[3].dtype, ir::DType::F32);

  const ir::Tensor& w1 = g.tensors[1];
  EXPECT_EQ(w1.dtype, ir::DType::I8);
  EXPECT_EQ(ConstBytes(w1), ToBytes(Pattern(40, 1)));
  ASSERT_TRUE(w1.quant.has_value());
  EXPECT_EQ(w1.quant->scheme, ir::Scheme::Q8CSW);
  ASSERT_EQ(w1.quant->scales.size(), 5u);
  EXPECT_FLOAT_EQ(w1.quant->scales[4], 0.05f);
  EXPECT_EQ(ConstBytes(g.tensors[2]), ToBytes(std::vector<float>{-1, -0.5f, 0, 0.5f, 1}));
  EXPECT_EQ(g.tensors[4].quant->scales, (std::vector<float>{0.02f, 0.04f, 0.06f}));
  EXPECT_EQ(g.tensors[4].quant->zero_points, (std::vector<int32_t>{0, 0, 0}));

  const ir::Op& fc1 = g.ops[0];
  EXPECT_EQ(fc1.name, "fc1");
  EXPECT_EQ(fc1.type, ir::OpType::Linear);
  EXPECT_EQ(fc1.inputs, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(fc1.outputs, std::vector<int>{3});
  EXPECT_TRUE(fc1.linear.fused_relu);
  EXPECT_EQ(fc1.linear.input_quant.scheme, ir::Scheme::Q8TA);
  EXPECT_EQ(fc1.linear.input_quant.scales, std::vector<float>{0.05f});
  EXPECT_EQ(fc1.linear.input_quant.zero_points, std::vector<int32_t>{-3});
  EXPECT_EQ(g.ops[1].linear.input_quant.scheme, ir::Scheme::Float);
  EXPECT_FALSE(g.ops[1].linear.fused_relu);

  // Imported graphs serialize and read back unchanged.
  const std::string vkqg = dir_ + "/model.vkqg";
  ASSERT_TRUE(WriteGraphFile(g, vkqg).ok());
  auto back = ReadGraphFile(vkqg);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(ConstBytes(back->tensors[1]), ConstBytes(w1));
  EXPECT_EQ(back->tensors[4].quant->scales, g.tensors[4].quant->scales);
}

TEST_F(ImportJsonTest, DefaultsOpNameAndSymbolicDim) {
  doc_.erase("symbolic_dim");
  Op(1).erase("name");
  auto r = Import();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->ops[1].name, "linear_1");
  EXPECT_EQ(r->symbolic_dim, "tokens");
}

TEST_F(ImportJsonTest, ConvertsU8WeightsAndActivationParams) {
  Tensor(4) = json::parse(R"({"name": "fc2.weight", "shape": [3, 5], "dtype": "u8",
      "data": "u8.weight", "quant": {"scheme": "q8csw", "scales": "fc2.scales",
      "zero_points": "u8.zp"}})");
  Op(0)["input_quant"] = {
      {"scheme", "q8ta"}, {"scale", 0.05}, {"zero_point", 125}, {"dtype", "u8"}};
  auto r = Import();
  ASSERT_TRUE(r.ok()) << r.error().message;
  const ir::Tensor& w2 = r->tensors[4];
  EXPECT_EQ(w2.dtype, ir::DType::I8);
  EXPECT_EQ(ConstBytes(w2), ToBytes(Pattern(15, 2)));
  EXPECT_TRUE(w2.quant->zero_points.empty());
  EXPECT_EQ(r->ops[0].linear.input_quant.zero_points, std::vector<int32_t>{-3});

  Tensor(4)["quant"]["zero_points"] = {128, 128, 128};
  r = Import();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(ConstBytes(r->tensors[4]), ToBytes(Pattern(15, 2)));
}

TEST_F(ImportJsonTest, RejectsU8WeightZeroPointNot128) {
  Tensor(4)["dtype"] = "u8";
  Tensor(4)["data"] = "u8.weight";
  Tensor(4)["quant"]["zero_points"] = "u8.bad_zp";
  EXPECT_TRUE(FailsWith(
      Import(), {json_path_, "tensors[4] 'fc2.weight'", "channel 1", "zero point 127", "128"}));
  Tensor(4)["quant"].erase("zero_points");
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "tensors[4] 'fc2.weight'", "128"}));
}

TEST_F(ImportJsonTest, RejectsU8ActivationZeroPointOutOfRange) {
  Op(0)["input_quant"] = {
      {"scheme", "q8ta"}, {"scale", 0.05}, {"zero_point", 256}, {"dtype", "u8"}};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[0] 'fc1'", "256", "[0, 255]"}));
}

TEST_F(ImportJsonTest, RejectsMalformedJson) {
  auto r = ImportText("{\n  \"format\": \"vkqc-graph\",\n  \"version\": 1,,\n}\n");
  EXPECT_TRUE(FailsWith(r, {json_path_ + ":3:", "invalid JSON"}));
}

TEST_F(ImportJsonTest, RejectsTruncatedJson) {
  const std::string text = doc_.dump(2);
  EXPECT_TRUE(FailsWith(ImportText(text.substr(0, text.size() / 2)),
                        {json_path_ + ":", "invalid JSON", "end of input"}));
}

// Found by the graph JSON fuzz target: a number out of double's range made the parser throw
// out_of_range, which escaped and aborted the process.
TEST_F(ImportJsonTest, RejectsNumbersOutOfRange) {
  EXPECT_TRUE(FailsWith(ImportText("{\"format\": \"vkqc-graph\", \"version\": 1e999}"),
                        {json_path_ + ":", "invalid JSON"}));
}

TEST_F(ImportJsonTest, RejectsNonObjectTopLevel) {
  EXPECT_TRUE(FailsWith(ImportText("[]"), {json_path_, "top level"}));
}

TEST_F(ImportJsonTest, RejectsMissingFile) {
  const std::string path = dir_ + "/absent.json";
  EXPECT_TRUE(FailsWith(ImportJsonGraph(path), {path, "cannot open"}));
}

TEST_F(ImportJsonTest, RejectsWrongFormatOrVersion) {
  doc_["format"] = "onnx";
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "\"format\"", "vkqc-graph"}));
  doc_["format"] = "vkqc-graph";
  doc_["version"] = 2;
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "\"version\""}));
}

TEST_F(ImportJsonTest, RejectsUnknownTopLevelKey) {
  doc_["opz"] = json::array();
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "top level", "unknown key 'opz'", "ops"}));
}

TEST_F(ImportJsonTest, RejectsUnknownOpKey) {
  Op(0)["fused_reul"] = true;
  EXPECT_TRUE(
      FailsWith(Import(), {json_path_, "ops[0] 'fc1'", "unknown key 'fused_reul'", "fused_relu"}));
}

TEST_F(ImportJsonTest, RejectsUnknownTensorAndQuantKeys) {
  Tensor(2)["dtpye"] = "f32";
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "tensors[2] 'fc1.bias'", "unknown key 'dtpye'"}));
  Tensor(2).erase("dtpye");
  Tensor(1)["quant"]["scale"] = 0.1;
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "tensors[1] 'fc1.weight'", "unknown key 'scale'"}));
  Tensor(1)["quant"].erase("scale");
  Op(1)["input_quant"]["scale"] = 0.1;
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[1] 'fc2'", "takes no scale"}));
}

TEST_F(ImportJsonTest, RejectsUnknownOpType) {
  Op(1)["type"] = "conv9";
  EXPECT_TRUE(FailsWith(Import(),
                        {json_path_, "ops[1] 'fc2'", "unknown op type 'conv9'", "known: linear"}));
}

TEST_F(ImportJsonTest, RejectsMissingTensor) {
  Op(1)["inputs"][0] = "h2";
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[1] 'fc2'", "'h2'", "not declared"}));
  Op(1)["inputs"][0] = "h1";
  doc_["outputs"] = json::array({"z"});
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "'z'", "not declared"}));
}

TEST_F(ImportJsonTest, RejectsDuplicateTensor) {
  Tensor(3)["name"] = "x";
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "tensors[3] 'x'", "tensors[0]", "unique"}));
}

TEST_F(ImportJsonTest, RejectsUnknownDimensionName) {
  Tensor(0)["shape"] = {"seq", 8};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "tensors[0] 'x'", "\"seq\"", "tokens"}));
  Tensor(0)["shape"] = {-1, 8};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "tensors[0] 'x'", "-1"}));
}

TEST_F(ImportJsonTest, RejectsMissingSafetensorsEntry) {
  Tensor(1)["data"] = "fc1.w";
  EXPECT_TRUE(FailsWith(
      Import(), {json_path_, "tensors[1] 'fc1.weight'", "'fc1.w'", weights_path_, "fc1.weight"}));
}

TEST_F(ImportJsonTest, RejectsMissingSafetensorsEntryForScales) {
  Tensor(4)["quant"]["scales"] = "fc2.scale";
  EXPECT_TRUE(
      FailsWith(Import(), {json_path_, "tensors[4] 'fc2.weight'", "'fc2.scale'", weights_path_}));
}

TEST_F(ImportJsonTest, RejectsMissingWeightsFile) {
  doc_["weights"] = "nope.safetensors";
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "tensors[1] 'fc1.weight'",
                                   dir_ + "/nope.safetensors", "cannot open"}));
  doc_.erase("weights");
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "tensors[1] 'fc1.weight'", "\"weights\""}));
}

TEST_F(ImportJsonTest, RejectsTruncatedSafetensors) {
  auto bytes = ReadFileBytes(weights_path_);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(WriteFileBytes(weights_path_, bytes.value()->data(), bytes.value()->size() - 5).ok());
  EXPECT_TRUE(FailsWith(Import(), {json_path_, weights_path_, "outside the data section"}));
}

TEST_F(ImportJsonTest, RejectsDtypeMismatch) {
  Tensor(2)["dtype"] = "f16";
  EXPECT_TRUE(FailsWith(
      Import(), {json_path_, "tensors[2] 'fc1.bias'", "declared f16", weights_path_, "F32"}));
}

TEST_F(ImportJsonTest, RejectsShapeMismatchWithSafetensors) {
  Tensor(1)["shape"] = {8, 5};
  EXPECT_TRUE(FailsWith(
      Import(), {json_path_, "tensors[1] 'fc1.weight'", "declared shape [8, 5]", "[5, 8]"}));
}

TEST_F(ImportJsonTest, RejectsShapeMismatchK) {
  Tensor(0)["shape"] = {"tokens", 9};
  EXPECT_TRUE(
      FailsWith(Import(), {json_path_, "op 0 'fc1'", "'fc1.weight'", "[5, 8]", "[tokens, 9]"}));
}

TEST_F(ImportJsonTest, RejectsScaleCountNotN) {
  Tensor(1)["quant"]["scales"] = {0.01, 0.02, 0.03, 0.04};
  EXPECT_TRUE(FailsWith(
      Import(), {json_path_, "op 0 'fc1'", "'fc1.weight'", "4 scales", "5 output channels"}));
}

TEST_F(ImportJsonTest, RejectsZeroScale) {
  Tensor(1)["quant"]["scales"][2] = 0;
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "'fc1.weight'", "scale[2]", "> 0"}));
}

TEST_F(ImportJsonTest, RejectsInt4WhenKNotMultipleOf8) {
  Tensor(4) = json::parse(R"({"name": "fc2.weight", "shape": [3, 5], "dtype": "i4",
      "data": "fc2.packed4", "quant": {"scheme": "q4gsw", "scales": [0.1, 0.1, 0.1],
      "group_size": 5}})");
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "op 1 'fc2'", "'fc2.weight'", "group_size 5", "K=5",
                                   "not a multiple of 8"}));
}

TEST_F(ImportJsonTest, RejectsQ8toWithF32OutputTensor) {
  Op(1)["output_quant"] = {{"scheme", "q8to"}, {"scale", 0.1}, {"zero_point", 0}};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[1] 'fc2'", "output_quant q8to",
                                   "output tensor 'y'", "\"dtype\": \"i8\"", "it is f32"}));
}

TEST_F(ImportJsonTest, AcceptsDq8caWithQ8cswWeights) {
  Op(1)["input_quant"] = {{"scheme", "dq8ca"}};
  auto r = Import();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->ops[1].linear.input_quant.scheme, ir::Scheme::DQ8CA);
  EXPECT_TRUE(r->ops[1].linear.input_quant.scales.empty());
  Op(1)["input_quant"]["zero_point"] = 0;
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[1] 'fc2'", "dq8ca takes no scale"}));
}

TEST_F(ImportJsonTest, RejectsUnknownScheme) {
  Tensor(1)["quant"]["scheme"] = "q8x";
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "tensors[1] 'fc1.weight'", "'q8x'", "q8csw"}));
}

TEST_F(ImportJsonTest, RejectsWrongValueTypes) {
  Op(0)["fused_relu"] = "yes";
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[0] 'fc1'", "fused_relu"}));
  Op(0)["fused_relu"] = true;
  Op(0)["inputs"] = "x";
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "ops[0] 'fc1'", "'inputs'"}));
  Op(0)["inputs"] = {"x", "fc1.weight", "fc1.bias"};
  Tensor(1)["quant"]["zero_points"] = {0.5, 0, 0, 0, 0};
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "tensors[1] 'fc1.weight'", "integers"}));
}

TEST_F(ImportJsonTest, RejectsConsumedBeforeProduced) {
  std::swap(Op(0), Op(1));
  EXPECT_TRUE(FailsWith(Import(), {json_path_, "op 0 'fc2'", "'h1'", "consumed before"}));
}

}  // namespace
}  // namespace vkqc
