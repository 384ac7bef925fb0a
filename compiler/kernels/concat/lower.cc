#include "compiler/kernels/concat/lower.h"

#include <cstring>

#include "compiler/emit/bundle_plan.h"

namespace vkqc::concat {
namespace {

using kernels::QScale;
using kernels::QZero;

// What one input's dispatch does; see shaders/concat.comp for the modes.
struct Part {
  enum Mode { Float, Q8Rows, Q8Last } mode = Float;
  uint64_t count = 0;  // invocations
  uint32_t inner = 1, total = 1, offset = 0;
  uint32_t c = 1, c4p = 8, ci = 1, ci4p = 8, nw = 1;
  bool requant = false;
  float sx = 1, so = 1;
  int32_t zx = 0, zo = 0;
};

linear::DispatchParams PartDispatch(const Part& p, const TargetProfile& prof) {
  std::vector<std::string> defines;
  if (p.mode == Part::Q8Rows) defines.push_back("VKQC_CONCAT_Q8_ROWS");
  if (p.mode == Part::Q8Last) defines.push_back("VKQC_CONCAT_Q8_LAST");
  if (p.requant) defines.push_back("VKQC_CONCAT_REQUANT");
  linear::DispatchParams d = kernels::FlatDispatch("concat.comp", defines, p.count, 128, prof);
  const uint32_t v[] = {uint32_t(p.count), p.inner, p.total, p.offset, p.c, p.c4p, p.ci, p.ci4p, p.nw};
  for (uint32_t i = 0; i < 9; ++i) d.spec.push_back({i + 1, v[i]});
  if (!p.requant) return d;  // no push block in the SPIR-V
  struct {
    float sx;
    int32_t zx;
    float inv_so;
    int32_t zo;
  } push{p.sx, p.zx, 1.0f / p.so, p.zo};
  d.push.resize(sizeof push);
  std::memcpy(d.push.data(), &push, sizeof push);
  return d;
}

Status Lower(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const ir::Tensor& yt = ctx.tensor(op.outputs[0]);
  const int64_t rank = int64_t(yt.shape.size());
  const size_t ax = size_t(op.concat.axis < 0 ? op.concat.axis + rank : op.concat.axis);
  const bool int8 = yt.dtype == ir::DType::I8;
  const bool last = ax + 1 == yt.shape.size();
  // outer: the product of the dimensions before the axis; inner: after it (int8: the rows' words
  // instead of the last dimension's values).
  uint64_t outer = 1, after = 1;
  for (size_t d = 0; d < ax; ++d) outer *= uint64_t(ctx.Dim(yt.shape[d]));
  for (size_t d = ax + 1; d < yt.shape.size(); ++d) after *= uint64_t(ctx.Dim(yt.shape[d]));
  const int64_t c = ctx.Dim(yt.shape.back());
  if (int8 && !last) after = after / uint64_t(c) * linear::PackedK4(c);
  uint64_t rows = 1;  // int8 along the last axis: the output's rows
  for (size_t d = 0; d + 1 < yt.shape.size(); ++d) rows *= uint64_t(ctx.Dim(yt.shape[d]));
  const uint64_t total = uint64_t(ctx.Dim(yt.shape[ax])) * after;
  int copies = 0, requants = 0;
  uint64_t at = 0;  // the input's first index along the axis
  for (int in : op.inputs) {
    const ir::Tensor& xt = ctx.tensor(in);
    const uint64_t len = uint64_t(ctx.Dim(xt.shape[ax]));
    Part p;
    if (int8) {
      p.sx = QScale(*xt.quant);
      p.zx = QZero(*xt.quant);
      p.so = QScale(op.concat.output_quant);
      p.zo = QZero(op.concat.output_quant);
      p.requant = p.sx != p.so || p.zx != p.zo;
      (p.requant ? requants : copies)++;
      p.c = uint32_t(c);
      p.c4p = linear::PackedK4(c);
    }
    if (int8 && last) {
      p.mode = Part::Q8Last;
      p.ci = uint32_t(len);
      p.ci4p = linear::PackedK4(int64_t(len));
      p.offset = uint32_t(at);
      p.nw = uint32_t((at + len - 1) / 4 - at / 4 + 1);
      p.count = rows * p.nw;
    } else {
      p.mode = int8 ? Part::Q8Rows : Part::Float;
      p.inner = uint32_t(len * after);
      p.total = uint32_t(total);
      p.offset = uint32_t(at * after);
      p.count = outer * len * after;
    }
    ctx.Dispatch(PartDispatch(p, ctx.profile()), {ctx.Read(in), ctx.Write(op.outputs[0])});
    at += len;
  }
  pl.variant = int8 ? "concat_q8ta_q8to" : "concat_f32";
  pl.reason = "one dispatch per input (" + std::to_string(op.inputs.size()) + "), each binding its input and the "
              "output" + (int8 && last ? "; channels packed into the output's int8 words, words shared by two "
                                         "inputs merged in order"
                                       : "") +
              (int8 ? "; " + std::to_string(copies) + " copied, " + std::to_string(requants) +
                          " requantized to the output's parameters"
                    : "");
  pl.detail = "axis " + std::to_string(ax) + ", " + std::to_string(yt.NumElements(ctx.tokens())) + " values";
  pl.integer_path = int8;
  return {};
}

}  // namespace

const kernels::Family& Lowering() {
  static const kernels::Family f{"concat", {ir::OpType::Concat}, nullptr, Lower};
  return f;
}

}  // namespace vkqc::concat
