#include "compiler/passes/pipeline.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "compiler/emit/bundle_plan.h"
#include "compiler/graph/verify.h"
#include "compiler/plan/planner.h"
#include "compiler/shaderlib/shaderlib.h"

namespace vkqc {
namespace {

using linear::Accum;
using linear::Algo;

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Where one layer's constants live in the weight segment.
struct LayerConstants {
  uint64_t weights_offset = 0, weights_size = 0;
  uint64_t params_offset = 0, params_size = 0;
};

struct Location {
  SliceKind kind;
  uint32_t index = 0;
  uint64_t offset = 0, size = 0;
};

class Compiler {
 public:
  Compiler(const ir::Graph& g, const TargetProfile& p, const CompileOptions& o)
      : g_(g), p_(p), o_(o),
        align_(std::max<uint32_t>(256, p.min_storage_buffer_offset_alignment)) {}

  Result<std::vector<uint8_t>> Run(uint64_t graph_hash) {
    VKQC_TRY(VerifyGraph(g_, "graph"));
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
      if (op.type != ir::OpType::Linear) return UserError(OpLabel(i) + ": unsupported op type");
      const ir::Tensor& w = g_.tensors[op.inputs[1]];
      const int64_t n = w.shape[0], k = w.shape[1];
      const float* bias = nullptr;
      if (op.inputs.size() > 2)
        bias = reinterpret_cast<const float*>(g_.tensors[op.inputs[2]].data->data());
      auto packed = linear::PackQ8csw(reinterpret_cast<const int8_t*>(w.data->data()), n, k,
                                      w.quant->scales.data(), bias);
      if (packed.weights.size() > p_.max_storage_buffer_range)
        return UserError(OpLabel(i) + ": packed weights (" + std::to_string(packed.weights.size()) +
                         " bytes) exceed maxStorageBufferRange " +
                         std::to_string(p_.max_storage_buffer_range) + " of target '" + p_.name + "'");
      LayerConstants& c = consts_[i];
      c.weights_offset = AlignUp(plan_.weights.size(), align_);
      c.weights_size = packed.weights.size();
      plan_.weights.resize(c.weights_offset);
      plan_.weights.insert(plan_.weights.end(), packed.weights.begin(), packed.weights.end());
      c.params_offset = AlignUp(plan_.weights.size(), align_);
      c.params_size = packed.channel_params.size();
      plan_.weights.resize(c.params_offset);
      plan_.weights.insert(plan_.weights.end(), packed.channel_params.begin(), packed.channel_params.end());
    }
    plan_.weights.resize(AlignUp(plan_.weights.size(), 64));
    return {};
  }

  linear::LinearShape ShapeOf(const ir::Op& op, int64_t tokens) const {
    const ir::Tensor& x = g_.tensors[op.inputs[0]];
    const ir::Tensor& w = g_.tensors[op.inputs[1]];
    linear::LinearShape s;
    s.m = Dim(x.shape[0], tokens);
    s.k = x.shape[1];
    s.n = w.shape[0];
    s.act = op.linear.input_quant.scheme == ir::Scheme::Q8TA ? ir::Scheme::Q8TA : ir::Scheme::Float;
    s.has_bias = op.inputs.size() > 2;
    s.relu = op.linear.fused_relu;
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
    const uint32_t idx = uint32_t(plan_.pipelines.size());
    plan_.pipelines.push_back(std::move(pp));
    pipeline_index_[key.str()] = idx;
    return idx;
  }

  Status BuildProgram(int64_t tokens) {
    PlanProgram prog;
    prog.tokens = uint32_t(tokens);
    prog.name = tokens ? "tokens=" + std::to_string(tokens) : "main";

    // Kernel choice and dispatch steps per op.
    struct OpPlan {
      linear::LinearShape shape;
      linear::LinearChoice choice;
      uint32_t first_step = 0, steps = 1;
    };
    std::vector<OpPlan> ops(g_.ops.size());
    uint32_t step = 0;
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      ops[i].shape = ShapeOf(g_.ops[i], tokens);
      auto choice = linear::SelectLinear(ops[i].shape, p_, o_.select);
      if (!choice.ok())
        return Error{choice.error().kind, OpLabel(i) + ": " + choice.error().message};
      ops[i].choice = *choice;
      ops[i].first_step = step;
      ops[i].steps = ops[i].choice.accum == Accum::IntDot ? 2 : 1;
      step += ops[i].steps;
    }

