// The "Supported combinations" rows of the CNN glue ops: max_pool2d, concat, sigmoid,
// hard_sigmoid, hard_swish, mul with broadcasting, resize_nearest and softmax (run by
// combinations_test.cc like every other row). Shapes are odd on purpose (C = 3, 5, 17; 7x9 images).
#include "combinations_case.h"

namespace vkqc::combos {
namespace {

// ---- max_pool2d ------------------------------------------------------------------------------
enum class MaxPool { K3S2P1, K2x3, GlobalNC, GlobalN11C, BadPadding };
void BuildMaxPool(Case& c, ir::DType xt, MaxPool kind, int out = 1 /* 0 f32, 1 q8to, 2 q8to = x's quant */) {
  const int64_t n = 2, h = 7, w = 9, ch = 5;
  const bool int8 = xt == ir::DType::I8;
  const ir::Quant xq = Q8(ir::Scheme::Q8TA, 0.05f, 3);
  const int x = int8 ? c.Input("x", {n, h, w, ch}, xt, xq) : c.Input("x", {n, h, w, ch}, xt);
  std::vector<int64_t> ys{n, 4, 5, ch};
  if (kind == MaxPool::K2x3) ys = {n, 4, 9, ch};
  if (kind == MaxPool::GlobalNC) ys = {n, ch};
  if (kind == MaxPool::GlobalN11C) ys = {n, 1, 1, ch};
  if (kind == MaxPool::BadPadding) ys = {n, 8, 9, ch};
  const bool q = int8 && out > 0;
  ir::Quant oq = out == 2 ? Q8(ir::Scheme::Q8TO, 0.05f, 3) : Q8(ir::Scheme::Q8TO, 0.04f, -2);
  const int y = c.Tensor("y", ys, q ? ir::DType::I8 : xt, q ? std::optional<ir::Quant>(oq) : std::nullopt);
  ir::Pool2dAttrs& a = c.Op("pool", ir::OpType::MaxPool2d, {x}, {y}).pool;
  if (kind == MaxPool::K3S2P1) {
    a.kernel[0] = a.kernel[1] = 3;
    a.stride[0] = a.stride[1] = 2;
    for (int32_t& p : a.padding) p = 1;
  } else if (kind == MaxPool::K2x3 || kind == MaxPool::BadPadding) {
    a.kernel[0] = 2;
    a.kernel[1] = 3;
    a.stride[0] = 2;
    const int32_t pad[4] = {1, 0, 0, 2};
    std::copy(pad, pad + 4, a.padding);
    if (kind == MaxPool::BadPadding) a.padding[0] = 2, a.stride[0] = 1;  // padding == kernel height
  } else {
    a.global = true;
  }
  if (q) a.output_quant = oq;
  c.g.outputs = {y};
}

// ---- concat ----------------------------------------------------------------------------------
// Inputs [2, 3, 5, C_i] (or along `axis` sizes `lens`), all f32 or all i8 with their own scales.
void BuildConcat(Case& c, bool int8, int32_t axis, std::vector<int64_t> lens, bool out_quant = true,
                 bool mixed = false) {
  const std::vector<int64_t> base{2, 3, 5, 4};
  const size_t ax = size_t(axis < 0 ? axis + 4 : axis);
  std::vector<int> in;
  std::vector<int64_t> ys = base;
  ys[ax] = 0;
  for (size_t i = 0; i < lens.size(); ++i) {
    std::vector<int64_t> s = base;
    s[ax] = lens[i];
    ys[ax] += lens[i];
    std::string name = "x";
    name += std::to_string(i);
    const bool i8 = int8 && !(mixed && i == 1);
    // The second input has the output's parameters (copied); the others are requantized.
    const ir::Quant q =
        i == 1 ? Q8(ir::Scheme::Q8TA, 0.04f, -1) : Q8(ir::Scheme::Q8TA, 0.03f + 0.01f * float(i), 5 - 4 * int32_t(i));
    in.push_back(i8 ? c.Input(name, s, ir::DType::I8, q) : c.Input(name, s));
  }
  const bool q = int8 && out_quant;
  const ir::Quant oq = Q8(ir::Scheme::Q8TO, 0.04f, -1);
  const int y = c.Tensor("y", ys, q ? ir::DType::I8 : ir::DType::F32, q ? std::optional<ir::Quant>(oq) : std::nullopt);
  ir::ConcatAttrs& a = c.Op("concat", ir::OpType::Concat, in, {y}).concat;
  a.axis = axis;
  if (q) a.output_quant = oq;
  c.g.outputs = {y};
}

// ---- sigmoid, hard_sigmoid, hard_swish, softmax ----------------------------------------------
void BuildUnary(Case& c, ir::OpType type, std::vector<int64_t> shape, ir::DType xt = ir::DType::F32) {
  const int x = xt == ir::DType::I8 ? c.Input("x", shape, xt, Q8(ir::Scheme::Q8TA, 0.05f, 3)) : c.Input("x", shape, xt);
  const int y = c.Tensor("y", shape, ir::DType::F32);
  c.Op(ir::OpTypeName(type), type, {x}, {y});
  c.g.outputs = {y};
}

// ---- mul with broadcasting -------------------------------------------------------------------
void BuildBroadcastMul(Case& c, std::vector<int64_t> as, std::vector<int64_t> bs) {
  const int a = c.Input("a", as);
  const int b = c.Input("b", bs);
  const int y = c.Tensor("y", as);
  c.Op("mul", ir::OpType::Mul, {a, b}, {y});
  c.g.outputs = {y};
}

// ---- resize_nearest --------------------------------------------------------------------------
void BuildResize(Case& c, bool int8, int32_t sh, int32_t sw, bool other_quant = false) {
  const int64_t n = 2, h = 3, w = 5, ch = int8 ? 5 : 3;
  const ir::Quant xq = Q8(ir::Scheme::Q8TA, 0.05f, 3);
  const int x = int8 ? c.Input("x", {n, h, w, ch}, ir::DType::I8, xq) : c.Input("x", {n, h, w, ch});
  const std::vector<int64_t> ys{n, h * std::max(sh, 1), w * std::max(sw, 1), ch};
  const int y =
      int8 ? c.Tensor("y", ys, ir::DType::I8, other_quant ? Q8(ir::Scheme::Q8TA, 0.1f, 3) : xq) : c.Tensor("y", ys);
  ir::ResizeAttrs& a = c.Op("resize", ir::OpType::ResizeNearest, {x}, {y}).resize;
  a.scale[0] = sh;
  a.scale[1] = sw;
  c.g.outputs = {y};
}

}  // namespace

void AddCnnRows(std::vector<Row>& r) {
  auto add = [&](std::string op, std::string x, std::string opts, std::string out, std::function<void(Case&)> b,
                 std::string refusal = "") {
    r.push_back(
        {std::move(op), std::move(x), std::move(opts), std::move(out), std::move(refusal), std::move(b), false});
  };
  // max_pool2d
  const std::pair<MaxPool, const char*> pools[] = {
      {MaxPool::K3S2P1, "kernel [3, 3], stride [2, 2], padding [1, 1, 1, 1]"},
      {MaxPool::K2x3, "kernel [2, 3], stride [2, 1], padding [1, 0, 0, 2]"},
      {MaxPool::GlobalNC, "global, y [N, C]"},
      {MaxPool::GlobalN11C, "global, y [N, 1, 1, C]"}};
  for (bool int8 : {false, true})
    for (const auto& [kind, name] : pools)
      add("max_pool2d", int8 ? "i8 q8ta" : "f32", name, int8 ? "i8 q8to" : "f32",
          [int8, kind = kind](Case& c) { BuildMaxPool(c, int8 ? ir::DType::I8 : ir::DType::F32, kind); });
  add("max_pool2d", "i8 q8ta", std::string(pools[0].second) + ", output_quant = x's quant (a copy)", "i8 q8to",
      [](Case& c) { BuildMaxPool(c, ir::DType::I8, MaxPool::K3S2P1, 2); });
  add(
      "max_pool2d", "i8 q8ta", pools[0].second, "f32",
      [](Case& c) { BuildMaxPool(c, ir::DType::I8, MaxPool::K3S2P1, 0); },
      "so output_quant must be q8to (the maximum is requantized to int8)");
  add(
      "max_pool2d", "f32", "kernel [2, 3], padding 2 on top", "f32",
      [](Case& c) { BuildMaxPool(c, ir::DType::F32, MaxPool::BadPadding); }, "must be smaller than the kernel");
  add(
      "max_pool2d", "f16", pools[0].second, "f16", [](Case& c) { BuildMaxPool(c, ir::DType::F16, MaxPool::K3S2P1); },
      "max_pool2d takes f32, or i8 with a per-tensor q8ta/q8to quant");
  // concat
  add("concat", "3 x f32", "axis -1 (channels 3 + 5 + 17)", "f32", [](Case& c) {
    BuildConcat(c, false, -1, {3, 5, 17});
  });
  add("concat", "2 x f32", "axis 1 (rows 3 + 2)", "f32", [](Case& c) { BuildConcat(c, false, 1, {3, 2}); });
  add("concat", "2 x f32", "axis 0 (batch 2 + 1)", "f32", [](Case& c) { BuildConcat(c, false, 0, {2, 1}); });
  add("concat", "3 x i8 q8ta (different scales)", "axis -1 (channels 3 + 5 + 17)", "i8 q8to", [](Case& c) {
    BuildConcat(c, true, -1, {3, 5, 17});
  });
  add("concat", "3 x i8 q8ta (different scales)", "axis 3 (channels 8 + 4 + 1)", "i8 q8to", [](Case& c) {
    BuildConcat(c, true, 3, {8, 4, 1});
  });
  add("concat", "2 x i8 q8ta (different scales)", "axis 2 (columns 5 + 2)", "i8 q8to", [](Case& c) {
    BuildConcat(c, true, 2, {5, 2});
  });
  add("concat", "1 x i8 q8ta", "axis -1 (channels 6)", "i8 q8to", [](Case& c) { BuildConcat(c, true, -1, {6}); });
  add(
      "concat", "2 x i8 q8ta (different scales)", "axis -1 (channels 3 + 5)", "f32",
      [](Case& c) {
        BuildConcat(c, true, -1, {3, 5}, false);
      },
      "int8 inputs need output_quant q8to");
  add(
      "concat", "i8 q8ta + f32", "axis -1 (channels 3 + 5)", "i8 q8to",
      [](Case& c) {
        BuildConcat(c, true, -1, {3, 5}, true, true);
      },
      "concat takes all f32 or all i8 inputs");
  add(
      "concat", "2 x f32", "axis 4", "f32",
      [](Case& c) {
        BuildConcat(c, false, 4, {3, 5});
      },
      "axis 4 is outside the inputs' 4 dimensions");
  add(
      "concat", "2 x f32 (heights 3 and 4)", "axis -1", "f32",
      [](Case& c) {
        BuildConcat(c, false, -1, {3, 5});
        c.g.tensors[1].shape[1] = 4;  // x1
      },
      "differ in dimension 1");
  // sigmoid, hard_sigmoid, hard_swish
  add("sigmoid", "f32 [tokens, 1000]", "none", "f32", [](Case& c) { BuildUnary(c, ir::OpType::Sigmoid, {S, 1000}); });
  add("sigmoid", "f32 [2, 7, 9, 5]", "none", "f32", [](Case& c) { BuildUnary(c, ir::OpType::Sigmoid, {2, 7, 9, 5}); });
  add(
      "sigmoid", "i8 q8ta", "none", "f32",
      [](Case& c) {
        BuildUnary(c, ir::OpType::Sigmoid, {2, 7}, ir::DType::I8);
      },
      "sigmoid takes f32 inputs");
  add("hard_sigmoid", "f32 [2, 7, 9, 5]", "alpha 0.2, beta 0.5 (defaults)", "f32", [](Case& c) {
    BuildUnary(c, ir::OpType::HardSigmoid, {2, 7, 9, 5});
  });
  add("hard_sigmoid", "f32 [tokens, 17]", "alpha 0.1666667, beta 0.5", "f32", [](Case& c) {
    BuildUnary(c, ir::OpType::HardSigmoid, {S, 17});
    c.g.ops.back().unary.alpha = 1.0f / 6.0f;
  });
  add(
      "hard_sigmoid", "f32 [2, 7]", "alpha inf", "f32",
      [](Case& c) {
        BuildUnary(c, ir::OpType::HardSigmoid, {2, 7});
        c.g.ops.back().unary.alpha = INFINITY;
      },
      "must be finite");
  add("hard_swish", "f32 [2, 7, 9, 5]", "none", "f32", [](Case& c) {
    BuildUnary(c, ir::OpType::HardSwish, {2, 7, 9, 5});
  });
  add("hard_swish", "f32 [tokens, 1000]", "none", "f32", [](Case& c) {
    BuildUnary(c, ir::OpType::HardSwish, {S, 1000});
  });
  // mul with broadcasting
  add("mul", "f32 [2, 5, 3, 7] * f32 [2, 1, 1, 7]", "b broadcast (squeeze-excite)", "f32", [](Case& c) {
    BuildBroadcastMul(c, {2, 5, 3, 7}, {2, 1, 1, 7});
  });
  add("mul", "f32 [2, 5, 3, 7] * f32 [7]", "b broadcast", "f32", [](Case& c) {
    BuildBroadcastMul(c, {2, 5, 3, 7}, {7});
  });
  add("mul", "f32 [2, 5, 3, 7] * f32 [5, 1, 7]", "b broadcast", "f32", [](Case& c) {
    BuildBroadcastMul(c, {2, 5, 3, 7}, {5, 1, 7});
  });
  add("mul", "f32 [2, 5, 3, 7] * f32 [2, 5, 3, 1]", "b broadcast", "f32", [](Case& c) {
    BuildBroadcastMul(c, {2, 5, 3, 7}, {2, 5, 3, 1});
  });
  add("mul", "f32 [tokens, 19] * f32 [1, 19]", "b broadcast", "f32", [](Case& c) {
    BuildBroadcastMul(c, {S, 19}, {1, 19});
  });
  add(
      "mul", "f32 [2, 5, 3, 7] * f32 [2, 5, 1, 3]", "b broadcast", "f32",
      [](Case& c) {
        BuildBroadcastMul(c, {2, 5, 3, 7}, {2, 5, 1, 3});
      },
      "neither 1 nor");
  add(
      "mul", "f32 [5, 7] * f32 [2, 5, 7]", "b broadcast", "f32",
      [](Case& c) {
        BuildBroadcastMul(c, {5, 7}, {2, 5, 7});
      },
      "has more dimensions than");
  // resize_nearest
  add("resize_nearest", "f32 [2, 3, 5, 3]", "scale [2, 2]", "f32", [](Case& c) { BuildResize(c, false, 2, 2); });
  add("resize_nearest", "f32 [2, 3, 5, 3]", "scale [3, 1]", "f32", [](Case& c) { BuildResize(c, false, 3, 1); });
  add("resize_nearest", "i8 q8ta [2, 3, 5, 5]", "scale [2, 3]", "i8 q8ta (x's quant)",
      [](Case& c) { BuildResize(c, true, 2, 3); });
  add(
      "resize_nearest", "i8 q8ta [2, 3, 5, 5]", "scale [2, 2]", "i8 q8ta (another scale)",
      [](Case& c) { BuildResize(c, true, 2, 2, true); }, "must carry the quant of input 'x'");
  add(
      "resize_nearest", "f32 [2, 3, 5, 3]", "scale [0, 2]", "f32", [](Case& c) { BuildResize(c, false, 0, 2); },
      "must be >= 1 in both dimensions");
  // softmax
  add("softmax", "f32 [tokens, 5]", "last axis", "f32", [](Case& c) { BuildUnary(c, ir::OpType::Softmax, {S, 5}); });
  add("softmax", "f32 [3, 1000]", "last axis", "f32", [](Case& c) { BuildUnary(c, ir::OpType::Softmax, {3, 1000}); });
  add("softmax", "f32 [2, 4099]", "last axis (rows longer than a workgroup)", "f32", [](Case& c) {
    BuildUnary(c, ir::OpType::Softmax, {2, 4099});
  });
  add("softmax", "f32 [2, 3, 17]", "last axis", "f32", [](Case& c) { BuildUnary(c, ir::OpType::Softmax, {2, 3, 17}); });
  add(
      "softmax", "i8 q8ta", "last axis", "f32",
      [](Case& c) {
        BuildUnary(c, ir::OpType::Softmax, {2, 7}, ir::DType::I8);
      },
      "softmax takes f32");
}

}  // namespace vkqc::combos
