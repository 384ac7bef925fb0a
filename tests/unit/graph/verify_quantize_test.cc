// VerifyGraph rules of the quantize op and of per-token (dq8ca) int8 tensors: the accepted
// graphs and one Rejects... test per check.
#include "compiler/graph/verify.h"
#include "graph_test_util.h"

namespace vkqc {
namespace {

using testing_util::FailsWith;
using testing_util::MakeQuantizeGraph;
using testing_util::Own;
using testing_util::ToBytes;

constexpr const char* kOrigin = "shared.vkqg";

// Tensor indices of MakeQuantizeGraph.
constexpr int kX = 0, kXq = 1, kAW = 2, kYa = 5;
constexpr const char* kQuantOp = "op 0 'quant_x' (quantize)";

void ExpectOk(const ir::Graph& g) {
  Status s = VerifyGraph(g, kOrigin);
  EXPECT_TRUE(s.ok()) << s.error().message;
}

TEST(VerifyQuantizeTest, AcceptsPerTokenInt8SharedByTwoLinears) {
  const ir::Graph g = MakeQuantizeGraph();
  ASSERT_EQ(g.tensors[kXq].dtype, ir::DType::I8);
  ASSERT_EQ(g.tensors[kXq].quant->scheme, ir::Scheme::DQ8CA);
  ASSERT_EQ(g.ops[1].inputs[0], kXq);
  ASSERT_EQ(g.ops[2].inputs[0], kXq);
  ExpectOk(g);
}

TEST(VerifyQuantizeTest, AcceptsStaticPerTensorQuantize) {
  ir::Graph g = MakeQuantizeGraph();
  g.tensors[kXq].quant = ir::Quant{ir::Scheme::Q8TA, {0.1f}, {-128}, 0, 0};
  ExpectOk(g);
  g.tensors[kXq].quant->zero_points = {127};
  ExpectOk(g);
}

TEST(VerifyQuantizeTest, AcceptsConcreteTokens) {
  ir::Graph g = MakeQuantizeGraph();
  for (int t : {0, 1, 5, 6}) g.tensors[t].shape[0] = 7;
  ExpectOk(g);
}

TEST(VerifyQuantizeTest, RejectsOutputNotI8) {
  ir::Graph g = MakeQuantizeGraph();
  g.tensors[kXq].dtype = ir::DType::F32;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, kQuantOp, "output 'xq' is f32", "quantize writes i8"}));
  g.tensors[kXq].dtype = ir::DType::U8;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, kQuantOp, "output 'xq' is u8"}));
}

TEST(VerifyQuantizeTest, RejectsOutputWithoutQuant) {
  ir::Graph g = MakeQuantizeGraph();
  g.tensors[kXq].quant.reset();
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, kQuantOp, "output 'xq' has no quant", "q8ta", "dq8ca"}));
  g.tensors[kXq].quant = ir::Quant{};  // scheme none
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, kQuantOp, "output 'xq' has no quant"}));
}

TEST(VerifyQuantizeTest, RejectsOutputWithWeightOrOutputScheme) {
  ir::Graph g = MakeQuantizeGraph();
  g.tensors[kXq].quant = ir::Quant{ir::Scheme::Q8CSW, {0.1f}, {}, 0, 0};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, kQuantOp, "output 'xq' has quant q8csw",
                                                  "quantize cannot write", "use q8ta", "dq8ca"}));
  g.tensors[kXq].quant = ir::Quant{ir::Scheme::Q4GSW, {0.1f}, {}, 0, 8};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, kQuantOp, "has quant q4gsw"}));
  g.tensors[kXq].quant = ir::Quant{ir::Scheme::Q8TO, {0.1f}, {0}, 0, 0};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, kQuantOp, "has quant q8to"}));
  g.tensors[kXq].quant = ir::Quant{ir::Scheme::Float, {}, {}, 0, 0};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, kQuantOp, "has quant float"}));
}

