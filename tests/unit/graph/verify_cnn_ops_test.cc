// The CNN glue ops in the graph front end: VerifyGraph's rules of max_pool2d, concat, sigmoid,
// hard_sigmoid, hard_swish, resize_nearest, softmax and mul's broadcasting (one Rejects... test per
// check), their .vkqg round trips (attribute tables and defaults), and their JSON import (the
// documented example of docs/graph-json.md's "Glue ops of convolutional networks").
#include <cmath>
#include <functional>
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
using testing_util::DocJsonBlocks;
using testing_util::ExpectSameGraph;
using testing_util::FailsWith;
using testing_util::MakeTempDir;
using testing_util::Own;
using testing_util::ToBytes;

constexpr const char* kOrigin = "cnn.vkqg";
constexpr int64_t S = ir::kSymbolicDim;

ir::Quant Q8(ir::Scheme s, float scale, int32_t zp) { return ir::Quant{s, {scale}, {zp}, 0, 0}; }

// A one-op graph: every input a graph input, the output the graph output.
struct OneOp {
  ir::Graph g;
  int Tensor(const std::string& name, std::vector<int64_t> shape, ir::DType dt = ir::DType::F32,
             std::optional<ir::Quant> q = {}) {
    g.tensors.push_back({name, std::move(shape), dt, std::move(q), {}});
    return int(g.tensors.size() - 1);
  }
  int In(const std::string& name, std::vector<int64_t> shape, ir::DType dt = ir::DType::F32,
         std::optional<ir::Quant> q = {}) {
    const int t = Tensor(name, std::move(shape), dt, std::move(q));
    g.inputs.push_back(t);
    return t;
  }
  ir::Op& Op(ir::OpType type, std::vector<int> in, int out, const std::string& name = "op") {
    ir::Op op;
    op.name = name;
    op.type = type;
    op.inputs = std::move(in);
    op.outputs = {out};
    g.ops.push_back(std::move(op));
    g.outputs = {out};
    return g.ops.back();
  }
  ir::Op& op() { return g.ops.back(); }
  ir::Tensor& t(const std::string& name) { return g.tensors[size_t(g.FindTensor(name))]; }
  Status Verify() const { return VerifyGraph(g, kOrigin); }
};

// ---- max_pool2d ------------------------------------------------------------------------------
// x [2, 7, 9, 5] -> max_pool2d 3x3 stride 2 padding 1 -> y [2, 4, 5, 5]; int8: q8ta -> q8to.
OneOp MaxPool(bool int8) {
  OneOp o;
  const int x = int8 ? o.In("x", {2, 7, 9, 5}, ir::DType::I8, Q8(ir::Scheme::Q8TA, 0.05f, 3)) : o.In("x", {2, 7, 9, 5});
  const ir::Quant oq = Q8(ir::Scheme::Q8TO, 0.04f, -2);
  const int y = int8 ? o.Tensor("y", {2, 4, 5, 5}, ir::DType::I8, oq) : o.Tensor("y", {2, 4, 5, 5});
  ir::Pool2dAttrs& a = o.Op(ir::OpType::MaxPool2d, {x}, y, "pool").pool;
  a.kernel[0] = a.kernel[1] = 3;
  a.stride[0] = a.stride[1] = 2;
  for (int32_t& p : a.padding) p = 1;
  if (int8) a.output_quant = oq;
  return o;
}

TEST(VerifyCnnOpsTest, AcceptsMaxPool) {
  for (bool int8 : {false, true}) {
    Status s = MaxPool(int8).Verify();
    EXPECT_TRUE(s.ok()) << s.error().message;
  }
  OneOp o = MaxPool(false);  // global, y [N, C]
  o.op().pool = {};
  o.op().pool.global = true;
  o.t("y").shape = {2, 5};
  Status s = o.Verify();
  EXPECT_TRUE(s.ok()) << s.error().message;
}

TEST(VerifyCnnOpsTest, RejectsMaxPoolInt8WithoutOutputQuant) {
  OneOp o = MaxPool(true);
  o.op().pool.output_quant = {};
  EXPECT_TRUE(FailsWith(o.Verify(), {kOrigin, "op 0 'pool' (max_pool2d)", "input 'x' is int8",
                                     "output_quant must be q8to (the maximum is requantized to int8)"}));
}

TEST(VerifyCnnOpsTest, RejectsMaxPoolFloatWithOutputQuant) {
  OneOp o = MaxPool(false);
  o.op().pool.output_quant = Q8(ir::Scheme::Q8TO, 0.1f, 0);
  EXPECT_TRUE(FailsWith(o.Verify(), {"(max_pool2d)", "needs an int8 input", "the f32 maximum is f32"}));
}

TEST(VerifyCnnOpsTest, RejectsMaxPoolDtypes) {
  OneOp o = MaxPool(false);
  o.t("x").dtype = ir::DType::F16;
  EXPECT_TRUE(FailsWith(o.Verify(), {"(max_pool2d)", "input 'x' is f16", "max_pool2d takes f32, or i8"}));
  o = MaxPool(true);
  o.t("x").quant = ir::Quant{ir::Scheme::Q8PC, {0.1f, 0.2f}, {0, 0}, 3, 0};
  o.t("x").shape = {2, 7, 9, 2};
  EXPECT_TRUE(FailsWith(o.Verify(), {"(max_pool2d)", "input 'x' is i8 with quant q8pc", "per-tensor int8"}));
}

