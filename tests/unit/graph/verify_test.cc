// IR helpers and VerifyGraph: one Rejects... test per rule.
#include "compiler/graph/verify.h"

#include <cmath>
#include <limits>

#include "graph_test_util.h"

namespace vkqc {
namespace {

using testing_util::FailsWith;
using testing_util::MakeTwoLayerGraph;
using testing_util::Own;
using testing_util::ToBytes;

constexpr const char* kOrigin = "model.vkqg";

TEST(IrTest, Names) {
  EXPECT_STREQ(ir::DTypeName(ir::DType::F32), "f32");
  EXPECT_STREQ(ir::DTypeName(ir::DType::U4), "u4");
  EXPECT_STREQ(ir::DTypeName(ir::DType::I32), "i32");
  EXPECT_EQ(ir::DTypeBits(ir::DType::F16), 16);
  EXPECT_EQ(ir::DTypeBits(ir::DType::I4), 4);
  EXPECT_EQ(ir::DTypeBits(ir::DType::U8), 8);
  EXPECT_STREQ(ir::SchemeName(ir::Scheme::None), "none");
  EXPECT_STREQ(ir::SchemeName(ir::Scheme::Q8CSW), "q8csw");
  EXPECT_STREQ(ir::SchemeName(ir::Scheme::DQ8CA), "dq8ca");
  EXPECT_STREQ(ir::SchemeName(ir::Scheme::Float), "float");
  EXPECT_STREQ(ir::OpTypeName(ir::OpType::Linear), "linear");
  EXPECT_STREQ(ir::OpTypeName(ir::OpType::Mul), "mul");
  EXPECT_STREQ(ir::OpTypeName(ir::OpType::Silu), "silu");
  EXPECT_EQ(static_cast<int>(ir::OpType::Mul), 1);
  EXPECT_EQ(static_cast<int>(ir::OpType::Silu), 2);
  EXPECT_STREQ(ir::OpTypeName(ir::OpType::Quantize), "quantize");
  EXPECT_EQ(static_cast<int>(ir::OpType::Quantize), 3);
}

TEST(IrTest, ElementsAndLookup) {
  ir::Graph g = MakeTwoLayerGraph();
  EXPECT_EQ(g.tensors[0].NumElements(), 8);
  EXPECT_EQ(g.tensors[0].NumElements(4), 32);
  EXPECT_EQ(g.tensors[1].NumElements(100), 40);
  EXPECT_EQ(g.FindTensor("h1"), 3);
  EXPECT_EQ(g.FindTensor("nope"), -1);
  EXPECT_TRUE(g.HasSymbolicDim());
  for (ir::Tensor& t : g.tensors) {
    if (!t.shape.empty() && t.shape[0] == ir::kSymbolicDim) t.shape[0] = 2;
  }
  EXPECT_FALSE(g.HasSymbolicDim());
  ir::Tensor scalar;
  EXPECT_EQ(scalar.NumElements(), 1);
}

TEST(IrTest, ReadersAndOutputs) {
  ir::Graph g = MakeTwoLayerGraph();
  const int h1 = g.FindTensor("h1");
  ASSERT_GE(h1, 0);
  const std::vector<size_t> r = g.Readers(h1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(g.ops[r[0]].inputs[0], h1);
  EXPECT_TRUE(g.Readers(g.outputs[0]).empty());  // the graph output: nothing reads it
  EXPECT_TRUE(g.IsOutput(g.outputs[0]));
  EXPECT_FALSE(g.IsOutput(h1));
  // An op reading a tensor twice is one reader; readers come in graph order.
  ir::Op twice = g.ops[r[0]];
  twice.name = "twice";
  twice.inputs = {h1, h1};
  g.ops.push_back(twice);
  g.ops.insert(g.ops.begin(), twice);
  const std::vector<size_t> r2 = g.Readers(h1);
  ASSERT_EQ(r2.size(), 3u);
  EXPECT_EQ(r2[0], 0u);
  EXPECT_EQ(r2[1], r[0] + 1);
  EXPECT_EQ(r2[2], g.ops.size() - 1);
}

TEST(VerifyTest, AcceptsTwoLayerGraph) {
  Status s = VerifyGraph(MakeTwoLayerGraph(), kOrigin);
  EXPECT_TRUE(s.ok()) << s.error().message;
}

TEST(VerifyTest, AcceptsConcreteTokens) {
  ir::Graph g = MakeTwoLayerGraph();
  for (int t : {0, 3, 5}) g.tensors[t].shape[0] = 17;
  Status s = VerifyGraph(g, kOrigin);
  EXPECT_TRUE(s.ok()) << s.error().message;
}

TEST(VerifyTest, RejectsEmptyTensorName) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[3].name.clear();
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "tensor 3", "empty name"}));
}

