// The broadcasting mul's index plan (elementwise::MergeBroadcast), without a GPU: a's dimensions
// merged where b broadcasts alike, size-1 dimensions dropped, b's strides per merged dimension.
#include <gtest/gtest.h>

#include "compiler/kernels/elementwise/elementwise.h"

namespace vkqc {
namespace {

using elementwise::BroadcastDims;
using elementwise::MergeBroadcast;

void Expect(const std::vector<int64_t>& a, const std::vector<int64_t>& b, std::vector<uint32_t> dims,
            std::vector<uint32_t> strides) {
  const BroadcastDims m = MergeBroadcast(a, b);
  EXPECT_EQ(m.dims, dims);
  EXPECT_EQ(m.b_strides, strides);
}

TEST(BroadcastPlan, MergesRunsInnermostFirst) {
  Expect({2, 5, 3, 7}, {2, 1, 1, 7}, {7, 15, 2}, {1, 0, 7});  // squeeze-excite: C, H*W (broadcast), N
  Expect({2, 5, 3, 7}, {7}, {7, 30}, {1, 0});                 // per-channel scale
  Expect({2, 5, 3, 7}, {1}, {210}, {0});                      // a scalar
  Expect({2, 5, 3, 7}, {5, 1, 7}, {7, 3, 5, 2}, {1, 0, 7, 0});
  Expect({2, 5, 3, 7}, {2, 5, 3, 1}, {7, 30}, {0, 1});
  Expect({2, 1, 3}, {2, 1, 1}, {3, 2}, {0, 1});                // a's size-1 dimension dropped
  Expect({1, 1}, {1}, {}, {});                                 // one value
  Expect({2, 3, 4, 5, 6, 7, 2, 3}, {3, 1, 5, 1, 7, 1, 3}, {3, 2, 7, 6, 5, 4, 3, 2}, {1, 0, 3, 0, 21, 0, 105, 0});
}

// Every element's b index from the plan equals the numpy rule's.
TEST(BroadcastPlan, IndexesLikeNumpy) {
  const std::vector<int64_t> a{3, 4, 5, 2}, b{4, 1, 2};
  const BroadcastDims m = MergeBroadcast(a, b);
  for (uint32_t i = 0; i < 3 * 4 * 5 * 2; ++i) {
    uint32_t rest = i, bi = 0;
    for (size_t d = 0; d < m.dims.size(); ++d) {
      bi += (rest % m.dims[d]) * m.b_strides[d];
      rest /= m.dims[d];
    }
    const uint32_t c = i % 2, w = (i / 2) % 5, h = (i / 10) % 4;
    (void)w;  // broadcast
    EXPECT_EQ(bi, h * 2 + c) << i;
  }
}

}  // namespace
}  // namespace vkqc
