// JSON authoring format -> IR (docs/graph-json.md is the specification). Every key is checked
// against a known set so typos fail loudly; constants are views into the safetensors bytes
// except where an import conversion (u8 -> i8, one-value-per-byte int4 -> packed) needs new
// bytes.
#include "compiler/common/half.h"
#include "compiler/graph/import_json.h"
#include "compiler/graph/import_json_importer.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "compiler/graph/safetensors.h"
#include "compiler/graph/verify.h"
#include "compiler/graph/vkqg_io.h"

namespace vkqc::json_import {
namespace {

constexpr const char* kFormat = "vkqc-graph";
constexpr int kVersion = 1;

std::string ShapeText(const std::vector<int64_t>& shape, const std::string& sym) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i] == ir::kSymbolicDim ? sym : std::to_string(shape[i]);
  }
  return s + "]";
}

std::optional<ir::DType> ParseDType(const std::string& s) {
  for (auto t : {ir::DType::F32, ir::DType::F16, ir::DType::I8, ir::DType::U8, ir::DType::I4,
                 ir::DType::U4, ir::DType::I32}) {
    if (s == ir::DTypeName(t)) return t;
  }
  return std::nullopt;
}

// The safetensors dtype that holds a declared dtype (4-bit types are packed two per byte in U8).
const char* StorageDType(ir::DType t) {
  switch (t) {
    case ir::DType::F32:
      return "F32";
    case ir::DType::F16:
      return "F16";
    case ir::DType::I8:
      return "I8";
    case ir::DType::U8:
      return "U8";
    case ir::DType::I4:
      return "U8";
    case ir::DType::U4:
      return "U8";
    case ir::DType::I32:
      return "I32";
  }
  return "?";
}

}  // namespace

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::optional<ir::Scheme> ParseScheme(const std::string& s) {
  for (int i = 0; i <= static_cast<int>(ir::Scheme::Q4GMW); ++i) {
    auto sc = static_cast<ir::Scheme>(i);
    if (s == ir::SchemeName(sc)) return sc;
  }
  return std::nullopt;
}

std::string Where(const char* list, size_t i, const std::string& name) {
  std::string s = list;  // appended piece by piece: the one-expression form trips GCC 12's -Wrestrict
  s += "[";
  s += std::to_string(i);
  s += "]";
  if (!name.empty()) s += " '" + name + "'";
  return s;
}

Status Importer::CheckKeys(const json& obj, const std::string& where,
                           const std::vector<std::string>& allowed) const {
  for (const auto& [key, value] : obj.items()) {
    bool known = key == "comment";
    for (const std::string& a : allowed) known = known || key == a;
    if (!known) {
      return Fail(where,
                  "unknown key " + Quote(key) + " (known keys: " + Join(allowed) + ", comment)");
    }
  }
  return {};
}

Result<std::string> Importer::String(const json& obj, const char* key,
                                     const std::string& where) const {
  auto it = obj.find(key);
  if (it == obj.end()) return Fail(where, std::string("missing required key '") + key + "'");
  if (!it->is_string() || it->get<std::string>().empty()) {
    return Fail(where, std::string("'") + key + "' must be a non-empty string");
  }
  return it->get<std::string>();
}

Result<std::vector<int>> Importer::TensorList(const json& obj, const char* key,
                                              const std::string& where) const {
  auto it = obj.find(key);
  if (it == obj.end()) return Fail(where, std::string("missing required key '") + key + "'");
  if (!it->is_array())
    return Fail(where, std::string("'") + key + "' must be an array of tensor names");
  std::vector<int> out;
  for (const json& n : *it) {
    if (!n.is_string()) {
      return Fail(where, std::string("'") + key + "' must hold tensor names, found " + n.dump());
    }
    auto t = tensor_index_.find(n.get<std::string>());
    if (t == tensor_index_.end()) {
      return Fail(where, std::string(key) + " names tensor " + Quote(n.get<std::string>()) +
                             ", which is not declared in \"tensors\"");
    }
    out.push_back(static_cast<int>(t->second));
  }
  return out;
}

