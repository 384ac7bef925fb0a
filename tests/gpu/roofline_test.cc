// `vkqc roofline`'s microbenchmark bundles on the test device (lavapipe by default), validation on:
// the read pass reads every word exactly once (its checksum), the compute kernels load and run,
// and the fp16 one gets shaderFloat16 enabled by the runtime; the dependency-latency kernels (a chain
// of dispatches, rounds behind an in-kernel grid barrier) compute exactly what they count.
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

// The cooperative-matrix kernels (VK_KHR_cooperative_matrix): where the device has the extension
// the int8 one's result is checked exactly (every chain is iters x A_i . B_j in wrapping int32,
// and the XOR of the sum's components does not depend on the implementation's component
// order); where it does not (lavapipe) the bundle is refused at load, naming the extension.
int32_t HashedInt8(uint32_t word_index, uint32_t byte, uint32_t group) {
  return int8_t(RooflineHash(word_index ^ 0x2545F491u ^ (group << 12)) >> (8 * byte));
}

TEST(Roofline, CoopMatInt8ComputesWhatItCounts) {
  const uint32_t groups = 3, iters = 7, m = 16, n = 16, k = 32;
  RooflineBundleParams p{RooflineKernel::CoopMatInt8, groups, 0, iters};
  p.m = m;
  p.n = n;
  p.k = k;
  p.subgroup = 32;
  p.pin_subgroup = true;
  auto b = BuildRooflineBundle(p);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->work, double(groups) * iters * kRooflineCoopMatChains * 2 * m * n * k);
  ASSERT_EQ(vkqc_verify_bundle(b->bytes.data(), b->bytes.size()), VKQC_OK) << vkqc_last_error();
  auto fp16 = p;
  fp16.kernel = RooflineKernel::CoopMatFp16;
  fp16.k = 16;
  auto b16 = BuildRooflineBundle(fp16);
  ASSERT_TRUE(b16.ok()) << b16.error().message;
  Model probe;
  if (vkqc_model_load(gpu_test::Context(), b->bytes.data(), b->bytes.size(), nullptr, &probe.m) != VKQC_OK) {
    const std::string err = vkqc_last_error();
    EXPECT_NE(err.find("VK_KHR_cooperative_matrix"), std::string::npos) << err;
    gpu_test::ExpectNoValidationMessages("coopmat refusal");
    GTEST_SKIP() << "the device cannot run the cooperative-matrix kernels: " << err;
  }
  std::vector<uint32_t> words;
  double ns = 0;
  ASSERT_TRUE(RunOnce(*b, groups, &words, &ns));
  const uint32_t aw = m * k / 4, bw = k * n / 4;
  for (uint32_t g = 0; g < groups; ++g) {
    uint32_t want = 0;
    for (uint32_t r = 0; r < m; ++r)
      for (uint32_t c = 0; c < n; ++c) {
        uint32_t sum = 0;  // wrapping, as the device's int32
        for (uint32_t i = 0; i < 2; ++i)
          for (uint32_t j = 0; j < 4; ++j) {
            int32_t dot = 0;
            for (uint32_t kk = 0; kk < k; ++kk)
              dot += HashedInt8(i * aw + r * (k / 4) + kk / 4, kk % 4, g) *
                     HashedInt8(2 * aw + j * bw + c * (k / 4) + kk / 4, kk % 4, g);
            sum += uint32_t(dot) * iters;
          }
        want ^= sum;
      }
    EXPECT_EQ(words[g], want) << "workgroup " << g;
  }
  std::vector<uint32_t> f16;
  ASSERT_TRUE(RunOnce(*b16, groups, &f16, &ns));
  EXPECT_GT(ns, 0);
  gpu_test::ExpectNoValidationMessages("coopmat");
}

