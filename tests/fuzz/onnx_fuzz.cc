// libFuzzer target: ONNX models (compiler/graph/onnx.cc: the protobuf wire format decoded by
// hand; compiler/graph/import_onnx*.cc: the conversion to a vkqc graph), as `vkqc import
// MODEL.onnx` reads them, and the serialized TensorProto files of ONNX's node tests.
// Input: model bytes [kSeparator bytes of "weights.bin", a file external data may name]. Every
// initializer of a parsed model is decoded (external data from the scratch directory); a parsed
// model is also imported (through a scratch file: the importer takes a path), with NCHW or NHWC
// graph inputs chosen by the input's size.
#include <memory>
#include <vector>

#include "compiler/graph/import_onnx.h"
#include "compiler/graph/onnx.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vkqc;
  const fuzz::Split in = fuzz::SplitInput(data, size);
  const std::vector<uint8_t> model_bytes(in.first.begin(), in.first.end());
  fuzz::NoInternalError(onnx::ParseTensor(model_bytes, "fuzz.pb"), "onnx::ParseTensor");
  auto m = onnx::ParseModel(std::make_shared<const std::vector<uint8_t>>(model_bytes), "fuzz.onnx");
  fuzz::NoInternalError(m, "onnx::ParseModel");
  if (!m.ok()) return 0;
  if (in.has_second) {
    fuzz::WriteScratch("weights.bin", in.second);
  } else {
    fuzz::RemoveScratch("weights.bin");
  }
  for (const auto& t : m->graph.initializers) {
    auto h = onnx::Decode(t, fuzz::ScratchDir(), "fuzz.onnx");
    fuzz::NoInternalError(h, "onnx::Decode");
    if (h.ok() && h->NumElements() > 0) (void)h->At(h->NumElements() - 1);
  }
  const std::string path = fuzz::WriteScratch("model.onnx", in.first);
  OnnxImportOptions o;
  o.nhwc_inputs = o.nhwc_outputs = size % 2 == 1;
  fuzz::NoInternalError(ImportOnnx(path, o), "ImportOnnx");
  return 0;
}