TEST(VerifyCnnOpsTest, RejectsMaxPoolWindows) {
  OneOp o = MaxPool(false);
  o.op().pool.padding[0] = 3;
  EXPECT_TRUE(
      FailsWith(o.Verify(), {"(max_pool2d)", "padding [3, 1, 1, 1]", "must be smaller than the kernel [3, 3]"}));
  o = MaxPool(false);
  o.op().pool.kernel[1] = 0;
  EXPECT_TRUE(FailsWith(o.Verify(), {"(max_pool2d)", "kernel [3, 0]", "global maximum pool"}));
  o = MaxPool(false);
  o.op().pool.global = true;
  EXPECT_TRUE(FailsWith(o.Verify(), {"(max_pool2d)", "is global", "remove them"}));
  o = MaxPool(false);
  o.op().pool.stride[0] = 0;
  EXPECT_TRUE(FailsWith(o.Verify(), {"(max_pool2d)", "stride [0, 2] must be >= 1"}));
  o = MaxPool(false);
  o.op().pool.kernel[0] = 10;
  o.op().pool.padding[0] = o.op().pool.padding[2] = 0;
  EXPECT_TRUE(FailsWith(o.Verify(), {"(max_pool2d)", "kernel [10, 3] does not fit"}));
}

TEST(VerifyCnnOpsTest, RejectsMaxPoolShapes) {
  OneOp o = MaxPool(false);
  o.t("y").shape = {2, 4, 4, 5};
  EXPECT_TRUE(FailsWith(o.Verify(), {"(max_pool2d)", "output 'y' is f32 [2, 4, 4, 5]", "must be f32 [2, 4, 5, 5]"}));
  o = MaxPool(false);
  o.t("x").shape = {7, 9, 5};
  EXPECT_TRUE(FailsWith(o.Verify(), {"(max_pool2d)", "[7, 9, 5]", "takes rank 4 NHWC"}));
  o = MaxPool(true);
  o.t("y").dtype = ir::DType::F32;
  o.t("y").quant.reset();
  EXPECT_TRUE(FailsWith(o.Verify(), {"(max_pool2d)", "with output_quant q8to it must be i8"}));
}

TEST(VerifyCnnOpsTest, RejectsPoolAttrsElsewhere) {
  OneOp o;
  const int x = o.In("x", {2, 5});
  const int y = o.Tensor("y", {2, 5});
  o.Op(ir::OpType::Softmax, {x}, y).pool.global = true;
  EXPECT_TRUE(FailsWith(o.Verify(), {"(softmax)", "carries pool attributes", "takes none"}));
}

// ---- concat ----------------------------------------------------------------------------------
// a [2, 3, 5, 3] and b [2, 3, 5, 5] -> concat axis -1 -> y [2, 3, 5, 8]; int8 with own scales.
OneOp Concat(bool int8) {
  OneOp o;
  const int a = int8 ? o.In("a", {2, 3, 5, 3}, ir::DType::I8, Q8(ir::Scheme::Q8TA, 0.05f, 3)) : o.In("a", {2, 3, 5, 3});
  const int b =
      int8 ? o.In("b", {2, 3, 5, 5}, ir::DType::I8, Q8(ir::Scheme::Q8TO, 0.02f, -1)) : o.In("b", {2, 3, 5, 5});
  const ir::Quant oq = Q8(ir::Scheme::Q8TO, 0.04f, 0);
  const int y = int8 ? o.Tensor("y", {2, 3, 5, 8}, ir::DType::I8, oq) : o.Tensor("y", {2, 3, 5, 8});
  ir::ConcatAttrs& c = o.Op(ir::OpType::Concat, {a, b}, y, "cat").concat;
  if (int8) c.output_quant = oq;
  return o;
}

TEST(VerifyCnnOpsTest, AcceptsConcat) {
  for (bool int8 : {false, true}) {
    Status s = Concat(int8).Verify();
    EXPECT_TRUE(s.ok()) << s.error().message;
  }
  OneOp o = Concat(false);  // along H, with the symbolic batch
  o.t("a").shape = {S, 2, 5, 4};
  o.t("b").shape = {S, 3, 5, 4};
  o.t("y").shape = {S, 5, 5, 4};
  o.op().concat.axis = 1;
  Status s = o.Verify();
  EXPECT_TRUE(s.ok()) << s.error().message;
  o.op().concat.axis = -3;
  s = o.Verify();
  EXPECT_TRUE(s.ok()) << s.error().message;
  o = Concat(false);  // one input
  o.op().inputs = {0};
  o.t("y").shape = {2, 3, 5, 3};
  o.g.inputs = {0};
  o.g.tensors.erase(o.g.tensors.begin() + 1);
  o.op().outputs = o.g.outputs = {1};
  s = o.Verify();
  EXPECT_TRUE(s.ok()) << s.error().message;
}