// Reads `words` words of an arena tensor of a loaded bundle after one run.
::testing::AssertionResult RunAndRead(const RooflineBundle& b, const std::string& tensor, size_t words,
                                      std::vector<uint32_t>* out) {
  Model model;
  if (vkqc_model_load(gpu_test::Context(), b.bytes.data(), b.bytes.size(), nullptr, &model.m) != VKQC_OK)
    return ::testing::AssertionFailure() << "load: " << vkqc_last_error();
  if (vkqc_model_run(model.m, 0) != VKQC_OK) return ::testing::AssertionFailure() << "run: " << vkqc_last_error();
  out->assign(words, 0xDEADBEEFu);
  if (vkqc_model_read_intermediate(model.m, 0, tensor.c_str(), out->data(), words * 4) != VKQC_OK)
    return ::testing::AssertionFailure() << "read: " << vkqc_last_error();
  return ::testing::AssertionSuccess();
}

// Every step reads what the one before wrote (its own word and its neighbour's), so after S
// dependent dispatches every word is S; a missing barrier or a step run out of order shows.
TEST(Roofline, DispatchChainCountsItsSteps) {
  for (uint32_t groups : {1u, 3u, 17u})
    for (uint32_t steps : {1u, 2u, 5u}) {
      SCOPED_TRACE(std::to_string(groups) + " groups, " + std::to_string(steps) + " steps");
      auto b = BuildRooflineBundle({RooflineKernel::DispatchChain, groups, 0, steps});
      ASSERT_TRUE(b.ok()) << b.error().message;
      EXPECT_EQ(b->measured_layer, kRooflineWholeProgram);
      ASSERT_EQ(vkqc_verify_bundle(b->bytes.data(), b->bytes.size()), VKQC_OK) << vkqc_last_error();
      std::vector<uint32_t> words;
      ASSERT_TRUE(RunAndRead(*b, b->out_tensor, groups, &words));
      for (uint32_t g = 0; g < groups; ++g) EXPECT_EQ(words[g], steps) << "workgroup " << g;
      gpu_test::ExpectNoValidationMessages("dispatch chain");
    }
}

// The grid barrier: one workgroup is always resident, so its rounds must all complete and count;
// wider grids either complete with every word counted or (not all resident, as on lavapipe, which
// runs a dispatch's workgroups in turn) end with the give-up flag raised, never anything else; a
// grid of 65535 workgroups is more than any device holds at once and must end with the flag.
TEST(Roofline, GridBarrierCountsItsRoundsOrGivesUp) {
  for (uint32_t groups : {1u, 2u, 7u, 65535u})
    for (uint32_t steps : {1u, 4u}) {
      SCOPED_TRACE(std::to_string(groups) + " groups, " + std::to_string(steps) + " rounds");
      auto b = BuildRooflineBundle({RooflineKernel::GridBarrier, groups, 0, steps});
      ASSERT_TRUE(b.ok()) << b.error().message;
      ASSERT_EQ(vkqc_verify_bundle(b->bytes.data(), b->bytes.size()), VKQC_OK) << vkqc_last_error();
      Model model;
      ASSERT_EQ(vkqc_model_load(gpu_test::Context(), b->bytes.data(), b->bytes.size(), nullptr, &model.m), VKQC_OK)
          << vkqc_last_error();
      ASSERT_EQ(vkqc_model_run(model.m, 0), VKQC_OK) << vkqc_last_error();
      uint32_t sync[2] = {0xDEADBEEFu, 0xDEADBEEFu};
      ASSERT_EQ(vkqc_model_read_intermediate(model.m, 0, b->flag_tensor.c_str(), sync, sizeof sync), VKQC_OK);
      std::vector<uint32_t> words(b->out_offset + groups, 0xDEADBEEFu);
      ASSERT_EQ(vkqc_model_read_intermediate(model.m, 0, b->out_tensor.c_str(), words.data(), words.size() * 4),
                VKQC_OK);
      const bool gave_up = sync[1] != 0;
      if (groups == 1) {
        EXPECT_FALSE(gave_up);
      }
      if (groups == 65535) {
        EXPECT_TRUE(gave_up);
      }
      if (!gave_up) {
        EXPECT_EQ(sync[0], groups * steps);  // every workgroup arrived at every barrier once
        for (uint32_t g = 0; g < groups; ++g) EXPECT_EQ(words[b->out_offset + g], steps) << "workgroup " << g;
      }
      gpu_test::ExpectNoValidationMessages("grid barrier");
    }
}

}  // namespace
}  // namespace vkqc
