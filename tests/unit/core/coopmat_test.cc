// The cooperative-matrix GEMM (shaders/linear_coopmat.comp) without a device: selection goldens
// (which targets and schemes get it, why not elsewhere, forcing and opting out), every shader
// variant compiled, validated by SPIRV-Tools and reflected, and the bundle requirements it
// derives. The kernels themselves run in tests/gpu/coopmat_test.cc where the device has
// VK_NV_cooperative_matrix.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <string>

#include "compiler/kernels/linear/linear.h"
#include "linear_shape_util.h"
#include "compiler/passes/pipeline.h"
#include "compiler/shaderlib/coopmat_khr.h"
#include "compiler/shaderlib/shaderlib.h"
#include "schema/bundle_generated.h"
#include "compiler/graph/synthetic.h"

namespace vkqc::linear {
namespace {

TargetProfile Load(const std::string& name) {
  auto p = LoadProfile(name);
  EXPECT_TRUE(p.ok()) << p.error().message;
  return p.ok() ? *p : TargetProfile{};
}



bool Has(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

// NVIDIA lists int8 matrix types for VK_KHR_cooperative_matrix only: KHR by default; with
// --coopmat-nv the int8 path keeps the tiled int-dot GEMM unless the quirk nv_coopmat_int8 says
// the device's NV list has them.
TEST(CoopMatSelect, NvInt8NeedsTheQuirk) {
  const TargetProfile p = Load("nvidia-hopper");
  const LinearShape s = Shape(ir::Scheme::DQ8CA, ir::Scheme::Q8CSW, 0);
  auto k = SelectLinear(s, p, {});
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->VariantName(s), "linear_dq8ca_q8csw_cm_gemm");
  EXPECT_TRUE(k->cm_khr);
  EXPECT_TRUE(Has(k->reason, "VK_KHR_cooperative_matrix")) << k->reason;
  SelectOptions nv;
  nv.cm_nv = true;
  auto c = SelectLinear(s, p, nv);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->VariantName(s), "linear_dq8ca_q8csw_dot_gemm");
  EXPECT_TRUE(Has(c->reason, "NVIDIA lists no int8 types for VK_NV_cooperative_matrix")) << c->reason;
  SelectOptions o = nv;
  o.force_accum = Accum::CoopMat;
  auto forced = SelectLinear(s, p, o);
  ASSERT_FALSE(forced.ok());
  EXPECT_TRUE(Has(forced.error().message, "nv_coopmat_int8")) << forced.error().message;
  TargetProfile quirky = p;
  quirky.quirks.push_back("nv_coopmat_int8");
  auto q = SelectLinear(s, quirky, nv);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->VariantName(s), "linear_dq8ca_q8csw_cmnv_gemm");
  EXPECT_FALSE(q->cm_khr);
  // fp16 (opt-in) on either extension.
  SelectOptions f16;
  f16.allow_fp16 = true;
  const LinearShape fs = Shape(ir::Scheme::Float, ir::Scheme::Q4GSW, 32);
  auto cf = SelectLinear(fs, p, f16);
  ASSERT_TRUE(cf.ok());
  EXPECT_EQ(cf->VariantName(fs), "linear_q4gsw_cmf16_gemm");
  f16.cm_nv = true;
  auto cn = SelectLinear(fs, p, f16);
  ASSERT_TRUE(cn.ok());
  EXPECT_EQ(cn->VariantName(fs), "linear_q4gsw_cmf16nv_gemm");
}

TEST(CoopMatSelect, HopperPicksItForTheIntPath) {
  const TargetProfile p = Load("nvidia-hopper");
  struct Case {
    ir::Scheme act, w;
    int64_t gs;
    bool x_int8, out_q8;
    const char* want;
  };
  const Case cases[] = {
      {ir::Scheme::Q8TA, ir::Scheme::Q8CSW, 0, false, false, "linear_q8ta_q8csw_cm_gemm"},
      {ir::Scheme::DQ8CA, ir::Scheme::Q8CSW, 0, false, false, "linear_dq8ca_q8csw_cm_gemm"},
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 32, false, false, "linear_dq8ca_q4gsw_cm_gemm"},
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 128, false, true, "linear_dq8ca_q4gsw_q8to_cm_gemm"},
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GAW, 128, false, false, "linear_dq8ca_q4gaw_cm_gemm"},
      {ir::Scheme::Q8TA, ir::Scheme::Q4GAW, 256, false, false, "linear_q8ta_q4gaw_cm_gemm"},
      {ir::Scheme::Q8TA, ir::Scheme::Q8CSW, 0, true, true, "linear_i8_q8csw_q8to_cm_gemm"},
      {ir::Scheme::DQ8CA, ir::Scheme::Q8GSW, 32, false, false, "linear_dq8ca_q8gsw_cm_gemm"},   // GGUF Q8_0
      {ir::Scheme::DQ8CA, ir::Scheme::Q8GSW, 128, false, false, "linear_dq8ca_q8gsw_cm_gemm"},
  };
  for (const Case& c : cases) {
    LinearShape s = Shape(c.act, c.w, c.gs);
    s.x_int8 = c.x_int8;
    s.out_q8 = c.out_q8;
    // Every group size the kernel takes (multiples of 32 up to 256) selects the cooperative
    // matrix by default (groups of 32 since issue 15's per-group fold).
    auto dflt = SelectLinear(s, p, {});
    ASSERT_TRUE(dflt.ok()) << dflt.error().message;
    EXPECT_EQ(dflt->VariantName(s), c.want) << dflt->reason;
    SelectOptions forced;
    forced.force_accum = Accum::CoopMat;
    auto ch = SelectLinear(s, p, forced);
    ASSERT_TRUE(ch.ok()) << ch.error().message;
    EXPECT_EQ(ch->VariantName(s), c.want) << ch->reason;
    EXPECT_EQ(ch->accum, Accum::CoopMat);
    EXPECT_TRUE(ch->cm_int8);
    EXPECT_TRUE(Has(ch->reason, "cooperative matrix on 'nvidia-hopper'")) << ch->reason;
    // Grouped weights: 8x2 subgroups of 2x2 tiles from M = 256 on (256x64), 4x4 below (128x128);
    // int8 weights: 2x4 of 4x2 (128x128).
    const bool grouped = c.w != ir::Scheme::Q8CSW;
    const bool tall = grouped && s.m >= 256 && c.gs < 256;  // groups of 256: 8x2's chunk slots do not fit
    EXPECT_EQ(ch->CmBlockM(), tall ? 256u : 128u) << c.want;
    EXPECT_EQ(ch->CmBlockN(), tall ? 64u : 128u) << c.want;
    EXPECT_TRUE(ch->cm_pin_subgroup);
    EXPECT_EQ(ch->cm_wm * 10 + ch->cm_tm, tall ? 82u : grouped ? 42u : 24u) << c.want;
    EXPECT_LE(ch->SharedMemoryBytes(), p.max_compute_shared_memory_size) << c.want;
    EXPECT_LE(ch->Invocations(), p.max_compute_work_group_invocations);
    if (c.w != ir::Scheme::Q8CSW) {
      EXPECT_GE(ch->cm_nslot, uint32_t(c.gs / 32)) << c.want;
    }
  }
  // Small prefill: shorter blocks.
  SelectOptions gemm;
  gemm.force_algo = Algo::Gemm;  // M=17 is below hopper's tuned GEMV threshold
  auto small = SelectLinear(Shape(ir::Scheme::Q8TA, ir::Scheme::Q8CSW, 0, 17, 64, 100), p, gemm);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->accum, Accum::CoopMat);
  EXPECT_EQ(small->CmBlockM(), 32u);
  // Decode stays on the GEMV.
  auto decode = SelectLinear(Shape(ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 32, 7), p, {});
  ASSERT_TRUE(decode.ok());
  EXPECT_EQ(decode->VariantName(Shape(ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 32, 7)), "linear_dq8ca_q4gsw_dot_gemv");
}

