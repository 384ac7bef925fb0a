// libFuzzer target: the .npy reader of `vkqc run --input NAME=FILE.npy` (tools/vkqc/npy.cc). An
// accepted array converts to floats (NpyToFloats reads every element) and writes back to a file
// that reads again with the same descr, shape and bytes.
#include "fuzz_common.h"
#include "tools/vkqc/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vkqc;
  const std::string path = fuzz::WriteScratch("in.npy", {reinterpret_cast<const char*>(data), size});
  auto a = ReadNpy(path);
  fuzz::NoInternalError(a, "ReadNpy");
  if (!a.ok()) return 0;
  const std::vector<float> f = NpyToFloats(*a);
  fuzz::Require(f.size() == size_t(a->NumElements()), "NpyToFloats gives one float per element");
  const std::string out = fuzz::ScratchDir() + "/out.npy";
  fuzz::Require(WriteNpy(out, *a).ok(), "an accepted array writes");
  auto b = ReadNpy(out);
  fuzz::Require(b.ok() && b->descr == a->descr && b->shape == a->shape && b->data == a->data,
                "a written array reads back equal");
  return 0;
}
