// In-memory graph IR: what the .vkqg holds, in plain C++ types.
// Ownership: a Graph owns its tensors; constant bytes are shared views into one immutable
// blob (the file that was read, or the buffers an importer built), so copies are cheap.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
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
  None = 0, Q8CSW = 1, Q4GSW = 2, Q4GAW = 3, Q8TA = 4, DQ8CA = 5, Q8TO = 6, Float = 7, Q8PC = 8, Q8GSW = 9, Q4GMW = 10
};
const char* SchemeName(Scheme s);  // "q8csw", ...

struct Quant {
  Scheme scheme = Scheme::None;
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
  int32_t axis = 0;
  int32_t group_size = 0;
  std::vector<float> mins;  // q4gmw: one float minimum per scale, w = s * q - m
  bool operator==(const Quant&) const = default;
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
  // Persistent state (a KV cache): no data, concrete shape; lives from model load to destroy,
  // shared by all programs, zero at load and after a state reset.
  bool state = false;
  bool is_constant() const { return data.has_value(); }
  // Elements, with the symbolic dimension replaced by `tokens`.
  int64_t NumElements(int64_t tokens = 1) const;
};

// Same numbering as schema/graph.fbs OpType.
//   Linear: inputs [x, weight, bias?], outputs [y]; attrs in Op::linear.
//   Mul:    inputs [a, b], outputs [y]; f32, identical shapes; y = a * b. No attrs.
//   Silu:   inputs [a], outputs [y]; f32, same shape; y = a / (1 + exp(-a)). No attrs.
//   Quantize: inputs [x] (f32, non-constant), outputs [q] (i8, same shape). No attrs;
//           q's quant is the scheme: Q8TA (one scale > 0, one zero point in [-128, 127]; any
//           rank) or DQ8CA (per token, rank 2 [M, K]: scales and zero points empty; each row's
//           parameters are computed at run time and kept beside the tensor). An i8 DQ8CA tensor
//           is always the output of a quantize op and is never a graph input or output.
//   Dequantize: inputs [q] (i8, non-constant, with its quant: Q8TA/Q8TO per tensor, or DQ8CA
//           per token from a quantize op), outputs [y] (f32, same shape); y = scale * (q - zp).
//           No attrs.
//   Conv2d: inputs [x, w, bias?], outputs [y]; NHWC; attrs in Op::conv2d (see Conv2dAttrs).
//   Add:    inputs [a, b] (identical shapes), outputs [y]; attrs in Op::add. f32 + f32 -> f32
//           (output_quant None), or i8 + i8 (per-tensor Q8TA/Q8TO each, scales may differ) ->
//           i8 with output_quant Q8TO (required); y = act(real(a) + real(b)), then requantized.
//   AvgPool2d: inputs [x] (NHWC), outputs [y]; attrs in Op::pool (see Pool2dAttrs).
//   Embedding: inputs [ids (i32 [T], non-constant), table (constant [V, C]: f32; i8 q8csw with V
//           per-row scales; i4 q4gsw with groups along C)], outputs [y f32 [T, C]];
//           y[t] = dequantized row ids[t]; an id outside [0, V) gives a row of zeros. No attrs.
//   RmsNorm: inputs [x f32 [.., C], w constant f32 [C]], outputs [y f32, x's shape]; Op::norm.
//   Rope:   inputs [x f32 [T, H * D], pos (i32 [1] graph input)], outputs [y, x's shape]; Op::rope.
//   Attention: inputs [q f32 [T, Hq*D], k f32 [T, Hkv*D], v f32 [T, Hkv*D], k_cache, v_cache
//           (state tensors [Hkv, S, D] f16 or f32, the same), pos (i32 [1] graph input)], outputs
//           [y f32 [T, Hq*D]]; Op::attention. Writes row t of k and v at cache position pos + t,
//           then y[t, h] = softmax(q[t,h] . K^T * scale over positions 0..pos+t) V with KV head
//           h / (Hq / Hkv) (DESIGN 4.2).
//   Argmax: inputs [x f32 [T, V]], outputs [y i32 [T]]: the first index of each row's maximum.
//   MaxPool2d: inputs [x] (NHWC), outputs [y]; Op::pool as avg_pool2d, padded taps excluded
//           (never the maximum). x f32 -> y f32; x i8 per tensor -> y i8 with output_quant Q8TO
//           (required): the maximum of the window requantized (identity when the quant is equal).
//   Concat: inputs [x0, x1, ...] (>= 1, same rank, same dims except `axis`), outputs [y];
//           Op::concat. All f32 -> f32 (output_quant None); all i8 per tensor -> i8 with
//           output_quant Q8TO (required), each input requantized (copied when its quant equals it).
//   Sigmoid: inputs [x f32], outputs [y f32, same shape]; y = 1 / (1 + exp(-x)). No attrs.
//   HardSigmoid: as Sigmoid; y = max(0, min(1, alpha * x + beta)); Op::unary.
//   HardSwish: as Sigmoid; y = x * max(0, min(1, x / 6 + 1 / 2)). No attrs.
//   ResizeNearest: inputs [x [N, H, W, C]] (NHWC), outputs [y [N, H*sh, W*sw, C]]; Op::resize;
//           y[n, h, w, c] = x[n, h / sh, w / sw, c] (integer factors). f32 -> f32, or i8 -> i8
//           with the same quant (a copy).
//   Softmax: inputs [x f32 [.., C]], outputs [y f32, same shape]; over the last axis, the row
//           maximum subtracted before exp, sums in fp32. No attrs.
//   Transpose: inputs [x (rank 1..6)], outputs [y]; Op::transpose: y's dim i is x's dim perm[i]
//           (numpy.transpose). f32 -> f32 or i8 -> i8 with the same quant (a copy).
//   Reshape: inputs [x], outputs [y] (same element count, any shape; -1 dims resolved by the
//           importer); row-major order kept, a view where the device layout allows (f32, or i8
//           with an unchanged last dim or both last dims filling whole 32-byte rows), else a copy. f32 or i8 (same quant). No attrs.
//   Clip:   inputs [x f32], outputs [y f32, same shape]; y = min(max(x, alpha), beta) (relu:
//           alpha 0, beta +inf); Op::unary.
//   Mul (broadcast): b's shape may broadcast to a's (numpy rules, rank(b) <= rank(a), each
//           dim of b 1 or a's): e.g. a [N, H, W, C] * b [N, 1, 1, C] (squeeze-excite).
enum class OpType : uint16_t {
  Linear = 0, Mul = 1, Silu = 2, Quantize = 3, Dequantize = 4, Conv2d = 5, Add = 6, AvgPool2d = 7,
  Embedding = 8, RmsNorm = 9, Rope = 10, Attention = 11, Argmax = 12, MaxPool2d = 13, Concat = 14,
  Sigmoid = 15, HardSigmoid = 16, HardSwish = 17, ResizeNearest = 18, Softmax = 19, Transpose = 20,
  Reshape = 21, Clip = 22
};
// "linear", "mul", "silu", "quantize", "dequantize", "conv2d", "add", "avg_pool2d", "embedding",
// "rms_norm", "rope", "attention", "argmax", "max_pool2d", "concat", "sigmoid", "hard_sigmoid",
// "hard_swish", "resize_nearest", "softmax", "transpose", "reshape", "clip"
const char* OpTypeName(OpType t);

