// Graph verification. Tensor and graph-structure rules first, then one rule per op type from
// kOpRules (arity + a type-specific check). A new op type adds one entry and one function.
#include "compiler/graph/verify.h"

#include "compiler/graph/verify_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

namespace vkqc {
namespace {

using ir::DType;
using ir::Graph;
using ir::Scheme;
using ir::Tensor;

// Elements above this are refused so that element and byte counts never overflow int64.
constexpr int64_t kMaxElements = int64_t{1} << 56;

using verify::Dims;
using verify::OpCtx;
using verify::Quote;

bool ValidDType(DType t) { return ir::DTypeBits(t) != 0; }
bool ValidScheme(Scheme s) {
  return static_cast<uint8_t>(s) <= static_cast<uint8_t>(Scheme::Q4GMW);
}

// Bytes a constant of `t`'s shape and dtype occupies (sub-byte types packed two per byte);
// -1 if the shape is not concrete or too large.
int64_t ExpectedBytes(const Tensor& t) {
  int64_t n = 1;
  for (int64_t d : t.shape) {
    if (d < 0) return -1;
    if (d != 0 && n > kMaxElements / d) return -1;
    n *= d;
  }
  return (n * ir::DTypeBits(t.dtype) + 7) / 8;
}

struct TensorCtx {
  const std::string& origin;
  const Tensor& t;
  Error Fail(const std::string& what) const {
    return UserError(origin + ": tensor " + Quote(t.name) + ": " + what);
  }
};

Status CheckQuantArrays(const TensorCtx& c, const ir::Quant& q) {
  if (!ValidScheme(q.scheme)) {
    return c.Fail("unknown quantization scheme " + std::to_string(static_cast<int>(q.scheme)) +
                  "; the file may come from a newer vkqc");
  }
  if (!q.zero_points.empty() && q.zero_points.size() != q.scales.size()) {
    return c.Fail("has " + std::to_string(q.scales.size()) + " scales but " +
                  std::to_string(q.zero_points.size()) +
                  " zero points; give one zero point per scale, or none");
  }
  for (size_t i = 0; i < q.scales.size(); ++i) {
    float s = q.scales[i];
    if (!std::isfinite(s) || s <= 0.0f) {
      return c.Fail("scale[" + std::to_string(i) + "] is " + std::to_string(s) +
                    "; quantization scales must be finite and > 0" +
                    (c.t.is_constant() ? " (re-export the weights)" : ""));
    }
  }
  if (q.group_size < 0) return c.Fail("group_size must be >= 0");
  const int rank = static_cast<int>(c.t.shape.size());
  if (q.axis < 0 || (rank > 0 && q.axis >= rank) || (rank == 0 && q.axis != 0)) {
    return c.Fail("quantization axis " + std::to_string(q.axis) + " is outside the tensor's " +
                  std::to_string(rank) + " dimensions");
  }
  return {};
}

Status CheckTensor(const Graph& g, const std::string& origin, const Tensor& t) {
  TensorCtx c{origin, t};
  if (!ValidDType(t.dtype)) {
    return c.Fail("unknown dtype " + std::to_string(static_cast<int>(t.dtype)) +
                  "; the file may come from a newer vkqc");
  }
  for (size_t i = 0; i < t.shape.size(); ++i) {
    int64_t d = t.shape[i];
    if (d == ir::kSymbolicDim) {
      if (t.is_constant()) {
        return c.Fail("is a constant but has the symbolic dimension " + Quote(g.symbolic_dim) +
                      " in shape " + Dims(g, t.shape) + "; constants need concrete shapes");
      }
      if (i != 0) {
        return c.Fail("the symbolic dimension " + Quote(g.symbolic_dim) +
                      " may only lead the shape, but shape is " + Dims(g, t.shape));
      }
    } else if (d < 1) {
      return c.Fail("dimension " + std::to_string(i) + " is " + std::to_string(d) +
                    "; dimensions must be >= 1 (or the symbolic leading dimension)");
    }
  }
  int64_t n = 1;
  for (int64_t d : t.shape) {
    if (d == ir::kSymbolicDim) continue;
    if (n > kMaxElements / d) return c.Fail("shape " + Dims(g, t.shape) + " is too large");
    n *= d;
  }
  if (t.is_constant()) {
    const ir::ConstData& cd = *t.data;
    int64_t want = ExpectedBytes(t);
    if (!cd.owner || cd.offset > cd.owner->size() || cd.size > cd.owner->size() - cd.offset) {
      return InternalError(origin + ": tensor " + Quote(t.name) +
                           ": constant data view lies outside its buffer");
    }
    if (static_cast<int64_t>(cd.size) != want) {
      return c.Fail("constant data is " + std::to_string(cd.size) + " bytes but shape " +
                    Dims(g, t.shape) + " of " + ir::DTypeName(t.dtype) + " needs " +
                    std::to_string(want) + " bytes");
    }
  }
  if (t.quant) VKQC_TRY(CheckQuantArrays(c, *t.quant));
  return {};
}

// ---- per-op rules ------------------------------------------------------------------------------


using verify::Num;

// A per-tensor int8 parameter pair (q8ta / q8to): one finite scale > 0, one zero point in int8.
// `what` names it in messages, e.g. "input_quant q8ta".
Status CheckPerTensor(const OpCtx& c, const std::string& what, const ir::Quant& q) {
  if (q.scales.size() != 1 || q.zero_points.size() != 1) {
    return c.Fail(what + " needs exactly one scale and one zero point, got " +
                  std::to_string(q.scales.size()) + " scales and " +
                  std::to_string(q.zero_points.size()) + " zero points");
  }
  if (!std::isfinite(q.scales[0]) || q.scales[0] <= 0.0f) {
    return c.Fail(what + " scale is " + std::to_string(q.scales[0]) +
                  "; it must be finite and > 0");
  }
  if (q.zero_points[0] < -128 || q.zero_points[0] > 127) {
    return c.Fail(what + " zero point " + std::to_string(q.zero_points[0]) +
                  " is outside int8 [-128, 127] (uint8 parameters are converted at import)");
  }
  return {};
}

// input_quant of a linear whose x is f32.
Status CheckActivationQuant(const OpCtx& c, const ir::Quant& q) {
  switch (q.scheme) {
    case Scheme::None:
    case Scheme::Float:
      return {};
    case Scheme::Q8TA:
      return CheckPerTensor(c, "input_quant q8ta", q);
    case Scheme::DQ8CA:
      if (!q.scales.empty() || !q.zero_points.empty()) {
        return c.Fail("input_quant dq8ca has " + std::to_string(q.scales.size()) + " scales and " +
                      std::to_string(q.zero_points.size()) +
                      " zero points, but dynamic per-token quantization takes none (the GPU "
                      "computes them per row); remove them, or use q8ta for fixed parameters");
      }
      return {};
    default:
      return c.Fail(std::string("input_quant scheme ") + ir::SchemeName(q.scheme) +
                    " is not an activation scheme; use float, q8ta or dq8ca");
  }
}

// x of a linear: f32 with any input_quant, or i8 carrying its own quant: per tensor (q8ta, or the
// q8to of the linear that produced it) or per token (dq8ca, from a quantize op; that it has one
// is checked with the graph structure).
Status CheckLinearInput(const OpCtx& c, const Tensor& x) {
  const ir::Quant& iq = c.op.linear.input_quant;
  const std::string xn = "input " + Quote(x.name);
  if (x.dtype == DType::F32) return CheckActivationQuant(c, iq);
  if (x.dtype != DType::I8) {
    return c.Fail(xn + " is " + ir::DTypeName(x.dtype) +
                  "; it must be f32, or i8 with a per-tensor q8ta or per-token dq8ca quant");
  }
  const Scheme xs = x.quant ? x.quant->scheme : Scheme::None;
  if (xs != Scheme::Q8TA && xs != Scheme::Q8TO && xs != Scheme::DQ8CA) {
    return c.Fail(xn + " is i8 " +
                  (xs == Scheme::None ? std::string("without quantization")
                                      : std::string("with quant ") + ir::SchemeName(xs)) +
                  "; an i8 input needs a per-tensor q8ta quant (one scale, one zero point) on "
                  "the tensor, or per-token dq8ca from a quantize op, or make it f32");
  }
  if (xs != Scheme::DQ8CA) {
    VKQC_TRY(CheckPerTensor(c, xn + " quant " + ir::SchemeName(xs), *x.quant));
  }
  if (iq.scheme != Scheme::None || !iq.scales.empty() || !iq.zero_points.empty()) {
    return c.Fail(xn + " is already int8 (its own " + ir::SchemeName(xs) +
                  " quant is used), so input_quant must be absent, but it is " +
                  ir::SchemeName(iq.scheme) + "; remove input_quant");
  }
  return {};
}

// The largest of 128, 64, 32, 16, 8 that divides k (0 if none).
int64_t SuggestedGroup(int64_t k) {
  for (int64_t gs : {128, 64, 32, 16, 8}) {
    if (k % gs == 0) return gs;
  }
  return 0;
}

// Weight [N, K] of a linear under its scheme (q8csw, q4gsw, q4gaw); shape already checked.
Status CheckLinearWeight(const OpCtx& c, const Tensor& w, int64_t n, int64_t k) {
  const ir::Quant& wq = *w.quant;
  const std::string wn = "weight " + Quote(w.name);
  const char* sn = ir::SchemeName(wq.scheme);
  const bool grouped = wq.scheme == Scheme::Q4GSW || wq.scheme == Scheme::Q4GAW || wq.scheme == Scheme::Q8GSW ||
                       wq.scheme == Scheme::Q4GMW;
  if (wq.axis != 0) {
    return c.Fail(wn + " has quantization axis " + std::to_string(wq.axis) + "; " + sn +
                  " scales run along axis 0 (output channels)" +
                  (grouped ? ", then groups along K; set axis 0" : ""));
  }
  if (wq.scheme != Scheme::Q4GMW && !wq.mins.empty())
    return c.Fail(wn + " has mins, which only q4gmw takes");
  int64_t groups = 1;
  if (grouped) {
    const int64_t gs = wq.group_size;
    if (wq.scheme == Scheme::Q8GSW && (gs <= 0 || gs % 32 != 0 || k % gs != 0)) {
      return c.Fail(wn + ": q8gsw group_size " + Num(gs) + " must be a multiple of 32 that divides K=" + Num(k) +
                    (k % 32 == 0 ? " (e.g. 32)" : "; K is not a multiple of 32, so use q8csw"));
    }
    if (gs <= 0 || gs % 8 != 0 || k % gs != 0) {
      const int64_t hint = SuggestedGroup(k);
      return c.Fail(wn + ": group_size " + Num(gs) +
                    " must be a multiple of 8 that divides K=" + Num(k) +
                    (hint ? "; re-quantize with such a group size (e.g. " + Num(hint) + ")"
                          : "; K is not a multiple of 8, so this layer cannot take int4 "
                            "weights (use q8csw)"));
    }
    groups = k / gs;
  }
  const int64_t want = n * groups;
  if (static_cast<int64_t>(wq.scales.size()) != want) {
    if (!grouped) {
      return c.Fail(wn + " has " + std::to_string(wq.scales.size()) + " scales but " + Num(n) +
                    " output channels; q8csw needs one scale per output channel");
    }
    return c.Fail(wn + " has " + std::to_string(wq.scales.size()) + " scales but " + sn + " with " +
                  Num(n) + " output channels and " + Num(groups) + " groups of " +
                  Num(wq.group_size) + " along K=" + Num(k) + " needs " + Num(want) +
                  " (one per [n][g], row-major)");
  }
  for (size_t i = 0; i < wq.scales.size(); ++i) {
    if (!std::isfinite(wq.scales[i]) || wq.scales[i] <= 0.0f) {
      return c.Fail(wn + " scale[" + std::to_string(i) + "] is " + std::to_string(wq.scales[i]) +
                    "; scales must be finite and > 0");
    }
  }
  switch (wq.scheme) {
    case Scheme::Q8CSW:
      for (size_t i = 0; i < wq.zero_points.size(); ++i) {
        if (wq.zero_points[i] != 0) {
          return c.Fail(wn + " zero point of channel " + std::to_string(i) + " is " +
                        std::to_string(wq.zero_points[i]) +
                        "; q8csw is symmetric, so zero points must be 0 (or absent)");
        }
      }
      return {};
    case Scheme::Q4GSW:
    case Scheme::Q8GSW:
      if (!wq.zero_points.empty()) {
        return c.Fail(wn + " has " + std::to_string(wq.zero_points.size()) + " zero points, but " + sn +
                      " is symmetric and takes none; remove them" +
                      (wq.scheme == Scheme::Q4GSW ? ", or quantize as q4gaw (u4 with zero points)" : ""));
      }
      return {};
    case Scheme::Q4GMW:
      if (!wq.zero_points.empty())
        return c.Fail(wn + " has zero points, but q4gmw takes a float minimum per group (mins) instead");
      if (static_cast<int64_t>(wq.mins.size()) != want)
        return c.Fail(wn + " has " + std::to_string(wq.mins.size()) + " mins but q4gmw needs " + Num(want) +
                      " (one per scale, [n][g])");
      for (size_t i = 0; i < wq.mins.size(); ++i)
        if (!std::isfinite(wq.mins[i]))
          return c.Fail(wn + " min[" + std::to_string(i) + "] is not finite");
      return {};
    default:  // Q4GAW
      if (static_cast<int64_t>(wq.zero_points.size()) != want) {
        return c.Fail(wn + " has " + std::to_string(wq.zero_points.size()) +
                      " zero points but q4gaw needs " + Num(want) + " (one per scale, [n][g])");
      }
      for (size_t i = 0; i < wq.zero_points.size(); ++i) {
        const int32_t zp = wq.zero_points[i];
        if (zp < 0 || zp > 15) {
          return c.Fail(wn + " zero point [" + Num(static_cast<int64_t>(i) / groups) + "][" +
                        Num(static_cast<int64_t>(i) % groups) + "] is " + std::to_string(zp) +
                        "; q4gaw zero points must be in [0, 15]");
        }
      }
      return {};
  }
}

// Output y of an op with an output_quant `oq`: f32 of shape `want`, or with oq q8to an i8 of
// shape `want` carrying the same q8to quant.
Status CheckQuantOutput(const OpCtx& c, const Tensor& y, const ir::Quant& oq,
                        const std::vector<int64_t>& want) {
  const Graph& g = c.g;
  const std::string want_shape = Dims(g, want);
  const bool shape_ok = y.shape == want;
  const std::string yn = "output " + Quote(y.name);
  if (oq.scheme == Scheme::None) {
    if (y.dtype != DType::F32 || !shape_ok) {
      return c.Fail(yn + " is " + ir::DTypeName(y.dtype) + " " + Dims(g, y.shape) +
                    "; it must be f32 " + want_shape +
                    (y.dtype == DType::I8 ? " (or set output_quant q8to for an i8 output)" : ""));
    }
    return {};
  }
  if (oq.scheme != Scheme::Q8TO) {
    return c.Fail(std::string("output_quant scheme ") + ir::SchemeName(oq.scheme) +
                  " is not an output scheme; use q8to (i8 output) or none (f32 output)");
  }
  VKQC_TRY(CheckPerTensor(c, "output_quant q8to", oq));
  if (y.dtype != DType::I8 || !shape_ok) {
    return c.Fail(yn + " is " + ir::DTypeName(y.dtype) + " " + Dims(g, y.shape) +
                  "; with output_quant q8to it must be i8 " + want_shape);
  }
  const std::string op_q =
      "scale " + std::to_string(oq.scales[0]) + ", zero point " + std::to_string(oq.zero_points[0]);
  std::string has;
  if (!y.quant || y.quant->scheme == Scheme::None) {
    has = "none";
  } else if (y.quant->scheme != Scheme::Q8TO) {
    has = std::string("scheme ") + ir::SchemeName(y.quant->scheme);
  } else if (y.quant->scales != oq.scales || y.quant->zero_points != oq.zero_points) {
    has = y.quant->scales.size() == 1 && y.quant->zero_points.size() == 1
              ? "scale " + std::to_string(y.quant->scales[0]) + ", zero point " +
                    std::to_string(y.quant->zero_points[0])
              : std::to_string(y.quant->scales.size()) + " scales and " +
                    std::to_string(y.quant->zero_points.size()) + " zero points";
  }
  if (!has.empty()) {
    return c.Fail(yn + " must carry the same q8to quant as the op's output_quant (" + op_q +
                  "), but it has " + has + "; set the tensor's quant to match");
  }
  return {};
}

Status CheckLinear(const OpCtx& c) {
  const Graph& g = c.g;
  const Tensor& x = c.In(0);
  const Tensor& w = c.In(1);
  const Tensor& y = c.Out(0);

  if (c.op.linear.fused_relu && c.op.linear.fused_relu6) {
    return c.Fail("sets both fused_relu and fused_relu6; set one (relu6 = min(max(y, 0), 6))");
  }

  if (!w.is_constant()) {
    return c.Fail("weight " + Quote(w.name) + " must be a constant tensor (with data)");
  }
  if (!w.quant || w.quant->scheme == Scheme::None || w.quant->scheme == Scheme::Float) {
    return c.Fail("weight " + Quote(w.name) +
                  " is not quantized; linear needs q8csw, q8gsw, q4gsw, q4gaw or q4gmw weights");
  }
  const Scheme ws = w.quant->scheme;
  DType want_dtype;
  const char* dtype_hint;
  switch (ws) {
    case Scheme::Q8CSW:
    case Scheme::Q8GSW:
      want_dtype = DType::I8;
      dtype_hint = " (u8 weights are converted by the importer)";
      break;
    case Scheme::Q4GSW:
      want_dtype = DType::I4;
      dtype_hint = " (two's-complement nibbles in [-8, 7], two per byte, low nibble first)";
      break;
    case Scheme::Q4GAW:
    case Scheme::Q4GMW:
      want_dtype = DType::U4;
      dtype_hint = " (nibbles in [0, 15], two per byte, low nibble first)";
      break;
    default:
      return c.Fail(std::string("weight ") + Quote(w.name) + " has scheme " + ir::SchemeName(ws) +
                    ", which is not a weight scheme; use q8csw, q8gsw, q4gsw, q4gaw or q4gmw");
  }
  if (w.dtype != want_dtype) {
    return c.Fail("weight " + Quote(w.name) + " is " + ir::DTypeName(w.dtype) + "; " +
                  ir::SchemeName(ws) + " weights must be " + ir::DTypeName(want_dtype) +
                  dtype_hint);
  }
  if (x.dtype != DType::F32 && x.dtype != DType::I8) {
    return c.Fail("input " + Quote(x.name) + " is " + ir::DTypeName(x.dtype) +
                  "; it must be f32, or i8 with a per-tensor q8ta quant");
  }
  if (x.shape.size() != 2) {
    return c.Fail("input " + Quote(x.name) + " has shape " + Dims(g, x.shape) +
                  "; it must be rank 2 [M, K]");
  }
  const int64_t m = x.shape[0];
  const int64_t k = x.shape[1];
  if (w.shape.size() != 2 || w.shape[1] != k) {
    return c.Fail("weight " + Quote(w.name) + " has shape " + Dims(g, w.shape) + " but input " +
                  Quote(x.name) + " has shape " + Dims(g, x.shape) + "; the weight must be [N, " +
                  std::to_string(k) + "] (row = output channel)");
  }
  const int64_t n = w.shape[0];
  VKQC_TRY(CheckLinearWeight(c, w, n, k));
  if (c.op.inputs.size() == 3) {
    const Tensor& b = c.In(2);
    if (!b.is_constant() || b.dtype != DType::F32 || b.shape != std::vector<int64_t>{n}) {
      return c.Fail("bias " + Quote(b.name) + " must be a constant f32 [" + std::to_string(n) +
                    "], but is " + (b.is_constant() ? "a constant " : "a non-constant ") +
                    ir::DTypeName(b.dtype) + " " + Dims(g, b.shape));
    }
  }
  VKQC_TRY(CheckQuantOutput(c, y, c.op.linear.output_quant, {m, n}));
  return CheckLinearInput(c, x);
}

// An op carries only the attributes of its own type (the others would be lost on write).
Status CheckForeignAttrs(const OpCtx& c) {
  struct Kind {
    ir::OpType owner;
    const char* what;
    bool is_default;
    ir::OpType owner2 = ir::OpType(0xFFFF);  // a second op type that takes the same attributes
  };
  const ir::Op& op = c.op;
  const Kind kinds[] = {
      {ir::OpType::Linear,
       "linear attributes (input_quant, output_quant, fused_relu or fused_relu6)",
       op.linear == ir::LinearAttrs{}},
      {ir::OpType::Conv2d, "conv2d attributes (stride, padding, dilation, groups, activation, "
       "input_quant or output_quant)", op.conv2d == ir::Conv2dAttrs{}},
      {ir::OpType::Add, "add attributes (activation or output_quant)", op.add == ir::AddAttrs{}},
      {ir::OpType::AvgPool2d, "pool attributes (kernel, stride, padding, global or output_quant)",
       op.pool == ir::Pool2dAttrs{}, ir::OpType::MaxPool2d},
      {ir::OpType::RmsNorm, "rms_norm attributes (eps)", op.norm == ir::NormAttrs{}},
      {ir::OpType::Rope, "rope attributes (head_dim, theta, layout, max_positions, scaling)",
       op.rope == ir::RopeAttrs{}},
      {ir::OpType::Attention, "attention attributes (num_heads, num_kv_heads, head_dim, scale)",
       op.attention == ir::AttentionAttrs{}},
      {ir::OpType::Concat, "concat attributes (axis or output_quant)", op.concat == ir::ConcatAttrs{}},
      {ir::OpType::HardSigmoid, "hard_sigmoid or clip attributes (alpha, beta; min, max)", op.unary == ir::UnaryAttrs{},
       ir::OpType::Clip},
      {ir::OpType::Transpose, "transpose attributes (perm)", op.transpose == ir::TransposeAttrs{}},
      {ir::OpType::ResizeNearest, "resize_nearest attributes (scale)", op.resize == ir::ResizeAttrs{}},
  };
  bool has_own = false;
  for (const Kind& k : kinds) has_own = has_own || k.owner == op.type || k.owner2 == op.type;
  for (const Kind& k : kinds) {
    if (k.owner == op.type || k.owner2 == op.type || k.is_default) continue;
    return c.Fail(std::string("carries ") + k.what + "; a " + ir::OpTypeName(op.type) +
                  " op takes " + (has_own ? "only its own" : "none"));
  }
  return {};
}

Status CheckActivation(const OpCtx& c, ir::Activation a) {
  if (static_cast<uint8_t>(a) > static_cast<uint8_t>(ir::Activation::Relu6)) {
    return c.Fail("unknown activation " + std::to_string(static_cast<int>(a)) +
                  "; use none, relu or relu6");
  }
  return {};
}

// A non-constant i8 input with per-tensor quant (q8ta, or the q8to of the op that produced it).
Status CheckPerTensorInt8(const OpCtx& c, const Tensor& t) {
  const std::string tn = "input " + Quote(t.name);
  const Scheme ts = t.quant ? t.quant->scheme : Scheme::None;
  if (ts != Scheme::Q8TA && ts != Scheme::Q8TO) {
    return c.Fail(tn + " is i8 " +
                  (ts == Scheme::None ? std::string("without quantization")
                                      : std::string("with quant ") + ir::SchemeName(ts)) +
                  "; " + ir::OpTypeName(c.op.type) +
                  " takes per-tensor int8 (a q8ta or q8to quant with one scale and one zero "
                  "point on the tensor), or f32");
  }
  return CheckPerTensor(c, tn + " quant " + ir::SchemeName(ts), *t.quant);
}

Status CheckNotConstant(const OpCtx& c, const Tensor& t) {
  if (t.is_constant()) {
    return c.Fail("input " + Quote(t.name) + " is a constant; " + ir::OpTypeName(c.op.type) +
                  " takes a computed tensor in this version (compute it in the graph instead)");
  }
  return {};
}

Status CheckElementwise(const OpCtx& c) {
  const Graph& g = c.g;
  const char* type = ir::OpTypeName(c.op.type);
  const Tensor& a = c.In(0);
  for (size_t i = 0; i < c.op.inputs.size(); ++i) {
    const Tensor& t = c.In(i);
    if (t.is_constant()) {
      return c.Fail("input " + Quote(t.name) + " is a constant; " + type +
                    " takes no constant inputs in this version (compute the operand in the "
                    "graph instead)");
    }
    if (t.dtype != DType::F32) {
      return c.Fail("input " + Quote(t.name) + " is " + ir::DTypeName(t.dtype) + "; " + type +
                    " takes f32 inputs (dequantize first, or give the producing linear an f32 "
                    "output)");
    }
    if (i > 0 && t.shape != a.shape) {
      if (c.op.type == ir::OpType::Mul) {
        VKQC_TRY(verify::CheckBroadcast(c, a, t));
        continue;
      }
      return c.Fail("inputs " + Quote(a.name) + " " + Dims(g, a.shape) + " and " + Quote(t.name) +
                    " " + Dims(g, t.shape) + " differ in shape; " + type +
                    " needs identical shapes (no broadcasting)");
    }
  }
  const Tensor& y = c.Out(0);
  if (y.dtype != DType::F32 || y.shape != a.shape) {
    return c.Fail("output " + Quote(y.name) + " is " + ir::DTypeName(y.dtype) + " " +
                  Dims(g, y.shape) + "; it must be f32 " + Dims(g, a.shape) + " like its input " +
                  Quote(a.name));
  }
  return {};
}

struct OpRule {
  ir::OpType type;
  size_t min_inputs;
  size_t max_inputs;
  size_t num_outputs;
  const char* signature;  // for arity errors
  Status (*check)(const OpCtx&);
};

constexpr OpRule kOpRules[] = {
    {ir::OpType::Linear, 2, 3, 1, "inputs [x, weight] or [x, weight, bias] and one output",
     CheckLinear},
    {ir::OpType::Mul, 2, 2, 1, "inputs [a, b] and one output", CheckElementwise},
    {ir::OpType::Silu, 1, 1, 1, "input [a] and one output", CheckElementwise},
    {ir::OpType::Quantize, 1, 1, 1, "input [x] and one output", verify::CheckQuantize},
    {ir::OpType::Dequantize, 1, 1, 1, "input [q] and one output", verify::CheckDequantize},
    {ir::OpType::Conv2d, 2, 3, 1, "inputs [x, w] or [x, w, bias] and one output", verify::CheckConv2d},
    {ir::OpType::Add, 2, 2, 1, "inputs [a, b] and one output", verify::CheckAdd},
    {ir::OpType::AvgPool2d, 1, 1, 1, "input [x] and one output", verify::CheckPool2d},
    {ir::OpType::MaxPool2d, 1, 1, 1, "input [x] and one output", verify::CheckPool2d},
    {ir::OpType::Embedding, 2, 2, 1, "inputs [ids, table] and one output", verify::CheckEmbedding},
    {ir::OpType::RmsNorm, 2, 2, 1, "inputs [x, weight] and one output", verify::CheckRmsNorm},
    {ir::OpType::Rope, 2, 2, 1, "inputs [x, pos] and one output", verify::CheckRope},
    {ir::OpType::Attention, 6, 6, 1, "inputs [q, k, v, k_cache, v_cache, pos] and one output",
     verify::CheckAttention},
    {ir::OpType::Argmax, 1, 1, 1, "input [x] and one output", verify::CheckArgmax},
    {ir::OpType::Concat, 1, SIZE_MAX, 1, "inputs [x0, x1, ...] (at least one) and one output", verify::CheckConcat},
    {ir::OpType::Sigmoid, 1, 1, 1, "input [x] and one output", CheckElementwise},
    {ir::OpType::HardSigmoid, 1, 1, 1, "input [x] and one output", verify::CheckHardSigmoid},
    {ir::OpType::HardSwish, 1, 1, 1, "input [x] and one output", CheckElementwise},
    {ir::OpType::ResizeNearest, 1, 1, 1, "input [x] and one output", verify::CheckResizeNearest},
    {ir::OpType::Softmax, 1, 1, 1, "input [x] and one output", verify::CheckSoftmax},
    {ir::OpType::Transpose, 1, 1, 1, "input [x] and one output", verify::CheckTranspose},
    {ir::OpType::Reshape, 1, 1, 1, "input [x] and one output", verify::CheckReshape},
    {ir::OpType::Clip, 1, 1, 1, "input [x] and one output", verify::CheckClip},
};

const OpRule* FindRule(ir::OpType t) {
  for (const OpRule& r : kOpRules) {
    if (r.type == t) return &r;
  }
  return nullptr;
}

// ---- graph structure ---------------------------------------------------------------------------

// Index ranges, arity and single production; fills producer[t] with the producing op index.
Status CheckOpStructure(const Graph& g, const std::string& origin, std::vector<int>& producer) {
  const int num_tensors = static_cast<int>(g.tensors.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const ir::Op& op = g.ops[i];
    OpCtx c{g, origin, static_cast<int>(i), op};
    const OpRule* rule = FindRule(op.type);
    if (!rule) {
      return c.Fail("unknown op type " + std::to_string(static_cast<int>(op.type)) +
                    "; the graph may come from a newer vkqc");
    }
    if (op.inputs.size() < rule->min_inputs || op.inputs.size() > rule->max_inputs ||
        op.outputs.size() != rule->num_outputs) {
      return c.Fail("has " + std::to_string(op.inputs.size()) + " inputs and " +
                    std::to_string(op.outputs.size()) + " outputs; it takes " + rule->signature);
    }
    for (int t : op.inputs) {
      if (t < 0 || t >= num_tensors) {
        return c.Fail("input tensor index " + std::to_string(t) + " is out of range (graph has " +
                      std::to_string(num_tensors) + " tensors)");
      }
    }
    for (int t : op.outputs) {
      if (t < 0 || t >= num_tensors) {
        return c.Fail("output tensor index " + std::to_string(t) + " is out of range (graph has " +
                      std::to_string(num_tensors) + " tensors)");
      }
      const Tensor& out = g.tensors[t];
      if (out.is_constant()) return c.Fail("writes the constant tensor " + Quote(out.name));
      if (out.state)
        return c.Fail("lists the state tensor " + Quote(out.name) +
                      " as an output; state (a KV cache) is written in place by the attention op that "
                      "takes it as an input");
      if (producer[t] >= 0) {
        return c.Fail("output " + Quote(out.name) + " is already produced by op " +
                      std::to_string(producer[t]) + " " + Quote(g.ops[producer[t]].name) +
                      "; every tensor has exactly one producer");
      }
      producer[t] = static_cast<int>(i);
    }
  }
  return {};
}

// An i8 tensor with per-token (dq8ca) quant: its per-row parameters exist only at run time.
bool IsPerTokenInt8(const Tensor& t) {
  return t.dtype == DType::I8 && t.quant && t.quant->scheme == Scheme::DQ8CA;
}

Error PerTokenIoError(const std::string& origin, const Tensor& t, bool input) {
  return UserError(
      origin + ": per-token int8 tensor " + Quote(t.name) +
      " cannot be a graph input/output in this version; it is listed as a graph " +
      (input ? "input" : "output") +
      ", but its per-row scales and zero points (computed at run time) have no place in the "
      "graph's I/O signature; " +
      (input ? "take the f32 tensor as input and quantize it in the graph with a quantize op"
             : "output an f32 tensor instead") +
      ", or use per-tensor q8ta");
}

// Every i8 dq8ca tensor is written by a quantize op (a linear's q8to output is per tensor).
Status CheckPerTokenProducers(const Graph& g, const std::string& origin,
                              const std::vector<int>& producer) {
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const Tensor& ten = g.tensors[t];
    if (!IsPerTokenInt8(ten)) continue;
    const std::string head = origin + ": per-token int8 tensor " + Quote(ten.name) +
                             " (dq8ca) must be produced by a quantize op, but ";
    if (ten.is_constant()) {
      return UserError(head +
                       "it is a constant, and per-token parameters exist only at run time "
                       "(a constant takes a weight scheme or per-tensor q8ta)");
    }
    const int p = producer[t];
    if (p >= 0 && g.ops[p].type != ir::OpType::Quantize) {
      return UserError(head + "op " + std::to_string(p) + " " + Quote(g.ops[p].name) + " (" +
                       ir::OpTypeName(g.ops[p].type) + ") writes it" +
                       (g.ops[p].type == ir::OpType::Linear
                            ? " (a linear's int8 output is per tensor: q8to)"
                            : ""));
    }
  }
  return {};
}

}  // namespace