TEST(VerifyCnnOpsTest, RejectsConcatAxis) {
  OneOp o = Concat(false);
  o.op().concat.axis = 4;
  EXPECT_TRUE(FailsWith(o.Verify(), {"op 0 'cat' (concat)", "axis 4 is outside the inputs' 4 dimensions", "-4 to 3"}));
  o.op().concat.axis = -5;
  EXPECT_TRUE(FailsWith(o.Verify(), {"axis -5 is outside"}));
}

TEST(VerifyCnnOpsTest, RejectsConcatShapes) {
  OneOp o = Concat(false);
  o.t("b").shape = {2, 4, 5, 5};
  EXPECT_TRUE(FailsWith(
      o.Verify(), {"(concat)", "'a' [2, 3, 5, 3] and 'b' [2, 4, 5, 5] differ in dimension 1", "except along axis 3"}));
  o = Concat(false);
  o.t("b").shape = {2, 3, 5};
  EXPECT_TRUE(FailsWith(o.Verify(), {"(concat)", "input 'b' [2, 3, 5] has rank 3", "same rank"}));
  o = Concat(false);
  o.t("y").shape = {2, 3, 5, 9};
  EXPECT_TRUE(FailsWith(o.Verify(), {"(concat)", "output 'y' is f32 [2, 3, 5, 9]", "must be f32 [2, 3, 5, 8]"}));
  o = Concat(false);
  o.t("a").shape = {S, 3, 5, 3};
  o.t("b").shape = {S, 3, 5, 3};
  o.t("y").shape = {S, 3, 5, 3};
  o.op().concat.axis = 0;
  EXPECT_TRUE(FailsWith(o.Verify(), {"(concat)", "symbolic dimension 'tokens' on the concat axis 0"}));
  o = Concat(false);
  o.t("a").shape = {};
  EXPECT_TRUE(FailsWith(o.Verify(), {"(concat)", "input 'a' is a scalar"}));
}

TEST(VerifyCnnOpsTest, RejectsConcatDtypesAndQuant) {
  OneOp o = Concat(true);
  o.op().concat.output_quant = {};
  EXPECT_TRUE(FailsWith(o.Verify(), {"(concat)", "int8 inputs need output_quant q8to", "but it is none"}));
  o = Concat(false);
  o.op().concat.output_quant = Q8(ir::Scheme::Q8TO, 0.1f, 0);
  EXPECT_TRUE(FailsWith(o.Verify(), {"(concat)", "output_quant q8to needs int8 inputs", "remove output_quant"}));
  o = Concat(true);
  o.t("b").dtype = ir::DType::F32;
  o.t("b").quant.reset();
  EXPECT_TRUE(FailsWith(o.Verify(), {"(concat)", "'a' (i8) and 'b' (f32) differ in dtype", "all f32 or all i8"}));
  o = Concat(true);
  o.t("b").quant.reset();
  EXPECT_TRUE(FailsWith(o.Verify(), {"(concat)", "input 'b' is i8 without quantization", "per-tensor int8"}));
  o = Concat(false);
  o.t("a").dtype = o.t("b").dtype = ir::DType::F16;
  EXPECT_TRUE(FailsWith(o.Verify(), {"(concat)", "input 'a' is f16", "concat takes f32, or i8"}));
  o = Concat(true);
  o.t("y").quant = Q8(ir::Scheme::Q8TO, 0.5f, 0);
  EXPECT_TRUE(FailsWith(o.Verify(), {"(concat)", "must carry the same q8to quant as the op's output_quant"}));
  o = Concat(true);
  o.op().concat.output_quant.scheme = ir::Scheme::Q8TA;
  o.t("y").quant->scheme = ir::Scheme::Q8TA;
  EXPECT_TRUE(FailsWith(o.Verify(), {"(concat)", "int8 inputs need output_quant q8to", "but it is q8ta"}));
}

TEST(VerifyCnnOpsTest, RejectsConcatConstantAndArity) {
  OneOp o = Concat(false);
  o.t("b").data = Own(ToBytes(std::vector<float>(2 * 3 * 5 * 5, 1.0f)));
  o.g.inputs = {0};
  EXPECT_TRUE(FailsWith(o.Verify(), {"(concat)", "input 'b' is a constant"}));
  o = Concat(false);
  o.op().inputs.clear();
  EXPECT_TRUE(FailsWith(o.Verify(), {"(concat)", "has 0 inputs", "inputs [x0, x1, ...] (at least one)"}));
}

// ---- sigmoid, hard_sigmoid, hard_swish, softmax ----------------------------------------------
OneOp Unary(ir::OpType t, std::vector<int64_t> shape = {S, 17}) {
  OneOp o;
  const int x = o.In("x", shape);
  const int y = o.Tensor("y", shape);
  o.Op(t, {x}, y, "act");
  return o;
}

TEST(VerifyCnnOpsTest, AcceptsActivationsAndSoftmax) {
  for (ir::OpType t : {ir::OpType::Sigmoid, ir::OpType::HardSigmoid, ir::OpType::HardSwish, ir::OpType::Softmax})
    for (const std::vector<int64_t>& s : {std::vector<int64_t>{S, 17}, {2, 7, 9, 5}, {1000}}) {
      Status st = Unary(t, s).Verify();
      EXPECT_TRUE(st.ok()) << st.error().message;
    }
}

