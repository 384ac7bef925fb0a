#include "compiler/common/half.h"
#include "compiler/graph/onnx.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "compiler/graph/vkqg_io.h"

namespace vkqc::onnx {
namespace {

// One length-delimited span of the wire format.
struct Span {
  const uint8_t* p = nullptr;
  const uint8_t* end = nullptr;
  bool empty() const { return p >= end; }
  size_t size() const { return size_t(end - p); }
};

// A field read from a span: its number, wire type and value (varint/fixed) or payload span.
struct Field {
  uint32_t number = 0;
  int wire = 0;  // 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32
  uint64_t v = 0;
  Span bytes;
};

class Decoder {
 public:
  Decoder(Span s, std::string what) : s_(s), what_(std::move(what)) {}
  bool done() const { return s_.empty(); }
  // Reads the next field; an error names the message being read.
  Status Next(Field& f) {
    uint64_t key = 0;
    VKQC_TRY(Varint(key));
    f.number = uint32_t(key >> 3);
    f.wire = int(key & 7);
    if (f.number == 0 || (key >> 3) > 0x1fffffff) return Bad("field number 0 or out of range");
    switch (f.wire) {
      case 0: return Varint(f.v);
      case 1:
        if (s_.size() < 8) return Bad("truncated fixed64");
        std::memcpy(&f.v, s_.p, 8);
        s_.p += 8;
        return {};
      case 5: {
        if (s_.size() < 4) return Bad("truncated fixed32");
        uint32_t x;
        std::memcpy(&x, s_.p, 4);
        f.v = x;
        s_.p += 4;
        return {};
      }
      case 2: {
        uint64_t n = 0;
        VKQC_TRY(Varint(n));
        if (n > s_.size()) return Bad("length " + std::to_string(n) + " runs past the end");
        f.bytes = {s_.p, s_.p + n};
        s_.p += n;
        return {};
      }
      default: return Bad("unsupported wire type " + std::to_string(f.wire));
    }
  }
  Error Bad(const std::string& m) const { return UserError(what_ + ": malformed protobuf (" + m + ")"); }

