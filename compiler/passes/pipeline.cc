#include "compiler/passes/pipeline.h"

#include <algorithm>
#include <climits>
#include <map>
#include <sstream>

#include "compiler/emit/bundle_plan.h"
#include "compiler/graph/verify.h"
#include "compiler/kernels/conv/conv.h"
#include "compiler/kernels/elementwise/elementwise.h"
#include "compiler/passes/fold_quant.h"
#include "compiler/plan/planner.h"
#include "compiler/shaderlib/shaderlib.h"

namespace vkqc {
namespace {

using linear::Accum;
using linear::Algo;

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Where one layer's constants live in the weight segment, and their word offsets.
struct LayerConstants {
  uint64_t offset = 0, size = 0;
  linear::PackedLinear layout;      // linear / GEMM convolutions; region emptied after copying
  conv::PackedDepthwise depthwise;  // depthwise convolutions; region emptied after copying
  conv::PackedDirect direct;        // direct convolutions; region emptied after copying
  conv::ConvChoice conv;            // convolutions: the algorithm and why
};

// A buffer a dispatch binds, before arena placement: an input/output buffer or an arena range.
struct VBuf {
  SliceKind kind = SliceKind::Arena;
  uint32_t index = 0;
  uint64_t size = 0;
  std::string name;
  uint32_t first = UINT32_MAX, last = 0;  // dispatch steps touching it
  uint64_t offset = 0;
};

struct Bind {
  int vb = -1;                      // -1: a weight-segment slice
  uint64_t w_offset = 0, w_size = 0;
  bool written = false;
};

struct DSpec {
  linear::DispatchParams params;
  std::vector<Bind> binds;
  uint32_t layer = 0;
};

class Compiler {
 public:
  Compiler(const ir::Graph& g, const TargetProfile& p, const CompileOptions& o)
      : gm_(g), g_(gm_), p_(p), o_(o),
        align_(std::max<uint32_t>(256, p.min_storage_buffer_offset_alignment)) {}

  Result<std::vector<uint8_t>> Run(uint64_t graph_hash) {
    VKQC_TRY(VerifyGraph(g_, "graph"));
    fold_ = FoldQuantization(gm_);
    std::vector<int64_t> tokens = o_.tokens;
    if (g_.HasSymbolicDim()) {
      if (tokens.empty())
        return UserError("the graph has a symbolic '" + g_.symbolic_dim +
                         "' dimension: pass the sizes to build with --tokens N[,N...]");
      for (int64_t t : tokens)
        if (t < 1 || t > (1 << 20))
          return UserError("--tokens " + std::to_string(t) + " is out of range (1..1048576)");
      std::sort(tokens.begin(), tokens.end());
      tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
    } else {
      if (!tokens.empty())
        return UserError("--tokens was given, but the graph has no symbolic dimension");
      tokens = {0};  // one program with the static shapes
    }
    plan_.compiler_version = kCompilerVersion;
    plan_.target_profile = p_.name;
    plan_.graph_hash = graph_hash;
    VKQC_TRY(PackConstants());
    for (int64_t t : tokens) VKQC_TRY(BuildProgram(t));
    plan_.requirements = DeriveRequirements(plan_, align_);
    VKQC_TRY(CheckAgainstProfile());
    return WriteBundle(plan_);
  }

 private:
  int64_t Dim(int64_t d, int64_t tokens) const { return d == ir::kSymbolicDim ? tokens : d; }

  std::string OpLabel(size_t i) const {
    return "op " + std::to_string(i) + " ('" + g_.ops[i].name + "')";
  }

  Status PackConstants() {
    consts_.resize(g_.ops.size());
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      const ir::Op& op = g_.ops[i];
      if (op.type == ir::OpType::Conv2d) {
        VKQC_TRY(PackConv(i));
        continue;
      }
      if (NeedsConvert(op)) {  // per-tensor or per-channel parameters of convert.comp
        const ir::Tensor& it = g_.tensors[op.type == ir::OpType::Quantize ? op.outputs[0] : op.inputs[0]];
        if (it.quant->scheme == ir::Scheme::DQ8CA) continue;  // per-row parameters live in the arena
        std::vector<uint8_t> region = conv::PackConvertParams(*it.quant);
        if (const int src = fold_.requant_source[i]; src >= 0) {  // + the source's {scale, inv, zp}
          const std::vector<uint8_t> in = conv::PackConvertParams(*g_.tensors[src].quant);
          region.insert(region.end(), in.begin(), in.end());
        }
        Append(consts_[i], region);
        continue;
      }
      if (op.type != ir::OpType::Linear) continue;
      const ir::Tensor& w = g_.tensors[op.inputs[1]];
      const int64_t n = w.shape[0], k = w.shape[1];
      const float* bias = nullptr;
      if (op.inputs.size() > 2)
        bias = reinterpret_cast<const float*>(g_.tensors[op.inputs[2]].data->data());
      const ir::Quant& q = *w.quant;
      linear::PackedLinear packed =
          linear::PackLinear(q.scheme, w.data->data(), n, k, q.group_size, q.scales.data(),
                             q.zero_points.empty() ? nullptr : q.zero_points.data(), bias);
      if (packed.region.size() > p_.max_storage_buffer_range)
        return UserError(OpLabel(i) + ": packed weights (" + std::to_string(packed.region.size()) +
                         " bytes) exceed maxStorageBufferRange " +
                         std::to_string(p_.max_storage_buffer_range) + " of target '" + p_.name + "'");
      LayerConstants& c = consts_[i];
      c.offset = AlignUp(plan_.weights.size(), align_);
      c.size = packed.region.size();
      plan_.weights.resize(c.offset);
      plan_.weights.insert(plan_.weights.end(), packed.region.begin(), packed.region.end());
      packed.region.clear();
      packed.region.shrink_to_fit();
      c.layout = std::move(packed);
    }
    plan_.weights.resize(AlignUp(plan_.weights.size(), 64));
    return {};
  }

  void Append(LayerConstants& c, std::vector<uint8_t>& region) {
    c.offset = AlignUp(plan_.weights.size(), align_);
    c.size = region.size();
    plan_.weights.resize(c.offset);
    plan_.weights.insert(plan_.weights.end(), region.begin(), region.end());
    region.clear();
    region.shrink_to_fit();
  }

