// Minimal .npy (NumPy format 1.0/2.0) reader and writer for little-endian, C-order arrays of
// float32, int8, uint8 and int32. Errors name the file.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/common/result.h"

namespace vkqc {

struct NpyArray {
  std::string descr;            // "<f4", "|i1", "|u1", "<i4"
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;    // raw little-endian bytes
  int64_t NumElements() const;
};

Result<NpyArray> ReadNpy(const std::string& path);
// The same from bytes; `path` names them in errors. The element count is checked against the
// data without overflowing, so a hostile shape is an error.
Result<NpyArray> ParseNpy(const uint8_t* data, size_t size, const std::string& path);
Status WriteNpy(const std::string& path, const NpyArray& a);
NpyArray NpyFromFloats(const std::vector<float>& v, const std::vector<int64_t>& shape);
// Converts to float32 values (int types are widened).
std::vector<float> NpyToFloats(const NpyArray& a);

}  // namespace vkqc