Status VerifyGraph(const Graph& g, const std::string& origin) {
  const int num_tensors = static_cast<int>(g.tensors.size());
  std::unordered_map<std::string, int> by_name;
  for (int i = 0; i < num_tensors; ++i) {
    const Tensor& t = g.tensors[i];
    if (t.name.empty()) {
      return UserError(origin + ": tensor " + std::to_string(i) + " has an empty name; name it");
    }
    auto [it, fresh] = by_name.emplace(t.name, i);
    if (!fresh) {
      return UserError(origin + ": tensor name " + Quote(t.name) + " is used by tensors " +
                       std::to_string(it->second) + " and " + std::to_string(i) +
                       "; tensor names must be unique");
    }
    VKQC_TRY(CheckTensor(g, origin, t));
  }
  if (g.HasSymbolicDim() && g.symbolic_dim.empty()) {
    return UserError(origin +
                     ": the graph uses a symbolic dimension but does not name it "
                     "(symbolic_dim is empty)");
  }

  std::vector<char> is_input(num_tensors, 0);
  for (int t : g.inputs) {
    if (t < 0 || t >= num_tensors) {
      return UserError(origin + ": graph input index " + std::to_string(t) +
                       " is out of range (graph has " + std::to_string(num_tensors) + " tensors)");
    }
    if (g.tensors[t].is_constant()) {
      return UserError(origin + ": graph input " + Quote(g.tensors[t].name) +
                       " is a constant; graph inputs must be tensors without data");
    }
    if (is_input[t]) {
      return UserError(origin + ": graph input " + Quote(g.tensors[t].name) + " is listed twice");
    }
    if (IsPerTokenInt8(g.tensors[t])) return PerTokenIoError(origin, g.tensors[t], true);
    is_input[t] = 1;
  }

  std::vector<int> producer(num_tensors, -1);
  VKQC_TRY(CheckOpStructure(g, origin, producer));
  VKQC_TRY(verify::CheckStateTensors(g, origin));
  for (int t = 0; t < num_tensors; ++t) {
    if (producer[t] >= 0 && is_input[t]) {
      return UserError(origin + ": graph input " + Quote(g.tensors[t].name) +
                       " is also written by op " + std::to_string(producer[t]) + " " +
                       Quote(g.ops[producer[t]].name) + "; graph inputs are read-only");
    }
  }
  VKQC_TRY(CheckPerTokenProducers(g, origin, producer));

  for (size_t i = 0; i < g.ops.size(); ++i) {
    const ir::Op& op = g.ops[i];
    OpCtx c{g, origin, static_cast<int>(i), op};
    for (int t : op.inputs) {
      const Tensor& in = g.tensors[t];
      if (in.is_constant() || is_input[t] || in.state) continue;
      if (producer[t] < 0) {
        return c.Fail("input " + Quote(in.name) +
                      " is never produced: it is not a constant, not a graph input and no op "
                      "writes it" +
                      (op.type == ir::OpType::Attention && (t == op.inputs[3] || t == op.inputs[4])
                           ? std::string("; a KV cache must be a state tensor (\"state\": true)")
                           : std::string()));
      }
      if (producer[t] >= static_cast<int>(i)) {
        return c.Fail("input " + Quote(in.name) + " is consumed before it is produced (by op " +
                      std::to_string(producer[t]) + " " + Quote(g.ops[producer[t]].name) +
                      "); ops must be listed in topological order");
      }
    }
    VKQC_TRY(CheckForeignAttrs(c));
    VKQC_TRY(FindRule(op.type)->check(c));
  }

  for (int t = 0; t < num_tensors; ++t) {
    if (!g.tensors[t].is_constant() && !g.tensors[t].state && !is_input[t] && producer[t] < 0) {
      return UserError(origin + ": tensor " + Quote(g.tensors[t].name) +
                       " is not a constant, not a graph input and not produced by any op; "
                       "remove it or give it a producer");
    }
  }

  if (g.outputs.empty()) return UserError(origin + ": the graph has no outputs; list at least one");
  std::vector<char> is_output(num_tensors, 0);
  for (int t : g.outputs) {
    if (t < 0 || t >= num_tensors) {
      return UserError(origin + ": graph output index " + std::to_string(t) +
                       " is out of range (graph has " + std::to_string(num_tensors) + " tensors)");
    }
    if (producer[t] < 0) {
      return UserError(origin + ": graph output " + Quote(g.tensors[t].name) +
                       " is not produced by any op; outputs must be op results");
    }
    if (is_output[t]) {
      return UserError(origin + ": graph output " + Quote(g.tensors[t].name) + " is listed twice");
    }
    if (IsPerTokenInt8(g.tensors[t])) return PerTokenIoError(origin, g.tensors[t], false);
    is_output[t] = 1;
  }
  return {};
}

Status verify::CheckWeight(const OpCtx& c, const ir::Tensor& w, int64_t n, int64_t k) {
  return CheckLinearWeight(c, w, n, k);
}

Status verify::CheckPerTensorInt8Input(const OpCtx& c, const ir::Tensor& t) { return CheckPerTensorInt8(c, t); }

Status verify::CheckNotConstantInput(const OpCtx& c, const ir::Tensor& t) { return CheckNotConstant(c, t); }

Status verify::CheckActivationKind(const OpCtx& c, ir::Activation a) { return CheckActivation(c, a); }

Status verify::CheckPerTensorQuant(const OpCtx& c, const std::string& what, const ir::Quant& q) {
  return CheckPerTensor(c, what, q);
}

Status verify::CheckOutputQuant(const OpCtx& c, const ir::Tensor& y, const ir::Quant& oq,
                                const std::vector<int64_t>& want) {
  return CheckQuantOutput(c, y, oq, want);
}

Status verify::CheckElementwiseOp(const OpCtx& c) { return CheckElementwise(c); }

}  // namespace vkqc
