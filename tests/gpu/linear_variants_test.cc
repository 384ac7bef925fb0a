// Every linear variant (int-dot GEMM, int-dot GEMV, dequant GEMM, dequant GEMV) on a real
// Vulkan device against the CPU reference, over aligned and ragged shapes, with and without
// bias and relu, outputs poisoned first, validation (with sync validation) on.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <tuple>

#include "compiler/passes/pipeline.h"
#include "gpu_fixture.h"
#include "reference/reference.h"
#include "compiler/graph/synthetic.h"

namespace vkqc {
namespace {

using linear::Accum;
using linear::Algo;
using testing_graphs::LayerSpec;

struct Variant {
  Accum accum;
  Algo algo;
  const char* profile;  // null: the device under test (gpu_test::TestProfile())
  const char* expect;  // variant name expected in the bundle
  uint32_t gemm_rm = 0, gemm_bk4 = 0;  // tiled GEMM shape override (0: selection's)
};

const TargetProfile& Profile(const std::string& name) {
  static std::map<std::string, TargetProfile> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    auto p = LoadProfile(name);
    EXPECT_TRUE(p.ok()) << p.error().message;
    it = cache.emplace(name, p.ok() ? *p : TargetProfile{}).first;
  }
  return it->second;
}

// Runs one (variant, M, K, N) case; returns a failure description or "".
void CheckCase(const Variant& v, int64_t m, int64_t k, int64_t n, bool bias, bool relu, uint32_t seed) {
  const std::string profile = v.profile ? v.profile : gpu_test::TestProfile();
  std::ostringstream where;
  where << v.expect << (v.gemm_rm ? " rm=" + std::to_string(v.gemm_rm) + " bk4=" + std::to_string(v.gemm_bk4) : "")
        << " on " << profile << " M=" << m << " K=" << k << " N=" << n << " bias=" << bias
        << " relu=" << relu;
  SCOPED_TRACE(where.str());
  LayerSpec l;
  l.k = k;
  l.n = n;
  l.q8ta = true;
  l.act_scale = 0.03f;
  l.act_zp = int32_t(seed % 7) - 3;
  l.bias = bias;
  l.relu = relu;
  ir::Graph g = testing_graphs::MakeLinearChain(m, {l}, seed);
  CompileOptions o;
  o.select.force_accum = v.accum;
  o.select.force_algo = v.algo;
  o.select.gemm_rm = v.gemm_rm;
  o.select.gemm_bk4 = v.gemm_bk4;
  auto bundle = CompileGraph(g, Profile(profile), o, 0);
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;

  const std::vector<float> x = testing_graphs::RandomFloats(size_t(m * k), seed + 1);
  std::vector<float> y;
  std::vector<bool> integer;
  std::vector<std::string> variants;
  ASSERT_TRUE(gpu_test::RunBundle(*bundle, 0, x, &y, &integer, &variants));
  gpu_test::ExpectNoValidationMessages(where.str());
  ASSERT_EQ(variants.size(), 1u);
  EXPECT_EQ(variants[0], v.expect);

  // Reference, with the error scale of each output.
  const ir::Op& op = g.ops[0];
  ref::LinearArgs a;
  a.x = x.data();
  a.m = m;
  a.k = k;
  a.n = n;
  a.w = reinterpret_cast<const int8_t*>(g.tensors[op.inputs[1]].data->data());
  a.w_scales = g.tensors[op.inputs[1]].quant->scales.data();
  a.bias = bias ? reinterpret_cast<const float*>(g.tensors[op.inputs[2]].data->data()) : nullptr;
  a.relu = relu;
  std::vector<float> want(size_t(m * n)), mag(size_t(m * n));
  double rel;
  if (v.accum == Accum::IntDot) {
    ASSERT_TRUE(integer[0]);
    ref::LinearInteger(a, l.act_scale, l.act_zp, want.data(), mag.data());
    rel = 4e-7;  // int32 accumulator exact; only the fp32 epilogue (scale, bias) rounds
  } else {
    ASSERT_FALSE(integer[0]);
    ref::LinearWeightOnly(a, want.data(), mag.data());
    rel = 2e-5;  // fp32 accumulation over K against a double reference
  }
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double tol = rel * mag[i] + 1e-30;
    const double err = std::fabs(double(y[i]) - double(want[i]));
    if (!(err <= tol)) {  // also catches NaN (poison left in place)
      if (++bad <= 5)
        ADD_FAILURE() << "y[" << i / n << "," << i % n << "] = " << y[i] << ", reference " << want[i]
                      << " (error " << err << " > tolerance " << tol << ")";
    }
  }
  EXPECT_EQ(bad, 0) << bad << " of " << want.size() << " outputs out of tolerance";
}

class LinearVariants : public ::testing::TestWithParam<std::tuple<int, int64_t>> {};

const Variant kVariants[] = {
    {Accum::IntDot, Algo::Gemm, nullptr, "linear_q8ta_q8csw_dot_gemm"},
    {Accum::IntDot, Algo::Gemv, nullptr, "linear_q8ta_q8csw_dot_gemv"},
    {Accum::Dequant, Algo::Gemm, nullptr, "linear_q8ta_q8csw_dequant_gemm"},
    {Accum::Dequant, Algo::Gemv, nullptr, "linear_q8ta_q8csw_dequant_gemv"},
};

