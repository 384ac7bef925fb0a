// The CNN glue ops on the device against the CPU reference (validation on, memory poisoned before
// each run): max_pool2d, concat, sigmoid / hard_sigmoid / hard_swish, mul with broadcasting,
// resize_nearest and softmax, over odd and aligned shapes (C = 1, 3, 5, 16, 17, 1000; odd H and W;
// a batch of 1), random inputs with fixed seeds, each also compiled for the 4-storage-buffer
// targets (android-baseline-2022, mali-valhall) and run here. Tolerances: int8 exact (the kernels
// requantize with the reference's fp32 formula; DESIGN 6 allows 1); max, concat and resize exact;
// float activations within 2e-6 of max(1, |ref|), softmax within 1e-6 absolute (outputs <= 1).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "compiler/graph/synthetic.h"
#include "compiler/passes/pipeline.h"
#include "gpu_fixture.h"
#include "reference/reference.h"

namespace vkqc {
namespace {

constexpr int64_t S = ir::kSymbolicDim;
const char* const kFourBufferTargets[] = {"android-baseline-2022", "mali-valhall"};

ir::Quant Q8(ir::Scheme s, float scale, int32_t zp) { return ir::Quant{s, {scale}, {zp}, 0, 0}; }

// A graph with its input values.
struct G {
  ir::Graph g;
  std::map<std::string, std::vector<float>> in;
  uint32_t seed = 1;
  int Tensor(const std::string& name, std::vector<int64_t> shape, ir::DType dt = ir::DType::F32,
             std::optional<ir::Quant> q = {}) {
    g.tensors.push_back({name, std::move(shape), dt, std::move(q), {}});
    return int(g.tensors.size() - 1);
  }
  // A graph input with random values (f32 normal of `stddev`; i8 uniform codes), `rows` for the
  // symbolic dimension.
  int Input(const std::string& name, std::vector<int64_t> shape, ir::DType dt = ir::DType::F32,
            std::optional<ir::Quant> q = {}, float stddev = 1.5f, int64_t rows = 3) {
    const int t = Tensor(name, shape, dt, q);
    g.inputs.push_back(t);
    const size_t n = size_t(g.tensors[size_t(t)].NumElements(rows));
    std::mt19937 rng(seed * 7919u + 17u);
    if (dt == ir::DType::I8) {
      for (size_t i = 0; i < n; ++i) in[name].push_back(float(int(rng() % 256) - 128));
    } else {
      in[name] = testing_graphs::RandomFloats(n, seed * 31u + 5u, stddev);
    }
    ++seed;
    return t;
  }
  ir::Op& Op(const std::string& name, ir::OpType type, std::vector<int> ins, std::vector<int> outs) {
    g.ops.push_back(gpu_test::MakeOp(name.c_str(), type, std::move(ins), std::move(outs)));
    return g.ops.back();
  }
};

struct Ran {
  std::vector<uint8_t> out;  // output 0 as the device wrote it
  std::vector<std::string> variants;
};

// Compiles `c` for `profile` (tokens 3 when symbolic), runs it with poisoned memory and returns
// output 0.
::testing::AssertionResult Run(const G& c, const std::string& profile, Ran* r) {
  auto p = LoadProfile(profile);
  if (!p.ok()) return ::testing::AssertionFailure() << p.error().message;
  CompileOptions o;
  if (c.g.HasSymbolicDim()) o.tokens = {3};
  auto bundle = CompileGraph(c.g, *p, o, 0);
  if (!bundle.ok()) return ::testing::AssertionFailure() << profile << ": " << bundle.error().message;
  gpu_test::Loaded l;
  vkqc_model_options mo;
  vkqc_model_options_init(&mo);
  mo.poison_memory = 1;
  if (vkqc_model_load(gpu_test::Context(), bundle->data(), bundle->size(), &mo, &l.model) != VKQC_OK)
    return ::testing::AssertionFailure() << "load: " << vkqc_last_error();
  for (size_t i = 0; i < c.g.inputs.size(); ++i) {
    const ir::Tensor& t = c.g.tensors[size_t(c.g.inputs[i])];
    const std::vector<float>& v = c.in.at(t.name);
    std::vector<uint8_t> b;
    if (t.dtype == ir::DType::I8) {
      for (float x : v) b.push_back(uint8_t(int8_t(x)));
    } else {
      b.resize(v.size() * 4);
      std::memcpy(b.data(), v.data(), b.size());
    }
    if (vkqc_model_write_input(l.model, 0, uint32_t(i), b.data(), b.size()) != VKQC_OK)
      return ::testing::AssertionFailure() << "write_input: " << vkqc_last_error();
  }
  vkqc_tensor_info info;
  if (vkqc_model_output_info(l.model, 0, 0, &info) != VKQC_OK)
    return ::testing::AssertionFailure() << vkqc_last_error();
  void* mapped = nullptr;
  if (vkqc_model_map_output(l.model, 0, 0, &mapped) != VKQC_OK || !mapped)
    return ::testing::AssertionFailure() << "map_output: " << vkqc_last_error();
  uint8_t first = 0;
  std::memcpy(&first, mapped, 1);
  if (first != 0xFF) return ::testing::AssertionFailure() << "output was not poisoned";
  if (vkqc_model_run(l.model, 0) != VKQC_OK) return ::testing::AssertionFailure() << "run: " << vkqc_last_error();
  r->out.resize(info.size_bytes);
  if (vkqc_model_read_output(l.model, 0, 0, r->out.data(), r->out.size()) != VKQC_OK)
    return ::testing::AssertionFailure() << vkqc_last_error();
  r->variants.clear();
  for (uint32_t i = 0; i < vkqc_model_layer_count(l.model, 0); ++i) {
    vkqc_layer_info li;
    vkqc_model_layer_info(l.model, 0, i, &li);
    r->variants.push_back(li.variant);
  }
  return ::testing::AssertionSuccess();
}

// Runs `c` on the test profile and on the 4-storage-buffer targets and compares output 0 with
// the reference: int8 within `lsb`, float within `tol` * max(1, |ref|) (abs_tol: `tol` absolute).
void Check(const G& c, const std::string& what, int lsb = 0, double tol = 0.0, bool abs_tol = false,
           std::vector<std::string>* variants = nullptr) {
  ref::RunOptions ro;
  ro.tokens = c.g.HasSymbolicDim() ? 3 : 0;
  auto want = ref::RunGraph(c.g, c.in, ro);
  ASSERT_TRUE(want.ok()) << what << ": " << want.error().message;
  const ir::Tensor& yt = c.g.tensors[size_t(c.g.outputs[0])];
  const std::vector<float>& r = want->at(yt.name);
  std::vector<std::string> profiles{gpu_test::TestProfile()};
  for (const char* t : kFourBufferTargets) profiles.push_back(t);
  for (const std::string& prof : profiles) {
    const std::string at = what + " [" + prof + "]";
    Ran ran;
    ASSERT_TRUE(Run(c, prof, &ran)) << at;
    if (variants && prof == profiles[0]) *variants = ran.variants;
    if (yt.dtype == ir::DType::I8) {
      ASSERT_EQ(ran.out.size(), r.size()) << at;
      int worst = 0;
      for (size_t i = 0; i < r.size(); ++i) worst = std::max(worst, std::abs(int(int8_t(ran.out[i])) - int(r[i])));
      EXPECT_LE(worst, lsb) << at;
    } else {
      ASSERT_EQ(ran.out.size(), r.size() * 4) << at;
      std::vector<float> got(r.size());
      std::memcpy(got.data(), ran.out.data(), ran.out.size());
      double worst = 0;
      size_t at_i = 0;
      for (size_t i = 0; i < r.size(); ++i) {
        ASSERT_TRUE(std::isfinite(got[i])) << at << " [" << i << "] = " << got[i];
        const double e = std::fabs(double(got[i]) - r[i]) / (abs_tol ? 1.0 : std::max(1.0, double(std::fabs(r[i]))));
        if (e > worst) worst = e, at_i = i;
      }
      EXPECT_LE(worst, tol) << at << " at " << at_i << ": " << got[at_i] << " vs " << r[at_i];
    }
    gpu_test::ExpectNoValidationMessages(at);
  }
}

std::string Shape(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i)
    t += (i ? ", " : "") + (s[i] == S ? std::string("tokens") : std::to_string(s[i]));
  return t + "]";
}

// ---- max_pool2d ------------------------------------------------------------------------------
struct PoolCase {
  int64_t n, h, w, c;
  int32_t kh, kw, sh, sw, pad[4];
  bool global;
};

TEST(CnnOps, MaxPoolMatchesReference) {
  const PoolCase cases[] = {
      {2, 7, 9, 5, 3, 3, 2, 2, {1, 1, 1, 1}, false},   {1, 15, 15, 17, 3, 3, 2, 2, {1, 1, 1, 1}, false},
      {1, 8, 8, 16, 2, 2, 2, 2, {0, 0, 0, 0}, false},  {2, 5, 7, 3, 2, 3, 1, 2, {1, 0, 1, 2}, false},
      {1, 9, 5, 1, 5, 5, 3, 1, {2, 2, 2, 2}, false},   {2, 7, 9, 5, 0, 0, 1, 1, {0, 0, 0, 0}, true},
      {1, 13, 11, 16, 0, 0, 1, 1, {0, 0, 0, 0}, true},
  };
  uint32_t seed = 1;
  for (const PoolCase& pc : cases)
    for (int mode = 0; mode < 3; ++mode) {  // f32; i8 requantized; i8 with the input's quant (a copy)
      G c;
      c.seed = seed++;
      const bool int8 = mode > 0;
      const ir::Quant xq = Q8(ir::Scheme::Q8TA, 0.05f, -3);
      const ir::Quant oq = mode == 2 ? Q8(ir::Scheme::Q8TO, 0.05f, -3) : Q8(ir::Scheme::Q8TO, 0.037f, 6);
      const int x =
          int8 ? c.Input("x", {pc.n, pc.h, pc.w, pc.c}, ir::DType::I8, xq) : c.Input("x", {pc.n, pc.h, pc.w, pc.c});
      const int64_t oh = pc.global ? 1 : (pc.h + pc.pad[0] + pc.pad[2] - pc.kh) / pc.sh + 1;
      const int64_t ow = pc.global ? 1 : (pc.w + pc.pad[1] + pc.pad[3] - pc.kw) / pc.sw + 1;
      const int y = c.Tensor("y", {pc.n, oh, ow, pc.c}, int8 ? ir::DType::I8 : ir::DType::F32,
                             int8 ? std::optional<ir::Quant>(oq) : std::nullopt);
      ir::Pool2dAttrs& a = c.Op("pool", ir::OpType::MaxPool2d, {x}, {y}).pool;
      a.global = pc.global;
      if (!pc.global) {
        a.kernel[0] = pc.kh, a.kernel[1] = pc.kw, a.stride[0] = pc.sh, a.stride[1] = pc.sw;
        std::copy(pc.pad, pc.pad + 4, a.padding);
      }
      if (int8) a.output_quant = oq;
      c.g.outputs = {y};
      const std::string what = "max_pool2d " + Shape({pc.n, pc.h, pc.w, pc.c}) + " mode " + std::to_string(mode);
      std::vector<std::string> v;
      Check(c, what, 0, 0.0, false, &v);
      ASSERT_FALSE(v.empty());
      EXPECT_EQ(v[int8 ? 1 : 0],
                std::string(pc.global ? "global_max_pool" : "max_pool2d") + (int8 ? "_q8ta_q8to" : "_f32"))
          << what;
    }
}

// ---- concat ----------------------------------------------------------------------------------
// Inputs [N, H, W, C_i] concatenated along the channels (odd and aligned counts, so int8 words are
// shared by two or three inputs), and along H and W; f32 and int8 (each input its own scale).
TEST(CnnOps, ConcatMatchesReference) {
  struct Cc {
    int32_t axis;
    std::vector<int64_t> lens;
  };
  const Cc cases[] = {{-1, {3, 5, 17}},
                      {3, {1, 2, 1, 3, 1}},
                      {-1, {16, 8, 4}},
                      {-1, {1000, 3}},
                      {-1, {2, 1, 1, 2, 4, 3, 5}},  // seven inputs: seven dispatches
                      {1, {3, 1, 2}},
                      {2, {4, 5}},
                      {0, {1, 2}},
                      {-1, {6}}};
  uint32_t seed = 100;
  for (const Cc& cc : cases)
    for (bool int8 : {false, true}) {
      G c;
      c.seed = seed++;
      const size_t ax = size_t(cc.axis < 0 ? cc.axis + 4 : cc.axis);
      const std::vector<int64_t> base{2, 3, 5, 7};
      std::vector<int64_t> ys = base;
      ys[ax] = 0;
      std::vector<int> ins;
      for (size_t i = 0; i < cc.lens.size(); ++i) {
        std::vector<int64_t> s = base;
        s[ax] = cc.lens[i];
        ys[ax] += cc.lens[i];
        // Input 1 has the output's parameters (copied), the others are requantized.
        const ir::Quant q = i == 1 ? Q8(ir::Scheme::Q8TA, 0.04f, -1)
                                   : Q8(ir::Scheme::Q8TA, 0.02f + 0.007f * float(i), int32_t(i % 5) - 2);
        std::string name = "x";
        name += std::to_string(i);
        ins.push_back(int8 ? c.Input(name, s, ir::DType::I8, q) : c.Input(name, s));
      }
      const ir::Quant oq = Q8(ir::Scheme::Q8TO, 0.04f, -1);
      const int y =
          c.Tensor("y", ys, int8 ? ir::DType::I8 : ir::DType::F32, int8 ? std::optional<ir::Quant>(oq) : std::nullopt);
      ir::ConcatAttrs& a = c.Op("concat", ir::OpType::Concat, ins, {y}).concat;
      a.axis = cc.axis;
      if (int8) a.output_quant = oq;
      c.g.outputs = {y};
      Check(c,
            std::string("concat ") + (int8 ? "i8" : "f32") + " axis " + std::to_string(cc.axis) + " into " + Shape(ys));
    }
}

// Channel concat of int8 tensors that feeds another int8 op: the padding of the packed rows is
// what a reader sees (a max_pool2d reads whole words).
TEST(CnnOps, ConcatFeedsInt8Op) {
  G c;
  const int a = c.Input("a", {1, 5, 5, 3}, ir::DType::I8, Q8(ir::Scheme::Q8TA, 0.05f, 2));
  const int b = c.Input("b", {1, 5, 5, 6}, ir::DType::I8, Q8(ir::Scheme::Q8TA, 0.03f, -4));
  const ir::Quant mq = Q8(ir::Scheme::Q8TO, 0.05f, 2);
  const int m = c.Tensor("m", {1, 5, 5, 9}, ir::DType::I8, mq);
  ir::Op& cat = c.Op("concat", ir::OpType::Concat, {a, b}, {m});
  cat.concat.output_quant = mq;
  const int y = c.Tensor("y", {1, 3, 3, 9}, ir::DType::I8, mq);
  ir::Pool2dAttrs& p = c.Op("pool", ir::OpType::MaxPool2d, {m}, {y}).pool;
  p.kernel[0] = p.kernel[1] = 3, p.stride[0] = p.stride[1] = 2;
  for (int32_t& v : p.padding) v = 1;
  p.output_quant = mq;
  c.g.outputs = {y};
  Check(c, "concat -> max_pool2d");
}

// A symbolic batch: the concat's outer dimension is the program's token count.
TEST(CnnOps, ConcatWithSymbolicBatch) {
  for (bool int8 : {false, true}) {
    G c;
    c.seed = 150 + int8;
    const ir::Quant qa = Q8(ir::Scheme::Q8TA, 0.05f, 2), qb = Q8(ir::Scheme::Q8TA, 0.03f, -4),
                    oq = Q8(ir::Scheme::Q8TO, 0.04f, 0);
    const int a = int8 ? c.Input("a", {S, 3, 5}, ir::DType::I8, qa) : c.Input("a", {S, 3, 5});
    const int b = int8 ? c.Input("b", {S, 3, 7}, ir::DType::I8, qb) : c.Input("b", {S, 3, 7});
    const int y = int8 ? c.Tensor("y", {S, 3, 12}, ir::DType::I8, oq) : c.Tensor("y", {S, 3, 12});
    ir::Op& op = c.Op("concat", ir::OpType::Concat, {a, b}, {y});
    if (int8) op.concat.output_quant = oq;
    c.g.outputs = {y};
    Check(c, std::string("concat [tokens, 3, 5 + 7] ") + (int8 ? "i8" : "f32"));
  }
}

// dequantize -> quantize after a max_pool2d or a concat, with parameters inside the old range: the
// fold pass makes the op requantize to them directly (one rounding instead of two, within 1 LSB of
// the graph as written). A 1x1 resize reads the result (a graph output is never folded away).
TEST(CnnOps, FoldsRequantizationIntoMaxPoolAndConcat) {
  for (bool concat : {false, true}) {
    G c;
    c.seed = 170 + concat;
    const ir::Quant xq = Q8(ir::Scheme::Q8TA, 0.05f, 3), mid = Q8(ir::Scheme::Q8TO, 0.04f, -2),
                    re = Q8(ir::Scheme::Q8TA, 0.035f, -1);
    const int x = c.Input("x", {1, 7, 9, 5}, ir::DType::I8, xq);
    int p;
    if (concat) {
      const int x2 = c.Input("x2", {1, 7, 9, 3}, ir::DType::I8, Q8(ir::Scheme::Q8TA, 0.03f, 0));
      p = c.Tensor("p", {1, 7, 9, 8}, ir::DType::I8, mid);
      c.Op("op", ir::OpType::Concat, {x, x2}, {p}).concat.output_quant = mid;
    } else {
      p = c.Tensor("p", {1, 4, 5, 5}, ir::DType::I8, mid);
      ir::Pool2dAttrs& a = c.Op("op", ir::OpType::MaxPool2d, {x}, {p}).pool;
      a.kernel[0] = a.kernel[1] = 3, a.stride[0] = a.stride[1] = 2;
      for (int32_t& v : a.padding) v = 1;
      a.output_quant = mid;
    }
    const std::vector<int64_t> ps = c.g.tensors[size_t(p)].shape;
    const int f = c.Tensor("f", ps);
    c.Op("dq", ir::OpType::Dequantize, {p}, {f});
    const int q = c.Tensor("q", ps, ir::DType::I8, re);
    c.Op("q", ir::OpType::Quantize, {f}, {q});
    const int y = c.Tensor("y", ps, ir::DType::I8, re);  // a reader, so q is no graph output
    c.Op("copy", ir::OpType::ResizeNearest, {q}, {y}).resize = {{1, 1}};
    c.g.outputs = {y};
    std::vector<std::string> v;
    Check(c, concat ? "concat -> dequantize -> quantize" : "max_pool2d -> dequantize -> quantize", 1, 0.0, false, &v);
    const size_t first = concat ? 2 : 1;  // after the input repacks
    ASSERT_GE(v.size(), first + 3);
    EXPECT_EQ(v[first + 1], "folded");
    EXPECT_EQ(v[first + 2], "folded");
  }
}

// ---- sigmoid, hard_sigmoid, hard_swish -------------------------------------------------------
TEST(CnnOps, ActivationsMatchReference) {
  const std::vector<std::vector<int64_t>> shapes{{1}, {5}, {S, 1000}, {2, 7, 9, 17}, {1, 4099}, {4, 64}};
  uint32_t seed = 200;
  for (ir::OpType t : {ir::OpType::Sigmoid, ir::OpType::HardSigmoid, ir::OpType::HardSwish})
    for (const auto& s : shapes)
      for (float stddev : {1.5f, 40.0f}) {  // around the knees, and far out (saturation, exp overflow)
        G c;
        c.seed = seed++;
        const int x = c.Input("x", s, ir::DType::F32, {}, stddev);
        const int y = c.Tensor("y", s);
        ir::Op& op = c.Op("act", t, {x}, {y});
        if (t == ir::OpType::HardSigmoid && s.size() > 1) op.unary = {1.0f / 6.0f, 0.5f};  // hard_swish's knees
        c.g.outputs = {y};
        std::vector<std::string> v;
        Check(c, std::string(ir::OpTypeName(t)) + " " + Shape(s) + " stddev " + std::to_string(stddev), 0, 2e-6, false,
              &v);
        EXPECT_EQ(v.at(0), std::string(ir::OpTypeName(t)) + "_f32");
      }
}

// ---- mul with broadcasting -------------------------------------------------------------------
TEST(CnnOps, BroadcastMulMatchesReference) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases{
      {{2, 5, 3, 7}, {2, 1, 1, 7}},
      {{1, 7, 9, 1000}, {1, 1, 1, 1000}},
      {{2, 5, 3, 17}, {17}},
      {{2, 5, 3, 7}, {5, 1, 7}},
      {{2, 5, 3, 7}, {2, 5, 3, 1}},
      {{2, 5, 3, 7}, {1}},
      {{3, 4, 5, 6, 7}, {4, 1, 6, 1}},
      {{S, 19}, {1, 19}},
      {{S, 19}, {19}},
      {{2, 3, 4, 5, 6, 7, 2, 3}, {3, 1, 5, 1, 7, 1, 3}}};
  uint32_t seed = 300;
  for (const auto& [as, bs] : cases) {
    G c;
    c.seed = seed++;
    const int a = c.Input("a", as), b = c.Input("b", bs);
    const int y = c.Tensor("y", as);
    c.Op("mul", ir::OpType::Mul, {a, b}, {y});
    c.g.outputs = {y};
    std::vector<std::string> v;
    Check(c, "mul " + Shape(as) + " * " + Shape(bs), 0, 0.0, false, &v);
    EXPECT_EQ(v.at(0), "mul_f32_broadcast");
  }
  // Identical shapes keep the plain kernel.
  G c;
  const int a = c.Input("a", {S, 23}), b = c.Input("b", {S, 23});
  const int y = c.Tensor("y", {S, 23});
  c.Op("mul", ir::OpType::Mul, {a, b}, {y});
  c.g.outputs = {y};
  std::vector<std::string> v;
  Check(c, "mul identical shapes", 0, 0.0, false, &v);
  EXPECT_EQ(v.at(0), "mul_f32");
}

