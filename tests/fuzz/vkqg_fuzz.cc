// libFuzzer target: the .vkqg reader (compiler/graph/vkqg_io.cc: flatbuffer verification, every
// DataRef, conversion to the IR, graph verification). An accepted graph must serialize again and
// read back.
#include <memory>
#include <vector>

#include "compiler/graph/vkqg_io.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vkqc;
  auto bytes = std::make_shared<const std::vector<uint8_t>>(data, data + size);
  auto g = ReadGraphBytes(bytes, "fuzz.vkqg");
  fuzz::NoInternalError(g, "ReadGraphBytes");
  if (!g.ok()) return 0;
  // Constants are views into `bytes`: read every byte of them (ASan checks the bounds).
  unsigned sum = 0;
  for (const auto& t : g->tensors)
    if (t.data)
      for (size_t i = 0; i < t.data->size; ++i) sum += t.data->data()[i];
  (void)sum;
  auto again = SerializeGraph(*g);
  fuzz::NoInternalError(again, "SerializeGraph");
  fuzz::Require(again.ok(), "an accepted .vkqg serializes again");
  auto back = ReadGraphBytes(std::make_shared<const std::vector<uint8_t>>(std::move(*again)), "round trip");
  if (!back.ok()) std::fprintf(stderr, "%s\n", back.error().message.c_str());
  fuzz::Require(back.ok(), "an accepted .vkqg reads back after serializing");
  return 0;
}
