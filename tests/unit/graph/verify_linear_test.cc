// VerifyGraph rules of linear's int4 weights (q4gsw, q4gaw), dynamic activations (dq8ca), int8
// inputs and q8to outputs: the accepted combinations and one Rejects... test per check.
#include "compiler/graph/verify.h"
#include "graph_test_util.h"

namespace vkqc {
namespace {

using testing_util::FailsWith;
using testing_util::Int4Pattern;
using testing_util::MakeInt4MlpGraph;
using testing_util::MakeQ8toGraph;
using testing_util::MakeTwoLayerGraph;
using testing_util::Own;
using testing_util::Pack4;
using testing_util::Scales;

constexpr const char* kOrigin = "mlp.vkqg";

// Tensor indices of MakeInt4MlpGraph.
constexpr int kGateW = 1, kUpW = 2, kDownW = 7, kY = 9;

void ExpectOk(const ir::Graph& g) {
  Status s = VerifyGraph(g, kOrigin);
  EXPECT_TRUE(s.ok()) << s.error().message;
}

TEST(VerifyLinearTest, AcceptsInt4Mlp) { ExpectOk(MakeInt4MlpGraph()); }

TEST(VerifyLinearTest, AcceptsQ8toWithInt8Input) { ExpectOk(MakeQ8toGraph()); }

TEST(VerifyLinearTest, AcceptsEveryWeightSchemeWithEveryInputScheme) {
  // gate: q4gsw, up: q4gaw; fc1 of the two-layer graph: q8csw.
  for (ir::Scheme act :
       {ir::Scheme::None, ir::Scheme::Float, ir::Scheme::Q8TA, ir::Scheme::DQ8CA}) {
    SCOPED_TRACE(ir::SchemeName(act));
    ir::Quant q;
    q.scheme = act;
    if (act == ir::Scheme::Q8TA) q = ir::Quant{act, {0.05f}, {-3}, 0, 0};
    ir::Graph g = MakeInt4MlpGraph();
    for (ir::Op& op : g.ops) {
      if (op.type == ir::OpType::Linear) op.linear.input_quant = q;
    }
    ExpectOk(g);
    ir::Graph two = MakeTwoLayerGraph();
    two.ops[0].linear.input_quant = q;
    ExpectOk(two);
  }
}

TEST(VerifyLinearTest, AcceptsGroupSizeEqualToK) {
  ir::Graph g = MakeInt4MlpGraph({.d = 64, .f = 96, .group = 32});
  ir::Quant& q = *g.tensors[kGateW].quant;
  q.group_size = 64;
  q.scales.resize(96);
  ExpectOk(g);
  q.group_size = 8;
  q.scales = Scales(96 * 8, 0.01f);
  ExpectOk(g);
}

TEST(VerifyLinearTest, AcceptsQ8toWithFloatInputAndIntWeights) {
  ir::Graph g = MakeInt4MlpGraph();
  g.tensors[kY].dtype = ir::DType::I8;
  g.tensors[kY].quant = ir::Quant{ir::Scheme::Q8TO, {0.5f}, {127}, 0, 0};
  g.ops[4].linear.output_quant = *g.tensors[kY].quant;
  ExpectOk(g);
}

// ---- q4gsw / q4gaw weights ----------------------------------------------------------------------

TEST(VerifyLinearTest, RejectsGroupSizeNotMultipleOf8) {
  ir::Graph g = MakeInt4MlpGraph();
  g.tensors[kGateW].quant->group_size = 20;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 0 'gate_proj'", "'gate.weight'",
                         "group_size 20 must be a multiple of 8 that divides K=64", "e.g. 64"}));
  g.tensors[kGateW].quant->group_size = 4;  // divides K but is not a multiple of 8
  g.tensors[kGateW].quant->scales = Scales(96 * 16, 0.01f);
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 0 'gate_proj'", "group_size 4 must be a multiple of 8"}));
}

TEST(VerifyLinearTest, RejectsGroupSizeNotDividingK) {
  ir::Graph g = MakeInt4MlpGraph();
  g.tensors[kDownW].quant->group_size = 64;  // K = 96
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 4 'down_proj'", "'down.weight'",
                         "group_size 64 must be a multiple of 8 that divides K=96", "e.g. 32"}));
}

TEST(VerifyLinearTest, RejectsMissingGroupSize) {
  ir::Graph g = MakeInt4MlpGraph();
  g.tensors[kUpW].quant->group_size = 0;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 1 'up_proj'", "group_size 0 must be a multiple of 8"}));
}

