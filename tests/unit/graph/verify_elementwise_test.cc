// VerifyGraph rules of the f32 glue ops mul and silu: one Rejects... test per check.
#include "compiler/graph/verify.h"
#include "graph_test_util.h"

namespace vkqc {
namespace {

using testing_util::FailsWith;
using testing_util::MakeInt4MlpGraph;
using testing_util::Own;
using testing_util::ToBytes;

constexpr const char* kOrigin = "mlp.vkqg";

// Tensor indices and op indices of MakeInt4MlpGraph.
constexpr int kX = 0, kGate = 3, kUp = 4, kAct = 5, kH = 6;
constexpr int kSiluOp = 2, kMulOp = 3;

TEST(VerifyElementwiseTest, AcceptsConcreteShapes) {
  ir::Graph g = MakeInt4MlpGraph();
  for (ir::Tensor& t : g.tensors) {
    if (!t.shape.empty() && t.shape[0] == ir::kSymbolicDim) t.shape[0] = 3;
  }
  Status s = VerifyGraph(g, kOrigin);
  EXPECT_TRUE(s.ok()) << s.error().message;
}

TEST(VerifyElementwiseTest, AcceptsAnyRank) {
  // silu(x) * x on a rank-3 f32 tensor, as a graph of its own.
  ir::Graph g;
  for (const char* name : {"a", "s", "y"}) {
    ir::Tensor t;
    t.name = name;
    t.shape = {ir::kSymbolicDim, 2, 5};
    g.tensors.push_back(t);
  }
  ir::Op silu;
  silu.type = ir::OpType::Silu;
  silu.inputs = {0};
  silu.outputs = {1};
  ir::Op mul;
  mul.type = ir::OpType::Mul;
  mul.inputs = {1, 0};
  mul.outputs = {2};
  g.ops = {silu, mul};
  g.inputs = {0};
  g.outputs = {2};
  Status s = VerifyGraph(g, kOrigin);
  EXPECT_TRUE(s.ok()) << s.error().message;
}

TEST(VerifyElementwiseTest, RejectsMulShapeMismatch) {
  ir::Graph g = MakeInt4MlpGraph();
  g.ops[kMulOp].inputs = {kAct, kX};  // [tokens, 96] * [tokens, 64]
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 3 'gated'", "inputs 'act' [tokens, 96] and 'x' [tokens, 64]",
                         "identical shapes"}));
}

TEST(VerifyElementwiseTest, RejectsMulSymbolicAgainstConcrete) {
  ir::Graph g = MakeInt4MlpGraph();
  ir::Tensor z;
  z.name = "z";
  z.shape = {4, 96};
  g.tensors.push_back(z);
  g.inputs.push_back(static_cast<int>(g.tensors.size() - 1));
  g.ops[kMulOp].inputs = {kAct, g.inputs.back()};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 3 'gated'", "'act' [tokens, 96] and 'z' [4, 96]"}));
}

TEST(VerifyElementwiseTest, RejectsSiluOutputShape) {
  ir::Graph g = MakeInt4MlpGraph();
  g.tensors[kAct].shape = {4, 96};
  EXPECT_TRUE(
      FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 2 'act_fn'", "output 'act' is f32 [4, 96]",
                                          "must be f32 [tokens, 96] like its input 'gate'"}));
}

TEST(VerifyElementwiseTest, RejectsMulOutputShape) {
  ir::Graph g = MakeInt4MlpGraph();
  g.tensors[kH].shape = {ir::kSymbolicDim, 96, 1};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 3 'gated'", "output 'h'",
                                                  "[tokens, 96, 1]", "f32 [tokens, 96]"}));
}

TEST(VerifyElementwiseTest, RejectsMulDtype) {
  ir::Graph g = MakeInt4MlpGraph();
  g.tensors[kH].dtype = ir::DType::F16;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 3 'gated'", "output 'h' is f16"}));
}

TEST(VerifyElementwiseTest, RejectsMulConstantInput) {
  ir::Graph g = MakeInt4MlpGraph();
  ir::Tensor c;
  c.name = "two";
  c.shape = {1, 96};
  c.data = Own(ToBytes(std::vector<float>(96, 2.0f)));
  g.tensors.push_back(c);
  g.ops[kMulOp].inputs = {kAct, static_cast<int>(g.tensors.size() - 1)};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 3 'gated'", "input 'two'",
                                                  "constant", "no constant inputs"}));
}

TEST(VerifyElementwiseTest, RejectsMulArity) {
  ir::Graph g = MakeInt4MlpGraph();
  g.ops[kMulOp].inputs = {kAct};
  EXPECT_TRUE(
      FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 3 'gated'", "1 inputs", "inputs [a, b]"}));
}

TEST(VerifyElementwiseTest, RejectsSiluDtype) {
  ir::Graph g = MakeInt4MlpGraph();
  g.tensors[kGate].dtype = ir::DType::I8;
  g.tensors[kGate].quant = ir::Quant{ir::Scheme::Q8TO, {0.1f}, {0}, 0, 0};
  g.ops[0].linear.output_quant = *g.tensors[kGate].quant;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 2 'act_fn'", "input 'gate' is i8", "takes f32 inputs"}));
  g = MakeInt4MlpGraph();
  g.tensors[kAct].dtype = ir::DType::I32;
  EXPECT_TRUE(
      FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 2 'act_fn'", "output 'act' is i32"}));
}

TEST(VerifyElementwiseTest, RejectsSiluConstantInput) {
  ir::Graph g = MakeInt4MlpGraph();
  g.ops[kSiluOp].inputs = {8};  // down.bias
  g.tensors[kAct].shape = {64};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 2 'act_fn'", "input 'down.bias'", "constant"}));
}

TEST(VerifyElementwiseTest, RejectsSiluArity) {
  ir::Graph g = MakeInt4MlpGraph();
  g.ops[kSiluOp].inputs = {kGate, kUp};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 2 'act_fn'", "input [a]"}));
}

TEST(VerifyElementwiseTest, RejectsLinearAttrsOnGlueOps) {
  ir::Graph g = MakeInt4MlpGraph();
  g.ops[kSiluOp].linear.fused_relu = true;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 2 'act_fn'", "linear attributes", "a silu op takes none"}));
  g = MakeInt4MlpGraph();
  g.ops[kMulOp].linear.input_quant.scheme = ir::Scheme::DQ8CA;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 3 'gated'", "linear attributes"}));
}

}  // namespace
}  // namespace vkqc
