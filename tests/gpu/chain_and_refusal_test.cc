// A chain of linear layers with relu on the device; bundles refused on a device that lacks
// what they need; several programs in one bundle.
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/passes/pipeline.h"
#include "gpu_fixture.h"
#include "reference/reference.h"
#include "compiler/graph/synthetic.h"

namespace vkqc {
namespace {

using testing_graphs::LayerSpec;

double MaxAbs(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, double(std::fabs(x)));
  return m;
}

void CheckChain(const std::string& profile, int64_t m, linear::SelectOptions sel) {
  SCOPED_TRACE(profile + " M=" + std::to_string(m));
  std::vector<LayerSpec> layers(4);
  layers[0] = {300, 257, true, 0.03f, -5, true, true};
  layers[1] = {257, 64, true, 0.02f, -128, false, true};
  layers[2] = {64, 1000, false, 0, 0, true, true};
  layers[3] = {1000, 19, true, 0.01f, 7, true, false};
  ir::Graph g = testing_graphs::MakeLinearChain(m, layers, 99);
  auto p = LoadProfile(profile);
  ASSERT_TRUE(p.ok()) << p.error().message;
  CompileOptions o;
  o.select = sel;
  auto bundle = CompileGraph(g, *p, o, 0);
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  auto x = testing_graphs::RandomFloats(size_t(m * 300), 3, 2.0f);
  std::vector<float> y;
  std::vector<bool> integer;
  ASSERT_TRUE(gpu_test::RunBundle(*bundle, 0, x, &y, &integer));
  gpu_test::ExpectNoValidationMessages("chain");
  ref::RunOptions ro;
  ro.integer_path = integer;
  auto want = ref::RunGraph(g, {{"x", x}}, ro);
  ASSERT_TRUE(want.ok()) << want.error().message;
  const auto& w = want->at("y");
  ASSERT_EQ(y.size(), w.size());
  // Layer outputs feed the next layer's quantizer: an fp32 rounding difference upstream can
  // move one quantized activation by one step, so compare against the output scale.
  const double tol = 1e-3 * MaxAbs(w);
  ASSERT_GT(MaxAbs(w), 0.0);
  for (size_t i = 0; i < w.size(); ++i) ASSERT_LE(std::fabs(y[i] - w[i]), tol) << "y[" << i << "] " << y[i] << " vs " << w[i];
}

TEST(Chain, FourLayersWithReluDefaultChoices) {
  for (int64_t m : {1, 17}) CheckChain(gpu_test::TestProfile(), m, {});
}

TEST(Chain, FourLayersWithReluIntDotForced) {
  linear::SelectOptions sel;
  sel.force_accum = linear::Accum::IntDot;
  for (int64_t m : {1, 17}) CheckChain(gpu_test::TestProfile(), m, sel);
}

TEST(Chain, FourLayersAndroidBaseline) { CheckChain("android-baseline-2022", 5, {}); }

// Weights uploaded through a 4 KiB staging buffer (many chunks) give the same results as a
// direct upload.
TEST(Upload, BoundedStagingInManyChunks) {
  std::vector<LayerSpec> layers(2);
  layers[0] = {300, 257, true, 0.03f, -5, true, true};
  layers[1] = {257, 33, false, 0, 0, true, false};
  ir::Graph g = testing_graphs::MakeLinearChain(3, layers, 21);
  auto p = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(p.ok());
  auto bundle = CompileGraph(g, *p, {}, 0);
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  auto x = testing_graphs::RandomFloats(3 * 300, 4);
  std::vector<float> direct, staged;
  ASSERT_TRUE(gpu_test::RunBundle(*bundle, 0, x, &direct));
  ASSERT_TRUE(gpu_test::RunBundle(*bundle, 0, x, &staged, nullptr, nullptr, 4096));
  gpu_test::ExpectNoValidationMessages("staging");
  ASSERT_EQ(direct.size(), staged.size());
  for (size_t i = 0; i < direct.size(); ++i) ASSERT_EQ(direct[i], staged[i]) << i;
  for (float v : direct) ASSERT_TRUE(std::isfinite(v));
}

TEST(Refusal, HopperBundleOnLavapipeListsWhatIsMissing) {
  std::vector<LayerSpec> layers(1);
  layers[0] = {256, 64, true, 0.02f, 0, true, false};
  ir::Graph g = testing_graphs::MakeLinearChain(1, layers, 1);
  auto p = LoadProfile("nvidia-hopper");
  ASSERT_TRUE(p.ok());
  auto bundle = CompileGraph(g, *p, {}, 0);
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  vkqc_context ctx = gpu_test::Context();
  ASSERT_NE(ctx, nullptr);
  const char* name = nullptr;
  vkqc_context_device_name(ctx, &name);
  if (std::string(name).find("llvmpipe") == std::string::npos) GTEST_SKIP() << "needs lavapipe (subgroup size 8)";
  EXPECT_EQ(vkqc_check_bundle(ctx, bundle->data(), bundle->size()), VKQC_ERROR_UNSUPPORTED_DEVICE);
  EXPECT_NE(std::string(vkqc_last_error()).find("subgroup size 32"), std::string::npos) << vkqc_last_error();
  vkqc_model model = nullptr;
  EXPECT_EQ(vkqc_model_load(ctx, bundle->data(), bundle->size(), nullptr, &model), VKQC_ERROR_UNSUPPORTED_DEVICE);
  EXPECT_EQ(model, nullptr);
  const std::string msg = vkqc_last_error();
  EXPECT_NE(msg.find("nvidia-hopper"), std::string::npos) << msg;
  EXPECT_NE(msg.find("missing"), std::string::npos) << msg;
  gpu_test::ExpectNoValidationMessages("refusal");
}

TEST(Programs, SeveralTokenCountsShareWeights) {
  std::vector<LayerSpec> layers(2);
  layers[0] = {128, 96, true, 0.02f, 1, true, true};
  layers[1] = {96, 40, false, 0, 0, true, false};
  ir::Graph g = testing_graphs::MakeLinearChain(ir::kSymbolicDim, layers, 8);
  auto p = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(p.ok());
  CompileOptions o;
  o.tokens = {1, 3, 64};
  auto bundle = CompileGraph(g, *p, o, 0);
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  for (uint32_t t : {1u, 3u, 64u}) {
    auto x = testing_graphs::RandomFloats(t * 128, t);
    std::vector<float> y;
    std::vector<bool> integer;
    ASSERT_TRUE(gpu_test::RunBundle(*bundle, t, x, &y, &integer));
    ref::RunOptions ro;
    ro.tokens = t;
    ro.integer_path = integer;
    auto want = ref::RunGraph(g, {{"x", x}}, ro);
    ASSERT_TRUE(want.ok()) << want.error().message;
    const auto& w = want->at("y");
    ASSERT_EQ(y.size(), size_t(t) * 40);
    const double tol = 1e-3 * MaxAbs(w);  // layer 0 may take the int path (see CheckChain)
    for (size_t i = 0; i < w.size(); ++i) ASSERT_LE(std::fabs(y[i] - w[i]), tol) << i;
  }
  // A size that was not compiled is refused with the list of those that were.
  vkqc_model model = nullptr;
  ASSERT_EQ(vkqc_model_load(gpu_test::Context(), bundle->data(), bundle->size(), nullptr, &model), VKQC_OK);
  uint32_t prog;
  EXPECT_EQ(vkqc_model_find_program(model, 8, &prog), VKQC_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(vkqc_last_error()).find("1, 3, 64"), std::string::npos) << vkqc_last_error();
  vkqc_model_destroy(model);
  gpu_test::ExpectNoValidationMessages("programs");
}

}  // namespace
}  // namespace vkqc
