// Resealing a .vkqb as a tamperer would: after bytes of its flatbuffer changed, recompute what
// the runtime's verifier checks first (each shader module's content hash, then the bundle's
// integrity checksum), so those checksums no longer catch the change and the checks behind them
// are what a crafted bundle meets. Shared by the mutant sweep (tests/gpu/mutant_test.cc), the
// verifier's unit tests and the .vkqb fuzz target (tests/fuzz/vkqb_fuzz.cc).
#pragma once
#include <flatbuffers/flatbuffers.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "schema/bundle_generated.h"
#include "schema/bundle_integrity.h"

namespace vkqc::testing_bundles {

// `data` holds a whole bundle ([u32 size][flatbuffer][weights]). Returns false, changing
// nothing, when the size-prefixed flatbuffer does not pass the flatbuffers verifier (the
// runtime refuses such a bundle before any checksum). module_hashes = false recomputes only the
// integrity checksum (a test that wants a module's own hash to catch its change).
inline bool ResealBundle(uint8_t* data, size_t size, bool module_hashes = true) {
  if (size < 8) return false;
  uint32_t fb = 0;
  std::memcpy(&fb, data, 4);
  if (uint64_t(fb) + 4 > size) return false;
  // The runtime's verifier limits (runtime/src/bundle_view.cc).
  flatbuffers::Verifier v(data, size_t(fb) + 4, 64, 10000000);
  if (!fb::bundle::VerifySizePrefixedBundleBuffer(v)) return false;
  auto* bundle = fb::bundle::GetMutableBundle(data + 4);
  if (module_hashes && bundle->mutable_modules()) {
    for (uint32_t i = 0; i < bundle->modules()->size(); ++i) {
      auto* m = bundle->mutable_modules()->GetMutableObject(i);
      if (m->spirv()) m->mutate_content_hash(ModuleContentHash(m->spirv()->data(), m->spirv()->size()));
    }
  }
  // Bundle derives privately from flatbuffers::Table (same address): ask the table for the field.
  const uint8_t* field =
      reinterpret_cast<const flatbuffers::Table*>(bundle)->GetAddressOf(fb::bundle::Bundle::VT_INTEGRITY);
  if (field) bundle->mutate_integrity(BundleIntegrity(data, size_t(fb) + 4, field));
  return true;
}

}  // namespace vkqc::testing_bundles