// Grouped weights on the int8 path take 64x64 blocks (16 subgroups of one tile) where their
// default blocks (256x64 from M = 256 on, else 128x128) would give fewer than 96 workgroups
// (measured on the H100 with the 1b example's shapes); int8 weights and an explicit --coopmat-tile
// keep their blocks.
TEST(CoopMatSelect, SmallGridsTakeSmallBlocksForGroupedWeights) {
  const TargetProfile p = Load("nvidia-hopper");
  struct Case {
    ir::Scheme w;
    int64_t m, k, n;
    uint32_t bm, bn;
  } cases[] = {
      {ir::Scheme::Q4GSW, 128, 2048, 512, 64, 64},     // 4 blocks of 128x128
      {ir::Scheme::Q4GSW, 512, 2048, 2048, 64, 64},    // 64 of 256x64
      {ir::Scheme::Q4GSW, 512, 8192, 2048, 64, 64},    // 64
      {ir::Scheme::Q4GSW, 128, 2048, 8192, 64, 64},    // 64 of 128x128
      {ir::Scheme::Q4GSW, 512, 2048, 8192, 256, 64},   // 256: the tall block
      {ir::Scheme::Q4GSW, 512, 4096, 14336, 256, 64},  // 448
      {ir::Scheme::Q4GSW, 256, 4096, 14336, 256, 64},  // 224
      {ir::Scheme::Q4GSW, 255, 4096, 14336, 128, 128}, // below 256 rows: 128x128 (224 blocks)
      {ir::Scheme::Q4GSW, 128, 4096, 14336, 128, 128}, // 112: the large block (measured)
      {ir::Scheme::Q4GSW, 128, 14336, 4096, 64, 64},   // 32
      {ir::Scheme::Q4GSW, 512, 14336, 4096, 256, 64},  // 128
      {ir::Scheme::Q8GSW, 128, 2048, 512, 64, 64},
      // int8 weights (q8csw): up to 32 rows 32x32 blocks where the default gives fewer than 128,
      // then 64x64 and 32x32 while fewer than 96.
      {ir::Scheme::Q8CSW, 512, 2048, 8192, 128, 128},  // 256 blocks: 128x128 kept
      {ir::Scheme::Q8CSW, 128, 2048, 512, 32, 32},     // 4 of 128x128, 16 of 64x64
      {ir::Scheme::Q8CSW, 16, 4096, 14336, 32, 32},    // 112 blocks of 32x128
      {ir::Scheme::Q8CSW, 16, 8192, 28672, 32, 128},   // 224: the default kept
      {ir::Scheme::Q8CSW, 32, 14336, 4096, 32, 32},
      {ir::Scheme::Q8CSW, 64, 4096, 14336, 64, 128},   // 112 blocks of 64x128 (the default at 64 rows)
      {ir::Scheme::Q8CSW, 64, 14336, 4096, 32, 32},    // 32 of 64x128, 64 of 64x64
      {ir::Scheme::Q8CSW, 128, 14336, 4096, 64, 64},   // 128 of 64x64
      {ir::Scheme::Q8CSW, 128, 8192, 2048, 32, 32},
      // Up to 32 rows, layers of at least 256 columns blocks of 32 take 32x32 blocks.
      {ir::Scheme::Q4GSW, 16, 4096, 14336, 16, 64},    // K >= 4096 up to 16 rows: 16x64 (K slices)
      {ir::Scheme::Q4GSW, 17, 4096, 14336, 32, 32},
      {ir::Scheme::Q4GSW, 16, 2048, 8192, 32, 32},     // K < 4096
      {ir::Scheme::Q4GSW, 32, 2048, 8192, 32, 32},
      {ir::Scheme::Q4GSW, 33, 2048, 8192, 64, 64},     // 33 to 64 rows: 64x64 blocks
      {ir::Scheme::Q4GSW, 64, 4096, 14336, 64, 64},
      {ir::Scheme::Q4GSW, 65, 4096, 14336, 128, 128},  // 65 rows: 112 blocks of 128x128
      {ir::Scheme::Q4GSW, 65, 2048, 8192, 64, 64},     // 65 rows: 128x128 gives 64 blocks, then 64x64
      // Up to 16 rows (one matrix tile), narrower layers take 16x64 blocks (and K slices).
      {ir::Scheme::Q4GSW, 16, 14336, 4096, 16, 64},    // 128 column blocks of 32
      {ir::Scheme::Q4GSW, 12, 8192, 2048, 16, 64},
      {ir::Scheme::Q4GSW, 9, 2048, 2048, 16, 64},
      {ir::Scheme::Q8GSW, 16, 2048, 2048, 16, 64},
      {ir::Scheme::Q4GSW, 17, 14336, 4096, 64, 64},    // 17 rows: two tiles, 64x64 blocks as before
      {ir::Scheme::Q4GSW, 16, 8192, 28672, 16, 64},    // wide, but K >= 8192: 16x64 too
      {ir::Scheme::Q4GSW, 17, 8192, 28672, 32, 32},
  };
  for (const Case& c : cases) {
    const LinearShape s = Shape(ir::Scheme::DQ8CA, c.w, c.w == ir::Scheme::Q8CSW ? 0 : 32, c.m, c.k, c.n);
    auto ch = SelectLinear(s, p, {});
    ASSERT_TRUE(ch.ok()) << ch.error().message;
    ASSERT_EQ(ch->accum, Accum::CoopMat) << ch->reason;
    const std::string what = std::to_string(c.m) + "x" + std::to_string(c.k) + "x" + std::to_string(c.n) + ": " + ch->reason;
    EXPECT_EQ(ch->CmBlockM(), c.bm) << what;
    EXPECT_EQ(ch->CmBlockN(), c.bn) << what;
    EXPECT_TRUE(Has(ch->reason, "block " + std::to_string(c.bm) + "x" + std::to_string(c.bn))) << ch->reason;
  }
  SelectOptions tile;
  tile.cm_wm = tile.cm_wn = 4;
  tile.cm_tm = tile.cm_tn = 2;
  auto forced = SelectLinear(Shape(ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 32, 128, 2048, 512), p, tile);
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ(forced->CmBlockM(), 128u);
}

