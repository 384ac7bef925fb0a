// `vkqc roofline`'s microbenchmark bundles on the test device (lavapipe by default), validation on:
// the read pass reads every word exactly once (its checksum), the compute kernels load and run,
// and the fp16 one gets shaderFloat16 enabled by the runtime.
#include <gtest/gtest.h>

#include "tests/gpu/gpu_fixture.h"
#include "tools/vkqc/roofline_bundles.h"

namespace vkqc {
namespace {

struct Model {
  vkqc_model m = nullptr;
  ~Model() { vkqc_model_destroy(m); }
};

// Loads, runs once timed; returns the measured layer's result words.
::testing::AssertionResult RunOnce(const RooflineBundle& b, uint32_t groups, std::vector<uint32_t>* words,
                                   double* layer_ns) {
  Model model;
  if (vkqc_model_load(gpu_test::Context(), b.bytes.data(), b.bytes.size(), nullptr, &model.m) != VKQC_OK)
    return ::testing::AssertionFailure() << "load: " << vkqc_last_error();
  std::vector<double> ns(vkqc_model_layer_count(model.m, 0));
  double total = 0;
  if (vkqc_model_run_timed(model.m, 0, ns.data(), &total) != VKQC_OK)
    return ::testing::AssertionFailure() << "run: " << vkqc_last_error();
  *layer_ns = ns.at(b.measured_layer);
  words->assign(groups, 0);
  if (vkqc_model_read_intermediate(model.m, 0, b.out_tensor.c_str(), words->data(), groups * 4) != VKQC_OK)
    return ::testing::AssertionFailure() << "read: " << vkqc_last_error();
  return ::testing::AssertionSuccess();
}

TEST(Roofline, ReadPassReadsEveryWordOnce) {
  // Group counts that leave a partial last step (words not a multiple of 4 x invocations).
  for (auto [bytes, groups] : {std::pair<uint64_t, uint32_t>{1 << 20, 7}, {(1 << 20) + 768, 3}, {4096, 1}}) {
    SCOPED_TRACE(std::to_string(bytes) + " bytes, " + std::to_string(groups) + " groups");
    auto b = BuildRooflineBundle({RooflineKernel::Read, groups, bytes, 1});
    ASSERT_TRUE(b.ok()) << b.error().message;
    EXPECT_EQ(b->work, double(bytes));
    ASSERT_EQ(vkqc_verify_bundle(b->bytes.data(), b->bytes.size()), VKQC_OK) << vkqc_last_error();
    std::vector<uint32_t> words;
    double ns = 0;
    ASSERT_TRUE(RunOnce(*b, groups, &words, &ns));
    uint32_t x = 0;
    for (uint32_t w : words) x ^= w;
    EXPECT_EQ(x, RooflineExpectedXor(bytes / 16));
    EXPECT_GT(ns, 0);
    gpu_test::ExpectNoValidationMessages("read");
  }
}

TEST(Roofline, ComputeKernelsRunAndAreDeterministic) {
  for (RooflineKernel k : {RooflineKernel::IntDot, RooflineKernel::Fma32, RooflineKernel::Fma16}) {
    SCOPED_TRACE(int(k));
    auto b = BuildRooflineBundle({k, 3, 0, 5});
    ASSERT_TRUE(b.ok()) << b.error().message;
    EXPECT_EQ(b->work, 3.0 * kRooflineWorkgroupSize * 5 * kRooflineOpsPerIter);
    std::vector<uint32_t> first, second;
    double ns = 0;
    ASSERT_TRUE(RunOnce(*b, 3, &first, &ns));
    ASSERT_TRUE(RunOnce(*b, 3, &second, &ns));
    EXPECT_EQ(first, second);
    EXPECT_GT(ns, 0);
    gpu_test::ExpectNoValidationMessages("compute");
  }
}

}  // namespace
}  // namespace vkqc
