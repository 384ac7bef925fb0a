// Weight packing for the linear family (layout contract in linear.h).
#include <cstring>

#include "compiler/kernels/linear/linear.h"

namespace vkqc::linear {

uint32_t PackedK4(int64_t k) {
  const uint64_t words = (uint64_t(k) + 3) / 4;
  return uint32_t((words + kKWordAlign - 1) / kKWordAlign * kKWordAlign);
}

uint32_t PackedK8(int64_t k) {
  const uint64_t words = (uint64_t(k) + 7) / 8;
  return uint32_t((words + 3) / 4 * 4);
}

namespace {

// Value i (row-major over [N,K]) of an int4 tensor as the IR stores it: two per byte, low first.
int32_t Nibble(const uint8_t* w, int64_t i, bool is_signed) {
  const int32_t v = (w[i / 2] >> (4 * (i % 2))) & 0xF;
  return is_signed && v >= 8 ? v - 16 : v;
}

template <typename T>
void Put(std::vector<uint8_t>& region, uint32_t word, T v) {
  static_assert(sizeof(T) == 4);
  std::memcpy(region.data() + size_t(word) * 4, &v, 4);
}

}  // namespace

PackedLinear PackedLayout(ir::Scheme scheme, int64_t n, int64_t k, int64_t group_size, uint64_t* words) {
  PackedLinear p;
  const bool int4 = scheme == ir::Scheme::Q4GSW || scheme == ir::Scheme::Q4GAW || scheme == ir::Scheme::Q4GMW;
  const bool grouped = int4 || scheme == ir::Scheme::Q8GSW;
  const uint64_t groups = grouped ? uint64_t(k / group_size) : 1, un = uint64_t(n);
  p.kw = int4 ? PackedK8(k) : PackedK4(k);
  uint64_t next = un * p.kw;
  p.scale_off = uint32_t(next);
  next += un * groups;
  if (scheme == ir::Scheme::Q4GAW) {
    p.zp_off = uint32_t(next);
    next += (un * groups + 3) / 4;
  } else if (scheme == ir::Scheme::Q4GMW) {  // f32 minimums [N][G] where q4gaw keeps its zero points
    p.zp_off = uint32_t(next);
    next += un * groups;
  }
  if (!grouped) {  // q8csw: each channel's weight sum (grouped layers sum per group in the shader)
    p.wsum_off = uint32_t(next);
    next += un;
  }
  p.bias_off = uint32_t(next);
  next += un;
  *words = (next + 3) / 4 * 4;  // whole 16-byte units: the GEMV reads the region as uvec4
  return p;
}

uint64_t PackedLinearBytes(ir::Scheme scheme, int64_t n, int64_t k, int64_t group_size) {
  uint64_t words = 0;
  PackedLayout(scheme, n, k, group_size, &words);
  return words * 4;
}

PackedLinear PackLinear(ir::Scheme scheme, const uint8_t* w, int64_t n, int64_t k, int64_t group_size,
                        const float* scales, const int32_t* zero_points, const float* bias, const float* mins) {
  const bool int4 = scheme == ir::Scheme::Q4GSW || scheme == ir::Scheme::Q4GAW || scheme == ir::Scheme::Q4GMW;
  const bool grouped = int4 || scheme == ir::Scheme::Q8GSW;
  const int64_t groups = grouped ? k / group_size : 1;
  uint64_t words = 0;
  PackedLinear p = PackedLayout(scheme, n, k, group_size, &words);
  p.region.assign(size_t(words) * 4, 0);

  for (int64_t r = 0; r < n; ++r) {
    uint8_t* row = p.region.data() + size_t(r) * p.kw * 4;
    if (int4) {
      for (int64_t c = 0; c < k; ++c) {
        int32_t v = Nibble(w, r * k + c, scheme == ir::Scheme::Q4GSW);
        if (scheme == ir::Scheme::Q4GSW) v += 8;  // zero point 8
        const int64_t word = c / 8, in = c % 8;
        row[word * 4 + (in % 4)] |= uint8_t(v << (in < 4 ? 0 : 4));
      }
    } else {
      int32_t sum = 0;
      for (int64_t c = 0; c < k; ++c) {
        row[c] = w[r * k + c];
        sum += int8_t(w[r * k + c]);
      }
      if (!grouped) Put(p.region, p.wsum_off + uint32_t(r), sum);
    }
    for (int64_t g = 0; g < groups; ++g) Put(p.region, p.scale_off + uint32_t(r * groups + g), scales[r * groups + g]);
    Put(p.region, p.bias_off + uint32_t(r), bias ? bias[r] : 0.0f);
  }
  if (scheme == ir::Scheme::Q4GAW)
    for (int64_t i = 0; i < n * groups; ++i) p.region[size_t(p.zp_off) * 4 + size_t(i)] = uint8_t(zero_points[i]);
  if (scheme == ir::Scheme::Q4GMW)
    for (int64_t i = 0; i < n * groups; ++i) Put(p.region, p.zp_off + uint32_t(i), mins[i]);
  return p;
}

std::vector<int32_t> UnpackLinear(ir::Scheme scheme, const PackedLinear& p, int64_t n, int64_t k, int64_t group_size) {
  const bool int4 = scheme == ir::Scheme::Q4GSW || scheme == ir::Scheme::Q4GAW || scheme == ir::Scheme::Q4GMW;
  const int64_t groups = int4 ? k / group_size : 1;
  std::vector<int32_t> out(size_t(n * k));
  for (int64_t r = 0; r < n; ++r) {
    const uint8_t* row = p.region.data() + size_t(r) * p.kw * 4;
    for (int64_t c = 0; c < k; ++c) {
      if (!int4) {
        out[r * k + c] = int8_t(row[c]);
        continue;
      }
      const int64_t word = c / 8, in = c % 8;
      const int32_t nib = (row[word * 4 + (in % 4)] >> (in < 4 ? 0 : 4)) & 0xF;
      int32_t zp = scheme == ir::Scheme::Q4GMW ? 0 : 8;
      if (scheme == ir::Scheme::Q4GAW) zp = p.region[size_t(p.zp_off) * 4 + size_t(r * groups + c / group_size)];
      out[r * k + c] = nib - zp;
    }
  }
  return out;
}

}  // namespace vkqc::linear