// silu(a) * b with b broadcast: not fused into the swiglu row kernel (which reads b per row).
TEST(CnnOps, SiluTimesBroadcastIsNotFused) {
  G c;
  const int a = c.Input("a", {S, 2, 24}), b = c.Input("b", {1, 24});
  const int s = c.Tensor("s", {S, 2, 24}), y = c.Tensor("y", {S, 2, 24});
  c.Op("silu", ir::OpType::Silu, {a}, {s});
  c.Op("mul", ir::OpType::Mul, {s, b}, {y});
  c.g.outputs = {y};
  std::vector<std::string> v;
  Check(c, "silu * broadcast b", 0, 2e-6, false, &v);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0], "silu_f32");
  EXPECT_EQ(v[1], "mul_f32_broadcast");
}

// ---- resize_nearest --------------------------------------------------------------------------
TEST(CnnOps, ResizeNearestMatchesReference) {
  struct Rc {
    std::vector<int64_t> x;
    int32_t sh, sw;
  };
  const Rc cases[] = {{{2, 3, 5, 3}, 2, 2}, {{1, 4, 4, 16}, 2, 3}, {{2, 5, 3, 17}, 3, 1},
                      {{1, 1, 1, 5}, 4, 2}, {{1, 7, 9, 8}, 1, 1},  {{S, 3, 3, 1}, 2, 2}};
  uint32_t seed = 400;
  for (const Rc& rc : cases)
    for (bool int8 : {false, true}) {
      G c;
      c.seed = seed++;
      const ir::Quant q = Q8(ir::Scheme::Q8TA, 0.05f, 3);
      const int x = int8 ? c.Input("x", rc.x, ir::DType::I8, q) : c.Input("x", rc.x);
      const std::vector<int64_t> ys{rc.x[0], rc.x[1] * rc.sh, rc.x[2] * rc.sw, rc.x[3]};
      const int y = int8 ? c.Tensor("y", ys, ir::DType::I8, q) : c.Tensor("y", ys);
      ir::ResizeAttrs& a = c.Op("resize", ir::OpType::ResizeNearest, {x}, {y}).resize;
      a.scale[0] = rc.sh;
      a.scale[1] = rc.sw;
      c.g.outputs = {y};
      std::vector<std::string> v;
      Check(c, std::string("resize_nearest ") + (int8 ? "i8 " : "f32 ") + Shape(rc.x), 0, 0.0, false, &v);
      EXPECT_EQ(v.at(int8 ? 1 : 0), int8 ? "resize_nearest_i8" : "resize_nearest_f32");
    }
}

// ---- softmax ---------------------------------------------------------------------------------
TEST(CnnOps, SoftmaxMatchesReference) {
  const std::vector<std::vector<int64_t>> shapes{{1, 1},    {3, 5},    {S, 17},   {1, 256},   {2, 1000},
                                                 {2, 1024}, {2, 4099}, {1, 9000}, {2, 3, 33}, {7}};
  uint32_t seed = 500;
  for (const auto& s : shapes)
    for (float stddev : {1.0f, 30.0f}) {  // 30: exp(x) alone would overflow; the row max keeps it finite
      G c;
      c.seed = seed++;
      const int x = c.Input("x", s, ir::DType::F32, {}, stddev);
      const int y = c.Tensor("y", s);
      c.Op("softmax", ir::OpType::Softmax, {x}, {y});
      c.g.outputs = {y};
      std::vector<std::string> v;
      Check(c, "softmax " + Shape(s) + " stddev " + std::to_string(stddev), 0, 1e-6, true, &v);
      EXPECT_EQ(v.at(0), "softmax_f32");
    }
}

}  // namespace
}  // namespace vkqc
