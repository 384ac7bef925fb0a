// safetensors reader/writer: [u64 LE header length][JSON header][data]. Tensor data is a view
// into the file bytes. Every header entry is checked (dtype known, offsets inside the data
// section, size == prod(shape) * element size); errors name the file and the tensor.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler/common/result.h"
#include "compiler/graph/ir.h"

namespace vkqc {

struct SafetensorsTensor {
  std::string dtype;             // safetensors spelling: "F32", "F16", "I8", "U8", "I32", ...
  std::vector<int64_t> shape;
  ir::ConstData data;
};

Result<std::map<std::string, SafetensorsTensor>> ReadSafetensors(const std::string& path);
Result<std::map<std::string, SafetensorsTensor>> ParseSafetensors(
    std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& origin);

struct SafetensorsEntry {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};
Status WriteSafetensors(const std::string& path, const std::vector<SafetensorsEntry>& tensors);

}  // namespace vkqc
