// vkqc_model_time_without (`vkqc bench --attribute`): a run with some layers' dispatches left out.
// Not timing (no timing is asserted): that the layers marked really do not run and the others do,
// that the model's own command buffer is untouched by it (a normal run afterwards computes what it
// computed before, bit for bit), bad arguments refused, validation (synchronization included)
// silent on the re-recorded command buffers with their merged barriers.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "compiler/graph/synthetic.h"
#include "compiler/passes/pipeline.h"
#include "gpu_fixture.h"

namespace vkqc {
namespace {

TEST(TimeWithout, LeftOutLayersDoNotRunTheOthersDo) {
  // Three weight-only linears in a chain (17 -> 24 -> 9 -> 5, 3 rows): three layers, barriers between.
  std::vector<testing_graphs::LayerSpec> layers(3);
  layers[0].k = 17, layers[0].n = 24, layers[1].k = 24, layers[1].n = 9, layers[2].k = 9, layers[2].n = 5;
  for (auto& l : layers) l.q8ta = false;
  auto p = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(p.ok()) << p.error().message;
  auto bundle = CompileGraph(testing_graphs::MakeLinearChain(3, layers, 11), *p, {}, 0);
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  std::vector<float> x1(3 * 17), x2(3 * 17), y(3 * 5);
  for (size_t i = 0; i < x1.size(); ++i) {
    x1[i] = float(int(i * 37 % 23) - 11) / 7.0f;
    x2[i] = float(int(i * 53 % 29) - 14) / 5.0f;
  }
  gpu_test::Loaded l;  // poisoned memory, one run with x1
  ASSERT_TRUE(gpu_test::LoadAndRun(*bundle, x1.data(), x1.size() * 4, &l));
  const uint32_t nl = vkqc_model_layer_count(l.model, 0);
  ASSERT_GE(nl, 3u);
  auto run_with = [&](const std::vector<float>& x) {
    EXPECT_EQ(vkqc_model_write_input(l.model, 0, 0, x.data(), x.size() * 4), VKQC_OK);
    EXPECT_EQ(vkqc_model_run(l.model, 0), VKQC_OK) << vkqc_last_error();
    std::vector<float> out(y.size());
    EXPECT_EQ(vkqc_model_read_output(l.model, 0, 0, out.data(), out.size() * 4), VKQC_OK);
    return out;
  };
  auto output = [&] {
    std::vector<float> out(y.size());
    EXPECT_EQ(vkqc_model_read_output(l.model, 0, 0, out.data(), out.size() * 4), VKQC_OK);
    return out;
  };
  auto same_bits = [](const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
  };
  const std::vector<float> y1 = run_with(x1), y2 = run_with(x2);
  ASSERT_FALSE(same_bits(y1, y2));  // the two inputs tell the runs apart

  // Every layer left out: nothing runs, the output keeps the last run's (y2) with x1 written.
  ASSERT_EQ(vkqc_model_write_input(l.model, 0, 0, x1.data(), x1.size() * 4), VKQC_OK);
  double ns = -1;
  std::vector<uint8_t> all(nl, 1), none(nl, 0), last(nl, 0);
  ASSERT_EQ(vkqc_model_time_without(l.model, 0, all.data(), &ns), VKQC_OK) << vkqc_last_error();
  EXPECT_GE(ns, 0);
  EXPECT_TRUE(same_bits(output(), y2));
  // Nothing left out: the whole program runs, y1 for x1.
  ASSERT_EQ(vkqc_model_time_without(l.model, 0, none.data(), &ns), VKQC_OK) << vkqc_last_error();
  EXPECT_GT(ns, 0);
  EXPECT_TRUE(same_bits(output(), y1));
  // The last layer holding dispatches left out: the output is not written (still y1) with x2 in.
  int32_t last_layer = -1;
  for (uint32_t i = 0; i < nl; ++i) {
    vkqc_layer_info li;
    ASSERT_EQ(vkqc_model_layer_info(l.model, 0, i, &li), VKQC_OK);
    if (std::string(li.op) == "linear") last_layer = int32_t(i);
  }
  ASSERT_GE(last_layer, 0);
  last[size_t(last_layer)] = 1;
  ASSERT_EQ(vkqc_model_write_input(l.model, 0, 0, x2.data(), x2.size() * 4), VKQC_OK);
  ASSERT_EQ(vkqc_model_time_without(l.model, 0, last.data(), &ns), VKQC_OK) << vkqc_last_error();
  EXPECT_TRUE(same_bits(output(), y1));
  // The model's own command buffer is unchanged: a normal run computes y2 for x2 again.
  EXPECT_TRUE(same_bits(run_with(x2), y2));
  // Two sets alternating (the runtime keeps both command buffers, then a third replaces the older).
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    const std::vector<float>& x = round ? x2 : x1;
    const std::vector<float>& want = round ? y2 : y1;
    const std::vector<float> before = output();
    ASSERT_EQ(vkqc_model_write_input(l.model, 0, 0, x.data(), x.size() * 4), VKQC_OK);
    ASSERT_EQ(vkqc_model_time_without(l.model, 0, all.data(), &ns), VKQC_OK) << vkqc_last_error();
    EXPECT_TRUE(same_bits(output(), before));
    ASSERT_EQ(vkqc_model_time_without(l.model, 0, none.data(), &ns), VKQC_OK) << vkqc_last_error();
    EXPECT_TRUE(same_bits(output(), want));
  }
  ASSERT_EQ(vkqc_model_write_input(l.model, 0, 0, x1.data(), x1.size() * 4), VKQC_OK);
  ASSERT_EQ(vkqc_model_time_without(l.model, 0, last.data(), &ns), VKQC_OK) << vkqc_last_error();
  EXPECT_TRUE(same_bits(output(), y2));  // the last layer left out: still the x2 run's output
  ASSERT_EQ(vkqc_model_time_without(l.model, 0, none.data(), &ns), VKQC_OK) << vkqc_last_error();
  EXPECT_TRUE(same_bits(output(), y1));
  // Refusals: null mask or result, a program out of range.
  EXPECT_EQ(vkqc_model_time_without(l.model, 0, nullptr, &ns), VKQC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(vkqc_model_time_without(l.model, 0, all.data(), nullptr), VKQC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(vkqc_model_time_without(l.model, 7, all.data(), &ns), VKQC_ERROR_INVALID_ARGUMENT);
  gpu_test::ExpectNoValidationMessages("time_without");
}

}  // namespace
}  // namespace vkqc
