// Weight packing for the linear family (layout contract in linear.h).
#include <cstring>

#include "compiler/kernels/linear/linear.h"

namespace vkqc::linear {

uint32_t PackedK4(int64_t k) {
  const uint64_t words = (uint64_t(k) + 3) / 4;
  return uint32_t((words + kKWordAlign - 1) / kKWordAlign * kKWordAlign);
}

PackedLinear PackQ8csw(const int8_t* w, int64_t n, int64_t k, const float* scales,
                       const float* bias) {
  const uint32_t k4p = PackedK4(k);
  PackedLinear out;
  out.weights.assign(size_t(n) * k4p * 4, 0);
  out.channel_params.assign(size_t(n) * 16, 0);
  for (int64_t r = 0; r < n; ++r) {
    int32_t sum = 0;
    uint8_t* dst = out.weights.data() + size_t(r) * k4p * 4;
    for (int64_t c = 0; c < k; ++c) {
      const int8_t v = w[r * k + c];
      dst[c] = uint8_t(v);  // word c/4, byte c%4 (little-endian)
      sum += v;
    }
    const float b = bias ? bias[r] : 0.0f;
    uint8_t* p = out.channel_params.data() + size_t(r) * 16;
    std::memcpy(p + 0, &scales[r], 4);
    std::memcpy(p + 4, &sum, 4);
    std::memcpy(p + 8, &b, 4);
  }
  return out;
}

std::vector<int8_t> UnpackQ8csw(const std::vector<uint8_t>& packed, int64_t n, int64_t k) {
  const uint32_t k4p = PackedK4(k);
  std::vector<int8_t> w(size_t(n * k));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) w[r * k + c] = int8_t(packed[size_t(r) * k4p * 4 + c]);
  return w;
}

}  // namespace vkqc::linear
