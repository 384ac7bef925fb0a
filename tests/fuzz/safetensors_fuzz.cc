// libFuzzer target: the safetensors reader (compiler/graph/safetensors.cc). Every accepted
// tensor's bytes are read (they are views into the input: ASan checks the bounds).
#include <memory>
#include <vector>

#include "compiler/graph/safetensors.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vkqc;
  auto bytes = std::make_shared<const std::vector<uint8_t>>(data, data + size);
  auto t = ParseSafetensors(bytes, "fuzz.safetensors");
  fuzz::NoInternalError(t, "ParseSafetensors");
  if (!t.ok()) return 0;
  unsigned sum = 0;
  for (const auto& [name, tensor] : *t)
    for (size_t i = 0; i < tensor.data.size; ++i) sum += tensor.data.data()[i];
  (void)sum;
  return 0;
}
