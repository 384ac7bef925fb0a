// Reading outputs (validation on): vkqc_model_read_output and _read_output_range in place and
// through the GPU copy into cached host memory (model option force_staged_reads: the path a
// discrete GPU takes for outputs it keeps in device memory) give the reference's bytes, ranges at
// any offset, the refusals; state reads through the same buffer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "compiler/graph/synthetic.h"
#include "compiler/passes/pipeline.h"
#include "gpu_fixture.h"

namespace vkqc {
namespace {

using testing_graphs::RandomFloats;

// x [17, 61] -> silu -> y (f32); y's rows are what a logits output looks like to the host.
std::vector<uint8_t> SiluBundle() {
  ir::Graph g;
  for (const char* n : {"x", "y"}) {
    ir::Tensor t;
    t.name = n;
    t.shape = {17, 61};
    g.tensors.push_back(t);
  }
  g.ops.push_back(gpu_test::MakeOp("silu", ir::OpType::Silu, {0}, {1}));
  g.inputs = {0};
  g.outputs = {1};
  auto p = LoadProfile(gpu_test::TestProfile());
  EXPECT_TRUE(p.ok());
  auto b = CompileGraph(g, *p, CompileOptions{}, 0);
  EXPECT_TRUE(b.ok()) << b.error().message;
  return b.ok() ? *b : std::vector<uint8_t>{};
}

TEST(Readback, InPlaceAndStagedReadsAndRanges) {
  const auto bundle = SiluBundle();
  ASSERT_FALSE(bundle.empty());
  const auto x = RandomFloats(17 * 61, 9);
  std::vector<float> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = x[i] / (1.0f + std::exp(-x[i]));
  std::vector<uint8_t> first;
  for (int staged : {0, 1}) {
    vkqc_model_options mo;
    vkqc_model_options_init(&mo);
    mo.poison_memory = 1;
    mo.force_staged_reads = staged;
    gpu_test::Loaded l;
    ASSERT_EQ(vkqc_model_load(gpu_test::Context(), bundle.data(), bundle.size(), &mo, &l.model), VKQC_OK)
        << vkqc_last_error();
    ASSERT_EQ(vkqc_model_write_input(l.model, 0, 0, x.data(), x.size() * 4), VKQC_OK);
    ASSERT_EQ(vkqc_model_run(l.model, 0), VKQC_OK) << vkqc_last_error();
    std::vector<float> y(x.size(), -7.0f);
    ASSERT_EQ(vkqc_model_read_output(l.model, 0, 0, y.data(), y.size() * 4), VKQC_OK) << vkqc_last_error();
    for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], want[i], 1e-5f * (1 + std::fabs(want[i]))) << i;
    const auto* b = reinterpret_cast<const uint8_t*>(y.data());
    if (staged == 0) {
      first.assign(b, b + y.size() * 4);
    } else {
      EXPECT_EQ(std::vector<uint8_t>(b, b + y.size() * 4), first) << "staged and in-place reads differ";
    }
    // Ranges: the last row, one row in the middle, odd offsets and sizes, small and large.
    struct R {
      uint64_t offset;
      size_t size;
    };
    for (R r : {R{16 * 61 * 4, 61 * 4}, R{5 * 61 * 4, 61 * 4}, R{3, 1}, R{1, 301}, R{0, 17 * 61 * 4}, R{17 * 61 * 4 - 5, 5},
                R{400, 0}}) {
      std::vector<uint8_t> got(r.size + 1, 0xAB);
      ASSERT_EQ(vkqc_model_read_output_range(l.model, 0, 0, r.offset, got.data(), r.size), VKQC_OK)
          << vkqc_last_error();
      EXPECT_EQ(0, std::memcmp(got.data(), first.data() + r.offset, r.size)) << "offset " << r.offset << " size " << r.size;
      EXPECT_EQ(got[r.size], 0xAB) << "wrote past the range";
    }
    uint8_t byte = 0;
    for (R r : {R{17 * 61 * 4, 1}, R{17 * 61 * 4 + 1, 0}, R{~0ull, 2}}) {
      EXPECT_EQ(vkqc_model_read_output_range(l.model, 0, 0, r.offset, &byte, r.size), VKQC_ERROR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(vkqc_last_error()).find("lie outside output 'y'"), std::string::npos) << vkqc_last_error();
    }
    EXPECT_EQ(vkqc_model_read_output_range(l.model, 0, 0, 0, nullptr, 4), VKQC_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vkqc_model_read_output_range(l.model, 0, 1, 0, &byte, 1), VKQC_ERROR_NOT_FOUND);
    EXPECT_EQ(vkqc_model_read_output_range(l.model, 3, 0, 0, &byte, 1), VKQC_ERROR_INVALID_ARGUMENT);
  }
  // An options struct of the 0.3 header (without force_staged_reads) still loads.
  vkqc_model_options old;
  vkqc_model_options_init(&old);
  old.struct_size = uint32_t(offsetof(vkqc_model_options, force_staged_reads));
  gpu_test::Loaded l;
  EXPECT_EQ(vkqc_model_load(gpu_test::Context(), bundle.data(), bundle.size(), &old, &l.model), VKQC_OK)
      << vkqc_last_error();
  old.struct_size = 4;
  vkqc_model m2 = nullptr;
  EXPECT_EQ(vkqc_model_load(gpu_test::Context(), bundle.data(), bundle.size(), &old, &m2), VKQC_ERROR_INVALID_ARGUMENT);
  gpu_test::ExpectNoValidationMessages("readback");
}

}  // namespace
}  // namespace vkqc
