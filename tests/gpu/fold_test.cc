// The quantization folding pass on a real device: static int8 chains written with explicit
// dequantize -> quantize pairs (as exporters write them) compile without a float round trip,
// and still match the CPU reference of the graph as written.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "compiler/passes/pipeline.h"
#include "gpu_fixture.h"
#include "reference/reference.h"
#include "compiler/graph/synthetic.h"

namespace vkqc {
namespace {

using testing_graphs::OwnBytes;

enum class Shape {
  SameParams,        // dequantize -> quantize with the producer's own parameters
  NewParams,         // other, wider parameters: the old clamp must stay, so a requantize
  NewParamsNarrow,   // other parameters inside the old range, producer a q8to linear read only here
  NewParamsShared,   // other parameters, the int8 tensor also read elsewhere: requantize
  FloatProducer,     // linear with float output -> quantize
};

struct Builder {
  ir::Graph g;
  std::mt19937 rng{5};
  int Tensor(const std::string& name, std::vector<int64_t> shape, ir::DType t, std::optional<ir::Quant> q = {}) {
    g.tensors.push_back({name, std::move(shape), t, std::move(q), {}});
    return int(g.tensors.size() - 1);
  }
  int Weight(const std::string& name, int64_t n, int64_t k) {
    std::vector<uint8_t> w(size_t(n * k));
    for (auto& b : w) b = uint8_t(int(rng() % 255) - 127);
    ir::Quant q;
    q.scheme = ir::Scheme::Q8CSW;
    for (int64_t i = 0; i < n; ++i) q.scales.push_back(0.5f / (60.0f * std::sqrt(float(k))) * (1.0f + 0.01f * float(i % 7)));
    g.tensors.push_back({name, {n, k}, ir::DType::I8, q, OwnBytes(w.data(), w.size())});
    return int(g.tensors.size() - 1);
  }
  void Op(const std::string& name, ir::OpType t, std::vector<int> in, std::vector<int> out, ir::LinearAttrs la = {}) {
    ir::Op op;
    op.name = name;
    op.type = t;
    op.inputs = std::move(in);
    op.outputs = std::move(out);
    op.linear = la;
    g.ops.push_back(op);
  }
};

ir::Quant PT(ir::Scheme s, float scale, int32_t zp) { return ir::Quant{s, {scale}, {zp}, 0, 0}; }

ir::Graph Make(Shape shape, int64_t m, int64_t k, int64_t n) {
  Builder b;
  const ir::Quant in_q = PT(ir::Scheme::Q8TA, 0.03f, 3), mid_q = PT(ir::Scheme::Q8TO, 0.02f, -5);
  const ir::Quant re_q = shape == Shape::SameParams        ? PT(ir::Scheme::Q8TA, 0.02f, -5)
                         : shape == Shape::NewParamsNarrow ? PT(ir::Scheme::Q8TA, 0.015f, -3)
                                                           : PT(ir::Scheme::Q8TA, 0.035f, 9);
  const int x = b.Tensor("x", {m, k}, ir::DType::F32);
  const int xq = b.Tensor("xq", {m, k}, ir::DType::I8, in_q);
  b.Op("quant_in", ir::OpType::Quantize, {x}, {xq});
  const int w1 = b.Weight("w1", n, k);
  int h;
  if (shape == Shape::FloatProducer) {
    const int hf = b.Tensor("hf", {m, n}, ir::DType::F32);
    b.Op("fc1", ir::OpType::Linear, {xq, w1}, {hf});
    h = b.Tensor("h", {m, n}, ir::DType::I8, re_q);
    b.Op("quant_mid", ir::OpType::Quantize, {hf}, {h});
  } else {
    const int p = b.Tensor("p", {m, n}, ir::DType::I8, mid_q);
    ir::LinearAttrs la;
    la.output_quant = mid_q;
    la.fused_relu = true;
    b.Op("fc1", ir::OpType::Linear, {xq, w1}, {p}, la);
    const int pf = b.Tensor("pf", {m, n}, ir::DType::F32);
    b.Op("dequant_mid", ir::OpType::Dequantize, {p}, {pf});
    h = b.Tensor("h", {m, n}, ir::DType::I8, re_q);
    b.Op("quant_mid", ir::OpType::Quantize, {pf}, {h});
    if (shape == Shape::NewParamsShared) {  // p has a second reader
      const int side = b.Tensor("side", {m, n}, ir::DType::F32);
      b.Op("dequant_side", ir::OpType::Dequantize, {p}, {side});
      b.g.outputs.push_back(side);
    }
  }
  const int w2 = b.Weight("w2", 13, n);
  const int z = b.Tensor("z", {m, 13}, ir::DType::I8, PT(ir::Scheme::Q8TO, 0.05f, 0));
  ir::LinearAttrs la2;
  la2.output_quant = PT(ir::Scheme::Q8TO, 0.05f, 0);
  b.Op("fc2", ir::OpType::Linear, {h, w2}, {z}, la2);
  const int y = b.Tensor("y", {m, 13}, ir::DType::F32);
  b.Op("dequant_out", ir::OpType::Dequantize, {z}, {y});
  b.g.inputs = {x};
  b.g.outputs.insert(b.g.outputs.begin(), y);
  return b.g;
}

TEST(Fold, StaticChainsHaveNoFloatRoundTrip) {
  struct Want {
    Shape shape;
    const char* dequant_mid;  // expected variant of the middle dequantize ("" when absent)
    const char* quant_mid;
    bool exact;               // the GPU output equals the reference's (else within 1 LSB per op)
  };
  const Want wants[] = {
      {Shape::SameParams, "folded", "folded", true},
      {Shape::NewParams, "folded", "requantize_i8_i8", true},
      {Shape::NewParamsNarrow, "folded", "folded", false},
      {Shape::NewParamsShared, "folded", "requantize_i8_i8", true},
      {Shape::FloatProducer, "", "folded", true},
  };
  auto profile = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(profile.ok());
  uint32_t seed = 300;
  for (const Want& w : wants)
    for (linear::Accum accum : {linear::Accum::IntDot, linear::Accum::Dequant})
      for (int64_t m : {1, 17}) {
        SCOPED_TRACE("shape " + std::to_string(int(w.shape)) + " " + linear::AccumName(accum) + " M=" + std::to_string(m));
        ir::Graph g = Make(w.shape, m, 37, 30);
        CompileOptions o;
        o.select.force_accum = accum;
        auto bundle = CompileGraph(g, *profile, o, 0);
        ASSERT_TRUE(bundle.ok()) << bundle.error().message;
        const auto x = testing_graphs::RandomFloats(size_t(m * 37), seed++, 2.0f);
        std::vector<float> y;
        std::vector<std::string> variants;
        ASSERT_TRUE(gpu_test::RunBundle(*bundle, 0, x, &y, nullptr, &variants));
        gpu_test::ExpectNoValidationMessages("fold");
        ASSERT_EQ(variants.size(), g.ops.size());
        for (size_t i = 0; i < g.ops.size(); ++i) {
          if (g.ops[i].name == "dequant_mid") {
            EXPECT_EQ(variants[i], w.dequant_mid);
          }
          if (g.ops[i].name == "quant_mid") {
            EXPECT_EQ(variants[i], w.quant_mid);
          }
        }
        auto want = ref::RunGraph(g, {{"x", x}}, {});
        ASSERT_TRUE(want.ok()) << want.error().message;
        const auto& r = want->at("y");
        ASSERT_EQ(y.size(), r.size());
        // y = 0.05 * z: one int8 step of z is 0.05; a 1-LSB difference upstream moves z by at most
        // a few steps through fc2.
        const float step = 0.05f;
        float worst = 0;
        for (size_t i = 0; i < y.size(); ++i) worst = std::max(worst, std::fabs(y[i] - r[i]));
        EXPECT_LE(worst, (w.exact ? 1.0f : 4.0f) * step + 1e-6f);
      }
}

}  // namespace
}  // namespace vkqc