// Grouped weights on the int8 path whose blocks (16x64 up to 16 rows, else 64x64) still give fewer
// than 96 workgroups split K into slices of whole steps and groups: 16x64 blocks into 8 slices
// (where they are at least 96, wide layers of K >= 4096, slices of about 2048 K values), larger
// ones up to 256 workgroups and 8 slices; above 64 rows only layers of K >= 8192 on 64x64
// blocks, up to 256 workgroups; --coopmat-split 1 keeps one slice, N forces N (refused for int8
// weights).
TEST(CoopMatSelect, SplitKForSmallGrids) {
  const TargetProfile p = Load("nvidia-hopper");
  struct Case {
    int64_t gs, m, k, n;
    uint32_t forced, ksplit, kslice;
  } cases[] = {
      {32, 16, 14336, 4096, 0, 8, 1792},   // 64 blocks of 16x64: 8 slices
      {32, 17, 14336, 4096, 0, 4, 3584},   // 64 blocks of 64x64: 4 slices
      {32, 64, 14336, 4096, 0, 4, 3584},
      {32, 128, 14336, 4096, 0, 2, 7168},  // above 64 rows, K >= 8192: up to 256 workgroups (128 blocks)
      {32, 65, 8192, 2048, 0, 4, 2048},    // 64 blocks
      {32, 256, 8192, 2048, 0, 2, 4096},   // 128
      {32, 256, 14336, 4096, 0, 1, 0},     // 256
      {32, 512, 14336, 4096, 0, 1, 0},     // 128 blocks of 256x64: one slice
      {32, 1024, 8192, 2048, 0, 1, 0},
      {32, 128, 4096, 4096, 0, 1, 0},      // K 4096 above 64 rows: one slice
      {32, 512, 8192, 2048, 0, 1, 0},      // 256
      {32, 16, 4096, 14336, 0, 2, 2048},   // 224 blocks of 16x64: slices of 2048
      {32, 16, 8192, 28672, 0, 4, 2048},   // 448
      {32, 17, 4096, 14336, 0, 1, 0},      // 448 of 32x32
      {32, 16, 4096, 4096, 0, 8, 512},
      {128, 9, 14336, 4096, 0, 8, 1792},   // groups of 128 too
      {128, 16, 2048, 512, 0, 8, 256},     // 8 blocks: at most 8 slices
      {256, 16, 1000 + 24, 512, 0, 4, 256},  // K 1024 in groups of 256: 4 slices of one group
      {96, 16, 960, 512, 0, 5, 192},       // whole steps (64 at 16 rows) and groups (96): slices of 192
      {96, 17, 960, 512, 0, 3, 384},       // 17 rows: steps of 128, slices of 384
      {32, 16, 14336, 4096, 1, 1, 0},      // --coopmat-split 1
      {32, 16, 14336, 4096, 3, 3, 4800},   // forced: 3 slices of 75 steps of 64
      {32, 16, 256, 4096, 8, 4, 64},       // no more slices than steps
      {32, 17, 256, 4096, 8, 2, 128},
      {32, 65, 2048, 512, 0, 1, 0},        // K < 8192 above 64 rows: one slice (prefill overlaps layers)
      {32, 512, 2048, 512, 0, 1, 0},
      {32, 512, 2048, 512, 2, 2, 1024},    // unless forced
      {32, 16, 2048, 8192, 0, 1, 0},       // 32x32 blocks: 256 of them
  };
  for (const Case& c : cases) {
    const LinearShape s = Shape(ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, c.gs, c.m, c.k, c.n);
    SelectOptions o;
    o.force_accum = Accum::CoopMat;
    o.force_algo = Algo::Gemm;
    o.cm_ksplit = c.forced;
    auto ch = SelectLinear(s, p, o);
    ASSERT_TRUE(ch.ok()) << ch.error().message;
    const std::string what = std::to_string(c.m) + "x" + std::to_string(c.k) + "x" + std::to_string(c.n) + " g" +
                             std::to_string(c.gs) + " forced " + std::to_string(c.forced);
    EXPECT_EQ(ch->cm_ksplit, c.ksplit) << what;
    EXPECT_EQ(ch->cm_kslice, c.kslice) << what;
    EXPECT_EQ(ch->VariantName(s).find("_splitk") != std::string::npos, c.ksplit > 1) << what;
    if (c.ksplit > 1) {
      EXPECT_EQ(ch->cm_kslice % (ch->cm_bkw * 4), 0u) << what;
      EXPECT_EQ(ch->cm_bkw, c.m <= 16 ? 16u : 32u) << what;  // 16x64 blocks step 64 K values
      EXPECT_EQ(ch->cm_kslice % uint32_t(c.gs), 0u) << what;
      EXPECT_LT(uint64_t(ch->cm_kslice) * (ch->cm_ksplit - 1), uint64_t(c.k)) << what;  // no empty slice
      EXPECT_GE(uint64_t(ch->cm_kslice) * ch->cm_ksplit, uint64_t(c.k)) << what;
    }
  }
  SelectOptions o;
  o.force_accum = Accum::CoopMat;
  o.cm_ksplit = 2;
  auto q8 = SelectLinear(Shape(ir::Scheme::DQ8CA, ir::Scheme::Q8CSW, 0, 16, 4096, 512), p, o);
  ASSERT_FALSE(q8.ok());
  EXPECT_TRUE(Has(q8.error().message, "split K needs grouped weights")) << q8.error().message;
}

// nvidia-hopper's coopmat_gemv_max_m (8, measured on the H100, bench/RESULTS.md 2026-12-07 session
// 20): the int8 cooperative matrix takes over from the GEMV at M = 9 for wide layers, at M = 17
// for layers of 16 to 63 column blocks; small layers, int4 weights and --no-coopmat keep the
// ordinary threshold (64).
TEST(CoopMatSelect, GemvThresholdAgainstTheCooperativeMatrix) {
  const TargetProfile p = Load("nvidia-hopper");
  ASSERT_EQ(p.coopmat_gemv_max_m, 8u);
  struct Case {
    ir::Scheme w;
    int64_t m, k, n;
    bool no_coopmat;
    const char* want;
  };
  const Case cases[] = {
      {ir::Scheme::Q8CSW, 8, 4096, 14336, false, "linear_q8ta_q8csw_dot_gemv"},
      {ir::Scheme::Q8CSW, 9, 4096, 14336, false, "linear_q8ta_q8csw_cm_gemm"},
      {ir::Scheme::Q8CSW, 8, 2048, 128256, false, "linear_q8ta_q8csw_dot_gemv"},  // a tied lm_head
      {ir::Scheme::Q8CSW, 9, 2048, 128256, false, "linear_q8ta_q8csw_cm_gemm"},
      {ir::Scheme::Q8CSW, 16, 14336, 4096, false, "linear_q8ta_q8csw_dot_gemv"},   // 32 blocks: 16
      {ir::Scheme::Q8CSW, 17, 14336, 4096, false, "linear_q8ta_q8csw_cm_gemm"},
      {ir::Scheme::Q8CSW, 16, 8192, 2048, false, "linear_q8ta_q8csw_dot_gemv"},    // 16 blocks
      {ir::Scheme::Q8CSW, 17, 8192, 2048, false, "linear_q8ta_q8csw_cm_gemm"},
      {ir::Scheme::Q8CSW, 64, 256, 1024, false, "linear_q8ta_q8csw_dot_gemv"},     // 8 blocks: 64
      {ir::Scheme::Q8CSW, 65, 256, 1024, false, "linear_q8ta_q8csw_cm_gemm"},
      {ir::Scheme::Q8CSW, 9, 4096, 14336, true, "linear_q8ta_q8csw_dot_gemv"},     // --no-coopmat
      {ir::Scheme::Q4GSW, 7, 4096, 14336, false, "linear_q8ta_q4gsw_dot_gemv"},    // int4: not this threshold
  };
  for (const Case& c : cases) {
    const LinearShape s = Shape(ir::Scheme::Q8TA, c.w, 32, c.m, c.k, c.n);
    SelectOptions o;
    o.no_coopmat = c.no_coopmat;
    auto ch = SelectLinear(s, p, o);
    ASSERT_TRUE(ch.ok()) << ch.error().message;
    EXPECT_EQ(ch->VariantName(s), c.want) << "M=" << c.m << " N=" << c.n << ": " << ch->reason;
  }
}

