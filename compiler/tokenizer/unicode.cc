// UTF-8 decoding, code-point classes and the GPT-2 byte alphabet.
#include <algorithm>

#include "compiler/tokenizer/unicode.h"

namespace vkqc::tok::internal {
namespace {

struct CodepointRange {
  uint32_t first, last;
  uint8_t cls;
};
#include "compiler/tokenizer/unicode_tables.inc"

bool IsCont(unsigned char b) { return (b & 0xC0) == 0x80; }

}  // namespace

CpClass Classify(uint32_t cp) {
  if (cp < 0x80) {  // fast path: ASCII
    if (cp == ' ' || (cp >= 0x09 && cp <= 0x0D)) return kSpace;
    if ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') return kLetter;
    if (cp >= '0' && cp <= '9') return kNumber;
    return kOther;
  }
  const auto* end = std::end(kCodepointRanges);
  const auto* it = std::upper_bound(std::begin(kCodepointRanges), end, cp,
                                    [](uint32_t c, const CodepointRange& r) { return c < r.first; });
  if (it == std::begin(kCodepointRanges)) return kOther;
  --it;
  return cp <= it->last ? static_cast<CpClass>(it->cls) : kOther;
}

const char* UnicodeVersion() { return kUnicodeVersion; }

Utf8Step DecodeUtf8(const unsigned char* p, size_t n) {
  const unsigned char b0 = p[0];
  if (b0 < 0x80) return {Utf8Step::kValid, 1, b0};
  uint32_t need;  // total length
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  uint32_t cp;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 2;
    cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 3;
    cp = b0 & 0x0F;
    if (b0 == 0xE0) lo = 0xA0;        // no overlongs
    if (b0 == 0xED) hi = 0x9F;        // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 4;
    cp = b0 & 0x07;
    if (b0 == 0xF0) lo = 0x90;        // no overlongs
    if (b0 == 0xF4) hi = 0x8F;        // nothing above U+10FFFF
  } else {
    return {Utf8Step::kInvalid, 1, 0};
  }
  for (uint32_t k = 1; k < need; ++k) {
    if (k >= n) return {Utf8Step::kIncomplete, static_cast<uint32_t>(n), 0};
    const unsigned char b = p[k];
    const bool ok = k == 1 ? (b >= lo && b <= hi) : IsCont(b);
    if (!ok) return {Utf8Step::kInvalid, k, 0};
    cp = (cp << 6) | (b & 0x3F);
  }
  return {Utf8Step::kValid, need, cp};
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::vector<Unit> SplitUnits(std::string_view text) {
  std::vector<Unit> units;
  units.reserve(text.size());
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t i = 0;
  while (i < text.size()) {
    const Utf8Step s = DecodeUtf8(p + i, text.size() - i);
    if (s.kind == Utf8Step::kValid) {
      units.push_back({static_cast<uint32_t>(i), s.len, s.cp, Classify(s.cp)});
      i += s.len;
    } else {  // an invalid byte is a unit of its own
      units.push_back({static_cast<uint32_t>(i), 1, kNoCp, kOther});
      i += 1;
    }
  }
  return units;
}

// GPT-2's byte-to-unicode table: the printable bytes '!'..'~', 0xA1..0xAC and 0xAE..0xFF stand
// for themselves; the remaining 68 bytes, in increasing order, become U+0100, U+0101, ...
uint32_t ByteToUnicode(uint8_t b) {
  auto printable = [](uint32_t x) {
    return (x >= 0x21 && x <= 0x7E) || (x >= 0xA1 && x <= 0xAC) || (x >= 0xAE && x <= 0xFF);
  };
  if (printable(b)) return b;
  uint32_t rank = 0;  // how many non-printable bytes come before b
  for (uint32_t x = 0; x < b; ++x) rank += printable(x) ? 0 : 1;
  return 0x100 + rank;
}

int UnicodeToByte(uint32_t cp) {
  static const std::vector<int16_t> table = [] {
    std::vector<int16_t> t(0x100 + 68, -1);
    for (int b = 0; b < 256; ++b) t[ByteToUnicode(static_cast<uint8_t>(b))] = static_cast<int16_t>(b);
    return t;
  }();
  return cp < table.size() ? table[cp] : -1;
}

}  // namespace vkqc::tok::internal
