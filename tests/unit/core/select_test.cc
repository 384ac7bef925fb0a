// Selection goldens per built-in profile (DESIGN 5: every rule is a pure function of
// (op, shapes, profile, options) with golden tests).
#include <gtest/gtest.h>

#include "compiler/kernels/conv/conv.h"
#include "compiler/kernels/linear/linear.h"
#include "linear_shape_util.h"

namespace vkqc::linear {
namespace {

struct Golden {
  const char* profile;
  const char* m1;          // variant at M=1 (q8ta activations)
  const char* m64;         // variant at M=64
  uint32_t gemv_subgroup;  // pinned subgroup size of the GEMV reduction (0: shared-memory tree)
};

const Golden kGoldens[] = {
    {"lavapipe", "linear_q8ta_q8csw_dequant_gemv", "linear_q8ta_q8csw_dequant_gemm", 8},
    {"android-baseline-2022", "linear_q8ta_q8csw_dequant_gemv", "linear_q8ta_q8csw_dequant_gemm", 0},
    {"android-16", "linear_q8ta_q8csw_dequant_gemv", "linear_q8ta_q8csw_dequant_gemm", 0},
    {"adreno-7xx", "linear_q8ta_q8csw_dequant_gemv", "linear_q8ta_q8csw_dequant_gemm", 0},  // no subgroup arithmetic assumed
    {"mali-valhall", "linear_q8ta_q8csw_dot_gemv", "linear_q8ta_q8csw_dot_gemm", 0},
    // Hopper: VK_NV_cooperative_matrix lists no int8 types, so the int path keeps the tiled GEMM.
    {"nvidia-hopper", "linear_q8ta_q8csw_dot_gemv", "linear_q8ta_q8csw_cm_gemm", 32},
    {"nvidia-ada", "linear_q8ta_q8csw_dot_gemv", "linear_q8ta_q8csw_dot_gemm", 32},  // f16 shapes only
    {"amd-rdna3", "linear_q8ta_q8csw_dot_gemv", "linear_q8ta_q8csw_dot_gemm", 64},
    {"intel-arc", "linear_q8ta_q8csw_dot_gemv", "linear_q8ta_q8csw_dot_gemm", 16},  // sidecar tunes for 16
    {"apple-moltenvk", "linear_q8ta_q8csw_dequant_gemv", "linear_q8ta_q8csw_dequant_gemm", 0},  // no requiredSubgroupSizeStages
};

class SelectGolden : public ::testing::TestWithParam<Golden> {};

TEST_P(SelectGolden, VariantAndLimits) {
  const Golden& g = GetParam();
  auto p = LoadProfile(g.profile);
  ASSERT_TRUE(p.ok()) << p.error().message;
  for (int64_t m : {1, 128}) {  // above every built-in threshold (nvidia-hopper's tuned one is 64)
    LinearShape s;
    s.m = m;
    s.k = s.n = 2048;
    s.act = ir::Scheme::Q8TA;
    s.has_bias = true;
    auto c = SelectLinear(s, *p, {});
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(c->VariantName(s), m == 1 ? g.m1 : g.m64) << c->reason;
    EXPECT_LE(c->SharedMemoryBytes(), p->max_compute_shared_memory_size);
    EXPECT_LE(c->Invocations(), p->max_compute_work_group_invocations);
    EXPECT_FALSE(c->reason.empty());
    if (m == 1) {
      EXPECT_EQ(c->subgroup_size, g.gemv_subgroup) << c->reason;
    }
  }
  // Weight-only layers always dequantize.
  LinearShape f;
  f.k = f.n = 512;
  auto c = SelectLinear(f, *p, {});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->VariantName(f), "linear_q8csw_dequant_gemv");
  // int4 weights with dynamic per-token activations.
  LinearShape d;
  d.k = 2048;
  d.n = 8192;
  d.act = ir::Scheme::DQ8CA;
  d.weights = ir::Scheme::Q4GSW;
  d.group_size = 128;
  auto e = SelectLinear(d, *p, {});
  ASSERT_TRUE(e.ok());
  const bool dot = std::string(g.m1).find("_dot_") != std::string::npos;
  EXPECT_EQ(e->VariantName(d), dot ? "linear_dq8ca_q4gsw_dot_gemv" : "linear_dq8ca_q4gsw_dequant_gemv");
  EXPECT_LE(e->SharedMemoryBytes(), p->max_compute_shared_memory_size);
}

INSTANTIATE_TEST_SUITE_P(Builtins, SelectGolden, ::testing::ValuesIn(kGoldens),
                         [](const auto& info) {
                           std::string n = info.param.profile;
                           for (auto& ch : n) if (ch == '-') ch = '_';
                           return n;
                         });

TEST(Select, ThresholdIsPerProfileAndOverridable) {
  auto p = LoadProfile("nvidia-hopper");
  ASSERT_TRUE(p.ok());
  LinearShape s;
  s.m = p->gemv_max_m;  // 64, tuned
  s.k = 256;
  s.n = 256;
  s.act = ir::Scheme::Q8TA;
  EXPECT_EQ(SelectLinear(s, *p, {})->algo, Algo::Gemv);
  s.m = p->gemv_max_m + 1;
  EXPECT_EQ(SelectLinear(s, *p, {})->algo, Algo::Gemm);
  SelectOptions o;
  o.gemv_max_m = 128;
  EXPECT_EQ(SelectLinear(s, *p, o)->algo, Algo::Gemv);
  p->gemv_max_m = 4;
  s.m = 5;
  EXPECT_EQ(SelectLinear(s, *p, {})->algo, Algo::Gemm);
}

// The taller tiles (nvidia-hopper: gemm_rows_int4 = gemm_rows_int8 = 8) apply only while the
// 128-row tiles still give kMinWorkgroupsForTallTiles workgroups; int4 on the int-dot path only
// with groups of 128 or more; int8 only on the int-dot path.
TEST(Select, TallTilesOnlyWithEnoughWorkgroups) {
  auto p = LoadProfile("nvidia-hopper");
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->gemm_rows_int4, 8u);
  ASSERT_EQ(p->gemm_rows_int8, 8u);
  auto rows = [&](int64_t m, int64_t k, int64_t n, ir::Scheme w, ir::Scheme act, int64_t group = 128) {
    const LinearShape s = Shape(act, w, group, m, k, n);
    SelectOptions o;
    o.no_coopmat = true;
    auto c = SelectLinear(s, *p, o);
    EXPECT_TRUE(c.ok());
    EXPECT_EQ(c->algo, Algo::Gemm) << c->reason;
    return c.ok() ? c->rm : 0u;
  };
  const ir::Scheme q4 = ir::Scheme::Q4GSW, q4a = ir::Scheme::Q4GAW, q8 = ir::Scheme::Q8CSW;
  const ir::Scheme dq = ir::Scheme::DQ8CA, ta = ir::Scheme::Q8TA, fl = ir::Scheme::Float;
  EXPECT_EQ(rows(512, 4096, 14336, q4, dq), 8u);      // 4 x 224 = 896 workgroups
  EXPECT_EQ(rows(128, 4096, 14336, q4, dq), 8u);      // 224
  EXPECT_EQ(rows(512, 14336, 4096, q4, dq), 8u);      // 256
  EXPECT_EQ(rows(128, 2048, 8192, q4, dq), 4u);       // 128
  EXPECT_EQ(rows(512, 8192, 2048, q4a, dq), 4u);      // Llama-3.2-1B down_proj: 128
  EXPECT_EQ(rows(128, 8192, 2048, q4a, dq), 4u);      // 32
  EXPECT_EQ(rows(512, 4096, 14336, q4, dq, 32), 4u);  // int-dot, groups of 32
  EXPECT_EQ(rows(512, 4096, 14336, q4, fl, 32), 8u);  // dequant, groups of 32
  EXPECT_EQ(rows(512, 4096, 14336, q8, ta), 8u);      // int8 int-dot
  EXPECT_EQ(rows(128, 14336, 4096, q8, ta), 4u);      // 64 workgroups
  EXPECT_EQ(rows(512, 4096, 14336, q8, fl), 4u);      // int8 dequant: not measured, 4
}

