#include "reference/conv_reference.h"

#include <algorithm>
#include <cmath>

namespace vkqc::ref {
namespace {

template <typename Tap>
LinearOut Conv(const ConvParams& p, const float* bias, int activation, Tap tap) {
  LinearOut out;
  const int64_t rows = p.n * p.oh * p.ow;
  out.y.resize(size_t(rows * p.cout));
  out.magnitude.resize(size_t(rows * p.cout));
  const int64_t cin_g = p.c / p.groups, cout_g = p.cout / p.groups;
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t oh = 0; oh < p.oh; ++oh)
      for (int64_t ow = 0; ow < p.ow; ++ow)
        for (int64_t co = 0; co < p.cout; ++co) {
          const int64_t g = co / cout_g;
          double acc = 0, mag = 0;
          for (int64_t kh = 0; kh < p.kh; ++kh) {
            const int64_t ih = oh * p.sh + kh * p.dh - p.pt;
            if (ih < 0 || ih >= p.h) continue;
            for (int64_t kw = 0; kw < p.kw; ++kw) {
              const int64_t iw = ow * p.sw + kw * p.dw - p.pl;
              if (iw < 0 || iw >= p.w) continue;
              for (int64_t ci = 0; ci < cin_g; ++ci) {
                const int64_t x_index = ((n * p.h + ih) * p.w + iw) * p.c + g * cin_g + ci;
                const int64_t w_index = ((co * p.kh + kh) * p.kw + kw) * cin_g + ci;
                const double t = tap(x_index, w_index, co);
                acc += t;
                mag += std::fabs(t);
              }
            }
          }
          if (bias) {
            acc += bias[co];
            mag += std::fabs(bias[co]);
          }
          if (activation == 1) acc = std::max(acc, 0.0);
          if (activation == 2) acc = std::clamp(acc, 0.0, 6.0);
          const int64_t o = ((n * p.oh + oh) * p.ow + ow) * p.cout + co;
          out.y[o] = float(acc);
          out.magnitude[o] = float(mag);
        }
  return out;
}

}  // namespace

LinearOut Conv2dQuantized(const ConvParams& p, const std::vector<int32_t>& xq, QParams in, const int8_t* w,
                          const float* w_scales, const float* bias, int activation) {
  // Integer products (exact), scaled per output channel: equal to the int32 accumulation.
  return Conv(p, bias, activation, [&](int64_t xi, int64_t wi, int64_t co) {
    return double((xq[xi] - in.zero_point) * int32_t(w[wi])) * double(in.scale) * double(w_scales[co]);
  });
}

LinearOut Conv2dWeightOnly(const ConvParams& p, const std::vector<float>& x, const int8_t* w, const float* w_scales,
                           const float* bias, int activation) {
  return Conv(p, bias, activation, [&](int64_t xi, int64_t wi, int64_t co) {
    return double(x[xi]) * double(w_scales[co]) * double(w[wi]);
  });
}

}  // namespace vkqc::ref
