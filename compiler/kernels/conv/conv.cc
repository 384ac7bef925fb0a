#include "compiler/kernels/conv/conv.h"
#include "compiler/kernels/conv/lower.h"
#include "compiler/kernels/lowering.h"

#include <algorithm>
#include <cstring>

namespace vkqc::conv {

uint32_t Workgroup(const TargetProfile& p) { return std::min<uint32_t>(128, p.max_compute_work_group_invocations); }

namespace {


void Grid(uint64_t invocations, const TargetProfile& p, linear::DispatchParams& d) {
  const uint32_t local = d.local_size[0];
  linear::SplitGroups((invocations + local - 1) / local, p.max_compute_work_group_count[0], d.group_count);
  d.group_count[2] = 1;
}

void Geometry(const ConvGeometry& g, std::vector<linear::SpecValue>& spec) {
  const uint32_t v[] = {uint32_t(g.rows()), uint32_t(g.h), uint32_t(g.w), uint32_t(g.c), linear::PackedK4(g.c),
                        uint32_t(g.kh), uint32_t(g.kw), uint32_t(g.sh), uint32_t(g.sw), uint32_t(g.pt),
                        uint32_t(g.pl), uint32_t(g.dh), uint32_t(g.dw), uint32_t(g.oh), uint32_t(g.ow)};
  for (uint32_t i = 0; i < 15; ++i) spec.push_back({i + 1, v[i]});
}

template <typename T>
std::vector<uint8_t> Bytes(const T& v) {
  std::vector<uint8_t> b(sizeof(T));
  std::memcpy(b.data(), &v, sizeof(T));
  return b;
}

}  // namespace

linear::DispatchParams Im2colDispatch(const ConvGeometry& g, int32_t zp, const TargetProfile& p,
                                      const float* quantize_scale) {
  linear::DispatchParams d;
  d.shader = {"im2col_i8.comp", {}};
  if (quantize_scale) d.shader.defines.push_back("VKQC_IM2COL_Q");
  d.local_size[0] = Workgroup(p);
  d.local_size[1] = d.local_size[2] = 1;
  d.spec = {{0, d.local_size[0]}};
  Geometry(g, d.spec);
  d.spec.push_back({16, linear::PackedK4(g.k())});
  Grid(uint64_t(g.rows()) * linear::PackedK4(g.k()), p, d);
  d.push = Bytes(zp);
  if (quantize_scale) {
    const float inv = 1.0f / *quantize_scale;  // as QuantizeDispatch: DESIGN 4's inv_scale
    d.push.resize(8);
    std::memcpy(d.push.data() + 4, &inv, 4);
  }
  return d;
}

linear::DispatchParams Im2colF32Dispatch(const ConvGeometry& g, const TargetProfile& p) {
  linear::DispatchParams d;
  d.shader = {"im2col_i8.comp", {"VKQC_IM2COL_F32"}};
  d.local_size[0] = Workgroup(p);
  d.local_size[1] = d.local_size[2] = 1;
  d.spec = {{0, d.local_size[0]}};
  Geometry(g, d.spec);
  Grid(uint64_t(g.rows()) * uint64_t(g.k()), p, d);
  return d;
}

PackedDepthwise PackDepthwise(const int8_t* w, int64_t c, int64_t kh, int64_t kw, const float* scales,
                              const float* bias) {
  PackedDepthwise pk;
  pk.cw = uint32_t((c + 3) / 4);
  const uint32_t taps = uint32_t(kh * kw);
  pk.scale_off = taps * pk.cw;
  pk.bias_off = pk.scale_off + uint32_t(c);
  pk.region.assign(size_t(pk.bias_off + c) * 4, 0);
  for (int64_t ch = 0; ch < c; ++ch) {
    for (uint32_t t = 0; t < taps; ++t) pk.region[(size_t(t) * pk.cw) * 4 + size_t(ch)] = uint8_t(w[ch * taps + t]);
    std::memcpy(pk.region.data() + (pk.scale_off + ch) * 4, &scales[ch], 4);
    const float b = bias ? bias[ch] : 0.0f;
    std::memcpy(pk.region.data() + (pk.bias_off + ch) * 4, &b, 4);
  }
  return pk;
}

linear::DispatchParams DepthwiseDispatch(const ConvGeometry& g, const PackedDepthwise& pk, bool out_q8,
                                         const linear::LinearConsts& k, uint32_t flags, const TargetProfile& p) {
  linear::DispatchParams d;
  d.shader = {"dwconv_i8.comp", {}};
  if (out_q8) d.shader.defines.push_back("VKQC_OUT_Q8");
  d.local_size[0] = Workgroup(p);
  d.local_size[1] = d.local_size[2] = 1;
  d.spec = {{0, d.local_size[0]}};
  Geometry(g, d.spec);
  d.spec.push_back({16, pk.cw});
  d.spec.push_back({17, pk.scale_off});
  d.spec.push_back({18, pk.bias_off});
  d.spec.push_back({19, linear::PackedK4(g.c)});
  Grid(uint64_t(g.rows()) * pk.cw, p, d);
  linear::LinearPush push{k.act_scale, k.act_zero_point, flags, 1.0f / k.out_scale, k.out_zero_point, {0, 0, 0}};
  d.push = Bytes(push);
  return d;
}

PackedDirect PackDirect(const int8_t* w, int64_t cout, int64_t per_channel, const float* scales, const float* bias) {
  PackedDirect pk;
  pk.rw = uint32_t((per_channel + 3) / 4);
  pk.scale_off = uint32_t(cout) * pk.rw;
  pk.bias_off = pk.scale_off + uint32_t(cout);
  pk.region.assign(size_t(pk.bias_off + cout) * 4, 0);
  for (int64_t co = 0; co < cout; ++co) {
    std::memcpy(pk.region.data() + size_t(co) * pk.rw * 4, w + co * per_channel, size_t(per_channel));
    std::memcpy(pk.region.data() + (pk.scale_off + co) * 4, &scales[co], 4);
    const float b = bias ? bias[co] : 0.0f;
    std::memcpy(pk.region.data() + (pk.bias_off + co) * 4, &b, 4);
  }
  return pk;
}

linear::DispatchParams DirectDispatch(const ConvGeometry& g, int64_t cout, int64_t groups, const PackedDirect& pk,
                                      bool out_q8, const linear::LinearConsts& k, uint32_t flags,
                                      const TargetProfile& p, bool x_f32) {
  linear::DispatchParams d;
  d.shader = {"conv_direct_i8.comp", {}};
  if (out_q8) d.shader.defines.push_back("VKQC_OUT_Q8");
  if (x_f32) d.shader.defines.push_back("VKQC_X_F32");
  d.local_size[0] = Workgroup(p);
  d.local_size[1] = d.local_size[2] = 1;
  d.spec = {{0, d.local_size[0]}};
  Geometry(g, d.spec);
  d.spec.push_back({16, uint32_t(cout)});
  d.spec.push_back({17, uint32_t(g.c / groups)});
  d.spec.push_back({18, uint32_t(cout / groups)});
  d.spec.push_back({19, pk.rw});
  d.spec.push_back({20, pk.scale_off});
  d.spec.push_back({21, pk.bias_off});
  d.spec.push_back({22, linear::PackedK4(cout)});
  Grid(uint64_t(g.rows()) * uint64_t((cout + 3) / 4), p, d);
  linear::LinearPush push{k.act_scale, k.act_zero_point, flags, 1.0f / k.out_scale, k.out_zero_point, {0, 0, 0}};
  d.push = Bytes(push);
  return d;
}

linear::DispatchParams RowsDispatch(const RowsLayer& l, const TargetProfile& p) {
  const int64_t m = l.m, k = l.k, n = l.n;
  const DepthwiseInput* dw = l.dw;
  const GatherInput* gather = l.gather;
  const PoolInput* pool = l.pool;
  const linear::PackedLinear& pk = *l.packed;
  linear::DispatchParams d;
  d.shader = {"conv_rows_i8.comp", {}};
  if (dw) d.shader.defines.push_back("VKQC_DWPW");
  if (dw && l.chain) d.shader.defines.push_back("VKQC_CHAIN");
  if (gather) d.shader.defines.push_back("VKQC_GATHER");
  if (gather && gather->quantize) d.shader.defines.push_back("VKQC_GATHER_F32");
  if (pool) d.shader.defines.push_back("VKQC_POOL");
  if (l.int_dot) d.shader.defines.push_back("VKQC_INT_DOT");
  if (l.out_q8) d.shader.defines.push_back("VKQC_OUT_Q8");
  if (l.fused) d.shader.defines.push_back("VKQC_RESIDUAL");
  if (l.fused && l.fused->keep_conv_output) d.shader.defines.push_back("VKQC_KEEP");
  const uint32_t lanes = dw ? dw->choice.lanes : pool ? pool->lanes : gather ? 1 : l.rows.lanes;
  const uint32_t rpt = dw || gather || pool ? 1 : l.rows.rows_per_invocation;
  if (rpt > 1) d.shader.defines.push_back("VKQC_RPT=" + std::to_string(rpt));
  d.local_size[0] = dw ? dw->choice.workgroup : Workgroup(p);
  d.local_size[1] = d.local_size[2] = 1;
  const uint32_t red = lanes > 1 || pool ? d.local_size[0] : 1;
  d.spec = {{0, d.local_size[0]}, {1, uint32_t(m)},           {2, uint32_t(n)},
            {3, uint32_t((k + 15) / 16)}, {4, linear::PackedK4(k)}, {5, pk.kw},
            {6, pk.scale_off},    {7, pk.wsum_off},           {8, pk.bias_off},
            {9, linear::PackedK4(n)}, {10, lanes},             {11, red}};
  d.shared_memory_bytes = red * 16;
  const uint64_t words = (uint64_t(n) + 3) / 4;
  if (dw) {
    const ConvGeometry& g = dw->geometry;
    const uint32_t px = dw->choice.pixels, units = uint32_t((k + 15) / 16);
    const uint32_t v[] = {uint32_t(g.h),  uint32_t(g.w),  linear::PackedK4(g.c), uint32_t(g.kh), uint32_t(g.kw),
                          uint32_t(g.sh), uint32_t(g.sw), uint32_t(g.pt),        uint32_t(g.pl), uint32_t(g.dh),
                          uint32_t(g.dw), uint32_t(g.oh), uint32_t(g.ow),        dw->packed->cw, dw->packed->scale_off,
                          dw->packed->bias_off, uint32_t(g.c), px, px * units, dw->choice.words};
    for (uint32_t i = 0; i < 20; ++i) d.spec.push_back({12 + i, v[i]});
    d.shared_memory_bytes += px * units * 16;
    if (const ChainInput* e = l.chain) {
      const linear::PackedLinear& ep = *e->packed;
      const uint32_t eunits = uint32_t((n + 15) / 16);  // its K is this layer's N
      const uint32_t v2[] = {uint32_t(e->n), eunits, ep.kw, ep.scale_off, ep.wsum_off, ep.bias_off,
                             linear::PackedK4(e->n), px * eunits};
      for (uint32_t i = 0; i < 8; ++i) d.spec.push_back({32 + i, v2[i]});
      d.shared_memory_bytes += px * eunits * 16;
    }
    const uint64_t slices = (words + dw->choice.words - 1) / dw->choice.words;
    linear::SplitGroups((uint64_t(m) + px - 1) / px * slices, p.max_compute_work_group_count[0], d.group_count);
    d.group_count[2] = 1;
  } else if (pool) {
    d.spec.push_back({12, uint32_t(pool->pixels)});
    d.spec.push_back({13, pool->words});
    d.spec.push_back({14, pool->slots});
    linear::SplitGroups(uint64_t(m / pool->pixels) * ((words + pool->words - 1) / pool->words),
                        p.max_compute_work_group_count[0], d.group_count);
    d.group_count[2] = 1;
  } else if (gather) {
    const ConvGeometry& g = gather->geometry;
    const uint32_t v[] = {uint32_t(g.h),  uint32_t(g.w),  uint32_t(g.c),  linear::PackedK4(g.c), uint32_t(g.kh),
                          uint32_t(g.kw), uint32_t(g.sh), uint32_t(g.sw), uint32_t(g.pt),        uint32_t(g.pl),
                          uint32_t(g.dh), uint32_t(g.dw), uint32_t(g.oh), uint32_t(g.ow),        gather->words};
    for (uint32_t i = 0; i < 15; ++i) d.spec.push_back({12 + i, v[i]});
    Grid(uint64_t(m) * ((words + gather->words - 1) / gather->words), p, d);
  } else {
    Grid(uint64_t((m + rpt - 1) / rpt) * words * lanes, p, d);
  }
  const linear::LinearConsts& lc = l.consts;
  struct {
    float act_scale;
    int32_t act_zero_point;
    uint32_t flags;
    float out_inv_scale;
    int32_t out_zero_point;
    float out_scale, res_scale;
    int32_t res_zero_point;
    float sum_inv_scale;
    int32_t sum_zero_point;
    uint32_t sum_flags;
    float in_inv_scale;
    float dw_act_scale;
    int32_t dw_act_zero_point;
    uint32_t dw_flags;
    float dw_out_inv_scale;
    int32_t dw_out_zero_point;
    float e_act_scale;
    int32_t e_act_zero_point;
    uint32_t e_flags;
    float e_out_inv_scale;
    int32_t e_out_zero_point;
    uint32_t reserved1[2];
  } push{lc.act_scale, lc.act_zero_point, l.flags, 1.0f / lc.out_scale, lc.out_zero_point, 1, 1, 0, 1, 0, 0, 1,
         1,            0,                 0,       1,                    0,                1, 0, 0, 1, 0, {0, 0}};
  static_assert(sizeof(push) == 96);
  if (gather && gather->quantize) push.in_inv_scale = 1.0f / lc.act_scale;  // as Im2colDispatch
  if (pool) {  // as PoolDispatch
    push.out_scale = pool->pool.scale_a;
    push.sum_inv_scale = 1.0f / pool->pool.out_scale;
    push.sum_zero_point = pool->pool.out_zero_point;
  }
  if (dw) {
    push.dw_act_scale = dw->consts.act_scale;
    push.dw_act_zero_point = dw->consts.act_zero_point;
    push.dw_flags = dw->flags;
    push.dw_out_inv_scale = 1.0f / dw->consts.out_scale;
    push.dw_out_zero_point = dw->consts.out_zero_point;
  }
  if (dw && l.chain) {
    const linear::LinearConsts& ec = l.chain->consts;
    push.e_act_scale = ec.act_scale;
    push.e_act_zero_point = ec.act_zero_point;
    push.e_flags = l.chain->flags;
    push.e_out_inv_scale = 1.0f / ec.out_scale;
    push.e_out_zero_point = ec.out_zero_point;
  }
  if (const FusedAdd* fused = l.fused) {
    push.out_scale = fused->add.scale_b;
    push.res_scale = fused->add.scale_a;
    push.res_zero_point = fused->add.zero_point_a;
    push.sum_inv_scale = 1.0f / fused->add.out_scale;
    push.sum_zero_point = fused->add.out_zero_point;
    push.sum_flags = fused->add.flags;
  }
  d.push = Bytes(push);
  return d;
}

linear::DispatchParams DequantizeDispatch(int64_t m, int64_t k, bool per_row, float scale, int32_t zp,
                                          const TargetProfile& p) {
  linear::DispatchParams d;
  d.shader = {"dequantize_i8.comp", {}};
  if (per_row) d.shader.defines.push_back("VKQC_ACT_ROW");
  d.local_size[0] = Workgroup(p);
  d.local_size[1] = d.local_size[2] = 1;
  d.spec = {{0, d.local_size[0]}, {1, uint32_t(m)}, {2, uint32_t(k)}, {3, linear::PackedK4(k)}};
  Grid(uint64_t(m) * k, p, d);
  if (!per_row) d.push = Bytes(linear::QuantizePush{scale, zp});  // per-row: from the params buffer
  return d;
}

std::vector<uint8_t> PackConvertParams(const ir::Quant& q) {
  const size_t ch = q.scales.size();
  std::vector<uint8_t> region(ch * 12);
  for (size_t c = 0; c < ch; ++c) {
    const float s = q.scales[c], inv = 1.0f / s;  // DESIGN 4: inv_scale computed once in fp32
    const int32_t zp = q.zero_points.empty() ? 0 : q.zero_points[c];
    std::memcpy(region.data() + c * 4, &s, 4);
    std::memcpy(region.data() + (ch + c) * 4, &inv, 4);
    std::memcpy(region.data() + (2 * ch + c) * 4, &zp, 4);
  }
  return region;
}

linear::DispatchParams ConvertDispatch(ir::DType src, ir::DType dst, int64_t count, int64_t k, int64_t inner,
                                       int64_t channels, bool row_params, const TargetProfile& p) {
  auto tag = [](ir::DType t) -> std::string {
    switch (t) {
      case ir::DType::F16: return "F16";
      case ir::DType::I8: return "I8";
      case ir::DType::I32: return "I32";
      default: return "F32";
    }
  };
  linear::DispatchParams d;
  d.shader = {"convert.comp", {"VKQC_SRC_" + tag(src), "VKQC_DST_" + tag(dst)}};
  if (row_params) d.shader.defines.push_back("VKQC_ROW_PARAMS");
  if (src == ir::DType::I8 && dst == ir::DType::I8) d.shader.defines.push_back("VKQC_REQUANT");
  d.local_size[0] = Workgroup(p);
  d.local_size[1] = d.local_size[2] = 1;
  d.spec = {{0, d.local_size[0]}, {1, uint32_t(count)}, {2, uint32_t(k)}, {3, linear::PackedK4(k)},
            {4, uint32_t(inner)}, {5, uint32_t(channels)}};
  uint64_t words = uint64_t(count);
  if (dst == ir::DType::I8) words = uint64_t(count / k) * linear::PackedK4(k);
  else if (dst == ir::DType::F16) words = (uint64_t(count) + 1) / 2;
  Grid(words, p, d);
  return d;
}

bool IsPointwise(const ir::Graph& g, const ir::Op& op) {
  return op.type == ir::OpType::Conv2d && op.conv2d.groups == 1 && Geometry(g, op, 1).pointwise();
}

bool IsInt8Depthwise(const ir::Graph& g, const ir::Op& op) {
  if (op.type != ir::OpType::Conv2d) return false;
  const ir::Tensor& x = g.tensors[size_t(op.inputs[0])];
  const ir::Tensor& w = g.tensors[size_t(op.inputs[1])];
  return x.dtype == ir::DType::I8 && g.tensors[size_t(op.outputs[0])].dtype == ir::DType::I8 &&
         op.conv2d.groups > 1 && op.conv2d.groups == x.shape[3] && op.conv2d.groups == w.shape[0];
}

bool IsInt8GlobalAvgPool(const ir::Graph& g, const ir::Op& op) {
  if (op.type != ir::OpType::AvgPool2d) return false;
  const ir::Tensor& x = g.tensors[size_t(op.inputs[0])];
  const ir::Pool2dAttrs& a = op.pool;
  const bool whole = a.global || (a.kernel[0] == x.shape[1] && a.kernel[1] == x.shape[2] && a.padding[0] == 0 &&
                                  a.padding[1] == 0 && a.padding[2] == 0 && a.padding[3] == 0);
  return whole && x.dtype == ir::DType::I8 && g.tensors[size_t(op.outputs[0])].dtype == ir::DType::I8;
}

AddParams Int8AddParams(const ir::Graph& g, const ir::Op& add) {
  const ir::Tensor& a = g.tensors[size_t(add.inputs[0])];
  const ir::Tensor& b = g.tensors[size_t(add.inputs[1])];
  AddParams ap;
  if (a.quant && b.quant) {
    ap.scale_a = kernels::QScale(*a.quant);
    ap.zero_point_a = kernels::QZero(*a.quant);
    ap.scale_b = kernels::QScale(*b.quant);
    ap.zero_point_b = kernels::QZero(*b.quant);
    ap.out_scale = kernels::QScale(add.add.output_quant);
    ap.out_zero_point = kernels::QZero(add.add.output_quant);
  }
  ap.flags = (add.add.activation == ir::Activation::Relu ? linear::kFlagRelu : 0) |
             (add.add.activation == ir::Activation::Relu6 ? linear::kFlagRelu6 : 0);
  return ap;
}

linear::DispatchParams AddDispatch(int64_t rows, int64_t c, bool int8, const AddParams& a, const TargetProfile& p) {
  linear::DispatchParams d;
  d.shader = {"add.comp", {}};
  if (int8) d.shader.defines.push_back("VKQC_ADD_Q8");
  d.local_size[0] = Workgroup(p);
  d.local_size[1] = d.local_size[2] = 1;
  d.spec = {{0, d.local_size[0]}, {1, uint32_t(rows)}, {2, uint32_t(c)}, {3, linear::PackedK4(c)}};
  Grid(uint64_t(rows) * (int8 ? (c + 3) / 4 : c), p, d);
  struct {
    float sa;
    int32_t za;
    float sb;
    int32_t zb;
    float inv_so;
    int32_t zo;
    uint32_t flags, reserved;
  } push{a.scale_a, a.zero_point_a, a.scale_b, a.zero_point_b, 1.0f / a.out_scale, a.out_zero_point, a.flags, 0};
  d.push = Bytes(push);
  return d;
}

linear::DispatchParams PoolDispatch(const ConvGeometry& g, bool int8, float act_scale, int32_t act_zero_point,
                                    float out_scale, int32_t out_zero_point, const TargetProfile& p) {
  linear::DispatchParams d;
  d.shader = {"avgpool.comp", {}};
  if (int8) d.shader.defines.push_back("VKQC_POOL_Q8");
  d.local_size[0] = Workgroup(p);
  d.local_size[1] = d.local_size[2] = 1;
  d.spec = {{0, d.local_size[0]}};
  Geometry(g, d.spec);
  Grid(uint64_t(g.rows()) * (int8 ? (g.c + 3) / 4 : g.c), p, d);
  if (!int8) return d;  // the float kernel has no parameters (its push block is not in the SPIR-V)
  struct {
    float sx;
    int32_t zx;
    float inv_so;
    int32_t zo;
  } push{act_scale, act_zero_point, 1.0f / out_scale, out_zero_point};
  d.push = Bytes(push);
  return d;
}

}  // namespace vkqc::conv
