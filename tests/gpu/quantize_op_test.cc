// A standalone quantize op (per token dq8ca, or per tensor q8ta) whose int8 output, with its
// parameters, feeds two linear layers (int4 and int8 weights): every accumulation and
// algorithm against the CPU reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "compiler/passes/pipeline.h"
#include "gpu_fixture.h"
#include "reference/reference.h"
#include "compiler/graph/synthetic.h"

namespace vkqc {
namespace {

using testing_graphs::OwnBytes;

ir::Graph QuantizeThenTwoLinears(int64_t m, int64_t k, ir::Scheme scheme, uint32_t seed) {
  // Reuse MakeQLayer's weights for the two consumers.
  testing_graphs::QLayerSpec a;
  a.m = m;
  a.k = k;
  a.n = 24;
  a.weights = ir::Scheme::Q4GSW;
  testing_graphs::QLayerSpec b = a;
  b.n = 13;
  b.weights = ir::Scheme::Q8CSW;
  const ir::Graph ga = testing_graphs::MakeQLayer(a, seed), gb = testing_graphs::MakeQLayer(b, seed + 1);
  ir::Graph g;
  g.tensors.push_back({"x", {m, k}, ir::DType::F32, {}, {}});
  ir::Quant q;
  q.scheme = scheme;
  if (scheme == ir::Scheme::Q8TA) {
    q.scales = {0.04f};
    q.zero_points = {-6};
  }
  g.tensors.push_back({"xq", {m, k}, ir::DType::I8, q, {}});
  g.inputs = {0};
  ir::Op quant;
  quant.name = "quant";
  quant.type = ir::OpType::Quantize;
  quant.inputs = {0};
  quant.outputs = {1};
  g.ops.push_back(quant);
  for (const ir::Graph* src : {&ga, &gb}) {
    const int w = int(g.tensors.size());
    ir::Tensor wt = src->tensors[1];
    wt.name = src == &ga ? "wa" : "wb";
    g.tensors.push_back(wt);
    ir::Tensor bt = src->tensors[2];
    bt.name = src == &ga ? "ba" : "bb";
    g.tensors.push_back(bt);
    ir::Tensor yt = src->tensors[3];
    yt.name = src == &ga ? "ya" : "yb";
    g.tensors.push_back(yt);
    ir::Op op = src->ops[0];
    op.name = src == &ga ? "fa" : "fb";
    op.inputs = {1, w, w + 1};
    op.outputs = {w + 2};
    op.linear.input_quant = {};
    g.ops.push_back(op);
    g.outputs.push_back(w + 2);
  }
  return g;
}

TEST(QuantizeOp, FeedsLinearsWithItsParameters) {
  auto profile = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(profile.ok());
  uint32_t seed = 40;
  for (ir::Scheme scheme : {ir::Scheme::DQ8CA, ir::Scheme::Q8TA})
    for (linear::Accum acc : {linear::Accum::IntDot, linear::Accum::Dequant})
      for (auto [m, alg] : {std::pair<int64_t, linear::Algo>{3, linear::Algo::Gemv}, {40, linear::Algo::Gemm}}) {
        SCOPED_TRACE(std::string(ir::SchemeName(scheme)) + " " + linear::AccumName(acc) + " M=" + std::to_string(m));
        const int64_t k = 256;
        ir::Graph g = QuantizeThenTwoLinears(m, k, scheme, seed++);
        CompileOptions o;
        o.select.force_accum = acc;
        o.select.force_algo = alg;
        auto bundle = CompileGraph(g, *profile, o, 0);
        ASSERT_TRUE(bundle.ok()) << bundle.error().message;
        auto x = testing_graphs::RandomFloats(size_t(m * k), seed);
        for (int64_t r = 0; r < m; ++r)
          for (int64_t j = 0; j < k; ++j) x[r * k + j] *= float(1 + r % 4);
        gpu_test::Loaded guard;
        ASSERT_TRUE(gpu_test::LoadAndRun(*bundle, x.data(), x.size() * 4, &guard));
        vkqc_model model = guard.model;
        gpu_test::ExpectNoValidationMessages("quantize op");
        std::vector<bool> integer(g.ops.size(), false);
        for (uint32_t i = 0; i < vkqc_model_layer_count(model, 0); ++i) {
          vkqc_layer_info li;
          vkqc_model_layer_info(model, 0, i, &li);
          if (li.op_index >= 0) integer[li.op_index] = li.integer_path;
          if (li.op_index == 1) {
            EXPECT_EQ(std::string(li.variant).rfind(scheme == ir::Scheme::DQ8CA ? "linear_i8ca_q4gsw" : "linear_i8_q4gsw", 0), 0u) << li.variant;
          }
        }
        ref::RunOptions ro;
        ro.integer_path = integer;
        auto want = ref::RunGraphDetailed(g, {{"x", x}}, ro);
        ASSERT_TRUE(want.ok()) << want.error().message;
        for (uint32_t out = 0; out < 2; ++out) {
          const std::string name = out == 0 ? "ya" : "yb";
          const auto& w = want->outputs.at(name);
          const auto& mag = want->magnitude.at(name);
          std::vector<float> y(w.size());
          ASSERT_EQ(vkqc_model_read_output(model, 0, out, y.data(), y.size() * 4), VKQC_OK);
          const double rel = acc == linear::Accum::IntDot ? 4e-6 : 2e-5;
          for (size_t i = 0; i < w.size(); ++i)
            ASSERT_LE(std::fabs(double(y[i]) - w[i]), rel * mag[i] + 1e-30) << name << "[" << i << "] " << y[i] << " vs " << w[i];
        }
      }
}

}  // namespace
}  // namespace vkqc