// Grouped weights on the int8 path (groups the cooperative matrix takes, >= 64) and float
// activations with --allow-fp16: the thresholds measured on the H100 (select.cc): grouped int8
// cooperative matrix from M = 9 (from 17 where the layer has fewer than 64 column blocks of 128),
// fp16 from M = 5 (int4) / 9 (int8), wide layers only.
TEST(CoopMatSelect, GemvThresholdGroupedAndFp16) {
  const TargetProfile p = Load("nvidia-hopper");
  struct Case {
    ir::Scheme act, w;
    int64_t gs, m, k, n;
    bool fp16;
    const char* want;
  };
  const Case cases[] = {
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 128, 7, 4096, 14336, false, "linear_dq8ca_q4gsw_dot_gemv"},
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 128, 8, 4096, 14336, false, "linear_dq8ca_q4gsw_cm_gemm_splitk"},  // wide, K <= 4096
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 128, 8, 8192, 28672, false, "linear_dq8ca_q4gsw_dot_gemv"},  // K 8192
      {ir::Scheme::DQ8CA, ir::Scheme::Q8GSW, 128, 8, 4096, 14336, false, "linear_dq8ca_q8gsw_dot_gemv"},  // int8 weights: g32 only
      {ir::Scheme::DQ8CA, ir::Scheme::Q8GSW, 32, 8, 4096, 14336, false, "linear_dq8ca_q8gsw_cm_gemm_splitk"},
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 128, 9, 4096, 14336, false, "linear_dq8ca_q4gsw_cm_gemm_splitk"},
      // Groups of 32 too since the per-group fold got cheap (H100: 74.7 us against the GEMV's 131.5).
      // Wide layers of K <= 4096: the cooperative matrix from M = 8 (4096x14336: 48.4 us against
      // 52.8), but int4 in groups of 32 keeps the GEMV at M = 8 since it runs eight rows as two
      // row blocks of 4 (39.23 against 42.82; session 24); other groups still take it at 8.
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 32, 7, 4096, 14336, false, "linear_dq8ca_q4gsw_dot_gemv"},
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 32, 8, 4096, 14336, false, "linear_dq8ca_q4gsw_dot_gemv"},
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 32, 8, 2048, 8192, false, "linear_dq8ca_q4gsw_dot_gemv"},
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 32, 9, 2048, 8192, false, "linear_dq8ca_q4gsw_cm_gemm"},
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 64, 8, 2048, 8192, false, "linear_dq8ca_q4gsw_cm_gemm"},
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GAW, 32, 8, 4096, 14336, false, "linear_dq8ca_q4gaw_dot_gemv"},
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 32, 8, 8192, 28672, false, "linear_dq8ca_q4gsw_dot_gemv"},  // K 8192
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 32, 8, 4096, 4096, false, "linear_dq8ca_q4gsw_dot_gemv"},   // 128 blocks of 32
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 32, 16, 4096, 14336, false, "linear_dq8ca_q4gsw_cm_gemm_splitk"},
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 32, 17, 4096, 14336, false, "linear_dq8ca_q4gsw_cm_gemm"},
      // Narrower layers too since small grids split K (H100 14336x4096 g32 M = 16: 71.3 us against
      // the GEMV's 93.6); below 16 column blocks of 128 the ordinary threshold (64).
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 128, 16, 4096, 2048, false, "linear_dq8ca_q4gsw_cm_gemm_splitk"},
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 32, 8, 14336, 4096, false, "linear_dq8ca_q4gsw_dot_gemv"},
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 32, 9, 14336, 4096, false, "linear_dq8ca_q4gsw_cm_gemm_splitk"},
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 32, 16, 14336, 4096, false, "linear_dq8ca_q4gsw_cm_gemm_splitk"},
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 32, 32, 8192, 2048, false, "linear_dq8ca_q4gsw_cm_gemm_splitk"},
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 32, 8, 8192, 2048, false, "linear_dq8ca_q4gsw_dot_gemv"},  // (1b: GEMV won)
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 32, 9, 8192, 2048, false, "linear_dq8ca_q4gsw_cm_gemm_splitk"},
      {ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 32, 64, 2048, 1920, false, "linear_dq8ca_q4gsw_dot_gemv"},  // 15 blocks
      {ir::Scheme::Float, ir::Scheme::Q4GSW, 32, 4, 4096, 14336, true, "linear_q4gsw_dequant_gemv"},
      {ir::Scheme::Float, ir::Scheme::Q4GSW, 32, 5, 4096, 14336, true, "linear_q4gsw_cmf16_gemm"},
      {ir::Scheme::Float, ir::Scheme::Q4GSW, 32, 8, 4096, 14336, false, "linear_q4gsw_dequant_gemv"},  // no fp16
      {ir::Scheme::Float, ir::Scheme::Q8CSW, 0, 7, 4096, 14336, true, "linear_q8csw_dequant_gemv"},
      {ir::Scheme::Float, ir::Scheme::Q8CSW, 0, 8, 4096, 14336, true, "linear_q8csw_cmf16_gemm"},  // 32x32 blocks
      {ir::Scheme::Float, ir::Scheme::Q8CSW, 0, 8, 4096, 2048, true, "linear_q8csw_dequant_gemv"},  // 16 blocks of 128
      // Narrower layers of K >= 8192 whose batches of up to 64 rows split K: the fp16 thresholds
      // too (H100 8192x2048 float x q4gsw M = 8: 26.1 us against the GEMV's 63.9; M = 64: 36.1
      // against 339.4); from 65 rows the GEMM regime (its slices: SplitKForFp16SmallBatches).
      {ir::Scheme::Float, ir::Scheme::Q4GSW, 32, 4, 8192, 2048, true, "linear_q4gsw_dequant_gemv"},
      {ir::Scheme::Float, ir::Scheme::Q4GSW, 32, 5, 8192, 2048, true, "linear_q4gsw_cmf16_gemm_splitk"},
      {ir::Scheme::Float, ir::Scheme::Q4GSW, 32, 16, 8192, 2048, true, "linear_q4gsw_cmf16_gemm_splitk"},
      {ir::Scheme::Float, ir::Scheme::Q4GSW, 32, 64, 8192, 2048, true, "linear_q4gsw_cmf16_gemm_splitk"},
      {ir::Scheme::Float, ir::Scheme::Q4GSW, 32, 65, 8192, 2048, true, "linear_q4gsw_cmf16_gemm_splitk"},
      {ir::Scheme::Float, ir::Scheme::Q4GSW, 32, 8, 8192, 2048, false, "linear_q4gsw_dequant_gemv"},  // no fp16
      {ir::Scheme::Float, ir::Scheme::Q8CSW, 0, 7, 14336, 4096, true, "linear_q8csw_dequant_gemv"},
      {ir::Scheme::Float, ir::Scheme::Q8CSW, 0, 8, 14336, 4096, true, "linear_q8csw_cmf16_gemm_splitk"},
  };
  for (const Case& c : cases) {
    const LinearShape s = Shape(c.act, c.w, c.gs, c.m, c.k, c.n);
    SelectOptions o;
    o.allow_fp16 = c.fp16;
    auto ch = SelectLinear(s, p, o);
    ASSERT_TRUE(ch.ok()) << ch.error().message;
    EXPECT_EQ(ch->VariantName(s), c.want) << "M=" << c.m << " N=" << c.n << ": " << ch->reason;
    // Eight rows of an int4 int-dot GEMV (groups of a multiple of 32): two row blocks of 4.
    const bool blocks = ch->algo == Algo::Gemv && ch->accum == Accum::IntDot && c.m == 8 && s.Int4() && c.gs % 32 == 0;
    EXPECT_EQ(ch->row_blocks, blocks ? 2u : 1u) << "M=" << c.m << " N=" << c.n << ": " << ch->reason;
  }
}

