// Weight prefetch (`--prefetch-max-bytes`, compiler/passes/prefetch.h), validation and
// synchronization validation on: a decoder-shaped chain (add + rms_norm -> two linears reading it ->
// silu -> a linear) whose programs of 1 and 3 rows take prefetch dispatches beside the norm's and
// the silu's dispatches. Their outputs are bit-for-bit those of the same bundle without them, and
// match the reference; the sink state `vkqc.sink` is in the bundle only where a program prefetches
// (not for 17 rows, not with the option off); the per-layer timed runs account every command.
#include <gtest/gtest.h>

#include <cstring>

#include "compiler/passes/pipeline.h"
#include "compiler/passes/prefetch.h"
#include "gpu_fixture.h"
#include "row_fusion_helpers.h"

namespace vkqc {
namespace {

using namespace row_fusion_helpers;
using testing_graphs::OwnBytes;

// a, b [T, 512] -> s = a + b, y = rms_norm(s) -> l1 (q4gsw, 320 channels: 80 KiB), l2 (q8csw, 160:
// 80 KiB) -> silu(l1) -> l3 (q8csw, 320 x 400: 125 KiB). Outputs: s, l2, l3.
ir::Graph Chain() {
  const int64_t c = 512;
  ir::Graph g;
  const int a = Add(g, "a", {ir::kSymbolicDim, c}), b = Add(g, "b", {ir::kSymbolicDim, c});
  g.inputs = {a, b};
  const int s = Add(g, "s", {ir::kSymbolicDim, c});
  g.ops.push_back(gpu_test::MakeOp("add", ir::OpType::Add, {a, b}, {s}));
  const std::vector<float> w = RandomFloats(size_t(c), 11, 0.3f);
  const int gt = Add(g, "gamma", {c});
  g.tensors[size_t(gt)].data = OwnBytes(w.data(), w.size() * 4);
  const int y = Add(g, "y", {ir::kSymbolicDim, c});
  g.ops.push_back(gpu_test::MakeOp("norm", ir::OpType::RmsNorm, {s, gt}, {y}));
  const int z1 = AddLinear(g, "l1", y, c, 320, ir::Scheme::Q4GSW, 3);
  const int z2 = AddLinear(g, "l2", y, c, 160, ir::Scheme::Q8CSW, 4);
  const int h = Add(g, "h", {ir::kSymbolicDim, 320});
  g.ops.push_back(gpu_test::MakeOp("silu", ir::OpType::Silu, {z1}, {h}));
  const int z3 = AddLinear(g, "l3", h, 320, 400, ir::Scheme::Q8CSW, 5);
  g.outputs = {s, z2, z3};
  return g;
}

bool HasSink(const std::vector<uint8_t>& bundle) {
  gpu_test::Loaded l;
  EXPECT_EQ(vkqc_model_load(gpu_test::Context(), bundle.data(), bundle.size(), nullptr, &l.model), VKQC_OK)
      << vkqc_last_error();
  bool sink = false;
  for (uint32_t i = 0; i < vkqc_model_state_count(l.model); ++i) {
    vkqc_tensor_info info;
    EXPECT_EQ(vkqc_model_state_info(l.model, i, &info), VKQC_OK);
    sink |= std::strcmp(info.name, kSinkStateName) == 0;
  }
  return sink;
}

TEST(Prefetch, SameBitsAsWithoutAndTheReference) {
  auto test_profile = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(test_profile.ok());
  TargetProfile gpu_shapes = *test_profile;  // the GPU shapes of the kernels (cpu_device quirk removed)
  auto& q = gpu_shapes.quirks;
  q.erase(std::remove(q.begin(), q.end(), "cpu_device"), q.end());
  const ir::Graph g = Chain();
  for (int64_t m : {1, 3, 17})
    for (bool dot : {true, false})
      for (bool gpu : {false, true}) {
        const std::string what =
            "M " + std::to_string(m) + (dot ? " dot" : " auto") + (gpu ? " gpu shapes" : " test profile");
        CompileOptions o;
        o.tokens = {m};
        if (dot) o.select.force_accum = linear::Accum::IntDot;
        auto plain = CompileGraph(g, gpu ? gpu_shapes : *test_profile, o, 0);
        ASSERT_TRUE(plain.ok()) << plain.error().message;
        o.prefetch_max_bytes = 64u << 20;
        auto with = CompileGraph(g, gpu ? gpu_shapes : *test_profile, o, 0);
        ASSERT_TRUE(with.ok()) << with.error().message;
        EXPECT_FALSE(HasSink(*plain)) << what;
        EXPECT_EQ(HasSink(*with), m <= kPrefetchMaxTokens) << what;
        if (m > kPrefetchMaxTokens) {
          EXPECT_EQ(*with, *plain) << what << ": a bundle without prefetches is unchanged";
        }
        Ran rp, rw;
        std::map<std::string, std::vector<float>> in_p, in_w;
        ASSERT_TRUE(RunBundle(g, *plain, m, &rp, &in_p)) << what;
        ASSERT_TRUE(RunBundle(g, *with, m, &rw, &in_w)) << what;
        EXPECT_EQ(rw.variants, rp.variants) << what;
        for (const auto& [name, v] : rp.out) {
          ASSERT_EQ(rw.out.at(name).size(), v.size()) << what << " " << name;
          EXPECT_EQ(std::memcmp(rw.out.at(name).data(), v.data(), v.size() * 4), 0) << what << " " << name;
        }
        Check(g, rw, in_w, m, 2e-3, what);
        gpu_test::ExpectNoValidationMessages(what);
      }
}

}  // namespace
}  // namespace vkqc
