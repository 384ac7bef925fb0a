// The driver's pipeline statistics (context option capture_pipeline_statistics, `vkqc bench
// --pipeline-stats`): captured for every dispatch where the device has
// VK_KHR_pipeline_executable_properties (the H100's driver does), refused with a message naming
// the extension where it has not (lavapipe of Debian 12), refused with an external device, and
// asked of a context without the option, refused. Capturing must not change what a run computes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/graph/synthetic.h"
#include "compiler/passes/pipeline.h"
#include "gpu_fixture.h"

namespace vkqc {
namespace {

TEST(PipelineStatistics, CapturedOrRefused) {
  testing_graphs::QLayerSpec s;  // dq8ca x q4gsw: a quantize dispatch (or a prologue) and a linear
  s.m = 3;
  s.k = 256;
  s.n = 40;
  auto p = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(p.ok()) << p.error().message;
  auto bundle = CompileGraph(testing_graphs::MakeQLayer(s, 5), *p, {}, 0);
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  std::vector<float> x(size_t(s.m * s.k));
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i * 29 % 97) - 48) / 8.0f;

  // A context without the option: the statistics are refused, saying why.
  vkqc_model plain = nullptr;
  const std::vector<float> want = gpu_test::RunOnContext(gpu_test::Context(), *bundle, x, &plain);
  ASSERT_NE(plain, nullptr);
  uint32_t n = 0;
  EXPECT_EQ(vkqc_model_layer_statistics(plain, 0, 0, nullptr, &n), VKQC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(vkqc_last_error()).find("capture_pipeline_statistics"), std::string::npos)
      << vkqc_last_error();
  vkqc_model_destroy(plain);

  // With an external device: refused before the app's handles are touched.
  vkqc_external_device ext{};
  vkqc_context_options o;
  vkqc_context_options_init(&o);
  o.capture_pipeline_statistics = 1;
  o.external = &ext;
  vkqc_context c = nullptr;
  EXPECT_EQ(vkqc_context_create(&o, &c), VKQC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(vkqc_last_error()).find("capture_pipeline_statistics needs a device the runtime creates"),
            std::string::npos)
      << vkqc_last_error();

  o.external = nullptr;
  o.enable_validation = std::getenv("VKQC_TEST_NO_VALIDATION") ? 0 : 1;
  o.log = &gpu_test::OnLog;
  const vkqc_status st = vkqc_context_create(&o, &c);
  if (st != VKQC_OK) {
    EXPECT_EQ(st, VKQC_ERROR_UNSUPPORTED_DEVICE) << vkqc_last_error();
    EXPECT_NE(std::string(vkqc_last_error()).find("lacks VK_KHR_pipeline_executable_properties"), std::string::npos)
        << vkqc_last_error();
    std::printf("[ refused  ] %s\n", vkqc_last_error());
    gpu_test::ExpectNoValidationMessages("statistics refused");
    return;
  }
  std::printf("[ info     ] statistics context created\n");
  std::fflush(stdout);
  vkqc_model m = nullptr;
  const std::vector<float> got = gpu_test::RunOnContext(c, *bundle, x, &m);
  std::printf("[ info     ] loaded and ran with statistics captured\n");
  std::fflush(stdout);
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], want[i]) << "output " << i;
  uint32_t dispatching = 0;
  for (uint32_t l = 0; l < vkqc_model_layer_count(m, 0); ++l) {
    vkqc_layer_info li;
    ASSERT_EQ(vkqc_model_layer_info(m, 0, l, &li), VKQC_OK);
    n = 0;
    ASSERT_EQ(vkqc_model_layer_statistics(m, 0, l, nullptr, &n), VKQC_OK) << vkqc_last_error();
    if (std::string(li.variant) == "fused" || std::string(li.variant) == "folded") continue;  // no dispatch
    ++dispatching;
    EXPECT_GT(n, 0u) << li.name << " [" << li.variant << "]: no statistics";
    std::vector<vkqc_pipeline_statistic> stats(n);
    uint32_t got_n = n;
    ASSERT_EQ(vkqc_model_layer_statistics(m, 0, l, stats.data(), &got_n), VKQC_OK);
    EXPECT_EQ(got_n, n);
    for (uint32_t i = 0; i < n; ++i) {
      EXPECT_TRUE(stats[i].name && *stats[i].name) << li.name << " statistic " << i;
      EXPECT_TRUE(stats[i].description != nullptr);
      EXPECT_TRUE(std::isfinite(stats[i].value)) << li.name << " " << stats[i].name;
      if (i) {
        EXPECT_GE(stats[i].dispatch, stats[i - 1].dispatch);
      }
      std::printf("[ stat     ] %s #%u %s = %g\n", li.name, stats[i].dispatch, stats[i].name, stats[i].value);
    }
    if (n > 1) {  // a short array takes what fits
      uint32_t one = 1;
      vkqc_pipeline_statistic first{};
      ASSERT_EQ(vkqc_model_layer_statistics(m, 0, l, &first, &one), VKQC_OK);
      EXPECT_EQ(one, 1u);
      EXPECT_STREQ(first.name, stats[0].name);
    }
  }
  EXPECT_GT(dispatching, 0u);
  EXPECT_EQ(vkqc_model_layer_statistics(m, 0, vkqc_model_layer_count(m, 0), nullptr, &n), VKQC_ERROR_NOT_FOUND);
  vkqc_model_destroy(m);
  vkqc_context_destroy(c);
  gpu_test::ExpectNoValidationMessages("statistics");
}

}  // namespace
}  // namespace vkqc