TEST(VerifyQuantizeTest, RejectsDq8caWithParameters) {
  ir::Graph g = MakeQuantizeGraph();
  g.tensors[kXq].quant->scales = {0.1f};
  EXPECT_TRUE(
      FailsWith(VerifyGraph(g, kOrigin),
                {kOrigin, kQuantOp, "output 'xq' quant dq8ca has 1 scales and 0 zero points",
                 "computed at run time", "takes none"}));
  g.tensors[kXq].quant->zero_points = {0};
  EXPECT_TRUE(
      FailsWith(VerifyGraph(g, kOrigin), {kOrigin, kQuantOp, "1 scales and 1 zero points"}));
}

TEST(VerifyQuantizeTest, RejectsQ8taBadParameters) {
  ir::Graph g = MakeQuantizeGraph();
  g.tensors[kXq].quant = ir::Quant{ir::Scheme::Q8TA, {0.0f}, {0}, 0, 0};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "tensor 'xq'", "scale[0] is 0.000000", "finite and > 0"}));
  g.tensors[kXq].quant->scales = {0.1f};
  g.tensors[kXq].quant->zero_points = {128};
  EXPECT_TRUE(
      FailsWith(VerifyGraph(g, kOrigin),
                {kOrigin, kQuantOp, "output 'xq' quant q8ta zero point 128", "[-128, 127]"}));
  g.tensors[kXq].quant->zero_points.clear();
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, kQuantOp, "output 'xq' quant q8ta needs exactly one scale"}));
}

TEST(VerifyQuantizeTest, RejectsConstantInput) {
  ir::Graph g = MakeQuantizeGraph();
  ir::Tensor c;
  c.name = "table";
  c.shape = {2, 16};
  c.data = Own(ToBytes(std::vector<float>(32, 1.0f)));
  g.tensors.push_back(c);
  g.ops[0].inputs = {static_cast<int>(g.tensors.size() - 1)};
  g.tensors[kXq].shape = {2, 16};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, kQuantOp, "input 'table' is a constant", "computed f32"}));
}

TEST(VerifyQuantizeTest, RejectsInputNotRank2) {
  ir::Graph g = MakeQuantizeGraph();
  g.tensors[kX].shape = {ir::kSymbolicDim, 2, 8};
  g.tensors[kXq].shape = {ir::kSymbolicDim, 2, 8};
  EXPECT_TRUE(
      FailsWith(VerifyGraph(g, kOrigin),
                {kOrigin, kQuantOp, "input 'x' has shape [tokens, 2, 8]", "rank 2 [M, K]"}));
  g.tensors[kX].shape = {16};
  g.tensors[kXq].shape = {16};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, kQuantOp, "input 'x' has shape [16]"}));
}

TEST(VerifyQuantizeTest, RejectsInputNotF32) {
  ir::Graph g = MakeQuantizeGraph();
  g.tensors[kX].dtype = ir::DType::F16;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, kQuantOp, "input 'x' is f16", "quantize takes f32"}));
}

TEST(VerifyQuantizeTest, RejectsShapeMismatch) {
  ir::Graph g = MakeQuantizeGraph();
  g.tensors[kXq].shape = {ir::kSymbolicDim, 15};
  EXPECT_TRUE(
      FailsWith(VerifyGraph(g, kOrigin), {kOrigin, kQuantOp, "output 'xq' has shape [tokens, 15]",
                                          "input 'x' has shape [tokens, 16]", "keeps the shape"}));
  g.tensors[kXq].shape = {4, 16};
  EXPECT_TRUE(
      FailsWith(VerifyGraph(g, kOrigin), {kOrigin, kQuantOp, "output 'xq' has shape [4, 16]"}));
}

TEST(VerifyQuantizeTest, RejectsArity) {
  ir::Graph g = MakeQuantizeGraph();
  g.ops[0].inputs = {kX, kX};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, kQuantOp, "has 2 inputs and 1 outputs", "input [x]"}));
}