  // Convolution weights: depthwise ones for the direct kernel, groups == 1 as a GEMM weight
  // [Cout][KH*KW*Cin] (the IR's [Cout][KH][KW][Cin] bytes in the order im2col writes K).
  Status PackConv(size_t i) {
    const ir::Op& op = g_.ops[i];
    const ir::Tensor& x = g_.tensors[op.inputs[0]];
    const ir::Tensor& w = g_.tensors[op.inputs[1]];
    const int64_t cout = w.shape[0], kh = w.shape[1], kw = w.shape[2], cin = x.shape[3];
    const float* bias =
        op.inputs.size() > 2 ? reinterpret_cast<const float*>(g_.tensors[op.inputs[2]].data->data()) : nullptr;
    LayerConstants& c = consts_[i];
    const int32_t groups = op.conv2d.groups;
    // The choice does not depend on the batch (token) size: decide once, pack once.
    c.conv = conv::SelectConv(ConvGeo(op, 1), cout, groups, p_, o_.conv);
    if (c.conv.algo == conv::ConvAlgo::Depthwise) {
      c.depthwise = conv::PackDepthwise(reinterpret_cast<const int8_t*>(w.data->data()), cout, kh, kw,
                                        w.quant->scales.data(), bias);
      Append(c, c.depthwise.region);
      return {};
    }
    if (c.conv.algo == conv::ConvAlgo::Direct) {
      c.direct = conv::PackDirect(reinterpret_cast<const int8_t*>(w.data->data()), cout, kh * kw * (cin / groups),
                                  w.quant->scales.data(), bias);
      Append(c, c.direct.region);
      return {};
    }
    c.layout = linear::PackLinear(ir::Scheme::Q8CSW, w.data->data(), cout, kh * kw * cin, 0, w.quant->scales.data(),
                                  nullptr, bias);
    if (c.layout.region.size() > p_.max_storage_buffer_range)
      return UserError(OpLabel(i) + ": packed weights exceed maxStorageBufferRange of target '" + p_.name + "'");
    Append(c, c.layout.region);
    return {};
  }

  // quantize/dequantize ops that run through convert.comp: f16 or i32 on either side, or
  // per-channel parameters. The f32 <-> int8 per-tensor and per-token ones keep their kernels.
  bool NeedsConvert(const ir::Op& op) const {
    if (op.type != ir::OpType::Quantize && op.type != ir::OpType::Dequantize) return false;
    if (!fold_.folded[&op - g_.ops.data()].empty()) return false;
    if (fold_.requant_source[&op - g_.ops.data()] >= 0) return true;
    const ir::Tensor& in = g_.tensors[op.inputs[0]];
    const ir::Tensor& out = g_.tensors[op.outputs[0]];
    const ir::Tensor& it = op.type == ir::OpType::Quantize ? out : in;
    return in.dtype == ir::DType::F16 || out.dtype == ir::DType::F16 || it.dtype == ir::DType::I32 ||
           it.quant->scheme == ir::Scheme::Q8PC;
  }

  // Elements between consecutive channels of a per-channel tensor (1 for per tensor).
  int64_t ChannelInner(const ir::Tensor& t, int64_t tokens) const {
    if (!t.quant || t.quant->scheme != ir::Scheme::Q8PC) return 1;
    int64_t inner = 1;
    for (size_t d = size_t(t.quant->axis) + 1; d < t.shape.size(); ++d) inner *= Dim(t.shape[d], tokens);
    return inner;
  }

  conv::ConvGeometry ConvGeo(const ir::Op& op, int64_t tokens) const {
    const ir::Tensor& xt = g_.tensors[op.inputs[0]];
    const ir::Tensor& wt = g_.tensors[op.inputs[1]];
    const ir::Tensor& yt = g_.tensors[op.outputs[0]];
    const ir::Conv2dAttrs& a = op.conv2d;
    conv::ConvGeometry geo;
    geo.n = Dim(xt.shape[0], tokens);
    geo.h = xt.shape[1];
    geo.w = xt.shape[2];
    geo.c = xt.shape[3];
    geo.kh = wt.shape[1];
    geo.kw = wt.shape[2];
    geo.sh = a.stride[0];
    geo.sw = a.stride[1];
    geo.pt = a.padding[0];
    geo.pl = a.padding[1];
    geo.pb = a.padding[2];
    geo.pr = a.padding[3];
    geo.dh = a.dilation[0];
    geo.dw = a.dilation[1];
    geo.oh = yt.shape[1];
    geo.ow = yt.shape[2];
    return geo;
  }

  linear::LinearShape ShapeOf(const ir::Op& op, int64_t tokens) const {
    const ir::Tensor& x = g_.tensors[op.inputs[0]];
    const ir::Tensor& w = g_.tensors[op.inputs[1]];
    linear::LinearShape s;
    s.m = Dim(x.shape[0], tokens);
    s.k = x.shape[1];
    s.n = w.shape[0];
    s.x_int8 = x.dtype == ir::DType::I8;
    const ir::Scheme a = op.linear.input_quant.scheme;
    s.act = (a == ir::Scheme::Q8TA || a == ir::Scheme::DQ8CA) ? a : ir::Scheme::Float;
    // An int8 input carries its own parameters: per token (dq8ca, from a quantize op) or per
    // tensor (q8ta, or the q8to output of the previous linear).
    if (s.x_int8) s.act = x.quant->scheme == ir::Scheme::DQ8CA ? ir::Scheme::DQ8CA : ir::Scheme::Q8TA;
    s.weights = w.quant->scheme;
    s.group_size = w.quant->group_size;
    s.has_bias = op.inputs.size() > 2;
    s.relu = op.linear.fused_relu;
    s.relu6 = op.linear.fused_relu6;
    s.out_q8 = op.linear.output_quant.scheme == ir::Scheme::Q8TO;
    return s;
  }