 private:
  Status Varint(uint64_t& out) {
    out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (s_.empty()) return Bad("truncated varint");
      uint8_t b = *s_.p++;
      out |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return {};
    }
    return Bad("varint longer than 10 bytes");
  }
  Span s_;
  std::string what_;
};

std::string Str(Span s) { return std::string(reinterpret_cast<const char*>(s.p), s.size()); }

Status Expect(const Field& f, int wire, const std::string& what, const char* field) {
  if (f.wire != wire)
    return UserError(what + ": field '" + field + "' has wire type " + std::to_string(f.wire) + ", expected " +
                     std::to_string(wire));
  return {};
}

// A string (or bytes) field.
Status ReadString(const Field& f, const std::string& what, const char* field, std::string& out) {
  VKQC_TRY(Expect(f, 2, what, field));
  out = Str(f.bytes);
  return {};
}

// Repeated scalar fields arrive packed (one length-delimited run) or one value per field.
template <typename T, typename Conv>
Status Repeated(const Field& f, int elem_wire, std::vector<T>& out, const std::string& what, Conv conv) {
  if (f.wire == elem_wire) {
    out.push_back(conv(f.v));
    return {};
  }
  if (f.wire != 2) return UserError(what + ": repeated field has wire type " + std::to_string(f.wire));
  Span s = f.bytes;
  if (elem_wire == 5 || elem_wire == 1) {
    size_t w = elem_wire == 5 ? 4 : 8;
    if (s.size() % w) return UserError(what + ": packed fixed-width run of " + std::to_string(s.size()) + " bytes");
    out.reserve(out.size() + s.size() / w);
    for (; s.p < s.end; s.p += w) {
      uint64_t v = 0;
      std::memcpy(&v, s.p, w);
      out.push_back(conv(v));
    }
    return {};
  }
  while (!s.empty()) {  // a packed varint run
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      if (s.empty() || shift >= 64) return UserError(what + ": truncated packed varint");
      uint8_t b = *s.p++;
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    out.push_back(conv(v));
  }
  return {};
}

float AsFloat(uint64_t v) {
  uint32_t x = uint32_t(v);
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
double AsDouble(uint64_t v) {
  double d;
  std::memcpy(&d, &v, 8);
  return d;
}

Status ParseStringEntry(Span s, const std::string& what, std::string& k, std::string& val) {
  Decoder d(s, what);
  Field f;
  while (!d.done()) {
    VKQC_TRY(d.Next(f));
    if (f.number == 1) {
      VKQC_TRY(ReadString(f, what, "key", k));
    } else if (f.number == 2) {
      VKQC_TRY(ReadString(f, what, "value", val));
    }
  }
  return {};
}

Status ParseTensorSpan(Span s, const std::string& what, Tensor& t) {
  Decoder d(s, what);
  Field f;
  while (!d.done()) {
    VKQC_TRY(d.Next(f));
    switch (f.number) {
      case 1: VKQC_TRY(Repeated(f, 0, t.dims, what, [](uint64_t v) { return int64_t(v); })); break;
      case 2:
        VKQC_TRY(Expect(f, 0, what, "data_type"));
        t.data_type = int32_t(f.v);
        break;
      case 4: VKQC_TRY(Repeated(f, 5, t.float_data, what, AsFloat)); break;
      case 5: VKQC_TRY(Repeated(f, 0, t.int32_data, what, [](uint64_t v) { return int64_t(int32_t(v)); })); break;
      case 6: t.string_count++; break;
      case 7: VKQC_TRY(Repeated(f, 0, t.int64_data, what, [](uint64_t v) { return int64_t(v); })); break;
      case 8:
        VKQC_TRY(ReadString(f, what, "name", t.name));
        break;
      case 9:
        VKQC_TRY(Expect(f, 2, what, "raw_data"));
        t.raw = f.bytes.p;
        t.raw_size = f.bytes.size();
        t.has_raw = true;
        break;
      case 10: VKQC_TRY(Repeated(f, 1, t.double_data, what, AsDouble)); break;
      case 11: VKQC_TRY(Repeated(f, 0, t.uint64_data, what, [](uint64_t v) { return v; })); break;
      case 13: {
        VKQC_TRY(Expect(f, 2, what, "external_data"));
        std::string k, v;
        VKQC_TRY(ParseStringEntry(f.bytes, what, k, v));
        t.external_data[k] = v;
        break;
      }
      case 14:
        VKQC_TRY(Expect(f, 0, what, "data_location"));
        t.external = f.v == 1;
        break;
      default: break;
    }
  }
  return {};
}

Status ParseShape(Span s, const std::string& what, ValueInfo& vi) {
  Decoder d(s, what);
  Field f;
  vi.has_shape = true;
  while (!d.done()) {
    VKQC_TRY(d.Next(f));
    if (f.number != 1) continue;
    VKQC_TRY(Expect(f, 2, what, "dim"));
    Dim dim;
    Decoder dd(f.bytes, what);
    Field g;
    while (!dd.done()) {
      VKQC_TRY(dd.Next(g));
      if (g.number == 1 && g.wire == 0) {
        dim.has_value = true;
        dim.value = int64_t(g.v);
      } else if (g.number == 2 && g.wire == 2) {
        dim.param = Str(g.bytes);
      }
    }
    vi.dims.push_back(std::move(dim));
  }
  return {};
}

Status ParseValueInfo(Span s, const std::string& what, ValueInfo& vi) {
  Decoder d(s, what);
  Field f;
  while (!d.done()) {
    VKQC_TRY(d.Next(f));
    if (f.number == 1) {
      VKQC_TRY(ReadString(f, what, "name", vi.name));
    } else if (f.number == 2) {
      VKQC_TRY(Expect(f, 2, what, "type"));
      Decoder td(f.bytes, what);
      Field g;
      while (!td.done()) {
        VKQC_TRY(td.Next(g));
        if (g.number != 1 || g.wire != 2) continue;  // only TypeProto.tensor_type
        vi.is_tensor = true;
        Decoder tt(g.bytes, what);
        Field h;
        while (!tt.done()) {
          VKQC_TRY(tt.Next(h));
          if (h.number == 1 && h.wire == 0) vi.elem_type = int32_t(h.v);
          if (h.number == 2 && h.wire == 2) VKQC_TRY(ParseShape(h.bytes, what, vi));
        }
      }
    }
  }
  return {};
}

Status ParseAttribute(Span s, const std::string& what, Attribute& a) {
  Decoder d(s, what);
  Field f;
  while (!d.done()) {
    VKQC_TRY(d.Next(f));
    switch (f.number) {
      case 1:
        VKQC_TRY(ReadString(f, what, "name", a.name));
        break;
      case 20:
        VKQC_TRY(Expect(f, 0, what, "type"));
        a.type = int32_t(f.v);
        break;
      case 2:
        VKQC_TRY(Expect(f, 5, what, "f"));
        a.f = AsFloat(f.v);
        break;
      case 3:
        VKQC_TRY(Expect(f, 0, what, "i"));
        a.i = int64_t(f.v);
        break;
      case 4:
        VKQC_TRY(ReadString(f, what, "s", a.s));
        break;
      case 5:
        VKQC_TRY(Expect(f, 2, what, "t"));
        a.t = std::make_shared<Tensor>();
        VKQC_TRY(ParseTensorSpan(f.bytes, what + " attribute '" + a.name + "'", *a.t));
        break;
      case 7: VKQC_TRY(Repeated(f, 5, a.floats, what, AsFloat)); break;
      case 8: VKQC_TRY(Repeated(f, 0, a.ints, what, [](uint64_t v) { return int64_t(v); })); break;
      case 9:
        VKQC_TRY(Expect(f, 2, what, "strings"));
        a.strings.push_back(Str(f.bytes));
        break;
      default: break;  // graphs, sparse tensors, type protos: not used by any op vkqc imports
    }
  }
  return {};
}

Status ParseNode(Span s, const std::string& what, Node& n) {
  Decoder d(s, what);
  Field f;
  while (!d.done()) {
    VKQC_TRY(d.Next(f));
    switch (f.number) {
      case 1:
        VKQC_TRY(Expect(f, 2, what, "input"));
        n.inputs.push_back(Str(f.bytes));
        break;
      case 2:
        VKQC_TRY(Expect(f, 2, what, "output"));
        n.outputs.push_back(Str(f.bytes));
        break;
      case 3:
        VKQC_TRY(ReadString(f, what, "name", n.name));
        break;
      case 4:
        VKQC_TRY(ReadString(f, what, "op_type", n.op_type));
        break;
      case 7:
        VKQC_TRY(ReadString(f, what, "domain", n.domain));
        break;
      case 5: {
        VKQC_TRY(Expect(f, 2, what, "attribute"));
        Attribute a;
        VKQC_TRY(ParseAttribute(f.bytes, what, a));
        n.attributes.push_back(std::move(a));
        break;
      }
      default: break;
    }
  }
  return {};
}

Status ParseGraph(Span s, const std::string& what, Graph& g) {
  Decoder d(s, what);
  Field f;
  while (!d.done()) {
    VKQC_TRY(d.Next(f));
    switch (f.number) {
      case 1: {
        VKQC_TRY(Expect(f, 2, what, "node"));
        Node n;
        VKQC_TRY(ParseNode(f.bytes, what + " node " + std::to_string(g.nodes.size()), n));
        g.nodes.push_back(std::move(n));
        break;
      }
      case 2:
        VKQC_TRY(ReadString(f, what, "name", g.name));
        break;
      case 5: {
        VKQC_TRY(Expect(f, 2, what, "initializer"));
        Tensor t;
        VKQC_TRY(ParseTensorSpan(f.bytes, what + " initializer " + std::to_string(g.initializers.size()), t));
        g.initializers.push_back(std::move(t));
        break;
      }
      case 15: g.sparse_initializers++; break;
      case 11:
      case 12:
      case 13: {
        VKQC_TRY(Expect(f, 2, what, "value info"));
        ValueInfo vi;
        VKQC_TRY(ParseValueInfo(f.bytes, what, vi));
        (f.number == 11 ? g.inputs : f.number == 12 ? g.outputs : g.value_info).push_back(std::move(vi));
        break;
      }
      default: break;
    }
  }
  return {};
}

}  // namespace

const char* ElemTypeName(int32_t t) {
  switch (ElemType(t)) {
    case ElemType::Float: return "float";
    case ElemType::Uint8: return "uint8";
    case ElemType::Int8: return "int8";
    case ElemType::Uint16: return "uint16";
    case ElemType::Int16: return "int16";
    case ElemType::Int32: return "int32";
    case ElemType::Int64: return "int64";
    case ElemType::String: return "string";
    case ElemType::Bool: return "bool";
    case ElemType::Float16: return "float16";
    case ElemType::Double: return "double";
    case ElemType::Uint32: return "uint32";
    case ElemType::Uint64: return "uint64";
    case ElemType::BFloat16: return "bfloat16";
    default: return "unknown type";
  }
}

int ElemBytes(int32_t t) {
  switch (ElemType(t)) {
    case ElemType::Uint8:
    case ElemType::Int8:
    case ElemType::Bool: return 1;
    case ElemType::Uint16:
    case ElemType::Int16:
    case ElemType::Float16:
    case ElemType::BFloat16: return 2;
    case ElemType::Float:
    case ElemType::Int32:
    case ElemType::Uint32: return 4;
    case ElemType::Int64:
    case ElemType::Double:
    case ElemType::Uint64: return 8;
    default: return 0;
  }
}

const Attribute* Node::Find(const std::string& n) const {
  for (const Attribute& a : attributes)
    if (a.name == n) return &a;
  return nullptr;
}

int64_t Model::Opset(const std::string& domain) const {
  for (const auto& [d, v] : opsets)
    if (d == domain || (domain.empty() && d == "ai.onnx")) return v;
  return 0;
}

Result<Model> ParseModel(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& what) {
  Model m;
  m.bytes = bytes;
  Span s{bytes->data(), bytes->data() + bytes->size()};
  Decoder d(s, what);
  Field f;
  bool has_graph = false;
  while (!d.done()) {
    VKQC_TRY(d.Next(f));
    switch (f.number) {
      case 1:
        VKQC_TRY(Expect(f, 0, what, "ir_version"));
        m.ir_version = int64_t(f.v);
        break;
      case 2:
        VKQC_TRY(ReadString(f, what, "producer_name", m.producer_name));
        break;
      case 3:
        VKQC_TRY(ReadString(f, what, "producer_version", m.producer_version));
        break;
      case 7:
        VKQC_TRY(Expect(f, 2, what, "graph"));
        VKQC_TRY(ParseGraph(f.bytes, what + ": graph", m.graph));
        has_graph = true;
        break;
      case 8: {
        VKQC_TRY(Expect(f, 2, what, "opset_import"));
        std::string domain;
        int64_t version = 0;
        Decoder od(f.bytes, what);
        Field g;
        while (!od.done()) {
          VKQC_TRY(od.Next(g));
          if (g.number == 1 && g.wire == 2) domain = Str(g.bytes);
          if (g.number == 2 && g.wire == 0) version = int64_t(g.v);
        }
        m.opsets.emplace_back(domain, version);
        break;
      }
      case 14: {
        VKQC_TRY(Expect(f, 2, what, "metadata_props"));
        std::string k, v;
        VKQC_TRY(ParseStringEntry(f.bytes, what, k, v));
        m.metadata[k] = v;
        break;
      }
      default: break;
    }
  }
  if (!has_graph || m.ir_version == 0)
    return UserError(what + ": not an ONNX model (no graph or no ir_version; is it a protobuf ModelProto?)");
  return m;
}

Result<Model> ReadModel(const std::string& path) {
  VKQC_ASSIGN_OR_RETURN(auto bytes, ReadFileBytes(path));
  return ParseModel(bytes, path);
}

Result<Tensor> ParseTensor(const std::vector<uint8_t>& bytes, const std::string& what) {
  Tensor t;
  VKQC_TRY(ParseTensorSpan(Span{bytes.data(), bytes.data() + bytes.size()}, what, t));
  return t;
}

int64_t HostTensor::NumElements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

double HostTensor::At(int64_t i) const {
  const uint8_t* p = data.data() + size_t(i) * size_t(ElemBytes(type));
  switch (ElemType(type)) {
    case ElemType::Float: { float v; std::memcpy(&v, p, 4); return v; }
    case ElemType::Double: { double v; std::memcpy(&v, p, 8); return v; }
    case ElemType::Uint8: return *p;
    case ElemType::Int8: return int8_t(*p);
    case ElemType::Bool: return *p ? 1 : 0;
    case ElemType::Uint16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case ElemType::Int16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case ElemType::Float16: { uint16_t v; std::memcpy(&v, p, 2); return HalfToFloat(v); }
    case ElemType::BFloat16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      uint32_t b = uint32_t(v) << 16;
      float f;
      std::memcpy(&f, &b, 4);
      return f;
    }
    case ElemType::Int32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case ElemType::Uint32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case ElemType::Int64: { int64_t v; std::memcpy(&v, p, 8); return double(v); }
    case ElemType::Uint64: { uint64_t v; std::memcpy(&v, p, 8); return double(v); }
    default: return 0;
  }
}