TEST(VerifyCnnOpsTest, RejectsActivationDtypeShapeAndConstant) {
  for (ir::OpType t : {ir::OpType::Sigmoid, ir::OpType::HardSigmoid, ir::OpType::HardSwish}) {
    const std::string label = std::string("op 0 'act' (") + ir::OpTypeName(t) + ")";
    OneOp o = Unary(t);
    o.t("x").dtype = ir::DType::I8;
    o.t("x").quant = Q8(ir::Scheme::Q8TA, 0.1f, 0);
    EXPECT_TRUE(
        FailsWith(o.Verify(), {label, "input 'x' is i8", std::string(ir::OpTypeName(t)) + " takes f32 inputs"}));
    o = Unary(t);
    o.t("y").shape = {S, 18};
    EXPECT_TRUE(FailsWith(o.Verify(), {label, "output 'y' is f32 [tokens, 18]", "must be f32 [tokens, 17]"}));
    o = Unary(t, {3, 17});
    o.t("x").data = Own(ToBytes(std::vector<float>(51, 1.0f)));
    o.g.inputs.clear();
    EXPECT_TRUE(FailsWith(o.Verify(), {label, "input 'x' is a constant"}));
  }
}

TEST(VerifyCnnOpsTest, RejectsHardSigmoidNonFiniteParameters) {
  OneOp o = Unary(ir::OpType::HardSigmoid);
  o.op().unary.alpha = INFINITY;
  EXPECT_TRUE(FailsWith(o.Verify(), {"(hard_sigmoid)", "alpha inf", "must be finite"}));
  o.op().unary = {0.2f, NAN};
  EXPECT_TRUE(FailsWith(o.Verify(), {"(hard_sigmoid)", "beta nan", "must be finite"}));
  o = Unary(ir::OpType::Sigmoid);
  o.op().unary.alpha = 1.0f;
  EXPECT_TRUE(FailsWith(o.Verify(), {"(sigmoid)", "carries hard_sigmoid", "takes none"}));
}

TEST(VerifyCnnOpsTest, RejectsSoftmaxDtypeShapeAndRank) {
  OneOp o = Unary(ir::OpType::Softmax);
  o.t("x").dtype = ir::DType::I8;
  o.t("x").quant = Q8(ir::Scheme::Q8TA, 0.1f, 0);
  EXPECT_TRUE(
      FailsWith(o.Verify(), {"op 0 'act' (softmax)", "input 'x' is i8", "softmax takes f32 (dequantize first)"}));
  o = Unary(ir::OpType::Softmax);
  o.t("y").dtype = ir::DType::F16;
  EXPECT_TRUE(FailsWith(o.Verify(), {"(softmax)", "output 'y' is f16 [tokens, 17]", "must be f32 [tokens, 17]"}));
  o = Unary(ir::OpType::Softmax, {});
  EXPECT_TRUE(FailsWith(o.Verify(), {"(softmax)", "is a scalar (rank 0)", "rank >= 1"}));
  o = Unary(ir::OpType::Softmax, {3, 17});
  o.t("x").data = Own(ToBytes(std::vector<float>(51, 1.0f)));
  o.g.inputs.clear();
  EXPECT_TRUE(FailsWith(o.Verify(), {"(softmax)", "input 'x' is a constant"}));
}

// ---- mul with broadcasting -------------------------------------------------------------------
OneOp Mul(std::vector<int64_t> as, std::vector<int64_t> bs) {
  OneOp o;
  const int a = o.In("a", as), b = o.In("b", bs);
  const int y = o.Tensor("y", as);
  o.Op(ir::OpType::Mul, {a, b}, y, "scale");
  return o;
}

TEST(VerifyCnnOpsTest, AcceptsBroadcastMul) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> ok{
      {{2, 5, 3, 7}, {2, 1, 1, 7}}, {{2, 5, 3, 7}, {7}},
      {{2, 5, 3, 7}, {1}},          {{S, 19}, {1, 19}},
      {{S, 19}, {S, 19}},           {{S, 19}, {19}},
      {{S, 4, 19}, {S, 1, 19}},     {{1, 2, 3, 4, 5, 6, 7, 8}, {2, 1, 4, 1, 6, 1, 8}}};
  for (const auto& [a, b] : ok) {
    Status s = Mul(a, b).Verify();
    EXPECT_TRUE(s.ok()) << s.error().message;
  }
}

TEST(VerifyCnnOpsTest, RejectsBroadcastMulMismatch) {
  EXPECT_TRUE(FailsWith(Mul({2, 5, 3, 7}, {2, 5, 1, 3}).Verify(),
                        {"op 0 'scale' (mul)", "'a' [2, 5, 3, 7] and 'b' [2, 5, 1, 3] differ in shape",
                         "dimension 3 of 'b' is 3, neither 1 nor 7", "identical shapes, or b broadcastable"}));
  EXPECT_TRUE(
      FailsWith(Mul({5, 7}, {2, 5, 7}).Verify(), {"(mul)", "'b' has more dimensions than 'a'", "rank(b) <= rank(a)"}));
  EXPECT_TRUE(FailsWith(Mul({S, 19}, {4, 19}).Verify(), {"(mul)", "dimension 0 of 'b' is 4, neither 1 nor tokens"}));
  EXPECT_TRUE(FailsWith(Mul({4, 19}, {S, 19}).Verify(), {"(mul)", "dimension 0 of 'b' is tokens, neither 1 nor 4"}));
  EXPECT_TRUE(
      FailsWith(Mul({2, 5, 1, 7}, {2, 5, 3, 7}).Verify(), {"(mul)", "dimension 2 of 'b' is 3, neither 1 nor 1"}));
  EXPECT_TRUE(
      FailsWith(Mul({1, 2, 3, 4, 5, 6, 7, 8, 9}, {9}).Verify(), {"(mul)", "a broadcasting mul takes a of rank <= 8"}));
}

