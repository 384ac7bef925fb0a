// Tokenizer::Create / Encode / Decode and StreamDecoder.
//
// llama: SentencePiece-style BPE. Spaces become U+2581, one U+2581 is prepended when
// add_space_prefix, the text is split into UTF-8 characters, and the adjacent pair whose
// concatenation is a vocabulary piece with the highest score is merged until none is left
// (ties: leftmost). Pieces still not in the vocabulary become <0xXX> byte tokens (or unk).
//
// gpt2: byte-level BPE. The text is pre-tokenized by the `pre` regex (pretokenize.cc), each
// piece's bytes are written in GPT-2's byte alphabet, and the adjacent pair with the lowest
// merge rank is merged until none is left (ties: leftmost).
#include "compiler/tokenizer/tokenizer.h"

#include <algorithm>
#include <queue>

#include "compiler/tokenizer/unicode.h"

namespace vkqc::tok {
namespace {

using internal::PreRegex;

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581, SentencePiece's space

struct PreName {
  const char* name;
  PreRegex regex;
  bool ignore_merges;
};
// Names as llama.cpp's llama-vocab.cpp maps tokenizer.ggml.pre to a regex family.
constexpr PreName kPreNames[] = {
    {"", PreRegex::kGpt2, false},           {"default", PreRegex::kGpt2, false},
    {"gpt2", PreRegex::kGpt2, false},       {"gpt-2", PreRegex::kGpt2, false},
    {"mpt", PreRegex::kGpt2, false},        {"olmo", PreRegex::kGpt2, false},
    {"llama3", PreRegex::kLlama3, true},    {"llama-v3", PreRegex::kLlama3, true},
    {"llama-bpe", PreRegex::kLlama3, true}, {"falcon3", PreRegex::kLlama3, true},
    {"qwen2", PreRegex::kQwen2, false},     {"stablelm2", PreRegex::kQwen2, false},
    {"deepseek-r1-qwen", PreRegex::kQwen2, false},
    {"smollm", PreRegex::kDigitsThenGpt2, false},
    {"starcoder", PreRegex::kDigitsThenGpt2, false},
    {"refact", PreRegex::kDigitsThenGpt2, false},
    {"command-r", PreRegex::kDigitsThenGpt2, false},
    {"codeshell", PreRegex::kDigitsThenGpt2, false},
    {"exaone", PreRegex::kDigitsThenGpt2, false},
    {"minerva-7b", PreRegex::kDigitsThenGpt2, false},
};

const PreName* FindPre(std::string_view pre) {
  for (const PreName& p : kPreNames) {
    if (pre == p.name) return &p;
  }
  return nullptr;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// "<0xXX>" -> XX, else -1.
int ParseByteToken(std::string_view t) {
  if (t.size() != 6 || t.substr(0, 3) != "<0x" || t[5] != '>') return -1;
  const int hi = HexDigit(t[3]), lo = HexDigit(t[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

void ReplaceAll(std::string& s, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  while (true) {
    const size_t hit = s.find(from, pos);
    if (hit == std::string::npos) break;
    out.append(s, pos, hit - pos);
    out.append(to);
    pos = hit + from.size();
  }
  out.append(s, pos, std::string::npos);
  s = std::move(out);
}

std::string Quote(std::string_view s) {
  std::string q = "'";
  q.append(s.substr(0, 64));
  if (s.size() > 64) q += "...";
  return q + "'";
}

// Symbols of one BPE word, kept as a doubly linked list over byte ranges of `text`.
struct Symbol {
  uint32_t off, len;
  int32_t prev, next;
  int32_t id;  // gpt2: current token id or -1
};

}  // namespace

std::string SupportedPreTokenizers() {
  std::string s;
  for (const PreName& p : kPreNames) {
    if (p.name[0] == '\0') continue;
    if (!s.empty()) s += ", ";
    s += p.name;
  }
  return s;
}

Result<std::vector<std::string>> PreTokenize(std::string_view pre, std::string_view text) {
  const PreName* p = FindPre(pre);
  if (!p) {
    return UserError("unsupported pre-tokenizer " + Quote(pre) + "; supported: " +
                     SupportedPreTokenizers());
  }
  std::vector<std::string> pieces;
  size_t off = 0;
  for (uint32_t len : internal::PreTokenizeLengths(p->regex, text)) {
    pieces.emplace_back(text.substr(off, len));
    off += len;
  }
  return pieces;
}

Result<Tokenizer> Tokenizer::Create(TokenizerData d) {
  const size_t n = d.tokens.size();
  if (d.model != "llama" && d.model != "gpt2") {
    return UserError("unknown tokenizer model " + Quote(d.model) +
                     " (tokenizer.ggml.model); supported: llama, gpt2");
  }
  if (n == 0) return UserError("tokenizer vocabulary is empty (tokenizer.ggml.tokens)");
  if (n > static_cast<size_t>(INT32_MAX)) return UserError("tokenizer vocabulary is too large");
  if (!d.scores.empty() && d.scores.size() != n) {
    return UserError("tokenizer has " + std::to_string(d.scores.size()) + " scores for " +
                     std::to_string(n) + " tokens (tokenizer.ggml.scores)");
  }
  if (!d.token_types.empty() && d.token_types.size() != n) {
    return UserError("tokenizer has " + std::to_string(d.token_types.size()) + " token types for " +
                     std::to_string(n) + " tokens (tokenizer.ggml.token_type)");
  }
  for (size_t i = 0; i < d.token_types.size(); ++i) {
    if (d.token_types[i] < 0 || d.token_types[i] > kTokenByte) {
      return UserError("token " + std::to_string(i) + " has invalid type " +
                       std::to_string(d.token_types[i]) + " (expected 0..6)");
    }
  }
  const std::pair<const char*, int32_t> specials[] = {
      {"bos", d.bos}, {"eos", d.eos}, {"unk", d.unk}, {"pad", d.pad}};
  for (const auto& [name, id] : specials) {
    if (id < -1 || id >= static_cast<int64_t>(n)) {
      return UserError(std::string("special token id ") + name + " = " + std::to_string(id) +
                       " is out of range (vocabulary has " + std::to_string(n) +
                       " tokens; -1 means none)");
    }
  }

  Tokenizer t;
  t.llama_ = d.model == "llama";
  auto type = [&](size_t i) { return d.token_types.empty() ? int32_t{kTokenNormal} : d.token_types[i]; };
  t.text_to_id_.reserve(n);
  t.piece_to_id_.reserve(n);
  if (t.llama_) t.token_byte_.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const std::string& s = d.tokens[i];
    const int32_t id = static_cast<int32_t>(i);
    t.text_to_id_.emplace(s, id);
    const int32_t ty = type(i);
    const int byte = t.llama_ ? ParseByteToken(s) : -1;
    const bool is_byte_token = byte >= 0 && (ty == kTokenByte || d.token_types.empty());
    if (is_byte_token) t.token_byte_[i] = static_cast<int16_t>(byte);
    const bool splittable = !s.empty() && ty != kTokenControl && ty != kTokenUnknown &&
                            ty != kTokenUnused && !(t.llama_ && (ty == kTokenByte || is_byte_token));
    if (splittable) t.piece_to_id_.emplace(s, id);
    const bool special = ty == kTokenControl || ty == kTokenUserDefined ||
                         (d.token_types.empty() &&
                          (id == d.bos || id == d.eos || id == d.unk || id == d.pad));
    if (special && !s.empty()) t.specials_.push_back(s);
  }
  // Longest first, so the first text that matches at a position is the longest.
  std::stable_sort(t.specials_.begin(), t.specials_.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });

  t.special_first_.assign(256, false);
  for (const std::string& s : t.specials_) t.special_first_[static_cast<uint8_t>(s[0])] = true;

  t.byte_token_.assign(256, -1);
  if (t.llama_) {
    for (size_t i = 0; i < n; ++i) {
      if (t.token_byte_[i] >= 0 && t.byte_token_[t.token_byte_[i]] < 0) {
        t.byte_token_[t.token_byte_[i]] = static_cast<int32_t>(i);
      }
    }
  } else {
    const PreName* p = FindPre(d.pre);
    if (!p) {
      return UserError("unsupported pre-tokenizer " + Quote(d.pre) +
                       " (tokenizer.ggml.pre) for a gpt2 tokenizer; supported: " +
                       SupportedPreTokenizers());
    }
    static_assert(static_cast<int>(Pre::kDigitsGpt2) == static_cast<int>(PreRegex::kDigitsThenGpt2) &&
                  static_cast<int>(Pre::kQwen2) == static_cast<int>(PreRegex::kQwen2) &&
                  static_cast<int>(Pre::kLlama3) == static_cast<int>(PreRegex::kLlama3));
    t.pre_ = static_cast<Pre>(p->regex);
    t.ignore_merges_ = p->ignore_merges;
    if (d.merges.empty()) {
      return UserError("gpt2 tokenizer has no merges (tokenizer.ggml.merges is empty or missing)");
    }
    for (int b = 0; b < 256; ++b) {
      std::string ch;
      internal::AppendUtf8(ch, internal::ByteToUnicode(static_cast<uint8_t>(b)));
      t.byte_token_[b] = t.Lookup(ch);
    }
    t.merges_.reserve(d.merges.size());
    for (size_t r = 0; r < d.merges.size(); ++r) {
      const std::string& m = d.merges[r];
      const size_t sp = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
      if (sp == std::string::npos || sp + 1 >= m.size()) {
        return UserError("tokenizer merge #" + std::to_string(r) + " " + Quote(m) +
                         " is not of the form 'left right'");
      }
      const std::string_view left(m.data(), sp), right(m.data() + sp + 1, m.size() - sp - 1);
      const std::string merged = std::string(left) + std::string(right);
      for (std::string_view part : {left, right, std::string_view(merged)}) {
        if (t.text_to_id_.find(part) == t.text_to_id_.end()) {
          return UserError("tokenizer merge #" + std::to_string(r) + " " + Quote(m) +
                           " names unknown token " + Quote(part));
        }
      }
      const int32_t l = t.Lookup(left), rt = t.Lookup(right), mg = t.Lookup(merged);
      if (l < 0 || rt < 0 || mg < 0) continue;  // involves control/unused tokens: never applies
      const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(rt);
      t.merges_.emplace(key, std::make_pair(static_cast<int32_t>(r), mg));  // first (best) rank wins
    }
  }
  t.d_ = std::move(d);
  return t;
}

int32_t Tokenizer::Lookup(std::string_view piece) const {
  auto it = piece_to_id_.find(piece);
  return it == piece_to_id_.end() ? -1 : it->second;
}

int32_t Tokenizer::TokenId(std::string_view text) const {
  auto it = text_to_id_.find(text);
  return it == text_to_id_.end() ? -1 : it->second;
}

int32_t Tokenizer::Type(int32_t id) const {
  return d_.token_types.empty() ? int32_t{kTokenNormal} : d_.token_types[id];
}

bool Tokenizer::IsControl(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= d_.tokens.size()) return false;
  return Type(id) == kTokenControl || id == d_.bos || id == d_.eos;
}

std::vector<int32_t> Tokenizer::Encode(std::string_view utf8, bool add_special, bool parse_special) const {
  utf8 = utf8.substr(0, size_t{1} << 30);  // unit offsets are 32-bit, llama text grows up to 3x
  std::vector<int32_t> out;
  if (add_special && d_.add_bos && d_.bos >= 0) out.push_back(d_.bos);
  bool prev_special = true;  // llama.cpp: a text fragment at the start or after a special token
                             // gets the space prefix
  size_t start = 0, pos = 0;
  auto flush_text = [&](size_t end) {
    if (end > start) {
      EncodeText(utf8.substr(start, end - start), prev_special, out);
      prev_special = false;
    }
  };
  if (parse_special && !specials_.empty()) {
    while (pos < utf8.size()) {
      const std::string* hit = nullptr;
      if (!special_first_[static_cast<uint8_t>(utf8[pos])]) {
        ++pos;
        continue;
      }
      for (const std::string& s : specials_) {
        if (utf8.compare(pos, s.size(), s) == 0) {
          hit = &s;
          break;
        }
      }
      if (!hit) {
        ++pos;
        continue;
      }
      flush_text(pos);
      out.push_back(text_to_id_.find(*hit)->second);
      prev_special = true;
      pos += hit->size();
      start = pos;
    }
  }
  flush_text(utf8.size());
  if (add_special && d_.add_eos && d_.eos >= 0) out.push_back(d_.eos);
  return out;
}

void Tokenizer::EncodeText(std::string_view text, bool first_fragment, std::vector<int32_t>& out) const {
  if (llama_) {
    EncodeLlama(text, d_.add_space_prefix && first_fragment, out);
  } else {
    EncodeGpt2(text, out);
  }
}

void Tokenizer::EncodeLlama(std::string_view text, bool prefix_space, std::vector<int32_t>& out) const {
  std::string norm;
  norm.reserve(text.size() + 8);
  if (prefix_space) norm += kSpaceMark;
  for (char c : text) {
    if (c == ' ') {
      norm += kSpaceMark;
    } else {
      norm += c;
    }
  }
  std::vector<Symbol> sym;
  for (const internal::Unit& u : internal::SplitUnits(norm)) {
    const int32_t i = static_cast<int32_t>(sym.size());
    sym.push_back({u.off, u.len, i - 1, i + 1, -1});
  }
  if (sym.empty()) return;
  sym.back().next = -1;

  struct Bigram {
    float score;
    int32_t left, right;
    uint32_t len;
  };
  auto worse = [](const Bigram& a, const Bigram& b) {  // priority: higher score, then leftmost
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::priority_queue<Bigram, std::vector<Bigram>, decltype(worse)> queue(worse);
  auto try_add = [&](int32_t l, int32_t r) {
    if (l < 0 || r < 0) return;
    const uint32_t len = sym[l].len + sym[r].len;
    const int32_t id = Lookup(std::string_view(norm).substr(sym[l].off, len));
    if (id < 0) return;
    queue.push({d_.scores.empty() ? 0.0f : d_.scores[id], l, r, len});
  };
  for (size_t i = 1; i < sym.size(); ++i) try_add(static_cast<int32_t>(i - 1), static_cast<int32_t>(i));
  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = sym[b.left];
    Symbol& r = sym[b.right];
    if (l.len == 0 || r.len == 0 || l.next != b.right || l.len + r.len != b.len) continue;  // stale
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }
  for (int32_t i = 0; i >= 0; i = sym[i].next) {
    const std::string_view piece = std::string_view(norm).substr(sym[i].off, sym[i].len);
    const int32_t id = Lookup(piece);
    if (id >= 0) {
      out.push_back(id);
      continue;
    }
    const bool all_bytes = std::all_of(piece.begin(), piece.end(), [&](char c) {
      return byte_token_[static_cast<uint8_t>(c)] >= 0;
    });
    if (all_bytes) {
      for (char c : piece) out.push_back(byte_token_[static_cast<uint8_t>(c)]);
    } else if (d_.unk >= 0) {
      out.push_back(d_.unk);
    }
  }
}

void Tokenizer::EncodeGpt2(std::string_view text, std::vector<int32_t>& out) const {
  size_t off = 0;
  std::string mapped;
  for (uint32_t len : internal::PreTokenizeLengths(static_cast<PreRegex>(pre_), text)) {
    mapped.clear();
    for (size_t k = off; k < off + len; ++k) {
      internal::AppendUtf8(mapped, internal::ByteToUnicode(static_cast<uint8_t>(text[k])));
    }
    off += len;
    if (ignore_merges_) {
      const int32_t whole = Lookup(mapped);
      if (whole >= 0) {
        out.push_back(whole);
        continue;
      }
    }
    BpeWord(mapped, out);
  }
}

void Tokenizer::BpeWord(std::string_view mapped, std::vector<int32_t>& out) const {
  std::vector<Symbol> sym;
  for (const internal::Unit& u : internal::SplitUnits(mapped)) {
    const int32_t i = static_cast<int32_t>(sym.size());
    sym.push_back({u.off, u.len, i - 1, i + 1, Lookup(mapped.substr(u.off, u.len))});
  }
  if (sym.empty()) return;
  sym.back().next = -1;

  struct Pair {
    int32_t rank, left, right, left_id, right_id, merged;
  };
  auto worse = [](const Pair& a, const Pair& b) {  // priority: lowest rank, then leftmost
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  };
  std::priority_queue<Pair, std::vector<Pair>, decltype(worse)> queue(worse);
  auto try_add = [&](int32_t l, int32_t r) {
    if (l < 0 || r < 0 || sym[l].id < 0 || sym[r].id < 0) return;
    const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(sym[l].id)) << 32) |
                         static_cast<uint32_t>(sym[r].id);
    auto it = merges_.find(key);
    if (it == merges_.end()) return;
    queue.push({it->second.first, l, r, sym[l].id, sym[r].id, it->second.second});
  };
  for (size_t i = 1; i < sym.size(); ++i) try_add(static_cast<int32_t>(i - 1), static_cast<int32_t>(i));
  while (!queue.empty()) {
    const Pair p = queue.top();
    queue.pop();
    Symbol& l = sym[p.left];
    Symbol& r = sym[p.right];
    if (l.len == 0 || r.len == 0 || l.next != p.right || l.id != p.left_id || r.id != p.right_id) continue;
    l.len += r.len;
    l.id = p.merged;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = p.left;
    try_add(l.prev, p.left);
    try_add(p.left, l.next);
  }
  for (int32_t i = 0; i >= 0; i = sym[i].next) {
    if (sym[i].id >= 0) {
      out.push_back(sym[i].id);
    } else if (d_.unk >= 0) {  // a byte whose character is missing from the vocabulary
      out.push_back(d_.unk);
    }
  }
}

