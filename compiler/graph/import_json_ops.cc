// The JSON graph importer's op parsing (docs/graph-json.md "ops"): each op type's attribute keys
// and their values; the Importer class is in import_json_importer.h.
#include <cmath>
#include <limits>

#include "compiler/graph/import_json_importer.h"

namespace vkqc::json_import {

Status Importer::ParseActivationQuant(const json& j, const std::string& where, ir::Quant& q) const {
  if (!j.is_object()) return Fail(where, "must be an object");
  VKQC_TRY(CheckKeys(j, where, {"scheme", "scale", "zero_point", "dtype"}));
  VKQC_ASSIGN_OR_RETURN(std::string scheme, String(j, "scheme", where));
  auto s = ParseScheme(scheme);
  if (!s) {
    return Fail(where, "unknown scheme " + Quote(scheme) + " (known: float, q8ta, dq8ca, q8to)");
  }
  q.scheme = *s;
  const bool has_params = q.scheme == ir::Scheme::Q8TA || q.scheme == ir::Scheme::Q8TO;
  if (!has_params) {
    if (j.contains("scale") || j.contains("zero_point") || j.contains("dtype")) {
      return Fail(where, "scheme " + scheme + " takes no scale, zero_point or dtype");
    }
    return {};
  }
  auto scale = j.find("scale");
  if (scale == j.end() || !scale->is_number()) {
    return Fail(where, "scheme " + scheme + " needs \"scale\": a number > 0");
  }
  q.scales = {scale->get<float>()};
  bool u8 = false;
  if (j.contains("dtype")) {
    VKQC_ASSIGN_OR_RETURN(std::string dt, String(j, "dtype", where));
    if (dt != "i8" && dt != "u8")
      return Fail(where, "dtype must be \"i8\" or \"u8\", not " + Quote(dt));
    u8 = dt == "u8";
  }
  int64_t zp = 0;
  if (j.contains("zero_point")) {
    const json& z = j["zero_point"];
    if (!z.is_number_integer()) return Fail(where, "zero_point must be an integer");
    zp = z.is_number_unsigned()
             ? static_cast<int64_t>(std::min<uint64_t>(z.get<uint64_t>(), 1 << 20))
             : z.get<int64_t>();
  }
  const int64_t lo = u8 ? 0 : -128;
  const int64_t hi = u8 ? 255 : 127;
  if (zp < lo || zp > hi) {
    return Fail(where, "zero_point " + std::to_string(zp) + " is outside [" + std::to_string(lo) +
                           ", " + std::to_string(hi) + "] for " + (u8 ? "u8" : "i8"));
  }
  q.zero_points = {static_cast<int32_t>(u8 ? zp - 128 : zp)};
  return {};
}

// q8to: the output tensor is int8 and carries the same quant (unless it declares its own, which
// the verifier then compares).
Status Importer::ApplyOutputQuant(const ir::Quant& oq, const ir::Op& op, const std::string& where) {
  if (oq.scheme != ir::Scheme::Q8TO || op.outputs.size() != 1) return {};
  ir::Tensor& y = g_.tensors[op.outputs[0]];
  if (y.dtype != ir::DType::I8) {
    return Fail(where, "output_quant q8to writes int8, so the output tensor " + Quote(y.name) +
                           " must be declared \"dtype\": \"i8\" (it is " + ir::DTypeName(y.dtype) +
                           ")");
  }
  if (!y.quant) y.quant = oq;
  return {};
}

Status Importer::ParseBool(const json& j, const char* key, const std::string& where,
                           bool& out) const {
  if (!j.contains(key)) return {};
  if (!j[key].is_boolean()) return Fail(where, std::string(key) + " must be true or false");
  out = j[key].get<bool>();
  return {};
}

// `key`: an array of exactly n integers (absent keeps `out`'s defaults); ranges are the
// verifier's.
Status Importer::ParseInts(const json& j, const char* key, size_t n, const char* meaning,
                           const std::string& where, int32_t* out) const {
  if (!j.contains(key)) return {};
  const json& v = j[key];
  const std::string want = std::string(key) + " must be an array of " + std::to_string(n) +
                           " integers " + meaning;
  if (!v.is_array() || v.size() != n) return Fail(where, want + ", not " + v.dump());
  for (size_t i = 0; i < n; ++i) {
    const json& x = v[i];
    if (!x.is_number_integer() || (x.is_number_unsigned() && x.get<uint64_t>() > INT32_MAX) ||
        (!x.is_number_unsigned() && x.get<int64_t>() < INT32_MIN)) {
      return Fail(where, want + ", not " + v.dump());
    }
    out[i] = x.get<int32_t>();
  }
  return {};
}

Status Importer::ParseActivation(const json& j, const std::string& where,
                                 ir::Activation& out) const {
  if (!j.contains("activation")) return {};
  const json& v = j["activation"];
  for (auto a : {ir::Activation::None, ir::Activation::Relu, ir::Activation::Relu6}) {
    if (v.is_string() && v.get<std::string>() == ir::ActivationName(a)) {
      out = a;
      return {};
    }
  }
  return Fail(where, "activation must be \"none\", \"relu\" or \"relu6\", not " + v.dump());
}

Status Importer::ParseLinear(const json& j, const std::string& where, ir::Op& op) {
  if (j.contains("input_quant")) {
    VKQC_TRY(ParseActivationQuant(j["input_quant"], where + " input_quant", op.linear.input_quant));
  }
  if (j.contains("output_quant")) {
    VKQC_TRY(
        ParseActivationQuant(j["output_quant"], where + " output_quant", op.linear.output_quant));
  }
  VKQC_TRY(ParseBool(j, "fused_relu", where, op.linear.fused_relu));
  VKQC_TRY(ParseBool(j, "fused_relu6", where, op.linear.fused_relu6));
  return ApplyOutputQuant(op.linear.output_quant, op, where);
}

Status Importer::ParseConv2d(const json& j, const std::string& where, ir::Op& op) {
  ir::Conv2dAttrs& a = op.conv2d;
  VKQC_TRY(ParseInts(j, "stride", 2, "[h, w]", where, a.stride));
  VKQC_TRY(ParseInts(j, "padding", 4, "[top, left, bottom, right]", where, a.padding));
  VKQC_TRY(ParseInts(j, "dilation", 2, "[h, w]", where, a.dilation));
  if (j.contains("groups")) {
    const json& v = j["groups"];
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > INT32_MAX) ||
        (!v.is_number_unsigned() && v.get<int64_t>() < INT32_MIN)) {
      return Fail(where, "groups must be an integer, not " + v.dump());
    }
    a.groups = v.get<int32_t>();
  }
  VKQC_TRY(ParseActivation(j, where, a.activation));
  if (j.contains("input_quant")) {
    VKQC_TRY(ParseActivationQuant(j["input_quant"], where + " input_quant", a.input_quant));
  }
  if (j.contains("output_quant")) {
    VKQC_TRY(ParseActivationQuant(j["output_quant"], where + " output_quant", a.output_quant));
  }
  return ApplyOutputQuant(a.output_quant, op, where);
}