  Result<uint32_t> PipelineFor(const linear::DispatchParams& d) {
    VKQC_ASSIGN_OR_RETURN(CompiledShader sh, CompileShader(d.shader.source, d.shader.defines));
    const auto& r = sh.reflection;
    if (r.push_constant_size != d.push.size())
      return InternalError(sh.name + ": push-constant block is " + std::to_string(r.push_constant_size) +
                           " bytes in SPIR-V but the C++ struct is " + std::to_string(d.push.size()));
    // The optimizer drops constants a variant does not use; specialize only the ones left.
    std::vector<linear::SpecValue> spec;
    for (const auto& s : d.spec)
      if (std::binary_search(r.spec_constant_ids.begin(), r.spec_constant_ids.end(), s.id)) spec.push_back(s);
    uint32_t module = 0;
    auto mit = module_index_.find(sh.hash);
    if (mit == module_index_.end()) {
      module = uint32_t(plan_.modules.size());
      plan_.modules.push_back({sh.name, sh.spirv, sh.hash});
      module_index_[sh.hash] = module;
    } else {
      module = mit->second;
    }
    std::ostringstream key;
    key << module << ":" << d.required_subgroup_size;
    for (const auto& s : spec) key << ":" << s.id << "=" << s.value;
    auto pit = pipeline_index_.find(key.str());
    if (pit != pipeline_index_.end()) return pit->second;
    PlanPipeline pp;
    pp.name = sh.name;
    pp.module = module;
    for (const auto& s : spec) pp.spec.push_back({s.id, s.value});
    std::copy(d.local_size, d.local_size + 3, pp.local_size);
    pp.push_constant_size = r.push_constant_size;
    pp.bindings = r.storage_buffer_bindings;
    pp.required_subgroup_size = d.required_subgroup_size;
    pp.shared_memory_bytes = d.shared_memory_bytes;
    pp.int_dot = r.uses_int_dot;
    pp.subgroup_arithmetic = r.uses_subgroup_arithmetic;
    pp.float16 = r.uses_float16;
    pp.int8 = r.uses_int8;
    pp.storage_buffer_8bit = r.uses_storage_buffer_8bit;
    pp.cooperative_matrix_nv = r.uses_cooperative_matrix_nv;
    pp.cooperative_matrix_khr = r.uses_cooperative_matrix_khr;
    if (r.uses_cooperative_matrix_khr) {
      if (!d.coopmat.m) return InternalError(sh.name + ": KHR cooperative-matrix kernel without its MulAdd shape");
      pp.coopmat = {d.coopmat.m, d.coopmat.n, d.coopmat.k, d.coopmat.a, d.coopmat.b, d.coopmat.c, d.coopmat.result};
    }
    pp.vulkan_memory_model = r.uses_vulkan_memory_model;
    const uint32_t idx = uint32_t(plan_.pipelines.size());
    plan_.pipelines.push_back(std::move(pp));
    pipeline_index_[key.str()] = idx;
    return idx;
  }

  // Bytes of a tensor on the device: f32 as is; int8 as packed rows of PackedK4(last dim) words.
  uint64_t DeviceBytes(int t, int64_t tokens) const {
    const ir::Tensor& ten = g_.tensors[t];
    if (ten.dtype == ir::DType::I8) {
      const int64_t last = ten.shape.back();
      const int64_t rows = ten.NumElements(tokens) / last;
      return uint64_t(rows) * linear::PackedK4(last) * 4;
    }
    if (ten.dtype == ir::DType::F16) return (uint64_t(ten.NumElements(tokens)) * 2 + 3) / 4 * 4;
    return uint64_t(ten.NumElements(tokens)) * 4;
  }

  PlanIo MakeIo(int t, int64_t tokens) const {
    const ir::Tensor& ten = g_.tensors[t];
    PlanIo io;
    io.name = ten.name;
    for (int64_t d : ten.shape) io.shape.push_back(Dim(d, tokens));
    io.dtype = uint8_t(ten.dtype);
    io.size = uint64_t(ten.NumElements(tokens)) * uint64_t(ir::DTypeBits(ten.dtype) / 8);
    if (ten.quant) {
      io.scheme = uint8_t(ten.quant->scheme);
      io.scales = ten.quant->scales;
      io.zero_points = ten.quant->zero_points;
    }
    return io;
  }