TEST(VerifyLinearTest, RejectsInt4WhenKNotMultipleOf8) {
  ir::Graph g = MakeTwoLayerGraph();  // fc2: K = 5
  ir::Tensor& w = g.tensors[4];
  w.dtype = ir::DType::I4;
  w.data = Own(Pack4(Int4Pattern(15, 1, true)));
  w.quant = ir::Quant{ir::Scheme::Q4GSW, Scales(3, 0.1f), {}, 0, 5};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 1 'fc2'", "group_size 5", "K=5", "not a multiple of 8"}));
}

TEST(VerifyLinearTest, RejectsGroupedScaleCount) {
  ir::Graph g = MakeInt4MlpGraph();
  g.tensors[kGateW].quant->scales.resize(96);  // needs 96 * 2
  EXPECT_TRUE(
      FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 0 'gate_proj'", "'gate.weight'", "96 scales",
                                          "96 output channels", "2 groups of 32", "needs 192"}));
}

TEST(VerifyLinearTest, RejectsGroupedBadScale) {
  ir::Graph g = MakeInt4MlpGraph();
  g.tensors[kDownW].quant->scales[100] = -0.5f;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "'down.weight'", "scale[100]", "> 0"}));
}

TEST(VerifyLinearTest, RejectsZeroPointsOnQ4gsw) {
  ir::Graph g = MakeInt4MlpGraph();
  g.tensors[kGateW].quant->zero_points.assign(192, 0);
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 0 'gate_proj'", "'gate.weight'",
                                                  "192 zero points", "q4gsw is symmetric"}));
}

TEST(VerifyLinearTest, RejectsQ4gawZeroPointCount) {
  ir::Graph g = MakeInt4MlpGraph();
  g.tensors[kUpW].quant->zero_points.clear();
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 1 'up_proj'", "'up.weight'", "0 zero points", "needs 192"}));
}

TEST(VerifyLinearTest, RejectsQ4gawZeroPointOutOfRange) {
  ir::Graph g = MakeInt4MlpGraph();
  g.tensors[kUpW].quant->zero_points[5] = 16;  // [n=2][g=1]
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 1 'up_proj'", "'up.weight'",
                                                  "zero point [2][1] is 16", "[0, 15]"}));
  g.tensors[kUpW].quant->zero_points[5] = -1;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 1 'up_proj'", "is -1", "[0, 15]"}));
}

TEST(VerifyLinearTest, RejectsInt4WeightDtype) {
  ir::Graph g = MakeInt4MlpGraph();
  g.tensors[kGateW].dtype = ir::DType::U4;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 0 'gate_proj'",
                                                  "'gate.weight' is u4", "q4gsw", "must be i4"}));
  g = MakeInt4MlpGraph();
  g.tensors[kUpW].dtype = ir::DType::I4;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 1 'up_proj'", "'up.weight' is i4", "q4gaw", "must be u4"}));
}

TEST(VerifyLinearTest, RejectsInt4DataSize) {
  ir::Graph g = MakeInt4MlpGraph();
  g.tensors[kGateW].data = Own(std::vector<uint8_t>(96 * 64, 0));  // one value per byte
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "'gate.weight'", "6144 bytes", "i4", "needs 3072 bytes"}));
}

TEST(VerifyLinearTest, RejectsInt4Axis) {
  ir::Graph g = MakeInt4MlpGraph();
  g.tensors[kGateW].quant->axis = 1;
  EXPECT_TRUE(
      FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 0 'gate_proj'", "axis 1", "set axis 0"}));
}

// ---- input_quant and int8 inputs ----------------------------------------------------------------

TEST(VerifyLinearTest, RejectsDq8caWithScale) {
  ir::Graph g = MakeInt4MlpGraph();
  g.ops[1].linear.input_quant.scales = {0.1f};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 1 'up_proj'", "input_quant dq8ca",
                                                  "1 scales", "takes none"}));
  g.ops[1].linear.input_quant.scales.clear();
  g.ops[1].linear.input_quant.zero_points = {0};
  EXPECT_TRUE(
      FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 1 'up_proj'", "dq8ca", "1 zero points"}));
}

TEST(VerifyLinearTest, RejectsOutputSchemeAsInputQuant) {
  ir::Graph g = MakeInt4MlpGraph();
  g.ops[0].linear.input_quant = ir::Quant{ir::Scheme::Q8TO, {0.1f}, {0}, 0, 0};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 0 'gate_proj'", "q8to is not an activation scheme"}));
}

TEST(VerifyLinearTest, RejectsInt8InputWithInputQuant) {
  ir::Graph g = MakeQ8toGraph();
  g.ops[0].linear.input_quant = ir::Quant{ir::Scheme::Q8TA, {0.1f}, {3}, 0, 0};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 0 'proj'", "input 'x'",
                                                  "already int8", "remove input_quant"}));
  g.ops[0].linear.input_quant = ir::Quant{ir::Scheme::Float, {}, {}, 0, 0};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 0 'proj'", "it is float"}));
}