TEST(VerifyTest, RejectsDuplicateTensorName) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[3].name = "x";
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "'x'", "unique"}));
}

TEST(VerifyTest, RejectsConsumedBeforeProduced) {
  ir::Graph g = MakeTwoLayerGraph();
  std::swap(g.ops[0], g.ops[1]);
  EXPECT_TRUE(FailsWith(
      VerifyGraph(g, kOrigin),
      {kOrigin, "op 0 'fc2'", "'h1'", "consumed before it is produced", "topological order"}));
}

TEST(VerifyTest, RejectsTensorProducedTwice) {
  ir::Graph g = MakeTwoLayerGraph();
  g.ops[1].outputs = {3};
  EXPECT_TRUE(
      FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 1 'fc2'", "'h1'", "already produced"}));
}

TEST(VerifyTest, RejectsUnproducedTensor) {
  ir::Graph g = MakeTwoLayerGraph();
  ir::Tensor orphan;
  orphan.name = "orphan";
  orphan.shape = {4};
  g.tensors.push_back(orphan);
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "'orphan'", "not produced by any op"}));
}

TEST(VerifyTest, RejectsConstantGraphInput) {
  ir::Graph g = MakeTwoLayerGraph();
  g.inputs = {0, 1};
  EXPECT_TRUE(
      FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "graph input 'fc1.weight'", "constant"}));
}

TEST(VerifyTest, RejectsOutputNotProduced) {
  ir::Graph g = MakeTwoLayerGraph();
  g.outputs = {0};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "graph output 'x'", "not produced"}));
}

TEST(VerifyTest, RejectsNoOutputs) {
  ir::Graph g = MakeTwoLayerGraph();
  g.outputs.clear();
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "no outputs"}));
}

TEST(VerifyTest, RejectsOpInputIndexOutOfRange) {
  ir::Graph g = MakeTwoLayerGraph();
  g.ops[1].inputs[1] = 42;
  EXPECT_TRUE(
      FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 1 'fc2'", "index 42", "out of range"}));
}

TEST(VerifyTest, RejectsGraphOutputIndexOutOfRange) {
  ir::Graph g = MakeTwoLayerGraph();
  g.outputs = {-1};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "graph output index -1"}));
}

TEST(VerifyTest, RejectsWrongArity) {
  ir::Graph g = MakeTwoLayerGraph();
  g.ops[1].inputs = {3};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 1 'fc2'", "[x, weight]"}));
}

TEST(VerifyTest, RejectsSymbolicDimNotLeading) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[3].shape = {2, ir::kSymbolicDim};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "'h1'", "only lead", "[2, tokens]"}));
}

TEST(VerifyTest, RejectsSymbolicDimInConstant) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[2].shape = {ir::kSymbolicDim};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "'fc1.bias'", "constant", "symbolic"}));
}

TEST(VerifyTest, RejectsZeroDimension) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[0].shape = {ir::kSymbolicDim, 0};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "'x'", "dimension 1 is 0"}));
}

TEST(VerifyTest, RejectsConstantSizeMismatch) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[2].data = Own(ToBytes(std::vector<float>{1, 2, 3}));
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "'fc1.bias'", "12 bytes", "20 bytes"}));
}

TEST(VerifyTest, RejectsKMismatch) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[0].shape = {ir::kSymbolicDim, 9};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 0 'fc1'", "'fc1.weight'", "[5, 8]", "[tokens, 9]"}));
}