// Activation fused into conv2d / add, applied to the real value before q8to requantization.
// Same numbering as schema/graph.fbs Activation.
enum class Activation : uint8_t { None = 0, Relu = 1, Relu6 = 2 };
const char* ActivationName(Activation a);  // "none", "relu", "relu6"

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
  bool fused_relu6 = false;  // relu6 instead of relu; never both
  bool operator==(const LinearAttrs&) const = default;
};

// conv2d, NHWC. x [N, H, W, Cin] (N may be symbolic): i8 with per-tensor Q8TA/Q8TO quant (then
// input_quant is None), or f32 with input_quant Q8TA (static per tensor, quantized by the
// compiler) or None/Float (weight-only). w constant i8 [Cout, KH, KW, Cin / groups], q8csw
// (Cout scales, axis 0, symmetric). bias constant f32 [Cout]. groups divides Cin and Cout
// (depthwise: groups == Cin == Cout, w [C, KH, KW, 1]). y [N, OH, OW, Cout] with
// OH = (H + padding[0] + padding[2] - dilation[0] * (KH - 1) - 1) / stride[0] + 1 >= 1 and
// OW likewise with padding[1], padding[3], dilation[1], stride[1]; f32 (output_quant None) or
// i8 with output_quant Q8TO, which the output tensor carries too. Padded taps read the input
// zero point (they contribute exactly zero).
struct Conv2dAttrs {
  int32_t stride[2] = {1, 1};            // h, w; >= 1
  int32_t padding[4] = {0, 0, 0, 0};     // top, left, bottom, right; >= 0
  int32_t dilation[2] = {1, 1};          // h, w; >= 1
  int32_t groups = 1;
  Activation activation = Activation::None;
  Quant input_quant;
  Quant output_quant;
  bool operator==(const Conv2dAttrs&) const = default;
};

struct AddAttrs {
  Activation activation = Activation::None;
  Quant output_quant;  // None = f32; Q8TO = i8 (required for i8 inputs), carried by the output
  bool operator==(const AddAttrs&) const = default;
};

