// .vkqg read/write. File layout: [u32 size prefix][flatbuffer "VKQG"][pad to 64][constant segment].
// Reading verifies the flatbuffer and every DataRef (inside the segment, 64-byte aligned,
// length consistent with shape and dtype) and converts to the IR; errors name the file.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/common/result.h"
#include "compiler/graph/ir.h"

namespace vkqc {

Result<ir::Graph> ReadGraphFile(const std::string& path);
// `origin` names the source in error messages. The returned graph's constants view `bytes`.
Result<ir::Graph> ReadGraphBytes(std::shared_ptr<const std::vector<uint8_t>> bytes,
                                 const std::string& origin);
Result<std::vector<uint8_t>> SerializeGraph(const ir::Graph& graph);
Status WriteGraphFile(const ir::Graph& graph, const std::string& path);

// Reads a whole file; error names the path.
Result<std::shared_ptr<const std::vector<uint8_t>>> ReadFileBytes(const std::string& path);
// Atomic: a temporary file beside `path`, fsync, rename (an interrupted write leaves the old file).
Status WriteFileBytes(const std::string& path, const void* data, size_t size);

// FNV-1a 64-bit hash (used for the bundle's source-graph hash).
uint64_t Fnv1a64(const void* data, size_t size, uint64_t seed = 14695981039346656037ull);

}  // namespace vkqc