TEST(VerifyCnnOpsTest, RejectsBroadcastMulOutputShape) {
  OneOp o = Mul({2, 5, 3, 7}, {2, 1, 1, 7});
  o.t("y").shape = {2, 1, 1, 7};
  EXPECT_TRUE(FailsWith(o.Verify(),
                        {"(mul)", "output 'y' is f32 [2, 1, 1, 7]", "must be f32 [2, 5, 3, 7] like its input 'a'"}));
}

// ---- resize_nearest --------------------------------------------------------------------------
// x [2, 3, 5, 7] -> resize_nearest scale [2, 3] -> y [2, 6, 15, 7]; int8 keeps x's quant.
OneOp Resize(bool int8) {
  OneOp o;
  const ir::Quant q = Q8(ir::Scheme::Q8TA, 0.05f, 3);
  const int x = int8 ? o.In("x", {2, 3, 5, 7}, ir::DType::I8, q) : o.In("x", {2, 3, 5, 7});
  const int y = int8 ? o.Tensor("y", {2, 6, 15, 7}, ir::DType::I8, q) : o.Tensor("y", {2, 6, 15, 7});
  ir::ResizeAttrs& a = o.Op(ir::OpType::ResizeNearest, {x}, y, "up").resize;
  a.scale[0] = 2;
  a.scale[1] = 3;
  return o;
}

TEST(VerifyCnnOpsTest, AcceptsResize) {
  for (bool int8 : {false, true}) {
    Status s = Resize(int8).Verify();
    EXPECT_TRUE(s.ok()) << s.error().message;
  }
  OneOp o = Resize(true);  // q8to on the output with the same parameters
  o.t("y").quant->scheme = ir::Scheme::Q8TO;
  Status s = o.Verify();
  EXPECT_TRUE(s.ok()) << s.error().message;
}

TEST(VerifyCnnOpsTest, RejectsResizeScale) {
  OneOp o = Resize(false);
  o.op().resize.scale[1] = 0;
  EXPECT_TRUE(FailsWith(o.Verify(), {"op 0 'up' (resize_nearest)", "scale [2, 0] must be >= 1 in both dimensions"}));
  o.op().resize.scale[0] = -2;
  EXPECT_TRUE(FailsWith(o.Verify(), {"scale [-2, 0]"}));
  o = Resize(false);
  o.op().resize.scale[0] = INT32_MAX;
  o.t("x").shape = {1, int64_t(1) << 30, 1, 1};
  EXPECT_TRUE(FailsWith(o.Verify(), {"(resize_nearest)", "is too large"}));
}

TEST(VerifyCnnOpsTest, RejectsResizeShapesAndDtypes) {
  OneOp o = Resize(false);
  o.t("y").shape = {2, 6, 10, 7};
  EXPECT_TRUE(
      FailsWith(o.Verify(), {"(resize_nearest)", "output 'y' is f32 [2, 6, 10, 7]", "must be f32 [2, 6, 15, 7]"}));
  o = Resize(false);
  o.t("x").shape = {3, 5, 7};
  EXPECT_TRUE(FailsWith(o.Verify(), {"(resize_nearest)", "takes rank 4 NHWC"}));
  o = Resize(false);
  o.t("x").dtype = o.t("y").dtype = ir::DType::I32;
  EXPECT_TRUE(FailsWith(o.Verify(), {"(resize_nearest)", "input 'x' is i32", "takes f32, or i8"}));
  o = Resize(true);
  o.t("y").dtype = ir::DType::F32;
  o.t("y").quant.reset();
  EXPECT_TRUE(FailsWith(o.Verify(), {"(resize_nearest)", "output 'y' is f32", "must be i8 [2, 6, 15, 7]"}));
  o = Resize(true);
  o.t("y").quant = Q8(ir::Scheme::Q8TA, 0.1f, 3);
  EXPECT_TRUE(FailsWith(o.Verify(), {"(resize_nearest)", "output 'y' has quant q8ta scale 0.1",
                                     "must carry the quant of input 'x' (q8ta scale 0.05"}));
  o = Resize(true);
  o.t("y").quant.reset();
  EXPECT_TRUE(FailsWith(o.Verify(), {"(resize_nearest)", "output 'y' has quant none"}));
  o = Resize(true);
  o.t("x").quant.reset();
  EXPECT_TRUE(FailsWith(o.Verify(), {"(resize_nearest)", "input 'x' is i8 without quantization"}));
}

