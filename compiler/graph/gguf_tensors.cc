#include "compiler/graph/gguf_tensors.h"

#include "compiler/common/half.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace vkqc::gguf {
namespace {

uint16_t U16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }

// Q4_K / Q5_K: the 6-bit scale and minimum of sub-block j (0..7) from the 12 packed bytes.
void ScaleMinK4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// One block of `t` at `b` -> `y` (Block(t).elements values), as ggml's dequantization computes it.
void DequantizeBlock(Type t, const uint8_t* b, float* y) {
  switch (t) {
    case Type::F32: std::memcpy(y, b, 4); return;
    case Type::F16: *y = HalfToFloat(U16(b)); return;
    case Type::BF16: *y = Bf16ToFloat(U16(b)); return;
    case Type::Q4_0: {
      const float d = HalfToFloat(U16(b));
      for (int j = 0; j < 16; ++j) {
        y[j] = float((b[2 + j] & 0xF) - 8) * d;
        y[j + 16] = float((b[2 + j] >> 4) - 8) * d;
      }
      return;
    }
    case Type::Q4_1: {
      const float d = HalfToFloat(U16(b)), m = HalfToFloat(U16(b + 2));
      for (int j = 0; j < 16; ++j) {
        y[j] = float(b[4 + j] & 0xF) * d + m;
        y[j + 16] = float(b[4 + j] >> 4) * d + m;
      }
      return;
    }
    case Type::Q5_0: {
      const float d = HalfToFloat(U16(b));
      uint32_t qh;
      std::memcpy(&qh, b + 2, 4);
      for (int j = 0; j < 16; ++j) {
        const int x0 = (b[6 + j] & 0xF) | int(((qh >> j) << 4) & 0x10);
        const int x1 = (b[6 + j] >> 4) | int((qh >> (j + 12)) & 0x10);
        y[j] = float(x0 - 16) * d;
        y[j + 16] = float(x1 - 16) * d;
      }
      return;
    }
    case Type::Q5_1: {
      const float d = HalfToFloat(U16(b)), m = HalfToFloat(U16(b + 2));
      uint32_t qh;
      std::memcpy(&qh, b + 4, 4);
      for (int j = 0; j < 16; ++j) {
        const int x0 = (b[8 + j] & 0xF) | int(((qh >> j) << 4) & 0x10);
        const int x1 = (b[8 + j] >> 4) | int((qh >> (j + 12)) & 0x10);
        y[j] = float(x0) * d + m;
        y[j + 16] = float(x1) * d + m;
      }
      return;
    }
    case Type::Q8_0: {
      const float d = HalfToFloat(U16(b));
      for (int j = 0; j < 32; ++j) y[j] = float(int8_t(b[2 + j])) * d;
      return;
    }
    case Type::Q4_K: {
      const float d = HalfToFloat(U16(b)), dmin = HalfToFloat(U16(b + 2));
      const uint8_t* scales = b + 4;
      const uint8_t* q = b + 16;
      for (int j = 0, is = 0; j < 256; j += 64, is += 2, q += 32) {
        uint8_t sc, m;
        ScaleMinK4(is, scales, &sc, &m);
        const float d1 = d * float(sc), m1 = dmin * float(m);
        ScaleMinK4(is + 1, scales, &sc, &m);
        const float d2 = d * float(sc), m2 = dmin * float(m);
        for (int l = 0; l < 32; ++l) y[j + l] = d1 * float(q[l] & 0xF) - m1;
        for (int l = 0; l < 32; ++l) y[j + 32 + l] = d2 * float(q[l] >> 4) - m2;
      }
      return;
    }
    case Type::Q5_K: {
      const float d = HalfToFloat(U16(b)), dmin = HalfToFloat(U16(b + 2));
      const uint8_t* scales = b + 4;
      const uint8_t* qh = b + 16;
      const uint8_t* ql = b + 48;
      uint8_t u1 = 1, u2 = 2;
      for (int j = 0, is = 0; j < 256; j += 64, is += 2, ql += 32, u1 = uint8_t(u1 << 2), u2 = uint8_t(u2 << 2)) {
        uint8_t sc, m;
        ScaleMinK4(is, scales, &sc, &m);
        const float d1 = d * float(sc), m1 = dmin * float(m);
        ScaleMinK4(is + 1, scales, &sc, &m);
        const float d2 = d * float(sc), m2 = dmin * float(m);
        for (int l = 0; l < 32; ++l) y[j + l] = d1 * float((ql[l] & 0xF) + ((qh[l] & u1) ? 16 : 0)) - m1;
        for (int l = 0; l < 32; ++l) y[j + 32 + l] = d2 * float((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
      }
      return;
    }
    case Type::Q6_K: {
      const uint8_t* ql = b;
      const uint8_t* qh = b + 128;
      const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
      const float d = HalfToFloat(U16(b + 208));
      for (int n = 0; n < 256; n += 128, ql += 64, qh += 32, sc += 8) {
        for (int l = 0; l < 32; ++l) {
          const int is = l / 16;
          const int q1 = int((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
          const int q2 = int((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
          const int q3 = int((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
          const int q4 = int((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
          y[n + l] = d * float(sc[is]) * float(q1);
          y[n + l + 32] = d * float(sc[is + 2]) * float(q2);
          y[n + l + 64] = d * float(sc[is + 4]) * float(q3);
          y[n + l + 96] = d * float(sc[is + 6]) * float(q4);
        }
      }
      return;
    }
    default: return;
  }
}

}  // namespace

float Bf16ToFloat(uint16_t h) {
  const uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

bool CanDequantize(Type t) {
  switch (t) {
    case Type::F32: case Type::F16: case Type::BF16: case Type::Q4_0: case Type::Q4_1: case Type::Q5_0:
    case Type::Q5_1: case Type::Q8_0: case Type::Q4_K: case Type::Q5_K: case Type::Q6_K: return true;
    default: return false;
  }
}

std::string DequantizableTypes() { return "F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K"; }

Result<std::vector<float>> Dequantize(const File& f, const TensorInfo& t) {
  if (!CanDequantize(t.type))
    return UserError(f.path() + ": tensor '" + t.name + "' has type " + TypeName(t.type) +
                     ", which this version cannot read (it reads " + DequantizableTypes() + ")");
  const BlockInfo bi = Block(t.type);
  std::vector<float> out(size_t(t.elements));
  const uint8_t* p = f.Data(t);
  for (uint64_t b = 0; b < t.elements / bi.elements; ++b) DequantizeBlock(t.type, p + b * bi.bytes, out.data() + b * bi.elements);
  return out;
}

ConvertedWeight ConvertExact(const File& f, const TensorInfo& t, std::string* why) {
  ConvertedWeight w;
  const uint64_t k = t.dims[0], n = t.elements / k;
  const uint8_t* p = f.Data(t);
  if (t.type == Type::Q4_0) {
    w.scheme = "q4gsw";
    w.group_size = 32;
    w.data.assign(size_t(t.elements / 2), 0);
    w.scales.resize(size_t(t.elements / 32));
    for (uint64_t b = 0; b < t.elements / 32; ++b) {
      const uint8_t* blk = p + b * 18;
      w.scales[b] = HalfToFloat(U16(blk));
      uint8_t* dst = w.data.data() + b * 16;  // 32 elements of the block, 2 per byte
      for (int j = 0; j < 32; ++j) {
        const int nib = j < 16 ? (blk[2 + j] & 0xF) : (blk[2 + j - 16] >> 4);
        const uint8_t q = uint8_t((nib - 8) & 0xF);  // two's complement nibble of q in [-8, 7]
        dst[j / 2] |= uint8_t(q << (4 * (j % 2)));
      }
    }
    return w;
  }
  if (t.type == Type::Q8_0) {
    // Rows whose blocks share one scale are q8csw (one scale per row, the int8 GEMV's fast path);
    // otherwise q8gsw with groups of 32.
    const uint64_t blocks = k / 32;
    bool uniform = true;
    for (uint64_t r = 0; r < n && uniform; ++r)
      for (uint64_t b = 1; b < blocks && uniform; ++b) uniform = U16(p + (r * blocks + b) * 34) == U16(p + r * blocks * 34);
    w.scheme = uniform ? "q8csw" : "q8gsw";
    w.group_size = uniform ? 0 : 32;
    w.data.resize(size_t(t.elements));
    w.scales.resize(size_t(uniform ? n : n * blocks));
    for (uint64_t r = 0; r < n; ++r)
      for (uint64_t b = 0; b < blocks; ++b) {
        const uint8_t* blk = p + (r * blocks + b) * 34;
        if (!uniform) w.scales[r * blocks + b] = HalfToFloat(U16(blk));
        else if (b == 0) w.scales[r] = HalfToFloat(U16(blk));
        std::memcpy(w.data.data() + r * k + b * 32, blk + 2, 32);
      }
    return w;
  }
  if (t.type == Type::Q4_1 || t.type == Type::Q4_K) {
    // u4 nibbles as stored (w = s * q - m), element [r, c] in nibble (r * k + c) % 2 of byte (r * k + c) / 2.
    w.scheme = "q4gmw";
    w.group_size = 32;
    w.data.assign(size_t(t.elements / 2), 0);
    w.scales.resize(size_t(t.elements / 32));
    w.mins.resize(size_t(t.elements / 32));
    auto put = [&](uint64_t e, int q) { w.data[e / 2] |= uint8_t(q << (4 * (e % 2))); };
    if (t.type == Type::Q4_1) {
      for (uint64_t b = 0; b < t.elements / 32; ++b) {
        const uint8_t* blk = p + b * 20;
        w.scales[b] = HalfToFloat(U16(blk));
        w.mins[b] = -HalfToFloat(U16(blk + 2));  // ggml: d * q + m
        for (int j = 0; j < 16; ++j) {
          put(b * 32 + uint64_t(j), blk[4 + j] & 0xF);
          put(b * 32 + uint64_t(j) + 16, blk[4 + j] >> 4);
        }
      }
    } else {
      for (uint64_t b = 0; b < t.elements / 256; ++b) {
        const uint8_t* blk = p + b * 144;
        const float d = HalfToFloat(U16(blk)), dmin = HalfToFloat(U16(blk + 2));
        const uint8_t* q = blk + 16;
        for (int j = 0; j < 4; ++j) {  // 64 values: sub-blocks 2j (low nibbles) and 2j + 1 (high)
          for (int h = 0; h < 2; ++h) {
            uint8_t sc, mn;
            ScaleMinK4(2 * j + h, blk + 4, &sc, &mn);
            const uint64_t g = b * 8 + uint64_t(2 * j + h);
            w.scales[g] = d * float(sc);
            w.mins[g] = dmin * float(mn);
            for (int l = 0; l < 32; ++l) put(g * 32 + uint64_t(l), h ? q[32 * j + l] >> 4 : q[32 * j + l] & 0xF);
          }
        }
      }
    }
    return w;
  }
  *why = std::string(TypeName(t.type)) + " has no exact form in this version's weight schemes (Q4_0 -> q4gsw, "
         "Q8_0 -> q8gsw or q8csw, Q4_1 and Q4_K -> q4gmw)";
  return {};
}

Result<ConvertedWeight> QuantizeFloat(const std::vector<float>& w, int64_t n, int64_t k, const std::string& scheme,
                                      int32_t group, double* max_err, double* rms) {
  ConvertedWeight out;
  out.scheme = scheme;
  const bool q4 = scheme == "q4gsw";
  if (n < 1 || k < 1 || w.size() != size_t(n * k)) return UserError("quantize: the weights are not [n][k]");
  if (q4 && (group <= 0 || k % group != 0))
    return UserError("quantize: q4gsw group size " + std::to_string(group) + " does not divide K=" + std::to_string(k));
  for (size_t i = 0; i < w.size(); ++i)
    if (!std::isfinite(w[i]))
      return UserError("quantize: weight [" + std::to_string(int64_t(i) / k) + ", " + std::to_string(int64_t(i) % k) +
                       "] is not finite (" + std::to_string(w[i]) + ")");
  const int64_t g = q4 ? group : k;
  out.group_size = q4 ? group : 0;
  const float qmax = q4 ? 7.0f : 127.0f;
  out.data.assign(size_t(q4 ? n * k / 2 : n * k), 0);
  double err = 0, sq = 0;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t g0 = 0; g0 < k; g0 += g) {
      float amax = 0;
      for (int64_t j = g0; j < g0 + g; ++j) amax = std::max(amax, std::fabs(w[size_t(r * k + j)]));
      const float s = amax > 0 ? amax / qmax : 1.0f;
      out.scales.push_back(s);
      for (int64_t j = g0; j < g0 + g; ++j) {
        const float v = w[size_t(r * k + j)];
        const int q = int(std::clamp(std::nearbyint(v / s), q4 ? -8.0f : -127.0f, qmax));
        err = std::max(err, std::fabs(double(v) - double(s) * q));
        sq += double(v) * v;
        const int64_t e = r * k + j;
        if (q4) out.data[size_t(e / 2)] |= uint8_t((q & 0xF) << (4 * (e % 2)));
        else out.data[size_t(e)] = uint8_t(int8_t(q));
      }
    }
  *max_err = err;
  *rms = std::sqrt(sq / double(std::max<int64_t>(1, n * k)));
  return out;
}

}  // namespace vkqc::gguf