// fp16 operands on layers of K >= 8192 split K until 65536 invocations (512 workgroups of 32x32
// blocks up to 16 rows, 128 of 512 invocations from 17 rows; at most 8 slices of whole 32-value
// steps); shorter K does not.
TEST(CoopMatSelect, SplitKForFp16SmallBatches) {
  const TargetProfile p = Load("nvidia-hopper");
  struct Case {
    ir::Scheme w;
    int64_t m, k, n;
    uint32_t ksplit, kslice;
  } cases[] = {
      {ir::Scheme::Q4GSW, 16, 14336, 4096, 4, 3584},  // 128 blocks
      {ir::Scheme::Q8CSW, 8, 14336, 4096, 4, 3584},
      {ir::Scheme::Q4GSW, 5, 8192, 2048, 8, 1024},    // 64 blocks
      {ir::Scheme::Q4GMW, 9, 8192, 1000, 8, 1024},    // 32 blocks: at most 8 slices
      {ir::Scheme::Q4GSW, 16, 8192, 28672, 1, 0},     // 896 blocks
      {ir::Scheme::Q4GSW, 16, 4096, 14336, 1, 0},     // K 4096 (slices lost on this one)
      {ir::Scheme::Q8CSW, 16, 4096, 4096, 1, 0},      // K 4096: not measured
      {ir::Scheme::Q4GSW, 17, 14336, 4096, 4, 3584},  // 32 blocks of 64x128, 512 invocations
      {ir::Scheme::Q8CSW, 64, 14336, 4096, 4, 3584},  // 32 of 128x128
      {ir::Scheme::Q4GSW, 64, 8192, 2048, 8, 1024},   // 16
      {ir::Scheme::Q4GSW, 32, 8192, 28672, 1, 0},     // 224
      {ir::Scheme::Q4GSW, 65, 8192, 2048, 8, 1024},   // 16 of 128x128 above 64 rows too
      {ir::Scheme::Q4GSW, 256, 8192, 2048, 4, 2048},  // 32
      {ir::Scheme::Q4GSW, 256, 14336, 4096, 2, 7168}, // 64
      {ir::Scheme::Q4GSW, 128, 4096, 4096, 1, 0},     // K 4096
      {ir::Scheme::Q4GSW, 512, 8192, 2048, 2, 4096},  // 64
      {ir::Scheme::Q8CSW, 512, 14336, 4096, 2, 7168}, // 64 of 256x128
      {ir::Scheme::Q4GSW, 1024, 8192, 2048, 1, 0},    // 128
  };
  for (const Case& c : cases) {
    const LinearShape s = Shape(ir::Scheme::Float, c.w, c.w == ir::Scheme::Q8CSW ? 0 : 32, c.m, c.k, c.n);
    SelectOptions o;
    o.allow_fp16 = true;
    o.force_accum = Accum::CoopMat;
    o.force_algo = Algo::Gemm;
    auto ch = SelectLinear(s, p, o);
    ASSERT_TRUE(ch.ok()) << ch.error().message;
    const std::string what = std::to_string(c.m) + "x" + std::to_string(c.k) + "x" + std::to_string(c.n);
    EXPECT_FALSE(ch->cm_int8) << what;
    EXPECT_EQ(ch->cm_ksplit, c.ksplit) << what;
    EXPECT_EQ(ch->cm_kslice, c.kslice) << what;
    if (c.m <= 16) {
      EXPECT_EQ(ch->CmBlockM() * 1000 + ch->CmBlockN(), 32032u) << what;
    }
  }
  // Forced slices on fp16 operands: any weights; the int8 path's q8csw (int32 sums) is refused.
  SelectOptions o;
  o.allow_fp16 = true;
  o.force_accum = Accum::CoopMat;
  o.cm_ksplit = 3;
  auto f = SelectLinear(Shape(ir::Scheme::Float, ir::Scheme::Q8CSW, 0, 64, 4096, 512), p, o);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->cm_ksplit, 3u);
  auto q8 = SelectLinear(Shape(ir::Scheme::DQ8CA, ir::Scheme::Q8CSW, 0, 64, 4096, 512), p, o);
  ASSERT_FALSE(q8.ok());
  EXPECT_TRUE(Has(q8.error().message, "or fp16 operands")) << q8.error().message;
}

