// ONNX model reader: the protobuf wire format of onnx.proto (IR version 3..9, the messages and
// field numbers of Debian's libonnx-dev /usr/include/onnx/onnx.proto) decoded by hand.
//
// Why not libprotobuf + generated code: a protobuf message is limited to 2 GiB, the generated
// parser copies every initializer's raw_data, and the compiler would gain a dependency it needs
// for one file format. This reader keeps initializer bytes as views into the mapped file (no
// copy), checks every length, index and size against the bytes that are there, and turns every
// malformation into an error that names what it was reading; it never throws or aborts.
// Messages and fields vkqc does not use (training info, functions, sparse initializers' values,
// doc strings) are skipped by wire type.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/common/result.h"

namespace vkqc::onnx {

// TensorProto.DataType.
enum class ElemType : int32_t {
  Undefined = 0, Float = 1, Uint8 = 2, Int8 = 3, Uint16 = 4, Int16 = 5, Int32 = 6, Int64 = 7,
  String = 8, Bool = 9, Float16 = 10, Double = 11, Uint32 = 12, Uint64 = 13, BFloat16 = 16
};
const char* ElemTypeName(int32_t t);  // "float", "uint8", ...; "type 42" for unknown
int ElemBytes(int32_t t);             // 0 for string/unknown

struct Tensor {
  std::string name;
  std::vector<int64_t> dims;
  int32_t data_type = 0;
  // Where the values are: raw_data (a view into the model bytes), one of the typed repeated
  // fields, or external data (location/offset/length entries).
  const uint8_t* raw = nullptr;
  size_t raw_size = 0;
  bool has_raw = false;
  std::vector<float> float_data;
  std::vector<int64_t> int32_data;  // int32_data holds int8..int32, bool and float16 bits
  std::vector<int64_t> int64_data;
  std::vector<double> double_data;
  std::vector<uint64_t> uint64_data;
  size_t string_count = 0;
  bool external = false;
  std::map<std::string, std::string> external_data;
};

struct Attribute {
  std::string name;
  int32_t type = 0;  // AttributeProto.AttributeType: FLOAT 1, INT 2, STRING 3, TENSOR 4, GRAPH 5, FLOATS 6, INTS 7, STRINGS 8
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::shared_ptr<Tensor> t;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
};

struct Node {
  std::string name, op_type, domain;
  std::vector<std::string> inputs, outputs;
  std::vector<Attribute> attributes;
  const Attribute* Find(const std::string& n) const;
};

struct Dim {
  bool has_value = false;
  int64_t value = 0;
  std::string param;  // a symbolic dimension ("batch", "N"), or empty
};

struct ValueInfo {
  std::string name;
  int32_t elem_type = 0;
  bool is_tensor = false;  // a tensor type (not a sequence/map/optional)
  bool has_shape = false;
  std::vector<Dim> dims;
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;
  std::vector<Tensor> initializers;
  std::vector<ValueInfo> inputs, outputs, value_info;
  size_t sparse_initializers = 0;
};

struct Model {
  int64_t ir_version = 0;
  std::vector<std::pair<std::string, int64_t>> opsets;  // domain ("" = ai.onnx), version
  std::string producer_name, producer_version;
  Graph graph;
  std::map<std::string, std::string> metadata;
  std::shared_ptr<const std::vector<uint8_t>> bytes;  // keeps Tensor::raw alive
  int64_t Opset(const std::string& domain) const;      // 0 when not imported
};

// Parses a whole model. `what` names the source in errors (the file name).
Result<Model> ParseModel(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& what);
// Reads and parses a .onnx file.
Result<Model> ReadModel(const std::string& path);
// A serialized TensorProto (the input_N.pb / output_N.pb files of ONNX's node tests). The
// returned tensor's raw view points into `bytes`.
Result<Tensor> ParseTensor(const std::vector<uint8_t>& bytes, const std::string& what);

// A tensor's values as a dense little-endian array of its element type (bool/uint8/int8 one
// byte, float16 two, ...). External data is read from `base_dir` (the model's directory):
// location must be a relative path inside it. Every size is checked against the dims.
struct HostTensor {
  int32_t type = 0;
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;
  int64_t NumElements() const;
  // Element i converted (float16/bfloat16 widened exactly; int64 clamped to double).
  double At(int64_t i) const;
};
Result<HostTensor> Decode(const Tensor& t, const std::string& base_dir, const std::string& what);

}  // namespace vkqc::onnx
