// Row fusion (compiler/passes/fuse_rows.h) on the device against the CPU reference (validation on):
// silu -> mul as one row kernel, residual add -> rms_norm as one (both outputs written), each with
// and without the per-token quantization of the row for the linear that reads it; the cases that
// must not fuse; and timed runs of bundles whose fused layers have no commands.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <cstring>
#include <map>

#include "compiler/graph/synthetic.h"
#include "compiler/passes/fuse_rows.h"
#include "compiler/passes/pipeline.h"
#include "gpu_fixture.h"
#include "row_fusion_helpers.h"
#include "reference/reference.h"
#include "schema/bundle_generated.h"

namespace vkqc {
namespace {

using namespace row_fusion_helpers;
using testing_graphs::OwnBytes;
using testing_graphs::RandomFloats;

// [silu(a) * b | rms_norm(a + b)] [-> linear dq8ca q8csw].
ir::Graph RowGraph(bool swiglu, int64_t c, bool linear, bool extra_reader = false) {
  ir::Graph g;
  const int a = Add(g, "a", {ir::kSymbolicDim, c}), b = Add(g, "b", {ir::kSymbolicDim, c});
  const int mid = Add(g, swiglu ? "s" : "x", {ir::kSymbolicDim, c});
  const int y = Add(g, "y", {ir::kSymbolicDim, c});
  g.inputs = {a, b};
  if (swiglu) {
    g.ops.push_back(gpu_test::MakeOp("silu", ir::OpType::Silu, {a}, {mid}));
    g.ops.push_back(gpu_test::MakeOp("mul", ir::OpType::Mul, {mid, b}, {y}));
  } else {
    const std::vector<float> w = RandomFloats(size_t(c), 11, 0.3f);
    const int wt = Add(g, "w", {c});
    g.tensors[size_t(wt)].data = OwnBytes(w.data(), w.size() * 4);
    g.ops.push_back(gpu_test::MakeOp("add", ir::OpType::Add, {a, b}, {mid}));
    if (extra_reader) {  // a reader of the sum before the norm: no fusion
      const int e = Add(g, "e", {ir::kSymbolicDim, c});
      g.ops.push_back(gpu_test::MakeOp("silu", ir::OpType::Silu, {mid}, {e}));
      g.outputs.push_back(e);
    }
    g.ops.push_back(gpu_test::MakeOp("norm", ir::OpType::RmsNorm, {mid, wt}, {y}));
    g.outputs.push_back(mid);  // the sum is read after the norm too
  }
  if (linear) {
    const int64_t n = 24;
    std::vector<int8_t> wq(size_t(n * c));
    for (size_t i = 0; i < wq.size(); ++i) wq[i] = int8_t(int(i * 37 % 255) - 127);
    const int w = Add(g, "lw", {n, c});
    ir::Tensor& wt = g.tensors[size_t(w)];
    wt.dtype = ir::DType::I8;
    wt.data = OwnBytes(wq.data(), wq.size());
    wt.quant = ir::Quant{ir::Scheme::Q8CSW, std::vector<float>(size_t(n), 0.004f), {}, 0, 0};
    const int z = Add(g, "z", {ir::kSymbolicDim, n});
    g.ops.push_back(gpu_test::MakeOp("lin", ir::OpType::Linear, {y, w}, {z}));
    g.ops.back().linear.input_quant.scheme = ir::Scheme::DQ8CA;
    g.outputs.push_back(z);
  } else {
    g.outputs.push_back(y);
  }
  return g;
}

::testing::AssertionResult CompileAndRun(const ir::Graph& g, int64_t m, bool dot, Ran* r,
                                         std::map<std::string, std::vector<float>>* inputs,
                                         const std::string& profile_name = gpu_test::TestProfile()) {
  auto profile = LoadProfile(profile_name);
  if (!profile.ok()) return ::testing::AssertionFailure() << profile.error().message;
  CompileOptions o;
  o.tokens = {m};
  if (dot) o.select.force_accum = linear::Accum::IntDot;
  auto bundle = CompileGraph(g, *profile, o, 0);
  if (!bundle.ok()) return ::testing::AssertionFailure() << bundle.error().message;
  return RunBundle(g, *bundle, m, r, inputs);
}

TEST(RowFusion, SwigluAndAddNormMatchReference) {
  for (bool swiglu : {true, false})
    for (int64_t c : {37, 256, 1000})
      for (int64_t m : {1, 3, 17})
        for (int mode = 0; mode < 3; ++mode) {  // 0: alone, 1: + linear (dequant), 2: + linear (dot: quantized)
          const ir::Graph g = RowGraph(swiglu, c, mode > 0);
          const std::string what = std::string(swiglu ? "silu*mul" : "add+norm") + " C " + std::to_string(c) +
                                   " M " + std::to_string(m) + " mode " + std::to_string(mode);
          Ran r;
          std::map<std::string, std::vector<float>> in;
          ASSERT_TRUE(CompileAndRun(g, m, mode == 2, &r, &in)) << what;
          ASSERT_EQ(r.variants[0], swiglu ? "folded" : "fused") << what;
          // Quantized in the row kernel when the linear reading it takes the integer path (forced in
          // mode 2; the target's choice in mode 1: dequant on lavapipe, int dot on the H100).
          const bool quantized = mode > 0 && r.variants.back().find("_dequant_") == std::string::npos;
          // One row of silu*mul read by the int-dot GEMV (K a multiple of 4; mode 1 too where the
          // target's choice is int dot): in the GEMV's prologue
          // (RowFusion.SwigluInGemvPrologues). The norm there is opt-in (RowFusion.NormInGemvPrologues).
          const bool prologue = swiglu && quantized && m == 1 && c % 4 == 0 &&
                                r.variants.back().find("_dot_gemv") != std::string::npos;
          const std::string row = prologue ? "fused"
                                           : std::string(swiglu ? "silu_mul_f32" : "add_rms_norm_f32") +
                                                 (quantized ? "_dq8ca" : "");
          EXPECT_EQ(r.variants[1], row) << what;
          if (prologue) {
            EXPECT_NE(r.variants.back().find("_gemv_rowq_silu"), std::string::npos) << what;
          }
          // The row kernel's fp32 reduction differs from the reference's double; a dq8ca code on a
          // rounding boundary may move one step in mode 2.
          Check(g, r, in, m, quantized ? 2e-3 : 2e-6, what);
          gpu_test::ExpectNoValidationMessages(what);
        }
}

// Targets with 4 storage buffers per stage (mali-valhall: int8 dot accelerated): silu*mul still
// fuses (3 buffers) but without the quantization (5), and add+norm (5) stays two dispatches; the
// linear quantizes its input itself. Same values as the reference.
TEST(RowFusion, FourStorageBuffersPerStage) {
  for (bool swiglu : {true, false})
    for (int mode = 1; mode < 3; ++mode) {
      const ir::Graph g = RowGraph(swiglu, 256, true);
      const std::string what = std::string(swiglu ? "silu*mul" : "add+norm") + " mode " + std::to_string(mode);
      Ran r;
      std::map<std::string, std::vector<float>> in;
      ASSERT_TRUE(CompileAndRun(g, 3, mode == 2, &r, &in, "mali-valhall")) << what;
      if (swiglu) {
        EXPECT_EQ(r.variants[0], "folded") << what;
        EXPECT_EQ(r.variants[1], "silu_mul_f32") << what;
      } else {
        EXPECT_EQ(r.variants[0], "add_f32") << what;
        EXPECT_EQ(r.variants[1], "rms_norm_f32") << what;
      }
      Check(g, r, in, 3, 2e-3, what);
      gpu_test::ExpectNoValidationMessages(what);
    }
}

// A linear of [rows, c] `act` (dq8ca by default) x `w` (groups of 32 where grouped) reading y,
// with a bias for even seeds unless `bias` says (0 none, 1 a bias).
// [s = a + b] -> y = rms_norm(s | a) -> three linears (int8 and int4 weights, N = c, 13, 40), and a
// later add of the norm's input to the first one's output (so the sum must be written, by the first
// linear's prologue). Outputs: that add, the other two linears.
ir::Graph PrologueGraph(int64_t c, bool add) {
  ir::Graph g;
  const int a = Add(g, "a", {ir::kSymbolicDim, c});
  g.inputs = {a};
  int x = a;
  if (add) {
    const int b = Add(g, "b", {ir::kSymbolicDim, c});
    g.inputs.push_back(b);
    x = Add(g, "s", {ir::kSymbolicDim, c});
    g.ops.push_back(gpu_test::MakeOp("add", ir::OpType::Add, {a, b}, {x}));
  }
  const std::vector<float> w = RandomFloats(size_t(c), 11, 0.3f);
  const int wt = Add(g, "w", {c});
  g.tensors[size_t(wt)].data = OwnBytes(w.data(), w.size() * 4);
  const int y = Add(g, "y", {ir::kSymbolicDim, c});
  g.ops.push_back(gpu_test::MakeOp("norm", ir::OpType::RmsNorm, {x, wt}, {y}));
  const int z1 = AddLinear(g, "l1", y, c, c, ir::Scheme::Q8CSW, 3);
  const int z2 = AddLinear(g, "l2", y, c, 13, ir::Scheme::Q4GSW, 4);
  const int z3 = AddLinear(g, "l3", y, c, 40, ir::Scheme::Q4GAW, 5);
  const int r = Add(g, "r", {ir::kSymbolicDim, c});
  g.ops.push_back(gpu_test::MakeOp("residual", ir::OpType::Add, {x, z1}, {r}));
  g.outputs = {r, z2, z3};
  return g;
}

// With --prologue-max-bytes (opt-in), one row: the rms_norm (and the residual add before it)
// computed in the GEMV prologue of every workgroup of each linear reading it, no dispatch of its
// own; the first linear writes the sum, which a later add reads. More rows, no limit given (the
// default), a limit below the reads, or kept intermediates: the row kernel as before. Against the
// reference either way.
TEST(RowFusion, NormInGemvPrologues) {
  auto profile = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(profile.ok());
  const bool fits = profile->max_per_stage_descriptor_storage_buffers >= 6;
  for (bool add : {true, false})
    for (int64_t c : {64, 1024})
      for (int64_t m : {1, 3})
        for (int limit = 0; limit < 4; ++limit) {  // 64 MiB; --prologue-max-bytes 1; kept intermediates; default
          const ir::Graph g = PrologueGraph(c, add);
          const std::string what = std::string(add ? "add+norm" : "norm") + " C " + std::to_string(c) + " M " +
                                   std::to_string(m) + " limit " + std::to_string(limit);
          CompileOptions o;
          o.tokens = {m};
          o.select.force_accum = linear::Accum::IntDot;
          if (limit < 3) o.select.prologue_max_bytes = limit == 1 ? 1 : 64ull << 20;
          o.keep_intermediates = limit == 2;
          auto bundle = CompileGraph(g, *profile, o, 0);
          ASSERT_TRUE(bundle.ok()) << bundle.error().message;
          std::map<std::string, std::vector<float>> in;
          Ran r;
          ASSERT_TRUE(RunBundle(g, *bundle, m, &r, &in)) << what;
          const bool prologue = fits && m == 1 && limit == 0;
          const size_t norm = add ? 1 : 0;
          EXPECT_EQ(r.variants[norm], prologue ? "fused" : add ? "add_rms_norm_f32_dq8ca" : "rms_norm_f32_dq8ca") << what;
          const std::string suffix = prologue ? (add ? "_gemv_rowq_addnorm" : "_gemv_rowq_norm") : "_gemv";
          for (size_t l = norm + 1; l < norm + 4; ++l) {
            const std::string& v = r.variants[l];
            EXPECT_EQ(v.substr(v.size() - std::min(v.size(), suffix.size())), suffix) << what << ": " << v;
          }
          Check(g, r, in, m, 2e-3, what);
          gpu_test::ExpectNoValidationMessages(what);
        }
}

// silu(a) * b -> three linears (int8 and int4 weights, N = c (24 past 1024), 13, 40) [and a silu of
// the product, an output: a reader that is not a linear]. Outputs: the linears [and that silu].
ir::Graph SwigluPrologueGraph(int64_t c, bool other_reader) {
  ir::Graph g;
  const int a = Add(g, "a", {ir::kSymbolicDim, c}), b = Add(g, "b", {ir::kSymbolicDim, c});
  g.inputs = {a, b};
  const int s = Add(g, "s", {ir::kSymbolicDim, c}), y = Add(g, "y", {ir::kSymbolicDim, c});
  g.ops.push_back(gpu_test::MakeOp("silu", ir::OpType::Silu, {a}, {s}));
  g.ops.push_back(gpu_test::MakeOp("mul", ir::OpType::Mul, {s, b}, {y}));
  g.outputs = {AddLinear(g, "l1", y, c, c > 1024 ? 24 : c, ir::Scheme::Q8CSW, 3), AddLinear(g, "l2", y, c, 13, ir::Scheme::Q4GSW, 4),
               AddLinear(g, "l3", y, c, 40, ir::Scheme::Q4GAW, 5)};
  if (other_reader) {
    const int e = Add(g, "e", {ir::kSymbolicDim, c});
    g.ops.push_back(gpu_test::MakeOp("silu2", ir::OpType::Silu, {y}, {e}));
    g.outputs.push_back(e);
  }
  return g;
}

// One row of silu(a) * b read only by int-dot GEMVs is computed in their prologues by default (the
// mul `fused`, no dispatch; the linears `_gemv_rowq_silu`). More rows, a limit below the two rows'
// reads (--prologue-max-bytes 1), kept intermediates, or a reader that is not a linear: the row
// kernel as before. Against the reference either way; the 1b model's down_proj width (K 8192) with
// 128 and 256 threads per GEMV workgroup too (mode 4: gemv_threads 256 in the profile).
TEST(RowFusion, SwigluInGemvPrologues) {
  auto base = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(base.ok());
  const bool fits = base->max_per_stage_descriptor_storage_buffers >= 4;
  for (int64_t c : {64, 1024, 8192})
    for (int64_t m : {1, 3})
      for (int mode = 0; mode < 5; ++mode) {  // default; --prologue-max-bytes 1; kept intermediates; other reader; 256 threads
        if (c == 8192 && mode != 0 && mode != 4) continue;
        if (mode == 4 && (c != 8192 || m != 1)) continue;
        TargetProfile profile = *base;
        if (mode == 4) profile.gemv_threads = std::min(256u, profile.max_compute_work_group_invocations);
        const ir::Graph g = SwigluPrologueGraph(c, mode == 3);
        const std::string what = "C " + std::to_string(c) + " M " + std::to_string(m) + " mode " + std::to_string(mode);
        CompileOptions o;
        o.tokens = {m};
        o.select.force_accum = linear::Accum::IntDot;
        if (mode == 1) o.select.prologue_max_bytes = 1;
        o.keep_intermediates = mode == 2;
        auto bundle = CompileGraph(g, profile, o, 0);
        ASSERT_TRUE(bundle.ok()) << bundle.error().message;
        std::map<std::string, std::vector<float>> in;
        Ran r;
        ASSERT_TRUE(RunBundle(g, *bundle, m, &r, &in)) << what;
        const bool prologue = fits && m == 1 && (mode == 0 || mode == 4);
        EXPECT_EQ(r.variants[0], "folded") << what;
        if (prologue)
          EXPECT_EQ(r.variants[1], "fused") << what;
        else
          EXPECT_EQ(r.variants[1].rfind("silu_mul_f32", 0), 0u) << what << ": " << r.variants[1];
        for (size_t l = 2; l < 5; ++l) {
          const std::string& v = r.variants[l];
          EXPECT_EQ(v.find("_gemv_rowq_silu") != std::string::npos, prologue) << what << ": " << v;
        }
        Check(g, r, in, m, 2e-3, what);
        gpu_test::ExpectNoValidationMessages(what);
      }
}

// x -> gate, up -> silu(gate) * up -> down (dq8ca q8csw, 24 outputs). gate and up: `w` weights
// with `act` activations, bias or none. `kind` 0: a pair; 1: up of another scheme; 2: gate's
// output also a graph output; 3: the mul's output also a graph output (still a pair).
ir::Graph GateUpGraph(int64_t c, int64_t f, ir::Scheme w, ir::Scheme act, bool bias, int kind) {
  ir::Graph g;
  const int x = Add(g, "x", {ir::kSymbolicDim, c});
  g.inputs = {x};
  auto linear = [&](const std::string& name, int in, int64_t k, int64_t n, ir::Scheme ws, ir::Scheme a, uint32_t seed) {
    return AddLinear(g, name, in, k, n, ws, seed, a, bias ? 1 : 0);
  };
  const int gate = linear("gate", x, c, f, w, act, 21);
  const int up = linear("up", x, c, f, kind == 1 ? (w == ir::Scheme::Q8CSW ? ir::Scheme::Q4GSW : ir::Scheme::Q8CSW) : w,
                        act, 22);
  const int s = Add(g, "s", {ir::kSymbolicDim, f}), h = Add(g, "h", {ir::kSymbolicDim, f});
  g.ops.push_back(gpu_test::MakeOp("silu", ir::OpType::Silu, {gate}, {s}));
  g.ops.push_back(gpu_test::MakeOp("mul", ir::OpType::Mul, {s, up}, {h}));
  g.outputs = {linear("down", h, f, 24, ir::Scheme::Q8CSW, ir::Scheme::DQ8CA, 23)};
  if (kind == 2) g.outputs.push_back(gate);
  if (kind == 3) g.outputs.push_back(h);
  return g;
}

// The gate and up linears of a gated MLP as one linear over their interleaved channels: the GEMV
// writes silu(gate) * up in its epilogue (`_swiglu`, the mul `fused`), other kernels the
// interleaved outputs for the mul's row kernel (`silu_mul_pairs_f32`, quantized for the int-dot
// down). Every weight scheme with int8 and float activations, with and without bias, M 1, 3 and
// 17, N odd (13: the last GEMV workgroup half full) and not, K 64 and 160, the target's choice and
// forced int dot, dequant and GEMM; and the graphs that must not pair. Against the reference.
TEST(RowFusion, GateUpPairs) {
  auto profile = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(profile.ok());
  struct Case {
    ir::Scheme w, act;
  };
  const Case cases[] = {{ir::Scheme::Q4GSW, ir::Scheme::DQ8CA}, {ir::Scheme::Q8CSW, ir::Scheme::DQ8CA},
                        {ir::Scheme::Q4GAW, ir::Scheme::DQ8CA}, {ir::Scheme::Q8GSW, ir::Scheme::DQ8CA},
                        {ir::Scheme::Q4GMW, ir::Scheme::DQ8CA}, {ir::Scheme::Q4GSW, ir::Scheme::Float},
                        {ir::Scheme::Q8CSW, ir::Scheme::Float}};
  int ran = 0;
  for (const Case& cs : cases)
    for (int64_t c : {64, 160})
      for (int64_t f : {13, 40})
        for (int64_t m : {1, 3, 17})
          for (int mode = 0; mode < 4; ++mode) {  // target's choice; int dot; dequant; GEMM
            const bool bias = (c + f + m + mode) % 2 == 0;
            if (cs.act == ir::Scheme::Float && mode == 1) continue;  // weight-only: no int path
            // q4gsw and q8csw with dq8ca (the decoders' schemes) in every mode at K 64; the other
            // schemes at N 13 with the target's choice and GEMM; K 160 for q4gsw likewise at N 13, 40.
            const bool main_scheme = cs.act == ir::Scheme::DQ8CA && (cs.w == ir::Scheme::Q4GSW || cs.w == ir::Scheme::Q8CSW);
            if (!main_scheme && (mode == 1 || mode == 2 || m == 3 || f != 13)) continue;
            if (c == 160 && (cs.w != ir::Scheme::Q4GSW || cs.act != ir::Scheme::DQ8CA || m == 3 || mode == 1 || mode == 2))
              continue;
            const ir::Graph g = GateUpGraph(c, f, cs.w, cs.act, bias, 0);
            const std::string what = std::string(ir::SchemeName(cs.w)) + (cs.act == ir::Scheme::Float ? " float" : " dq8ca") +
                                     " K " + std::to_string(c) + " N " + std::to_string(f) + " M " + std::to_string(m) +
                                     " mode " + std::to_string(mode) + (bias ? " bias" : "");
            CompileOptions o;
            o.tokens = {m};
            if (mode == 1) o.select.force_accum = linear::Accum::IntDot;
            if (mode == 2) o.select.force_accum = linear::Accum::Dequant;
            if (mode == 3) o.select.force_algo = linear::Algo::Gemm;
            auto bundle = CompileGraph(g, *profile, o, 0);
            ASSERT_TRUE(bundle.ok()) << what << ": " << bundle.error().message;
            std::map<std::string, std::vector<float>> in;
            Ran r;
            ASSERT_TRUE(RunBundle(g, *bundle, m, &r, &in)) << what;
            const bool gemv = r.variants[0].find("_gemv") != std::string::npos;
            if (mode == 3) {
              EXPECT_FALSE(gemv) << what << ": " << r.variants[0];
            }
            if (mode != 3 && m == 1) {
              EXPECT_TRUE(gemv) << what << ": " << r.variants[0];
            }
            EXPECT_EQ(r.variants[1], "fused") << what;
            EXPECT_EQ(r.variants[2], "folded") << what;
            EXPECT_EQ(r.variants[0].find("_swiglu") != std::string::npos, gemv) << what << ": " << r.variants[0];
            if (gemv)
              EXPECT_EQ(r.variants[3], "fused") << what;
            else
              EXPECT_EQ(r.variants[3].rfind("silu_mul_pairs_f32", 0), 0u) << what << ": " << r.variants[3];
            EXPECT_EQ(r.integer_path[1], r.integer_path[0]) << what;
            Check(g, r, in, m, 2e-3, what);
            gpu_test::ExpectNoValidationMessages(what);
            ++ran;
          }
  EXPECT_EQ(ran, 76);
  // Not a pair: up of another scheme, gate's output read by the graph too. Still a pair: the mul's
  // output a graph output as well. Kept intermediates: never (the two outputs would not exist).
  for (int kind = 1; kind < 5; ++kind)
    for (int64_t m : {1, 3}) {
      const ir::Graph g = GateUpGraph(64, 40, ir::Scheme::Q4GSW, ir::Scheme::DQ8CA, true, std::min(kind, 3));
      const std::string what = "kind " + std::to_string(kind) + " M " + std::to_string(m);
      CompileOptions o;
      o.tokens = {m};
      o.keep_intermediates = kind == 4;
      auto bundle = CompileGraph(g, *profile, o, 0);
      ASSERT_TRUE(bundle.ok()) << what << ": " << bundle.error().message;
      std::map<std::string, std::vector<float>> in;
      Ran r;
      ASSERT_TRUE(RunBundle(g, *bundle, m, &r, &in)) << what;
      const bool paired = kind == 3;
      EXPECT_EQ(r.variants[1] == "fused", paired) << what << ": " << r.variants[1];
      EXPECT_EQ(r.variants[0].find("_swiglu") != std::string::npos, paired) << what << ": " << r.variants[0];
      if (!paired) {
        EXPECT_EQ(r.variants[3].find("pairs"), std::string::npos) << what << ": " << r.variants[3];
      }
      Check(g, r, in, m, 2e-3, what);
      gpu_test::ExpectNoValidationMessages(what);
    }
}

// A gate/up pair at 8 rows with GPU rules (the test profile without cpu_device; with its pinned
// subgroup size and the tree): the int4 GEMV takes two row blocks of 4 (select.cc TwoRowBlocks)
// and its epilogue writes silu(gate) * up per row block; q4gsw and q4gaw, N 13 (a half-full last
// workgroup) and 40, against the reference; the bundle's detail names the row blocks.
TEST(RowFusion, GateUpPairsInTwoRowBlocks) {
  auto base = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(base.ok());
  auto& q = base->quirks;
  q.erase(std::remove(q.begin(), q.end(), "cpu_device"), q.end());
  TargetProfile tree = *base;
  tree.tuned_subgroup_size = 0;
  for (const TargetProfile* p : {&*base, &tree})
    for (ir::Scheme w : {ir::Scheme::Q4GSW, ir::Scheme::Q4GAW})
      for (int64_t f : {13, 40}) {
        const ir::Graph g = GateUpGraph(160, f, w, ir::Scheme::DQ8CA, f == 13, 0);
        const std::string what = std::string(ir::SchemeName(w)) + " N " + std::to_string(f) +
                                 (p == &tree ? " tree" : " subgroups");
        CompileOptions o;
        o.tokens = {8};
        o.select.force_accum = linear::Accum::IntDot;
        auto bundle = CompileGraph(g, *p, o, 0);
        ASSERT_TRUE(bundle.ok()) << what << ": " << bundle.error().message;
        int blocks = 0;
        for (const auto* layer : *fb::bundle::GetBundle(bundle->data() + 4)->programs()->Get(0)->layers())
          blocks += layer->detail()->str().find("2 row blocks side by side") != std::string::npos;
        EXPECT_EQ(blocks, 1) << what;  // the pair's GEMV (down is q8csw)
        std::map<std::string, std::vector<float>> in;
        Ran r;
        ASSERT_TRUE(RunBundle(g, *bundle, 8, &r, &in)) << what;
        EXPECT_NE(r.variants[0].find("_gemv_swiglu"), std::string::npos) << what << ": " << r.variants[0];
        Check(g, r, in, 8, 2e-3, what);
        gpu_test::ExpectNoValidationMessages(what);
      }
}

TEST(RowFusion, OnlyWhereTheRowIsComplete) {
  // A reader of the sum between the add and the norm keeps them apart.
  ir::Graph g = RowGraph(false, 64, false, true);
  const FoldPlan fold = FoldQuantization(g);
  const FusePlan p = FuseRows(g, fold);
  EXPECT_TRUE(p.empty());
  // silu read twice: not fused.
  ir::Graph h = RowGraph(true, 64, false);
  const int extra = Add(h, "e", {ir::kSymbolicDim, 64});
  h.ops.push_back(gpu_test::MakeOp("mul2", ir::OpType::Mul, {2, 1}, {extra}));
  h.outputs.push_back(extra);
  const FusePlan q = FuseRows(h, FoldQuantization(h));
  EXPECT_EQ(q.emitted_by[0], -1);
  Ran r;
  std::map<std::string, std::vector<float>> in;
  ASSERT_TRUE(CompileAndRun(g, 3, false, &r, &in));
  EXPECT_EQ(r.variants[0], "add_f32");
  Check(g, r, in, 3, 2e-6, "unfused add, silu, norm");
  gpu_test::ExpectNoValidationMessages("unfused");
}

}  // namespace
}  // namespace vkqc