// An i8 dq8ca x is fine when a quantize op writes it (verify_quantize_test.cc), but not as a
// graph input: its per-row parameters have no place in the graph's inputs.
TEST(VerifyLinearTest, RejectsInt8GraphInputWithDq8caQuant) {
  ir::Graph g = MakeQ8toGraph();
  g.tensors[0].quant = ir::Quant{ir::Scheme::DQ8CA, {}, {}, 0, 0};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin,
                         "per-token int8 tensor 'x' cannot be a graph input/output in this version",
                         "listed as a graph input"}));
}

TEST(VerifyLinearTest, RejectsInt8InputWithoutQuant) {
  ir::Graph g = MakeQ8toGraph();
  g.tensors[0].quant.reset();
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 0 'proj'", "input 'x'", "without quantization", "q8ta"}));
  g.tensors[0].quant = ir::Quant{ir::Scheme::Q8CSW, {0.1f}, {}, 0, 0};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "input 'x'", "with quant q8csw"}));
}

// A q8to output (per-tensor int8) feeds the next linear as its int8 input.
TEST(VerifyLinearTest, AcceptsInt8InputWithQ8toQuant) {
  ir::Graph g = MakeQ8toGraph();
  g.tensors[0].quant->scheme = ir::Scheme::Q8TO;
  EXPECT_TRUE(VerifyGraph(g, kOrigin).ok());
  g.tensors[0].quant->zero_points = {200};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "op 0 'proj'", "input 'x' quant q8to zero point 200"}));
}

TEST(VerifyLinearTest, RejectsInt8InputBadParameters) {
  ir::Graph g = MakeQ8toGraph();
  g.tensors[0].quant->zero_points = {-129};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 0 'proj'", "input 'x' quant q8ta zero point -129"}));
  g.tensors[0].quant->zero_points.clear();
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 0 'proj'", "input 'x' quant q8ta", "one zero point"}));
}

TEST(VerifyLinearTest, RejectsOtherInputDtype) {
  ir::Graph g = MakeQ8toGraph();
  g.tensors[0].dtype = ir::DType::U8;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 0 'proj'", "input 'x' is u8", "f32, or i8"}));
}

// ---- q8to output ---------------------------------------------------------------------------

TEST(VerifyLinearTest, RejectsQ8toOutputNotI8) {
  ir::Graph g = MakeQ8toGraph();
  g.tensors[2].dtype = ir::DType::F32;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 0 'proj'", "output 'y' is f32", "must be i8 [tokens, 8]"}));
  g.tensors[2].dtype = ir::DType::I8;
  g.tensors[2].shape = {ir::kSymbolicDim, 9};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 0 'proj'", "'y' is i8 [tokens, 9]", "i8 [tokens, 8]"}));
}

TEST(VerifyLinearTest, RejectsQ8toQuantMismatch) {
  ir::Graph g = MakeQ8toGraph();
  g.tensors[2].quant->scales = {0.25f};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 0 'proj'", "output 'y'", "same q8to quant",
                         "scale 0.200000, zero point -5", "scale 0.250000, zero point -5"}));
  g = MakeQ8toGraph();
  g.tensors[2].quant->zero_points = {-4};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "'y'", "zero point -4"}));
  g = MakeQ8toGraph();
  g.tensors[2].quant.reset();
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "'y'", "it has none"}));
  g = MakeQ8toGraph();
  g.tensors[2].quant->scheme = ir::Scheme::Q8TA;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {kOrigin, "'y'", "it has scheme q8ta"}));
}

TEST(VerifyLinearTest, RejectsQ8toBadParameters) {
  ir::Graph g = MakeQ8toGraph();
  g.ops[0].linear.output_quant.zero_points = {200};
  g.tensors[2].quant->zero_points = {200};
  EXPECT_TRUE(
      FailsWith(VerifyGraph(g, kOrigin),
                {kOrigin, "op 0 'proj'", "output_quant q8to zero point 200", "[-128, 127]"}));
  g = MakeQ8toGraph();
  g.ops[0].linear.output_quant.scales.clear();
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 0 'proj'", "output_quant q8to needs exactly one scale"}));
}

TEST(VerifyLinearTest, RejectsNonOutputSchemeAsOutputQuant) {
  ir::Graph g = MakeTwoLayerGraph();
  g.ops[1].linear.output_quant.scheme = ir::Scheme::Float;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 1 'fc2'", "output_quant scheme float", "use q8to"}));
}

TEST(VerifyLinearTest, RejectsI8OutputWithoutQ8to) {
  ir::Graph g = MakeQ8toGraph();
  g.ops[0].linear.output_quant = {};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin),
                        {kOrigin, "op 0 'proj'", "'y' is i8", "must be f32", "output_quant q8to"}));
}

}  // namespace
}  // namespace vkqc