Result<const SafetensorsTensor*> Importer::Weight(const std::string& name,
                                                  const std::string& where) {
  if (weights_path_.empty()) {
    return Fail(where, "refers to weight " + Quote(name) +
                           " but the graph names no weights file; add \"weights\": "
                           "\"NAME.safetensors\" at the top level");
  }
  if (!weights_) {
    auto w = ReadSafetensors(weights_path_);
    if (!w.ok()) return Fail(where, "cannot load the weights: " + w.error().message);
    weights_ = std::move(w).value();
  }
  auto it = weights_->find(name);
  if (it == weights_->end()) {
    std::vector<std::string> have;
    for (const auto& [n, t] : *weights_) {
      if (have.size() == 8) {
        have.push_back("...");
        break;
      }
      have.push_back(n);
    }
    return Fail(where, "weight " + Quote(name) + " is not in " + weights_path_ + " (it holds: " +
                           (have.empty() ? std::string("nothing") : Join(have)) + ")");
  }
  return &it->second;
}

// A JSON array of numbers, or the name of a safetensors tensor (F32/F64/F16/BF16, flattened).
Result<std::vector<float>> Importer::Floats(const json& v, const std::string& where) {
  std::vector<float> out;
  if (v.is_array()) {
    for (const json& x : v) {
      if (!x.is_number()) return Fail(where, "expected numbers, found " + x.dump());
      out.push_back(x.get<float>());
    }
    return out;
  }
  if (!v.is_string()) return Fail(where, "expected an array of numbers or a weight name");
  VKQC_ASSIGN_OR_RETURN(const SafetensorsTensor* t, Weight(v.get<std::string>(), where));
  const uint8_t* p = t->data.data();
  const size_t n = t->data.size;
  // safetensors is little-endian, like every host vkqc runs on.
  if (t->dtype == "F32") {
    out.resize(n / 4);
    if (n) std::memcpy(out.data(), p, n);
  } else if (t->dtype == "F64") {
    for (size_t i = 0; i < n / 8; ++i) {
      double d;
      std::memcpy(&d, p + 8 * i, 8);
      out.push_back(static_cast<float>(d));
    }
  } else if (t->dtype == "F16" || t->dtype == "BF16") {
    for (size_t i = 0; i < n / 2; ++i) {
      uint16_t h = static_cast<uint16_t>(p[2 * i] | (p[2 * i + 1] << 8));
      if (t->dtype == "F16") {
        out.push_back(HalfToFloat(h));
      } else {
        uint32_t bits = uint32_t{h} << 16;
        float f;
        std::memcpy(&f, &bits, 4);
        out.push_back(f);
      }
    }
  } else {
    return Fail(where, "weight " + Quote(v.get<std::string>()) + " in " + weights_path_ + " is " +
                           t->dtype + "; scales must be F32, F64, F16 or BF16");
  }
  return out;
}

// A JSON array of integers, or the name of a safetensors integer tensor (flattened).
Result<std::vector<int32_t>> Importer::Ints(const json& v, const std::string& where) {
  std::vector<int32_t> out;
  auto push = [&](int64_t x) -> Status {
    if (x < INT32_MIN || x > INT32_MAX) return Fail(where, std::to_string(x) + " is out of range");
    out.push_back(static_cast<int32_t>(x));
    return {};
  };
  if (v.is_array()) {
    for (const json& x : v) {
      if (!x.is_number_integer()) return Fail(where, "expected integers, found " + x.dump());
      if (x.is_number_unsigned() && x.get<uint64_t>() > INT32_MAX) {
        return Fail(where, x.dump() + " is out of range");
      }
      VKQC_TRY(push(x.get<int64_t>()));
    }
    return out;
  }
  if (!v.is_string()) return Fail(where, "expected an array of integers or a weight name");
  VKQC_ASSIGN_OR_RETURN(const SafetensorsTensor* t, Weight(v.get<std::string>(), where));
  const uint8_t* p = t->data.data();
  const size_t n = t->data.size;
  auto load = [&](size_t width, bool is_signed) -> Status {
    for (size_t i = 0; i < n / width; ++i) {
      uint64_t u = 0;
      for (size_t b = 0; b < width; ++b) u |= uint64_t{p[i * width + b]} << (8 * b);
      int64_t x = static_cast<int64_t>(u);
      if (is_signed && width < 8 && (u >> (8 * width - 1)) & 1) x -= int64_t{1} << (8 * width);
      VKQC_TRY(push(x));
    }
    return {};
  };
  if (t->dtype == "I8") {
    VKQC_TRY(load(1, true));
  } else if (t->dtype == "U8") {
    VKQC_TRY(load(1, false));
  } else if (t->dtype == "I16") {
    VKQC_TRY(load(2, true));
  } else if (t->dtype == "I32") {
    VKQC_TRY(load(4, true));
  } else if (t->dtype == "I64") {
    VKQC_TRY(load(8, true));
  } else {
    return Fail(where, "weight " + Quote(v.get<std::string>()) + " in " + weights_path_ + " is " +
                           t->dtype + "; zero points must be I8, U8, I16, I32 or I64");
  }
  return out;
}