namespace vkqc {
namespace {

// rope(q), rope(k) -> attention: one rope + append dispatch for prefill, the rope inside the decode
// kernel for one row (over two of its chunks); prefill then decode share the cache.
// On android-baseline-2022 (4 storage buffers per stage) the same graph runs unfused: rope, rope,
// the append and attention each within 4 storage buffers, the position a uniform buffer.
TEST(RowFusion, RopeAndAppendWithAttention) {
  for (const std::string& prof : {gpu_test::TestProfile(), std::string("android-baseline-2022")})
  for (bool interleaved : {false, true})
    for (bool f16 : {true, false}) {
      SCOPED_TRACE(prof);
      const int32_t hq = 8, hkv = 2, d = 64, s = 160;
      ir::Graph g;
      const int q = Add(g, "q", {ir::kSymbolicDim, hq * d}), k = Add(g, "k", {ir::kSymbolicDim, hkv * d});
      const int v = Add(g, "v", {ir::kSymbolicDim, hkv * d});
      const int pos = Add(g, "pos", {1});
      g.tensors[size_t(pos)].dtype = ir::DType::I32;
      const int qr = Add(g, "q_rot", {ir::kSymbolicDim, hq * d}), kr = Add(g, "k_rot", {ir::kSymbolicDim, hkv * d});
      const int kc = Add(g, "k_cache", {hkv, s, d}), vc = Add(g, "v_cache", {hkv, s, d});
      for (int c : {kc, vc}) {
        g.tensors[size_t(c)].state = true;
        g.tensors[size_t(c)].dtype = f16 ? ir::DType::F16 : ir::DType::F32;
      }
      const int y = Add(g, "y", {ir::kSymbolicDim, hq * d});
      ir::RopeAttrs ra;
      ra.head_dim = d;
      ra.theta = 500000.0f;
      ra.interleaved = interleaved;
      ra.max_positions = s;
      ra.llama3 = true;
      ra.factor = 32.0f;
      g.ops.push_back(gpu_test::MakeOp("rope_q", ir::OpType::Rope, {q, pos}, {qr}));
      g.ops.back().rope = ra;
      g.ops.push_back(gpu_test::MakeOp("rope_k", ir::OpType::Rope, {k, pos}, {kr}));
      g.ops.back().rope = ra;
      g.ops.push_back(gpu_test::MakeOp("attn", ir::OpType::Attention, {qr, kr, v, kc, vc, pos}, {y}));
      g.ops.back().attention = {hq, hkv, d, 0.0f};
      g.inputs = {q, k, v, pos};
      g.outputs = {y};
      auto profile = LoadProfile(prof);
      ASSERT_TRUE(profile.ok());
      const bool fuses = profile->max_per_stage_descriptor_storage_buffers >= 8;
      CompileOptions o;
      o.tokens = {1, 3, 13};
      auto bundle = CompileGraph(g, *profile, o, 0);
      ASSERT_TRUE(bundle.ok()) << bundle.error().message;
      gpu_test::Loaded l;
      vkqc_model_options mo;
      vkqc_model_options_init(&mo);
      mo.poison_memory = 1;
      ASSERT_EQ(vkqc_model_load(gpu_test::Context(), bundle->data(), bundle->size(), &mo, &l.model), VKQC_OK);
      std::map<std::string, std::vector<float>> state;
      int32_t at = 0;
      // four prefills to position 52, then decode steps of one and three rows (batched /
      // speculative decoding) over two chunks of the decode kernel: 62..64 crosses 64
      for (uint32_t tokens : {13u, 13u, 13u, 13u, 3u, 1u, 3u, 3u, 3u, 1u, 1u, 13u, 1u}) {
        uint32_t prog = 0;
        ASSERT_EQ(vkqc_model_find_program(l.model, tokens, &prog), VKQC_OK);
        vkqc_layer_info li;
        vkqc_model_layer_info(l.model, prog, 0, &li);
        if (fuses) {
          EXPECT_STREQ(li.variant, "fused");
        } else {
          EXPECT_STRNE(li.variant, "fused");
        }
        vkqc_model_layer_info(l.model, prog, 2, &li);
        if (fuses && tokens <= 3) {
          EXPECT_EQ(std::string(li.variant).rfind("attention_decode", 0), 0u) << li.variant;
        }
        const auto qv = RandomFloats(tokens * hq * d, tokens + at), kv = RandomFloats(tokens * hkv * d, tokens + at + 1),
                   vv = RandomFloats(tokens * hkv * d, tokens + at + 2);
        const std::vector<float>* in[3] = {&qv, &kv, &vv};
        for (uint32_t i = 0; i < 3; ++i)
          ASSERT_EQ(vkqc_model_write_input(l.model, prog, i, in[i]->data(), in[i]->size() * 4), VKQC_OK);
        ASSERT_EQ(vkqc_model_run(l.model, prog), VKQC_OK) << vkqc_last_error();
        std::vector<float> got(tokens * hq * d);
        ASSERT_EQ(vkqc_model_read_output(l.model, prog, 0, got.data(), got.size() * 4), VKQC_OK);
        ref::RunOptions ro;
        ro.tokens = tokens;
        ro.int32_inputs["pos"] = {at};
        ro.state = &state;
        auto want = ref::RunGraph(g, {{"q", qv}, {"k", kv}, {"v", vv}, {"pos", {float(at)}}}, ro);
        ASSERT_TRUE(want.ok()) << want.error().message;
        double e = 0;
        for (size_t i = 0; i < got.size(); ++i)
          e = std::max(e, std::fabs(double(got[i]) - want->at("y")[i]) / (std::fabs(want->at("y")[i]) + 0.1));
        EXPECT_LE(e, 2e-5) << (interleaved ? "interleaved" : "half") << (f16 ? " f16" : " f32") << " run of " << tokens;
        at += int32_t(tokens);
      }
      gpu_test::ExpectNoValidationMessages("rope + append");
    }
}


// One row on the int-dot path of a GPU profile (the device under test's profile without the
// cpu_device quirk, so lavapipe runs the GPU shapes too): GEMVs of 2 channels with threads and units
// by K, and 256 threads x 4 channels where each workgroup quantizes a row of K >= 8192 itself
// (linear::ForRowPrologue). Each layer reads a float row: quantized in its prologue, or (a limit
// of 1 byte) by a quantize dispatch. N ragged (13, 37) and aligned; against the reference.
TEST(RowFusion, OneRowGemvShapesOnGpuProfiles) {
  auto profile = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(profile.ok());
  auto& q = profile->quirks;
  q.erase(std::remove(q.begin(), q.end(), "cpu_device"), q.end());
  struct Case {
    int64_t k, n;
    ir::Scheme w;
  };
  for (const Case& cc : {Case{2048, 2048, ir::Scheme::Q4GSW}, Case{8192, 40, ir::Scheme::Q4GSW},
                         Case{8192, 13, ir::Scheme::Q4GAW}, Case{2048, 37, ir::Scheme::Q8CSW}})
    for (bool prologue : {true, false}) {
      ir::Graph g;
      const int a = Add(g, "a", {ir::kSymbolicDim, cc.k});
      g.inputs = {a};
      g.outputs = {AddLinear(g, "l", a, cc.k, cc.n, cc.w, uint32_t(cc.n))};
      const std::string what = "K " + std::to_string(cc.k) + " N " + std::to_string(cc.n) +
                               (prologue ? " prologue" : " quantize dispatch");
      CompileOptions o;
      o.tokens = {1};
      o.select.force_accum = linear::Accum::IntDot;
      o.select.prologue_max_bytes = prologue ? 64ull << 20 : 1;
      const linear::LinearShape s = [&] {
        linear::LinearShape sh;
        sh.m = 1, sh.k = cc.k, sh.n = cc.n, sh.act = ir::Scheme::DQ8CA, sh.weights = cc.w;
        sh.group_size = cc.w == ir::Scheme::Q8CSW ? 0 : 32;
        return sh;
      }();
      auto sel = linear::SelectLinear(s, *profile, o.select);
      ASSERT_TRUE(sel.ok());
      const linear::LinearChoice c = prologue ? linear::ForRowPrologue(s, *profile, *sel) : *sel;
      EXPECT_EQ(c.nr, prologue && cc.k >= 8192 ? 4u : 2u) << what;
      EXPECT_EQ(c.threads, std::min(prologue && cc.k >= 8192 ? 256u : cc.k >= 8192 || cc.w == ir::Scheme::Q8CSW ? 128u : 64u,
                                    profile->max_compute_work_group_invocations)) << what;
      auto bundle = CompileGraph(g, *profile, o, 0);
      ASSERT_TRUE(bundle.ok()) << bundle.error().message;
      std::map<std::string, std::vector<float>> in;
      Ran r;
      ASSERT_TRUE(RunBundle(g, *bundle, 1, &r, &in)) << what;
      const std::string& v = r.variants.back();
      EXPECT_EQ(v.find("_rowq") != std::string::npos, prologue) << what << ": " << v;
      Check(g, r, in, 1, 2e-3, what);
      gpu_test::ExpectNoValidationMessages(what);
    }
}


// a -> l0 (K 96, N c, `w`) -> [s = add(l0, r) (operands in either order)] -> rms_norm -> l1 (N 24,
// q8csw), l2 (N 13, q4gsw), both dq8ca unless `float_readers`. Outputs: [s,] l1, l2. With
// `late_residual`, r is computed (silu of an input) after l0 in graph order.
ir::Graph TailGraph(int64_t c, bool add, ir::Scheme w, bool float_readers, bool residual_first, bool late_residual) {
  ir::Graph g;
  const int a = Add(g, "a", {ir::kSymbolicDim, 96});
  g.inputs = {a};
  int r = -1;
  if (add) {
    r = Add(g, "r", {ir::kSymbolicDim, c});
    g.inputs.push_back(r);
  }
  const int z0 = AddLinear(g, "l0", a, 96, c, w, 7);
  int x = z0;
  if (add) {
    if (late_residual) {
      const int rs = Add(g, "r_silu", {ir::kSymbolicDim, c});
      g.ops.push_back(gpu_test::MakeOp("silu", ir::OpType::Silu, {r}, {rs}));
      r = rs;
    }
    x = Add(g, "s", {ir::kSymbolicDim, c});
    g.ops.push_back(gpu_test::MakeOp("add", ir::OpType::Add, residual_first ? std::vector<int>{r, z0} : std::vector<int>{z0, r}, {x}));
    g.outputs.push_back(x);
  }
  const std::vector<float> gw = RandomFloats(size_t(c), 13, 0.3f);
  const int gt = Add(g, "gamma", {c});
  g.tensors[size_t(gt)].data = OwnBytes(gw.data(), gw.size() * 4);
  const int y = Add(g, "y", {ir::kSymbolicDim, c});
  g.ops.push_back(gpu_test::MakeOp("norm", ir::OpType::RmsNorm, {x, gt}, {y}));
  const ir::Scheme act = float_readers ? ir::Scheme::Float : ir::Scheme::DQ8CA;
  g.outputs.push_back(AddLinear(g, "l1", y, c, 24, ir::Scheme::Q8CSW, 3, act));
  g.outputs.push_back(AddLinear(g, "l2", y, c, 13, ir::Scheme::Q4GSW, 4, act));
  return g;
}

// The norm tail (compiler/kernels/norm/tail.h, `--norm-tail`): one row, the rms_norm (and the residual add fused
// into it) computed by the last workgroup of the GEMV producing its input: the norm `fused`, the
// GEMV `..._gemv[_rowq]_addnorm_tail` / `_norm_tail`, a 16-byte sync state in this stateless bundle.
// Row lengths 64, 160 (the add's operands the other way round) and 2048 (16 words per invocation at 32),
// the dot and the dequant path, quantizing and float readers, on the test profile and on its GPU
// shapes (cpu_device quirk removed). Three runs of new inputs per bundle against the reference (the
// counter goes back to 0 after each). Not taken: 3 rows, kept intermediates, a residual computed
// after the linear, the option off (the default).
TEST(RowFusion, NormTailInTheProducingGemv) {
  auto test_profile = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(test_profile.ok());
  TargetProfile gpu_shapes = *test_profile;
  auto& q = gpu_shapes.quirks;
  q.erase(std::remove(q.begin(), q.end(), "cpu_device"), q.end());
  struct Case {
    int64_t c, m;
    bool add, dot, float_readers, keep, late, gpu;
    ir::Scheme w;
    bool off = false;
  };
  std::vector<Case> cases;
  for (int64_t c : {64, 160, 2048})
    for (bool add : {true, false})
      for (bool dot : {true, false}) cases.push_back({c, 1, add, dot, false, false, false, c == 2048, ir::Scheme::Q4GSW});
  cases.push_back({64, 1, true, true, true, false, false, false, ir::Scheme::Q8CSW});   // float readers
  cases.push_back({64, 1, true, true, false, false, false, true, ir::Scheme::Q8CSW});   // GPU shapes, int8
  cases.push_back({64, 3, true, true, false, false, false, false, ir::Scheme::Q4GSW});  // 3 rows
  cases.push_back({64, 1, true, true, false, true, false, false, ir::Scheme::Q4GSW});   // kept intermediates
  cases.push_back({64, 1, true, true, false, false, true, false, ir::Scheme::Q4GSW});   // late residual
  cases.push_back({64, 1, true, true, false, false, false, true, ir::Scheme::Q4GSW, true});  // not asked for
  for (const Case& cc : cases) {
    const ir::Graph g = TailGraph(cc.c, cc.add, cc.w, cc.float_readers, cc.c == 160, cc.late);
    const std::string what = "C " + std::to_string(cc.c) + " M " + std::to_string(cc.m) + (cc.add ? " add" : "") +
                             (cc.dot ? " dot" : " dequant") + (cc.float_readers ? " float readers" : "") +
                             (cc.keep ? " kept" : "") + (cc.late ? " late residual" : "") + (cc.gpu ? " gpu shapes" : "");
    CompileOptions o;
    o.tokens = {cc.m};
    if (cc.dot) o.select.force_accum = linear::Accum::IntDot;
    o.keep_intermediates = cc.keep;
    o.norm_tail = !cc.off;
    auto bundle = CompileGraph(g, cc.gpu ? gpu_shapes : *test_profile, o, 0);
    ASSERT_TRUE(bundle.ok()) << bundle.error().message;
    const bool tail = cc.m == 1 && !cc.keep && !cc.late && !cc.off;
    gpu_test::Loaded l;
    vkqc_model_options mo;
    vkqc_model_options_init(&mo);
    mo.poison_memory = 1;
    ASSERT_EQ(vkqc_model_load(gpu_test::Context(), bundle->data(), bundle->size(), &mo, &l.model), VKQC_OK)
        << what << ": " << vkqc_last_error();
    ASSERT_EQ(vkqc_model_state_count(l.model), tail ? 1u : 0u) << what;
    for (uint32_t run = 0; run < 3; ++run) {
      Ran r;
      std::map<std::string, std::vector<float>> in;
      for (uint32_t i = 0; i < g.inputs.size(); ++i) {
        const auto& v = in[g.tensors[size_t(g.inputs[i])].name] =
            RandomFloats(size_t(cc.m * g.tensors[size_t(g.inputs[i])].shape[1]), 40 + 3 * run + i, 2.0f);
        ASSERT_EQ(vkqc_model_write_input(l.model, 0, i, v.data(), v.size() * 4), VKQC_OK);
      }
      ASSERT_EQ(vkqc_model_run(l.model, 0), VKQC_OK) << vkqc_last_error();
      for (uint32_t i = 0; i < vkqc_model_output_count(l.model, 0); ++i) {
        vkqc_tensor_info info;
        vkqc_model_output_info(l.model, 0, i, &info);
        std::vector<float> v(info.size_bytes / 4);
        ASSERT_EQ(vkqc_model_read_output(l.model, 0, i, v.data(), info.size_bytes), VKQC_OK);
        r.out[info.name] = std::move(v);
      }
      for (uint32_t i = 0; i < vkqc_model_layer_count(l.model, 0); ++i) {
        vkqc_layer_info li;
        vkqc_model_layer_info(l.model, 0, i, &li);
        r.variants.push_back(li.variant);
        r.integer_path.push_back(li.integer_path != 0);
      }
      const size_t norm = cc.add ? (cc.late ? 3 : 2) : 1;
      const std::string& l0 = r.variants[0];
      const std::string suffix = cc.add ? "_addnorm_tail" : "_norm_tail";
      EXPECT_EQ(l0.size() > suffix.size() && l0.compare(l0.size() - suffix.size(), suffix.size(), suffix) == 0, tail)
          << what << ": " << l0;
      EXPECT_EQ(r.variants[norm] == "fused", tail) << what << ": " << r.variants[norm];
      Check(g, r, in, cc.m, 2e-3, what + " run " + std::to_string(run));
    }
    gpu_test::ExpectNoValidationMessages(what);
  }
}

}  // namespace
}  // namespace vkqc
