#include "compiler/graph/gguf.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <limits>

namespace vkqc::gguf {
namespace {

constexpr uint64_t kMaxString = 1ull << 24;       // 16 MiB: longer strings are hostile
constexpr uint64_t kMaxArray = 1ull << 26;        // elements of one metadata array
constexpr uint64_t kMaxMetadataBytes = 1ull << 30;  // what all metadata may allocate together
constexpr uint64_t kMaxTensors = 1ull << 20;
constexpr uint32_t kMaxDims = 4;

// A bounds-checked little-endian cursor over the file.
struct Cursor {
  const uint8_t* p;
  size_t size;
  size_t at = 0;
  std::string file;
  uint64_t budget = kMaxMetadataBytes;

  Error Truncated(const std::string& what) const {
    return UserError(file + ": truncated or corrupt GGUF: " + what + " at byte " + std::to_string(at) +
                     " runs past the end of the file (" + std::to_string(size) + " bytes)");
  }
  template <typename T>
  Result<T> Get(const std::string& what) {
    if (size - at < sizeof(T)) return Truncated(what);
    T v;
    std::memcpy(&v, p + at, sizeof(T));
    at += sizeof(T);
    return v;
  }
  Status Charge(uint64_t bytes, const std::string& what) {
    if (bytes > budget)
      return UserError(file + ": " + what + " would need more than " + std::to_string(kMaxMetadataBytes >> 20) +
                       " MiB of metadata; the file is corrupt or hostile");
    budget -= bytes;
    return {};
  }
  Result<std::string> Str(const std::string& what) {
    VKQC_ASSIGN_OR_RETURN(uint64_t n, Get<uint64_t>(what + " length"));
    if (n > kMaxString)
      return UserError(file + ": " + what + " has length " + std::to_string(n) + ", over the limit of " +
                       std::to_string(kMaxString) + " bytes; the file is corrupt");
    if (size - at < n) return Truncated(what);
    VKQC_TRY(Charge(n + 32, what));
    std::string s(reinterpret_cast<const char*>(p + at), size_t(n));
    at += size_t(n);
    return s;
  }
};

bool ValidValueType(uint32_t t) { return t <= uint32_t(ValueType::F64); }

Result<Value> ReadScalar(Cursor& c, ValueType t, const std::string& what) {
  Value v;
  v.type = t;
  switch (t) {
    case ValueType::U8: { VKQC_ASSIGN_OR_RETURN(uint8_t x, c.Get<uint8_t>(what)); v.i = x; break; }
    case ValueType::I8: { VKQC_ASSIGN_OR_RETURN(int8_t x, c.Get<int8_t>(what)); v.i = x; break; }
    case ValueType::U16: { VKQC_ASSIGN_OR_RETURN(uint16_t x, c.Get<uint16_t>(what)); v.i = x; break; }
    case ValueType::I16: { VKQC_ASSIGN_OR_RETURN(int16_t x, c.Get<int16_t>(what)); v.i = x; break; }
    case ValueType::U32: { VKQC_ASSIGN_OR_RETURN(uint32_t x, c.Get<uint32_t>(what)); v.i = x; break; }
    case ValueType::I32: { VKQC_ASSIGN_OR_RETURN(int32_t x, c.Get<int32_t>(what)); v.i = x; break; }
    case ValueType::I64: { VKQC_ASSIGN_OR_RETURN(int64_t x, c.Get<int64_t>(what)); v.i = x; break; }
    case ValueType::U64: {
      VKQC_ASSIGN_OR_RETURN(uint64_t x, c.Get<uint64_t>(what));
      if (x > uint64_t(std::numeric_limits<int64_t>::max()))
        return UserError(c.file + ": " + what + " is the u64 " + std::to_string(x) + ", too large");
      v.i = int64_t(x);
      break;
    }
    case ValueType::BOOL: {
      VKQC_ASSIGN_OR_RETURN(uint8_t x, c.Get<uint8_t>(what));
      if (x > 1) return UserError(c.file + ": " + what + " is a bool of value " + std::to_string(x));
      v.i = x;
      break;
    }
    case ValueType::F32: { VKQC_ASSIGN_OR_RETURN(float x, c.Get<float>(what)); v.f = x; break; }
    case ValueType::F64: { VKQC_ASSIGN_OR_RETURN(double x, c.Get<double>(what)); v.f = x; break; }
    case ValueType::STRING: { VKQC_ASSIGN_OR_RETURN(v.s, c.Str(what)); break; }
    case ValueType::ARRAY: return UserError(c.file + ": " + what + ": arrays of arrays are not supported");
  }
  return v;
}

Result<Value> ReadValue(Cursor& c, const std::string& key) {
  const std::string what = "metadata '" + key + "'";
  VKQC_ASSIGN_OR_RETURN(uint32_t t, c.Get<uint32_t>(what + " type"));
  if (!ValidValueType(t)) return UserError(c.file + ": " + what + " has unknown value type " + std::to_string(t));
  if (ValueType(t) != ValueType::ARRAY) return ReadScalar(c, ValueType(t), what);
  Value v;
  v.type = ValueType::ARRAY;
  VKQC_ASSIGN_OR_RETURN(uint32_t et, c.Get<uint32_t>(what + " element type"));
  if (!ValidValueType(et) || ValueType(et) == ValueType::ARRAY)
    return UserError(c.file + ": " + what + " is an array of unsupported element type " + std::to_string(et));
  v.elem = ValueType(et);
  VKQC_ASSIGN_OR_RETURN(uint64_t n, c.Get<uint64_t>(what + " length"));
  if (n > kMaxArray)
    return UserError(c.file + ": " + what + " has " + std::to_string(n) + " elements, over the limit of " +
                     std::to_string(kMaxArray) + "; the file is corrupt");
  // Each element takes at least one byte in the file: a count beyond the rest of the file is corrupt.
  if (n > c.size - c.at) return c.Truncated(what + " (" + std::to_string(n) + " elements)");
  VKQC_TRY(c.Charge(n * 8, what));
  for (uint64_t i = 0; i < n; ++i) {
    VKQC_ASSIGN_OR_RETURN(Value e, ReadScalar(c, v.elem, what + "[" + std::to_string(i) + "]"));
    if (v.elem == ValueType::STRING) v.strings.push_back(std::move(e.s));
    else if (e.is_float()) v.floats.push_back(e.f);
    else v.ints.push_back(e.i);
  }
  return v;
}

}  // namespace

bool Value::is_int() const {
  switch (type) {
    case ValueType::U8: case ValueType::I8: case ValueType::U16: case ValueType::I16: case ValueType::U32:
    case ValueType::I32: case ValueType::U64: case ValueType::I64: case ValueType::BOOL: return true;
    default: return false;
  }
}

const char* TypeName(Type t) {
  switch (t) {
    case Type::F32: return "F32";
    case Type::F16: return "F16";
    case Type::Q4_0: return "Q4_0";
    case Type::Q4_1: return "Q4_1";
    case Type::Q5_0: return "Q5_0";
    case Type::Q5_1: return "Q5_1";
    case Type::Q8_0: return "Q8_0";
    case Type::Q8_1: return "Q8_1";
    case Type::Q2_K: return "Q2_K";
    case Type::Q3_K: return "Q3_K";
    case Type::Q4_K: return "Q4_K";
    case Type::Q5_K: return "Q5_K";
    case Type::Q6_K: return "Q6_K";
    case Type::Q8_K: return "Q8_K";
    case Type::IQ2_XXS: return "IQ2_XXS";
    case Type::IQ2_XS: return "IQ2_XS";
    case Type::IQ3_XXS: return "IQ3_XXS";
    case Type::IQ1_S: return "IQ1_S";
    case Type::IQ4_NL: return "IQ4_NL";
    case Type::IQ3_S: return "IQ3_S";
    case Type::IQ2_S: return "IQ2_S";
    case Type::IQ4_XS: return "IQ4_XS";
    case Type::I8: return "I8";
    case Type::I16: return "I16";
    case Type::I32: return "I32";
    case Type::I64: return "I64";
    case Type::F64: return "F64";
    case Type::IQ1_M: return "IQ1_M";
    case Type::BF16: return "BF16";
  }
  return "unknown";
}

BlockInfo Block(Type t) {
  switch (t) {
    case Type::F32: case Type::I32: return {1, 4};
    case Type::F16: case Type::BF16: case Type::I16: return {1, 2};
    case Type::I8: return {1, 1};
    case Type::I64: case Type::F64: return {1, 8};
    case Type::Q4_0: return {32, 18};
    case Type::Q4_1: return {32, 20};
    case Type::Q5_0: return {32, 22};
    case Type::Q5_1: return {32, 24};
    case Type::Q8_0: return {32, 34};
    case Type::Q8_1: return {32, 36};
    case Type::Q2_K: return {256, 84};
    case Type::Q3_K: return {256, 110};
    case Type::Q4_K: return {256, 144};
    case Type::Q5_K: return {256, 176};
    case Type::Q6_K: return {256, 210};
    case Type::Q8_K: return {256, 292};
    default: return {0, 0};
  }
}

File::~File() {
  if (map_) munmap(map_, size_);
}

Result<std::unique_ptr<File>> File::Open(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return UserError(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return UserError(path + ": not a regular file");
  }
  std::unique_ptr<File> f(new File());
  f->path_ = path;
  f->size_ = size_t(st.st_size);
  if (f->size_ < 24) {
    close(fd);
    return UserError(path + ": " + std::to_string(f->size_) + " bytes is too short for a GGUF file");
  }
  void* m = mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return UserError(path + ": cannot map the file: " + std::strerror(errno));
  f->map_ = m;
  f->base_ = static_cast<const uint8_t*>(m);
  VKQC_TRY(f->Parse());
  return f;
}

Result<std::unique_ptr<File>> File::FromMemory(const uint8_t* data, size_t size, const std::string& name) {
  std::unique_ptr<File> f(new File());
  f->path_ = name;
  f->base_ = data;
  f->size_ = size;
  VKQC_TRY(f->Parse());
  return f;
}

Status File::Parse() {
  Cursor c{base_, size_, 0, path_};
  VKQC_ASSIGN_OR_RETURN(uint32_t magic, c.Get<uint32_t>("magic"));
  if (magic != 0x46554747u) return UserError(path_ + ": not a GGUF file (no 'GGUF' magic)");
  VKQC_ASSIGN_OR_RETURN(version_, c.Get<uint32_t>("version"));
  if (version_ != 2 && version_ != 3)
    return UserError(path_ + ": GGUF version " + std::to_string(version_) + " is not supported (2 and 3 are)");
  VKQC_ASSIGN_OR_RETURN(uint64_t n_tensors, c.Get<uint64_t>("tensor count"));
  VKQC_ASSIGN_OR_RETURN(uint64_t n_kv, c.Get<uint64_t>("metadata count"));
  if (n_tensors > kMaxTensors) return UserError(path_ + ": " + std::to_string(n_tensors) + " tensors is corrupt");
  if (n_kv > size_ / 13) return c.Truncated(std::to_string(n_kv) + " metadata entries");
  for (uint64_t i = 0; i < n_kv; ++i) {
    VKQC_ASSIGN_OR_RETURN(std::string key, c.Str("metadata key " + std::to_string(i)));
    VKQC_ASSIGN_OR_RETURN(Value v, ReadValue(c, key));
    if (kv_.count(key)) return UserError(path_ + ": metadata key '" + key + "' appears twice");
    kv_.emplace(std::move(key), std::move(v));
  }
  if (const Value* a = Find("general.alignment")) {
    if (!a->is_int() || a->i <= 0 || a->i > (1 << 20) || (a->i & (a->i - 1)) != 0)
      return UserError(path_ + ": general.alignment must be a power of two up to 1 MiB");
    alignment_ = uint64_t(a->i);
  }
  if (n_tensors > (size_ - c.at) / 24) return c.Truncated(std::to_string(n_tensors) + " tensor infos");
  for (uint64_t i = 0; i < n_tensors; ++i) {
    TensorInfo t;
    VKQC_ASSIGN_OR_RETURN(t.name, c.Str("tensor " + std::to_string(i) + " name"));
    const std::string what = "tensor '" + t.name + "'";
    VKQC_ASSIGN_OR_RETURN(uint32_t nd, c.Get<uint32_t>(what + " rank"));
    if (nd == 0 || nd > kMaxDims)
      return UserError(path_ + ": " + what + " has rank " + std::to_string(nd) + " (1 to 4 are valid)");
    t.elements = 1;
    for (uint32_t d = 0; d < nd; ++d) {
      VKQC_ASSIGN_OR_RETURN(uint64_t n, c.Get<uint64_t>(what + " dimension"));
      if (n == 0 || n > (1ull << 40) || t.elements > (1ull << 42) / n)
        return UserError(path_ + ": " + what + " has an invalid dimension " + std::to_string(n));
      t.dims.push_back(n);
      t.elements *= n;
    }
    VKQC_ASSIGN_OR_RETURN(uint32_t type, c.Get<uint32_t>(what + " type"));
    t.type = Type(type);
    VKQC_ASSIGN_OR_RETURN(t.offset, c.Get<uint64_t>(what + " offset"));
    const BlockInfo b = Block(t.type);
    if (b.elements == 0)
      return UserError(path_ + ": " + what + " has ggml type " + std::to_string(type) + " (" + TypeName(t.type) +
                       "), whose layout this reader does not know");
    if (t.dims[0] % b.elements != 0)
      return UserError(path_ + ": " + what + " rows of " + std::to_string(t.dims[0]) + " elements are not whole " +
                       TypeName(t.type) + " blocks of " + std::to_string(b.elements));
    t.bytes = t.elements / b.elements * b.bytes;
    if (t.offset % alignment_ != 0)
      return UserError(path_ + ": " + what + " offset " + std::to_string(t.offset) + " is not aligned to " +
                       std::to_string(alignment_));
    for (const TensorInfo& o : tensors_)
      if (o.name == t.name) return UserError(path_ + ": " + what + " appears twice");
    tensors_.push_back(std::move(t));
  }
  data_offset_ = (c.at + alignment_ - 1) / alignment_ * alignment_;
  if (data_offset_ > size_) return c.Truncated("the data section");
  const uint64_t data_size = size_ - data_offset_;
  for (const TensorInfo& t : tensors_)
    if (t.offset > data_size || t.bytes > data_size - t.offset)
      return UserError(path_ + ": tensor '" + t.name + "' (" + std::to_string(t.bytes) + " bytes at data offset " +
                       std::to_string(t.offset) + ") runs past the end of the file; the file is truncated");
  return {};
}

const TensorInfo* File::FindTensor(const std::string& name) const {
  for (const TensorInfo& t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

const Value* File::Find(const std::string& key) const {
  auto it = kv_.find(key);
  return it == kv_.end() ? nullptr : &it->second;
}

Result<int64_t> File::Int(const std::string& key) const {
  const Value* v = Find(key);
  if (!v) return UserError(path_ + ": required metadata key '" + key + "' is missing");
  if (!v->is_int()) return UserError(path_ + ": metadata '" + key + "' must be an integer");
  return v->i;
}
Result<double> File::Float(const std::string& key) const {
  const Value* v = Find(key);
  if (!v) return UserError(path_ + ": required metadata key '" + key + "' is missing");
  if (v->is_float()) return v->f;
  if (v->is_int()) return double(v->i);
  return UserError(path_ + ": metadata '" + key + "' must be a number");
}
Result<std::string> File::String(const std::string& key) const {
  const Value* v = Find(key);
  if (!v) return UserError(path_ + ": required metadata key '" + key + "' is missing");
  if (v->type != ValueType::STRING) return UserError(path_ + ": metadata '" + key + "' must be a string");
  return v->s;
}
int64_t File::IntOr(const std::string& key, int64_t fallback) const {
  const Value* v = Find(key);
  return v && v->is_int() ? v->i : fallback;
}
double File::FloatOr(const std::string& key, double fallback) const {
  const Value* v = Find(key);
  return v && v->is_float() ? v->f : v && v->is_int() ? double(v->i) : fallback;
}
std::string File::StringOr(const std::string& key, const std::string& fallback) const {
  const Value* v = Find(key);
  return v && v->type == ValueType::STRING ? v->s : fallback;
}

}  // namespace vkqc::gguf
