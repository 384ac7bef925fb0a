// libFuzzer target: GGUF checkpoints (compiler/graph/gguf.cc: header, typed metadata, tensor
// infos, aligned data; compiler/graph/import_gguf.cc + gguf_tensors.cc: hyperparameters, tensor
// conversion and the tokenizer vocabulary), as `vkqc import MODEL.gguf` reads them. Every tensor
// the parser accepts is read whole; a parsed file is also imported (through a scratch file, the
// importer maps a path), with the import options chosen by the input's size, and the tokenizer
// of an imported model (where the file has one) encodes and decodes a text.
#include <memory>

#include "compiler/graph/gguf.h"
#include "compiler/graph/import_gguf.h"
#include "compiler/tokenizer/tokenizer.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vkqc;
  auto f = gguf::File::FromMemory(data, size, "fuzz.gguf");
  fuzz::NoInternalError(f, "gguf::File::FromMemory");
  if (!f.ok()) return 0;
  unsigned sum = 0;
  for (const auto& t : (*f)->tensors()) {
    const uint8_t* p = (*f)->Data(t);
    for (uint64_t i = 0; i < t.bytes; ++i) sum += p[i];
  }
  (void)sum;
  const std::string path = fuzz::WriteScratch("model.gguf", {reinterpret_cast<const char*>(data), size});
  GgufImportOptions o;
  o.max_context = 64;
  if (size % 3 == 1) {
    o.quantize = "q8";
    o.requantize = "q8csw";
  } else if (size % 3 == 2) {
    o.quantize = "8da4w";
    o.requantize = "q4gsw";
  }
  auto g = ImportGguf(path, o);
  fuzz::NoInternalError(g, "ImportGguf");
  if (!g.ok()) return 0;
  auto it = g->metadata.find(kMetaTokenizer);
  if (it == g->metadata.end()) return 0;  // a file without tokenizer.ggml.model
  auto d = tok::Deserialize(it->second.data(), it->second.size());
  fuzz::Require(d.ok(), "the importer's serialized tokenizer deserializes");
  auto t = tok::Tokenizer::Create(std::move(*d));
  fuzz::Require(t.ok(), "the importer's tokenizer is valid");
  const auto ids = t->Encode("Hello world, \xc3\xa9t\xc3\xa9 <s> 123", true, true);
  (void)t->Decode(ids);
  return 0;
}