Status Importer::ParseTensorQuant(const json& j, const std::string& where, ir::Quant& q) {
  if (!j.is_object()) return Fail(where, "\"quant\" must be an object");
  VKQC_ASSIGN_OR_RETURN(std::string scheme, String(j, "scheme", where + " quant"));
  auto s = ParseScheme(scheme);
  if (!s) {
    return Fail(where, "unknown quantization scheme " + Quote(scheme) +
                           " (known: none, q8csw, q4gsw, q4gaw, q8ta, dq8ca, q8to, float, q8pc, q8gsw, q4gmw)");
  }
  q.scheme = *s;
  if (q.scheme == ir::Scheme::DQ8CA) {
    for (const char* key : {"scale", "zero_point", "scales", "zero_points"}) {
      if (j.contains(key)) {
        return Fail(where, std::string("quant dq8ca takes no ") + Quote(key) +
                               ": per-token scales and zero points are computed at run time; "
                               "remove it, or use q8ta for a fixed scale and zero point");
      }
    }
  }
  // Per-tensor schemes may give their one scale and zero point as "scale" / "zero_point".
  const bool per_tensor = q.scheme == ir::Scheme::Q8TA || q.scheme == ir::Scheme::Q8TO;
  std::vector<std::string> keys = {"scheme", "scales", "zero_points", "axis", "group_size"};
  if (q.scheme == ir::Scheme::Q4GMW) keys.push_back("mins");
  if (per_tensor) keys.insert(keys.begin() + 1, {"scale", "zero_point"});
  VKQC_TRY(CheckKeys(j, where + " quant", keys));
  if (j.contains("scale") || j.contains("zero_point")) {
    if (j.contains("scales") || j.contains("zero_points")) {
      return Fail(where, "quant gives both scale/zero_point and scales/zero_points; use one form");
    }
    const json& sc = j.contains("scale") ? j["scale"] : json();
    if (!sc.is_number()) return Fail(where, "quant " + scheme + " needs \"scale\": a number > 0");
    q.scales = {sc.get<float>()};
    q.zero_points = {0};
    if (j.contains("zero_point")) {
      const json& z = j["zero_point"];
      if (!z.is_number_integer()) return Fail(where, "quant zero_point must be an integer");
      const int64_t zp = z.is_number_unsigned()
                             ? static_cast<int64_t>(std::min<uint64_t>(z.get<uint64_t>(), 1 << 20))
                             : z.get<int64_t>();
      if (u8_quant_ ? (zp < 0 || zp > 255) : (zp < -128 || zp > 127)) {
        return Fail(where, "quant zero_point " + z.dump() + (u8_quant_ ? " is outside uint8 [0, 255]"
                                                                       : " is outside int8 [-128, 127]"));
      }
      q.zero_points = {static_cast<int32_t>(zp)};
    }
  }
  if (j.contains("scales")) {
    VKQC_ASSIGN_OR_RETURN(q.scales, Floats(j["scales"], where + " quant scales"));
  }
  if (j.contains("zero_points")) {
    VKQC_ASSIGN_OR_RETURN(q.zero_points, Ints(j["zero_points"], where + " quant zero_points"));
  }
  if (j.contains("mins")) {
    VKQC_ASSIGN_OR_RETURN(q.mins, Floats(j["mins"], where + " quant mins"));
  }
  for (auto [key, field] : {std::pair{"axis", &q.axis}, std::pair{"group_size", &q.group_size}}) {
    if (!j.contains(key)) continue;
    const json& v = j[key];
    if (!v.is_number_unsigned() || v.get<uint64_t>() > INT32_MAX) {
      return Fail(where, std::string("quant ") + key + " must be a non-negative integer");
    }
    *field = v.get<int32_t>();
  }
  return {};
}