TEST(CoopMatSelect, WhyNot) {
  const TargetProfile hopper = Load("nvidia-hopper");
  // int4 groups that are not a multiple of 32 (or too long) keep the tiled int-dot GEMM.
  for (int64_t gs : {8, 40, 512}) {
    const LinearShape s = Shape(ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, gs, 512, 4096, 1024);
    auto c = SelectLinear(s, hopper, {});
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->VariantName(s), "linear_dq8ca_q4gsw_dot_gemm") << gs;
    EXPECT_TRUE(Has(c->reason, "no cooperative matrix: int4 group size")) << c->reason;
  }
  // Float activations: fp16 operands only on request.
  const LinearShape f = Shape(ir::Scheme::Float, ir::Scheme::Q4GSW, 32);
  auto dq = SelectLinear(f, hopper, {});
  ASSERT_TRUE(dq.ok());
  EXPECT_EQ(dq->VariantName(f), "linear_q4gsw_dequant_gemm");
  EXPECT_TRUE(Has(dq->reason, "opt-in (--allow-fp16)")) << dq->reason;
  SelectOptions fp16;
  fp16.allow_fp16 = true;
  auto cmf = SelectLinear(f, hopper, fp16);
  ASSERT_TRUE(cmf.ok());
  EXPECT_EQ(cmf->VariantName(f), "linear_q4gsw_cmf16_gemm") << cmf->reason;
  EXPECT_FALSE(cmf->cm_int8);
  EXPECT_EQ(cmf->cm_k, 16u);
  EXPECT_TRUE(Has(cmf->reason, "fp16 operands")) << cmf->reason;
  // Its blocks: int4 weights 4x4 subgroups of 2x2 tiles in two operand buffers; int8 weights from
  // M = 256 on 4x4 of 4x2 (256x128) in one buffer, below that as int4.
  EXPECT_EQ(cmf->cm_wm * 1000 + cmf->cm_wn * 100 + cmf->cm_tm * 10 + cmf->cm_tn, 4422u);
  EXPECT_EQ(cmf->cm_stages, 2u);
  // Up to 16 rows (one matrix tile) both take 32x32 blocks (2x2 subgroups of one tile).
  for (const int64_t m : {8, 16, 17, 128, 255, 256, 512}) {
    const LinearShape f8 = Shape(ir::Scheme::Float, ir::Scheme::Q8CSW, 0, m);
    auto c8 = SelectLinear(f8, hopper, fp16);
    ASSERT_TRUE(c8.ok());
    EXPECT_EQ(c8->VariantName(f8), "linear_q8csw_cmf16_gemm") << m;
    EXPECT_EQ(c8->CmBlockM(), m >= 256 ? 256u : m <= 16 ? 32u : m <= 32 ? 64u : 128u) << m;  // 17: 1 tile per subgroup
    EXPECT_EQ(c8->CmBlockN(), m <= 16 ? 32u : 128u) << m;
    EXPECT_EQ(c8->cm_stages, m >= 256 ? 1u : 2u) << m;
    EXPECT_LE(c8->SharedMemoryBytes(), hopper.max_compute_shared_memory_size) << m;
  }
  // Opting out, and the GEMM of a convolution.
  SelectOptions no;
  no.no_coopmat = true;
  const LinearShape q = Shape(ir::Scheme::Q8TA, ir::Scheme::Q8CSW, 0);
  auto n = SelectLinear(q, hopper, no);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->VariantName(q), "linear_q8ta_q8csw_dot_gemm");
  EXPECT_TRUE(Has(n->reason, "disabled by option")) << n->reason;
  LinearShape conv = q;
  conv.conv = true;
  EXPECT_EQ(SelectLinear(conv, hopper, {})->accum, Accum::IntDot);
  // Where the profile says no: the tiled int-dot GEMM, and the reason names why.
  auto expect_int_dot = [&](const TargetProfile& t, const std::string& why) {
    auto c = SelectLinear(q, t, {});
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->accum, Accum::IntDot);
    EXPECT_TRUE(Has(c->reason, why)) << c->reason;
  };
  TargetProfile quirky = hopper;  // the quirk turns it off
  quirky.quirks.push_back("coopmat_unreliable");
  expect_int_dot(quirky, "coopmat_unreliable");
  // No KHR extension: NV, which has no int8 types on NVIDIA; neither: none.
  TargetProfile nv_only = hopper;
  std::erase(nv_only.extensions, std::string("VK_KHR_cooperative_matrix"));
  expect_int_dot(nv_only, "NVIDIA lists no int8 types");
  TargetProfile none = nv_only;
  std::erase(none.extensions, std::string("VK_NV_cooperative_matrix"));
  expect_int_dot(none, "lacks VK_KHR_cooperative_matrix and VK_NV_cooperative_matrix");
  // Every other built-in: never for int8 (Ada lists only fp16 shapes, RDNA3 int8 only 16x16x16),
  // so fp16 with the opt-in on those two.
  for (const char* name : {"lavapipe", "android-baseline-2022", "android-16", "adreno-7xx", "mali-valhall",
                           "nvidia-ada", "amd-rdna3", "intel-arc", "apple-moltenvk"}) {
    const TargetProfile p = Load(name);
    for (const LinearShape& s : {q, Shape(ir::Scheme::DQ8CA, ir::Scheme::Q4GSW, 32)}) {
      auto c = SelectLinear(s, p, {});
      ASSERT_TRUE(c.ok()) << name;
      EXPECT_NE(c->accum, Accum::CoopMat) << name;
      EXPECT_TRUE(Has(c->reason, "no cooperative matrix")) << name << ": " << c->reason;
    }
    auto c = SelectLinear(f, p, fp16);
    ASSERT_TRUE(c.ok());
    const bool fp16_cm = std::string(name) == "nvidia-ada" || std::string(name) == "amd-rdna3";
    EXPECT_EQ(c->accum == Accum::CoopMat, fp16_cm) << name << ": " << c->reason;
  }
}

TEST(CoopMatSelect, Forcing) {
  SelectOptions o;
  o.force_accum = Accum::CoopMat;
  const LinearShape s = Shape(ir::Scheme::Q8TA, ir::Scheme::Q8CSW, 0, 3, 36, 13);
  auto lvp = SelectLinear(s, Load("lavapipe"), o);
  ASSERT_FALSE(lvp.ok());
  EXPECT_TRUE(Has(lvp.error().message, "VK_NV_cooperative_matrix")) << lvp.error().message;
  auto h = SelectLinear(s, Load("nvidia-hopper"), o);  // forced even at decode sizes
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->VariantName(s), "linear_q8ta_q8csw_cm_gemm");
  EXPECT_TRUE(Has(h->reason, "forced")) << h->reason;
  const LinearShape f = Shape(ir::Scheme::Float, ir::Scheme::Q8CSW, 0, 3, 36, 13);
  auto hf = SelectLinear(f, Load("nvidia-hopper"), o);  // forcing implies the fp16 opt-in
  ASSERT_TRUE(hf.ok());
  EXPECT_EQ(hf->VariantName(f), "linear_q8csw_cmf16_gemm");
  // Tile overrides, shrunk to the target's shared memory when too large.
  o.cm_wm = 2;
  o.cm_wn = 2;
  o.cm_tm = 8;
  o.cm_tn = 8;
  o.cm_bkw = 32;
  auto big = SelectLinear(Shape(ir::Scheme::Q8TA, ir::Scheme::Q8CSW, 0), Load("nvidia-hopper"), o);
  ASSERT_TRUE(big.ok());
  EXPECT_LE(big->SharedMemoryBytes(), 49152u);
  EXPECT_EQ(big->cm_bkw, 32u);
  o.cm_bkw = 6;  // not a multiple of the 8 words of one 16x16x32 K range
  EXPECT_FALSE(SelectLinear(Shape(ir::Scheme::Q8TA, ir::Scheme::Q8CSW, 0), Load("nvidia-hopper"), o).ok());
}

// Every shader variant compiles, passes SPIRV-Tools validation (as `spirv-val --target-env
// vulkan1.1`) and reflects with the capabilities the bundle requirements come from.
TEST(CoopMatShaders, EveryVariantCompilesAndValidates) {
  const std::vector<std::vector<std::string>> int_path = {
      {"VKQC_CM_INT"},
      {"VKQC_CM_INT", "VKQC_ACT_ROW"},
      {"VKQC_CM_INT", "VKQC_OUT_Q8"},
      {"VKQC_CM_INT", "VKQC_W4"},
      {"VKQC_CM_INT", "VKQC_W4", "VKQC_ACT_ROW"},
      {"VKQC_CM_INT", "VKQC_W4", "VKQC_W4_ZP", "VKQC_ACT_ROW", "VKQC_OUT_Q8"},
      {"VKQC_CM_INT", "VKQC_W4", "VKQC_W4_ZP", "VKQC_OUT_Q8"},
  };
  const std::vector<std::vector<std::string>> fp16_path = {
      {}, {"VKQC_OUT_Q8"}, {"VKQC_W4"}, {"VKQC_W4", "VKQC_W4_ZP"}, {"VKQC_W4", "VKQC_W4_ZP", "VKQC_OUT_Q8"},
  };
  for (int path = 0; path < 2; ++path)
    for (const auto& defs : path == 0 ? int_path : fp16_path) {
      std::string name;
      for (const auto& d : defs) name += d + " ";
      SCOPED_TRACE(name);
      auto sh = CompileShader("linear_coopmat.comp", defs);
      ASSERT_TRUE(sh.ok()) << sh.error().message;
      EXPECT_TRUE(ValidateSpirv(sh->spirv, sh->name).ok());
      const ShaderReflection& r = sh->reflection;
      EXPECT_TRUE(r.uses_cooperative_matrix_nv);
      EXPECT_TRUE(r.uses_vulkan_memory_model);  // glslang declares it with GL_NV_cooperative_matrix
      EXPECT_EQ(r.uses_int8, path == 0);
      EXPECT_EQ(r.uses_float16, path == 1);
      EXPECT_FALSE(r.uses_storage_buffer_8bit);  // buffers are read as words
      EXPECT_FALSE(r.uses_int_dot);
      EXPECT_EQ(r.push_constant_size, sizeof(LinearPush));
      bool row = false;
      for (const auto& d : defs) row |= d == "VKQC_ACT_ROW";
      EXPECT_EQ(r.storage_buffer_bindings, row ? std::vector<uint32_t>({0, 1, 2, 3}) : std::vector<uint32_t>({0, 1, 2}));
      for (uint32_t id : {0u, 13u, 14u, 18u, 21u}) EXPECT_TRUE(std::count(r.spec_constant_ids.begin(), r.spec_constant_ids.end(), id)) << id;
    }
  // The direct reflection agrees with SPIRV-Cross where both apply: a tiled GEMM reflected
  // through SPIRV-Cross has the same push-constant block and bindings.
  auto gemm = CompileShader("linear_gemm.comp", {"VKQC_INT_DOT", "VKQC_ACT_ROW"});
  ASSERT_TRUE(gemm.ok());
  EXPECT_EQ(gemm->reflection.push_constant_size, sizeof(LinearPush));
  EXPECT_TRUE(ValidateSpirv(gemm->spirv, gemm->name).ok());
}