TEST_P(LinearVariants, MatchesReference) {
  const auto [vi, m] = GetParam();
  const Variant& v = kVariants[vi];
  uint32_t seed = uint32_t(1000 * vi + m);
  int i = 0;
  for (int64_t k : {4, 36, 1000, 2048})
    for (int64_t n : {1, 13, 100, 2048}) {
      // Alternate bias and relu so each shape class sees both settings of each.
      CheckCase(v, m, k, n, (i % 2) == 0, (i / 2) % 2 == 0, seed + 17 * i);
      ++i;
    }
}

INSTANTIATE_TEST_SUITE_P(All, LinearVariants,
                         ::testing::Combine(::testing::Values(0, 1, 2, 3), ::testing::Values(1, 3, 17, 64)),
                         [](const auto& info) {
                           const auto& v = kVariants[std::get<0>(info.param)];
                           return std::string(v.expect).substr(7) + "_M" + std::to_string(std::get<1>(info.param));
                         });

// The tiled GEMM's other shapes (--gemm-shape RMxBK4): 8 rows per thread and 16 or 32 K words per
// step, int dot and dequant, on ragged M, K (the step only where it divides the padded K: 1000
// has 256 words, so 32 applies; 36 and 4 keep 8) and N.
TEST(LinearVariantsGemmShapes, MatchReference) {
  const Variant vs[] = {
      {Accum::IntDot, Algo::Gemm, nullptr, "linear_q8ta_q8csw_dot_gemm", 8, 16},
      {Accum::IntDot, Algo::Gemm, nullptr, "linear_q8ta_q8csw_dot_gemm", 8, 32},
      {Accum::IntDot, Algo::Gemm, nullptr, "linear_q8ta_q8csw_dot_gemm", 4, 16},
      {Accum::Dequant, Algo::Gemm, nullptr, "linear_q8ta_q8csw_dequant_gemm", 8, 16},
  };
  uint32_t seed = 301;
  for (const auto& v : vs)
    for (int64_t m : {3, 17, 129})
      for (auto [k, n] : {std::pair<int64_t, int64_t>{36, 13}, {1000, 100}, {2048, 203}}) {
        const uint32_t s = seed++;
        CheckCase(v, m, k, n, s % 2 == 0, s % 3 == 0, s);
      }
}

// Other reduction paths and limits: android-baseline-2022 (128 invocations, 16 KiB shared,
// shared-memory tree reduction, no int dot) and android-16 (int dot without subgroup pinning).
TEST(LinearVariantsOtherProfiles, BaselineAndAndroid16) {
  const Variant vs[] = {
      {Accum::Dequant, Algo::Gemm, "android-baseline-2022", "linear_q8ta_q8csw_dequant_gemm"},
      {Accum::Dequant, Algo::Gemv, "android-baseline-2022", "linear_q8ta_q8csw_dequant_gemv"},
      {Accum::IntDot, Algo::Gemm, "android-16", "linear_q8ta_q8csw_dot_gemm"},
      {Accum::IntDot, Algo::Gemv, "android-16", "linear_q8ta_q8csw_dot_gemv"},
  };
  uint32_t seed = 77;
  for (const auto& v : vs)
    for (int64_t m : {1, 3, 17})
      for (auto [k, n] : {std::pair<int64_t, int64_t>{36, 13}, {1000, 100}, {2048, 2048}}) {
        const uint32_t s = seed++;
        CheckCase(v, m, k, n, s % 2 == 0, s % 3 == 0, s);
      }
}

// Weight-only layers (float activations) take the dequant path on every target. K 1024 and 2064
// (multiples of 16) take the GEMV's unit path (4 vec4 of x per 16 weights), K 1000 the general
// one; M 17 is forced onto the GEMV (several rows per workgroup).
TEST(LinearVariantsOtherProfiles, WeightOnlyLayer) {
  uint32_t seed = 5;
  for (int64_t m : {1, 3, 17, 64, 129})
    for (auto [k, n] : {std::pair<int64_t, int64_t>{1000, 100}, {1024, 61}, {2064, 37}}) {
      SCOPED_TRACE("m=" + std::to_string(m) + " k=" + std::to_string(k) + " n=" + std::to_string(n));
      LayerSpec l;
      l.k = k;
      l.n = n;
      l.q8ta = false;
      l.relu = true;
      ir::Graph g = testing_graphs::MakeLinearChain(m, {l}, seed++);
      CompileOptions o;
      if (m == 17) o.select.force_algo = Algo::Gemv;
      auto bundle = CompileGraph(g, Profile(gpu_test::TestProfile()), o, 0);
      ASSERT_TRUE(bundle.ok()) << bundle.error().message;
      auto x = testing_graphs::RandomFloats(size_t(m * l.k), seed++);
      std::vector<float> y;
      std::vector<std::string> variants;
      ASSERT_TRUE(gpu_test::RunBundle(*bundle, 0, x, &y, nullptr, &variants));
      gpu_test::ExpectNoValidationMessages("weight-only");
      // The profile's (possibly tuned) GEMV/GEMM threshold decides the algorithm.
      const TargetProfile tp = Profile(gpu_test::TestProfile());
      const int64_t gemv_max = tp.gemv_max_m ? tp.gemv_max_m : linear::kDefaultGemvMaxM;
      EXPECT_EQ(variants[0], m <= gemv_max || m == 17 ? "linear_q8csw_dequant_gemv" : "linear_q8csw_dequant_gemm");
      auto want = ref::RunGraph(g, {{"x", x}}, {});
      ASSERT_TRUE(want.ok());
      const auto& w = want->at("y");
      ASSERT_EQ(y.size(), w.size());
      for (size_t i = 0; i < w.size(); ++i) ASSERT_NEAR(y[i], w[i], 1e-4 * (1 + std::fabs(w[i]))) << i;
    }
}

}  // namespace
}  // namespace vkqc
