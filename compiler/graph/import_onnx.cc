// ONNX import: the driver (inputs, outputs, node order), values and their layout, QDQ helpers.
// The op conversions are in import_onnx_ops.cc.
#include "compiler/graph/import_onnx.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <numeric>

#include "compiler/graph/import_onnx_internal.h"
#include "compiler/graph/verify.h"

namespace vkqc {

const char* OnnxSupportedOps() {
  return "QuantizeLinear, DequantizeLinear, QLinearConv, QLinearMatMul, Conv, MatMul, Gemm, "
         "com.microsoft.MatMulNBits, Add, Mul, AveragePool, GlobalAveragePool, MaxPool, GlobalMaxPool, Relu, Clip, "
         "Sigmoid, HardSigmoid, HardSwish, Softmax, Concat, Resize (nearest, integer scales), Flatten, Reshape, "
         "Squeeze, Unsqueeze, Transpose, Identity, Constant, Cast (float to float)";
}

namespace onnx_import {

std::vector<uint8_t> FloatBytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

Error Importer::Fail(const onnx::Node& n, const std::string& msg) const {
  std::string label = "node " + std::to_string(node_index_);
  if (!n.name.empty()) label += " '" + n.name + "'";
  label += " (" + (n.domain.empty() ? std::string() : n.domain + ".") + n.op_type + ")";
  return UserError(label + ": " + msg);
}

std::string Importer::Fresh(const std::string& base) {
  for (;;) {
    std::string s = base + "." + std::to_string(fresh_++);
    if (g_.FindTensor(s) < 0 && !vals_.count(s)) return s;
  }
}

int Importer::AddTensor(const std::string& name, std::vector<int64_t> shape, ir::DType dt,
                        std::optional<ir::Quant> q) {
  ir::Tensor t;
  t.name = g_.FindTensor(name) < 0 ? name : Fresh(name);
  t.shape = std::move(shape);
  t.dtype = dt;
  t.quant = std::move(q);
  g_.tensors.push_back(std::move(t));
  return int(g_.tensors.size()) - 1;
}

int Importer::AddConst(const std::string& name, std::vector<int64_t> shape, ir::DType dt, std::vector<uint8_t> bytes,
                       std::optional<ir::Quant> q) {
  int t = AddTensor(name, std::move(shape), dt, std::move(q));
  auto owner = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  g_.tensors[size_t(t)].data = ir::ConstData{owner, 0, owner->size()};
  return t;
}

int Importer::AddOp(ir::Op op) {
  if (op.name.empty()) op.name = node_ && !node_->name.empty() ? node_->name : Fresh("op");
  g_.ops.push_back(std::move(op));
  return int(g_.ops.size()) - 1;
}

Result<Val*> Importer::In(const onnx::Node& n, size_t i, bool required) {
  if (!HasIn(n, i)) {
    if (!required) return static_cast<Val*>(nullptr);
    return Fail(n, "input " + std::to_string(i) + " is required");
  }
  auto it = vals_.find(n.inputs[i]);
  if (it == vals_.end())
    return Fail(n, "input '" + n.inputs[i] + "' is not produced by any earlier node, initializer or graph input");
  return &it->second;
}

Status Importer::SetOut(const onnx::Node& n, size_t i, Val v) {
  if (i >= n.outputs.size() || n.outputs[i].empty()) return {};
  if (vals_.count(n.outputs[i])) return Fail(n, "output '" + n.outputs[i] + "' is written twice");
  vals_[n.outputs[i]] = std::move(v);
  return {};
}

Result<std::shared_ptr<HostTensor>> Importer::ConstIn(const onnx::Node& n, size_t i, const char* what) {
  VKQC_ASSIGN_OR_RETURN(Val * v, In(n, i));
  if (!v->c)
    return Fail(n, std::string(what) + " ('" + n.inputs[i] +
                       "') must be a constant (an initializer or Constant): vkqc fixes it at compile time");
  return v->c;
}

Result<ir::Quant> Importer::ScalarQuant(const onnx::Node& n, size_t scale_in, size_t zp_in, ir::Scheme s,
                                        bool per_axis) {
  VKQC_ASSIGN_OR_RETURN(auto sc, ConstIn(n, scale_in, "the scale"));
  const int64_t count = sc->NumElements();
  if (count != 1 && !per_axis)
    return Fail(n, "the scale ('" + n.inputs[scale_in] + "') has " + std::to_string(count) +
                       " values; this op's activations are quantized per tensor (one scale)");
  if (count < 1) return Fail(n, "the scale is empty");
  ir::Quant q;
  q.scheme = count == 1 ? s : ir::Scheme::Q8PC;
  for (int64_t i = 0; i < count; ++i) {
    const double scale = sc->At(i);
    if (!(scale > 0) || !std::isfinite(scale) || float(scale) <= 0)
      return Fail(n, "the scale " + std::to_string(scale) + " must be finite and > 0");
    q.scales.push_back(float(scale));
  }
  q.zero_points.assign(size_t(count), -128);  // absent: uint8 0
  if (HasIn(n, zp_in)) {
    VKQC_ASSIGN_OR_RETURN(auto z, ConstIn(n, zp_in, "the zero point"));
    if (z->NumElements() != count)
      return Fail(n, "the zero point has " + std::to_string(z->NumElements()) + " values; " + std::to_string(count) +
                         " are expected");
    for (int64_t i = 0; i < count; ++i) {
      if (z->type == int32_t(onnx::ElemType::Uint8))
        q.zero_points[size_t(i)] = int32_t(z->At(i)) - 128;
      else if (z->type == int32_t(onnx::ElemType::Int8))
        q.zero_points[size_t(i)] = int32_t(z->At(i));
      else
        return Fail(n, std::string("zero point of type ") + onnx::ElemTypeName(z->type) +
                           ": vkqc activations are int8 or uint8");
    }
  }
  return q;
}

Status Importer::BindQuant(int t, const ir::Quant& q, const onnx::Node& n) {
  ir::Tensor& ts = g_.tensors[size_t(t)];
  if (graph_inputs_.count(t) && !quant_bound_.count(t)) {
    ts.quant = q;
    if (q.scheme != ir::Scheme::Q8PC) ts.quant->scheme = ir::Scheme::Q8TA;
    quant_bound_.insert(t);
    return {};
  }
  if (!ts.quant || ts.quant->scales != q.scales || ts.quant->zero_points != q.zero_points ||
      (q.scheme == ir::Scheme::Q8PC && ts.quant->axis != q.axis))
    return Fail(n, "the int8 tensor '" + ts.name + "' is read with scale/zero point (" + std::to_string(q.scales[0]) +
                       ", " + std::to_string(q.zero_points[0]) + ") but was written with (" +
                       (ts.quant && !ts.quant->scales.empty()
                            ? std::to_string(ts.quant->scales[0]) + ", " + std::to_string(ts.quant->zero_points[0])
                            : std::string("none")) +
                       "): requantizing between them is not supported");
  return {};
}

Result<int> Importer::Float(Val& v, const onnx::Node& n) {
  if (v.t >= 0 && g_.tensors[size_t(v.t)].dtype == ir::DType::F32) return v.t;
  if (v.qsrc >= 0) {
    auto it = float_of_.find(v.qsrc);
    if (it == float_of_.end()) {
      const ir::Tensor& q = g_.tensors[size_t(v.qsrc)];
      int f = AddTensor(q.name + ".dq", q.shape, ir::DType::F32);
      ir::Op op;
      op.type = ir::OpType::Dequantize;
      op.name = Fresh("dequantize");
      op.inputs = {v.qsrc};
      op.outputs = {f};
      AddOp(std::move(op));
      it = float_of_.emplace(v.qsrc, f).first;
    }
    v.t = it->second;
    return v.t;
  }
  if (v.t >= 0)
    return Fail(n, "integer arithmetic on a raw int8/uint8 tensor is not supported: vkqc computes on int8 tensors "
                   "read through DequantizeLinear (or QLinear ops)");
  return Fail(n, "a constant input where vkqc needs a computed tensor (constant folding of this op is not supported)");
}

int Importer::Transpose(int t, const std::vector<int32_t>& perm, const std::string& name) {
  const ir::Tensor& x = g_.tensors[size_t(t)];
  std::vector<int64_t> shape;
  for (int32_t p : perm) shape.push_back(x.shape[size_t(p)]);
  int y = AddTensor(name, shape, x.dtype, x.quant);
  ir::Op op;
  op.type = ir::OpType::Transpose;
  op.name = Fresh("transpose");
  op.inputs = {t};
  op.outputs = {y};
  op.transpose.perm = perm;
  AddOp(std::move(op));
  return y;
}

int Importer::Reshape(int t, std::vector<int64_t> shape, const std::string& name) {
  const ir::Tensor& x = g_.tensors[size_t(t)];
  if (x.shape == shape) return t;
  int y = AddTensor(name, std::move(shape), x.dtype, x.quant);
  ir::Op op;
  op.type = ir::OpType::Reshape;
  op.name = Fresh("reshape");
  op.inputs = {t};
  op.outputs = {y};
  AddOp(std::move(op));
  return y;
}

// Moves the value's tensors to the other 4-d layout, once per tensor (cached both ways).
int Relayout(Importer& im, int t, bool to_nhwc) {
  if (t < 0) return t;
  auto& cache = to_nhwc ? im.nhwc_of_ : im.nchw_of_;
  if (auto it = cache.find(t); it != cache.end()) return it->second;
  const std::vector<int32_t> perm = to_nhwc ? std::vector<int32_t>{0, 2, 3, 1} : std::vector<int32_t>{0, 3, 1, 2};
  const ir::Tensor& x = im.g_.tensors[size_t(t)];
  const std::string name = x.name + (to_nhwc ? ".nhwc" : ".nchw");
  std::vector<int64_t> shape;
  for (int32_t p : perm) shape.push_back(x.shape[size_t(p)]);
  // With one channel or a 1x1 image both layouts have the same element order: a reshape.
  const int64_t c = to_nhwc ? x.shape[1] : x.shape[3];
  const int64_t hw = to_nhwc ? x.shape[2] * x.shape[3] : x.shape[1] * x.shape[2];
  int y = (c == 1 || hw == 1) ? im.Reshape(t, shape, name) : im.Transpose(t, perm, name);
  cache[t] = y;
  (to_nhwc ? im.nchw_of_ : im.nhwc_of_)[y] = t;
  return y;
}

Result<int> Importer::Get(Val& v, const onnx::Node& n, bool int8, Layout l) {
  if (!v.runtime()) return Fail(n, "a constant input where vkqc needs a computed tensor (constant folding of this op is not supported)");
  if (l == Layout::Nhwc && !v.nhwc) {
    if (v.shape.size() != 4)
      return Fail(n, "the input has rank " + std::to_string(v.shape.size()) + "; 4 (N, C, H, W) is expected");
    if (v.qsrc >= 0) {
      v.qsrc = Relayout(*this, v.qsrc, true);
      v.t = -1;  // the float form follows from the moved int8 tensor
    } else {
      v.t = Relayout(*this, v.t, true);
    }
    v.nhwc = true;
    v.producer = -1;
  }
  int t;
  if (int8) {
    t = Int8Of(v);
    if (t < 0) return Fail(n, "an int8 tensor is expected");
  } else {
    VKQC_ASSIGN_OR_RETURN(t, Float(v, n));
  }
  if (l == Layout::Onnx && v.nhwc) t = Relayout(*this, t, false);
  return t;
}

std::optional<ir::Quant> Importer::QuantizedConsumer(const onnx::Node& n, ir::Activation* act) {
  auto single = [&](const std::string& name) -> const onnx::Node* {
    auto it = consumers_.find(name);
    if (it == consumers_.end() || it->second.size() != 1 || uses_[name] != 1) return nullptr;
    return &m_.graph.nodes[it->second[0]];
  };
  if (n.outputs.empty()) return std::nullopt;
  const onnx::Node* c = single(n.outputs[0]);
  if (!c) return std::nullopt;
  const onnx::Node* relu = nullptr;
  ir::Activation a = ir::Activation::None;
  if (act && (c->op_type == "Relu" || c->op_type == "Clip") && c->domain.empty()) {
    bool fusable = false;
    a = ActOf(*c, vals_, &fusable);
    if (!fusable) return std::nullopt;
    relu = c;
    c = single(c->outputs[0]);
    if (!c) return std::nullopt;
  }
  if (c->op_type != "QuantizeLinear" || !c->domain.empty()) return std::nullopt;
  if (c->Find("block_size") && c->Find("block_size")->i != 0) return std::nullopt;
  if (c->inputs.size() < 2 || c->inputs.size() > 3 || c->Find("output_dtype") != nullptr) return std::nullopt;
  // Constant scalar parameters (int8 or uint8 zero point), or the Q stays a node of its own.
  auto q = ScalarQuant(*c, 1, 2, ir::Scheme::Q8TO);
  if (!q.ok()) return std::nullopt;
  if (act) *act = a;
  pending_out_ = c->outputs[0];
  done_.insert(size_t(c - m_.graph.nodes.data()));
  if (relu) done_.insert(size_t(relu - m_.graph.nodes.data()));
  return q.value();
}

Result<ConstQuant> Importer::ToConstQuant(const Val& v, const onnx::Node& n, const char* what) {
  if (v.cq) return *v.cq;
  if (v.c)
    return Fail(n, std::string(what) + " is a float constant: vkqc needs int8 weights here (a DequantizeLinear of "
                                       "int8/uint8 weights, as a QDQ exporter writes them)");
  return Fail(n, std::string(what) + " must be a constant (weights are packed at compile time)");
}

Result<ir::Graph> Importer::Run() {
  const int64_t opset = m_.Opset("");
  // Ops whose definition changed across opsets are converted per version (Clip, Softmax, Resize,
  // Squeeze/Unsqueeze, Upsample); ops older than opset 7's broadcasting rules are refused by name.
  if (opset < 1 || opset > 21)
    return UserError("the model imports ONNX opset " + std::to_string(opset) + "; vkqc imports opsets 1 to 21");
  for (const auto& [domain, version] : m_.opsets)
    if (!domain.empty() && domain != "ai.onnx" && domain != "com.microsoft" && domain != "ai.onnx.ml")
      return UserError("the model imports operator domain '" + domain + "'; vkqc knows ai.onnx and com.microsoft");
  if (m_.graph.sparse_initializers)
    return UserError("the model has sparse initializers; they are not supported");
  for (size_t i = 0; i < m_.graph.initializers.size(); ++i) {
    const onnx::Tensor& t = m_.graph.initializers[i];
    if (t.name.empty()) return UserError("initializer " + std::to_string(i) + " has no name");
    VKQC_ASSIGN_OR_RETURN(HostTensor h, onnx::Decode(t, base_dir_, "initializer '" + t.name + "'"));
    Val v;
    v.c = std::make_shared<HostTensor>(std::move(h));
    v.shape = t.dims;
    vals_[t.name] = std::move(v);
  }
  for (const onnx::ValueInfo& in : m_.graph.inputs) {
    if (vals_.count(in.name)) continue;  // IR < 4 lists initializers as inputs too
    if (!in.is_tensor) return UserError("graph input '" + in.name + "' is not a tensor");
    std::vector<int64_t> shape;
    if (auto it = o_.input_shapes.find(in.name); it != o_.input_shapes.end()) {
      shape = it->second;
      if (in.has_shape && in.dims.size() != shape.size())
        return UserError("--input-shape " + in.name + " has " + std::to_string(shape.size()) +
                         " dimensions; the model's input has " + std::to_string(in.dims.size()));
      for (size_t d = 0; in.has_shape && d < shape.size(); ++d)
        if (in.dims[d].has_value && in.dims[d].value != shape[d])
          return UserError("--input-shape " + in.name + ": dimension " + std::to_string(d) + " is " +
                           std::to_string(in.dims[d].value) + " in the model, not " + std::to_string(shape[d]));
    } else {
      if (!in.has_shape) return UserError("graph input '" + in.name + "' has no shape; bind it with --input-shape " + in.name + "=D0,D1,...");
      for (const onnx::Dim& d : in.dims) {
        if (!d.has_value || d.value <= 0)
          return UserError("graph input '" + in.name + "' has a dynamic dimension" +
                           (d.param.empty() ? std::string() : " '" + d.param + "'") +
                           "; bind every dimension at compile time with --input-shape " + in.name + "=D0,D1,...");
        shape.push_back(d.value);
      }
    }
    for (int64_t d : shape)
      if (d <= 0 || d > kMaxDim)
        return UserError("graph input '" + in.name + "': dimensions must be in 1.." + std::to_string(kMaxDim));
    if (Prod(shape) > kMaxElements)
      return UserError("graph input '" + in.name + "' has more than 2^40 elements");
    for (auto& [k, unused] : o_.input_shapes) {
      bool found = false;
      for (const auto& i2 : m_.graph.inputs) found = found || i2.name == k;
      if (!found) return UserError("--input-shape names '" + k + "', which is not a graph input");
    }
    ir::DType dt;
    if (in.elem_type == int32_t(onnx::ElemType::Float)) dt = ir::DType::F32;
    else if (in.elem_type == int32_t(onnx::ElemType::Int8) || in.elem_type == int32_t(onnx::ElemType::Uint8)) dt = ir::DType::I8;
    else
      return UserError("graph input '" + in.name + "' has element type " + onnx::ElemTypeName(in.elem_type) +
                       "; vkqc inputs are float, int8 or uint8");
    Val v;
    v.shape = shape;
    std::vector<int64_t> vshape = shape;
    if (shape.size() == 4 && o_.nhwc_inputs) {
      vshape = {shape[0], shape[2], shape[3], shape[1]};
      v.nhwc = true;
    }
    v.t = AddTensor(in.name, vshape, dt);
    graph_inputs_.insert(v.t);
    if (in.elem_type == int32_t(onnx::ElemType::Uint8)) uint8_inputs_.insert(in.name);
    g_.inputs.push_back(v.t);
    vals_[in.name] = std::move(v);
  }
  for (size_t i = 0; i < m_.graph.nodes.size(); ++i)
    for (const std::string& s : m_.graph.nodes[i].inputs)
      if (!s.empty()) {
        uses_[s]++;
        consumers_[s].push_back(i);
      }
  for (const auto& out : m_.graph.outputs) uses_[out.name]++;
  for (size_t i = 0; i < m_.graph.nodes.size(); ++i) {
    if (done_.count(i)) continue;
    node_index_ = i;
    node_ = &m_.graph.nodes[i];
    VKQC_TRY(Convert(*node_));
  }
  node_ = nullptr;
  for (const auto& out : m_.graph.outputs) {
    auto it = vals_.find(out.name);
    if (it == vals_.end()) return UserError("graph output '" + out.name + "' is not produced by any node");
    Val& v = it->second;
    if (!v.runtime()) return UserError("graph output '" + out.name + "' is a constant; vkqc outputs are computed");
    onnx::Node dummy;
    dummy.op_type = "graph output";
    int t;
    if (v.qsrc < 0 && v.t >= 0 && IsI8(v.t)) {
      t = v.t;
    } else {
      VKQC_ASSIGN_OR_RETURN(t, Float(v, dummy));
    }
    if (v.shape.size() == 4 && v.nhwc && !o_.nhwc_outputs) t = Relayout(*this, t, false);
    if (graph_inputs_.count(t)) {  // an identity model: one copy
      std::vector<int32_t> perm(g_.tensors[size_t(t)].shape.size());
      std::iota(perm.begin(), perm.end(), 0);
      t = Transpose(t, perm, out.name + ".copy");
    }
    for (int o : g_.outputs)
      if (o == t) return UserError("graph output '" + out.name + "' is the same tensor as another output");
    // The output tensor carries the ONNX name.
    if (g_.tensors[size_t(t)].name != out.name) {
      int other = g_.FindTensor(out.name);
      if (other >= 0) g_.tensors[size_t(other)].name = Fresh(out.name + ".inner");
      g_.tensors[size_t(t)].name = out.name;
    }
    g_.outputs.push_back(t);
  }
  for (int t : g_.inputs)
    if (IsI8(t) && !quant_bound_.count(t))
      return UserError("int8 graph input '" + g_.tensors[size_t(t)].name +
                       "' is never read through DequantizeLinear or a QLinear op, so its scale is unknown");
  std::string desc = "onnx";
  if (!m_.producer_name.empty()) desc += " from " + m_.producer_name + " " + m_.producer_version;
  desc += ", opset " + std::to_string(opset) + ", " + std::to_string(m_.graph.nodes.size()) + " nodes";
  if (!uint8_inputs_.empty()) desc += "; uint8 inputs are fed as int8 (value - 128)";
  g_.metadata["description"] = std::vector<uint8_t>(desc.begin(), desc.end());
  return std::move(g_);
}

}  // namespace onnx_import

Result<ir::Graph> ImportOnnx(const std::string& path, const OnnxImportOptions& options) {
  VKQC_ASSIGN_OR_RETURN(onnx::Model m, onnx::ReadModel(path));
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  onnx_import::Importer im(m, dir, options);
  auto g = im.Run();
  if (!g.ok()) {
    Error e = g.error();  // keeps its kind: an internal error stays one
    e.message = path + ": " + e.message;
    return e;
  }
  VKQC_TRY(VerifyGraph(g.value(), path));
  return g;
}

}  // namespace vkqc