// A compiled bundle for nvidia-hopper records what the kernels need.
TEST(CoopMatShaders, BundleRequirements) {
  const TargetProfile p = Load("nvidia-hopper");
  for (bool fp16 : {false, true}) {
    testing_graphs::QLayerSpec s;
    s.m = 129;
    s.k = 256;
    s.n = 100;
    s.weights = ir::Scheme::Q4GAW;
    s.group_size = 64;
    s.act = fp16 ? ir::Scheme::Float : ir::Scheme::DQ8CA;
    s.out_q8 = !fp16;
    const ir::Graph g = testing_graphs::MakeQLayer(s, 3);
    CompileOptions o;
    o.select.allow_fp16 = fp16;
    o.select.force_accum = Accum::CoopMat;  // int4 x int8 is not chosen unforced
    auto b = CompileGraph(g, p, o, 0);
    ASSERT_TRUE(b.ok()) << b.error().message;
    const auto* bundle = fb::bundle::GetBundle(b->data() + 4);
    const auto* r = bundle->requirements();
    // nvidia-hopper has VK_KHR_cooperative_matrix: the translated kernel and the KHR shape it uses.
    EXPECT_FALSE(r->cooperative_matrix_nv());
    EXPECT_TRUE(r->cooperative_matrix_khr());
    ASSERT_TRUE(r->cooperative_matrix_shapes());
    ASSERT_EQ(r->cooperative_matrix_shapes()->size(), 1u);
    const auto* cs = r->cooperative_matrix_shapes()->Get(0);
    EXPECT_EQ(cs->m(), 16u);
    EXPECT_EQ(cs->k(), fp16 ? 16u : 32u);
    EXPECT_EQ(cs->a(), fp16 ? 0u : 3u);       // VK_COMPONENT_TYPE_FLOAT16 / SINT8
    EXPECT_EQ(cs->result(), fp16 ? 1u : 5u);  // FLOAT32 / SINT32
    EXPECT_TRUE(r->vulkan_memory_model());
    EXPECT_EQ(r->shader_int8(), !fp16);
    EXPECT_EQ(r->shader_float16(), fp16);
    EXPECT_GE(r->api_version(), (1u << 22) | (2u << 12));
    ASSERT_TRUE(r->extensions());
    bool ext = false;
    for (const auto* e : *r->extensions()) ext |= e->str() == "VK_KHR_cooperative_matrix";
    EXPECT_TRUE(ext);
    int found = 0;
    for (const auto* layer : *bundle->programs()->Get(0)->layers()) {
      if (layer->op()->str() != "linear") continue;
      ++found;
      EXPECT_EQ(layer->variant()->str(), fp16 ? "linear_q4gaw_cmf16_gemm" : "linear_dq8ca_q4gaw_q8to_cm_gemm");
      EXPECT_EQ(layer->integer_path(), !fp16);
    }
    EXPECT_EQ(found, 1);
  }
  // Without a cooperative-matrix layer none of it is required.
  testing_graphs::QLayerSpec s;
  s.m = 4;
  auto b = CompileGraph(testing_graphs::MakeQLayer(s, 4), p, {}, 0);
  ASSERT_TRUE(b.ok());
  const auto* r = fb::bundle::GetBundle(b->data() + 4)->requirements();
  EXPECT_FALSE(r->cooperative_matrix_nv());
  EXPECT_FALSE(r->cooperative_matrix_khr());
  EXPECT_FALSE(r->cooperative_matrix_shapes() && r->cooperative_matrix_shapes()->size());
  EXPECT_FALSE(r->vulkan_memory_model());
}

// --coopmat-nv keeps VK_NV_cooperative_matrix on a target with both (fp16 only on NVIDIA).
TEST(CoopMatShaders, NvForced) {
  testing_graphs::QLayerSpec s;
  s.m = 129;
  s.k = 256;
  s.n = 100;
  s.weights = ir::Scheme::Q4GAW;
  s.group_size = 64;
  s.act = ir::Scheme::Float;
  CompileOptions o;
  o.select.allow_fp16 = true;
  o.select.cm_nv = true;
  auto b = CompileGraph(testing_graphs::MakeQLayer(s, 3), Load("nvidia-hopper"), o, 0);
  ASSERT_TRUE(b.ok()) << b.error().message;
  const auto* r = fb::bundle::GetBundle(b->data() + 4)->requirements();
  EXPECT_TRUE(r->cooperative_matrix_nv());
  EXPECT_FALSE(r->cooperative_matrix_khr());
  // int8 operands have no NV types on NVIDIA: the tiled int-dot GEMM instead, and it says why.
  s.act = ir::Scheme::DQ8CA;
  auto q = CompileGraph(testing_graphs::MakeQLayer(s, 3), Load("nvidia-hopper"), o, 0);
  ASSERT_TRUE(q.ok()) << q.error().message;
  EXPECT_FALSE(fb::bundle::GetBundle(q->data() + 4)->requirements()->cooperative_matrix_nv());
}

