// libFuzzer target: tokenizers (compiler/tokenizer/): the serialized tokenizer a bundle of an
// imported GGUF model carries (tok::Deserialize: what `vkqc generate` reads from a bundle's
// metadata), its validation (Tokenizer::Create: the GGUF vocabulary's checks), encoding of
// arbitrary (also invalid UTF-8) text, decoding, streaming decoding and chat templates, and the
// pre-tokenizers on their own.
// Input: serialized tokenizer ("VKQT" blob) [kSeparator text]. Properties: the pre-tokenizers'
// pieces concatenate back to the text; Serialize/Deserialize round-trip; every id Encode
// returns is in the vocabulary.
#include <cstring>
#include <string>
#include <vector>

#include "compiler/tokenizer/tokenizer.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vkqc;
  const fuzz::Split in = fuzz::SplitInput(data, size);
  const std::string_view text = in.has_second ? in.second : in.first;
  for (const char* pre : {"", "llama3", "qwen2", "smollm"}) {
    auto pieces = tok::PreTokenize(pre, text);
    fuzz::NoInternalError(pieces, "PreTokenize");
    if (!pieces.ok()) continue;
    std::string joined;
    for (const auto& p : *pieces) joined += p;
    fuzz::Require(joined == text, "pre-tokenizer pieces concatenate back to the text");
  }
  auto d = tok::Deserialize(reinterpret_cast<const uint8_t*>(in.first.data()), in.first.size());
  fuzz::NoInternalError(d, "tok::Deserialize");
  if (!d.ok()) return 0;
  const tok::TokenizerData copy = *d;
  const std::vector<uint8_t> blob = tok::Serialize(copy);
  auto again = tok::Deserialize(blob.data(), blob.size());
  fuzz::Require(again.ok() && tok::Serialize(*again) == blob, "a deserialized tokenizer round-trips");
  auto t = tok::Tokenizer::Create(std::move(*d));
  fuzz::NoInternalError(t, "Tokenizer::Create");
  if (!t.ok()) return 0;
  const int32_t n = int32_t(copy.tokens.size());
  for (bool special : {false, true}) {
    const std::vector<int32_t> ids = t->Encode(text, special, special);
    for (int32_t id : ids) fuzz::Require(id >= 0 && id < n, "encoded ids are in the vocabulary");
    (void)t->Decode(ids);
    tok::StreamDecoder sd(*t);
    for (int32_t id : ids) (void)sd.Push(id);
    (void)sd.Flush();
  }
  // Arbitrary ids (out of range too) from the text's bytes.
  std::vector<int32_t> raw;
  for (size_t i = 0; i + 4 <= text.size() && raw.size() < 256; i += 4) {
    int32_t v;
    std::memcpy(&v, text.data() + i, 4);
    raw.push_back(v % (n + 8));
  }
  (void)t->Decode(raw);
  tok::StreamDecoder sd(*t);
  for (int32_t id : raw) (void)sd.Push(id), (void)t->TokenBytes(id), (void)t->IsControl(id);
  (void)sd.Flush();
  (void)t->TokenId(text);
  auto chat = tok::ApplyChatTemplate(copy, {{"system", "be brief"}, {"user", std::string(text)}}, true);
  fuzz::NoInternalError(chat, "ApplyChatTemplate");
  return 0;
}
