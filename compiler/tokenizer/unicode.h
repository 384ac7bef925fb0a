// Internal to compiler/tokenizer: UTF-8 decoding, code-point classes and the hand-written
// pre-tokenizer state machines. Not part of the public API.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vkqc::tok::internal {

enum CpClass : uint8_t { kOther = 0, kLetter = 1, kNumber = 2, kSpace = 3 };

// Class of a code point per unicode_tables.inc (letters L*, numbers N*, White_Space).
CpClass Classify(uint32_t cp);
const char* UnicodeVersion();

// One step of strict UTF-8 decoding (no overlongs, no surrogates, nothing above U+10FFFF).
struct Utf8Step {
  enum Kind { kValid, kInvalid, kIncomplete } kind;
  uint32_t len;  // kValid: bytes of the sequence; kInvalid: bytes of its maximal valid prefix
                 // (>= 1, what one U+FFFD replaces); kIncomplete: all n bytes (a valid prefix)
  uint32_t cp;   // kValid only
};
Utf8Step DecodeUtf8(const unsigned char* p, size_t n);
void AppendUtf8(std::string& out, uint32_t cp);

// Text split into units: one per valid UTF-8 sequence, one per invalid byte.
struct Unit {
  uint32_t off;  // byte offset
  uint32_t len;  // bytes
  uint32_t cp;   // code point; kNoCp for an invalid byte
  CpClass cls;   // kOther for an invalid byte
};
constexpr uint32_t kNoCp = 0xFFFFFFFFu;
std::vector<Unit> SplitUnits(std::string_view text);

// The pre-tokenizer regex families (see pretokenize.cc for each pattern's text and source).
enum class PreRegex { kGpt2, kLlama3, kQwen2, kDigitsThenGpt2 };
// Returns the byte lengths of consecutive pieces covering `text`.
std::vector<uint32_t> PreTokenizeLengths(PreRegex kind, std::string_view text);

// GPT-2 byte-level alphabet: byte -> code point, and back (-1 for code points outside it).
uint32_t ByteToUnicode(uint8_t b);
int UnicodeToByte(uint32_t cp);

}  // namespace vkqc::tok::internal