// One row on the int-dot path of a GPU: 2 channels per workgroup, threads and units by K over the
// profile's tuned GEMV values; a GEMV quantizing a row of K >= 8192 in its prologue: 256 threads x
// 4 channels x 1 unit. Not on CPU devices, not for int8 outputs, not at M > 1, not on the dequant path.
TEST(Select, OneRowIntDotGemv) {
  struct Want {
    uint32_t threads, nr, unroll;
  };
  auto gemv = [](const TargetProfile& p, LinearShape s, bool prologue = false) {
    auto c = SelectLinear(s, p, SelectOptions{});
    EXPECT_TRUE(c.ok());
    if (!c.ok()) return Want{0, 0, 0};
    EXPECT_EQ(c->algo, Algo::Gemv) << c->reason;
    const LinearChoice r = prologue ? ForRowPrologue(s, p, *c) : *c;
    EXPECT_LE(r.SharedMemoryBytes() + (prologue ? r.PrologueSharedBytes(s.k) : 0), p.max_compute_shared_memory_size);
    EXPECT_LE(r.Invocations(), p.max_compute_work_group_invocations);
    if (r.subgroup_size) {
      EXPECT_EQ(r.threads % r.subgroup_size, 0u);
    }
    return Want{r.threads, r.nr, r.unroll};
  };
  auto eq = [](Want a, Want b) -> ::testing::AssertionResult {
    if (a.threads == b.threads && a.nr == b.nr && a.unroll == b.unroll) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << a.threads << "x" << a.nr << "x" << a.unroll;
  };
  const ir::Scheme q4 = ir::Scheme::Q4GSW, q8 = ir::Scheme::Q8CSW, dq = ir::Scheme::DQ8CA, ta = ir::Scheme::Q8TA;
  auto h = LoadProfile("nvidia-hopper");
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h->gemv_channels, 4u);  // the tuned value the rule replaces at M = 1 on the int-dot path
  EXPECT_TRUE(eq(gemv(*h, Shape(dq, q4, 32, 1, 2048, 2048)), {64, 2, 1}));    // 1b q_proj
  EXPECT_TRUE(eq(gemv(*h, Shape(dq, q4, 32, 1, 2048, 512)), {64, 2, 1}));     // k_proj, v_proj
  EXPECT_TRUE(eq(gemv(*h, Shape(dq, q4, 32, 1, 2048, 16384)), {64, 2, 1}));   // the gate/up pair
  EXPECT_TRUE(eq(gemv(*h, Shape(dq, q4, 32, 1, 8192, 2048)), {128, 2, 2}));   // down_proj, row quantized elsewhere
  EXPECT_TRUE(eq(gemv(*h, Shape(ta, q8, 0, 1, 2048, 128256)), {128, 2, 1}));  // lm_head
  EXPECT_TRUE(eq(gemv(*h, Shape(dq, q4, 32, 1, 1024, 1)), {32, 1, 1}));       // one channel
  // Quantizing its row in every workgroup: 256 x 4 x 1 from K = 8192; below, the one-row choice.
  EXPECT_TRUE(eq(gemv(*h, Shape(dq, q4, 32, 1, 8192, 2048), true), {256, 4, 1}));
  EXPECT_TRUE(eq(gemv(*h, Shape(dq, q4, 32, 1, 2048, 2048), true), {64, 2, 1}));
  EXPECT_TRUE(eq(gemv(*h, Shape(dq, q4, 32, 1, 8192, 2), true), {256, 2, 1}));
  // Unchanged: several rows, int8 outputs, the dequant path, CPU devices.
  EXPECT_TRUE(eq(gemv(*h, Shape(dq, q4, 32, 2, 2048, 2048)), {32, 2, 1}));
  LinearShape q8out = Shape(ta, q8, 0, 1, 2048, 2048);
  q8out.out_q8 = true;
  EXPECT_TRUE(eq(gemv(*h, q8out), {128, 4, 1}));
  EXPECT_TRUE(eq(gemv(*h, Shape(ir::Scheme::Float, q4, 32, 1, 2048, 2048)), {128, 4, 1}));
  auto lvp = LoadProfile("lavapipe");
  ASSERT_TRUE(lvp.ok());
  const Want l = gemv(*lvp, Shape(dq, q4, 32, 1, 8192, 2048), true);
  EXPECT_EQ(l.nr, 4u);
  auto mali = LoadProfile("mali-valhall");  // the int-dot path on a GPU profile without tuned values
  ASSERT_TRUE(mali.ok());
  EXPECT_EQ(gemv(*mali, Shape(dq, q4, 32, 1, 2048, 2048)).nr, 2u);
}

