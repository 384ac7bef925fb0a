// The cooperative-matrix GEMM (shaders/linear_coopmat.comp) on a device with
// VK_KHR_cooperative_matrix (the translated module) or VK_NV_cooperative_matrix (fp16, forced
// with cm_nv), against the CPU reference: every weight scheme x activation x
// output, ragged M (17, 129), K not a multiple of the K step, N not a multiple of 4 or of the
// block, int4 groups shorter and longer than a step. Where the device lacks the extension
// (lavapipe) the kernels are skipped with the reason, and the refusal itself is tested.
//
// The bundle is compiled for the device's profile (VKQC_TEST_PROFILE) when it lists the
// extension and its shapes, else for the built-in nvidia-hopper profile, with the accumulation
// forced to cm. On an H100:
//   VKQC_TEST_PROFILE=h100.json build/tests/vkqc_gpu_tests --gtest_filter='CoopMat*'
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "compiler/passes/pipeline.h"
#include "gpu_fixture.h"
#include "reference/reference.h"
#include "compiler/graph/synthetic.h"

namespace vkqc {
namespace {

using linear::Accum;
using testing_graphs::QLayerSpec;

// The profile to compile for: the device's own when it can select the cooperative matrix.
const TargetProfile& CoopMatProfile() {
  static const TargetProfile p = [] {
    auto own = LoadProfile(gpu_test::TestProfile());
    EXPECT_TRUE(own.ok()) << own.error().message;
    linear::LinearShape s;  // the fp16 variant: every cooperative-matrix device has it
    s.m = 64;
    s.k = s.n = 256;
    s.act = ir::Scheme::Float;
    linear::SelectOptions o;
    o.force_accum = Accum::CoopMat;
    if (own.ok() && linear::SelectLinear(s, *own, o).ok()) return *own;
    auto hopper = LoadProfile("nvidia-hopper");
    EXPECT_TRUE(hopper.ok());
    return hopper.ok() ? *hopper : TargetProfile{};
  }();
  return p;
}

std::vector<uint8_t> CompileForced(const ir::Graph& g, bool nv = false, bool two_buffers = false, bool tall = false,
                                   uint32_t ksplit = 0, bool small = false) {
  CompileOptions o;
  o.select.cm_ksplit = ksplit;
  if (small) {  // as the selection's default for wide layers at decode-sized batches
    o.select.cm_wm = o.select.cm_wn = 2;
    o.select.cm_tm = o.select.cm_tn = 1;
  }
  o.select.force_accum = Accum::CoopMat;
  o.select.cm_nv = nv;
  if (tall) {  // as the selection's default for grouped weights from M = 256 on, at any M
    o.select.cm_wm = 8;
    o.select.cm_wn = o.select.cm_tm = o.select.cm_tn = 2;
  }
  if (two_buffers) {
    o.select.cm_stages = 2;
    o.select.cm_bkw = 16;
  }
  auto b = CompileGraph(g, CoopMatProfile(), o, 0);
  EXPECT_TRUE(b.ok()) << b.error().message;
  return b.ok() ? *b : std::vector<uint8_t>{};
}

// Empty when the device runs cooperative-matrix bundles, else the runtime's refusal.
const std::string& RefusalOnThisDevice() {
  static const std::string why = []() -> std::string {
    QLayerSpec s;
    s.m = 16;
    s.k = 64;
    s.n = 16;
    s.weights = ir::Scheme::Q8CSW;
    s.act = ir::Scheme::Float;
    const auto bundle = CompileForced(testing_graphs::MakeQLayer(s, 1));
    if (bundle.empty()) return "the probe bundle did not compile";
    vkqc_model m = nullptr;
    if (vkqc_model_load(gpu_test::Context(), bundle.data(), bundle.size(), nullptr, &m) == VKQC_OK) {
      vkqc_model_destroy(m);
      return "";
    }
    return vkqc_last_error();
  }();
  return why;
}

#define SKIP_WITHOUT_COOPMAT()                                                                   \
  do {                                                                                           \
    if (!RefusalOnThisDevice().empty())                                                          \
      GTEST_SKIP() << "the device lacks cooperative matrices (or what the kernels need): "     \
                   << RefusalOnThisDevice();                                                     \
  } while (0)

// A device without the extension refuses the bundle at load with a readable list, no crash.
TEST(CoopMat, RefusedWhereTheDeviceLacksIt) {
  if (RefusalOnThisDevice().empty()) GTEST_SKIP() << "the device has VK_KHR_cooperative_matrix";
  QLayerSpec s;
  s.m = 64;
  s.weights = ir::Scheme::Q4GSW;
  s.act = ir::Scheme::Float;
  const auto bundle = CompileForced(testing_graphs::MakeQLayer(s, 2));
  ASSERT_FALSE(bundle.empty());
  vkqc_model m = nullptr;
  ASSERT_EQ(vkqc_model_load(gpu_test::Context(), bundle.data(), bundle.size(), nullptr, &m),
            VKQC_ERROR_UNSUPPORTED_DEVICE);
  const std::string err = vkqc_last_error();
  EXPECT_NE(err.find("cannot run this bundle"), std::string::npos) << err;
  EXPECT_NE(err.find("VK_KHR_cooperative_matrix"), std::string::npos) << err;
  gpu_test::ExpectNoValidationMessages("refusal");
}

// The waiver (tools/vkqc/validation_waiver.h, used by the fixture and the CLI) on the messages the 1.3.239 layer printed on the H100 (shortened):
// nothing but the identified KHR-coopmat noise is waived, and only once the layer said it lacks
// the extension; the follow-on messages only for a module it reported with capability 6022.
TEST(CoopMat, ValidationWaiverIsNarrow) {
  validation::Waiver w;  // a fresh one (the fixture's keeps its state)
  const std::string dev = "Validation Error: [ X ] Object 0: handle = 0x55ae2823e000, type = VK_OBJECT_TYPE_DEVICE; | ";
  const std::string inconsistent = dev + "SPIR-V module not valid: Invalid capability operand: 6022";
  const std::string module_param =
      dev + "VkShaderModule 0xa000000000a0[] does not contain valid spirv for stage VK_SHADER_STAGE_COMPUTE_BIT. "
            "Invalid capability operand: 6022 The Vulkan spec states: ...";
  auto spec_failed = [&](const char* h) {
    return dev + "VkShaderModule " + h + "[] module (stage VK_SHADER_STAGE_COMPUTE_BIT) attempted to apply "
                 "specialization constants with spirv-opt but failed.";
  };
  auto local_size = [](const char* h) {
    return std::string("Validation Error: [ VUID-VkPipelineShaderStageCreateInfo-pNext-02757 ] Object 0: handle = ") +
           h + ", type = VK_OBJECT_TYPE_SHADER_MODULE; | Local workgroup size x (1) is not a multiple of "
               "VkPipelineShaderStageRequiredSubgroupSizeCreateInfoEXT::requiredSubgroupSize (32).";
  };
  const std::string capability = dev + "vkCreateShaderModule(): A SPIR-V Capability (Unhandled OpCapability) was declared";
  const std::string extension = dev + "vkCreateShaderModule(): A SPIR-V Extension (SPV_KHR_cooperative_matrix) was declared";
  const std::string unknown_struct =
      "Validation Error: [ VUID-VkDeviceCreateInfo-pNext-pNext ] Object 0: VK_NULL_HANDLE | vkCreateDevice: "
      "pCreateInfo->pNext chain includes a structure with unknown VkStructureType (1000506000); Allowed ...";
  const std::string unsupported =
      "Validation Warning: [ VUID_Undefined ] | Device Extension VK_KHR_cooperative_matrix is not supported by this layer.";
  // Before the layer says it lacks the extension: only the unknown struct.
  EXPECT_TRUE(w.Waive(unknown_struct));
  EXPECT_FALSE(w.Waive(inconsistent));
  EXPECT_FALSE(w.Waive(extension));
  EXPECT_TRUE(w.Waive(unsupported));
  EXPECT_TRUE(w.Waive(inconsistent));
  EXPECT_TRUE(w.Waive(capability));
  EXPECT_TRUE(w.Waive(extension));
  // Follow-ons: not for a module never reported with 6022, yes once it was.
  EXPECT_FALSE(w.Waive(spec_failed("0xa000000000a0")));
  EXPECT_FALSE(w.Waive(local_size("0xa000000000a0")));
  EXPECT_TRUE(w.Waive(module_param));
  EXPECT_TRUE(w.Waive(spec_failed("0xa000000000a0")));
  EXPECT_TRUE(w.Waive(local_size("0xa000000000a0")));
  EXPECT_FALSE(w.Waive(spec_failed("0xb000000000b0")));
  EXPECT_FALSE(w.Waive(local_size("0xa000000000a")));  // a prefix is another handle
  // Anything else is never waived.
  EXPECT_FALSE(w.Waive("Validation Error: [ SYNC-HAZARD-READ-AFTER-WRITE ] ... 6022"));
  EXPECT_FALSE(w.Waive(dev + "Invalid capability operand: 6023"));
}

struct Combo {
  ir::Scheme weights;
  ir::Scheme act;  // Float: the fp16 variant
  bool x_int8;
  bool out_q8;
  int64_t gs;
  bool nv = false;  // VK_NV_cooperative_matrix (--coopmat-nv) instead of the KHR translation
  bool two_buffers = false;  // int8 operands: two shared operand buffers (16 K words per step)
  bool tall = false;         // 8x2 subgroups of 2x2 tiles (the 256x64 block grouped weights take from M = 256 on)
  uint32_t ksplit = 0;       // K slices (--coopmat-split): 0 the selection's (small grids split K), 1 none
  bool small = false;        // 2x2 subgroups of one tile (the 32x32 block of decode-sized batches)
};

// One layer with the cooperative matrix forced, against the reference.
void Check(const Combo& c, int64_t m, int64_t k, int64_t n, uint32_t seed, bool want_split = false) {
  QLayerSpec s;
  s.m = m;
  s.k = k;
  s.n = n;
  s.weights = c.weights;
  s.group_size = c.gs;
  s.act = c.act;
  s.x_int8 = c.x_int8;
  s.out_q8 = c.out_q8;
  s.bias = seed % 2 == 0;
  s.relu = seed % 3 == 0;
  std::ostringstream where;
  where << (c.x_int8 ? "i8" : ir::SchemeName(c.act)) << " x " << ir::SchemeName(c.weights) << " gs=" << c.gs
        << (c.out_q8 ? " -> q8to" : "") << " M=" << m << " K=" << k << " N=" << n << " bias=" << s.bias
        << " relu=" << s.relu << (c.nv ? " NV" : "");
  SCOPED_TRACE(where.str());
  const ir::Graph g = testing_graphs::MakeQLayer(s, seed);
  const auto bundle = CompileForced(g, c.nv, c.two_buffers, c.tall, c.ksplit, c.small);
  ASSERT_FALSE(bundle.empty());
  if (c.two_buffers) {  // the selection keeps them (they fit the target)
    linear::SelectOptions so;
    so.force_accum = Accum::CoopMat;
    so.cm_stages = 2;
    so.cm_bkw = 16;
    linear::LinearShape ls;
    ls.m = m;
    ls.k = k;
    ls.n = n;
    ls.act = c.act;
    ls.x_int8 = c.x_int8;
    ls.weights = c.weights;
    ls.group_size = c.gs;
    ls.out_q8 = c.out_q8;
    auto sel = linear::SelectLinear(ls, CoopMatProfile(), so);
    ASSERT_TRUE(sel.ok()) << sel.error().message;
    EXPECT_EQ(sel->cm_stages, 2u);
  }

  std::vector<float> xf;
  const std::vector<uint8_t> input = testing_graphs::QLayerInput(s, seed + 7, &xf);

  gpu_test::Loaded guard;
  ASSERT_TRUE(gpu_test::LoadAndRun(bundle, input.data(), input.size(), &guard));
  vkqc_model model = guard.model;
  vkqc_tensor_info info;
  ASSERT_EQ(vkqc_model_output_info(model, 0, 0, &info), VKQC_OK);
  std::vector<uint8_t> out(info.size_bytes);
  ASSERT_EQ(vkqc_model_read_output(model, 0, 0, out.data(), out.size()), VKQC_OK) << vkqc_last_error();
  std::vector<bool> integer;
  std::string variant;
  for (uint32_t i = 0; i < vkqc_model_layer_count(model, 0); ++i) {
    vkqc_layer_info li;
    vkqc_model_layer_info(model, 0, i, &li);
    if (li.op_index < 0) continue;
    integer.push_back(li.integer_path);
    variant = li.variant;
  }
  gpu_test::ExpectNoValidationMessages(where.str());
  const bool fp16 = c.act == ir::Scheme::Float && !c.x_int8;
  EXPECT_NE(variant.find(std::string(fp16 ? "_cmf16" : "_cm") + (c.nv ? "nv_gemm" : "_gemm")), std::string::npos)
      << variant;
  if (c.ksplit == 1) {
    EXPECT_EQ(variant.find("_splitk"), std::string::npos) << variant;
  }
  // Forced slices split every K of more than one unit of whole steps (128 values) and groups.
  int64_t unit = 128;
  while (c.gs && unit % c.gs) unit += 128;
  if ((c.ksplit > 1 && k > unit) || want_split) {
    EXPECT_NE(variant.find("_splitk"), std::string::npos) << variant;
  }

  ref::RunOptions ro;
  ro.integer_path = integer;
  auto want = ref::RunGraphDetailed(g, {{"x", xf}}, ro);
  ASSERT_TRUE(want.ok()) << want.error().message;
  const auto& w = want->outputs.at("y");
  int bad = 0;
  if (c.out_q8) {
    ASSERT_EQ(out.size(), w.size());
    for (size_t i = 0; i < w.size(); ++i) {
      const int got = int8_t(out[i]);
      if (std::abs(got - int(w[i])) > 1 && ++bad <= 5)
        ADD_FAILURE() << "y[" << i / n << "," << i % n << "] = " << got << ", reference " << w[i];
    }
  } else {
    ASSERT_EQ(out.size(), w.size() * 4);
    const auto& mag = want->magnitude.at("y");
    // int8 operands: exact int32 (per group), fp32 folding: as the int-dot kernels. fp16
    // operands: both rounded to fp16 (2^-11 relative each), fp32 accumulation.
    const double rel = fp16 ? 2e-3 : 4e-6;
    for (size_t i = 0; i < w.size(); ++i) {
      float got;
      std::memcpy(&got, out.data() + 4 * i, 4);
      const double err = std::fabs(double(got) - w[i]);
      if (!(err <= rel * mag[i] + 1e-30) && ++bad <= 5)
        ADD_FAILURE() << "y[" << i / n << "," << i % n << "] = " << got << ", reference " << w[i] << " (error "
                      << err << " > " << rel * mag[i] << ")";
    }
  }
  EXPECT_EQ(bad, 0) << bad << " of " << w.size() << " outputs out of tolerance";
}

// Shapes per group size: ragged M (17, 129 = one row past a 128 block, 300 = 44 rows past the
// 256-row block grouped weights take from M = 256 on; 3, 9 and 16 in the 16x64 block of grouped
// weights up to one matrix tile of rows, K split where the blocks are few), N not a multiple of 4
// (13, 203, 77) or of the block, K not a multiple of the 64-value step (q8csw: 100, 1000, 520;
// int4: an odd number of groups).
void Sweep(const Combo& c, uint32_t seed) {
  const int64_t g = c.weights == ir::Scheme::Q8CSW ? 0 : c.gs;
  const int64_t shapes[][3] = {{17, g ? 3 * g : 100, 13},
                               {129, g ? 5 * g : 1000, 203},
                               {3, g ? g : 36, 8},
                               {64, g ? 16 * g : 2048, 100},
                               {300, g ? 7 * g : 520, 77},
                               {16, g ? 9 * g : 300, 77},
                               {9, g ? 11 * g : 1000, 130}};
  int i = 0;
  for (const auto& sh : shapes) Check(c, sh[0], sh[1], sh[2], seed + 31 * i++);
}

class CoopMatInt : public ::testing::TestWithParam<Combo> {};
TEST_P(CoopMatInt, MatchesReference) {
  SKIP_WITHOUT_COOPMAT();
  // int8 matrices need VK_KHR_cooperative_matrix with a sint8 16x{16,8}x32 shape (or the quirk
  // nv_coopmat_int8): a profile without them cannot select the kernels at all.
  linear::LinearShape ls;
  ls.m = 64;
  ls.k = ls.n = 256;
  ls.act = ir::Scheme::Q8TA;
  linear::SelectOptions so;
  so.force_accum = Accum::CoopMat;
  if (auto sel = linear::SelectLinear(ls, CoopMatProfile(), so); !sel.ok())
    GTEST_SKIP() << sel.error().message;
  const Combo& c = GetParam();
  Sweep(c, uint32_t(100 * int(c.weights) + 10 * int(c.act) + c.gs + (c.out_q8 ? 7 : 0) + (c.x_int8 ? 3 : 0)));
}

const Combo kIntCombos[] = {
    {ir::Scheme::Q8CSW, ir::Scheme::Q8TA, false, false, 0},
    {ir::Scheme::Q8CSW, ir::Scheme::DQ8CA, false, false, 0},
    {ir::Scheme::Q8CSW, ir::Scheme::DQ8CA, false, true, 0},
    {ir::Scheme::Q8CSW, ir::Scheme::Q8TA, true, false, 0},   // int8 input
    {ir::Scheme::Q8CSW, ir::Scheme::Q8TA, true, true, 0},
    {ir::Scheme::Q4GSW, ir::Scheme::DQ8CA, false, false, 32},  // two groups per step
    {ir::Scheme::Q4GSW, ir::Scheme::DQ8CA, false, false, 64},  // one group per step
    {ir::Scheme::Q4GSW, ir::Scheme::DQ8CA, false, true, 128},  // a group spans two steps
    {ir::Scheme::Q4GSW, ir::Scheme::Q8TA, false, false, 96},   // groups straddle steps
    {ir::Scheme::Q4GAW, ir::Scheme::DQ8CA, false, false, 128},
    {ir::Scheme::Q4GAW, ir::Scheme::DQ8CA, false, true, 32},
    {ir::Scheme::Q4GAW, ir::Scheme::Q8TA, false, false, 256},
    {ir::Scheme::Q4GAW, ir::Scheme::Q8TA, true, false, 64},    // int8 input
    {ir::Scheme::Q8GSW, ir::Scheme::DQ8CA, false, false, 32},  // GGUF Q8_0
    {ir::Scheme::Q8GSW, ir::Scheme::DQ8CA, false, true, 128},
    {ir::Scheme::Q8GSW, ir::Scheme::Q8TA, true, false, 96},    // int8 input, groups straddle steps
    {ir::Scheme::Q8GSW, ir::Scheme::DQ8CA, false, false, 256}, // the longest group: sums up to 2^22
    // two shared operand buffers (the fp16 path's default): two chunks per step
    {ir::Scheme::Q8CSW, ir::Scheme::Q8TA, false, true, 0, false, true},
    {ir::Scheme::Q4GSW, ir::Scheme::DQ8CA, false, false, 32, false, true},
    {ir::Scheme::Q4GAW, ir::Scheme::DQ8CA, false, true, 64, false, true},  // a group per step
    // the 256x64 block (8x2 subgroups of 2x2 tiles)
    {ir::Scheme::Q4GSW, ir::Scheme::DQ8CA, false, false, 32, false, false, true},
    {ir::Scheme::Q4GAW, ir::Scheme::DQ8CA, false, true, 128, false, false, true},
    {ir::Scheme::Q8GSW, ir::Scheme::Q8TA, true, false, 64, false, false, true},
    // K slices: the small grids above split K by default; forced off, and 3 slices
    {ir::Scheme::Q4GSW, ir::Scheme::DQ8CA, false, false, 32, false, false, false, 1},
    {ir::Scheme::Q4GSW, ir::Scheme::DQ8CA, false, true, 32, false, false, false, 3},
    {ir::Scheme::Q4GAW, ir::Scheme::Q8TA, false, false, 96, false, false, false, 3},  // groups straddle steps
    // 32x32 blocks (2x2 subgroups of one tile), with and without K slices
    {ir::Scheme::Q4GSW, ir::Scheme::DQ8CA, false, false, 32, false, false, false, 0, true},
    {ir::Scheme::Q8GSW, ir::Scheme::DQ8CA, false, true, 128, false, false, false, 2, true},
};

std::string ComboName(const ::testing::TestParamInfo<Combo>& info) {
  const Combo& c = info.param;
  std::string n = std::string(c.x_int8 ? "i8" : ir::SchemeName(c.act)) + "_" + ir::SchemeName(c.weights);
  if (c.gs) n += "_g" + std::to_string(c.gs);
  if (c.out_q8) n += "_q8to";
  if (c.nv) n += "_nv";
  if (c.two_buffers) n += "_2buf";
  if (c.tall) n += "_tall";
  if (c.ksplit) n += "_split" + std::to_string(c.ksplit);
  if (c.small) n += "_small";
  return n;
}

INSTANTIATE_TEST_SUITE_P(CoopMat, CoopMatInt, ::testing::ValuesIn(kIntCombos), ComboName);

// Float activations: the fp16 variant (forced here; selection needs --allow-fp16).
class CoopMatFp16 : public ::testing::TestWithParam<Combo> {};
TEST_P(CoopMatFp16, MatchesReference) {
  SKIP_WITHOUT_COOPMAT();
  const Combo& c = GetParam();
  if (c.nv && !CoopMatProfile().HasExtension("VK_NV_cooperative_matrix"))
    GTEST_SKIP() << "profile '" << CoopMatProfile().name << "' lacks VK_NV_cooperative_matrix";
  Sweep(c, uint32_t(900 + 100 * int(c.weights) + c.gs));
}

const Combo kFp16Combos[] = {
    {ir::Scheme::Q8CSW, ir::Scheme::Float, false, false, 0},
    {ir::Scheme::Q4GSW, ir::Scheme::Float, false, false, 32},
    {ir::Scheme::Q4GSW, ir::Scheme::Float, false, false, 8},  // any group size on the fp16 path
    {ir::Scheme::Q8GSW, ir::Scheme::Float, false, false, 32},
    {ir::Scheme::Q4GMW, ir::Scheme::Float, false, false, 32},  // GGUF Q4_1 / Q4_K (fp16 path)
    {ir::Scheme::Q4GAW, ir::Scheme::Float, false, false, 128},
    {ir::Scheme::Q8CSW, ir::Scheme::Float, false, false, 0, true},  // the NV extension
    {ir::Scheme::Q4GSW, ir::Scheme::Float, false, false, 32, true},
    // K slices (forced): fp32 partial sums of fp16 products, per-channel and per-group scales
    {ir::Scheme::Q8CSW, ir::Scheme::Float, false, false, 0, false, false, false, 3},
    {ir::Scheme::Q4GSW, ir::Scheme::Float, false, false, 32, false, false, false, 4},
    {ir::Scheme::Q4GMW, ir::Scheme::Float, false, false, 32, false, false, false, 2},
};

INSTANTIATE_TEST_SUITE_P(CoopMat, CoopMatFp16, ::testing::ValuesIn(kFp16Combos), ComboName);

// The selection's K slices for fp16 operands: up to 64 rows on layers of K >= 8192 (select.cc),
// ragged M, N and K (257 groups of 32), int4 groups and int8 channels.
TEST(CoopMat, Fp16SmallBatchesOfLongKSplitK) {
  SKIP_WITHOUT_COOPMAT();
  const Combo combos[] = {{ir::Scheme::Q4GSW, ir::Scheme::Float, false, false, 32},
                          {ir::Scheme::Q8CSW, ir::Scheme::Float, false, false, 0}};
  uint32_t seed = 4100;
  for (const Combo& c : combos) {
    Check(c, 5, 8192, 77, seed++, true);
    Check(c, 16, 8224, 130, seed++, true);
    Check(c, 33, 8224, 200, seed++, true);  // 128x128 blocks
  }
}

// The selection's K slices above 64 rows on layers of K >= 8192 (select.cc): grouped weights on the
// int8 path (64x64 blocks, slices up to 256 workgroups) and fp16 operands (the invocation rule);
// ragged M, N and K.
TEST(CoopMat, LongKSplitKAboveSixtyFourRows) {
  SKIP_WITHOUT_COOPMAT();
  const Combo combos[] = {{ir::Scheme::Q4GSW, ir::Scheme::DQ8CA, false, false, 32},
                          {ir::Scheme::Q8GSW, ir::Scheme::DQ8CA, false, false, 128},
                          {ir::Scheme::Q4GSW, ir::Scheme::Float, false, false, 32},
                          {ir::Scheme::Q8CSW, ir::Scheme::Float, false, false, 0}};
  uint32_t seed = 4200;
  for (const Combo& c : combos) {
    Check(c, 65, c.gs == 128 ? 8320 : 8224, 130, seed++, true);  // 65 groups of 128, 257 of 32
    Check(c, 131, 8192, 77, seed++, true);
  }
}

// Up to 16 rows of wide layers of K >= 4096 (select.cc): 16x64 blocks, at least 96 of them, K in
// slices of about 2048 values (3 here), ragged K (129 / 33 groups) and N.
TEST(CoopMat, WideSmallBatchesSplitK) {
  SKIP_WITHOUT_COOPMAT();
  Check({ir::Scheme::Q4GSW, ir::Scheme::DQ8CA, false, false, 32}, 9, 4128, 8200, 4400, true);
  Check({ir::Scheme::Q8GSW, ir::Scheme::DQ8CA, false, true, 128}, 16, 4224, 8256, 4401, true);
}

// int8 weights on the int8 path (select.cc): the sweeps' small grids take 32x32 blocks; these
// shapes keep the 2x4 subgroups of 4x2 tiles (65 rows, 97 column blocks of 128) and take 64x64
// blocks (40 rows: 49 blocks of 64x128, 97 of 64x64).
TEST(CoopMat, Int8WeightsBlocksByGridSize) {
  SKIP_WITHOUT_COOPMAT();
  const Combo combos[] = {{ir::Scheme::Q8CSW, ir::Scheme::Q8TA, false, false, 0},
                          {ir::Scheme::Q8CSW, ir::Scheme::DQ8CA, false, true, 0}};
  uint32_t seed = 4300;
  for (const Combo& c : combos) {
    Check(c, 65, 64, 12300, seed++);
    Check(c, 40, 96, 6200, seed++);
  }
}

// Automatic selection on a device that has it: prefill-sized float x q4gsw picks the fp16 variant
// unforced once fp16 is allowed.
TEST(CoopMat, SelectedWithoutForcing) {
  SKIP_WITHOUT_COOPMAT();
  QLayerSpec s;
  s.m = 128;
  s.k = 1024;
  s.n = 256;
  s.weights = ir::Scheme::Q4GSW;
  s.group_size = 32;
  s.act = ir::Scheme::Float;
  CompileOptions co;
  co.select.allow_fp16 = true;
  auto b = CompileGraph(testing_graphs::MakeQLayer(s, 9), CoopMatProfile(), co, 0);
  ASSERT_TRUE(b.ok()) << b.error().message;
  vkqc_model m = nullptr;
  ASSERT_EQ(vkqc_model_load(gpu_test::Context(), b->data(), b->size(), nullptr, &m), VKQC_OK) << vkqc_last_error();
  gpu_test::Loaded guard;
  guard.model = m;
  bool found = false;
  for (uint32_t i = 0; i < vkqc_model_layer_count(m, 0); ++i) {
    vkqc_layer_info li;
    vkqc_model_layer_info(m, 0, i, &li);
    found |= std::string(li.variant) == "linear_q4gsw_cmf16_gemm";
  }
  EXPECT_TRUE(found);
  gpu_test::ExpectNoValidationMessages("selected without forcing");
}

}  // namespace
}  // namespace vkqc
