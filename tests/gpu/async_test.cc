// Asynchronous and bounded runs (vkqc_model_submit / vkqc_model_wait, the context's timeout,
// VKQC_ERROR_TIMEOUT) on a deliberately long dispatch on lavapipe, and the device-lost state as
// far as lavapipe allows: the loss itself cannot be provoked on a CPU device, so the test marks the
// model lost exactly as the runtime does when Vulkan returns VK_ERROR_DEVICE_LOST, then checks that
// every call refuses with VKQC_ERROR_DEVICE_LOST and that the model is still destroyable.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "compiler/graph/synthetic.h"
#include "compiler/passes/pipeline.h"
#include "gpu_fixture.h"
#include "runtime/src/model.h"

namespace vkqc {
namespace {

// A float x int8 linear of M x K x N on the dequant GEMM: seconds on lavapipe for the big shape.
std::vector<uint8_t> Bundle(int64_t m, int64_t k, int64_t n) {
  testing_graphs::LayerSpec l;
  l.k = k;
  l.n = n;
  l.q8ta = false;
  const ir::Graph g = testing_graphs::MakeLinearChain(m, {l}, 3);
  auto profile = LoadProfile(gpu_test::TestProfile());
  EXPECT_TRUE(profile.ok());
  CompileOptions o;
  o.select.force_accum = linear::Accum::Dequant;
  o.select.force_algo = linear::Algo::Gemm;
  auto b = CompileGraph(g, *profile, o, 0);
  EXPECT_TRUE(b.ok()) << b.error().message;
  return b.ok() ? *b : std::vector<uint8_t>{};
}

vkqc_context MakeContext(uint64_t timeout_ns) {
  vkqc_context_options co;
  vkqc_context_options_init(&co);
  co.enable_validation = 1;
  co.log = &gpu_test::OnLog;
  co.timeout_ns = timeout_ns;
  vkqc_context c = nullptr;
  EXPECT_EQ(vkqc_context_create(&co, &c), VKQC_OK) << vkqc_last_error();
  return c;
}

TEST(Async, SubmitThenWaitMatchesRunAndTimesOut) {
  const int64_t m = 256, k = 2048, n = 2048;
  const std::vector<uint8_t> bundle = Bundle(m, k, n);
  ASSERT_FALSE(bundle.empty());
  gpu_test::Context();  // VK_DRIVER_FILES as the fixture sets it
  vkqc_context ctx = MakeContext(0);  // the default bound (60 s)
  ASSERT_NE(ctx, nullptr);
  vkqc_model model = nullptr;
  ASSERT_EQ(vkqc_model_load(ctx, bundle.data(), bundle.size(), nullptr, &model), VKQC_OK) << vkqc_last_error();
  const auto x = testing_graphs::RandomFloats(size_t(m * k), 5);
  ASSERT_EQ(vkqc_model_write_input(model, 0, 0, x.data(), x.size() * 4), VKQC_OK);
  std::vector<float> sync(size_t(m * n)), async(size_t(m * n), -1.0f);
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(vkqc_model_run(model, 0), VKQC_OK) << vkqc_last_error();
  const double run_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(vkqc_model_read_output(model, 0, 0, sync.data(), sync.size() * 4), VKQC_OK);

  // Submit returns at once; a 1 ms wait times out while the GPU works (on lavapipe the run takes
  // seconds; a GPU may finish it within the millisecond, then only the result is checked).
  ASSERT_EQ(vkqc_model_submit(model, 0), VKQC_OK) << vkqc_last_error();
  const vkqc_status polled = vkqc_model_wait(model, 1000000);
  if (run_ms > 50) {
    EXPECT_EQ(polled, VKQC_ERROR_TIMEOUT) << "a run of " << run_ms << " ms finished in 1 ms";
    EXPECT_NE(std::string(vkqc_last_error()).find("still running"), std::string::npos) << vkqc_last_error();
  } else {
    std::printf("[ note     ] the run takes %.2f ms here: the 1 ms wait may finish it\n", run_ms);
    EXPECT_TRUE(polled == VKQC_OK || polled == VKQC_ERROR_TIMEOUT) << vkqc_status_string(polled);
  }
  ASSERT_EQ(vkqc_model_wait(model, 300ull * 1000000000ull), VKQC_OK) << vkqc_last_error();
  EXPECT_EQ(vkqc_model_wait(model, 0), VKQC_OK);  // nothing in flight
  ASSERT_EQ(vkqc_model_read_output(model, 0, 0, async.data(), async.size() * 4), VKQC_OK);
  EXPECT_EQ(std::memcmp(sync.data(), async.data(), sync.size() * 4), 0) << "submit + wait differs from run";

  // A call that touches the buffers waits for the submission itself (bounded by the context).
  std::fill(async.begin(), async.end(), -1.0f);
  ASSERT_EQ(vkqc_model_submit(model, 0), VKQC_OK);
  ASSERT_EQ(vkqc_model_read_output(model, 0, 0, async.data(), async.size() * 4), VKQC_OK) << vkqc_last_error();
  EXPECT_EQ(std::memcmp(sync.data(), async.data(), sync.size() * 4), 0);
  vkqc_model_destroy(model);
  vkqc_context_destroy(ctx);
  gpu_test::ExpectNoValidationMessages("async");
}

// A context whose timeout is shorter than the run: vkqc_model_run returns VKQC_ERROR_TIMEOUT with the
// work still in flight; later calls wait for it (and time out again while it runs); wait finishes it.
TEST(Async, ContextTimeoutBoundsEveryWait) {
  const int64_t m = 256, k = 2048, n = 2048;
  const std::vector<uint8_t> bundle = Bundle(m, k, n);
  ASSERT_FALSE(bundle.empty());
  gpu_test::Context();
  vkqc_context ctx = MakeContext(250ull * 1000000ull);  // 250 ms: uploads fit, the run (seconds) does not
  ASSERT_NE(ctx, nullptr);
  vkqc_model model = nullptr;
  ASSERT_EQ(vkqc_model_load(ctx, bundle.data(), bundle.size(), nullptr, &model), VKQC_OK) << vkqc_last_error();
  const auto x = testing_graphs::RandomFloats(size_t(m * k), 6);
  ASSERT_EQ(vkqc_model_write_input(model, 0, 0, x.data(), x.size() * 4), VKQC_OK);
  const auto t0 = std::chrono::steady_clock::now();
  const vkqc_status st_run = vkqc_model_run(model, 0);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (st_run == VKQC_OK && ms < 250) {  // a GPU: the dispatch cannot outlast the timeout here
    vkqc_model_destroy(model);
    vkqc_context_destroy(ctx);
    GTEST_SKIP() << "the run takes " << ms << " ms on this device, under the 250 ms timeout; the timeout path "
                 "runs on lavapipe (seconds)";
  }
  ASSERT_EQ(st_run, VKQC_ERROR_TIMEOUT) << "the run finished within 250 ms";
  EXPECT_NE(std::string(vkqc_last_error()).find("timeout"), std::string::npos) << vkqc_last_error();
  std::vector<float> y(size_t(m * n));
  const vkqc_status st = vkqc_model_read_output(model, 0, 0, y.data(), y.size() * 4);
  EXPECT_TRUE(st == VKQC_ERROR_TIMEOUT || st == VKQC_OK) << vkqc_status_string(st);
  ASSERT_EQ(vkqc_model_wait(model, 300ull * 1000000000ull), VKQC_OK) << vkqc_last_error();
  ASSERT_EQ(vkqc_model_read_output(model, 0, 0, y.data(), y.size() * 4), VKQC_OK);
  EXPECT_TRUE(std::all_of(y.begin(), y.end(), [](float v) { return std::isfinite(v); }));
  vkqc_model_destroy(model);
  vkqc_context_destroy(ctx);
  gpu_test::ExpectNoValidationMessages("timeout");
}

TEST(Async, DeviceLostModelRefusesEverythingAndIsDestroyable) {
  const std::vector<uint8_t> bundle = Bundle(3, 64, 16);
  ASSERT_FALSE(bundle.empty());
  gpu_test::Loaded l;
  ASSERT_EQ(vkqc_model_load(gpu_test::Context(), bundle.data(), bundle.size(), nullptr, &l.model), VKQC_OK);
  ASSERT_EQ(vkqc_model_submit(l.model, 0), VKQC_OK);
  l.model->lost = true;  // what the runtime sets on VK_ERROR_DEVICE_LOST
  std::vector<float> buf(3 * 64);
  void* p = nullptr;
  EXPECT_EQ(vkqc_model_wait(l.model, 0), VKQC_ERROR_DEVICE_LOST);
  EXPECT_EQ(vkqc_model_run(l.model, 0), VKQC_ERROR_DEVICE_LOST);
  EXPECT_EQ(vkqc_model_submit(l.model, 0), VKQC_ERROR_DEVICE_LOST);
  EXPECT_EQ(vkqc_model_write_input(l.model, 0, 0, buf.data(), 3 * 64 * 4), VKQC_ERROR_DEVICE_LOST);
  EXPECT_EQ(vkqc_model_read_output(l.model, 0, 0, buf.data(), 3 * 16 * 4), VKQC_ERROR_DEVICE_LOST);
  EXPECT_EQ(vkqc_model_map_output(l.model, 0, 0, &p), VKQC_ERROR_DEVICE_LOST);
  double ns = 0;
  EXPECT_EQ(vkqc_model_run_timed(l.model, 0, nullptr, &ns), VKQC_ERROR_DEVICE_LOST);
  EXPECT_NE(std::string(vkqc_last_error()).find("device was lost"), std::string::npos) << vkqc_last_error();
  // Destroy (by the guard) waits for the submission that was in flight, then frees everything.
  gpu_test::ExpectNoValidationMessages("device lost");
}

}  // namespace
}  // namespace vkqc
