// conv2d lowering: the per-profile algorithm (select.cc) is chosen once at packing time (it does
// not depend on the batch), the weights packed for it, and per program the dispatches emitted:
// direct, depthwise, or (im2col +) the linear family's GEMM/GEMV. Weight-only convolutions (f32
// input, no activation quantization) run dense layers as f32 im2col + the linear family's float
// GEMM/GEMV (weights dequantized in the shader) and grouped/depthwise ones on the direct kernel's
// f32 variant.
#include <sstream>

#include "compiler/emit/bundle_plan.h"
#include "compiler/kernels/conv/lower.h"
#include "compiler/kernels/linear/lower.h"
#include "compiler/passes/fuse_rows.h"

namespace vkqc::conv {
namespace {

using kernels::Bind;
using kernels::QScale;
using kernels::QZero;

// f32 input without q8ta: the weight-only function (DESIGN 4).
bool WeightOnly(const ir::Graph& g, const ir::Op& op) {
  return g.tensors[op.inputs[0]].dtype == ir::DType::F32 && op.conv2d.input_quant.scheme != ir::Scheme::Q8TA;
}

// An int8 add's parameters with the convolution's output `y` as operand b (the kernels add the
// two dequantized operands in fp32, which commutes exactly).
AddParams ConvOperandB(const ir::Graph& g, const ir::Op& add, int y) {
  AddParams p = Int8AddParams(g, add);
  if (add.inputs[0] == y) {
    std::swap(p.scale_a, p.scale_b);
    std::swap(p.zero_point_a, p.zero_point_b);
  }
  return p;
}

// The rows kernel's bindings with a fused add: x, w, the sum, the add's other operand and, when
// intermediates are kept, the convolution's own output.
std::vector<Bind> RowsBinds(kernels::LowerContext& ctx, Bind x, Bind w, const ir::Op& conv, const ir::Op& add,
                            bool keep) {
  const int y = conv.outputs[0], other = add.inputs[0] == y ? add.inputs[1] : add.inputs[0];
  std::vector<Bind> b{x, w, ctx.Write(add.outputs[0]), ctx.Read(other)};
  if (keep) b.push_back(ctx.Write(y));
  return b;
}

// --force-kernel gemm|gemv and --force-accum cm keep convolutions on the linear family's kernels.
ConvSelectOptions RowsOptions(const CompileOptions& o) {
  ConvSelectOptions c = o.conv;
  if (!c.rows && (o.select.force_algo || o.select.force_accum == linear::Accum::CoopMat)) c.rows = false;
  return c;
}

struct Packed {
  ConvChoice choice;
  linear::PackedLinear gemm;  // Im2col / Pointwise
  PackedDepthwise depthwise;
  PackedDirect direct;
};

Status Pack(kernels::PackContext& ctx, size_t i) {
  const ir::Op& op = ctx.op(i);
  const ir::Tensor& x = ctx.tensor(op.inputs[0]);
  const ir::Tensor& w = ctx.tensor(op.inputs[1]);
  const int64_t cout = w.shape[0], kh = w.shape[1], kw = w.shape[2], cin = x.shape[3];
  const float* bias =
      op.inputs.size() > 2 ? reinterpret_cast<const float*>(ctx.tensor(op.inputs[2]).data->data()) : nullptr;
  const int8_t* wq = reinterpret_cast<const int8_t*>(w.data->data());
  const int32_t groups = op.conv2d.groups;
  auto p = std::make_shared<Packed>();
  p->choice = SelectConv(Geometry(ctx.graph(), op, 1), cout, groups, ctx.profile(), ctx.options().conv);
  if (WeightOnly(ctx.graph(), op)) {
    if (p->choice.algo == ConvAlgo::Direct && groups == 1) {  // forced or by the profile's rule: GEMM
      p->choice.algo = ConvAlgo::Im2col;
      p->choice.reason = "weight-only: f32 im2col, then GEMM; ";
    } else if (p->choice.algo == ConvAlgo::Depthwise) {
      p->choice.algo = ConvAlgo::Direct;
      p->choice.reason = "depthwise, weight-only: direct kernel, fp32 accumulation";
    } else if (p->choice.algo == ConvAlgo::Direct) {
      p->choice.reason = "groups=" + std::to_string(groups) + ", weight-only: direct kernel, fp32 accumulation";
    }
  }
  if (p->choice.algo == ConvAlgo::Depthwise) {
    p->depthwise = PackDepthwise(wq, cout, kh, kw, w.quant->scales.data(), bias);
    VKQC_TRY(ctx.AddConstants(i, p->depthwise.region));
  } else if (p->choice.algo == ConvAlgo::Direct) {
    p->direct = PackDirect(wq, cout, kh * kw * (cin / groups), w.quant->scales.data(), bias);
    VKQC_TRY(ctx.AddConstants(i, p->direct.region));
  } else {  // a GEMM weight [Cout][KH*KW*Cin]: the IR's bytes in the order im2col writes K
    p->gemm = linear::PackLinear(ir::Scheme::Q8CSW, w.data->data(), cout, kh * kw * cin, 0,
                                 w.quant->scales.data(), nullptr, bias);
    VKQC_TRY(ctx.AddConstants(i, p->gemm.region));
  }
  ctx.Keep(i, p);
  return {};
}

uint32_t ConvFlags(const ir::Op& op) {
  return (op.inputs.size() > 2 ? linear::kFlagBias : 0) |
         (op.conv2d.activation == ir::Activation::Relu ? linear::kFlagRelu : 0) |
         (op.conv2d.activation == ir::Activation::Relu6 ? linear::kFlagRelu6 : 0);
}

// The int8 depthwise convolution `d` that a pointwise layer computes (passes/fuse_rows.cc).
DepthwiseInput DepthwiseOf(kernels::LowerContext& ctx, size_t d) {
  const ir::Op& op = ctx.op(d);
  DepthwiseInput in;
  in.geometry = Geometry(ctx.graph(), op, ctx.tokens());
  in.packed = &ctx.KeptAs<Packed>(d).depthwise;
  const ir::Tensor& x = ctx.tensor(op.inputs[0]);
  in.consts.act_scale = QScale(*x.quant);
  in.consts.act_zero_point = QZero(*x.quant);
  in.consts.out_scale = QScale(op.conv2d.output_quant);
  in.consts.out_zero_point = QZero(op.conv2d.output_quant);
  in.flags = ConvFlags(op);
  return in;
}

Status Lower(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const ir::Tensor& xt = ctx.tensor(op.inputs[0]);
  const ir::Tensor& wt = ctx.tensor(op.inputs[1]);
  const ir::Conv2dAttrs& a = op.conv2d;
  const ConvGeometry geo = Geometry(ctx.graph(), op, ctx.tokens());
  const int64_t cout = wt.shape[0];
  const Packed& c = ctx.KeptAs<Packed>(i);
  linear::LinearConsts lc;
  const bool out_q8 = a.output_quant.scheme == ir::Scheme::Q8TO;
  if (out_q8) {
    lc.out_scale = QScale(a.output_quant);
    lc.out_zero_point = QZero(a.output_quant);
  }
  // int8 input rows: the tensor itself, or this layer's (shared) quantization of it.
  Bind x = ctx.Read(op.inputs[0]);
  std::string quant_note;
  bool quantize_in_im2col = false;
  if (xt.dtype == ir::DType::I8) {
    lc.act_scale = QScale(*xt.quant);
    lc.act_zero_point = QZero(*xt.quant);
  } else if (a.input_quant.scheme == ir::Scheme::Q8TA) {
    lc.act_scale = QScale(a.input_quant);
    lc.act_zero_point = QZero(a.input_quant);
    // Through im2col the taps are quantized as they are gathered; otherwise the packed rows first.
    quantize_in_im2col = c.choice.algo == ConvAlgo::Im2col && !geo.pointwise();
    if (quantize_in_im2col)
      quant_note = "; its im2col quantizes the float input (q8ta)";
    else
      x = ctx.QuantizeShared(op.inputs[0], ir::Scheme::Q8TA, lc.act_scale, lc.act_zero_point,
                             geo.n * geo.h * geo.w, geo.c, &quant_note).rows;
  }
  const bool weight_only = WeightOnly(ctx.graph(), op);
  const bool bias = op.inputs.size() > 2;
  const uint32_t flags = ConvFlags(op);
  std::ostringstream det;
  det << geo.kh << "x" << geo.kw << " stride " << geo.sh << "x" << geo.sw << " dilation " << geo.dh << "x" << geo.dw
      << ", " << geo.rows() << " output pixels";
  const Bind w = ctx.Constants(i), y = ctx.Write(op.outputs[0]);
  // The int8 add that reads this layer's output (passes/fuse_rows.cc), computed by this layer.
  const int add = ctx.fuse().conv_add[i];
  const bool keep = ctx.options().keep_intermediates;
  AddParams add_params;
  bool fused_in_kernel = false;
  if (add >= 0) add_params = ConvOperandB(ctx.graph(), ctx.op(size_t(add)), op.outputs[0]);
  // The depthwise convolution this pointwise layer reads, computed by this layer.
  const int dwi = ctx.fuse().conv_dw[i];
  DepthwiseInput dw = dwi >= 0 ? DepthwiseOf(ctx, size_t(dwi)) : DepthwiseInput{};
  bool dw_in_kernel = false;
  // The pointwise convolution that reads this layer's output (or its add's sum), computed by this layer.
  const int next = ctx.fuse().conv_next[i];
  ChainInput chain;
  bool chain_ready = false, chain_in_kernel = false;
  std::string chain_apart = "the depthwise convolution is not in the kernel";
  // The global average pool that reads this layer's output, computed by this layer.
  const int pool = ctx.fuse().conv_pool[i];
  PoolInput pin;
  const std::string in_name = weight_only ? "f32" : "q8ta";
  if (c.choice.algo == ConvAlgo::Direct) {
    ctx.Dispatch(DirectDispatch(geo, cout, a.groups, c.direct, out_q8, lc, flags, ctx.profile(), weight_only),
                 {x, w, y});
    const bool dw = a.groups > 1 && a.groups == geo.c && a.groups == cout;
    pl.variant = std::string(dw ? "conv2d_dw_" : a.groups > 1 ? "conv2d_grouped_" : "conv2d_") + in_name +
                 "_q8csw" + (out_q8 ? "_q8to" : "") + "_direct";
    pl.reason = c.choice.reason + quant_note;
  } else if (c.choice.algo == ConvAlgo::Depthwise) {
    ctx.Dispatch(DepthwiseDispatch(geo, c.depthwise, out_q8, lc, flags, ctx.profile()), {x, w, y});
    pl.variant = std::string("conv2d_dw_q8ta_q8csw") + (out_q8 ? "_q8to" : "") + "_direct";
    pl.reason = c.choice.reason + quant_note;
  } else {
    RowsChoice rows;
    if (!weight_only) rows = SelectConvRows(geo.rows(), geo.k(), cout, ctx.profile(), RowsOptions(ctx.options()));
    GatherInput gather;
    if (!weight_only) gather = SelectGather(geo, cout, rows, ctx.profile());
    gather.quantize = quantize_in_im2col;
    Bind cols = x;
    if (gather.use) {
      if (quantize_in_im2col) quant_note = "; the kernel quantizes the float input (q8ta) as it gathers it";
    } else if (!geo.pointwise() && weight_only) {
      cols = ctx.Scratch(uint64_t(geo.rows()) * uint64_t(geo.k()) * 4, op.name + ".im2col");
      ctx.Dispatch(Im2colF32Dispatch(geo, ctx.profile()), {x, cols});
      cols = cols.AsRead();
    } else if (!geo.pointwise()) {
      cols = ctx.Scratch(uint64_t(geo.rows()) * linear::PackedK4(geo.k()) * 4, op.name + ".im2col");
      ctx.Dispatch(Im2colDispatch(geo, lc.act_zero_point, ctx.profile(), quantize_in_im2col ? &lc.act_scale : nullptr),
                   {x, cols});
      cols = cols.AsRead();
    }
    linear::LinearShape shape;
    shape.m = geo.rows();
    shape.k = geo.k();
    shape.n = cout;
    shape.x_int8 = !weight_only;
    shape.act = weight_only ? ir::Scheme::Float : ir::Scheme::Q8TA;
    shape.weights = ir::Scheme::Q8CSW;
    shape.has_bias = bias;
    shape.relu = a.activation == ir::Activation::Relu;
    shape.relu6 = a.activation == ir::Activation::Relu6;
    shape.out_q8 = out_q8;
    shape.conv = true;
    auto choice = linear::SelectLinear(shape, ctx.profile(), ctx.options().select);
    if (!choice.ok()) return Error{choice.error().kind, ctx.OpLabel(i) + ": " + choice.error().message};
    const std::string kind = std::string(geo.pointwise() ? "pointwise" : "im2col") + "_";
    const uint32_t buffers = ctx.profile().max_per_stage_descriptor_storage_buffers;
    if (rows.use) {
      fused_in_kernel = add >= 0 && out_q8 && add_params.zero_point_b == lc.out_zero_point &&
                        (!keep || buffers >= 5);
      // The chained convolution's parameters, and whether it could run in the kernel apart from
      // the workgroup's shape (that is chosen next).
      if (next >= 0) {
        const ir::Op& eo = ctx.op(size_t(next));
        const Packed& ep = ctx.KeptAs<Packed>(size_t(next));
        const ir::Tensor& et = ctx.tensor(eo.inputs[0]);
        chain.packed = &ep.gemm;
        chain.n = ctx.tensor(eo.inputs[1]).shape[0];
        chain.consts.act_scale = QScale(*et.quant);
        chain.consts.act_zero_point = QZero(*et.quant);
        chain.consts.out_scale = QScale(eo.conv2d.output_quant);
        chain.consts.out_zero_point = QZero(eo.conv2d.output_quant);
        chain.flags = ConvFlags(eo);
        if (eo.inputs[0] != (fused_in_kernel ? ctx.op(size_t(add)).outputs[0] : op.outputs[0]))
          chain_apart = "it reads the add's sum, which is a dispatch of its own";
        else if (ep.choice.algo != ConvAlgo::Pointwise)
          chain_apart = "its weights are not packed for the rows kernel";
        else if (buffers < 6u + (fused_in_kernel ? 1u : 0u))
          chain_apart = "the target's storage buffers per stage";
        else
          chain_ready = out_q8 && !keep;
      }
      // x, w, y, the depthwise weights (+ the add's other operand). Kept intermediates need the
      // depthwise output written, so it runs as a dispatch of its own then.
      if (dwi >= 0) {
        dw.choice = SelectDwpw(geo.k(), cout, ctx.profile());
        // A chained convolution needs every output word in the workgroup: fewer lanes where that
        // is what keeps them apart.
        if (chain_ready && dw.choice.use && dw.choice.words < uint32_t((cout + 3) / 4)) {
          const DwpwChoice whole = SelectDwpw(geo.k(), cout, ctx.profile(), kChainLaneUnits);
          std::string why;
          if (whole.use && CanChain(geo.k(), cout, whole, chain.n, ctx.profile(), &why)) dw.choice = whole;
        }
        dw_in_kernel = dw.choice.use && !keep && buffers >= 4u + (fused_in_kernel ? 1u : 0u);
      }
    }
    if (chain_ready && dw_in_kernel)
      chain_in_kernel = CanChain(geo.k(), cout, dw.choice, chain.n, ctx.profile(), &chain_apart);
    if (pool >= 0 && rows.use && out_q8 && !keep && !dw_in_kernel) {
      pin = SelectPool(geo.oh * geo.ow, geo.k(), cout, ctx.profile());
      const ir::Op& po = ctx.op(size_t(pool));
      pin.pool.scale_a = lc.out_scale;
      pin.pool.zero_point_a = lc.out_zero_point;
      pin.pool.out_scale = QScale(po.pool.output_quant);
      pin.pool.out_zero_point = QZero(po.pool.output_quant);
    }
    if (dwi >= 0 && !dw_in_kernel) {
      const DepthwiseInput& d = dw;
      ctx.Dispatch(DepthwiseDispatch(d.geometry, *d.packed, true, d.consts, d.flags, ctx.profile()),
                   {ctx.Read(ctx.op(size_t(dwi)).inputs[0]), ctx.Constants(size_t(dwi)), ctx.Write(op.inputs[0])});
    }
    if (rows.use) {
      const bool dot = choice->accum == linear::Accum::IntDot;
      const FusedAdd fa{add_params, keep};
      std::vector<Bind> binds = fused_in_kernel ? RowsBinds(ctx, cols, w, op, ctx.op(size_t(add)), keep)
                                                : std::vector<Bind>{cols, w, y};
      if (dw_in_kernel) {
        binds[0] = ctx.Read(ctx.op(size_t(dwi)).inputs[0]);
        binds.push_back(ctx.Constants(size_t(dwi)));
        if (chain_in_kernel) {
          binds.push_back(ctx.Constants(size_t(next)));
          binds.push_back(ctx.Write(ctx.op(size_t(next)).outputs[0]));
        }
      }
      if (pin.use) binds[2] = ctx.Write(ctx.op(size_t(pool)).outputs[0]);
      RowsLayer rl;
      rl.m = geo.rows();
      rl.k = geo.k();
      rl.n = cout;
      rl.rows = rows;
      rl.int_dot = dot;
      rl.out_q8 = out_q8;
      rl.packed = &c.gemm;
      rl.consts = lc;
      rl.flags = flags;
      rl.fused = fused_in_kernel ? &fa : nullptr;
      rl.dw = dw_in_kernel ? &dw : nullptr;
      rl.gather = gather.use ? &gather : nullptr;
      rl.pool = pin.use ? &pin : nullptr;
      rl.chain = chain_in_kernel ? &chain : nullptr;
      ctx.Dispatch(RowsDispatch(rl, ctx.profile()), binds);
      pl.variant = "conv2d_" + kind + "i8_q8csw" + (out_q8 ? "_q8to" : "") + (dot ? "_dot" : "_i32") + "_rows" +
                   (gather.use ? "_gather" : "") + (dw_in_kernel ? "_dw" : "") + (fused_in_kernel ? "_add" : "") +
                   (pin.use ? "_pool" : "") + (chain_in_kernel ? "_chain" : "");
      std::string algo = c.choice.reason;
      const std::string cols_note = "im2col into packed int8 rows, then GEMM";
      if (gather.use && algo.find(cols_note) != std::string::npos)
        algo.replace(algo.find(cols_note), cols_note.size(), "im2col rows gathered by the GEMM kernel");
      // The lanes and rows per invocation of the plain rows kernel do not apply to the other modes.
      std::string how = rows.reason;
      if (gather.use || pin.use) how = how.substr(0, how.find(", ")) + gather.reason;
      if (dw_in_kernel) how = dw.choice.reason;
      pl.reason = algo + how + (dot ? "; int8 dot product" : "; int8 products") + quant_note;
    } else {
      ctx.Dispatch(linear::LinearDispatch(shape, *choice, c.gemm, lc, ctx.profile()), {cols, w, y});
      const std::string v = choice->VariantName(shape);  // linear_i8_q8csw_..._gemm / linear_f32_...
      pl.variant = "conv2d_" + kind + (weight_only ? "f32_" : "") + v.substr(7);
      pl.reason = c.choice.reason + rows.reason + choice->reason + quant_note;
    }
  }
  if (dwi >= 0) {
    std::string apart = "intermediates kept";
    if (!keep)
      apart = !dw.choice.use && !dw.choice.reason.empty() ? dw.choice.reason
              : dw.choice.use ? "the target's storage buffers per stage"
                              : "the linear family's GEMM";
    pl.reason += std::string("; computes the depthwise convolution '") + ctx.op(size_t(dwi)).name + "' it reads" +
                 (dw_in_kernel ? " in the same dispatch" : " (a first dispatch of this layer: " + apart + ")");
    // Its weights and work are this layer's now (its own layer has no commands).
    const ConvGeometry& dg = dw.geometry;
    pl.weight_bytes += ctx.ConstantBytes(size_t(dwi));
    pl.flops += 2ull * dg.rows() * dg.c * dg.kh * dg.kw;
  }
  if (pool >= 0) {
    const ir::Op& po = ctx.op(size_t(pool));
    if (pin.use) {
      pl.reason += pin.reason;
    } else {
      const ir::Tensor& yt = ctx.tensor(op.outputs[0]);
      ctx.Dispatch(PoolDispatch(Geometry(ctx.graph(), po, ctx.tokens()), true, QScale(*yt.quant), QZero(*yt.quant),
                                QScale(po.pool.output_quant), QZero(po.pool.output_quant), ctx.profile()),
                   {ctx.Read(op.outputs[0]), ctx.Write(po.outputs[0])});
      pl.reason += std::string("; computes the global average pool '") + po.name +
                   "' that reads its output (a second dispatch of this layer: " +
                   (keep ? "intermediates kept" : dw_in_kernel ? "the depthwise convolution is in the kernel"
                                                               : "the linear family's GEMM") + ")";
    }
  }
  if (add >= 0) {
    const ir::Op& ao = ctx.op(size_t(add));
    if (!fused_in_kernel)
      ctx.Dispatch(AddDispatch(geo.rows(), cout, true, Int8AddParams(ctx.graph(), ao), ctx.profile()),
                   {ctx.Read(ao.inputs[0]), ctx.Read(ao.inputs[1]), ctx.Write(ao.outputs[0])});
    pl.reason += std::string("; computes the add '") + ao.name + "' that reads its output" +
                 (fused_in_kernel ? " in the same dispatch" : " (a second dispatch of this layer)");
  }
  if (next >= 0) {
    const ir::Op& eo = ctx.op(size_t(next));
    std::string note = std::string("; computes the pointwise convolution '") + eo.name + "' that reads its output";
    if (chain_in_kernel) {
      pl.reason += note + " in the same dispatch (its rows in shared memory, " + std::to_string(chain.n) +
                   " output channels of the workgroup's pixels from there)";
      pl.weight_bytes += ctx.ConstantBytes(size_t(next));
      pl.flops += 2ull * geo.rows() * uint64_t(chain.n) * uint64_t(cout);
    } else {  // its own lowering, as a further dispatch of this layer
      PlanLayer el;
      VKQC_TRY(Lower(ctx, size_t(next), el));
      pl.reason += note + " (a further dispatch of this layer, " + el.variant + ": " + chain_apart + ")";
      pl.weight_bytes += el.weight_bytes;
      pl.flops += el.flops;
    }
  }
  pl.integer_path = !weight_only;
  pl.detail = det.str();
  pl.weight_bytes += ctx.ConstantBytes(i);
  pl.flops += 2ull * geo.rows() * cout * geo.kh * geo.kw * (geo.c / a.groups);
  return {};
}

}  // namespace

ConvGeometry Geometry(const ir::Graph& g, const ir::Op& op, int64_t tokens) {
  const ir::Tensor& xt = g.tensors[op.inputs[0]];
  ConvGeometry geo;
  geo.n = xt.shape[0] == ir::kSymbolicDim ? tokens : xt.shape[0];
  geo.h = xt.shape[1];
  geo.w = xt.shape[2];
  geo.c = xt.shape[3];
  auto window = [&](const int32_t (&stride)[2], const int32_t (&padding)[4]) {
    geo.sh = stride[0];
    geo.sw = stride[1];
    geo.pt = padding[0];
    geo.pl = padding[1];
    geo.pb = padding[2];
    geo.pr = padding[3];
  };
  if (op.type == ir::OpType::AvgPool2d || op.type == ir::OpType::MaxPool2d) {
    const ir::Pool2dAttrs& a = op.pool;
    if (a.global) {
      geo.kh = geo.h;
      geo.kw = geo.w;
      geo.oh = geo.ow = 1;
      return geo;
    }
    geo.kh = a.kernel[0];
    geo.kw = a.kernel[1];
    window(a.stride, a.padding);
    geo.oh = (geo.h + geo.pt + geo.pb - geo.kh) / geo.sh + 1;
    geo.ow = (geo.w + geo.pl + geo.pr - geo.kw) / geo.sw + 1;
    return geo;
  }
  const ir::Tensor& wt = g.tensors[op.inputs[1]];
  const ir::Tensor& yt = g.tensors[op.outputs[0]];
  const ir::Conv2dAttrs& a = op.conv2d;
  geo.kh = wt.shape[1];
  geo.kw = wt.shape[2];
  window(a.stride, a.padding);
  geo.dh = a.dilation[0];
  geo.dw = a.dilation[1];
  geo.oh = yt.shape[1];
  geo.ow = yt.shape[2];
  return geo;
}

const kernels::Family& Lowering() {
  static const kernels::Family f{"conv", {ir::OpType::Conv2d}, Pack, Lower};
  return f;
}

}  // namespace vkqc::conv
