// Internal to the ONNX importer (import_onnx.cc: values, layout, QDQ; import_onnx_ops.cc: ops).
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler/graph/import_onnx.h"
#include "compiler/graph/onnx.h"

namespace vkqc::onnx_import {

using onnx::HostTensor;

// A constant quantized tensor seen through DequantizeLinear (weights, int32 biases): its integer
// values (uint8 already moved to int8 as DESIGN 4 says) and per-tensor or per-axis parameters.
struct ConstQuant {
  std::vector<int64_t> dims;
  std::vector<int32_t> q;       // integer values, row-major
  std::vector<float> scales;    // 1 (per tensor) or dims[axis]
  std::vector<int32_t> zps;     // same count as scales
  int axis = -1;                // -1: per tensor
  int32_t src_type = 0;         // the ONNX element type
};

// What an ONNX value name stands for while nodes are converted.
struct Val {
  std::shared_ptr<HostTensor> c;      // a constant (initializer / Constant)
  std::shared_ptr<ConstQuant> cq;     // a constant dequantized (weights)
  int t = -1;                         // the vkqc tensor (f32, or i8 carrying its quant)
  int qsrc = -1;                      // float value = dequantize(i8 tensor qsrc); t made on demand
  std::vector<int64_t> shape;         // the ONNX shape
  bool nhwc = false;                  // 4-d value held as NHWC (the ONNX shape stays NCHW)
  int producer = -1;                  // the vkqc op that wrote t (for activation fusion)
  bool runtime() const { return t >= 0 || qsrc >= 0; }
};

class Importer;
int Relayout(Importer& im, int t, bool to_nhwc);  // NCHW <-> NHWC copy, cached per tensor

class Importer {
 public:
  Importer(const onnx::Model& m, std::string base_dir, const OnnxImportOptions& o)
      : m_(m), base_dir_(std::move(base_dir)), o_(o) {}
  Result<ir::Graph> Run();

  // --- shared helpers (import_onnx.cc) ---
  Error Fail(const onnx::Node& n, const std::string& msg) const;
  const onnx::Node* node_ = nullptr;  // the node being converted
  size_t node_index_ = 0;
  Result<Val*> In(const onnx::Node& n, size_t i, bool required = true);
  bool HasIn(const onnx::Node& n, size_t i) const { return i < n.inputs.size() && !n.inputs[i].empty(); }
  Status SetOut(const onnx::Node& n, size_t i, Val v);
  // The constant host values of input i (refused when runtime).
  Result<std::shared_ptr<HostTensor>> ConstIn(const onnx::Node& n, size_t i, const char* what);
  int AddTensor(const std::string& name, std::vector<int64_t> shape, ir::DType dt,
                std::optional<ir::Quant> q = std::nullopt);
  int AddConst(const std::string& name, std::vector<int64_t> shape, ir::DType dt, std::vector<uint8_t> bytes,
               std::optional<ir::Quant> q = std::nullopt);
  int AddOp(ir::Op op);  // returns its index
  std::string Fresh(const std::string& base);
  // A float tensor holding v (dequantizing an int8 value, declaring a constant).
  Result<int> Float(Val& v, const onnx::Node& n);
  // v's vkqc tensor: its int8 tensor (int8) or float form, in the layout asked for. Nhwc moves
  // the value itself to NHWC (later readers see NHWC); Onnx gives a copy in the ONNX layout.
  enum class Layout { Any, Nhwc, Onnx };
  Result<int> Get(Val& v, const onnx::Node& n, bool int8, Layout l);
  int Transpose(int t, const std::vector<int32_t>& perm, const std::string& name);
  int Reshape(int t, std::vector<int64_t> shape, const std::string& name);
  // The int8 tensor behind a value that dequantizes one (qsrc), else -1.
  int Int8Of(const Val& v) const { return v.qsrc >= 0 ? v.qsrc : (v.t >= 0 && IsI8(v.t) ? v.t : -1); }
  bool IsI8(int t) const { return g_.tensors[size_t(t)].dtype == ir::DType::I8; }
  // Scalar per-tensor quantization parameters from (scale, zero point) inputs.
  // per_axis: a scale per index of an axis gives Q8PC (the caller sets the axis).
  Result<ir::Quant> ScalarQuant(const onnx::Node& n, size_t scale_in, size_t zp_in, ir::Scheme s,
                                bool per_axis = false);
  // Gives graph input i8 tensor t the quant q, or checks that it already has it.
  Status BindQuant(int t, const ir::Quant& q, const onnx::Node& n);
  // The single consumer of output 0 when it is a per-tensor QuantizeLinear with constant
  // parameters (through one Relu/Clip(0, 6) when `act` is given): its quant; the consumer is
  // then marked done and its output becomes this node's.
  std::optional<ir::Quant> QuantizedConsumer(const onnx::Node& n, ir::Activation* act);
  Result<ConstQuant> ToConstQuant(const Val& v, const onnx::Node& n, const char* what);