// DESIGN 4: uint8 becomes int8 at import (q - 128, zp - 128).
Status Importer::ConvertU8(ir::Tensor& t, const std::string& where) const {
  ir::Quant& q = *t.quant;
  if (q.scheme == ir::Scheme::Q8CSW) {
    if (q.zero_points.size() != q.scales.size()) {
      return Fail(where,
                  "u8 q8csw weights need one zero point per channel (128 for every "
                  "channel, so they become symmetric int8)");
    }
    for (size_t i = 0; i < q.zero_points.size(); ++i) {
      if (q.zero_points[i] != 128) {
        return Fail(where, "u8 q8csw weight channel " + std::to_string(i) + " has zero point " +
                               std::to_string(q.zero_points[i]) +
                               "; q8csw is symmetric, so every u8 zero point must be 128");
      }
    }
  }
  for (int32_t& zp : q.zero_points) {
    if (zp < 0 || zp > 255) {
      return Fail(where, "u8 zero point " + std::to_string(zp) + " is outside [0, 255]");
    }
    zp -= 128;
  }
  if (q.scheme == ir::Scheme::Q8CSW) q.zero_points.clear();
  if (t.data) {
    auto bytes =
        std::make_shared<std::vector<uint8_t>>(t.data->data(), t.data->data() + t.data->size);
    for (uint8_t& b : *bytes) b ^= 0x80;  // q - 128 as int8 == q with the top bit flipped
    t.data = ir::ConstData{std::move(bytes), 0, t.data->size};
  }
  t.dtype = ir::DType::I8;
  return {};
}

// A declared i4/u4 constant from its safetensors entry `w` (described as `in`): either packed
// (U8, two values per byte, low nibble first; shape [..., K/2] or any shape of that many bytes)
// or one value per byte (U8, or I8 for i4, with exactly the declared shape), which is range
// checked and packed. i4 bytes are read as two's-complement int8.
Status Importer::ImportInt4(ir::Tensor& t, const SafetensorsTensor& w, const std::string& in,
                            const std::string& where) const {
  const bool is_signed = t.dtype == ir::DType::I4;
  const int64_t n = t.NumElements();
  const uint64_t want_bytes = (static_cast<uint64_t>(n) + 1) / 2;
  if (w.shape == t.shape && w.data.size == static_cast<uint64_t>(n)) {
    auto bytes = std::make_shared<std::vector<uint8_t>>(want_bytes, 0);
    const uint8_t* p = w.data.data();
    for (int64_t i = 0; i < n; ++i) {
      const int v = is_signed ? static_cast<int8_t>(p[i]) : p[i];
      if (v < (is_signed ? -8 : 0) || v > (is_signed ? 7 : 15)) {
        std::string at;
        for (size_t d = t.shape.size(), rest = static_cast<size_t>(i); d-- > 0;) {
          at = std::to_string(rest % t.shape[d]) + (at.empty() ? "" : ", ") + at;
          rest /= t.shape[d];
        }
        return Fail(where, in + " holds one value per byte, and element [" + at + "] is " +
                               std::to_string(v) + ", outside the " + ir::DTypeName(t.dtype) +
                               " range " +
                               (is_signed ? "[-8, 7] (bytes are read as int8)" : "[0, 15]") +
                               "; fix the export, or store packed nibbles");
      }
      (*bytes)[i / 2] |= static_cast<uint8_t>((v & 0x0F) << (4 * (i % 2)));
    }
    t.data = ir::ConstData{std::move(bytes), 0, want_bytes};
    return {};
  }
  if (w.dtype == "U8" && w.data.size == want_bytes) {
    t.data = w.data;
    return {};
  }
  std::vector<int64_t> packed_shape = t.shape;
  if (!packed_shape.empty()) packed_shape.back() = (packed_shape.back() + 1) / 2;
  return Fail(where, "declared " + std::string(ir::DTypeName(t.dtype)) + " " +
                         ShapeText(t.shape, g_.symbolic_dim) + " needs a U8 entry of shape " +
                         ShapeText(packed_shape, g_.symbolic_dim) +
                         " (two values per byte, low nibble first: " + std::to_string(want_bytes) +
                         " bytes) or " + ShapeText(t.shape, g_.symbolic_dim) +
                         " (one value per byte), but " + in + " is " + w.dtype + " " +
                         ShapeText(w.shape, g_.symbolic_dim));
}

