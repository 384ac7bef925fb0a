// Tokenizers for GGUF language models: SentencePiece-style BPE ("llama") and byte-level BPE
// ("gpt2"), a streaming UTF-8-safe decoder, a compact binary form of the tokenizer metadata, and
// chat-prompt rendering for the common template families.
//
// Depends only on the C++ standard library and compiler/common/result.h.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compiler/common/result.h"

namespace vkqc::tok {

namespace detail {
struct StrHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
using StrMap = std::unordered_map<std::string, int32_t, StrHash, std::equal_to<>>;
}  // namespace detail

// GGUF tokenizer.ggml.token_type values.
enum TokenType : int32_t {
  kTokenUndefined = 0,
  kTokenNormal = 1,
  kTokenUnknown = 2,
  kTokenControl = 3,
  kTokenUserDefined = 4,
  kTokenUnused = 5,
  kTokenByte = 6,
};

// What GGUF's tokenizer.ggml.* metadata holds.
struct TokenizerData {
  std::string model;                 // "llama" (SentencePiece-style BPE with scores) or "gpt2" (byte-level BPE with merges)
  std::string pre;                   // gpt2 pre-tokenizer; see SupportedPreTokenizers() ("" = default)
  std::vector<std::string> tokens;   // token id -> text
  std::vector<float> scores;         // may be empty (all 0)
  std::vector<int32_t> token_types;  // may be empty (all normal); TokenType values
  std::vector<std::string> merges;   // gpt2: "left right" in priority order
  int32_t bos = -1, eos = -1, unk = -1, pad = -1;
  bool add_bos = true, add_eos = false;
  bool add_space_prefix = true;      // llama: prepend a space (U+2581) to the text
  std::string chat_template;         // tokenizer.chat_template (may be empty)

  bool operator==(const TokenizerData&) const = default;
};

// Compact, versioned, little-endian binary form ("VKQT" magic, version 1).
std::vector<uint8_t> Serialize(const TokenizerData& d);
// Every length and count is checked against the bytes that remain: a truncated, padded or
// hostile blob is an error, never a crash or a huge allocation.
Result<TokenizerData> Deserialize(const uint8_t* p, size_t n);

// The `pre` values a gpt2 tokenizer accepts, comma separated (for messages and docs).
std::string SupportedPreTokenizers();

// Splits UTF-8 text the way the pre-tokenizer regex of `pre` does (exposed for tests and
// tools). Returns byte pieces that concatenate back to `text`; error for an unsupported `pre`.
Result<std::vector<std::string>> PreTokenize(std::string_view pre, std::string_view text);

class Tokenizer {
 public:
  // Validates the data; every problem is a UserError naming what is wrong.
  static Result<Tokenizer> Create(TokenizerData d);

  // add_special: BOS first (if add_bos and bos >= 0), EOS last (if add_eos and eos >= 0).
  // parse_special: control / user-defined token texts written in `utf8` (e.g. "<|eot_id|>")
  // become those tokens; when false (the default) they are plain text.
  // Never fails: invalid UTF-8 bytes are encoded as single byte units. Texts are limited to
  // 1 GiB (longer input is truncated there).
  std::vector<int32_t> Encode(std::string_view utf8, bool add_special,
                              bool parse_special = false) const;
  // Whole sequence from the start: control tokens produce nothing; for llama the single
  // leading space that add_space_prefix introduced is removed. Out-of-range ids are skipped.
  std::string Decode(const std::vector<int32_t>& ids) const;
  // The raw bytes of one token: a byte token gives that byte (possibly part of a UTF-8
  // sequence), llama "▁" gives a space, gpt2 text is mapped back from the byte alphabet, a
  // control token gives its literal text. Empty for an out-of-range id.
  std::string TokenBytes(int32_t id) const;
  // Id of a token text exactly as stored in the vocabulary, or -1.
  int32_t TokenId(std::string_view text) const;
  bool IsControl(int32_t id) const;

  const TokenizerData& data() const { return d_; }

 private:
  enum class Pre { kGpt2, kLlama3, kQwen2, kDigitsGpt2 };  // same order as internal::PreRegex
  Tokenizer() = default;
  void EncodeText(std::string_view text, bool first_fragment, std::vector<int32_t>& out) const;
  void EncodeLlama(std::string_view text, bool prefix_space, std::vector<int32_t>& out) const;
  void EncodeGpt2(std::string_view text, std::vector<int32_t>& out) const;
  void BpeWord(std::string_view mapped, std::vector<int32_t>& out) const;
  int32_t Lookup(std::string_view piece) const;  // mergeable pieces only; -1 if none
  int32_t Type(int32_t id) const;

  TokenizerData d_;
  bool llama_ = true;
  Pre pre_ = Pre::kGpt2;
  bool ignore_merges_ = false;  // llama3 family: a whole pre-token found in the vocab is used as is
  detail::StrMap piece_to_id_;  // tokens text may be split into (not control/unknown/unused)
  detail::StrMap text_to_id_;   // every token (first id wins)
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges_;  // (left,right) -> (rank, merged)
  std::vector<int32_t> byte_token_;   // byte value -> id ("<0xXX>" for llama, mapped char for gpt2)
  std::vector<int16_t> token_byte_;   // llama: id -> byte value of a "<0xXX>" token, else -1
  std::vector<std::string> specials_; // texts matched when parse_special, longest first
  std::vector<bool> special_first_;   // byte -> some special text starts with it
  friend class StreamDecoder;
};

// Streaming decoder for generation: feed ids one at a time, get back only complete UTF-8 text
// (partial multi-byte sequences are held until completed). Flush emits what remains, invalid
// bytes as U+FFFD. Applies the same leading-space rule as Tokenizer::Decode.
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& t) : t_(&t) {}
  std::string Push(int32_t id);
  std::string Flush();

 private:
  std::string Drain(bool final);
  const Tokenizer* t_;
  std::string pending_;
  bool at_start_ = true;
};

// Chat: the template kind is detected from the Jinja text: "<|start_header_id|>" -> Llama 3,
// "<|im_start|>" -> ChatML. The result has no BOS text: encode it with
// Encode(prompt, /*add_special=*/true, /*parse_special=*/true).
struct ChatMessage {
  std::string role, content;
};
enum class ChatTemplateKind { kLlama3, kChatML };
Result<ChatTemplateKind> DetectChatTemplate(std::string_view jinja);
Result<std::string> ApplyChatTemplate(const TokenizerData& d, const std::vector<ChatMessage>& messages,
                                      bool add_generation_prompt);

}  // namespace vkqc::tok
