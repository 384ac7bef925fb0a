// GGUF reader (llama.cpp's model file format, versions 2 and 3), written from the format's
// specification: header, metadata key/values of every type (arrays included), tensor infos and
// the aligned data section. The file is memory-mapped read-only; every offset, size, count and
// string length is checked against the file before use, and an error names the key or tensor,
// so a truncated or hostile file is an error, never a crash or a huge allocation.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/common/result.h"

namespace vkqc::gguf {

// ggml tensor types (the numbering of the GGUF specification).
enum class Type : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9, Q2_K = 10, Q3_K = 11,
  Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15, IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19,
  IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22, IQ4_XS = 23, I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28,
  IQ1_M = 29, BF16 = 30,
};
const char* TypeName(Type t);  // "Q4_0", ...; "unknown" for numbers this reader does not know
// Elements per block and bytes per block; {0, 0} for types whose layout this reader does not know.
struct BlockInfo {
  uint32_t elements = 0, bytes = 0;
};
BlockInfo Block(Type t);

// A metadata value. Arrays hold their element type and their elements (strings in `strings`,
// integers in `ints`, floats in `floats`; bools as ints 0/1).
enum class ValueType : uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, BOOL = 7, STRING = 8, ARRAY = 9, U64 = 10,
  I64 = 11, F64 = 12,
};
struct Value {
  ValueType type = ValueType::U8;
  ValueType elem = ValueType::U8;  // arrays
  int64_t i = 0;                   // integers and bool (u64 above INT64_MAX are rejected)
  double f = 0;                    // floats
  std::string s;                   // string
  std::vector<int64_t> ints;       // array of integers/bools
  std::vector<double> floats;      // array of floats
  std::vector<std::string> strings;  // array of strings
  bool is_array() const { return type == ValueType::ARRAY; }
  bool is_int() const;
  bool is_float() const { return type == ValueType::F32 || type == ValueType::F64; }
};

struct TensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // GGUF order: dims[0] is the innermost (row length)
  Type type = Type::F32;
  uint64_t offset = 0;         // from the start of the data section
  uint64_t elements = 0;
  uint64_t bytes = 0;          // checked to lie inside the file
};

class File {
 public:
  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  // Maps and parses `path`; what the metadata may allocate is bounded (1 GiB).
  static Result<std::unique_ptr<File>> Open(const std::string& path);
  // Parses a buffer the caller keeps alive (tests).
  static Result<std::unique_ptr<File>> FromMemory(const uint8_t* data, size_t size, const std::string& name);

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  const std::string& path() const { return path_; }
  const std::map<std::string, Value>& metadata() const { return kv_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* FindTensor(const std::string& name) const;
  const Value* Find(const std::string& key) const;
  const uint8_t* Data(const TensorInfo& t) const { return base_ + data_offset_ + t.offset; }

  // Typed metadata access: a missing key or a value of the wrong type is an error naming the key.
  Result<int64_t> Int(const std::string& key) const;
  Result<double> Float(const std::string& key) const;  // integers are accepted too
  Result<std::string> String(const std::string& key) const;
  int64_t IntOr(const std::string& key, int64_t fallback) const;
  double FloatOr(const std::string& key, double fallback) const;
  std::string StringOr(const std::string& key, const std::string& fallback) const;

 private:
  File() = default;
  Status Parse();
  std::string path_;
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  void* map_ = nullptr;  // mmap'd region (nullptr for FromMemory)
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::map<std::string, Value> kv_;
  std::vector<TensorInfo> tensors_;
};

}  // namespace vkqc::gguf