TEST(Select, ForcingIntDotNeedsTheFeature) {
  auto p = LoadProfile("android-baseline-2022");
  ASSERT_TRUE(p.ok());
  SelectOptions o;
  o.force_accum = Accum::IntDot;
  LinearShape s;
  s.m = 1;
  s.k = 64;
  s.n = 64;
  s.act = ir::Scheme::Q8TA;
  auto c = SelectLinear(s, *p, o);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("shaderIntegerDotProduct"), std::string::npos);
  auto lvp = LoadProfile("lavapipe");
  ASSERT_TRUE(lvp.ok());
  auto d = SelectLinear(s, *lvp, o);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->accum, Accum::IntDot);
}

TEST(Select, LongReductionsFallBackToDequant) {
  auto p = LoadProfile("nvidia-hopper");
  ASSERT_TRUE(p.ok());
  LinearShape s;
  s.m = 1;
  s.k = 70000;
  s.n = 8;
  s.act = ir::Scheme::Q8TA;
  auto c = SelectLinear(s, *p, {});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->accum, Accum::Dequant);
  EXPECT_NE(c->reason.find("exact int32"), std::string::npos);
}

}  // namespace
}  // namespace vkqc::linear

namespace vkqc::conv {
namespace {

ConvGeometry Geo(int64_t c, int64_t hw, int64_t k, int64_t stride) {
  ConvGeometry g;
  g.h = g.w = hw;
  g.c = c;
  g.kh = g.kw = k;
  g.sh = g.sw = stride;
  g.pt = g.pl = g.pb = g.pr = k / 2;
  g.oh = g.ow = (hw + 2 * (k / 2) - k) / stride + 1;
  return g;
}

// The im2col-vs-direct rule per built-in profile: Adreno keeps narrow convolutions over large
// maps direct (ET-VK's measurements); every other built-in always uses im2col.
TEST(SelectConvGolden, PerProfileRule) {
  struct Case {
    int64_t c, hw, k, stride, groups, cout;
    ConvAlgo adreno, others;
  };
  const Case cases[] = {
      {16, 112, 3, 1, 1, 16, ConvAlgo::Direct, ConvAlgo::Im2col},     // narrow, 12544 px
      {32, 112, 3, 1, 1, 32, ConvAlgo::Im2col, ConvAlgo::Im2col},     // Cin >= 32
      {3, 224, 3, 2, 1, 32, ConvAlgo::Direct, ConvAlgo::Im2col},      // the stem: 12544 px
      {16, 64, 3, 1, 1, 16, ConvAlgo::Im2col, ConvAlgo::Im2col},      // 4096 px
      {16, 56, 1, 1, 1, 24, ConvAlgo::Pointwise, ConvAlgo::Pointwise},
      {16, 56, 1, 2, 1, 24, ConvAlgo::Im2col, ConvAlgo::Im2col},      // 1x1 stride 2: not pointwise; 784 px
      {32, 56, 3, 1, 32, 32, ConvAlgo::Depthwise, ConvAlgo::Depthwise},
      {32, 56, 3, 1, 2, 32, ConvAlgo::Direct, ConvAlgo::Direct},      // grouped
  };
  for (const char* name : {"lavapipe", "android-baseline-2022", "android-16", "adreno-7xx", "mali-valhall",
                           "nvidia-hopper", "nvidia-ada", "amd-rdna3", "intel-arc", "apple-moltenvk"}) {
    auto p = LoadProfile(name);
    ASSERT_TRUE(p.ok()) << p.error().message;
    for (const Case& c : cases) {
      const ConvChoice got = SelectConv(Geo(c.c, c.hw, c.k, c.stride), c.cout, c.groups, *p, {});
      const ConvAlgo want = std::string(name) == "adreno-7xx" ? c.adreno : c.others;
      EXPECT_EQ(ConvAlgoName(got.algo), std::string(ConvAlgoName(want)))
          << name << " Cin=" << c.c << " " << c.hw << "x" << c.hw << " k" << c.k << " s" << c.stride << " groups "
          << c.groups << ": " << got.reason;
      EXPECT_FALSE(got.reason.empty());
    }
  }
  // Forcing applies to dense non-pointwise convolutions only.
  auto p = LoadProfile("nvidia-hopper");
  ASSERT_TRUE(p.ok());
  ConvSelectOptions o;
  o.force = ConvAlgo::Direct;
  EXPECT_EQ(SelectConv(Geo(64, 28, 3, 1), 64, 1, *p, o).algo, ConvAlgo::Direct);
  EXPECT_EQ(SelectConv(Geo(64, 28, 1, 1), 64, 1, *p, o).algo, ConvAlgo::Pointwise);
  EXPECT_EQ(SelectConv(Geo(64, 28, 3, 1), 64, 64, *p, o).algo, ConvAlgo::Depthwise);
  o.force = ConvAlgo::Im2col;
  auto a = LoadProfile("adreno-7xx");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(SelectConv(Geo(16, 112, 3, 1), 16, 1, *a, o).algo, ConvAlgo::Im2col);
}

// The rows kernel for small convolution GEMMs: up to kRowsMaxMacs multiply-adds, lanes splitting
// K (at most 2 units of 16 values each, up to 32 lanes, the grid within kRowsMaxInvocations), one
// lane on CPU devices; forcing either way.
TEST(SelectConvRows, ThresholdLanesAndForcing) {
  auto h = LoadProfile("nvidia-hopper");
  auto l = LoadProfile("lavapipe");
  auto b = LoadProfile("android-baseline-2022");
  ASSERT_TRUE(h.ok() && l.ok() && b.ok());
  struct Case {
    int64_t m, k, n;
    bool use;
    uint32_t lanes, rows;
  };
  const Case cases[] = {
      {12544, 16, 96, true, 1, 4},   // MobileNetV2's first expand: one unit of K, 301056 output words
      {3136, 24, 144, true, 1, 4},   // 112896 output words >= 2^16: 4 rows per invocation
      {12544, 32, 16, true, 1, 1},   // 50176 output words: one row
      {12544, 96, 24, true, 2, 1},   // 6 units; 4 lanes would exceed the grid (12544 * 6 * 4 > 2^18)
      {49, 960, 160, true, 32, 1},   // 60 units: 32 lanes
      {49, 320, 1280, true, 16, 1},  // 20 units; 32 lanes would exceed the grid (49 * 320 * 32 > 2^18)
      {1, 13, 7, true, 1, 1},
      {50176, 64, 64, false, 1, 1},  // 205M multiply-adds: the linear family's GEMM
  };
  for (const Case& c : cases) {
    const RowsChoice got = SelectConvRows(c.m, c.k, c.n, *h, {});
    EXPECT_EQ(got.use, c.use) << c.m << "x" << c.k << "x" << c.n << ": " << got.reason;
    EXPECT_EQ(got.lanes, c.lanes) << c.m << "x" << c.k << "x" << c.n << ": " << got.reason;
    if (c.use) {
      EXPECT_EQ(got.rows_per_invocation, c.rows) << c.m << "x" << c.k << "x" << c.n << ": " << got.reason;
    }
    EXPECT_EQ(SelectConvRows(c.m, c.k, c.n, *b, {}).lanes, c.lanes);  // 128 invocations there too
    EXPECT_EQ(SelectConvRows(c.m, c.k, c.n, *l, {}).lanes, 1u) << "lavapipe: a CPU device";
  }
  ConvSelectOptions o;
  o.rows = false;
  EXPECT_FALSE(SelectConvRows(1, 13, 7, *h, o).use);
  o.rows = true;
  const RowsChoice big = SelectConvRows(50176, 64, 64, *h, o);
  EXPECT_TRUE(big.use);
  EXPECT_NE(big.reason.find("forced"), std::string::npos) << big.reason;
}

// The depthwise + pointwise kernel: lanes for at most 2 units of K (up to 16), then the output
// words a workgroup of 128 takes (a slice where they do not fit), then pixels; never on a CPU device.
TEST(SelectDwpw, LanesSlicesPixels) {
  auto h = LoadProfile("nvidia-hopper");
  auto b = LoadProfile("android-baseline-2022");
  auto l = LoadProfile("lavapipe");
  ASSERT_TRUE(h.ok() && b.ok() && l.ok());
  struct Case {
    int64_t k, n;
    uint32_t lanes, words, pixels;
  };
  const Case cases[] = {
      {32, 16, 1, 4, 32},    // MobileNetV2's 112x112 project: 2 units, 4 words
      {144, 24, 8, 6, 2},    // 56x56: 9 units
      {576, 96, 16, 8, 1},   // 14x14: 36 units on 16 lanes, 8 of 24 words per workgroup
      {960, 320, 16, 8, 1},  // 7x7: 8 of 80 words
      {13, 7, 1, 2, 64},
  };
  for (const Case& c : cases)
    for (const TargetProfile* p : {&*h, &*b}) {
      const DwpwChoice got = SelectDwpw(c.k, c.n, *p);
      EXPECT_TRUE(got.use) << p->name << " " << c.k << "x" << c.n << ": " << got.reason;
      EXPECT_EQ(got.lanes, c.lanes) << p->name << " " << c.k << "x" << c.n << ": " << got.reason;
      EXPECT_EQ(got.words, c.words) << p->name << " " << c.k << "x" << c.n << ": " << got.reason;
      EXPECT_EQ(got.pixels, c.pixels) << p->name << " " << c.k << "x" << c.n << ": " << got.reason;
    }
  const DwpwChoice cpu = SelectDwpw(144, 24, *l);
  EXPECT_FALSE(cpu.use);
  EXPECT_EQ(cpu.reason, "a CPU device");
}

// A chained convolution (conv.h CanChain): the layer's workgroups must hold every output word
// (widened to them with fewer lanes, up to kChainLaneUnits units each: SelectDwpw's
// all_words_lane_units), and the chained words x units per invocation stay within kChainUnits.
TEST(SelectDwpw, ChainedConvolution) {
  auto h = LoadProfile("nvidia-hopper");
  ASSERT_TRUE(h.ok());
  std::string why;
  // MobileNetV2's 112x112 project (4 words, 32 pixels) and its expand to 96: 768 words over 128
  // invocations, 1 unit each.
  EXPECT_TRUE(CanChain(32, 16, SelectDwpw(32, 16, *h), 96, *h, &why)) << why;
  // 14x14, K 384, N 64: 16 lanes take 8 of 16 words; all 16 words on 8 lanes (3 units each).
  const DwpwChoice sliced = SelectDwpw(384, 64, *h);
  EXPECT_EQ(sliced.words, 8u);
  EXPECT_FALSE(CanChain(384, 64, sliced, 384, *h, &why));
  EXPECT_EQ(why, "its workgroups take a slice of the output words");
  const DwpwChoice whole = SelectDwpw(384, 64, *h, kChainLaneUnits);
  ASSERT_TRUE(whole.use) << whole.reason;
  EXPECT_EQ(whole.words, 16u);
  EXPECT_EQ(whole.lanes, 8u);
  EXPECT_EQ(whole.pixels, 1u);
  EXPECT_TRUE(CanChain(384, 64, whole, 384, *h, &why)) << why;
  // 14x14, K 576, N 96: 24 words on 4 lanes would take 9 units each.
  const DwpwChoice wide = SelectDwpw(576, 96, *h, kChainLaneUnits);
  EXPECT_FALSE(wide.use);
  EXPECT_NE(wide.reason.find("more than 4 units"), std::string::npos) << wide.reason;
  // Too much chained work: 16 pixels x 375 words x 2 units over 128 invocations.
  EXPECT_FALSE(CanChain(8, 30, SelectDwpw(8, 30, *h), 1500, *h, &why));
  EXPECT_NE(why.find("units of its K per invocation"), std::string::npos) << why;
}

// The rows kernel gathers an im2col'd layer's rows itself where K <= 64 (not for pointwise layers,
// nor where the rows kernel is not taken): one output word per invocation on GPUs, all of a row's
// on CPU devices.
TEST(SelectGather, SmallKOnly) {
  auto h = LoadProfile("nvidia-hopper");
  auto l = LoadProfile("lavapipe");
  ASSERT_TRUE(h.ok() && l.ok());
  ConvGeometry stem;  // MobileNetV2's stem: 224x224x3, 3x3 stride 2 -> 112x112, K = 27
  stem.h = stem.w = 224;
  stem.c = 3;
  stem.kh = stem.kw = 3;
  stem.sh = stem.sw = 2;
  stem.pt = stem.pl = stem.pb = stem.pr = 1;
  stem.oh = stem.ow = 112;
  RowsChoice rows;
  rows.use = true;
  GatherInput g = SelectGather(stem, 32, rows, *h);
  EXPECT_TRUE(g.use) << g.reason;
  EXPECT_EQ(g.words, 1u);
  g = SelectGather(stem, 83, rows, *l);
  EXPECT_TRUE(g.use);
  EXPECT_EQ(g.words, 21u) << "lavapipe: all of a row's output words";
  ConvGeometry k64 = stem;  // 4x4x4 = 64: gathered; 3x3x8 = 72: not
  k64.c = 4;
  k64.kh = k64.kw = 4;
  EXPECT_TRUE(SelectGather(k64, 9, rows, *h).use);
  ConvGeometry k72 = stem;
  k72.c = 8;
  EXPECT_FALSE(SelectGather(k72, 9, rows, *h).use);
  ConvGeometry pw;  // a pointwise layer reads its rows as they are
  pw.c = 16;
  EXPECT_FALSE(SelectGather(pw, 9, rows, *h).use);
  rows.use = false;
  EXPECT_FALSE(SelectGather(stem, 32, rows, *h).use) << "on the linear family's GEMM";
}

// The global pool computed by a pointwise layer: on GPUs one output word per workgroup, lanes with
// at least 4 units of K each (up to 32), pixel slots the rest; on CPU devices one lane, slots for
// the image's pixels (a power of 2), words the rest of the workgroup.
TEST(SelectPool, LanesWordsSlots) {
  auto h = LoadProfile("nvidia-hopper");
  auto l = LoadProfile("lavapipe");
  ASSERT_TRUE(h.ok() && l.ok());
  struct Case {
    int64_t pixels, k, n;
    uint32_t lanes, words, slots;  // GPU
    uint32_t cpu_words, cpu_slots;
  };
  const Case cases[] = {
      {49, 320, 1280, 4, 1, 32, 2, 64},   // MobileNetV2's last pointwise layer: 20 units
      {49, 64, 100, 1, 1, 128, 2, 64},    // 4 units: one lane
      {49, 128, 100, 2, 1, 64, 2, 64},    // 8 units
      {150, 1000, 12, 8, 1, 16, 1, 128},  // 63 units; 150 pixels: 10 rounds on the GPU, 2 on the CPU
      {1, 13, 7, 1, 1, 128, 2, 64},       // one pixel, 2 words (the CPU: 128 / 1 slot, capped at 2 words)
      {1, 10000, 4, 32, 1, 4, 1, 128},    // 625 units: 32 lanes
  };
  for (const Case& c : cases) {
    PoolInput g = SelectPool(c.pixels, c.k, c.n, *h);
    EXPECT_TRUE(g.use);
    EXPECT_EQ(g.lanes, c.lanes) << g.reason;
    EXPECT_EQ(g.words, c.words) << g.reason;
    EXPECT_EQ(g.slots, c.slots) << g.reason;
    PoolInput cpu = SelectPool(c.pixels, c.k, c.n, *l);
    EXPECT_EQ(cpu.lanes, 1u) << cpu.reason;
    EXPECT_EQ(cpu.words, c.cpu_words) << cpu.reason;
    EXPECT_EQ(cpu.slots, c.cpu_slots) << cpu.reason;
  }
}

}  // namespace
}  // namespace vkqc::conv