    // Locations: graph inputs/outputs get their own buffers, the rest the arena.
    std::map<int, Location> loc;
    auto tensor_bytes = [&](int t) {
      return uint64_t(g_.tensors[t].NumElements(tokens)) * 4;  // f32 activations
    };
    auto make_io = [&](int t) {
      const ir::Tensor& ten = g_.tensors[t];
      PlanIo io;
      io.name = ten.name;
      for (int64_t d : ten.shape) io.shape.push_back(Dim(d, tokens));
      io.dtype = uint8_t(ten.dtype);
      io.size = tensor_bytes(t);
      return io;
    };
    for (size_t i = 0; i < g_.inputs.size(); ++i) {
      loc[g_.inputs[i]] = {SliceKind::Input, uint32_t(i), 0, tensor_bytes(g_.inputs[i])};
      prog.inputs.push_back(make_io(g_.inputs[i]));
    }
    for (size_t i = 0; i < g_.outputs.size(); ++i) {
      loc[g_.outputs[i]] = {SliceKind::Output, uint32_t(i), 0, tensor_bytes(g_.outputs[i])};
      prog.outputs.push_back(make_io(g_.outputs[i]));
    }
    std::vector<ArenaRequest> reqs;
    std::vector<int> req_tensor;  // tensor index, or -1 - op index for a scratch buffer
    std::map<int, size_t> req_of_tensor;
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      const uint32_t first = ops[i].first_step, last = first + ops[i].steps - 1;
      for (int t : g_.ops[i].outputs) {
        if (loc.count(t)) continue;
        req_of_tensor[t] = reqs.size();
        reqs.push_back({g_.tensors[t].name, tensor_bytes(t), first, last});
        req_tensor.push_back(t);
      }
      for (int t : g_.ops[i].inputs) {
        auto it = req_of_tensor.find(t);
        if (it != req_of_tensor.end()) reqs[it->second].last = std::max(reqs[it->second].last, last);
      }
      if (ops[i].choice.accum == Accum::IntDot) {
        const uint64_t sz = uint64_t(ops[i].shape.m) * linear::PackedK4(ops[i].shape.k) * 4;
        reqs.push_back({g_.ops[i].name + ".xq", sz, first, last});
        req_tensor.push_back(-1 - int(i));
      }
    }
    const ArenaPlan arena = PlanArena(reqs, align_);
    prog.arena_size = std::max<uint64_t>(arena.size, 256);
    std::map<int, Location> scratch;
    for (size_t r = 0; r < reqs.size(); ++r) {
      Location l{SliceKind::Arena, 0, arena.offsets[r], reqs[r].size};
      if (req_tensor[r] >= 0) loc[req_tensor[r]] = l;
      else scratch[-1 - req_tensor[r]] = l;
      prog.arena_tensors.push_back({reqs[r].name, arena.offsets[r], reqs[r].size, reqs[r].first, reqs[r].last});
    }