  // --- ops (import_onnx_ops.cc) ---
  Status Convert(const onnx::Node& n);
  Status PerAxis(const onnx::Node& n, const Val& x, ir::Quant& q);
  Status QuantizeLinear(const onnx::Node& n);
  Status DequantizeLinear(const onnx::Node& n);
  Status Conv(const onnx::Node& n, bool qlinear);
  Status MatMul(const onnx::Node& n, int kind);  // 0 MatMul, 1 Gemm, 2 QLinearMatMul
  Status MatMulNBits(const onnx::Node& n);
  int EmitWeighted(ir::Op op, const std::vector<int32_t>& w, std::vector<int64_t> wshape, const ir::Quant& wq,
                   const std::string& wname, std::vector<int64_t> yshape, const std::optional<ir::Quant>& out_q,
                   ir::Activation act, const std::string& out_name, int* producer);
  Status AddOrMul(const onnx::Node& n, bool mul);
  Status Pool(const onnx::Node& n, bool max, bool global);
  Status Activation(const onnx::Node& n);  // Relu, Clip
  Status Unary(const onnx::Node& n);
  Status EmitFloat(const onnx::Node& n, const Val& x, int xt, ir::Op op, bool nhwc);       // Sigmoid, HardSigmoid, HardSwish
  Status Softmax(const onnx::Node& n);
  Status Concat(const onnx::Node& n);
  Status Resize(const onnx::Node& n);
  Status ShapeOp(const onnx::Node& n);     // Flatten, Reshape, Squeeze, Unsqueeze
  Status TransposeOp(const onnx::Node& n);

  const onnx::Model& m_;
  std::string base_dir_;
  const OnnxImportOptions& o_;
  ir::Graph g_;
  std::map<std::string, Val> vals_;
  std::map<std::string, int> uses_;            // consumers of each value (graph outputs count)
  std::map<std::string, std::vector<size_t>> consumers_;  // node indices
  std::set<size_t> done_;                      // nodes folded into an earlier one
  std::set<int> graph_inputs_;                 // vkqc tensors that are graph inputs
  std::set<int> quant_bound_;                  // graph input i8 tensors whose quant is known
  std::map<int, int> nhwc_of_, nchw_of_;       // transposes made, per source tensor
  std::map<int, int> float_of_;                // dequantize made, per int8 tensor
  std::set<std::string> uint8_inputs_;
  std::string pending_out_;                    // set by QuantizedConsumer: the Q node's output
  int fresh_ = 0;
};

std::vector<uint8_t> FloatBytes(const std::vector<float>& v);

// Bounds on what the importer computes with (all far above any real model; they keep every
// shape product and window formula inside int64 and every attribute inside int32).
constexpr int64_t kMaxDim = int64_t(1) << 31;       // one dimension
constexpr int64_t kMaxElements = int64_t(1) << 40;  // one tensor
constexpr int64_t kMaxWindow = int64_t(1) << 20;    // kernel, stride, dilation, pad

// Attribute and shape helpers.
inline int64_t IntAttr(const onnx::Node& n, const char* name, int64_t def) {
  const onnx::Attribute* a = n.Find(name);
  return a ? a->i : def;
}
inline float FloatAttr(const onnx::Node& n, const char* name, float def) {
  const onnx::Attribute* a = n.Find(name);
  return a ? a->f : def;
}
inline std::string StrAttr(const onnx::Node& n, const char* name, const char* def) {
  const onnx::Attribute* a = n.Find(name);
  return a ? a->s : def;
}
inline std::vector<int64_t> IntsAttr(const onnx::Node& n, const char* name, std::vector<int64_t> def) {
  const onnx::Attribute* a = n.Find(name);
  return a ? a->ints : def;
}

inline float RoundEven(double v) { return float(std::nearbyint(v)); }

// The product of d[from, to); saturates at kMaxElements + 1 (callers refuse larger tensors).
inline int64_t Prod(const std::vector<int64_t>& d, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t p = 1;
  for (size_t i = from; i < d.size() && i < to; ++i) {
    if (d[i] <= 0) return d[i] == 0 ? 0 : -1;
    p = p > (kMaxElements + 1) / d[i] ? kMaxElements + 1 : p * d[i];
  }
  return p;
}

inline std::string Dims(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

// The fused activation a Relu / Clip node is (None and *ok = false when it is neither relu nor relu6).
ir::Activation ActOf(const onnx::Node& c, const std::map<std::string, Val>& vals, bool* ok);
// Pads [top, left, bottom, right] of a 2-d window op from auto_pad / pads.
Result<std::array<int32_t, 4>> WindowPads(Importer& im, const onnx::Node& n, int64_t h, int64_t w, const int64_t k[2],
                                          const int64_t s[2], const int64_t d[2]);
Result<ConstQuant> MakeConstQuant(Importer& im, const onnx::Node& n, const HostTensor& q, const HostTensor& scale,
                                  const HostTensor* zp, int64_t axis);


}  // namespace vkqc::onnx_import