Status Importer::ParseTensor(const json& j, size_t index) {
  std::string where = Where("tensors", index, "");
  if (!j.is_object()) return Fail(where, "must be an object");
  VKQC_ASSIGN_OR_RETURN(std::string name, String(j, "name", where));
  where = Where("tensors", index, name);
  VKQC_TRY(CheckKeys(j, where, {"name", "shape", "dtype", "data", "quant", "state"}));
  auto [it, fresh] = tensor_index_.emplace(name, index);
  if (!fresh) {
    return Fail(where, "name is already used by tensors[" + std::to_string(it->second) +
                           "]; tensor names must be unique");
  }
  ir::Tensor t;
  t.name = name;

  auto shape = j.find("shape");
  if (shape == j.end() || !shape->is_array()) {
    return Fail(where, "needs \"shape\": an array of dimensions");
  }
  for (const json& d : *shape) {
    if (d.is_string() && d.get<std::string>() == g_.symbolic_dim) {
      t.shape.push_back(ir::kSymbolicDim);
    } else if (d.is_number_unsigned() && d.get<uint64_t>() >= 1 &&
               d.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) {
      t.shape.push_back(d.get<int64_t>());
    } else {
      return Fail(where, "dimension " + d.dump() +
                             " must be an integer >= 1 or the symbolic "
                             "dimension \"" +
                             g_.symbolic_dim + "\"");
    }
  }

  if (j.contains("dtype")) {
    VKQC_ASSIGN_OR_RETURN(std::string dt, String(j, "dtype", where));
    auto parsed = ParseDType(dt);
    if (!parsed) {
      return Fail(where, "unknown dtype " + Quote(dt) + " (known: f32, f16, i8, u8, i4, u4, i32)");
    }
    t.dtype = *parsed;
  }

  if (j.contains("data")) {
    VKQC_ASSIGN_OR_RETURN(std::string src, String(j, "data", where));
    VKQC_ASSIGN_OR_RETURN(const SafetensorsTensor* w, Weight(src, where));
    const std::string in = Quote(src) + " in " + weights_path_;
    const char* storage = StorageDType(t.dtype);
    const bool packed = ir::DTypeBits(t.dtype) < 8;
    if (w->dtype != storage && !(t.dtype == ir::DType::I4 && w->dtype == "I8")) {
      return Fail(where, std::string("is declared ") + ir::DTypeName(t.dtype) + " but " + in +
                             " is " + w->dtype +
                             "; declare the matching dtype or store the "
                             "weight as " +
                             storage);
    }
    for (int64_t d : t.shape) {
      if (d == ir::kSymbolicDim) {
        return Fail(where, "a constant cannot have the symbolic dimension; give its size");
      }
    }
    if (packed) {
      VKQC_TRY(ImportInt4(t, *w, in, where));
    } else if (w->shape != t.shape) {
      return Fail(where, "declared shape " + ShapeText(t.shape, g_.symbolic_dim) + " but " + in +
                             " has shape " + ShapeText(w->shape, g_.symbolic_dim));
    } else {
      t.data = w->data;
    }
  }

  VKQC_TRY(ParseBool(j, "state", where, t.state));
  if (t.state && t.data) return Fail(where, "a state tensor (\"state\": true) cannot have \"data\"");
  if (j.contains("quant")) {
    t.quant.emplace();
    u8_quant_ = t.dtype == ir::DType::U8;  // u8 tensors give uint8 parameters, converted below
    VKQC_TRY(ParseTensorQuant(j["quant"], where, *t.quant));
    u8_quant_ = false;
    if (t.dtype == ir::DType::U8) VKQC_TRY(ConvertU8(t, where));
  }
  g_.tensors.push_back(std::move(t));
  return {};
}