    // Dispatches.
    auto slice = [](const Location& l, bool written) {
      return PlanSlice{l.kind, l.index, l.offset, l.size, written};
    };
    std::vector<PlanDispatch> dispatches;
    std::vector<uint32_t> layer_first_dispatch;
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      const ir::Op& op = g_.ops[i];
      const OpPlan& opp = ops[i];
      const LayerConstants& c = consts_[i];
      const Location& x = loc.at(op.inputs[0]);
      const Location& y = loc.at(op.outputs[0]);
      const Location wloc{SliceKind::Weights, 0, c.weights_offset, c.weights_size};
      const Location ploc{SliceKind::Weights, 0, c.params_offset, c.params_size};
      float act_scale = 1.0f;
      int32_t act_zp = 0;
      if (opp.shape.act == ir::Scheme::Q8TA) {
        act_scale = op.linear.input_quant.scales[0];
        act_zp = op.linear.input_quant.zero_points.empty() ? 0 : op.linear.input_quant.zero_points[0];
      }
      layer_first_dispatch.push_back(uint32_t(dispatches.size()));
      Location xin = x;
      if (opp.choice.accum == Accum::IntDot) {
        const Location& xq = scratch.at(int(i));
        auto qd = linear::QuantizeDispatch(opp.shape.m, opp.shape.k, act_scale, act_zp, p_);
        PlanDispatch d;
        VKQC_ASSIGN_OR_RETURN(d.pipeline, PipelineFor(qd));
        d.buffers = {slice(x, false), slice(xq, true)};
        d.push = qd.push;
        std::copy(qd.group_count, qd.group_count + 3, d.group_count);
        d.layer = uint32_t(i);
        dispatches.push_back(d);
        xin = xq;
      }
      auto ld = linear::LinearDispatch(opp.shape, opp.choice, act_scale, act_zp, p_);
      PlanDispatch d;
      VKQC_ASSIGN_OR_RETURN(d.pipeline, PipelineFor(ld));
      d.buffers = {slice(xin, false), slice(wloc, false), slice(ploc, false), slice(y, true)};
      d.push = ld.push;
      std::copy(ld.group_count, ld.group_count + 3, d.group_count);
      d.layer = uint32_t(i);
      dispatches.push_back(d);

      PlanLayer layer;
      layer.name = op.name;
      layer.op = ir::OpTypeName(op.type);
      layer.variant = opp.choice.VariantName(opp.shape.act);
      layer.reason = opp.choice.reason;
      std::ostringstream det;
      if (opp.choice.algo == Algo::Gemm)
        det << "tile " << opp.choice.ty * opp.choice.rm << "x" << opp.choice.tx * opp.choice.rn << "x"
            << opp.choice.bk4 * 4 << ", workgroup " << opp.choice.tx << "x" << opp.choice.ty
            << ", " << opp.choice.rm << "x" << opp.choice.rn << " outputs per thread";
      else
        det << "workgroup " << opp.choice.threads << ", " << opp.choice.nr << " channels x "
            << opp.choice.mb << " rows per workgroup";
      det << ", shared " << opp.choice.SharedMemoryBytes() << " B, groups " << ld.group_count[0]
          << "x" << ld.group_count[1] << "x" << ld.group_count[2];
      layer.detail = det.str();
      layer.weight_bytes = c.weights_size + c.params_size;
      layer.integer_path = opp.choice.accum == Accum::IntDot;
      layer.flops = 2ull * opp.shape.m * opp.shape.n * opp.shape.k;
      prog.layers.push_back(std::move(layer));
    }

    // Barriers; then map layers to command ranges.
    prog.commands = InsertBarriers(dispatches);
    for (auto& l : prog.layers) l.command_count = 0;
    for (uint32_t ci = 0, di = 0; ci < prog.commands.size(); ++ci) {
      if (prog.commands[ci].is_barrier) continue;
      PlanLayer& l = prog.layers[prog.commands[ci].dispatch.layer];
      if (l.command_count == 0) l.first_command = ci;
      l.command_count = ci - l.first_command + 1;
      ++di;
    }
    // Arena lifetimes in command indices (the planner worked in dispatch steps).
    std::vector<uint32_t> cmd_of_step;
    for (uint32_t ci = 0; ci < prog.commands.size(); ++ci)
      if (!prog.commands[ci].is_barrier) cmd_of_step.push_back(ci);
    for (auto& t : prog.arena_tensors) {
      t.first_command = cmd_of_step[t.first_command];
      t.last_command = cmd_of_step[t.last_command];
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
    if (!bad.empty()) {
      std::string s;
      for (const auto& b : bad) s += (s.empty() ? "" : ", ") + b;
      return UserError("the compiled program exceeds limits of target '" + p_.name + "': " + s);
    }
    return {};
  }

  const ir::Graph& g_;
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
