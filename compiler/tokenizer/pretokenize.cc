// Byte-level BPE pre-tokenizers, written as small matchers over code-point classes instead of
// a regex engine. Each matcher returns where the regex's leftmost match starting at unit `i`
// ends; some alternative always matches, so the matches tile the text.
//
// Patterns (the text of each regex, as published):
//
//  kGpt2 — OpenAI GPT-2 encoder.py, also llama.cpp's LLAMA_VOCAB_PRE_TYPE_GPT2:
//      's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
//  kLlama3 — the "pre_tokenizer" Split regex of Meta-Llama-3's tokenizer.json (the cl100k
//  pattern; llama.cpp's LLAMA_VOCAB_PRE_TYPE_LLAMA3):
//      (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//       ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
//  kQwen2 — Qwen2's tokenizer.json (llama.cpp's LLAMA_VOCAB_PRE_TYPE_QWEN2): the Llama-3
//  pattern with \p{N} (one digit per piece) in place of \p{N}{1,3}.
//
//  kDigitsThenGpt2 — llama.cpp's LLAMA_VOCAB_PRE_TYPE_SMOLLM / STARCODER / REFACT / ...: two
//  passes, first "\p{N}" isolates every digit, then the GPT-2 pattern splits each remaining
//  stretch on its own.
//
// Notes: (?i:...) is applied to ASCII letters only (as llama.cpp does); \s is the Unicode
// White_Space property; an invalid UTF-8 byte counts as [^\s\p{L}\p{N}].
#include "compiler/tokenizer/unicode.h"

namespace vkqc::tok::internal {
namespace {

class Matcher {
 public:
  Matcher(const std::vector<Unit>& u, size_t end) : u_(u), end_(end) {}

  uint32_t cp(size_t k) const { return k < end_ ? u_[k].cp : kNoCp; }
  bool is(size_t k, CpClass c) const { return k < end_ && u_[k].cls == c; }
  bool IsNewline(size_t k) const { return cp(k) == '\r' || cp(k) == '\n'; }
  size_t RunOf(size_t k, CpClass c) const {
    while (is(k, c)) ++k;
    return k;
  }

  // 's|'t|'re|'ve|'m|'ll|'d, optionally ASCII case-insensitive; 0 when none matches.
  size_t Contraction(size_t i, bool fold) const {
    if (cp(i) != '\'') return 0;
    auto low = [&](size_t k) {
      const uint32_t c = cp(k);
      return fold && c >= 'A' && c <= 'Z' ? c + 32 : c;
    };
    const uint32_t a = low(i + 1);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
    const uint32_t b = low(i + 2);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
    return 0;
  }

  // \s+(?!\S)|\s+ at a whitespace unit: the run, less its last unit when a non-space follows
  // and the run has more than one unit.
  size_t TrailingSpace(size_t i) const {
    const size_t j = RunOf(i, kSpace);
    if (j == end_ || j - i < 2) return j;
    return j - 1;
  }

  size_t Gpt2(size_t i) const {
    if (size_t e = Contraction(i, /*fold=*/false)) return e;
    const size_t k = cp(i) == ' ' ? i + 1 : i;  // " ?" prefix
    if (is(k, kLetter)) return RunOf(k, kLetter);
    if (is(k, kNumber)) return RunOf(k, kNumber);
    if (is(k, kOther)) return RunOf(k, kOther);
    return TrailingSpace(i);  // unit i is whitespace here
  }

  size_t Llama3(size_t i, size_t max_digits) const {
    if (size_t e = Contraction(i, /*fold=*/true)) return e;
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (is(i, kLetter)) return RunOf(i, kLetter);
    if (!is(i, kNumber) && !IsNewline(i) && is(i + 1, kLetter)) return RunOf(i + 1, kLetter);
    // \p{N}{1,max}
    if (is(i, kNumber)) {
      size_t j = i;
      while (j - i < max_digits && is(j, kNumber)) ++j;
      return j;
    }
    //  ?[^\s\p{L}\p{N}]+[\r\n]*
    const size_t k = cp(i) == ' ' ? i + 1 : i;
    if (is(k, kOther)) {
      size_t j = RunOf(k, kOther);
      while (IsNewline(j)) ++j;
      return j;
    }
    // \s*[\r\n]+ : up to and including the last newline of the whitespace run
    const size_t run_end = RunOf(i, kSpace);
    for (size_t j = run_end; j > i; --j) {
      if (IsNewline(j - 1)) return j;
    }
    return TrailingSpace(i);
  }

 private:
  const std::vector<Unit>& u_;
  size_t end_;
};

}  // namespace

std::vector<uint32_t> PreTokenizeLengths(PreRegex kind, std::string_view text) {
  const std::vector<Unit> units = SplitUnits(text);
  std::vector<uint32_t> out;
  auto emit = [&](size_t a, size_t b) {  // units [a, b)
    out.push_back(units[b - 1].off + units[b - 1].len - units[a].off);
  };
  auto run = [&](size_t begin, size_t end) {
    const Matcher m(units, end);
    size_t i = begin;
    while (i < end) {
      size_t j;
      switch (kind) {
        case PreRegex::kLlama3: j = m.Llama3(i, 3); break;
        case PreRegex::kQwen2: j = m.Llama3(i, 1); break;
        default: j = m.Gpt2(i); break;
      }
      if (j <= i) j = i + 1;  // cannot happen; keeps the loop finite regardless
      emit(i, j);
      i = j;
    }
  };
  if (kind != PreRegex::kDigitsThenGpt2) {
    run(0, units.size());
    return out;
  }
  size_t i = 0;
  while (i < units.size()) {
    if (units[i].cls == kNumber) {
      emit(i, i + 1);
      ++i;
      continue;
    }
    size_t j = i;
    while (j < units.size() && units[j].cls != kNumber) ++j;
    run(i, j);
    i = j;
  }
  return out;
}

}  // namespace vkqc::tok::internal