Result<HostTensor> Decode(const Tensor& t, const std::string& base_dir, const std::string& what) {
  HostTensor h;
  h.type = t.data_type;
  h.dims = t.dims;
  const int eb = ElemBytes(t.data_type);
  if (eb == 0) return UserError(what + ": element type " + ElemTypeName(t.data_type) + " is not supported");
  int64_t n = 1;
  for (int64_t d : t.dims) {
    if (d < 0 || d > (int64_t(1) << 40)) return UserError(what + ": dimension " + std::to_string(d) + " out of range");
    if (d && n > (int64_t(1) << 40) / d) return UserError(what + ": more than 2^40 elements");
    n *= d;
  }
  const size_t bytes = size_t(n) * size_t(eb);
  auto size_error = [&](size_t have) {
    return UserError(what + ": " + std::to_string(have) + " bytes of data for dims with " + std::to_string(n) + " " +
                     ElemTypeName(t.data_type) + " elements (" + std::to_string(bytes) + " bytes)");
  };
  if (t.external) {
    auto loc = t.external_data.find("location");
    if (loc == t.external_data.end() || loc->second.empty())
      return UserError(what + ": external data without a location");
    std::filesystem::path rel(loc->second);
    if (rel.is_absolute() || rel.lexically_normal().string().rfind("..", 0) == 0)
      return UserError(what + ": external data location '" + loc->second +
                       "' must be a relative path inside the model's directory");
    uint64_t offset = 0, length = bytes;
    try {
      if (auto o = t.external_data.find("offset"); o != t.external_data.end()) offset = std::stoull(o->second);
      if (auto l = t.external_data.find("length"); l != t.external_data.end()) length = std::stoull(l->second);
    } catch (...) {
      return UserError(what + ": external data offset/length is not a number");
    }
    if (length != bytes) return size_error(length);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(std::filesystem::path(base_dir) / rel, ec))
      return UserError(what + ": external data file '" + (std::filesystem::path(base_dir) / rel).string() +
                       "' is missing or unreadable (not a regular file)");
    std::filesystem::path full = std::filesystem::path(base_dir) / rel;
    std::ifstream in(full, std::ios::binary);
    if (!in) return UserError(what + ": external data file '" + full.string() + "' is missing or unreadable");
    in.seekg(0, std::ios::end);
    const uint64_t file_size = uint64_t(in.tellg());
    if (offset > file_size || file_size - offset < length)
      return UserError(what + ": external data [" + std::to_string(offset) + ", +" + std::to_string(length) +
                       ") runs past the end of '" + full.string() + "' (" + std::to_string(file_size) + " bytes)");
    h.data.resize(bytes);  // <= the file's size, checked above
    in.seekg(std::streamoff(offset));
    in.read(reinterpret_cast<char*>(h.data.data()), std::streamsize(bytes));
    if (!in) return UserError(what + ": reading external data from '" + full.string() + "' failed");
    return h;
  }
  // Sizes are checked against the data that is there before anything is allocated.
  if (t.has_raw) {
    if (t.raw_size != bytes) return size_error(t.raw_size);
    h.data.resize(bytes);
    if (bytes) std::memcpy(h.data.data(), t.raw, bytes);
    return h;
  }
  auto put = [&](const auto& vec, auto conv) -> Status {
    if (vec.size() != size_t(n)) return size_error(vec.size() * size_t(eb));
    h.data.resize(bytes);
    for (int64_t i = 0; i < n; ++i) {
      auto v = conv(vec[size_t(i)]);
      std::memcpy(h.data.data() + size_t(i) * size_t(eb), &v, size_t(eb));
    }
    return {};
  };
  switch (ElemType(t.data_type)) {
    case ElemType::Float: VKQC_TRY(put(t.float_data, [](float v) { return v; })); break;
    case ElemType::Double: VKQC_TRY(put(t.double_data, [](double v) { return v; })); break;
    case ElemType::Int64: VKQC_TRY(put(t.int64_data, [](int64_t v) { return v; })); break;
    case ElemType::Uint32:
    case ElemType::Uint64: VKQC_TRY(put(t.uint64_data, [](uint64_t v) { return v; })); break;
    case ElemType::Int32: VKQC_TRY(put(t.int32_data, [](int64_t v) { return int32_t(v); })); break;
    case ElemType::Int16:
    case ElemType::Uint16:
    case ElemType::Float16:
    case ElemType::BFloat16: VKQC_TRY(put(t.int32_data, [](int64_t v) { return uint16_t(v); })); break;
    case ElemType::Int8:
    case ElemType::Uint8:
    case ElemType::Bool: VKQC_TRY(put(t.int32_data, [](int64_t v) { return uint8_t(v); })); break;
    default: return UserError(what + ": element type " + std::string(ElemTypeName(t.data_type)) + " is not supported");
  }
  return h;
}

}  // namespace vkqc::onnx
