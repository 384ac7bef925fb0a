// GGUF reader and tensor conversions. The test writes its own GGUF files (layout from the GGUF
// specification) and checks them with a dequantizer of its own, written from the block layouts of
// ggml (ggml-common.h / the GGUF specification) in an element-by-element form rather than the
// library's loops. Numbering of value types and ggml types is restated here, not taken from gguf.h.
#include "compiler/graph/gguf.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "compiler/graph/gguf_tensors.h"

namespace vkqc::gguf {
namespace {

// Metadata value types (gguf_type) and ggml tensor types, as numbered by the specification.
enum : uint32_t { kU8 = 0, kI8, kU16, kI16, kU32, kI32, kF32, kBool, kStr, kArr, kU64, kI64, kF64 };
enum : uint32_t {
  gF32 = 0, gF16 = 1, gQ4_0 = 2, gQ4_1 = 3, gQ5_0 = 6, gQ5_1 = 7, gQ8_0 = 8,
  gQ4_K = 12, gQ5_K = 13, gQ6_K = 14, gBF16 = 30,
};

// Elements and bytes per block (ggml-common.h: block_q4_0 = {half d; u8 qs[16]}, ...).
struct Layout { uint32_t type; const char* name; uint32_t elems, bytes; };
constexpr Layout kLayouts[] = {
    {gF32, "F32", 1, 4},        {gF16, "F16", 1, 2},        {gBF16, "BF16", 1, 2},      {gQ4_0, "Q4_0", 32, 18},
    {gQ4_1, "Q4_1", 32, 20},    {gQ5_0, "Q5_0", 32, 22},    {gQ5_1, "Q5_1", 32, 24},    {gQ8_0, "Q8_0", 32, 34},
    {gQ4_K, "Q4_K", 256, 144},  {gQ5_K, "Q5_K", 256, 176},  {gQ6_K, "Q6_K", 256, 210},
};
const Layout& LayoutOf(uint32_t type) {
  for (const Layout& l : kLayouts)
    if (l.type == type) return l;
  return kLayouts[0];
}

int IntSize(uint32_t t) { return t == kU8 || t == kI8 || t == kBool ? 1 : t == kU16 || t == kI16 ? 2 : t == kU32 || t == kI32 ? 4 : 8; }

uint64_t RoundUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

// Little-endian byte builder.
struct Bytes {
  std::vector<uint8_t> b;
  Bytes& U(uint64_t v, int n) { for (int i = 0; i < n; ++i) b.push_back(uint8_t(v >> (8 * i))); return *this; }
  Bytes& U32(uint32_t v) { return U(v, 4); }
  Bytes& U64(uint64_t v) { return U(v, 8); }
  Bytes& F32(float v) { return U32(std::bit_cast<uint32_t>(v)); }
  Bytes& F64(double v) { return U64(std::bit_cast<uint64_t>(v)); }
  Bytes& Str(const std::string& s) { U64(s.size()).b.insert(b.end(), s.begin(), s.end()); return *this; }
};

std::vector<uint8_t> F32Bytes(const std::vector<float>& v) {
  Bytes b;
  for (float x : v) b.F32(x);
  return b.b;
}

struct TensorSpec {
  std::string name;
  std::vector<uint64_t> dims;  // innermost first
  uint32_t type;
  std::vector<uint8_t> data;
  std::optional<uint64_t> offset;  // default: the next aligned offset
};

// GGUF writer: header ("GGUF", u32 version, u64 tensor count, u64 kv count), key/values (string
// key, u32 type, value; arrays: u32 element type, u64 count, elements), tensor infos (name, u32
// rank, u64 dims, u32 ggml type, u64 offset), zero padding to the alignment, then the data. No
// padding after the last tensor, so that any truncation cuts into something the reader needs.
struct Writer {
  uint32_t version = 3;
  std::optional<uint64_t> tensor_count, kv_count;  // override the real counts
  uint64_t align = 32;
  Bytes kv;
  uint64_t n_kv = 0;
  std::vector<TensorSpec> tensors;
  size_t infos_end = 0, data_start = 0;  // filled by Build
  std::vector<uint64_t> offsets;         // filled by Build

  Bytes& Key(const std::string& k, uint32_t type) { ++n_kv; return kv.Str(k).U32(type); }
  Writer& Int(const std::string& k, uint32_t type, int64_t v) { Key(k, type).U(uint64_t(v), IntSize(type)); return *this; }
  Writer& F32(const std::string& k, float v) { Key(k, kF32).F32(v); return *this; }
  Writer& F64(const std::string& k, double v) { Key(k, kF64).F64(v); return *this; }
  Writer& Str(const std::string& k, const std::string& v) { Key(k, kStr).Str(v); return *this; }
  Writer& IntArray(const std::string& k, uint32_t elem, const std::vector<int64_t>& v) {
    Bytes& b = Key(k, kArr).U32(elem).U64(v.size());
    for (int64_t x : v) b.U(uint64_t(x), IntSize(elem));
    return *this;
  }
  Writer& FloatArray(const std::string& k, uint32_t elem, const std::vector<double>& v) {
    Bytes& b = Key(k, kArr).U32(elem).U64(v.size());
    for (double x : v) elem == kF32 ? b.F32(float(x)) : b.F64(x);
    return *this;
  }
  Writer& StrArray(const std::string& k, const std::vector<std::string>& v) {
    Bytes& b = Key(k, kArr).U32(kStr).U64(v.size());
    for (const std::string& s : v) b.Str(s);
    return *this;
  }
  Writer& Alignment(uint32_t a) { align = a; return Int("general.alignment", kU32, a); }
  Writer& Tensor(std::string name, std::vector<uint64_t> dims, uint32_t type, std::vector<uint8_t> data,
                 std::optional<uint64_t> offset = {}) {
    tensors.push_back({std::move(name), std::move(dims), type, std::move(data), offset});
    return *this;
  }

