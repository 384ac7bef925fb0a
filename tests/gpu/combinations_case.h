// The rows of tests/gpu/combinations_test.cc (docs/graph-json.md's "Supported combinations"): a
// graph under construction with its inputs' values (Case), and one row of the table (Row). Rows
// are built in combinations_test.cc and, for the CNN glue ops, combinations_cnn_rows.cc (transpose,
// reshape and clip: combinations_layout_rows.cc).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "compiler/graph/synthetic.h"
#include "gpu_fixture.h"

namespace vkqc::combos {

using testing_graphs::OwnBytes;
using testing_graphs::RandomFloats;
constexpr int64_t S = ir::kSymbolicDim;

// A graph under construction with its inputs' values.
struct Case {
  ir::Graph g;
  std::vector<int64_t> tokens{3};  // compile sizes of symbolic graphs; runs use the first
  std::map<std::string, std::vector<float>> inputs;
  std::map<std::string, std::vector<int32_t>> int32_inputs;
  uint32_t seed = 1;

  int Tensor(const std::string& name, std::vector<int64_t> shape, ir::DType dt = ir::DType::F32,
             std::optional<ir::Quant> q = {}) {
    ir::Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.dtype = dt;
    t.quant = std::move(q);
    g.tensors.push_back(std::move(t));
    return int(g.tensors.size() - 1);
  }
  int64_t Rows(const std::vector<int64_t>& shape) const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d == S ? tokens.front() : d;
    return n;
  }
  // A graph input with random values: f32 normal, i8 codes, i32 in [lo, hi).
  int Input(const std::string& name, std::vector<int64_t> shape, ir::DType dt = ir::DType::F32,
            std::optional<ir::Quant> q = {}, int32_t lo = 0, int32_t hi = 0) {
    const int t = Tensor(name, shape, dt, q);
    g.inputs.push_back(t);
    const size_t n = size_t(Rows(shape));
    std::mt19937 rng(seed++ * 7919u);
    if (dt == ir::DType::F32 || dt == ir::DType::F16) {
      inputs[name] = RandomFloats(n, seed * 31u, 1.5f);
    } else if (dt == ir::DType::I8) {
      std::vector<float>& v = inputs[name];
      for (size_t i = 0; i < n; ++i) v.push_back(float(int(rng() % 256) - 128));
    } else {
      if (lo == hi) lo = -100000, hi = 100000;
      std::vector<int32_t>& v = int32_inputs[name];
      for (size_t i = 0; i < n; ++i) v.push_back(lo + int32_t(rng() % uint32_t(hi - lo)));
      inputs[name] = std::vector<float>(v.begin(), v.end());
    }
    return t;
  }
  int Const(const std::string& name, std::vector<int64_t> shape, ir::DType dt, const std::vector<uint8_t>& bytes,
            std::optional<ir::Quant> q = {}) {
    const int t = Tensor(name, std::move(shape), dt, std::move(q));
    g.tensors[size_t(t)].data = OwnBytes(bytes.data(), bytes.size());
    return t;
  }
  int Floats(const std::string& name, std::vector<int64_t> shape, float stddev) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    const auto v = RandomFloats(size_t(n), seed++ * 131u, stddev);
    std::vector<uint8_t> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return Const(name, std::move(shape), ir::DType::F32, b);
  }
  // int8/int4 weights [rows][k] (for convolutions rows = Cout, k = KH*KW*Cin/groups, shape given).
  int Weight(const std::string& name, std::vector<int64_t> shape, ir::Scheme scheme, int32_t group = 8) {
    const int64_t n = shape[0];
    int64_t k = 1;
    for (size_t i = 1; i < shape.size(); ++i) k *= shape[i];
    std::mt19937 rng(seed++ * 104729u);
    std::uniform_real_distribution<float> sd(0.5f, 1.5f);
    ir::Quant q;
    q.scheme = scheme;
    std::vector<uint8_t> b;
    ir::DType dt = ir::DType::I8;
    int64_t groups = 1;
    if (scheme == ir::Scheme::Q8CSW || scheme == ir::Scheme::Q8GSW) {
      for (int64_t i = 0; i < n * k; ++i) b.push_back(uint8_t(int(rng() % 255) - 127));
      if (scheme == ir::Scheme::Q8GSW) {
        q.group_size = group;
        groups = k / group;
      }
    } else {
      dt = scheme == ir::Scheme::Q4GSW ? ir::DType::I4 : ir::DType::U4;
      q.group_size = group;
      groups = k / group;
      b.assign(size_t((n * k + 1) / 2), 0);
      for (int64_t i = 0; i < n * k; ++i) b[size_t(i / 2)] |= uint8_t((rng() % 16) << (4 * (i % 2)));
      if (scheme == ir::Scheme::Q4GAW)
        for (int64_t i = 0; i < n * groups; ++i) q.zero_points.push_back(int32_t(rng() % 16));
      if (scheme == ir::Scheme::Q4GMW)  // w = s * q - m with m about s * 7.5 (a centred range)
        for (int64_t i = 0; i < n * groups; ++i) q.mins.push_back(0.0f);
    }
    const float base = scheme == ir::Scheme::Q8CSW || scheme == ir::Scheme::Q8GSW ? 1.0f / (60.0f * std::sqrt(float(k)))
                                                   : 1.0f / (8.0f * std::sqrt(float(k)));
    for (int64_t i = 0; i < n * groups; ++i) q.scales.push_back(sd(rng) * base);
    for (size_t i = 0; i < q.mins.size(); ++i) q.mins[i] = q.scales[i] * (7.5f + 0.25f * float(int(rng() % 9) - 4));
    return Const(name, std::move(shape), dt, b, q);
  }
  ir::Op& Op(const std::string& name, ir::OpType type, std::vector<int> in, std::vector<int> out) {
    g.ops.push_back(gpu_test::MakeOp(name.c_str(), type, std::move(in), std::move(out)));
    return g.ops.back();
  }
};

