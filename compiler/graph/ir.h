// In-memory graph IR: what the .vkqg holds, in plain C++ types.
// Ownership: a Graph owns its tensors; constant bytes are shared views into one immutable
// blob (the file that was read, or the buffers an importer built), so copies are cheap.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace vkqc::ir {

enum class DType : uint8_t { F32 = 0, F16 = 1, I8 = 2, U8 = 3, I4 = 4, U4 = 5, I32 = 6 };
const char* DTypeName(DType t);
// Bits per element (4 for I4/U4).
int DTypeBits(DType t);

// Same numbering as schema/graph.fbs Scheme.
enum class Scheme : uint8_t {
  None = 0, Q8CSW = 1, Q4GSW = 2, Q4GAW = 3, Q8TA = 4, DQ8CA = 5, Q8TO = 6, Float = 7
};
const char* SchemeName(Scheme s);  // "q8csw", ...

struct Quant {
  Scheme scheme = Scheme::None;
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
  int32_t axis = 0;
  int32_t group_size = 0;
};

// A read-only view of constant bytes kept alive by `owner`.
struct ConstData {
  std::shared_ptr<const std::vector<uint8_t>> owner;
  size_t offset = 0;
  size_t size = 0;
  const uint8_t* data() const { return owner ? owner->data() + offset : nullptr; }
};

constexpr int64_t kSymbolicDim = -1;

struct Tensor {
  std::string name;
  std::vector<int64_t> shape;  // kSymbolicDim allowed as the leading dimension
  DType dtype = DType::F32;
  std::optional<Quant> quant;
  std::optional<ConstData> data;  // set for constants (weights, bias)
  bool is_constant() const { return data.has_value(); }
  // Elements, with the symbolic dimension replaced by `tokens`.
  int64_t NumElements(int64_t tokens = 1) const;
};

// Same numbering as schema/graph.fbs OpType.
//   Linear: inputs [x, weight, bias?], outputs [y]; attrs in Op::linear.
//   Mul:    inputs [a, b], outputs [y]; f32, identical shapes; y = a * b. No attrs.
//   Silu:   inputs [a], outputs [y]; f32, same shape; y = a / (1 + exp(-a)). No attrs.
//   Quantize: inputs [x] (f32, rank 2, non-constant), outputs [q] (i8, same shape). No attrs;
//           q's quant is the scheme: Q8TA (one scale > 0, one zero point in [-128, 127]) or
//           DQ8CA (per token: scales and zero points empty; each row's parameters are computed
//           at run time and kept beside the tensor). An i8 DQ8CA tensor is always the output
//           of a quantize op and is never a graph input or output.
enum class OpType : uint16_t { Linear = 0, Mul = 1, Silu = 2, Quantize = 3 };
const char* OpTypeName(OpType t);  // "linear", "mul", "silu", "quantize"

// Weights: W [N, K] (row = output channel), schemes (DESIGN 4):
//   q8csw: i8, N scales, zero points empty or all 0;
//   q4gsw: i4, group_size G (multiple of 8 dividing K), N*(K/G) scales row-major [n][g],
//          zero points empty;
//   q4gaw: u4, as q4gsw plus N*(K/G) zero points in [0, 15].
// x: f32, or i8 carrying its own quant (then input_quant is None): per-tensor Q8TA/Q8TO, or
// per-token DQ8CA (produced by a quantize op).
struct LinearAttrs {
  // None/Float = weight-only; Q8TA = static per tensor (one scale, one zero point);
  // DQ8CA = dynamic per token (no scales or zero points: the GPU computes them).
  Quant input_quant;
  bool fused_relu = false;
  // None = f32 output; Q8TO = i8 output (one scale, one zero point), and the output tensor
  // carries the same Q8TO quant.
  Quant output_quant;
};

struct Op {
  std::string name;
  OpType type = OpType::Linear;
  std::vector<int> inputs;   // tensor indices
  std::vector<int> outputs;
  LinearAttrs linear;  // valid when type == Linear; default for every other type
};

struct Graph {
  std::vector<Tensor> tensors;
  std::vector<Op> ops;
  std::vector<int> inputs;
  std::vector<int> outputs;
  std::string symbolic_dim = "tokens";

  int FindTensor(const std::string& name) const;  // -1 if absent
  bool HasSymbolicDim() const;
};

}  // namespace vkqc::ir