  std::vector<uint8_t> Build() {
    Bytes o;
    o.b = {'G', 'G', 'U', 'F'};
    o.U32(version).U64(tensor_count.value_or(tensors.size())).U64(kv_count.value_or(n_kv));
    o.b.insert(o.b.end(), kv.b.begin(), kv.b.end());
    offsets.clear();
    uint64_t next = 0;
    for (const TensorSpec& t : tensors) {
      const uint64_t off = t.offset.value_or(RoundUp(next, align));
      offsets.push_back(off);
      next = off + t.data.size();
      o.Str(t.name).U32(uint32_t(t.dims.size()));
      for (uint64_t d : t.dims) o.U64(d);
      o.U32(t.type).U64(off);
    }
    infos_end = o.b.size();
    data_start = RoundUp(infos_end, align);
    o.b.resize(data_start, 0);
    for (size_t i = 0; i < tensors.size(); ++i) {
      const std::vector<uint8_t>& d = tensors[i].data;
      if (d.empty()) continue;
      const size_t at = data_start + offsets[i];
      if (o.b.size() < at + d.size()) o.b.resize(at + d.size(), 0);
      std::memcpy(o.b.data() + at, d.data(), d.size());
    }
    return o.b;
  }
};

::testing::AssertionResult HasText(const Error& e, const std::string& fragment) {
  if (e.message.find(fragment) == std::string::npos)
    return ::testing::AssertionFailure() << "message lacks \"" << fragment << "\": " << e.message;
  return ::testing::AssertionSuccess();
}
template <typename R>
::testing::AssertionResult FailsWith(const R& r, const std::string& fragment) {
  if (r.ok()) return ::testing::AssertionFailure() << "expected an error containing \"" << fragment << "\"";
  return HasText(r.error(), fragment);
}
// Parses `bytes` (a buffer of exactly its size, so ASan sees reads past the end).
::testing::AssertionResult Rejects(const std::vector<uint8_t>& bytes, const std::string& fragment) {
  return FailsWith(File::FromMemory(bytes.data(), bytes.size(), "h.gguf"), fragment);
}

// ---------------------------------------------------------------------------------------------
// Reference decoding, written from the layouts.

uint16_t Le16(const uint8_t* p) { return uint16_t(p[0] | p[1] << 8); }

// IEEE binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits.
float RefHalf(uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  float mag;
  if (e == 31) mag = m ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else if (e == 0) mag = std::ldexp(float(m), -24);
  else mag = std::ldexp(float(1024 + m), e - 25);
  return (h & 0x8000) ? -mag : mag;
}
float RefBf16(uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); }

bool SameFloat(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

// Element i of one block at `b`.
float RefElement(uint32_t type, const uint8_t* b, int i) {
  switch (type) {
    case gF32: return std::bit_cast<float>(uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24);
    case gF16: return RefHalf(Le16(b));
    case gBF16: return RefBf16(Le16(b));
    case gQ4_0: case gQ4_1: case gQ5_0: case gQ5_1: {
      // half d, [half m], [u8 qh[4]: bit i (little-endian u32) = 5th bit of element i], u8 qs[16]:
      // element i < 16 in the low nibble of qs[i], element i >= 16 in the high nibble of qs[i-16].
      const bool with_min = type == gQ4_1 || type == gQ5_1, five = type == gQ5_0 || type == gQ5_1;
      const uint8_t* qh = b + (with_min ? 4 : 2);
      const uint8_t* qs = qh + (five ? 4 : 0);
      int q = i < 16 ? qs[i] & 15 : qs[i - 16] >> 4;
      if (five) q |= ((qh[i / 8] >> (i % 8)) & 1) << 4;
      const float d = RefHalf(Le16(b));
      if (with_min) return float(q) * d + RefHalf(Le16(b + 2));
      return float(q - (five ? 16 : 8)) * d;
    }
    case gQ8_0: return float(int8_t(b[2 + i])) * RefHalf(Le16(b));  // half d, i8 qs[32]
    case gQ4_K: case gQ5_K: {
      // half d, half dmin, u8 scales[12], [u8 qh[32]], u8 qs[128]. Eight sub-blocks of 32; sub-block
      // s has a 6-bit scale and min: s < 4: scales[s] & 63, scales[s+4] & 63; s >= 4: the low/high
      // nibble of scales[s+4] plus the top 2 bits of scales[s-4] / scales[s] as bits 4-5. Each 64
      // elements share 32 qs bytes (low nibbles first); qh[l] bit s is the 5th bit (Q5_K).
      const int s = i / 32, l = i % 32;
      const uint8_t* sc = b + 4;
      const int scale = s < 4 ? sc[s] & 63 : (sc[s + 4] & 15) | (sc[s - 4] >> 6) << 4;
      const int min = s < 4 ? sc[s + 4] & 63 : (sc[s + 4] >> 4) | (sc[s] >> 6) << 4;
      const bool five = type == gQ5_K;
      const uint8_t byte = b[16 + (five ? 32 : 0) + 32 * (i / 64) + l];
      int q = s % 2 == 0 ? byte & 15 : byte >> 4;
      if (five) q += ((b[16 + l] >> s) & 1) * 16;
      const float d = RefHalf(Le16(b)) * float(scale), m = RefHalf(Le16(b + 2)) * float(min);
      return d * float(q) - m;
    }
    case gQ6_K: {
      // u8 ql[128] (low 4 bits), u8 qh[64] (high 2 bits), i8 scales[16] (one per 16 elements), half d.
      // Each 128 elements use 64 ql bytes and 32 qh bytes: quarter c (32 elements) takes the low
      // (c < 2) or high nibble of ql[32*(c%2) + l] and bits 2c..2c+1 of qh[l]; q = that - 32.
      const int h = i / 128, c = (i % 128) / 32, l = i % 32;
      const uint8_t lo = b[64 * h + 32 * (c % 2) + l];
      const int q = ((c < 2 ? lo & 15 : lo >> 4) | ((b[128 + 32 * h + l] >> (2 * c)) & 3) << 4) - 32;
      return RefHalf(Le16(b + 208)) * float(int8_t(b[192 + i / 16])) * float(q);
    }
  }
  ADD_FAILURE() << "no reference for type " << type;
  return 0;
}

// A finite half (subnormals included) of random sign.
uint16_t RandomHalf(std::mt19937& rng) {
  const uint32_t sign = rng() & 1, exp = rng() % 30;
  return uint16_t(sign << 15 | exp << 10 | (rng() & 1023));
}
void PutHalf(std::vector<uint8_t>& v, size_t at, uint16_t h) { v[at] = uint8_t(h), v[at + 1] = uint8_t(h >> 8); }

// Random blocks: every bit pattern for F32/F16/BF16; random codes and finite fp16 scales otherwise.
std::vector<uint8_t> RandomBlocks(uint32_t type, size_t elements, std::mt19937& rng) {
  const Layout& l = LayoutOf(type);
  std::vector<uint8_t> v(elements / l.elems * l.bytes);
  for (uint8_t& x : v) x = uint8_t(rng());
  if (l.elems == 1) return v;
  for (size_t at = 0; at < v.size(); at += l.bytes) {
    PutHalf(v, at + (type == gQ6_K ? 208 : 0), RandomHalf(rng));
    if (type == gQ4_1 || type == gQ5_1 || type == gQ4_K || type == gQ5_K) PutHalf(v, at + 2, RandomHalf(rng));
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// Metadata.

TEST(GgufMetadata, EveryValueTypeRoundTrips) {
  for (uint32_t version : {2u, 3u}) {
    SCOPED_TRACE(version);
    Writer w;
    w.version = version;
    w.Int("u8", kU8, 200).Int("i8", kI8, -100).Int("u16", kU16, 60000).Int("i16", kI16, -30000);
    w.Int("u32", kU32, 4000000000LL).Int("i32", kI32, -2000000000).F32("f32", -0.1f).Int("bool", kBool, 1);
    w.Str("str", "h\xC3\xA9llo").Int("u64", kU64, (1LL << 40) + 3).Int("i64", kI64, -(1LL << 50) - 7);
    w.F64("f64", 3.141592653589793);
    w.StrArray("arr.str", {"a", "", "bc"}).IntArray("arr.i32", kI32, {-1, 2, 2147483647});
    w.IntArray("arr.u8", kU8, {0, 255}).IntArray("arr.bool", kBool, {1, 0}).IntArray("arr.i64", kI64, {});
    w.FloatArray("arr.f32", kF32, {0.5, -2.25}).FloatArray("arr.f64", kF64, {0.1});
    const std::vector<uint8_t> bytes = w.Build();
    auto f = File::FromMemory(bytes.data(), bytes.size(), "meta.gguf");
    ASSERT_TRUE(f.ok()) << f.error().message;
    const File& file = **f;
    EXPECT_EQ(file.version(), version);
    EXPECT_EQ(file.alignment(), 32u);
    EXPECT_EQ(file.metadata().size(), 19u);
    EXPECT_TRUE(file.tensors().empty());

    const std::pair<const char*, ValueType> types[] = {
        {"u8", ValueType::U8}, {"i8", ValueType::I8}, {"u16", ValueType::U16}, {"i16", ValueType::I16},
        {"u32", ValueType::U32}, {"i32", ValueType::I32}, {"f32", ValueType::F32}, {"bool", ValueType::BOOL},
        {"str", ValueType::STRING}, {"arr.str", ValueType::ARRAY}, {"u64", ValueType::U64},
        {"i64", ValueType::I64}, {"f64", ValueType::F64}};
    for (const auto& [key, type] : types) {
      ASSERT_NE(file.Find(key), nullptr) << key;
      EXPECT_EQ(file.Find(key)->type, type) << key;
    }
    const std::pair<const char*, int64_t> ints[] = {{"u8", 200}, {"i8", -100}, {"u16", 60000}, {"i16", -30000},
        {"u32", 4000000000LL}, {"i32", -2000000000}, {"bool", 1}, {"u64", (1LL << 40) + 3}, {"i64", -(1LL << 50) - 7}};
    for (const auto& [key, v] : ints) {
      auto r = file.Int(key);
      ASSERT_TRUE(r.ok()) << r.error().message;
      EXPECT_EQ(*r, v) << key;
    }
    EXPECT_EQ(*file.Float("f32"), double(-0.1f));
    EXPECT_EQ(*file.Float("f64"), 3.141592653589793);
    EXPECT_EQ(*file.Float("i32"), -2000000000.0);  // integers are numbers too
    EXPECT_EQ(*file.String("str"), "h\xC3\xA9llo");

    const Value* a = file.Find("arr.str");
    EXPECT_EQ(a->elem, ValueType::STRING);
    EXPECT_EQ(a->strings, (std::vector<std::string>{"a", "", "bc"}));
    EXPECT_EQ(file.Find("arr.i32")->elem, ValueType::I32);
    EXPECT_EQ(file.Find("arr.i32")->ints, (std::vector<int64_t>{-1, 2, 2147483647}));
    EXPECT_EQ(file.Find("arr.u8")->ints, (std::vector<int64_t>{0, 255}));
    EXPECT_EQ(file.Find("arr.bool")->ints, (std::vector<int64_t>{1, 0}));
    EXPECT_TRUE(file.Find("arr.i64")->is_array());
    EXPECT_TRUE(file.Find("arr.i64")->ints.empty());
    EXPECT_EQ(file.Find("arr.f32")->elem, ValueType::F32);
    EXPECT_EQ(file.Find("arr.f32")->floats, (std::vector<double>{0.5, -2.25}));
    EXPECT_EQ(file.Find("arr.f64")->floats, (std::vector<double>{0.1}));

    // Missing and wrong-typed keys: errors naming the key; the *Or getters fall back.
    EXPECT_TRUE(FailsWith(file.Int("nope"), "'nope' is missing"));
    EXPECT_TRUE(FailsWith(file.Float("nope"), "'nope' is missing"));
    EXPECT_TRUE(FailsWith(file.String("nope"), "'nope' is missing"));
    EXPECT_TRUE(FailsWith(file.Int("str"), "'str' must be an integer"));
    EXPECT_TRUE(FailsWith(file.Int("f64"), "'f64' must be an integer"));
    EXPECT_TRUE(FailsWith(file.Int("arr.i32"), "'arr.i32' must be an integer"));
    EXPECT_TRUE(FailsWith(file.Float("str"), "'str' must be a number"));
    EXPECT_TRUE(FailsWith(file.String("u8"), "'u8' must be a string"));
    EXPECT_TRUE(FailsWith(file.Int("nope"), "meta.gguf"));
    EXPECT_EQ(file.IntOr("i8", 7), -100);
    EXPECT_EQ(file.IntOr("nope", 7), 7);
    EXPECT_EQ(file.IntOr("str", 7), 7);
    EXPECT_EQ(file.FloatOr("u16", 0), 60000.0);
    EXPECT_EQ(file.FloatOr("f32", 0), double(-0.1f));
    EXPECT_EQ(file.FloatOr("str", 2.5), 2.5);
    EXPECT_EQ(file.StringOr("str", "x"), "h\xC3\xA9llo");
    EXPECT_EQ(file.StringOr("u8", "x"), "x");
    EXPECT_EQ(file.StringOr("nope", "x"), "x");
  }
}

TEST(GgufMetadata, OnlyVersions2And3) {
  for (uint32_t version : {0u, 1u, 2u, 3u, 4u}) {
    Writer w;
    w.version = version;
    w.Int("n", kU32, 5);
    const std::vector<uint8_t> bytes = w.Build();
    auto f = File::FromMemory(bytes.data(), bytes.size(), "v.gguf");
    if (version == 2 || version == 3) {
      ASSERT_TRUE(f.ok()) << f.error().message;
      EXPECT_EQ(*(*f)->Int("n"), 5);
    } else {
      EXPECT_TRUE(FailsWith(f, "GGUF version " + std::to_string(version) + " is not supported"));
    }
  }
}

TEST(GgufMetadata, CustomAlignmentPlacesTensorData) {
  // Pad a string until the end of the tensor infos rounds differently to 32 and to 64.
  for (int pad = 0; pad < 64; ++pad) {
    Writer w;
    w.Alignment(64).Str("pad", std::string(size_t(pad), 'x'));
    w.Tensor("a", {3}, gF32, F32Bytes({1.0f, -2.0f, 3.5f}));
    w.Tensor("b", {2}, gF32, F32Bytes({4.0f, 5.0f}));
    const std::vector<uint8_t> bytes = w.Build();
    if (RoundUp(w.infos_end, 32) == RoundUp(w.infos_end, 64)) continue;
    ASSERT_EQ(w.offsets, (std::vector<uint64_t>{0, 64}));
    auto f = File::FromMemory(bytes.data(), bytes.size(), "a64.gguf");
    ASSERT_TRUE(f.ok()) << f.error().message;
    const File& file = **f;
    EXPECT_EQ(file.alignment(), 64u);
    const TensorInfo* a = file.FindTensor("a");
    const TensorInfo* b = file.FindTensor("b");
    ASSERT_TRUE(a && b);
    EXPECT_EQ(b->offset, 64u);
    EXPECT_EQ(size_t(file.Data(*a) - bytes.data()), w.data_start);
    EXPECT_EQ(size_t(file.Data(*b) - bytes.data()), w.data_start + 64);
    EXPECT_EQ(*Dequantize(file, *a), (std::vector<float>{1.0f, -2.0f, 3.5f}));
    EXPECT_EQ(*Dequantize(file, *b), (std::vector<float>{4.0f, 5.0f}));
    // An offset aligned to 32 but not to 64 is refused.
    Writer m;
    m.Alignment(64).Tensor("a", {3}, gF32, F32Bytes({1, 2, 3})).Tensor("b", {2}, gF32, F32Bytes({4, 5}), 32);
    EXPECT_TRUE(Rejects(m.Build(), "tensor 'b' offset 32 is not aligned to 64"));
    return;
  }
  FAIL() << "no padding separates 32- and 64-byte alignment";
}

// ---------------------------------------------------------------------------------------------
// Hostile and truncated input.

// A valid small file: metadata of several types and two tensors, the last ending the file.
std::vector<uint8_t> SmallValidFile() {
  Writer w;
  w.Str("general.architecture", "llama").Int("n", kU32, 7).StrArray("tok", {"a", "bb"});
  w.FloatArray("f", kF32, {1.5}).Int("b", kBool, 1).F64("d", 0.25);
  std::mt19937 rng(3);
  w.Tensor("w.q4", {32, 2}, gQ4_0, RandomBlocks(gQ4_0, 64, rng));
  w.Tensor("w.f32", {3}, gF32, F32Bytes({1.0f, -2.0f, 3.0f}));
  return w.Build();
}

TEST(GgufHostile, EveryTruncationIsAnError) {
  const std::vector<uint8_t> full = SmallValidFile();
  {
    auto f = File::FromMemory(full.data(), full.size(), "full.gguf");
    ASSERT_TRUE(f.ok()) << f.error().message;
    ASSERT_EQ((*f)->tensors().size(), 2u);
    ASSERT_EQ((*f)->metadata().size(), 6u);
  }
  for (size_t len = 0; len < full.size(); ++len) {
    const std::vector<uint8_t> cut(full.begin(), full.begin() + std::ptrdiff_t(len));  // exactly len bytes
    auto f = File::FromMemory(cut.data(), cut.size(), "cut.gguf");
    ASSERT_FALSE(f.ok()) << "truncated to " << len << " of " << full.size() << " bytes, still parsed";
    EXPECT_TRUE(HasText(f.error(), "cut.gguf"));
  }
}

TEST(GgufHostile, HugeLengthsAndCounts) {
  {  // a key of length 2^60
    Writer w;
    w.kv.U64(1ull << 60);
    w.n_kv = 1;
    EXPECT_TRUE(Rejects(w.Build(), "metadata key 0 has length 1152921504606846976, over the limit"));
  }
  {  // a string value of length 2^62, and one just past the end of the file
    Writer w;
    w.Key("s", kStr).U64(1ull << 62);
    EXPECT_TRUE(Rejects(w.Build(), "metadata 's' has length 4611686018427387904, over the limit"));
    Writer v;
    v.Key("s", kStr).U64(1000).Str("abc");
    EXPECT_TRUE(Rejects(v.Build(), "metadata 's' at byte"));
  }
  {  // arrays of 2^40 elements, and of 1000 in a file of a few dozen bytes
    Writer w;
    w.Key("a", kArr).U32(kU8).U64(1ull << 40);
    EXPECT_TRUE(Rejects(w.Build(), "metadata 'a' has 1099511627776 elements, over the limit"));
    Writer v;
    v.Key("a", kArr).U32(kU32).U64(1000).U32(1);
    EXPECT_TRUE(Rejects(v.Build(), "metadata 'a' (1000 elements)"));
    Writer s;  // strings: the count fits the file, the strings do not
    s.Key("a", kArr).U32(kStr).U64(4).Str("x").U64(1ull << 62);
    EXPECT_TRUE(Rejects(s.Build(), "metadata 'a'[1] has length"));
  }
  {  // tensor and metadata counts
    Writer w;
    w.Int("n", kU32, 1);
    w.tensor_count = 1ull << 40;
    EXPECT_TRUE(Rejects(w.Build(), "1099511627776 tensors is corrupt"));
    w.tensor_count = 1000;
    EXPECT_TRUE(Rejects(w.Build(), "1000 tensor infos"));
    w.tensor_count.reset();
    w.kv_count = 1ull << 50;
    EXPECT_TRUE(Rejects(w.Build(), "1125899906842624 metadata entries"));
    w.kv_count = 1000;
    EXPECT_TRUE(Rejects(w.Build(), "1000 metadata entries"));
  }
}

TEST(GgufHostile, BadTensorInfos) {
  const std::vector<uint8_t> f32x8 = F32Bytes(std::vector<float>(8, 1.0f));
  auto one = [&](std::vector<uint64_t> dims, uint32_t type, std::vector<uint8_t> data,
                 std::optional<uint64_t> offset = {}) {
    Writer w;
    w.Str("general.name", "t").Tensor("w", std::move(dims), type, std::move(data), offset);
    return w.Build();
  };
  EXPECT_TRUE(Rejects(one({}, gF32, f32x8), "tensor 'w' has rank 0 (1 to 4 are valid)"));
  EXPECT_TRUE(Rejects(one({2, 2, 2, 1, 1}, gF32, f32x8), "tensor 'w' has rank 5"));
  {
    const std::vector<uint8_t> rank4 = one({2, 2, 2, 1}, gF32, f32x8);
    auto f = File::FromMemory(rank4.data(), rank4.size(), "r4.gguf");
    ASSERT_TRUE(f.ok()) << f.error().message;
    EXPECT_EQ((*f)->tensors()[0].dims, (std::vector<uint64_t>{2, 2, 2, 1}));
    EXPECT_EQ((*f)->tensors()[0].bytes, 32u);
  }
  EXPECT_TRUE(Rejects(one({8, 0}, gF32, f32x8), "tensor 'w' has an invalid dimension 0"));
  EXPECT_TRUE(Rejects(one({1ull << 40, 1ull << 40}, gF32, f32x8), "invalid dimension 1099511627776"));
  EXPECT_TRUE(Rejects(one({8}, 99, f32x8), "tensor 'w' has ggml type 99"));
  EXPECT_TRUE(Rejects(one({8}, 4, f32x8), "ggml type 4"));  // the removed Q4_2
  EXPECT_TRUE(Rejects(one({256}, 16, f32x8), "ggml type 16 (IQ2_XXS)"));
  EXPECT_TRUE(Rejects(one({48}, gQ4_0, std::vector<uint8_t>(27)), "rows of 48 elements are not whole Q4_0 blocks of 32"));
  EXPECT_TRUE(Rejects(one({8}, gF32, f32x8, 16), "tensor 'w' offset 16 is not aligned to 32"));
  EXPECT_TRUE(Rejects(one({8}, gF32, std::vector<uint8_t>(31)), "tensor 'w' (32 bytes at data offset 0) runs past the end"));
  EXPECT_TRUE(Rejects(one({8}, gF32, {}, 1ull << 62), "runs past the end of the file"));
  EXPECT_TRUE(Rejects(one({8}, gF32, {}, ~uint64_t(31)), "runs past the end of the file"));
  {
    Writer w;
    w.Tensor("w", {8}, gF32, f32x8).Tensor("w", {8}, gF32, f32x8);
    EXPECT_TRUE(Rejects(w.Build(), "tensor 'w' appears twice"));
  }
  {  // the file ends inside the padding after the tensor infos
    Writer w;
    w.Str("general.name", "t").Tensor("w", {8}, gF32, f32x8);
    std::vector<uint8_t> b = w.Build();
    ASSERT_LT(w.infos_end, w.data_start);
    b.resize(w.infos_end);
    EXPECT_TRUE(Rejects(b, "the data section"));
  }
}

TEST(GgufHostile, BadValues) {
  EXPECT_TRUE(Rejects(Writer().Int("k", kU32, 1).Int("o", kU8, 2).Int("k", kU32, 1).Build(), "metadata key 'k' appears twice"));
  std::vector<uint8_t> b = Writer().Int("n", kU8, 1).Build();
  b[0] = 'X';
  EXPECT_TRUE(Rejects(b, "no 'GGUF' magic"));
  EXPECT_TRUE(Rejects(Writer().Int("big", kU64, -1).Build(), "metadata 'big' is the u64 18446744073709551615, too large"));
  EXPECT_TRUE(Rejects(Writer().Int("flag", kBool, 2).Build(), "metadata 'flag' is a bool of value 2"));
  Writer unknown;
  unknown.Key("x", 13).U64(0);
  EXPECT_TRUE(Rejects(unknown.Build(), "metadata 'x' has unknown value type 13"));
  Writer nested;
  nested.Key("x", kArr).U32(kArr).U64(1).U32(kU8).U64(0);
  EXPECT_TRUE(Rejects(nested.Build(), "metadata 'x' is an array of unsupported element type 9"));
  EXPECT_TRUE(Rejects(Writer().Alignment(48).Build(), "general.alignment must be a power of two"));
  EXPECT_TRUE(Rejects(Writer().Str("general.alignment", "64").Build(), "general.alignment must be a power of two"));
}

TEST(GgufHostile, RandomCorruptionNeverCrashes) {
  const std::vector<uint8_t> valid = SmallValidFile();
  std::mt19937 rng(20240611);
  int parsed = 0, rejected = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    std::vector<uint8_t> m = valid;  // a buffer of exactly the file's size
    const int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % m.size();
      switch (rng() % 3) {
        case 0: m[at] = uint8_t(rng()); break;
        case 1: m[at] ^= uint8_t(1u << (rng() % 8)); break;
        default: m[at] = (rng() & 1) ? 0xFF : 0x00; break;
      }
    }
    auto f = File::FromMemory(m.data(), m.size(), "m.gguf");
    if (!f.ok()) {
      ++rejected;
      EXPECT_TRUE(HasText(f.error(), "m.gguf"));
      continue;
    }
    ++parsed;
    const File& file = **f;
    for (const TensorInfo& t : file.tensors()) {
      auto d = Dequantize(file, t);
      if (d.ok()) {
        EXPECT_EQ(d->size(), t.elements);
      }
      std::string why;
      const ConvertedWeight c = ConvertExact(file, t, &why);
      EXPECT_TRUE(!c.scheme.empty() || !why.empty());
    }
    for (const auto& kv : file.metadata())
      (void)(file.IntOr(kv.first, 0) + file.FloatOr(kv.first, 0) + double(file.StringOr(kv.first, "").size()));
  }
  EXPECT_GT(parsed, 100);
  EXPECT_GT(rejected, 1000);
}

// ---------------------------------------------------------------------------------------------
// Dequantization.

TEST(GgufDequantize, BlockSizesAndNames) {
  for (const Layout& l : kLayouts) {
    EXPECT_EQ(Block(Type(l.type)).elements, l.elems) << l.name;
    EXPECT_EQ(Block(Type(l.type)).bytes, l.bytes) << l.name;
    EXPECT_STREQ(TypeName(Type(l.type)), l.name);
    EXPECT_TRUE(CanDequantize(Type(l.type))) << l.name;
  }
  // Known layouts that are not dequantized: block_q8_1 {half d, s; i8 qs[32]}, block_q2_K
  // {u8 scales[16]; u8 qs[64]; half d, dmin}, block_q3_K {u8 hmask[32]; qs[64]; scales[12]; half d},
  // block_q8_K {float d; i8 qs[256]; i16 bsums[16]}.
  EXPECT_EQ(Block(Type(9)).bytes, 36u);
  EXPECT_EQ(Block(Type(10)).bytes, 84u);
  EXPECT_EQ(Block(Type(11)).bytes, 110u);
  EXPECT_EQ(Block(Type(15)).bytes, 292u);
  EXPECT_FALSE(CanDequantize(Type(10)));
}

// fp16 scales and tensors go through compiler/common/half.h, checked on every bit pattern by
// tests/unit/core/half_test.cc.
TEST(GgufDequantize, Bf16EveryBitPattern) {
  for (uint32_t h = 0; h < 65536; ++h)
    ASSERT_TRUE(SameFloat(Bf16ToFloat(uint16_t(h)), RefBf16(uint16_t(h)))) << std::hex << h;
  EXPECT_EQ(Bf16ToFloat(0x3F80), 1.0f);
}

TEST(GgufDequantize, EveryTypeMatchesTheSpecLayout) {
  std::mt19937 rng(1234);
  const uint64_t k = 512, n = 2;
  Writer w;
  for (const Layout& l : kLayouts) w.Tensor(l.name, {k, n}, l.type, RandomBlocks(l.type, k * n, rng));
  const std::vector<uint8_t> bytes = w.Build();
  auto f = File::FromMemory(bytes.data(), bytes.size(), "all.gguf");
  ASSERT_TRUE(f.ok()) << f.error().message;
  for (size_t ti = 0; ti < std::size(kLayouts); ++ti) {
    const Layout& l = kLayouts[ti];
    SCOPED_TRACE(l.name);
    const TensorInfo* t = (*f)->FindTensor(l.name);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(uint32_t(t->type), l.type);
    EXPECT_EQ(t->elements, k * n);
    EXPECT_EQ(t->bytes, k * n / l.elems * l.bytes);
    auto d = Dequantize(**f, *t);
    ASSERT_TRUE(d.ok()) << d.error().message;
    ASSERT_EQ(d->size(), k * n);
    const uint8_t* src = w.tensors[ti].data.data();
    int bad = 0;
    for (size_t e = 0; e < k * n; ++e) {
      const float want = RefElement(l.type, src + e / l.elems * l.bytes, int(e % l.elems));
      if (!SameFloat((*d)[e], want) && ++bad <= 5)
        ADD_FAILURE() << "element " << e << " (row " << e / k << ", column " << e % k << "): got " << (*d)[e]
                      << ", the layout gives " << want;
    }
    EXPECT_EQ(bad, 0);
  }
}

TEST(GgufDequantize, HandComputedBlocks) {
  auto deq = [](uint32_t type, const std::vector<uint8_t>& block, std::vector<int> at) {
    Writer w;
    w.Tensor("t", {LayoutOf(type).elems}, type, block);
    const std::vector<uint8_t> bytes = w.Build();
    auto f = File::FromMemory(bytes.data(), bytes.size(), "hand.gguf");
    std::vector<float> y;
    if (!f.ok()) return y;
    const std::vector<float> all = *Dequantize(**f, (*f)->tensors()[0]);
    for (int i : at) y.push_back(all[size_t(i)]);
    return y;
  };
  using V = std::vector<float>;
  std::vector<uint8_t> q4(18, 0x88);  // d = 1; qs[0] = 0x9F: element 0 = 15 - 8, element 16 = 9 - 8
  PutHalf(q4, 0, 0x3C00), q4[2] = 0x9F;
  EXPECT_EQ(deq(gQ4_0, q4, {0, 16, 1}), (V{7.0f, 1.0f, 0.0f}));
  std::vector<uint8_t> q8(34, 0);  // d = 0.5; codes -128 and 127
  PutHalf(q8, 0, 0x3800), q8[2] = 0x80, q8[33] = 0x7F;
  EXPECT_EQ(deq(gQ8_0, q8, {0, 31, 1}), (V{-64.0f, 63.5f, 0.0f}));
  std::vector<uint8_t> q5(22, 0);  // d = 1, qh bit 17: element 17 = (0 | 16) - 16, others 0 - 16
  PutHalf(q5, 0, 0x3C00), q5[2 + 2] = 0x02;
  EXPECT_EQ(deq(gQ5_0, q5, {17, 1, 16}), (V{0.0f, -16.0f, -16.0f}));
  // Q4_K: d = 1, dmin = 0.5. Sub-block 0: scale 5, min 3; sub-block 4: scale (0x21 & 15) | (1 << 4)
  // = 17, min (0x21 >> 4) | (0 << 4) = 2 (the top bits of scales[0] and scales[4]).
  std::vector<uint8_t> q4k(144, 0);
  PutHalf(q4k, 0, 0x3C00), PutHalf(q4k, 2, 0x3800);
  q4k[4 + 0] = 5 | 0x40, q4k[4 + 4] = 3, q4k[4 + 8] = 0x21;
  q4k[16 + 0] = 0x0A, q4k[16 + 64] = 0x03;  // element 0: 5 * 10 - 1.5; element 128: 17 * 3 - 1
  EXPECT_EQ(deq(gQ4_K, q4k, {0, 128, 32}), (V{48.5f, 50.0f, 0.0f}));
  // Q6_K: d = 0.25; scales[0] = -2; ql[0] = 0x07, qh[0] bits 0-1 = 2: element 0 = (7 | 32) - 32 = 7,
  // element 1 = 0 - 32; scales[1] = 3 for elements 16..31.
  std::vector<uint8_t> q6k(210, 0);
  PutHalf(q6k, 208, 0x3400), q6k[192] = 0xFE, q6k[193] = 3, q6k[0] = 0x07, q6k[128] = 0x02;
  EXPECT_EQ(deq(gQ6_K, q6k, {0, 1, 16}), (V{-3.5f, 16.0f, -24.0f}));
}

// ---------------------------------------------------------------------------------------------
// Exact conversions and re-quantization.

int SignedNibble(const std::vector<uint8_t>& packed, size_t e) {
  const int nib = (packed[e / 2] >> (4 * (e % 2))) & 15;
  return nib >= 8 ? nib - 16 : nib;
}

TEST(GgufConvert, Q4_0IsExactQ4gsw) {
  std::mt19937 rng(7);
  const uint64_t k = 64, n = 3;
  std::vector<uint8_t> blocks = RandomBlocks(gQ4_0, k * n, rng);
  PutHalf(blocks, 0, 0x3C00);  // block 0: d = 1; qs[0] = 0xF0: element 0 = -8, element 16 = 7
  blocks[2] = 0xF0;
  Writer w;
  w.Tensor("q", {k, n}, gQ4_0, blocks);
  const std::vector<uint8_t> bytes = w.Build();
  auto f = File::FromMemory(bytes.data(), bytes.size(), "q4.gguf");
  ASSERT_TRUE(f.ok()) << f.error().message;
  const TensorInfo& t = (*f)->tensors()[0];
  auto deq = Dequantize(**f, t);
  ASSERT_TRUE(deq.ok());
  std::string why;
  const ConvertedWeight c = ConvertExact(**f, t, &why);
  ASSERT_EQ(c.scheme, "q4gsw") << why;
  EXPECT_EQ(c.group_size, 32);
  ASSERT_EQ(c.data.size(), k * n / 2);
  ASSERT_EQ(c.scales.size(), k * n / 32);
  for (size_t g = 0; g < c.scales.size(); ++g)
    EXPECT_TRUE(SameFloat(c.scales[g], RefHalf(Le16(blocks.data() + g * 18)))) << "group " << g;
  for (size_t e = 0; e < k * n; ++e) {
    const int q = SignedNibble(c.data, e);
    const uint8_t* blk = blocks.data() + e / 32 * 18;
    const int i = int(e % 32);
    ASSERT_EQ(q, (i < 16 ? blk[2 + i] & 15 : blk[2 + i - 16] >> 4) - 8) << "element " << e;
    ASSERT_TRUE(SameFloat(float(q) * c.scales[e / 32], (*deq)[e])) << "element " << e;
  }
  EXPECT_EQ(SignedNibble(c.data, 0), -8);
  EXPECT_EQ(SignedNibble(c.data, 16), 7);
  EXPECT_EQ(c.scales[0], 1.0f);
}

// Q8_0: blocks sharing one scale per row -> q8csw; otherwise (gguf_tensors.cc since 20:38) q8gsw g32.
TEST(GgufConvert, Q8_0IsExactQ8cswOrQ8gsw) {
  for (bool uniform : {true, false}) {
    SCOPED_TRACE(uniform ? "one scale per row" : "a scale per block");
    std::mt19937 rng(8);
    const uint64_t k = 96, n = 2, per_row = uniform ? 1 : k / 32;
    std::vector<uint8_t> blocks = RandomBlocks(gQ8_0, k * n, rng);  // random (differing) block scales
    const uint16_t row_scale[2] = {0x2E66, 0xB800};                 // ~0.1 and -0.5
    for (size_t b = 0; b < 6 && uniform; ++b) PutHalf(blocks, b * 34, row_scale[b / 3]);
    blocks[2] = 0x80;  // code -128
    Writer w;
    w.Tensor("q", {k, n}, gQ8_0, blocks);
    const std::vector<uint8_t> bytes = w.Build();
    auto f = File::FromMemory(bytes.data(), bytes.size(), "q8.gguf");
    ASSERT_TRUE(f.ok()) << f.error().message;
    const TensorInfo& t = (*f)->tensors()[0];
    auto deq = Dequantize(**f, t);
    ASSERT_TRUE(deq.ok());
    std::string why;
    const ConvertedWeight c = ConvertExact(**f, t, &why);
    ASSERT_EQ(c.scheme, uniform ? "q8csw" : "q8gsw") << why;
    EXPECT_EQ(c.group_size, uniform ? 0 : 32);
    ASSERT_EQ(c.data.size(), k * n);
    ASSERT_EQ(c.scales.size(), n * per_row);
    for (size_t i = 0; i < c.scales.size(); ++i)  // scale i: block i, or block 0 of row i
      EXPECT_TRUE(SameFloat(c.scales[i], RefHalf(Le16(blocks.data() + (uniform ? i * 3 : i) * 34)))) << i;
    if (uniform) {
      EXPECT_EQ(c.scales[1], -0.5f);
    }
    for (size_t e = 0; e < k * n; ++e) {
      const int8_t q = int8_t(c.data[e]);
      ASSERT_EQ(q, int8_t(blocks[e / 32 * 34 + 2 + e % 32])) << "element " << e;
      ASSERT_TRUE(SameFloat(float(q) * c.scales[uniform ? e / k : e / 32], (*deq)[e])) << "element " << e;
    }
    EXPECT_EQ(int8_t(c.data[0]), -128);
  }
}

TEST(GgufConvert, NoExactFormGivesAReason) {
  std::mt19937 rng(9);
  Writer w;
  w.Tensor("h", {64, 2}, gF16, RandomBlocks(gF16, 128, rng)).Tensor("k", {256, 1}, gQ6_K, RandomBlocks(gQ6_K, 256, rng));
  const std::vector<uint8_t> bytes = w.Build();
  auto f = File::FromMemory(bytes.data(), bytes.size(), "none.gguf");
  ASSERT_TRUE(f.ok()) << f.error().message;
  for (const auto& [name, fragment] : std::vector<std::pair<std::string, std::string>>{
           {"h", "F16 has no exact form"}, {"k", "Q6_K has no exact form"}}) {
    std::string why;
    const ConvertedWeight c = ConvertExact(**f, *(*f)->FindTensor(name), &why);
    EXPECT_TRUE(c.scheme.empty() && c.data.empty() && c.scales.empty()) << name << " -> " << c.scheme;
    EXPECT_NE(why.find(fragment), std::string::npos) << name << ": " << why;
  }
}

// Q4_1 and Q4_K -> q4gmw g32: every element s * q - m (q the stored nibble) equals ggml's
// dequantized value exactly (both are one fp32 product and one fp32 subtraction of the same
// operands), and the scales and minimums are per group of 32 in element order.
TEST(GgufConvert, Q4_1AndQ4_KAreExactQ4gmw) {
  for (const uint32_t type : {uint32_t(gQ4_1), uint32_t(gQ4_K)}) {
    SCOPED_TRACE(type == gQ4_1 ? "Q4_1" : "Q4_K");
    std::mt19937 rng(10 + type);
    const uint64_t k = 512, n = 2;
    Writer w;
    w.Tensor("q", {k, n}, type, RandomBlocks(type, k * n, rng));
    const std::vector<uint8_t> bytes = w.Build();
    auto f = File::FromMemory(bytes.data(), bytes.size(), "q4m.gguf");
    ASSERT_TRUE(f.ok()) << f.error().message;
    const TensorInfo& t = (*f)->tensors()[0];
    auto deq = Dequantize(**f, t);
    ASSERT_TRUE(deq.ok());
    std::string why;
    const ConvertedWeight c = ConvertExact(**f, t, &why);
    ASSERT_EQ(c.scheme, "q4gmw") << why;
    EXPECT_EQ(c.group_size, 32);
    ASSERT_EQ(c.scales.size(), k * n / 32);
    ASSERT_EQ(c.mins.size(), k * n / 32);
    ASSERT_EQ(c.data.size(), k * n / 2);
    for (size_t e = 0; e < k * n; ++e) {
      const int q = (c.data[e / 2] >> (4 * (e % 2))) & 0xF;
      const float v = c.scales[e / 32] * float(q) - c.mins[e / 32];
      ASSERT_TRUE(SameFloat(v, (*deq)[e])) << "element " << e << ": " << v << " vs " << (*deq)[e];
    }
  }
}

// Recomputes max |w - s*q| and checks codes and scales of a QuantizeFloat result.
void CheckQuantized(const std::vector<float>& w, int64_t n, int64_t k, int32_t group, const ConvertedWeight& c,
                    double max_err, double rms) {
  const bool q4 = c.scheme == "q4gsw";
  const int64_t g = q4 ? group : k;
  ASSERT_EQ(c.scales.size(), size_t(n * (k / g)));
  ASSERT_EQ(c.data.size(), size_t(q4 ? n * k / 2 : n * k));
  double err = 0, sq = 0;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t g0 = 0; g0 < k; g0 += g) {
      const float s = c.scales[size_t(r * (k / g) + g0 / g)];
      float amax = 0;
      for (int64_t j = g0; j < g0 + g; ++j) amax = std::max(amax, std::fabs(w[size_t(r * k + j)]));
      EXPECT_EQ(s, amax > 0 ? amax / (q4 ? 7.0f : 127.0f) : 1.0f) << "row " << r << " group " << g0 / g;
      for (int64_t j = g0; j < g0 + g; ++j) {
        const size_t e = size_t(r * k + j);
        const int q = q4 ? SignedNibble(c.data, e) : int8_t(c.data[e]);
        EXPECT_GE(q, q4 ? -8 : -127);
        EXPECT_LE(q, q4 ? 7 : 127);
        EXPECT_LE(std::fabs(double(w[e]) / s - q), 0.5 + 1e-6) << "element " << e;  // nearest code
        err = std::max(err, std::fabs(double(w[e]) - double(s) * q));
        sq += double(w[e]) * w[e];
      }
    }
  EXPECT_EQ(max_err, err);
  EXPECT_DOUBLE_EQ(rms, std::sqrt(sq / double(n * k)));
}

TEST(GgufQuantize, Q8cswAndQ4gswReportTheirError) {
  std::mt19937 rng(10);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  const int64_t n = 3, k = 64;
  std::vector<float> w(size_t(n * k));
  for (float& x : w) x = u(rng);
  for (int64_t j = 0; j < k; ++j) w[size_t(2 * k + j)] = j < 32 ? 0.0f : w[size_t(2 * k + j)];  // a zero group
  for (const char* scheme : {"q8csw", "q4gsw"}) {
    SCOPED_TRACE(scheme);
    double max_err = -1, rms = -1;
    const auto r = QuantizeFloat(w, n, k, scheme, 32, &max_err, &rms);
    ASSERT_TRUE(r.ok()) << r.error().message;
    const ConvertedWeight& c = r.value();
    EXPECT_EQ(c.scheme, scheme);
    EXPECT_EQ(c.group_size, std::string(scheme) == "q4gsw" ? 32 : 0);
    CheckQuantized(w, n, k, 32, c, max_err, rms);
    EXPECT_GT(max_err, 0.0);
  }
  // Hand-checked: round half to even (-63.5 -> -64, 2.5 -> 2), error 0.5.
  double max_err = 0, rms = 0;
  ConvertedWeight c = *QuantizeFloat({127.0f, -63.5f, 2.5f, 0.75f}, 1, 4, "q8csw", 0, &max_err, &rms);
  EXPECT_EQ(c.scales, (std::vector<float>{1.0f}));
  EXPECT_EQ(c.data, (std::vector<uint8_t>{127, uint8_t(-64), 2, 1}));
  EXPECT_EQ(max_err, 0.5);
  c = *QuantizeFloat({7.0f, -3.5f, 2.5f, -7.0f, 0, 0, 0, 0}, 1, 8, "q4gsw", 8, &max_err, &rms);
  EXPECT_EQ(c.scales, (std::vector<float>{1.0f}));
  EXPECT_EQ(c.data, (std::vector<uint8_t>{0xC7, 0x92, 0, 0}));  // 7 | -4 << 4, 2 | -7 << 4
  EXPECT_EQ(max_err, 0.5);
}

// A NaN or infinite weight is refused (it would be hidden by the max|w| scan and int(NaN) is
// undefined); so is a group size that does not divide K.
TEST(GgufQuantize, NonFiniteWeightsAndBadGroupsAreRefused) {
  double max_err = 0, rms = 0;
  auto r = QuantizeFloat({std::numeric_limits<float>::quiet_NaN(), 1.0f, -2.0f, 0.5f}, 1, 4, "q8csw", 0, &max_err,
                         &rms);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not finite"), std::string::npos) << r.error().message;
  r = QuantizeFloat({1.0f, std::numeric_limits<float>::infinity(), 0, 0}, 1, 4, "q4gsw", 4, &max_err, &rms);
  ASSERT_FALSE(r.ok());
  r = QuantizeFloat({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}, 1, 6, "q4gsw", 4, &max_err, &rms);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("group"), std::string::npos) << r.error().message;
  r = QuantizeFloat({1.0f, 2.0f}, 1, 2, "q4gsw", 0, &max_err, &rms);
  ASSERT_FALSE(r.ok());
}

}  // namespace
}  // namespace vkqc::gguf