// ---- .vkqg -----------------------------------------------------------------------------------
// Every new op in one graph, attributes off their defaults where they have any.
ir::Graph AllOps() {
  OneOp o;
  const ir::Quant xq = Q8(ir::Scheme::Q8TA, 0.05f, 3), oq = Q8(ir::Scheme::Q8TO, 0.04f, -1);
  const int x = o.In("x", {S, 7, 9, 5}, ir::DType::I8, xq);
  const int p = o.Tensor("p", {S, 4, 5, 5}, ir::DType::I8, oq);
  ir::Pool2dAttrs& pa = o.Op(ir::OpType::MaxPool2d, {x}, p, "pool").pool;
  pa.kernel[0] = pa.kernel[1] = 3, pa.stride[0] = pa.stride[1] = 2;
  for (int32_t& v : pa.padding) v = 1;
  pa.output_quant = oq;
  const int r = o.Tensor("r", {S, 8, 10, 5}, ir::DType::I8, oq);
  o.Op(ir::OpType::ResizeNearest, {p}, r, "up").resize = {{2, 2}};
  const int r2 = o.Tensor("r2", {S, 8, 10, 5}, ir::DType::I8, oq);
  o.Op(ir::OpType::ResizeNearest, {p}, r2, "up_default");
  const int c = o.Tensor("c", {S, 8, 20, 5}, ir::DType::I8, oq);
  ir::ConcatAttrs& ca = o.Op(ir::OpType::Concat, {r, r2}, c, "cat").concat;
  ca.axis = 2;
  ca.output_quant = oq;
  const int f = o.In("f", {3, 11});
  const int s1 = o.Tensor("s1", {3, 11}), s2 = o.Tensor("s2", {3, 11}), s3 = o.Tensor("s3", {3, 11});
  const int s4 = o.Tensor("s4", {3, 11}), s5 = o.Tensor("s5", {3, 11}), b = o.In("b", {11});
  o.Op(ir::OpType::Sigmoid, {f}, s1, "sig");
  o.Op(ir::OpType::HardSigmoid, {s1}, s2, "hsig").unary = {1.0f / 6.0f, 0.25f};
  o.Op(ir::OpType::HardSwish, {s2}, s3, "hswish");
  o.Op(ir::OpType::Softmax, {s3}, s4, "softmax");
  o.Op(ir::OpType::Mul, {s4, b}, s5, "scale");
  o.g.outputs = {c, s5};
  return o.g;
}

TEST(VerifyCnnOpsTest, RoundTripsEveryNewOp) {
  const ir::Graph g = AllOps();
  Status v = VerifyGraph(g, kOrigin);
  ASSERT_TRUE(v.ok()) << v.error().message;
  auto a = SerializeGraph(g);
  ASSERT_TRUE(a.ok()) << a.error().message;
  auto r = ReadGraphBytes(std::make_shared<const std::vector<uint8_t>>(a.value()), kOrigin);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectSameGraph(g, r.value());
  EXPECT_EQ(r->ops[1].resize.scale[0], 2);
  EXPECT_EQ(r->ops[3].concat.axis, 2);
  EXPECT_FLOAT_EQ(r->ops[5].unary.alpha, 1.0f / 6.0f);
  auto b = SerializeGraph(r.value());
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a.value(), b.value());
  // Each attribute table on the wire: its own union member.
  const fbg::Graph* fg = fbg::GetSizePrefixedGraph(a->data());
  EXPECT_EQ(fg->ops()->Get(0)->attrs_type(), fbg::OpAttrs::Pool2dAttrs);
  EXPECT_EQ(fg->ops()->Get(1)->attrs_type(), fbg::OpAttrs::ResizeAttrs);
  EXPECT_EQ(fg->ops()->Get(3)->attrs_type(), fbg::OpAttrs::ConcatAttrs);
  EXPECT_EQ(fg->ops()->Get(4)->attrs_type(), fbg::OpAttrs::NONE);
  EXPECT_EQ(fg->ops()->Get(5)->attrs_type(), fbg::OpAttrs::UnaryAttrs);
  EXPECT_EQ(fg->ops()->Get(7)->attrs_type(), fbg::OpAttrs::NONE);
}

// A one-op graph "a [1, 2, 2, 4] -> op -> y" written by hand, so attributes can be absent or
// belong to another op.
std::vector<uint8_t> RawOneOp(fbg::OpType type, std::vector<int64_t> y_shape, fbg::OpAttrs attrs_type,
                              const std::function<flatbuffers::Offset<void>(flatbuffers::FlatBufferBuilder&)>& attrs) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fbg::Tensor>> tensors;
  tensors.push_back(fbg::CreateTensor(fbb, fbb.CreateString("a"), fbb.CreateVector(std::vector<int64_t>{1, 2, 2, 4})));
  tensors.push_back(fbg::CreateTensor(fbb, fbb.CreateString("y"), fbb.CreateVector(y_shape)));
  auto a = attrs ? attrs(fbb) : flatbuffers::Offset<void>();
  auto op = fbg::CreateOp(fbb, fbb.CreateString("raw"), type, fbb.CreateVector(std::vector<int32_t>{0}),
                          fbb.CreateVector(std::vector<int32_t>{1}), attrs_type, a);
  auto root = fbg::CreateGraph(fbb, 1, fbb.CreateVector(tensors),
                               fbb.CreateVector(std::vector<flatbuffers::Offset<fbg::Op>>{op}),
                               fbb.CreateVector(std::vector<int32_t>{0}), fbb.CreateVector(std::vector<int32_t>{1}),
                               fbb.CreateString("tokens"), 0);
  fbg::FinishSizePrefixedGraphBuffer(fbb, root);
  std::vector<uint8_t> out(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  out.resize((out.size() + 63) / 64 * 64, 0);
  return out;
}