// "line L, column C" of a 1-based byte position in `text`.
std::string LineColumn(const std::string& text, size_t byte) {
  size_t line = 1;
  size_t col = 1;
  for (size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

Result<ir::Graph> Importer::Run() {
  VKQC_ASSIGN_OR_RETURN(auto bytes, ReadFileBytes(path_));
  const std::string text(bytes->begin(), bytes->end());
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    // e.what() reads "[json.exception.parse_error.101] parse error at line L, column C: why".
    std::string why = e.what();
    size_t colon = why.find(": ", why.find("column"));
    if (colon != std::string::npos) why = why.substr(colon + 2);
    return UserError(path_ + ":" + LineColumn(text, e.byte) + ": invalid JSON: " + why);
  } catch (const json::exception& e) {
    // The parser's other refusals (a number out of range, e.g. 1e999: found by the fuzz target,
    // it escaped as an exception and aborted the process).
    return UserError(path_ + ": invalid JSON: " + e.what());
  }
  if (!root.is_object()) return UserError(path_ + ": the top level must be a JSON object");
  VKQC_TRY(CheckKeys(
      root, "top level",
      {"format", "version", "weights", "symbolic_dim", "inputs", "outputs", "tensors", "ops"}));
  auto format = root.find("format");
  if (format == root.end() || *format != kFormat) {
    return UserError(path_ + ": \"format\" must be \"" + kFormat +
                     "\"; is this a vkqc graph JSON file?");
  }
  auto version = root.find("version");
  if (version == root.end() || !version->is_number_integer() || *version != kVersion) {
    return UserError(path_ + ": \"version\" must be " + std::to_string(kVersion) +
                     " (the only version this vkqc reads)");
  }
  if (root.contains("weights")) {
    VKQC_ASSIGN_OR_RETURN(std::string w, String(root, "weights", "top level"));
    std::filesystem::path wp(w);
    weights_path_ =
        wp.is_absolute() ? w : (std::filesystem::path(path_).parent_path() / wp).string();
  }
  if (root.contains("symbolic_dim")) {
    VKQC_ASSIGN_OR_RETURN(g_.symbolic_dim, String(root, "symbolic_dim", "top level"));
  }
  for (const char* list : {"tensors", "ops"}) {
    if (!root.contains(list) || !root[list].is_array()) {
      return UserError(path_ + ": missing \"" + list + "\": an array");
    }
  }
  for (size_t i = 0; i < root["tensors"].size(); ++i) VKQC_TRY(ParseTensor(root["tensors"][i], i));
  VKQC_ASSIGN_OR_RETURN(g_.inputs, TensorList(root, "inputs", "top level"));
  VKQC_ASSIGN_OR_RETURN(g_.outputs, TensorList(root, "outputs", "top level"));
  for (size_t i = 0; i < root["ops"].size(); ++i) VKQC_TRY(ParseOp(root["ops"][i], i));
  VKQC_TRY(VerifyGraph(g_, path_));
  return std::move(g_);
}

}  // namespace vkqc::json_import

namespace vkqc {

Result<ir::Graph> ImportJsonGraph(const std::string& json_path) {
  return json_import::Importer(json_path).Run();
}

}  // namespace vkqc