Status Importer::ParseAdd(const json& j, const std::string& where, ir::Op& op) {
  VKQC_TRY(ParseActivation(j, where, op.add.activation));
  if (j.contains("output_quant")) {
    VKQC_TRY(ParseActivationQuant(j["output_quant"], where + " output_quant", op.add.output_quant));
  }
  return ApplyOutputQuant(op.add.output_quant, op, where);
}

Status Importer::ParsePool(const json& j, const std::string& where, ir::Op& op) {
  ir::Pool2dAttrs& a = op.pool;
  VKQC_TRY(ParseInts(j, "kernel", 2, "[h, w]", where, a.kernel));
  VKQC_TRY(ParseInts(j, "stride", 2, "[h, w]", where, a.stride));
  VKQC_TRY(ParseInts(j, "padding", 4, "[top, left, bottom, right]", where, a.padding));
  VKQC_TRY(ParseBool(j, "global", where, a.global));
  if (j.contains("output_quant")) {
    VKQC_TRY(ParseActivationQuant(j["output_quant"], where + " output_quant", a.output_quant));
  }
  return ApplyOutputQuant(a.output_quant, op, where);
}

Status Importer::ParseFloat(const json& j, const char* key, const std::string& where, float& out) const {
  if (!j.contains(key)) return {};
  const json& v = j[key];
  if (!v.is_number()) return Fail(where, std::string(key) + " must be a number, not " + v.dump());
  out = v.get<float>();
  return {};
}

Status Importer::ParseInt(const json& j, const char* key, const std::string& where, int32_t& out) const {
  if (!j.contains(key)) return {};
  const json& v = j[key];
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > INT32_MAX) ||
      (!v.is_number_unsigned() && v.get<int64_t>() < INT32_MIN))
    return Fail(where, std::string(key) + " must be a 32-bit integer, not " + v.dump());
  out = v.get<int32_t>();
  return {};
}

Status Importer::ParseNorm(const json& j, const std::string& where, ir::Op& op) {
  return ParseFloat(j, "eps", where, op.norm.eps);
}