std::string Tokenizer::TokenBytes(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= d_.tokens.size()) return {};
  const std::string& text = d_.tokens[id];
  const int32_t ty = Type(id);
  if (ty == kTokenControl) return text;
  if (llama_) {
    if (token_byte_[id] >= 0) return std::string(1, static_cast<char>(token_byte_[id]));
    std::string s = text;
    ReplaceAll(s, kSpaceMark, " ");
    return s;
  }
  if (ty == kTokenUserDefined) return text;
  std::string s;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t i = 0;
  while (i < text.size()) {
    const internal::Utf8Step st = internal::DecodeUtf8(p + i, text.size() - i);
    const int b = st.kind == internal::Utf8Step::kValid ? internal::UnicodeToByte(st.cp) : -1;
    const size_t len = st.kind == internal::Utf8Step::kValid ? st.len : 1;
    if (b >= 0) {
      s += static_cast<char>(b);
    } else {
      s.append(text, i, len);  // outside the byte alphabet: kept as written
    }
    i += len;
  }
  return s;
}

std::string Tokenizer::Decode(const std::vector<int32_t>& ids) const {
  std::string out;
  for (int32_t id : ids) {
    if (IsControl(id)) continue;
    out += TokenBytes(id);
  }
  if (llama_) {
    ReplaceAll(out, kSpaceMark, " ");  // also "▁" spelled with byte tokens
    if (d_.add_space_prefix && !out.empty() && out[0] == ' ') out.erase(0, 1);
  }
  return out;
}

