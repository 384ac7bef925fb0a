// Helpers of the row-fusion GPU tests (row_fusion_test.cc) and the weight-prefetch test
// (prefetch_test.cc): graph building, running a bundle on random inputs, the reference check.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "compiler/graph/synthetic.h"
#include "gpu_fixture.h"
#include "reference/reference.h"

namespace vkqc {
namespace row_fusion_helpers {

using testing_graphs::RandomFloats;

inline int Add(ir::Graph& g, const std::string& name, std::vector<int64_t> shape) {
  ir::Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  g.tensors.push_back(std::move(t));
  return int(g.tensors.size() - 1);
}

struct Ran {
  std::map<std::string, std::vector<float>> out;
  std::vector<std::string> variants;
  std::vector<bool> integer_path;  // per layer, as the bundle says
};

// Runs a compiled bundle of g on random inputs (poisoned memory), its outputs and layer variants
// into r; also timed runs: layers without commands read 0 and nothing waits forever.
inline ::testing::AssertionResult RunBundle(const ir::Graph& g, const std::vector<uint8_t>& bundle, int64_t m, Ran* r,
                                     std::map<std::string, std::vector<float>>* inputs) {
  gpu_test::Loaded l;
  vkqc_model_options mo;
  vkqc_model_options_init(&mo);
  mo.poison_memory = 1;
  if (vkqc_model_load(gpu_test::Context(), bundle.data(), bundle.size(), &mo, &l.model) != VKQC_OK)
    return ::testing::AssertionFailure() << vkqc_last_error();
  for (uint32_t i = 0; i < g.inputs.size(); ++i) {
    const auto& v = (*inputs)[g.tensors[size_t(g.inputs[i])].name] = RandomFloats(size_t(m * g.tensors[size_t(g.inputs[i])].shape[1]), 5 + i, 2.0f);
    if (vkqc_model_write_input(l.model, 0, i, v.data(), v.size() * 4) != VKQC_OK)
      return ::testing::AssertionFailure() << vkqc_last_error();
  }
  if (vkqc_model_run(l.model, 0) != VKQC_OK) return ::testing::AssertionFailure() << vkqc_last_error();
  for (uint32_t i = 0; i < vkqc_model_output_count(l.model, 0); ++i) {
    vkqc_tensor_info info;
    vkqc_model_output_info(l.model, 0, i, &info);
    std::vector<float> v(info.size_bytes / 4);
    vkqc_model_read_output(l.model, 0, i, v.data(), info.size_bytes);
    r->out[info.name] = std::move(v);
  }
  const uint32_t nl = vkqc_model_layer_count(l.model, 0);
  for (uint32_t i = 0; i < nl; ++i) {
    vkqc_layer_info li;
    vkqc_model_layer_info(l.model, 0, i, &li);
    r->variants.push_back(li.variant);
    r->integer_path.push_back(li.integer_path != 0);
  }
  // Timed runs, per layer and whole: layers without commands read 0 and nothing waits forever.
  std::vector<double> ns(nl, -1.0);
  double total = 0;
  if (vkqc_model_run_timed(l.model, 0, ns.data(), &total) != VKQC_OK)
    return ::testing::AssertionFailure() << "run_timed: " << vkqc_last_error();
  for (uint32_t i = 0; i < nl; ++i)
    if (r->variants[i] == "fused" || r->variants[i] == "folded")
      if (ns[i] != 0.0) return ::testing::AssertionFailure() << "layer " << i << " without commands timed " << ns[i];
  if (vkqc_model_run_timed(l.model, 0, nullptr, &total) != VKQC_OK || !(total > 0))
    return ::testing::AssertionFailure() << "whole run_timed: " << vkqc_last_error();
  return ::testing::AssertionSuccess();
}

inline void Check(const ir::Graph& g, const Ran& r, std::map<std::string, std::vector<float>>& in, int64_t m, double tol,
           const std::string& what) {
  ref::RunOptions ro;
  ro.tokens = m;
  for (size_t i = 0; i < r.variants.size(); ++i)  // the dequant fallback computes the weight-only function
    // (the second linear of a gate/up pair: `fused`, the pair's arithmetic as its layer says)
    ro.integer_path.push_back(r.variants[i] == "fused" && g.ops[i].type == ir::OpType::Linear
                                  ? r.integer_path[i]
                                  : r.variants[i].find("_dequant_") == std::string::npos);
  auto want = ref::RunGraph(g, in, ro);
  ASSERT_TRUE(want.ok()) << want.error().message;
  for (const auto& [name, w] : *want) {
    const auto& got = r.out.at(name);
    double e = 0, s = 1e-30;
    for (size_t i = 0; i < w.size(); ++i) {
      ASSERT_TRUE(std::isfinite(got[i])) << what << " " << name << " " << i;
      e = std::max(e, std::fabs(double(got[i]) - w[i]));
      s = std::max(s, std::fabs(double(w[i])));
    }
    EXPECT_LE(e / s, tol) << what << " output " << name;
  }
}

inline int AddLinear(ir::Graph& g, const std::string& name, int y, int64_t c, int64_t n, ir::Scheme w, uint32_t seed,
              ir::Scheme act = ir::Scheme::DQ8CA, int bias = -1) {
  testing_graphs::QLayerSpec ls;
  ls.k = c;
  ls.n = n;
  ls.weights = w;
  ls.act = act;
  ls.bias = bias < 0 ? seed % 2 == 0 : bias == 1;
  ir::Graph one = testing_graphs::MakeQLayer(ls, seed);  // its weight and bias tensors
  ir::Op op = one.ops[0];
  op.name = name;
  op.inputs[0] = y;
  for (size_t i = 1; i < op.inputs.size(); ++i) {
    ir::Tensor t = one.tensors[size_t(op.inputs[i])];
    t.name = name + "." + t.name;
    g.tensors.push_back(std::move(t));
    op.inputs[i] = int(g.tensors.size() - 1);
  }
  const int z = Add(g, name + ".out", {ir::kSymbolicDim, n});
  op.outputs = {z};
  g.ops.push_back(std::move(op));
  return z;
}

}  // namespace row_fusion_helpers
}  // namespace vkqc