// avg_pool2d, NHWC: x [N, H, W, C] -> y [N, OH, OW, C] (OH = (H + top + bottom - KH) / SH + 1).
// Padded taps are excluded from the average (count_include_pad = false): each output is the
// mean of the real taps of its window; padding is < the kernel so every window has one.
// global: kernel = H x W, kernel/stride/padding left at their defaults; y [N, 1, 1, C] or
// [N, C] (flattened, so a classifier linear can read it). x i8 per-tensor (Q8TA/Q8TO) -> y i8
// with output_quant Q8TO (required), or x f32 -> y f32 (output_quant None).
struct Pool2dAttrs {
  int32_t kernel[2] = {0, 0};            // h, w; >= 1 unless global
  int32_t stride[2] = {1, 1};            // h, w; >= 1
  int32_t padding[4] = {0, 0, 0, 0};     // top, left, bottom, right; >= 0, < kernel
  bool global = false;
  Quant output_quant;
  bool operator==(const Pool2dAttrs&) const = default;
};

struct NormAttrs {
  float eps = 1e-5f;  // > 0
  bool operator==(const NormAttrs&) const = default;
};

// Rotary position embedding (DESIGN 4.2) of every head_dim-wide head of x at position pos + t.
// Frequencies f_i = theta^(-2i/D), i < D/2, scaled as Meta's Llama-3 apply_scaling when llama3
// is set; the cos/sin table [max_positions][D/2] is computed in double and rounded to f32
// (RopeTable), so the GPU and the reference use the same values.
struct RopeAttrs {
  int32_t head_dim = 0;          // even, >= 2
  float theta = 10000.0f;        // > 1
  bool interleaved = false;      // pairs (2i, 2i+1); false: halves (i, i + D/2)
  int32_t max_positions = 0;     // >= 1; pos + t must stay below it
  bool llama3 = false;
  float factor = 1.0f, low_freq_factor = 1.0f, high_freq_factor = 4.0f;
  int32_t original_max_position = 8192;
  bool operator==(const RopeAttrs&) const = default;
};
// The rope table: [max_positions][D/2] pairs {cos, sin} of p * f_i.
std::vector<float> RopeTable(const RopeAttrs& a);

struct AttentionAttrs {
  int32_t num_heads = 0;     // Hq, a multiple of num_kv_heads
  int32_t num_kv_heads = 0;  // Hkv
  int32_t head_dim = 0;      // D: even, <= 256
  float scale = 0.0f;        // 0: 1 / sqrt(D)
  float Scale() const;
  bool operator==(const AttentionAttrs&) const = default;
};

struct ConcatAttrs {
  int32_t axis = -1;   // negative counts from the end
  Quant output_quant;  // None = f32; Q8TO = i8 (required for i8 inputs), carried by the output
  bool operator==(const ConcatAttrs&) const = default;
};

struct TransposeAttrs {
  std::vector<int32_t> perm;  // a permutation of 0..rank-1
  bool operator==(const TransposeAttrs&) const = default;
};

struct UnaryAttrs {  // hard_sigmoid; clip (alpha = min, beta = max)
  float alpha = 0.2f, beta = 0.5f;
  bool operator==(const UnaryAttrs&) const = default;
};

struct ResizeAttrs {  // resize_nearest
  int32_t scale[2] = {2, 2};  // h, w; >= 1
  bool operator==(const ResizeAttrs&) const = default;
};

struct Op {
  std::string name;
  OpType type = OpType::Linear;
  std::vector<int> inputs;   // tensor indices
  std::vector<int> outputs;
  // Attributes: only the member of the op's own type may differ from its default.
  LinearAttrs linear;    // type == Linear
  Conv2dAttrs conv2d;    // type == Conv2d
  AddAttrs add;          // type == Add
  Pool2dAttrs pool;      // type == AvgPool2d, MaxPool2d
  NormAttrs norm;        // type == RmsNorm
  RopeAttrs rope;        // type == Rope
  AttentionAttrs attention;  // type == Attention
  ConcatAttrs concat;    // type == Concat
  UnaryAttrs unary;      // type == HardSigmoid, Clip
  TransposeAttrs transpose;  // type == Transpose
  ResizeAttrs resize;    // type == ResizeNearest
  // Why the compiler made this op (a pass's rewrite, passes/split_wide.h); empty for the graph's
  // own ops. Not stored in graph files; inspect appends it to the layer's reason.
  std::string compiler_note;
};

struct Graph {
  std::vector<Tensor> tensors;
  std::vector<Op> ops;
  std::vector<int> inputs;
  std::vector<int> outputs;
  std::string symbolic_dim = "tokens";
  // Opaque entries carried from the importer to the bundle (e.g. "tokenizer", "description").
  std::map<std::string, std::vector<uint8_t>> metadata;

  int FindTensor(const std::string& name) const;  // -1 if absent
  bool HasSymbolicDim() const;
  bool IsOutput(int t) const { return std::find(outputs.begin(), outputs.end(), t) != outputs.end(); }
  // The ops reading tensor t, in graph order (each once, whatever the number of its inputs that are t).
  std::vector<size_t> Readers(int t) const {
    std::vector<size_t> r;
    for (size_t i = 0; i < ops.size(); ++i)
      if (std::find(ops[i].inputs.begin(), ops[i].inputs.end(), t) != ops[i].inputs.end()) r.push_back(i);
    return r;
  }
};

}  // namespace vkqc::ir