// The NV -> KHR translation (shaderlib/coopmat_khr.h) on every kernel variant: no NV
// instruction is left, each matrix type gets the Use that MulAdd takes it as, loads and stores
// get RowMajor / ColumnMajor constants, and integer MulAdds say that every operand is signed.
TEST(CoopMatShaders, KhrTranslation) {
  for (bool int8 : {true, false})
    for (bool w4 : {false, true}) {
      std::vector<std::string> defs;
      if (int8) defs.push_back("VKQC_CM_INT");
      if (w4) defs.push_back("VKQC_W4");
      auto nv = CompileShader("linear_coopmat.comp", defs);
      defs.push_back("VKQC_CM_KHR");
      auto kh = CompileShader("linear_coopmat.comp", defs);
      ASSERT_TRUE(nv.ok() && kh.ok());
      SCOPED_TRACE(kh->name);
      EXPECT_TRUE(kh->reflection.uses_cooperative_matrix_khr);
      EXPECT_FALSE(kh->reflection.uses_cooperative_matrix_nv);
      EXPECT_EQ(kh->reflection.push_constant_size, nv->reflection.push_constant_size);
      EXPECT_EQ(kh->reflection.spec_constant_ids, nv->reflection.spec_constant_ids);
      const std::vector<uint32_t>& w = kh->spirv;
      ASSERT_GT(w.size(), 5u);
      EXPECT_EQ(w[0], 0x07230203u);
      std::map<uint32_t, uint32_t> uconst, spec_id, decorated;  // id -> value / SpecId
      std::map<uint32_t, std::array<uint32_t, 6>> types;        // KHR matrix types
      int cap = 0, ext = 0, loads = 0, stores = 0, muladds = 0;
      std::vector<std::array<uint32_t, 6>> mul;
      for (size_t i = 5; i < w.size();) {
        const uint32_t n = w[i] >> 16, op = w[i] & 0xFFFF;
        ASSERT_GT(n, 0u);
        ASSERT_LE(i + n, w.size());
        const uint32_t* a = &w[i + 1];
        EXPECT_FALSE(op >= 5358 && op <= 5362) << "NV instruction " << op << " left";
        if (op == 17) {
          EXPECT_NE(a[0], 5357u);
          cap += a[0] == 6022;
        }
        if (op == 10) ext += std::string(reinterpret_cast<const char*>(a)) == "SPV_KHR_cooperative_matrix";
        if (op == 71 && a[1] == 1) spec_id[a[0]] = a[2];
        if (op == 43 && n == 4) uconst[a[1]] = a[2];
        if (op == 4456) {
          EXPECT_EQ(n, 7u);
          types[a[0]] = {a[1], a[2], a[3], a[4], a[5], 0};
        }
        if (op == 4457) {  // type id pointer layout stride
          ++loads;
          ASSERT_TRUE(uconst.count(a[3]));
          EXPECT_LE(uconst[a[3]], 1u);
        }
        if (op == 4458) {
          ++stores;
          ASSERT_TRUE(uconst.count(a[2]));
          EXPECT_LE(uconst[a[2]], 1u);
        }
        if (op == 4459) {
          ++muladds;
          EXPECT_EQ(n, int8 ? 7u : 6u);  // signedness operands for int8 only
          if (int8) {
            EXPECT_EQ(a[5], 0xFu);
          }
        }
        i += n;
      }
      EXPECT_EQ(cap, 1);
      EXPECT_EQ(ext, 1);
      EXPECT_GT(loads, 0);
      EXPECT_GT(stores, 0);
      EXPECT_GT(muladds, 0);
      // A is LM x LK (spec ids 18, 20), B LK x LN (20, 19), accumulators LM x LN (18, 19).
      int seen[3] = {0, 0, 0};
      for (const auto& [id, t] : types) {
        ASSERT_TRUE(uconst.count(t[4]));
        const uint32_t use = uconst[t[4]], rows = spec_id[t[2]], cols = spec_id[t[3]];
        ASSERT_LE(use, 2u);
        ++seen[use];
        const uint32_t want[3][2] = {{18, 20}, {20, 19}, {18, 19}};
        EXPECT_EQ(rows, want[use][0]) << "use " << use;
        EXPECT_EQ(cols, want[use][1]) << "use " << use;
      }
      EXPECT_EQ(seen[0], 1);
      EXPECT_EQ(seen[1], 1);
      EXPECT_GE(seen[2], 1);
    }
}

// Bad input to the translation: not SPIR-V, no NV capability, a matrix type used as A and B.
TEST(CoopMatShaders, KhrTranslationRefuses) {
  EXPECT_FALSE(CoopMatNvToKhr({1, 2, 3}).ok());
  auto gemm = CompileShader("linear_gemm.comp", {"VKQC_INT_DOT"});
  ASSERT_TRUE(gemm.ok());
  auto r = CoopMatNvToKhr(gemm->spirv);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("CooperativeMatrixNV"), std::string::npos);
  // Make B's operand the A value of the first MulAdd: its type is then both A and B.
  auto nv = CompileShader("linear_coopmat.comp", {"VKQC_CM_INT"});
  ASSERT_TRUE(nv.ok());
  std::vector<uint32_t> w = nv->spirv;
  bool patched = false;
  for (size_t i = 5; i < w.size() && !patched; i += w[i] >> 16)
    if ((w[i] & 0xFFFF) == 5361) {
      w[i + 4] = w[i + 3];
      patched = true;
    }
  ASSERT_TRUE(patched);
  auto bad = CoopMatNvToKhr(w);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("used both as"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace vkqc::linear

namespace vkqc::linear {
namespace {

// Every layer tests/gpu/coopmat_test.cc runs on a device with the extension compiles here
// (forced, for nvidia-hopper), so CI covers their shapes, group sizes and defines.
TEST(CoopMatShaders, EveryGpuTestLayerCompiles) {
  const TargetProfile p = Load("nvidia-hopper");
  struct C {
    ir::Scheme w, act;
    bool x_int8, out_q8;
    int64_t gs;
  };
  const C combos[] = {{ir::Scheme::Q8CSW, ir::Scheme::Q8TA, false, false, 0},
                      {ir::Scheme::Q8CSW, ir::Scheme::DQ8CA, false, true, 0},
                      {ir::Scheme::Q8CSW, ir::Scheme::Q8TA, true, true, 0},
                      {ir::Scheme::Q4GSW, ir::Scheme::DQ8CA, false, false, 32},
                      {ir::Scheme::Q4GSW, ir::Scheme::Q8TA, false, false, 96},
                      {ir::Scheme::Q4GAW, ir::Scheme::DQ8CA, false, true, 128},
                      {ir::Scheme::Q4GAW, ir::Scheme::Q8TA, true, false, 256},
                      {ir::Scheme::Q8CSW, ir::Scheme::Float, false, false, 0},
                      {ir::Scheme::Q4GSW, ir::Scheme::Float, false, false, 8},
                      {ir::Scheme::Q4GAW, ir::Scheme::Float, false, true, 128}};
  for (const C& c : combos) {
    const int64_t g = c.w == ir::Scheme::Q8CSW ? 0 : c.gs;
    const int64_t shapes[][3] = {
        {17, g ? 3 * g : 100, 13}, {129, g ? 5 * g : 1000, 203}, {3, g ? g : 36, 8}, {64, g ? 16 * g : 2048, 100}};
    for (const auto& sh : shapes) {
      testing_graphs::QLayerSpec s;
      s.m = sh[0];
      s.k = sh[1];
      s.n = sh[2];
      s.weights = c.w;
      s.group_size = c.gs;
      s.act = c.act;
      s.x_int8 = c.x_int8;
      s.out_q8 = c.out_q8;
      CompileOptions o;
      o.select.force_accum = Accum::CoopMat;
      auto b = CompileGraph(testing_graphs::MakeQLayer(s, 5), p, o, 0);
      ASSERT_TRUE(b.ok()) << ir::SchemeName(c.w) << " gs " << c.gs << " M=" << s.m << ": " << b.error().message;
      EXPECT_TRUE(fb::bundle::GetBundle(b->data() + 4)->requirements()->cooperative_matrix_khr());
    }
  }
}

}  // namespace
}  // namespace vkqc::linear