Result<ir::Graph> ReadRaw(std::vector<uint8_t> bytes) {
  return ReadGraphBytes(std::make_shared<const std::vector<uint8_t>>(std::move(bytes)), "raw.vkqg");
}

TEST(VerifyCnnOpsTest, AbsentAttributesTakeTheirDefaults) {
  auto r = ReadRaw(RawOneOp(fbg::OpType::ResizeNearest, {1, 4, 4, 4}, fbg::OpAttrs::NONE, nullptr));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->ops[0].resize, ir::ResizeAttrs{});
  r = ReadRaw(RawOneOp(fbg::OpType::HardSigmoid, {1, 2, 2, 4}, fbg::OpAttrs::UnaryAttrs,
                       [](auto& fbb) { return fbg::CreateUnaryAttrs(fbb).Union(); }));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FLOAT_EQ(r->ops[0].unary.alpha, 0.2f);
  EXPECT_FLOAT_EQ(r->ops[0].unary.beta, 0.5f);
  r = ReadRaw(RawOneOp(fbg::OpType::Concat, {1, 2, 2, 4}, fbg::OpAttrs::NONE, nullptr));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->ops[0].concat.axis, -1);
}

TEST(VerifyCnnOpsTest, ReaderRefusesForeignOrBrokenAttributes) {
  EXPECT_TRUE(FailsWith(ReadRaw(RawOneOp(fbg::OpType::Softmax, {1, 2, 2, 4}, fbg::OpAttrs::ConcatAttrs,
                                         [](auto& fbb) { return fbg::CreateConcatAttrs(fbb).Union(); })),
                        {"raw.vkqg", "op 0 'raw'", "softmax op carries ConcatAttrs", "takes no attributes"}));
  EXPECT_TRUE(FailsWith(ReadRaw(RawOneOp(fbg::OpType::Concat, {1, 2, 2, 4}, fbg::OpAttrs::ResizeAttrs,
                                         [](auto& fbb) { return fbg::CreateResizeAttrs(fbb).Union(); })),
                        {"concat op carries ResizeAttrs (attributes of resize_nearest)", "its own attribute table"}));
  EXPECT_TRUE(FailsWith(
      ReadRaw(RawOneOp(
          fbg::OpType::ResizeNearest, {1, 4, 4, 4}, fbg::OpAttrs::ResizeAttrs,
          [](auto& fbb) { return fbg::CreateResizeAttrs(fbb, fbb.CreateVector(std::vector<int32_t>{2})).Union(); })),
      {"raw.vkqg", "op 0 'raw': scale has 1 values, expected 2"}));
  // max_pool2d reads avg_pool2d's table.
  auto r = ReadRaw(RawOneOp(fbg::OpType::MaxPool2d, {1, 1, 1, 4}, fbg::OpAttrs::Pool2dAttrs,
                            [](auto& fbb) { return fbg::CreatePool2dAttrs(fbb, 0, 0, 0, true).Union(); }));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->ops[0].pool.global);
}

TEST(VerifyCnnOpsTest, WriterRefusesForeignAttributes) {
  ir::Graph g = AllOps();
  g.ops[4].concat.axis = 0;  // on the sigmoid
  EXPECT_TRUE(FailsWith(SerializeGraph(g), {"op 'sig' (sigmoid) carries concat attributes"}));
  g = AllOps();
  g.ops[6].resize.scale[0] = 3;  // on the hard_swish
  EXPECT_TRUE(FailsWith(SerializeGraph(g), {"op 'hswish' (hard_swish) carries resize_nearest attributes"}));
}

// ---- JSON ------------------------------------------------------------------------------------
class ImportCnnOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    path_ = dir_ + "/model.json";
    const std::vector<std::string> blocks = DocJsonBlocks();
    for (const std::string& b : blocks)
      if (b.find("\"hard_swish\"") != std::string::npos) doc_ = json::parse(b);
    ASSERT_FALSE(doc_.is_null()) << "docs/graph-json.md lacks the CNN glue example";
  }
  Result<ir::Graph> Import() {
    const std::string text = doc_.dump(2);
    EXPECT_TRUE(WriteFileBytes(path_, text.data(), text.size()).ok());
    return ImportJsonGraph(path_);
  }
  json& Op(const std::string& name) {
    for (json& o : doc_["ops"])
      if (o["name"] == name) return o;
    ADD_FAILURE() << "no op " << name;
    return doc_["ops"][0];
  }
  json& Tensor(const std::string& name) {
    for (json& t : doc_["tensors"])
      if (t["name"] == name) return t;
    ADD_FAILURE() << "no tensor " << name;
    return doc_["tensors"][0];
  }
  std::string dir_, path_;
  json doc_;
};