  Status BuildProgram(int64_t tokens) {
    PlanProgram prog;
    prog.tokens = uint32_t(tokens);
    prog.name = tokens ? "tokens=" + std::to_string(tokens) : "main";
    std::vector<VBuf> vbs;
    auto add_vb = [&](SliceKind kind, uint32_t index, uint64_t size, std::string name) {
      vbs.push_back({kind, index, std::max<uint64_t>(size, 4), std::move(name)});
      return int(vbs.size() - 1);
    };
    std::map<int, int> tensor_vb;  // the buffer kernels read/write for tensor t
    std::vector<DSpec> specs;
    auto layer = [&](std::string name, std::string op, int32_t op_index) {
      PlanLayer l;
      l.name = std::move(name);
      l.op = std::move(op);
      l.op_index = op_index;
      prog.layers.push_back(std::move(l));
      return uint32_t(prog.layers.size() - 1);
    };
    auto dispatch = [&](const linear::DispatchParams& d, std::vector<Bind> binds, uint32_t l) {
      specs.push_back({d, std::move(binds), l});
    };

    // Graph inputs and outputs; int8 ones are dense bytes there and packed in the arena.
    struct Repack {
      int tensor, dense, packed;
    };
    std::vector<Repack> repack_in, repack_out;
    for (size_t i = 0; i < g_.inputs.size(); ++i) {
      const int t = g_.inputs[i];
      prog.inputs.push_back(MakeIo(t, tokens));
      const int io = add_vb(SliceKind::Input, uint32_t(i), (prog.inputs.back().size + 3) / 4 * 4, g_.tensors[t].name);
      if (g_.tensors[t].dtype == ir::DType::I8) {
        tensor_vb[t] = add_vb(SliceKind::Arena, 0, DeviceBytes(t, tokens), g_.tensors[t].name + ".packed");
        repack_in.push_back({t, io, tensor_vb[t]});
      } else {
        tensor_vb[t] = io;
      }
    }
    for (size_t i = 0; i < g_.outputs.size(); ++i) {
      const int t = g_.outputs[i];
      prog.outputs.push_back(MakeIo(t, tokens));
      const int io = add_vb(SliceKind::Output, uint32_t(i), (prog.outputs.back().size + 3) / 4 * 4, g_.tensors[t].name);
      if (tensor_vb.count(t)) return UserError("tensor '" + g_.tensors[t].name + "' is both a graph input and output");
      if (g_.tensors[t].dtype == ir::DType::I8) {
        tensor_vb[t] = add_vb(SliceKind::Arena, 0, DeviceBytes(t, tokens), g_.tensors[t].name + ".packed");
        repack_out.push_back({t, io, tensor_vb[t]});
      } else {
        tensor_vb[t] = io;
      }
    }
    std::map<int, int> row_params_vb;  // per-token int8 tensors: their [rows] x {scale, zp}
    for (size_t oi = 0; oi < g_.ops.size(); ++oi)
      for (int t : g_.ops[oi].outputs) {
        if (!fold_.folded[oi].empty()) continue;
        if (!tensor_vb.count(t)) tensor_vb[t] = add_vb(SliceKind::Arena, 0, DeviceBytes(t, tokens), g_.tensors[t].name);
        const ir::Tensor& ten = g_.tensors[t];
        if (ten.dtype == ir::DType::I8 && ten.quant && ten.quant->scheme == ir::Scheme::DQ8CA)
          row_params_vb[t] = add_vb(SliceKind::Arena, 0, uint64_t(ten.NumElements(tokens) / ten.shape.back()) * 8,
                                    ten.name + ".params");
      }
    auto rd = [&](int t) { return Bind{tensor_vb.at(fold_.alias[t]), 0, 0, false}; };
    auto wr = [&](int t) { return Bind{tensor_vb.at(fold_.alias[t]), 0, 0, true}; };

    // int8 graph inputs/outputs: dense bytes <-> packed rows, each its own layer.
    auto repack = [&](const Repack& r, bool to_packed) {
      const ir::Tensor& ten = g_.tensors[r.tensor];
      const int64_t k = ten.shape.back(), m = ten.NumElements(tokens) / k;
      const uint32_t l = layer("repack:" + ten.name, "repack", -1);
      const Bind dense{r.dense, 0, 0, !to_packed}, packed{r.packed, 0, 0, to_packed};
      dispatch(linear::RepackDispatch(to_packed, m, k, p_), to_packed ? std::vector<Bind>{dense, packed}
                                                                       : std::vector<Bind>{packed, dense}, l);
    };
    for (const Repack& r : repack_in) repack(r, true);

    // Quantized copies of float activations, shared by every layer that quantizes the same
    // tensor the same way (e.g. the gate and up projections of an MLP).
    std::map<std::string, std::pair<int, int>> quantized;  // key -> (xq vb, row-params vb or -1)
    // The packed int8 rows (and dq8ca row parameters) of float tensor t quantized as `act`;
    // the first layer that needs them dispatches the quantization, later ones reuse it.
    auto quantize_shared = [&](int t, ir::Scheme act, float scale, int32_t zp, int64_t m, int64_t k, uint32_t l,
                               std::string* note) {
      std::ostringstream key;
      key << t << ":" << int(act) << ":" << scale << ":" << zp;
      auto it = quantized.find(key.str());
      if (it != quantized.end()) {
        *note = "; reuses the quantized input of an earlier layer";
        return it->second;
      }
      const std::string base = g_.tensors[t].name + (act == ir::Scheme::DQ8CA ? ".dq8ca" : ".q8ta");
      const int xq = add_vb(SliceKind::Arena, 0, uint64_t(m) * linear::PackedK4(k) * 4, base);
      int params = -1;
      std::vector<Bind> binds{rd(t), {xq, 0, 0, true}};
      if (act == ir::Scheme::DQ8CA) {
        params = add_vb(SliceKind::Arena, 0, uint64_t(m) * 8, base + ".params");
        binds.push_back({params, 0, 0, true});
      }
      dispatch(linear::QuantizeDispatch(act, m, k, scale, zp, p_), binds, l);
      return quantized.emplace(key.str(), std::make_pair(xq, params)).first->second;
    };

    // fp16 rows of a float activation for the fp16 cooperative-matrix GEMM, shared like the
    // quantized ones.
    std::map<int, int> halves;
    auto halves_shared = [&](int t, int64_t m, int64_t k, uint32_t l, std::string* note) {
      if (auto it = halves.find(t); it != halves.end()) {
        *note = "; reuses the fp16 rows of an earlier layer";
        return it->second;
      }
      const int xh = add_vb(SliceKind::Arena, 0, uint64_t(m) * linear::PackedK4(k) * 8, g_.tensors[t].name + ".f16");
      dispatch(linear::HalfDispatch(m, k, p_), {rd(t), {xh, 0, 0, true}}, l);
      return halves.emplace(t, xh).first->second;
    };

    for (size_t i = 0; i < g_.ops.size(); ++i) {
      const ir::Op& op = g_.ops[i];
      const uint32_t l = layer(op.name, ir::OpTypeName(op.type), int32_t(i));
      PlanLayer& pl = prog.layers[l];
      if (!fold_.folded[i].empty()) {
        pl.variant = "folded";
        pl.reason = fold_.folded[i];
        continue;
      }
      if (const int src = fold_.requant_source[i]; src >= 0) {
        const ir::Tensor& out = g_.tensors[op.outputs[0]];
        const int64_t count = out.NumElements(tokens), k = out.shape.back();
        dispatch(conv::ConvertDispatch(ir::DType::I8, ir::DType::I8, count, k, 1, 1, false, p_),
                 {rd(src), {-1, consts_[i].offset, consts_[i].size, false}, wr(op.outputs[0])}, l);
        pl.variant = "requantize_i8_i8";
        pl.reason = "q' = clamp(roundEven(s_in * (q - zp_in) * inv_scale) + zp), replaces a dequantize -> quantize "
                    "pair; remains: " + fold_.remains[i];
        pl.detail = std::to_string(count) + " values";
        pl.integer_path = true;
        continue;
      }
      if (op.type == ir::OpType::Mul || op.type == ir::OpType::Silu) {
        const uint64_t count = uint64_t(g_.tensors[op.outputs[0]].NumElements(tokens));
        std::vector<Bind> binds{rd(op.inputs[0])};
        if (op.type == ir::OpType::Mul) binds.push_back(rd(op.inputs[1]));
        binds.push_back(wr(op.outputs[0]));
        dispatch(elementwise::ElementwiseDispatch(op.type, count, p_), binds, l);
        pl.variant = elementwise::VariantName(op.type);
        pl.reason = "elementwise float glue op";
        pl.detail = std::to_string(count) + " values";
        continue;
      }
      if (NeedsConvert(op)) {
        const bool quant = op.type == ir::OpType::Quantize;
        const ir::Tensor& in = g_.tensors[op.inputs[0]];
        const ir::Tensor& out = g_.tensors[op.outputs[0]];
        const ir::Tensor& it = quant ? out : in;
        const int64_t count = in.NumElements(tokens), k = in.shape.back();
        const bool per_row = it.quant->scheme == ir::Scheme::DQ8CA;
        const bool per_channel = it.quant->scheme == ir::Scheme::Q8PC;
        const int64_t channels = per_channel ? it.shape[size_t(it.quant->axis)] : 1;
        std::vector<Bind> binds{rd(op.inputs[0])};
        if (per_row) binds.push_back({row_params_vb.at(op.inputs[0]), 0, 0, false});
        else binds.push_back({-1, consts_[i].offset, consts_[i].size, false});
        binds.push_back(wr(op.outputs[0]));
        dispatch(conv::ConvertDispatch(in.dtype, out.dtype, count, k, ChannelInner(it, tokens), channels, per_row, p_),
                 binds, l);
        pl.variant = std::string(quant ? "quantize_" : "dequantize_") + ir::DTypeName(in.dtype) + "_" +
                     ir::DTypeName(out.dtype) + "_" +
                     (per_row ? "per_token" : per_channel ? "per_channel" : "per_tensor");
        pl.reason = quant ? "q = clamp(roundEven(x * inv_scale) + zp)" : "y = scale * (q - zp)";
        if (out.dtype == ir::DType::F16) pl.reason += ", rounded to f16 (nearest even)";
        pl.reason += "; remains: " + fold_.remains[i];
        pl.detail = std::to_string(count) + " values" +
                    (per_channel ? ", " + std::to_string(channels) + " channels along axis " +
                                       std::to_string(it.quant->axis)
                                 : std::string());
        pl.weight_bytes = consts_[i].size;
        continue;
      }
      if (op.type == ir::OpType::Quantize) {
        const ir::Tensor& q = g_.tensors[op.outputs[0]];
        const int64_t k = q.shape.back(), m = q.NumElements(tokens) / k;
        const ir::Scheme scheme = q.quant->scheme;
        float scale = 1.0f;
        int32_t zp = 0;
        if (scheme == ir::Scheme::Q8TA) {
          scale = q.quant->scales[0];
          zp = q.quant->zero_points.empty() ? 0 : q.quant->zero_points[0];
        }
        std::vector<Bind> binds{rd(op.inputs[0]), wr(op.outputs[0])};
        if (scheme == ir::Scheme::DQ8CA) binds.push_back({row_params_vb.at(op.outputs[0]), 0, 0, true});
        dispatch(linear::QuantizeDispatch(scheme, m, k, scale, zp, p_), binds, l);
        pl.variant = scheme == ir::Scheme::DQ8CA ? "quantize_dq8ca" : "quantize_q8ta";
        pl.reason = std::string(scheme == ir::Scheme::DQ8CA ? "per-token scale and zero point computed on the GPU, then int8"
                                                            : "static per-tensor int8") +
                    "; remains: " + fold_.remains[i];
        pl.detail = std::to_string(m) + " rows of " + std::to_string(k);
        continue;
      }
      if (op.type == ir::OpType::Dequantize) {
        const ir::Tensor& q = g_.tensors[op.inputs[0]];
        const int64_t k = q.shape.back(), m = q.NumElements(tokens) / k;
        const bool per_row = q.quant->scheme == ir::Scheme::DQ8CA;
        const float scale = per_row ? 1.0f : q.quant->scales[0];
        const int32_t zp = per_row || q.quant->zero_points.empty() ? 0 : q.quant->zero_points[0];
        std::vector<Bind> binds{rd(op.inputs[0]), wr(op.outputs[0])};
        if (per_row) binds.push_back({row_params_vb.at(op.inputs[0]), 0, 0, false});
        dispatch(conv::DequantizeDispatch(m, k, per_row, scale, zp, p_), binds, l);
        pl.variant = per_row ? "dequantize_i8_per_token" : "dequantize_i8";
        pl.reason = "int8 -> f32: scale * (q - zp); remains: " + fold_.remains[i];
        pl.detail = std::to_string(m) + " rows of " + std::to_string(k);
        continue;
      }
      if (op.type == ir::OpType::Add) {
        const ir::Tensor& at = g_.tensors[op.inputs[0]];
        const ir::Tensor& bt = g_.tensors[op.inputs[1]];
        const int64_t c = at.shape.back(), rows = at.NumElements(tokens) / c;
        const bool int8 = at.dtype == ir::DType::I8;
        conv::AddParams ap;
        auto tq = [](const ir::Tensor& t, float& s, int32_t& z) {
          s = t.quant->scales[0];
          z = t.quant->zero_points.empty() ? 0 : t.quant->zero_points[0];
        };
        if (int8) {
          tq(at, ap.scale_a, ap.zero_point_a);
          tq(bt, ap.scale_b, ap.zero_point_b);
          ap.out_scale = op.add.output_quant.scales[0];
          ap.out_zero_point = op.add.output_quant.zero_points.empty() ? 0 : op.add.output_quant.zero_points[0];
        }
        ap.flags = (op.add.activation == ir::Activation::Relu ? linear::kFlagRelu : 0) |
                   (op.add.activation == ir::Activation::Relu6 ? linear::kFlagRelu6 : 0);
        dispatch(conv::AddDispatch(rows, c, int8, ap, p_), {rd(op.inputs[0]), rd(op.inputs[1]), wr(op.outputs[0])}, l);
        pl.variant = int8 ? "add_q8ta_q8to" : "add_f32";
        pl.reason = int8 ? "int8 inputs with their own scales, requantized to the output's" : "float add";
        pl.detail = std::to_string(rows * c) + " values";
        pl.integer_path = int8;
        continue;
      }
      if (op.type == ir::OpType::AvgPool2d) {
        const ir::Tensor& xt = g_.tensors[op.inputs[0]];
        const ir::Pool2dAttrs& a = op.pool;
        conv::ConvGeometry geo;
        geo.n = Dim(xt.shape[0], tokens);
        geo.h = xt.shape[1];
        geo.w = xt.shape[2];
        geo.c = xt.shape[3];
        if (a.global) {
          geo.kh = geo.h;
          geo.kw = geo.w;
          geo.oh = geo.ow = 1;
        } else {
          geo.kh = a.kernel[0];
          geo.kw = a.kernel[1];
          geo.sh = a.stride[0];
          geo.sw = a.stride[1];
          geo.pt = a.padding[0];
          geo.pl = a.padding[1];
          geo.pb = a.padding[2];
          geo.pr = a.padding[3];
          geo.oh = (geo.h + geo.pt + geo.pb - geo.kh) / geo.sh + 1;
          geo.ow = (geo.w + geo.pl + geo.pr - geo.kw) / geo.sw + 1;
        }
        const bool int8 = xt.dtype == ir::DType::I8;
        float sx = 1, so = 1;
        int32_t zx = 0, zo = 0;
        if (int8) {
          sx = xt.quant->scales[0];
          zx = xt.quant->zero_points.empty() ? 0 : xt.quant->zero_points[0];
          so = a.output_quant.scales[0];
          zo = a.output_quant.zero_points.empty() ? 0 : a.output_quant.zero_points[0];
        }
        dispatch(conv::PoolDispatch(geo, int8, sx, zx, so, zo, p_), {rd(op.inputs[0]), wr(op.outputs[0])}, l);
        pl.variant = std::string(a.global ? "global_avg_pool" : "avg_pool2d") + (int8 ? "_q8ta_q8to" : "_f32");
        pl.reason = "direct, padded taps excluded from the average";
        pl.detail = std::to_string(geo.kh) + "x" + std::to_string(geo.kw) + " window, " +
                    std::to_string(geo.rows()) + " output pixels";
        pl.integer_path = int8;
        continue;
      }
      if (op.type == ir::OpType::Conv2d) {
        const ir::Tensor& xt = g_.tensors[op.inputs[0]];
        const ir::Tensor& wt = g_.tensors[op.inputs[1]];
        const ir::Conv2dAttrs& a = op.conv2d;
        const conv::ConvGeometry geo = ConvGeo(op, tokens);
        const int64_t cout = wt.shape[0];
        const LayerConstants& c = consts_[i];
        linear::LinearConsts lc;
        const bool out_q8 = a.output_quant.scheme == ir::Scheme::Q8TO;
        if (out_q8) {
          lc.out_scale = a.output_quant.scales[0];
          lc.out_zero_point = a.output_quant.zero_points.empty() ? 0 : a.output_quant.zero_points[0];
        }
        // int8 input rows: the tensor itself, or this layer's (shared) quantization of it.
        Bind x = rd(op.inputs[0]);
        std::string quant_note;
        if (xt.dtype == ir::DType::I8) {
          lc.act_scale = xt.quant->scales[0];
          lc.act_zero_point = xt.quant->zero_points.empty() ? 0 : xt.quant->zero_points[0];
        } else if (a.input_quant.scheme == ir::Scheme::Q8TA) {
          lc.act_scale = a.input_quant.scales[0];
          lc.act_zero_point = a.input_quant.zero_points.empty() ? 0 : a.input_quant.zero_points[0];
          x = {quantize_shared(op.inputs[0], ir::Scheme::Q8TA, lc.act_scale, lc.act_zero_point, geo.n * geo.h * geo.w,
                               geo.c, l, &quant_note).first,
               0, 0, false};
        } else {
          return UserError(OpLabel(i) + ": conv2d with float (weight-only) activations is unsupported in this "
                           "version; give it input_quant q8ta or an int8 input");
        }
        const bool bias = op.inputs.size() > 2;
        const uint32_t flags = (bias ? linear::kFlagBias : 0) |
                               (a.activation == ir::Activation::Relu ? linear::kFlagRelu : 0) |
                               (a.activation == ir::Activation::Relu6 ? linear::kFlagRelu6 : 0);
        std::ostringstream det;
        det << geo.kh << "x" << geo.kw << " stride " << geo.sh << "x" << geo.sw << " dilation " << geo.dh << "x"
            << geo.dw << ", " << geo.rows() << " output pixels";
        if (c.conv.algo == conv::ConvAlgo::Direct) {
          dispatch(conv::DirectDispatch(geo, cout, a.groups, c.direct, out_q8, lc, flags, p_),
                   {x, {-1, c.offset, c.size, false}, wr(op.outputs[0])}, l);
          pl.variant = std::string(a.groups > 1 ? "conv2d_grouped_q8ta_q8csw" : "conv2d_q8ta_q8csw") +
                       (out_q8 ? "_q8to" : "") + "_direct";
          pl.reason = c.conv.reason + quant_note;
          pl.integer_path = true;
        } else if (c.conv.algo == conv::ConvAlgo::Depthwise) {
          dispatch(conv::DepthwiseDispatch(geo, c.depthwise, out_q8, lc, flags, p_),
                   {x, {-1, c.offset, c.size, false}, wr(op.outputs[0])}, l);
          pl.variant = std::string("conv2d_dw_q8ta_q8csw") + (out_q8 ? "_q8to" : "") + "_direct";
          pl.reason = c.conv.reason + quant_note;
          pl.integer_path = true;
        } else {
          Bind cols = x;
          if (!geo.pointwise()) {
            const int cv = add_vb(SliceKind::Arena, 0, uint64_t(geo.rows()) * linear::PackedK4(geo.k()) * 4,
                                  op.name + ".im2col");
            dispatch(conv::Im2colDispatch(geo, lc.act_zero_point, p_), {x, {cv, 0, 0, true}}, l);
            cols = {cv, 0, 0, false};
          }
          linear::LinearShape shape;
          shape.m = geo.rows();
          shape.k = geo.k();
          shape.n = cout;
          shape.x_int8 = true;
          shape.act = ir::Scheme::Q8TA;
          shape.weights = ir::Scheme::Q8CSW;
          shape.has_bias = bias;
          shape.relu = a.activation == ir::Activation::Relu;
          shape.relu6 = a.activation == ir::Activation::Relu6;
          shape.out_q8 = out_q8;
          shape.conv = true;
          auto choice = linear::SelectLinear(shape, p_, o_.select);
          if (!choice.ok()) return Error{choice.error().kind, OpLabel(i) + ": " + choice.error().message};
          dispatch(linear::LinearDispatch(shape, *choice, c.layout, lc, p_), {cols, {-1, c.offset, c.size, false},
                   wr(op.outputs[0])}, l);
          std::string v = choice->VariantName(shape);  // linear_i8_q8csw_..._gemm
          pl.variant = "conv2d_" + std::string(geo.pointwise() ? "pointwise" : "im2col") + "_" + v.substr(7);
          pl.reason = c.conv.reason + choice->reason + quant_note;
          pl.integer_path = true;
        }
        pl.detail = det.str();
        pl.weight_bytes = c.size;
        pl.flops = 2ull * geo.rows() * cout * geo.kh * geo.kw * (geo.c / a.groups);
        continue;
      }
      if (op.type != ir::OpType::Linear) return UserError(OpLabel(i) + ": op type '" + ir::OpTypeName(op.type) +
                                                          "' is not supported by the compiler in this version");
      const linear::LinearShape shape = ShapeOf(op, tokens);
      auto choice_r = linear::SelectLinear(shape, p_, o_.select);
      if (!choice_r.ok()) return Error{choice_r.error().kind, OpLabel(i) + ": " + choice_r.error().message};
      const linear::LinearChoice& choice = *choice_r;
      const LayerConstants& c = consts_[i];
      linear::LinearConsts lc;
      const ir::Tensor& xt = g_.tensors[op.inputs[0]];
      int row_params = -1;
      if (shape.x_int8 && shape.act == ir::Scheme::DQ8CA) {
        row_params = row_params_vb.at(op.inputs[0]);
      } else if (shape.x_int8) {
        lc.act_scale = xt.quant->scales[0];
        lc.act_zero_point = xt.quant->zero_points.empty() ? 0 : xt.quant->zero_points[0];
      } else if (shape.act == ir::Scheme::Q8TA) {
        lc.act_scale = op.linear.input_quant.scales[0];
        lc.act_zero_point = op.linear.input_quant.zero_points.empty() ? 0 : op.linear.input_quant.zero_points[0];
      }
      if (shape.out_q8) {
        lc.out_scale = op.linear.output_quant.scales[0];
        lc.out_zero_point = op.linear.output_quant.zero_points.empty() ? 0 : op.linear.output_quant.zero_points[0];
      }
      Bind x = rd(op.inputs[0]);
      std::string quant_note;
      const bool int_path =
          choice.accum == linear::Accum::IntDot || (choice.accum == linear::Accum::CoopMat && choice.cm_int8);
      if (int_path && !shape.x_int8) {
        const auto q = quantize_shared(op.inputs[0], shape.act, lc.act_scale, lc.act_zero_point, shape.m, shape.k, l,
                                       &quant_note);
        x = {q.first, 0, 0, false};
        row_params = q.second;
      } else if (choice.accum == linear::Accum::CoopMat && !shape.x_int8) {
        x = {halves_shared(op.inputs[0], shape.m, shape.k, l, &quant_note), 0, 0, false};
      }
      const auto ld = linear::LinearDispatch(shape, choice, c.layout, lc, p_);
      std::vector<Bind> binds{x, {-1, c.offset, c.size, false}, wr(op.outputs[0])};
      if (row_params >= 0) binds.push_back({row_params, 0, 0, false});
      dispatch(ld, binds, l);

      pl.variant = choice.VariantName(shape);
      pl.reason = choice.reason + quant_note;
      std::ostringstream det;
      if (choice.accum == linear::Accum::CoopMat)
        det << "cooperative-matrix block " << choice.CmBlockM() << "x" << choice.CmBlockN() << "x"
            << choice.cm_bkw * (choice.cm_int8 ? 4 : 2) << ", " << choice.cm_wm << "x" << choice.cm_wn
            << " subgroups of " << choice.cm_sg << (choice.cm_pin_subgroup ? " (pinned)" : "") << ", "
            << choice.cm_tm << "x" << choice.cm_tn << " matrices of " << choice.cm_m << "x" << choice.cm_n << "x"
            << choice.cm_k << " each";
      else if (choice.algo == linear::Algo::Gemm)
        det << "tile " << choice.ty * choice.rm << "x" << choice.tx * choice.rn << "x" << choice.bk4 * 4
            << ", workgroup " << choice.tx << "x" << choice.ty << ", " << choice.rm << "x" << choice.rn
            << " outputs per thread";
      else
        det << "workgroup " << choice.threads << ", " << choice.nr << " channels x " << choice.mb
            << " rows per workgroup";
      if (shape.Int4()) det << ", int4 groups of " << shape.group_size;
      det << ", shared " << choice.SharedMemoryBytes() << " B, groups " << ld.group_count[0] << "x"
          << ld.group_count[1] << "x" << ld.group_count[2];
      pl.detail = det.str();
      pl.weight_bytes = c.size;
      pl.integer_path = int_path || shape.x_int8;
      pl.flops = 2ull * shape.m * shape.n * shape.k;
    }
    for (const Repack& r : repack_out) repack(r, false);

    // Lifetimes (in dispatch steps) and arena placement.
    for (uint32_t step = 0; step < specs.size(); ++step)
      for (const Bind& b : specs[step].binds)
        if (b.vb >= 0) {
          vbs[b.vb].first = std::min(vbs[b.vb].first, step);
          vbs[b.vb].last = std::max(vbs[b.vb].last, step);
        }
    std::vector<ArenaRequest> reqs;
    std::vector<int> req_vb;
    for (size_t v = 0; v < vbs.size(); ++v)
      if (vbs[v].kind == SliceKind::Arena && vbs[v].first != UINT32_MAX) {
        if (o_.keep_intermediates) reqs.push_back({vbs[v].name, vbs[v].size, 0, uint32_t(specs.size())});
        else reqs.push_back({vbs[v].name, vbs[v].size, vbs[v].first, vbs[v].last});
        req_vb.push_back(int(v));
      }
    const ArenaPlan arena = PlanArena(reqs, align_);
    prog.arena_size = std::max<uint64_t>(arena.size, 256);
    for (size_t r = 0; r < reqs.size(); ++r) {
      vbs[req_vb[r]].offset = arena.offsets[r];
      prog.arena_tensors.push_back({reqs[r].name, arena.offsets[r], reqs[r].size, reqs[r].first, reqs[r].last});
    }
    // Tensors folded onto another one's buffer are readable under their own name too.
    for (size_t t = 0; t < g_.tensors.size(); ++t) {
      if (fold_.alias[t] == int(t) || !tensor_vb.count(fold_.alias[t])) continue;
      const VBuf& v = vbs[tensor_vb.at(fold_.alias[t])];
      if (v.kind != SliceKind::Arena || v.first == UINT32_MAX) continue;
      prog.arena_tensors.push_back({g_.tensors[t].name, v.offset, v.size,
                                    o_.keep_intermediates ? 0 : v.first,
                                    o_.keep_intermediates ? uint32_t(specs.size()) : v.last});
    }

    std::vector<PlanDispatch> dispatches;
    for (const DSpec& s : specs) {
      PlanDispatch d;
      VKQC_ASSIGN_OR_RETURN(d.pipeline, PipelineFor(s.params));
      for (const Bind& b : s.binds) {
        if (b.vb < 0) d.buffers.push_back({SliceKind::Weights, 0, b.w_offset, b.w_size, false});
        else d.buffers.push_back({vbs[b.vb].kind, vbs[b.vb].index, vbs[b.vb].offset, vbs[b.vb].size, b.written});
      }
      if (d.buffers.size() != plan_.pipelines[d.pipeline].bindings.size())
        return InternalError(plan_.pipelines[d.pipeline].name + ": " + std::to_string(d.buffers.size()) +
                             " buffers bound, the shader declares " +
                             std::to_string(plan_.pipelines[d.pipeline].bindings.size()));
      d.push = s.params.push;
      std::copy(s.params.group_count, s.params.group_count + 3, d.group_count);
      d.layer = s.layer;
      dispatches.push_back(std::move(d));
    }

    // Barriers; then map layers to command ranges.
    prog.commands = InsertBarriers(dispatches);
    for (auto& l : prog.layers) l.command_count = 0;
    for (uint32_t ci = 0; ci < prog.commands.size(); ++ci) {
      if (prog.commands[ci].is_barrier) continue;
      PlanLayer& l = prog.layers[prog.commands[ci].dispatch.layer];
      if (l.command_count == 0) l.first_command = ci;
      l.command_count = ci - l.first_command + 1;
    }
    // Arena lifetimes in command indices (the planner worked in dispatch steps).
    std::vector<uint32_t> cmd_of_step;
    for (uint32_t ci = 0; ci < prog.commands.size(); ++ci)
      if (!prog.commands[ci].is_barrier) cmd_of_step.push_back(ci);
    for (auto& t : prog.arena_tensors) {
      t.first_command = cmd_of_step[std::min<size_t>(t.first_command, cmd_of_step.size() - 1)];
      t.last_command = cmd_of_step[std::min<size_t>(t.last_command, cmd_of_step.size() - 1)];
    }
    plan_.programs.push_back(std::move(prog));
    return {};
  }