Status Importer::ParseRope(const json& j, const std::string& where, ir::Op& op) {
  ir::RopeAttrs& a = op.rope;
  VKQC_TRY(ParseInt(j, "head_dim", where, a.head_dim));
  VKQC_TRY(ParseFloat(j, "theta", where, a.theta));
  VKQC_TRY(ParseInt(j, "max_positions", where, a.max_positions));
  if (j.contains("layout")) {
    const json& v = j["layout"];
    if (v == "half") a.interleaved = false;
    else if (v == "interleaved") a.interleaved = true;
    else return Fail(where, "layout must be \"half\" (pairs i, i + head_dim/2) or \"interleaved\" (pairs 2i, 2i+1), not " + v.dump());
  }
  if (j.contains("scaling")) {
    const json& sc = j["scaling"];
    const std::string w = where + " scaling";
    if (!sc.is_object()) return Fail(w, "must be an object");
    VKQC_TRY(CheckKeys(sc, w, {"type", "factor", "low_freq_factor", "high_freq_factor", "original_max_position"}));
    VKQC_ASSIGN_OR_RETURN(std::string type, String(sc, "type", w));
    if (type != "llama3") return Fail(w, "unknown type " + Quote(type) + " (known: llama3)");
    a.llama3 = true;
    VKQC_TRY(ParseFloat(sc, "factor", w, a.factor));
    VKQC_TRY(ParseFloat(sc, "low_freq_factor", w, a.low_freq_factor));
    VKQC_TRY(ParseFloat(sc, "high_freq_factor", w, a.high_freq_factor));
    VKQC_TRY(ParseInt(sc, "original_max_position", w, a.original_max_position));
  }
  return {};
}

Status Importer::ParseAttention(const json& j, const std::string& where, ir::Op& op) {
  ir::AttentionAttrs& a = op.attention;
  VKQC_TRY(ParseInt(j, "num_heads", where, a.num_heads));
  VKQC_TRY(ParseInt(j, "num_kv_heads", where, a.num_kv_heads));
  VKQC_TRY(ParseInt(j, "head_dim", where, a.head_dim));
  return ParseFloat(j, "scale", where, a.scale);
}

Status Importer::ParseConcat(const json& j, const std::string& where, ir::Op& op) {
  VKQC_TRY(ParseInt(j, "axis", where, op.concat.axis));
  if (j.contains("output_quant"))
    VKQC_TRY(ParseActivationQuant(j["output_quant"], where + " output_quant", op.concat.output_quant));
  return ApplyOutputQuant(op.concat.output_quant, op, where);
}

Status Importer::ParseHardSigmoid(const json& j, const std::string& where, ir::Op& op) {
  VKQC_TRY(ParseFloat(j, "alpha", where, op.unary.alpha));
  return ParseFloat(j, "beta", where, op.unary.beta);
}

// An i8 output declared without a quant takes its input's (resize is a copy).
Status Importer::ParseResize(const json& j, const std::string& where, ir::Op& op) {
  VKQC_TRY(ParseInts(j, "scale", 2, "[h, w]", where, op.resize.scale));
  if (op.inputs.size() == 1 && op.outputs.size() == 1) {
    const ir::Tensor& x = g_.tensors[size_t(op.inputs[0])];
    ir::Tensor& y = g_.tensors[size_t(op.outputs[0])];
    if (x.dtype == ir::DType::I8 && y.dtype == ir::DType::I8 && x.quant && !y.quant) y.quant = x.quant;
  }
  return {};
}

// transpose and reshape copy values: an i8 output declared without a quant takes its input's.
Status Importer::ParseReshape(const json&, const std::string&, ir::Op& op) {
  if (op.inputs.size() == 1 && op.outputs.size() == 1) {
    const ir::Tensor& x = g_.tensors[size_t(op.inputs[0])];
    ir::Tensor& y = g_.tensors[size_t(op.outputs[0])];
    if (x.dtype == ir::DType::I8 && y.dtype == ir::DType::I8 && x.quant && !y.quant) y.quant = x.quant;
  }
  return {};
}

Status Importer::ParseTranspose(const json& j, const std::string& where, ir::Op& op) {
  auto it = j.find("perm");
  if (it == j.end()) return Fail(where, "missing required key 'perm' (the permutation, e.g. [0, 2, 3, 1])");
  const std::string want = "perm must be an array of at most 6 axis indices (e.g. [0, 2, 3, 1]), not ";
  if (!it->is_array() || it->size() > 6) return Fail(where, want + it->dump());
  for (const json& v : *it) {
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > INT32_MAX) ||
        (!v.is_number_unsigned() && v.get<int64_t>() < INT32_MIN))
      return Fail(where, want + it->dump());
    op.transpose.perm.push_back(v.get<int32_t>());
  }
  return ParseReshape(j, where, op);
}