TEST_F(ImportCnnOpsTest, DocumentedExampleImportsWithItsAttributes) {
  auto r = Import();
  ASSERT_TRUE(r.ok()) << r.error().message;
  const ir::Graph& g = r.value();
  std::vector<ir::OpType> types;
  for (const ir::Op& op : g.ops) types.push_back(op.type);
  EXPECT_EQ(types, (std::vector<ir::OpType>{ir::OpType::HardSwish, ir::OpType::AvgPool2d, ir::OpType::HardSigmoid,
                                            ir::OpType::Mul, ir::OpType::ResizeNearest, ir::OpType::Concat,
                                            ir::OpType::MaxPool2d, ir::OpType::MaxPool2d, ir::OpType::Softmax}));
  EXPECT_NEAR(g.ops[2].unary.alpha, 1.0f / 6.0f, 1e-7f);
  EXPECT_EQ(g.ops[4].resize.scale[1], 2);
  EXPECT_EQ(g.ops[5].concat.axis, -1);
  EXPECT_EQ(g.ops[6].pool.kernel[0], 3);
  EXPECT_TRUE(g.ops[7].pool.global);
  const std::string vkqg = dir_ + "/m.vkqg";
  ASSERT_TRUE(WriteGraphFile(g, vkqg).ok());
  auto back = ReadGraphFile(vkqg);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ExpectSameGraph(g, back.value());
}

TEST_F(ImportCnnOpsTest, DefaultsAndInt8) {
  Op("gate").erase("alpha");
  Op("gate").erase("beta");
  Op("upsample").erase("scale");
  Op("merge").erase("axis");
  auto r = Import();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->ops[2].unary, ir::UnaryAttrs{});
  EXPECT_EQ(r->ops[4].resize, ir::ResizeAttrs{});
  EXPECT_EQ(r->ops[5].concat.axis, -1);
  // int8: concat's output_quant is given to its output; resize's output takes its input's quant.
  doc_ = json::parse(R"({"format": "vkqc-graph", "version": 1, "inputs": ["a", "b"], "outputs": ["y", "u"],
    "tensors": [{"name": "a", "shape": [1, 2, 2, 3], "dtype": "i8", "quant": {"scheme": "q8ta", "scale": 0.5, "zero_point": 1}},
                {"name": "b", "shape": [1, 2, 2, 5], "dtype": "u8", "quant": {"scheme": "q8ta", "scale": 0.25, "zero_point": 130}},
                {"name": "y", "shape": [1, 2, 2, 8], "dtype": "i8"},
                {"name": "u", "shape": [1, 4, 6, 3], "dtype": "i8"}],
    "ops": [{"type": "concat", "inputs": ["a", "b"], "outputs": ["y"], "output_quant": {"scheme": "q8to", "scale": 0.5, "zero_point": 1}},
            {"type": "resize_nearest", "inputs": ["a"], "outputs": ["u"], "scale": [2, 3]}]})");
  r = Import();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->tensors[2].quant, Q8(ir::Scheme::Q8TO, 0.5f, 1));
  EXPECT_EQ(r->tensors[3].quant, Q8(ir::Scheme::Q8TA, 0.5f, 1));
  EXPECT_EQ(r->tensors[1].quant->zero_points, std::vector<int32_t>{2});  // u8 130 -> i8 2
}

TEST_F(ImportCnnOpsTest, RejectsBadKeysAndValues) {
  Op("gate")["alpha"] = "big";
  EXPECT_TRUE(FailsWith(Import(), {path_, "ops[2] 'gate'", "alpha must be a number"}));
  Op("gate")["alpha"] = 0.2;
  Op("upsample")["scale"] = json::array({2});
  EXPECT_TRUE(FailsWith(Import(), {"ops[4] 'upsample'", "scale must be an array of 2 integers [h, w]"}));
  Op("upsample")["scale"] = json::array({2, 2});
  Op("merge")["axis"] = 1.5;
  EXPECT_TRUE(FailsWith(Import(), {"ops[5] 'merge'", "axis must be a 32-bit integer"}));
  Op("merge")["axis"] = -1;
  Op("classify")["axis"] = -1;
  EXPECT_TRUE(FailsWith(Import(), {"ops[8] 'classify'", "unknown key 'axis'"}));
  Op("classify").erase("axis");
  Op("merge")["output_quant"] = {{"scheme", "q8to"}, {"scale", 0.1}};
  EXPECT_TRUE(FailsWith(Import(), {"ops[5] 'merge'", "output_quant q8to writes int8", "'merged' must be declared"}));
  Op("merge").erase("output_quant");
  Tensor("merged")["shape"] = json::array({1, 8, 8, 12});
  EXPECT_TRUE(FailsWith(
      Import(), {"op 5 'merge' (concat)", "output 'merged' is f32 [1, 8, 8, 12]", "must be f32 [1, 8, 8, 13]"}));
  Tensor("merged")["shape"] = json::array({1, 8, 8, 13});
  Op("act")["type"] = "hardswish";
  EXPECT_TRUE(FailsWith(Import(), {"unknown op type 'hardswish'", "hard_swish", "resize_nearest", "softmax"}));
}

}  // namespace
}  // namespace vkqc
