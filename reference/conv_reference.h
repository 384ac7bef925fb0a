// CPU reference of the convolution family (NHWC), from DESIGN section 4: int32-exact integer
// path; padded taps contribute nothing (they read the input zero point).
#pragma once
#include <cstdint>
#include <vector>

#include "reference/reference.h"

namespace vkqc::ref {

struct ConvParams {
  int64_t n = 1, h = 1, w = 1, c = 1, cout = 1, kh = 1, kw = 1;
  int64_t sh = 1, sw = 1, pt = 0, pl = 0, dh = 1, dw = 1, oh = 1, ow = 1;
  int64_t groups = 1;
};

// xq: int8 values [N,H,W,C]; w: int8 [Cout][KH][KW][C/groups]; per-tensor input params; per
// output channel weight scales. Returns float outputs (before any q8to) and magnitudes.
LinearOut Conv2dQuantized(const ConvParams& p, const std::vector<int32_t>& xq, QParams in, const int8_t* w,
                          const float* w_scales, const float* bias, int activation /* 0 none, 1 relu, 2 relu6 */);
// Weight-only: float x.
LinearOut Conv2dWeightOnly(const ConvParams& p, const std::vector<float>& x, const int8_t* w, const float* w_scales,
                           const float* bias, int activation);

}  // namespace vkqc::ref
