// The integrity checksum of a .vkqb (format_version 2): FNV-1a 64 of the size-prefixed flatbuffer
// (the file's first 4 + size-prefix bytes) with the 8 bytes of Bundle.integrity read as zero.
// The writer stores it in Bundle.integrity; the runtime refuses a bundle whose flatbuffer (its
// metadata, spec constants, dispatches, shader code) no longer hashes to it, so corruption gets a
// clear error instead of reaching the driver (shapes in spec constants decide what shaders read).
// The weight segment is not covered (corrupt weights give wrong numbers, not invalid accesses).
#pragma once
#include <cstddef>
#include <cstdint>

namespace vkqc {

// What vkqc writes: 2 since the integrity checksum.
inline constexpr uint32_t kBundleFormatVersion = 2;

// `field`: where the 8 integrity bytes lie inside [data, data + size) (null: none).
inline uint64_t BundleIntegrity(const uint8_t* data, size_t size, const uint8_t* field) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < size; ++i) {
    const bool masked = field && data + i >= field && data + i < field + 8;
    h = (h ^ (masked ? 0u : data[i])) * 1099511628211ull;
  }
  return h;
}

// A shader module's content hash (Module.content_hash): FNV-1a 64 of its SPIR-V bytes. The
// runtime checks it before the driver sees the code.
inline uint64_t ModuleContentHash(const uint32_t* words, size_t count) {
  uint64_t h = 14695981039346656037ull;
  const auto* p = reinterpret_cast<const uint8_t*>(words);
  for (size_t i = 0; i < count * 4; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

}  // namespace vkqc