TEST(VerifyTest, RejectsNonConstantWeight) {
  ir::Graph g = MakeTwoLayerGraph();
  g.ops[1].inputs = {3, 0};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 1 'fc2'", "'x'", "constant"}));
}

TEST(VerifyTest, RejectsUnquantizedWeight) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[4].quant.reset();
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 1 'fc2'", "not quantized"}));
}

TEST(VerifyTest, RejectsWrongWeightDtype) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[4].dtype = ir::DType::U8;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 1 'fc2'", "u8", "must be i8"}));
}

TEST(VerifyTest, RejectsScaleCountMismatch) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[1].quant->scales.pop_back();
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 0 'fc1'", "'fc1.weight'", "4 scales", "5 output channels"}));
}

TEST(VerifyTest, RejectsZeroScale) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[4].quant->scales[1] = 0.0f;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "'fc2.weight'", "scale[1]", "> 0"}));
}

TEST(VerifyTest, RejectsNanScale) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[4].quant->scales[2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "'fc2.weight'", "scale[2]", "finite"}));
}

TEST(VerifyTest, RejectsNonZeroWeightZeroPoint) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[4].quant->zero_points = {0, 3, 0};
  EXPECT_TRUE(
      FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 1 'fc2'", "channel 1", "symmetric"}));
}

TEST(VerifyTest, RejectsZeroPointCountMismatch) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[4].quant->zero_points = {0, 0};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "'fc2.weight'", "2 zero points"}));
}

TEST(VerifyTest, RejectsWeightAxis) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[4].quant->axis = 1;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 1 'fc2'", "axis 1"}));
}

TEST(VerifyTest, RejectsInt4SchemeOnI8Weight) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[4].quant->scheme = ir::Scheme::Q4GSW;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 1 'fc2'", "'fc2.weight'", "is i8", "must be i4"}));
  g.tensors[4].quant->scheme = ir::Scheme::Q4GAW;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 1 'fc2'", "'fc2.weight'", "is i8", "must be u4"}));
}

TEST(VerifyTest, RejectsActivationSchemeOnWeight) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[4].quant->scheme = ir::Scheme::Q8TA;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 1 'fc2'", "not a weight scheme"}));
}

TEST(VerifyTest, RejectsQ8taWithoutParameters) {
  ir::Graph g = MakeTwoLayerGraph();
  g.ops[0].linear.input_quant.zero_points.clear();
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 0 'fc1'", "one zero point"}));
}

TEST(VerifyTest, RejectsQ8taZeroPointOutOfRange) {
  ir::Graph g = MakeTwoLayerGraph();
  g.ops[0].linear.input_quant.zero_points = {128};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 0 'fc1'", "128", "[-128, 127]"}));
}

TEST(VerifyTest, RejectsQ8taBadScale) {
  ir::Graph g = MakeTwoLayerGraph();
  g.ops[0].linear.input_quant.scales = {-1.0f};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 0 'fc1'", "q8ta scale"}));
}

TEST(VerifyTest, RejectsBadBias) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[2].shape = {5, 1};
  EXPECT_TRUE(
      FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 0 'fc1'", "bias 'fc1.bias'", "[5]"}));
}

TEST(VerifyTest, RejectsBadOutputShape) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[5].shape = {ir::kSymbolicDim, 4};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 1 'fc2'", "'y'", "[tokens, 3]"}));
}

TEST(VerifyTest, RejectsOutputTokenMismatch) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[5].shape = {7, 3};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 1 'fc2'", "'y'", "[tokens, 3]"}));
}

TEST(VerifyTest, RejectsNonFloatInput) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[0].dtype = ir::DType::I8;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 0 'fc1'", "'x'", "f32"}));
}

TEST(VerifyTest, RejectsUnknownOpType) {
  ir::Graph g = MakeTwoLayerGraph();
  g.ops[1].type = static_cast<ir::OpType>(77);
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 1 'fc2'", "unknown op type 77"}));
}

}  // namespace
}  // namespace vkqc