TEST(VerifyQuantizeTest, RejectsLinearAttrs) {
  ir::Graph g = MakeQuantizeGraph();
  g.ops[0].linear.input_quant.scheme = ir::Scheme::DQ8CA;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, kQuantOp, "linear attributes", "a quantize op takes none"}));
}

TEST(VerifyQuantizeTest, RejectsPerTokenGraphInput) {
  ir::Graph g = MakeQuantizeGraph();
  g.ops.erase(g.ops.begin());  // xq is no longer produced; offer it as an input instead
  g.inputs = {kXq};
  EXPECT_TRUE(FailsWith(
      VerifyGraph(g, kOrigin),
      {kOrigin, "per-token int8 tensor 'xq' cannot be a graph input/output in this version",
       "listed as a graph input", "quantize op", "q8ta"}));
}

TEST(VerifyQuantizeTest, RejectsPerTokenGraphOutput) {
  ir::Graph g = MakeQuantizeGraph();
  g.outputs = {kYa, kXq};
  EXPECT_TRUE(FailsWith(
      VerifyGraph(g, kOrigin),
      {kOrigin, "per-token int8 tensor 'xq' cannot be a graph input/output in this version",
       "listed as a graph output", "f32"}));
}

TEST(VerifyQuantizeTest, RejectsPerTokenTensorNotFromQuantize) {
  // A linear's int8 output is per tensor (q8to); it cannot write a dq8ca tensor.
  ir::Graph g = MakeQuantizeGraph();
  g.tensors[kYa].dtype = ir::DType::I8;
  g.tensors[kYa].quant = ir::Quant{ir::Scheme::DQ8CA, {}, {}, 0, 0};
  g.ops[1].linear.output_quant = ir::Quant{ir::Scheme::Q8TO, {0.1f}, {0}, 0, 0};
  g.outputs = {6};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "per-token int8 tensor 'ya' (dq8ca)",
                                                  "must be produced by a quantize op",
                                                  "op 1 'proj_a' (linear) writes it", "q8to"}));
  // Nor can a constant carry per-token parameters.
  g = MakeQuantizeGraph();
  ir::Tensor c;
  c.name = "cq";
  c.shape = {3, 16};
  c.dtype = ir::DType::I8;
  c.data = Own(std::vector<uint8_t>(48, 1));
  c.quant = ir::Quant{ir::Scheme::DQ8CA, {}, {}, 0, 0};
  g.tensors.push_back(c);
  g.ops[1].inputs[0] = static_cast<int>(g.tensors.size() - 1);
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "per-token int8 tensor 'cq' (dq8ca)", "it is a constant"}));
}

TEST(VerifyQuantizeTest, RejectsInputQuantOnLinearReadingPerTokenInt8) {
  ir::Graph g = MakeQuantizeGraph();
  g.ops[2].linear.input_quant.scheme = ir::Scheme::DQ8CA;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 2 'proj_b' (linear)", "input 'xq' is already int8",
                         "its own dq8ca quant", "remove input_quant"}));
}

TEST(VerifyQuantizeTest, RejectsPerTokenInt8IntoGlueOp) {
  ir::Graph g = MakeQuantizeGraph();
  ir::Tensor s;
  s.name = "s";
  s.shape = {ir::kSymbolicDim, 16};
  g.tensors.push_back(s);
  ir::Op silu;
  silu.name = "act";
  silu.type = ir::OpType::Silu;
  silu.inputs = {kXq};
  silu.outputs = {static_cast<int>(g.tensors.size() - 1)};
  g.ops.push_back(silu);
  g.outputs.push_back(silu.outputs[0]);
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 3 'act' (silu)", "input 'xq' is i8", "takes f32 inputs"}));
}

// A linear reading per-token int8 still has its weight checked.
TEST(VerifyQuantizeTest, RejectsBadWeightOfLinearReadingPerTokenInt8) {
  ir::Graph g = MakeQuantizeGraph();
  g.tensors[kAW].quant->scales.pop_back();
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 1 'proj_a' (linear)",
                                                  "'a.weight' has 7 scales", "8 output channels"}));
}

}  // namespace
}  // namespace vkqc