std::string StreamDecoder::Push(int32_t id) {
  if (id < 0 || static_cast<size_t>(id) >= t_->d_.tokens.size() || t_->IsControl(id)) return {};
  pending_ += t_->TokenBytes(id);
  return Drain(false);
}

std::string StreamDecoder::Flush() { return Drain(true); }

std::string StreamDecoder::Drain(bool final) {
  std::string out;
  const auto* p = reinterpret_cast<const unsigned char*>(pending_.data());
  size_t i = 0;
  while (i < pending_.size()) {
    const internal::Utf8Step st = internal::DecodeUtf8(p + i, pending_.size() - i);
    if (st.kind == internal::Utf8Step::kValid) {
      out.append(pending_, i, st.len);
      i += st.len;
    } else if (st.kind == internal::Utf8Step::kIncomplete && !final) {
      break;  // wait for the rest of the sequence
    } else {
      internal::AppendUtf8(out, 0xFFFD);  // one U+FFFD per maximal invalid subpart
      i += st.len;
    }
  }
  pending_.erase(0, i);
  if (t_->llama_) ReplaceAll(out, kSpaceMark, " ");
  if (at_start_ && !out.empty()) {
    if (t_->llama_ && t_->d_.add_space_prefix && out[0] == ' ') out.erase(0, 1);
    at_start_ = false;
  }
  return out;
}

}  // namespace vkqc::tok