  // The requirements must fit the profile the bundle was compiled for.
  Status CheckAgainstProfile() const {
    const auto& r = plan_.requirements;
    std::vector<std::string> bad;
    if (r.max_compute_shared_memory_size > p_.max_compute_shared_memory_size) bad.push_back("shared memory");
    if (r.max_compute_work_group_invocations > p_.max_compute_work_group_invocations) bad.push_back("invocations");
    for (int i = 0; i < 3; ++i) {
      if (r.max_compute_work_group_size[i] > p_.max_compute_work_group_size[i]) bad.push_back("workgroup size");
      if (r.max_compute_work_group_count[i] > p_.max_compute_work_group_count[i]) bad.push_back("workgroup count");
    }
    if (r.max_storage_buffer_range > p_.max_storage_buffer_range) bad.push_back("maxStorageBufferRange");
    if (r.max_per_stage_descriptor_storage_buffers > p_.max_per_stage_descriptor_storage_buffers)
      bad.push_back("storage buffers per stage");
    if (r.max_push_constants_size > p_.max_push_constants_size) bad.push_back("push constants");
    if (r.shader_float16 && !p_.shader_float16) bad.push_back("shaderFloat16");
    if (r.shader_int8 && !p_.shader_int8) bad.push_back("shaderInt8");
    if (r.cooperative_matrix_nv && !p_.HasExtension("VK_NV_cooperative_matrix")) bad.push_back("VK_NV_cooperative_matrix");
    if (r.cooperative_matrix_khr && !(p_.cooperative_matrix && p_.HasExtension("VK_KHR_cooperative_matrix")))
      bad.push_back("VK_KHR_cooperative_matrix");
    if (!bad.empty()) {
      std::string s;
      for (const auto& b : bad) s += (s.empty() ? "" : ", ") + b;
      return UserError("the compiled program exceeds limits of target '" + p_.name + "': " + s);
    }
    return {};
  }

  ir::Graph gm_;          // the compiler's copy of the graph, rewritten by FoldQuantization
  const ir::Graph& g_;    // gm_, read-only
  FoldPlan fold_;
  const TargetProfile& p_;
  const CompileOptions& o_;
  const uint32_t align_;
  BundlePlan plan_;
  std::vector<LayerConstants> consts_;
  std::map<uint64_t, uint32_t> module_index_;
  std::map<std::string, uint32_t> pipeline_index_;
};

}  // namespace

Result<std::vector<uint8_t>> CompileGraph(const ir::Graph& graph, const TargetProfile& profile,
                                          const CompileOptions& options, uint64_t graph_hash) {
  Compiler c(graph, profile, options);
  return c.Run(graph_hash);
}

}  // namespace vkqc
