#include "compiler/kernels/layout/lower.h"

#include <algorithm>

#include "compiler/emit/bundle_plan.h"
#include "compiler/kernels/layout/layout.h"

namespace vkqc::layout {
namespace {

std::vector<int64_t> Concrete(const kernels::LowerContext& ctx, const ir::Tensor& t) {
  std::vector<int64_t> s;
  for (int64_t d : t.shape) s.push_back(ctx.Dim(d));
  return s;
}

// The shaders index values (and int8 bytes) in 32 bits.
Status CheckIndexable(const kernels::LowerContext& ctx, size_t i, int t) {
  if (ctx.DeviceBytes(t) < (uint64_t(1) << 32)) return {};
  return UserError(ctx.OpLabel(i) + ": tensor '" + ctx.tensor(t).name + "' (" + std::to_string(ctx.DeviceBytes(t)) +
                   " bytes) is too large for " + ir::OpTypeName(ctx.op(i).type) + ", which indexes in 32 bits");
}

Status LowerTranspose(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const ir::Tensor& x = ctx.tensor(op.inputs[0]);
  VKQC_TRY(CheckIndexable(ctx, i, op.inputs[0]));
  VKQC_TRY(CheckIndexable(ctx, i, op.outputs[0]));
  const std::vector<int64_t> shape = Concrete(ctx, x);
  const bool int8 = x.dtype == ir::DType::I8;
  const linear::DispatchParams d = TransposeDispatch(shape, op.transpose.perm, int8, ctx.profile());
  ctx.Dispatch(d, {ctx.Read(op.inputs[0]), ctx.Write(op.outputs[0])});
  const Canonical c = Canonicalize(shape, op.transpose.perm);
  const std::string perm = PermString(op.transpose.perm);
  if (d.shader.source == "transpose_tile.comp") {
    pl.variant = "transpose_f32_tiled";
    pl.reason = "perm " + perm + " swaps the last two dimensions of " + DimsString(c.dims) +
                ": 32x32 tiles through shared memory, coalesced reads and writes";
  } else {
    pl.variant = int8 ? "transpose_i8" : "transpose_f32";
    std::vector<int32_t> cp(c.perm.begin(), c.perm.end());
    pl.reason = "perm " + perm + " (as " + PermString(cp) + " of " + DimsString(c.dims) + "): one invocation per output " +
                (int8 ? "word of 4 int8 values" : "value") + ", coalesced writes" +
                (c.Identity() ? "; the order is unchanged, but '" + ctx.tensor(op.outputs[0]).name +
                                    "' needs its own buffer (a graph output, or other int8 row padding)"
                              : "");
  }
  pl.detail = DimsString(shape) + " -> " + DimsString(Concrete(ctx, ctx.tensor(op.outputs[0])));
  return {};
}

Status LowerReshape(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const ir::Tensor& x = ctx.tensor(op.inputs[0]);
  const ir::Tensor& y = ctx.tensor(op.outputs[0]);
  VKQC_TRY(CheckIndexable(ctx, i, op.inputs[0]));
  VKQC_TRY(CheckIndexable(ctx, i, op.outputs[0]));
  const int64_t total = x.NumElements(ctx.tokens());
  const bool int8 = x.dtype == ir::DType::I8;
  const bool same = SameDeviceBytes(x, y);
  if (!int8 || same) {
    // The same bytes: a copy only because the output needs its own buffer.
    linear::DispatchParams d = int8 ? ReshapeI8Dispatch(total, ctx.Dim(x.shape.back()), ctx.Dim(y.shape.back()),
                                                        ctx.profile())
                                    : CopyF32Dispatch(uint64_t(total), ctx.profile());
    ctx.Dispatch(d, {ctx.Read(op.inputs[0]), ctx.Write(op.outputs[0])});
    pl.variant = int8 ? "reshape_i8_copy" : "reshape_f32_copy";
    pl.reason = "the device bytes are unchanged, but '" + y.name + "' " +
                (ctx.graph().IsOutput(op.outputs[0]) ? "is a graph output, which has its own buffer"
                                                           : "needs its own buffer") +
                ": one copy";
  } else {
    ctx.Dispatch(ReshapeI8Dispatch(total, ctx.Dim(x.shape.back()), ctx.Dim(y.shape.back()), ctx.profile()),
                 {ctx.Read(op.inputs[0]), ctx.Write(op.outputs[0])});
    pl.variant = "reshape_i8_repad";
    pl.reason = "int8 rows of " + std::to_string(ctx.Dim(x.shape.back())) + " values become rows of " +
                std::to_string(ctx.Dim(y.shape.back())) + " (each padded to " +
                std::to_string(linear::PackedK4(ctx.Dim(y.shape.back())) * 4) + " bytes): one copy";
  }
  pl.detail = DimsString(Concrete(ctx, x)) + " -> " + DimsString(Concrete(ctx, y)) + ", " + std::to_string(total) +
              " values";
  return {};
}

Status Lower(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  return ctx.op(i).type == ir::OpType::Transpose ? LowerTranspose(ctx, i, pl) : LowerReshape(ctx, i, pl);
}

}  // namespace

const kernels::Family& Lowering() {
  static const kernels::Family f{"layout", {ir::OpType::Transpose, ir::OpType::Reshape}, nullptr, Lower};
  return f;
}

}  // namespace vkqc::layout
