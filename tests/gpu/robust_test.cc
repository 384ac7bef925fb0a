// Bundles that index out of bounds. Corrupted ones (a spec constant changed, checksum not
// recomputed) are refused at load by the integrity checksum on any context. A crafted one (the
// linear layer's N spec constant doubled and the checksum recomputed, as a tamperer would) loads
// on a context created with robust_buffer_access and runs: its shader writes output row m at
// m * 2N, so row 1 lands where row 2 belongs and row 2 past the end of the output buffer; the
// rows inside the buffer must hold exactly what the untampered bundle computes for rows 0 and 1.
// What this does not show: that the out-of-bounds row would have faulted without robust access
// (on lavapipe it lands in mapped memory and the run completes either way).
#include <gtest/gtest.h>

#include <cstring>

#include "compiler/graph/synthetic.h"
#include "compiler/passes/pipeline.h"
#include "gpu_fixture.h"
#include "schema/bundle_generated.h"
#include "schema/bundle_integrity.h"

namespace vkqc {
namespace {

// Multiplies spec constant 3 (N: the linear shaders write rows of N outputs) of the linear
// pipelines by `factor`; reseals when asked.
std::vector<uint8_t> Tamper(std::vector<uint8_t> b, uint32_t factor, bool reseal) {
  auto* bundle = fb::bundle::GetMutableBundle(b.data() + 4);
  int changed = 0;
  for (uint32_t i = 0; i < bundle->pipelines()->size(); ++i) {
    if (bundle->pipelines()->Get(i)->name()->str().rfind("linear", 0) != 0) continue;
    auto* spec = bundle->mutable_pipelines()->GetMutableObject(i)->mutable_spec_constants();
    if (!spec) continue;
    for (uint32_t j = 0; j < spec->size(); ++j) {
      auto* s = spec->GetMutableObject(j);
      if (s->id() == 3) {
        s->mutate_value(s->value() * factor);
        ++changed;
      }
    }
  }
  EXPECT_GT(changed, 0);
  if (reseal) {
    uint32_t fb = 0;
    std::memcpy(&fb, b.data(), 4);
    const uint8_t* field =
        reinterpret_cast<const flatbuffers::Table*>(bundle)->GetAddressOf(fb::bundle::Bundle::VT_INTEGRITY);
    bundle->mutate_integrity(BundleIntegrity(b.data(), size_t(fb) + 4, field));
  }
  return b;
}

// Runs `bundle` on `ctx` with poisoned memory and input x; returns output 0.
std::vector<float> RunOn(vkqc_context ctx, const std::vector<uint8_t>& bundle, const std::vector<float>& x,
                         size_t outputs) {
  vkqc_model m = nullptr;
  vkqc_model_options mo;
  vkqc_model_options_init(&mo);
  mo.poison_memory = 1;
  std::vector<float> y(outputs);
  EXPECT_EQ(vkqc_model_load(ctx, bundle.data(), bundle.size(), &mo, &m), VKQC_OK) << vkqc_last_error();
  if (!m) return y;
  EXPECT_EQ(vkqc_model_write_input(m, 0, 0, x.data(), x.size() * 4), VKQC_OK) << vkqc_last_error();
  for (int run = 0; run < 3; ++run) EXPECT_EQ(vkqc_model_run(m, 0), VKQC_OK) << vkqc_last_error();
  EXPECT_EQ(vkqc_model_read_output(m, 0, 0, y.data(), y.size() * 4), VKQC_OK) << vkqc_last_error();
  vkqc_model_destroy(m);
  return y;
}

TEST(Robust, CraftedOutOfBoundsBundleStaysInItsBuffers) {
  testing_graphs::QLayerSpec s;
  s.m = 3;
  s.k = 256;
  s.n = 64;  // a multiple of every GEMV's channels per workgroup: no channel past N is computed
  s.weights = ir::Scheme::Q8CSW;
  s.act = ir::Scheme::Float;
  auto p = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(p.ok()) << p.error().message;
  auto good = CompileGraph(testing_graphs::MakeQLayer(s, 3), *p, {}, 0);
  ASSERT_TRUE(good.ok()) << good.error().message;
  std::vector<float> x(size_t(s.m * s.k));
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i * 37 % 101) - 50) / 16.0f;
  const size_t n = size_t(s.n);
  const std::vector<float> want = RunOn(gpu_test::Context(), *good, x, 3 * n);

  // Corrupted (not resealed): refused by the checksum on the ordinary test context.
  const auto corrupt = Tamper(*good, 2, false);
  vkqc_model m = nullptr;
  ASSERT_EQ(vkqc_model_load(gpu_test::Context(), corrupt.data(), corrupt.size(), nullptr, &m),
            VKQC_ERROR_INVALID_BUNDLE);
  EXPECT_NE(std::string(vkqc_last_error()).find("integrity checksum mismatch"), std::string::npos)
      << vkqc_last_error();

  // Crafted (resealed): loads, and runs contained on a robust context.
  const auto crafted = Tamper(*good, 2, true);
  vkqc_context_options o;
  vkqc_context_options_init(&o);
  o.enable_validation = std::getenv("VKQC_TEST_NO_VALIDATION") ? 0 : 1;
  o.log = &gpu_test::OnLog;
  o.robust_buffer_access = 1;
  vkqc_context robust = nullptr;
  ASSERT_EQ(vkqc_context_create(&o, &robust), VKQC_OK) << vkqc_last_error();
  const std::vector<float> got = RunOn(robust, crafted, x, 3 * n);
  vkqc_context_destroy(robust);
  for (size_t j = 0; j < n; ++j) {
    EXPECT_EQ(got[j], want[j]) << "row 0, column " << j;
    EXPECT_EQ(got[2 * n + j], want[n + j]) << "row 1 (written at 2N), column " << j;
  }
  gpu_test::ExpectNoValidationMessages("robust");
}

}  // namespace
}  // namespace vkqc