// clip: "min" and "max" are optional (absent: no bound, -inf / +inf).
Status Importer::ParseClip(const json& j, const std::string& where, ir::Op& op) {
  op.unary.alpha = -std::numeric_limits<float>::infinity();
  op.unary.beta = std::numeric_limits<float>::infinity();
  for (const char* key : {"min", "max"}) {
    if (!j.contains(key)) continue;
    const json& v = j[key];
    const double d = v.is_number() ? v.get<double>() : 0.0;
    if (!v.is_number() || !(std::fabs(d) <= double(std::numeric_limits<float>::max())))
      return Fail(where, std::string(key) + " must be a finite number in float range (leave it out for no bound), not " +
                             v.dump());
    (key[1] == 'i' ? op.unary.alpha : op.unary.beta) = float(d);
  }
  return {};
}

const std::vector<OpSyntax>& OpSyntaxes() {
  static const std::vector<OpSyntax> kOps = {
      {"linear",
       ir::OpType::Linear,
       {"input_quant", "output_quant", "fused_relu", "fused_relu6"},
       &Importer::ParseLinear},
      {"mul", ir::OpType::Mul, {}, &Importer::ParseNoAttrs},
      {"silu", ir::OpType::Silu, {}, &Importer::ParseNoAttrs},
      {"quantize", ir::OpType::Quantize, {}, &Importer::ParseNoAttrs},
      {"dequantize", ir::OpType::Dequantize, {}, &Importer::ParseNoAttrs},
      {"conv2d",
       ir::OpType::Conv2d,
       {"stride", "padding", "dilation", "groups", "activation", "input_quant", "output_quant"},
       &Importer::ParseConv2d},
      {"add", ir::OpType::Add, {"activation", "output_quant"}, &Importer::ParseAdd},
      {"avg_pool2d",
       ir::OpType::AvgPool2d,
       {"kernel", "stride", "padding", "global", "output_quant"},
       &Importer::ParsePool},
      {"embedding", ir::OpType::Embedding, {}, &Importer::ParseNoAttrs},
      {"rms_norm", ir::OpType::RmsNorm, {"eps"}, &Importer::ParseNorm},
      {"rope",
       ir::OpType::Rope,
       {"head_dim", "theta", "layout", "max_positions", "scaling"},
       &Importer::ParseRope},
      {"attention", ir::OpType::Attention, {"num_heads", "num_kv_heads", "head_dim", "scale"},
       &Importer::ParseAttention},
      {"argmax", ir::OpType::Argmax, {}, &Importer::ParseNoAttrs},
      {"max_pool2d",
       ir::OpType::MaxPool2d,
       {"kernel", "stride", "padding", "global", "output_quant"},
       &Importer::ParsePool},
      {"concat", ir::OpType::Concat, {"axis", "output_quant"}, &Importer::ParseConcat},
      {"sigmoid", ir::OpType::Sigmoid, {}, &Importer::ParseNoAttrs},
      {"hard_sigmoid", ir::OpType::HardSigmoid, {"alpha", "beta"}, &Importer::ParseHardSigmoid},
      {"hard_swish", ir::OpType::HardSwish, {}, &Importer::ParseNoAttrs},
      {"resize_nearest", ir::OpType::ResizeNearest, {"scale"}, &Importer::ParseResize},
      {"softmax", ir::OpType::Softmax, {}, &Importer::ParseNoAttrs},
      {"transpose", ir::OpType::Transpose, {"perm"}, &Importer::ParseTranspose},
      {"reshape", ir::OpType::Reshape, {}, &Importer::ParseReshape},
      {"clip", ir::OpType::Clip, {"min", "max"}, &Importer::ParseClip},
  };
  return kOps;
}

Status Importer::ParseOp(const json& j, size_t index) {
  std::string where = Where("ops", index, "");
  if (!j.is_object()) return Fail(where, "must be an object");
  VKQC_ASSIGN_OR_RETURN(std::string type, String(j, "type", where));
  ir::Op op;
  if (j.contains("name")) {
    VKQC_ASSIGN_OR_RETURN(op.name, String(j, "name", where));
  } else {
    op.name = type + "_" + std::to_string(index);
  }
  where = Where("ops", index, op.name);
  const OpSyntax* syntax = nullptr;
  std::vector<std::string> known;
  for (const OpSyntax& s : OpSyntaxes()) {
    known.push_back(s.type);
    if (type == s.type) syntax = &s;
  }
  if (!syntax)
    return Fail(where, "unknown op type " + Quote(type) + " (known: " + Join(known) + ")");
  std::vector<std::string> keys = {"type", "name", "inputs", "outputs"};
  keys.insert(keys.end(), syntax->attr_keys.begin(), syntax->attr_keys.end());
  VKQC_TRY(CheckKeys(j, where, keys));
  op.type = syntax->op_type;
  VKQC_ASSIGN_OR_RETURN(op.inputs, TensorList(j, "inputs", where));
  VKQC_ASSIGN_OR_RETURN(op.outputs, TensorList(j, "outputs", where));
  VKQC_TRY((this->*syntax->parse)(j, where, op));
  g_.ops.push_back(std::move(op));
  return {};
}

}  // namespace vkqc::json_import
