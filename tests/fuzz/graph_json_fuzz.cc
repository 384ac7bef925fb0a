// libFuzzer target: the JSON authoring form of a graph (compiler/graph/import_json.cc) with its
// safetensors weights, as `vkqc import graph.json` reads them.
// Input: graph JSON [kSeparator safetensors bytes]; both are written to a scratch directory
// (the JSON's "weights" names the file beside it, e.g. "weights.safetensors"). An accepted graph
// must also serialize to .vkqg and read back (the importer's output is a verified graph).
#include <memory>
#include <vector>

#include "compiler/graph/import_json.h"
#include "compiler/graph/vkqg_io.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vkqc;
  const fuzz::Split in = fuzz::SplitInput(data, size);
  const std::string path = fuzz::WriteScratch("graph.json", in.first);
  if (in.has_second) {
    fuzz::WriteScratch("weights.safetensors", in.second);
  } else {
    fuzz::RemoveScratch("weights.safetensors");
  }
  auto g = ImportJsonGraph(path);
  fuzz::NoInternalError(g, "ImportJsonGraph");
  if (!g.ok()) return 0;
  auto bytes = SerializeGraph(*g);
  fuzz::NoInternalError(bytes, "SerializeGraph");
  fuzz::Require(bytes.ok(), "an imported graph serializes");
  auto back = ReadGraphBytes(std::make_shared<const std::vector<uint8_t>>(std::move(*bytes)), "round trip");
  if (!back.ok()) std::fprintf(stderr, "%s\n", back.error().message.c_str());
  fuzz::Require(back.ok(), "an imported graph reads back from .vkqg");
  return 0;
}
