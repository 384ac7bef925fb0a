// The "Supported combinations" rows of transpose, reshape and clip (run by combinations_test.cc
// like every other row; these ops copy or clamp values, so their outputs must be exact). Shapes
// are odd on purpose (3, 5, 17; int8 rows not multiples of 4) next to aligned ones.
#include <limits>

#include "combinations_case.h"

namespace vkqc::combos {
namespace {

const ir::Quant kXq = Q8(ir::Scheme::Q8TA, 0.05f, -3);

// x (f32, or i8 q8ta) -> transpose(perm) -> y (the graph output).
void BuildTranspose(Case& c, std::vector<int64_t> xs, std::vector<int32_t> perm, bool int8 = false) {
  const int x = int8 ? c.Input("x", xs, ir::DType::I8, kXq) : c.Input("x", xs);
  std::vector<int64_t> ys;
  for (int32_t a : perm) ys.push_back(xs[size_t(a)]);
  const int y = c.Tensor("y", ys, int8 ? ir::DType::I8 : ir::DType::F32,
                         int8 ? std::optional<ir::Quant>(kXq) : std::nullopt);
  c.Op("transpose", ir::OpType::Transpose, {x}, {y}).transpose.perm = std::move(perm);
  c.g.outputs = {y};
}

// x -> reshape -> y. `inside`: x comes from a clip (f32) and y feeds a clip or a dequantize, so
// the reshape sits between two ops (a view where the device bytes allow); else graph input to
// graph output (a copy).
void BuildReshape(Case& c, std::vector<int64_t> xs, std::vector<int64_t> ys, bool int8, bool inside) {
  int x = int8 ? c.Input("x", xs, ir::DType::I8, kXq) : c.Input("x", xs);
  if (inside && !int8) {
    const int a = c.Tensor("a", xs);
    c.Op("before", ir::OpType::Clip, {x}, {a}).unary = {-1.0f, 1.0f};
    x = a;
  }
  const int r = c.Tensor(inside ? "r" : "y", ys, int8 ? ir::DType::I8 : ir::DType::F32,
                         int8 ? std::optional<ir::Quant>(kXq) : std::nullopt);
  c.Op("reshape", ir::OpType::Reshape, {x}, {r});
  if (!inside) {
    c.g.outputs = {r};
    return;
  }
  const int y = c.Tensor("y", ys);
  if (int8) c.Op("after", ir::OpType::Dequantize, {r}, {y});
  else c.Op("after", ir::OpType::Clip, {r}, {y}).unary = {0.0f, std::numeric_limits<float>::infinity()};
  c.g.outputs = {y};
}

void BuildClip(Case& c, float lo, float hi, ir::DType dt = ir::DType::F32) {
  const std::vector<int64_t> s{3, 5, 17};
  const int x = dt == ir::DType::I8 ? c.Input("x", s, dt, kXq) : c.Input("x", s);
  const int y = c.Tensor("y", s);
  c.Op("clip", ir::OpType::Clip, {x}, {y}).unary = {lo, hi};
  c.g.outputs = {y};
}

}  // namespace

void AddLayoutRows(std::vector<Row>& r) {
  auto add = [&](std::string op, std::string x, std::string options, std::string output,
                 std::function<void(Case&)> build, std::string refusal = "") {
    r.push_back({std::move(op), std::move(x), std::move(options), std::move(output), std::move(refusal),
                 std::move(build), false});
  };
  constexpr float kInf = std::numeric_limits<float>::infinity();
  // transpose
  add("transpose", "f32 [2, 3, 5, 17]", "perm [0, 2, 3, 1] (NCHW -> NHWC)", "f32",
      [](Case& c) { BuildTranspose(c, {2, 3, 5, 17}, {0, 2, 3, 1}); });
  add("transpose", "f32 [2, 5, 17, 3]", "perm [0, 3, 1, 2] (NHWC -> NCHW)", "f32",
      [](Case& c) { BuildTranspose(c, {2, 5, 17, 3}, {0, 3, 1, 2}); });
  add("transpose", "f32 [2, 32, 5, 17]", "perm [0, 2, 3, 1] (32x32 shared-memory tiles)", "f32",
      [](Case& c) { BuildTranspose(c, {2, 32, 5, 17}, {0, 2, 3, 1}); });
  add("transpose", "f32 [2, 3, 5, 17]", "perm [3, 1, 0, 2]", "f32",
      [](Case& c) { BuildTranspose(c, {2, 3, 5, 17}, {3, 1, 0, 2}); });
  add("transpose", "f32 [2, 3, 1, 5, 2, 3]", "perm [5, 3, 1, 0, 4, 2] (rank 6)", "f32",
      [](Case& c) { BuildTranspose(c, {2, 3, 1, 5, 2, 3}, {5, 3, 1, 0, 4, 2}); });
  add("transpose", "f32 [tokens, 3, 5]", "perm [0, 2, 1]", "f32",
      [](Case& c) { BuildTranspose(c, {S, 3, 5}, {0, 2, 1}); });
  add("transpose", "i8 q8ta [2, 3, 5, 17]", "perm [0, 2, 3, 1] (NCHW -> NHWC)", "i8 q8ta (the input's quant)",
      [](Case& c) { BuildTranspose(c, {2, 3, 5, 17}, {0, 2, 3, 1}, true); });
  add("transpose", "i8 q8ta [2, 5, 17, 3]", "perm [0, 3, 1, 2] (NHWC -> NCHW)", "i8 q8ta (the input's quant)",
      [](Case& c) { BuildTranspose(c, {2, 5, 17, 3}, {0, 3, 1, 2}, true); });
  add("transpose", "i8 q8ta [4, 8, 32]", "perm [2, 0, 1]", "i8 q8ta (the input's quant)",
      [](Case& c) { BuildTranspose(c, {4, 8, 32}, {2, 0, 1}, true); });
  add("transpose", "f32 [2, 3, 5]", "perm [0, 2, 2]", "f32",
      [](Case& c) {
        BuildTranspose(c, {2, 3, 5}, {0, 2, 1});
        c.g.ops.back().transpose.perm = {0, 2, 2};
      },
      "is not a permutation of 0..2");
  add("transpose", "f32 [2, 1, 1, 3, 1, 1, 2]", "perm of rank 7", "f32",
      [](Case& c) { BuildTranspose(c, {2, 1, 1, 3, 1, 1, 2}, {6, 1, 2, 3, 4, 5, 0}); }, "transpose takes rank 1 to 6");
  add("transpose", "f32 [tokens, 3]", "perm [1, 0]", "f32",
      [](Case& c) {
        BuildTranspose(c, {S, 3}, {0, 1});
        c.g.ops.back().transpose.perm = {1, 0};
      },
      "which must stay first");
  add("transpose", "i8 q8ta [3, 5]", "perm [1, 0]", "i8 q8ta with another scale",
      [](Case& c) {
        BuildTranspose(c, {3, 5}, {1, 0}, true);
        c.g.tensors.back().quant = Q8(ir::Scheme::Q8TA, 0.1f, -3);
      },
      "carries the input's scale and zero point");
  add("transpose", "i8 dq8ca (output of a quantize)", "perm [1, 0]", "i8",
      [](Case& c) {
        const int x0 = c.Input("x0", {3, 8});
        const int q = c.Tensor("q", {3, 8}, ir::DType::I8, Dq8ca());
        c.Op("quantize", ir::OpType::Quantize, {x0}, {q});
        const int y = c.Tensor("y", {8, 3}, ir::DType::I8, kXq);
        c.Op("transpose", ir::OpType::Transpose, {q}, {y}).transpose.perm = {1, 0};
        c.g.outputs = {y};
      },
      "per-token parameters belong to rows");
  // reshape
  add("reshape", "f32 [2, 3, 5, 17] (between two ops)", "[6, 85]: a view, no dispatch", "f32",
      [](Case& c) { BuildReshape(c, {2, 3, 5, 17}, {6, 85}, false, true); });
  add("reshape", "f32 [2, 3, 5, 17] (graph input)", "[30, 17]", "f32 (graph output): one copy",
      [](Case& c) { BuildReshape(c, {2, 3, 5, 17}, {30, 17}, false, false); });
  add("reshape", "f32 [tokens, 3, 5] (graph input)", "[tokens, 15]", "f32 (graph output): one copy",
      [](Case& c) { BuildReshape(c, {S, 3, 5}, {S, 15}, false, false); });
  add("reshape", "i8 q8ta [3, 5, 17]", "[15, 17] (last dimension kept): a view", "i8 q8ta (the input's quant)",
      [](Case& c) { BuildReshape(c, {3, 5, 17}, {15, 17}, true, true); });
  add("reshape", "i8 q8ta [2, 64]", "[4, 32] (whole 32-byte rows): a view", "i8 q8ta (the input's quant)",
      [](Case& c) { BuildReshape(c, {2, 64}, {4, 32}, true, true); });
  add("reshape", "i8 q8ta [3, 5, 6]", "[5, 18]: rows re-padded, one copy", "i8 q8ta (the input's quant)",
      [](Case& c) { BuildReshape(c, {3, 5, 6}, {5, 18}, true, true); });
  add("reshape", "i8 q8ta [3, 5, 6] (graph input)", "[90]", "i8 q8ta (graph output): one copy",
      [](Case& c) { BuildReshape(c, {3, 5, 6}, {90}, true, false); });
  add("reshape", "f32 [3, 4]", "[2, 5]", "f32", [](Case& c) { BuildReshape(c, {3, 4}, {2, 5}, false, false); },
      "reshape keeps the element count");
  add("reshape", "f32 [tokens, 4]", "[4, 1]", "f32", [](Case& c) { BuildReshape(c, {S, 4}, {4, 1}, false, false); },
      "keeps it leading in both");
  add("reshape", "i8 q8ta [3, 5]", "[15]", "f32",
      [](Case& c) {
        BuildReshape(c, {3, 5}, {15}, true, false);
        c.g.tensors.back().dtype = ir::DType::F32;
        c.g.tensors.back().quant.reset();
      },
      "the output has the input's dtype");
  add("reshape", "i8 q8ta [3, 5]", "[15]", "i8 q8ta with another zero point",
      [](Case& c) {
        BuildReshape(c, {3, 5}, {15}, true, false);
        c.g.tensors.back().quant = Q8(ir::Scheme::Q8TA, 0.05f, 0);
      },
      "carries the input's scale and zero point");
  // clip
  add("clip", "f32", "min 0, max 6 (relu6)", "f32", [](Case& c) { BuildClip(c, 0.0f, 6.0f); });
  add("clip", "f32", "min 0 (relu: max +inf)", "f32", [](Case& c) { BuildClip(c, 0.0f, kInf); });
  add("clip", "f32", "max 0.5 (min -inf)", "f32", [](Case& c) { BuildClip(c, -kInf, 0.5f); });
  add("clip", "f32", "min -1.25, max 1", "f32", [](Case& c) { BuildClip(c, -1.25f, 1.0f); });
  add("clip", "f32", "min 6, max 0", "f32", [](Case& c) { BuildClip(c, 6.0f, 0.0f); }, "is greater than max");
  add("clip", "f32", "min nan", "f32", [](Case& c) { BuildClip(c, std::nanf(""), 1.0f); }, "must be numbers");
  add("clip", "i8 q8ta", "min 0, max 6", "f32", [](Case& c) { BuildClip(c, 0.0f, 6.0f, ir::DType::I8); },
      "clip takes f32 inputs");
}

}  // namespace vkqc::combos