inline ir::Quant Q8(ir::Scheme s, float scale, int32_t zp) { return ir::Quant{s, {scale}, {zp}, 0, 0}; }
inline ir::Quant Dq8ca() { return ir::Quant{ir::Scheme::DQ8CA, {}, {}, 0, 0}; }

// One row of the table: the doc's cells, and the graph it stands for.
struct Row {
  std::string op, x, options, output;
  std::string refusal;  // "" = supported; else the documented fragment of the error
  std::function<void(Case&)> build;
  bool quantized = false;  // also run with int-dot accumulation forced
  std::string Status() const { return refusal.empty() ? "supported" : "refused: " + refusal; }
  std::string Key() const { return op + " | " + x + " | " + options + " | " + output + " | " + Status(); }
};

// A case's input tensor t as the runtime takes it (i32, int8 codes, f16 or f32 bytes).
std::vector<uint8_t> InputBytes(const Case& c, int t);

// How RunAndCheck compares, and the load options it uses.
struct RunCheck {
  bool exact = false;   // every output bit exact (int8 within 0)
  double tol = 2e-5;    // f32 outputs: max error / the output's largest magnitude; int8 within 1 LSB
  uint64_t max_weight_buffer_bytes = 0;  // vkqc_model_options' field
  bool force_staging = false;            // vkqc_model_options' field
};
// Loads `bundle` (compiled from c.g; memory poisoned), writes c's inputs, runs the program of
// c.tokens.front() (a symbolic graph) and compares every output with the CPU reference, which
// follows each op's layer's integer_path; every op must have exactly one layer.
void RunAndCheck(const Case& c, const std::vector<uint8_t>& bundle, const RunCheck& rc);

// The rows of the CNN glue ops (combinations_cnn_rows.cc), appended to `r` in the doc's order.
void AddCnnRows(std::vector<Row>& r);
// The rows of transpose, reshape and clip (combinations_layout_rows.cc).
void AddLayoutRows(std::vector<Row>& r);

}  // namespace vkqc::combos
