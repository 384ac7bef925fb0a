// Binary form of TokenizerData. Little-endian, version 1:
//
//   "VKQT"  u32 version  u32 flags (bit0 add_bos, bit1 add_eos, bit2 add_space_prefix)
//   i32 bos  i32 eos  i32 unk  i32 pad
//   str model  str pre
//   u32 count, str[count]  tokens
//   u32 count, f32[count]  scores
//   u32 count, i32[count]  token_types
//   u32 count, str[count]  merges
//   str chat_template
//
// where str = u32 byte length + bytes. Nothing may follow the last field.
#include <cstring>

#include "compiler/tokenizer/tokenizer.h"

namespace vkqc::tok {
namespace {

constexpr char kMagic[4] = {'V', 'K', 'Q', 'T'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kFlagAddBos = 1, kFlagAddEos = 2, kFlagSpacePrefix = 4;

class Writer {
 public:
  void U32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void I32(int32_t v) { U32(static_cast<uint32_t>(v)); }
  void F32(float f) {
    uint32_t v;
    std::memcpy(&v, &f, 4);
    U32(v);
  }
  void Str(const std::string& s) {
    U32(static_cast<uint32_t>(s.size()));
    out.insert(out.end(), s.begin(), s.end());
  }
  std::vector<uint8_t> out;
};

class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  size_t left() const { return n_ - pos_; }

  Result<uint32_t> U32(const char* what) {
    if (left() < 4) return Truncated(what);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p_[pos_ + i]) << (8 * i);
    pos_ += 4;
    return v;
  }
  Result<std::string> Str(const char* what) {
    VKQC_ASSIGN_OR_RETURN(uint32_t len, U32(what));
    if (len > left()) return Truncated(what);
    std::string s(reinterpret_cast<const char*>(p_ + pos_), len);
    pos_ += len;
    return s;
  }
  // A count of elements that take at least `min_bytes` each: bounded by what remains.
  Result<uint32_t> Count(const char* what, size_t min_bytes) {
    VKQC_ASSIGN_OR_RETURN(uint32_t count, U32(what));
    if (count > left() / min_bytes) {
      return UserError(std::string("tokenizer blob: ") + what + " count " + std::to_string(count) +
                       " exceeds the " + std::to_string(left()) + " bytes that remain");
    }
    return count;
  }
  Result<std::vector<std::string>> Strings(const char* what) {
    VKQC_ASSIGN_OR_RETURN(uint32_t count, Count(what, 4));
    std::vector<std::string> v;
    v.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      VKQC_ASSIGN_OR_RETURN(std::string s, Str(what));
      v.push_back(std::move(s));
    }
    return v;
  }
  Error Truncated(const char* what) const {
    return UserError(std::string("tokenizer blob is truncated (in ") + what + " at byte " +
                     std::to_string(pos_) + " of " + std::to_string(n_) + ")");
  }
  size_t pos() const { return pos_; }
  void Skip(size_t k) { pos_ += k; }
  const uint8_t* here() const { return p_ + pos_; }

 private:
  const uint8_t* p_;
  size_t n_;
  size_t pos_ = 0;
};

}  // namespace

std::vector<uint8_t> Serialize(const TokenizerData& d) {
  Writer w;
  w.out.insert(w.out.end(), kMagic, kMagic + 4);
  w.U32(kVersion);
  w.U32((d.add_bos ? kFlagAddBos : 0) | (d.add_eos ? kFlagAddEos : 0) |
        (d.add_space_prefix ? kFlagSpacePrefix : 0));
  w.I32(d.bos);
  w.I32(d.eos);
  w.I32(d.unk);
  w.I32(d.pad);
  w.Str(d.model);
  w.Str(d.pre);
  w.U32(static_cast<uint32_t>(d.tokens.size()));
  for (const std::string& s : d.tokens) w.Str(s);
  w.U32(static_cast<uint32_t>(d.scores.size()));
  for (float f : d.scores) w.F32(f);
  w.U32(static_cast<uint32_t>(d.token_types.size()));
  for (int32_t t : d.token_types) w.I32(t);
  w.U32(static_cast<uint32_t>(d.merges.size()));
  for (const std::string& s : d.merges) w.Str(s);
  w.Str(d.chat_template);
  return std::move(w.out);
}

Result<TokenizerData> Deserialize(const uint8_t* p, size_t n) {
  if (p == nullptr && n != 0) return UserError("tokenizer blob: null data");
  Reader r(p, n);
  if (n < 4 || std::memcmp(p, kMagic, 4) != 0) {
    return UserError("not a tokenizer blob (expected magic 'VKQT')");
  }
  r.Skip(4);
  VKQC_ASSIGN_OR_RETURN(uint32_t version, r.U32("version"));
  if (version != kVersion) {
    return UserError("tokenizer blob version " + std::to_string(version) +
                     " is not supported (this build reads version " + std::to_string(kVersion) + ")");
  }
  VKQC_ASSIGN_OR_RETURN(uint32_t flags, r.U32("flags"));
  if (flags & ~(kFlagAddBos | kFlagAddEos | kFlagSpacePrefix)) {
    return UserError("tokenizer blob has unknown flag bits " + std::to_string(flags));
  }
  TokenizerData d;
  d.add_bos = flags & kFlagAddBos;
  d.add_eos = flags & kFlagAddEos;
  d.add_space_prefix = flags & kFlagSpacePrefix;
  int32_t* ids[] = {&d.bos, &d.eos, &d.unk, &d.pad};
  for (int32_t* id : ids) {
    VKQC_ASSIGN_OR_RETURN(uint32_t v, r.U32("special token ids"));
    *id = static_cast<int32_t>(v);
  }
  VKQC_ASSIGN_OR_RETURN(d.model, r.Str("model"));
  VKQC_ASSIGN_OR_RETURN(d.pre, r.Str("pre"));
  VKQC_ASSIGN_OR_RETURN(d.tokens, r.Strings("tokens"));
  {
    VKQC_ASSIGN_OR_RETURN(uint32_t count, r.Count("scores", 4));
    d.scores.resize(count);
    for (uint32_t i = 0; i < count; ++i) {
      VKQC_ASSIGN_OR_RETURN(uint32_t v, r.U32("scores"));
      std::memcpy(&d.scores[i], &v, 4);
    }
  }
  {
    VKQC_ASSIGN_OR_RETURN(uint32_t count, r.Count("token_types", 4));
    d.token_types.resize(count);
    for (uint32_t i = 0; i < count; ++i) {
      VKQC_ASSIGN_OR_RETURN(uint32_t v, r.U32("token_types"));
      d.token_types[i] = static_cast<int32_t>(v);
    }
  }
  VKQC_ASSIGN_OR_RETURN(d.merges, r.Strings("merges"));
  VKQC_ASSIGN_OR_RETURN(d.chat_template, r.Str("chat_template"));
  if (r.left() != 0) {
    return UserError("tokenizer blob has " + std::to_string(r.left()) +
                     " unexpected bytes after its last field");
  }
  return d;
}

}  // namespace vkqc::tok
