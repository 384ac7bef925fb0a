#include "compiler/passes/lower.h"

#include <algorithm>
#include <climits>
#include <sstream>

#include "compiler/common/log.h"
#include "compiler/kernels/attention/lower.h"
#include "compiler/graph/vkqg_io.h"  // Fnv1a64
#include "compiler/passes/prefetch.h"
#include "compiler/plan/planner.h"
#include "compiler/shaderlib/shaderlib.h"

namespace vkqc {
namespace {

using kernels::Bind;

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Bytes of a tensor on the device: f32/i32 as is, f16 two per element (rounded up to words),
// int8 as packed rows of PackedK4(last dim) words.
uint64_t TensorDeviceBytes(const ir::Tensor& ten, int64_t tokens) {
  if (ten.dtype == ir::DType::I8) {
    const int64_t last = ten.shape.back();
    const int64_t rows = ten.NumElements(tokens) / last;
    return uint64_t(rows) * linear::PackedK4(last) * 4;
  }
  if (ten.dtype == ir::DType::F16) return (uint64_t(ten.NumElements(tokens)) * 2 + 3) / 4 * 4;
  return uint64_t(ten.NumElements(tokens)) * 4;
}

class Packer final : public kernels::PackContext {
 public:
  Packer(const LowerInputs& in, BundlePlan* plan, PackedConstants* out) : in_(in), plan_(plan), out_(out) {}
  const ir::Graph& graph() const override { return in_.graph; }
  const TargetProfile& profile() const override { return in_.profile; }
  const CompileOptions& options() const override { return in_.options; }
  const FoldPlan& fold() const override { return in_.fold; }
  const FusePlan& fuse() const override { return in_.fuse; }

  uint32_t binding_alignment() const override { return in_.align; }
  Status AddConstants(size_t op, std::vector<uint8_t>& region, uint64_t max_bound) override {
    // Identical regions (a rope table per rope op, say) are stored once.
    const uint64_t hash = Fnv1a64(region.data(), region.size(), 14695981039346656037ull) ^ region.size();
    for (auto [it, end] = seen_.equal_range(hash); it != end; ++it) {
      const auto [off, size] = it->second;
      if (size == region.size() && std::equal(region.begin(), region.end(), plan_->weights.begin() + int64_t(off))) {
        out_->offset[op] = off;
        out_->size[op] = size;
        log::Debug("packed " + OpLabel(op) + ": " + log::Bytes(size) + ", identical to a region packed before (offset " +
                   std::to_string(off) + "), stored once");
        region.clear();
        region.shrink_to_fit();
        return {};
      }
    }
    const uint64_t bound = max_bound ? max_bound : region.size();
    if (bound > in_.profile.max_storage_buffer_range)
      return UserError(OpLabel(op) + ": packed constants (" + std::to_string(bound) + " bytes" +
                       (max_bound ? " in one binding" : "") + ") exceed maxStorageBufferRange " +
                       std::to_string(in_.profile.max_storage_buffer_range) + " of target '" + in_.profile.name + "'");
    std::vector<uint8_t>& w = plan_->weights;
    out_->offset[op] = AlignUp(w.size(), in_.align);
    out_->size[op] = region.size();
    w.resize(out_->offset[op]);
    w.insert(w.end(), region.begin(), region.end());
    seen_.emplace(hash, std::make_pair(out_->offset[op], out_->size[op]));
    log::Debug("packed " + OpLabel(op) + ": " + log::Bytes(region.size()) + " at offset " +
               std::to_string(out_->offset[op]));
    region.clear();
    region.shrink_to_fit();
    return {};
  }
  void Keep(size_t op, std::shared_ptr<void> data) override { out_->kept[op] = std::move(data); }

 private:
  const LowerInputs& in_;
  BundlePlan* plan_;
  PackedConstants* out_;
  std::multimap<uint64_t, std::pair<uint64_t, uint64_t>> seen_;  // content hash -> (offset, size)
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

struct DSpec {
  linear::DispatchParams params;
  std::vector<Bind> binds;
  uint32_t layer = 0;
};

class ProgramLowering final : public kernels::LowerContext {
 public:
  ProgramLowering(const LowerInputs& in, int64_t tokens, const PackedConstants& consts)
      : in_(in), tokens_(tokens), consts_(consts) {}
  const ir::Graph& graph() const override { return in_.graph; }
  const TargetProfile& profile() const override { return in_.profile; }
  const CompileOptions& options() const override { return in_.options; }
  const FoldPlan& fold() const override { return in_.fold; }
  const FusePlan& fuse() const override { return in_.fuse; }
  int64_t tokens() const override { return tokens_; }

  uint64_t DeviceBytes(int t) const override { return TensorDeviceBytes(tensor(t), tokens_); }
  Bind Read(int t) override { return Bind{tensor_vb_.at(in_.fold.alias[t]), 0, 0, false}; }
  Bind Write(int t) override { return Bind{tensor_vb_.at(in_.fold.alias[t]), 0, 0, true}; }
  Bind Constants(size_t op) const override { return Bind{-1, consts_.offset[op], consts_.size[op], false}; }
  uint64_t ConstantBytes(size_t op) const override { return consts_.size[op]; }
  void* Kept(size_t op) const override { return consts_.kept[op].get(); }
  Bind RowParams(int t, bool written) override { return Bind{row_params_vb_.at(t), 0, 0, written}; }
  Bind Scratch(uint64_t bytes, const std::string& name) override {
    return Bind{AddVb(SliceKind::Arena, 0, bytes, name), 0, 0, true};
  }
  // The compiler's own state after the graph's states, in the bundle once any program's kernel
  // asks for it (the decode attention, the norm tail), its size every kernel's.
  Bind SyncState() override {
    if (sync_vb_ < 0) {
      const uint64_t bytes = attention::SyncStateBytes(graph(), fuse(), profile(), options());
      sync_vb_ = AddVb(SliceKind::State, CompilerState(attention::kSyncStateName, bytes), bytes,
                       attention::kSyncStateName);
    }
    return Bind{sync_vb_, 0, 0, true};
  }
  void Dispatch(const linear::DispatchParams& d, std::vector<Bind> binds) override {
    specs_.push_back({d, std::move(binds), layer_});
  }

  static std::string QuantKey(int t, ir::Scheme act, float scale, int32_t zp) {
    std::ostringstream key;
    key << t << ":" << int(act) << ":" << scale << ":" << zp;
    return key.str();
  }
  void ProvideQuantized(int t, ir::Scheme act, float scale, int32_t zp, Quantized q) override {
    quantized_.emplace(QuantKey(t, act, scale, zp), q);
  }
  bool HasQuantized(int t, ir::Scheme act, float scale, int32_t zp) const override {
    return quantized_.count(QuantKey(t, act, scale, zp)) != 0;
  }
  Quantized QuantizeShared(int t, ir::Scheme act, float scale, int32_t zp, int64_t m, int64_t k,
                           std::string* note) override {
    const std::string key = QuantKey(t, act, scale, zp);
    auto it = quantized_.find(key);
    if (it != quantized_.end()) {
      *note = "; reuses the quantized input of an earlier layer";
      return it->second;
    }
    const std::string base = tensor(t).name + (act == ir::Scheme::DQ8CA ? ".dq8ca" : ".q8ta");
    Quantized q;
    q.rows = Scratch(uint64_t(m) * linear::PackedK4(k) * 4, base);
    std::vector<Bind> binds{Read(t), q.rows};
    if (act == ir::Scheme::DQ8CA) {
      q.params = Scratch(uint64_t(m) * 8, base + ".params");
      binds.push_back(q.params);
    }
    Dispatch(linear::QuantizeDispatch(act, m, k, scale, zp, in_.profile), binds);
    q.rows = q.rows.AsRead();
    q.params = q.params.AsRead();
    return quantized_.emplace(key, q).first->second;
  }

  void ProvideRowPrologue(int t, RowPrologue p) override { row_prologues_[t] = p; }
  void ProvidePairs(size_t mul, PairOutput p) override { pairs_[mul] = p; }
  const PairOutput* PairsOf(size_t mul) const override {
    auto it = pairs_.find(mul);
    return it == pairs_.end() ? nullptr : &it->second;
  }
  void ProvideNormTail(size_t norm, size_t linear) override { norm_tails_[norm] = int(linear); }
  int NormTailOf(size_t norm) const override {
    auto it = norm_tails_.find(norm);
    return it == norm_tails_.end() ? -1 : it->second;
  }
  RowPrologue* RowPrologueOf(int t) override {
    auto it = row_prologues_.find(t);
    return it == row_prologues_.end() ? nullptr : &it->second;
  }

  Bind HalvesShared(int t, int64_t m, int64_t k, std::string* note) override {
    if (auto it = halves_.find(t); it != halves_.end()) {
      *note = "; reuses the fp16 rows of an earlier layer";
      return it->second;
    }
    const Bind xh = Scratch(uint64_t(m) * linear::PackedK4(k) * 8, tensor(t).name + ".f16");
    Dispatch(linear::HalfDispatch(m, k, in_.profile), {Read(t), xh});
    return halves_.emplace(t, xh.AsRead()).first->second;
  }

  Status Build(PipelineTable* pipelines, BundlePlan* plan);

 private:
  // The index of the compiler-owned state `name` (i32 words, zero at load), added after the
  // graph's states by the first program asking for it; every program sees the same index.
  uint32_t CompilerState(const char* name, uint64_t bytes) {
    for (size_t s = 0; s < plan_->states.size(); ++s)
      if (plan_->states[s].name == name) return uint32_t(s);
    plan_->states.push_back({name, {int64_t(bytes / 4)}, uint8_t(ir::DType::I32), bytes});
    return uint32_t(plan_->states.size() - 1);
  }
  Status AddPrefetches(PlanProgram& prog, PipelineTable* pipelines, BundlePlan* plan, std::vector<bool>* is_prefetch);
  int AddVb(SliceKind kind, uint32_t index, uint64_t size, std::string name) {
    vbs_.push_back({kind, index, std::max<uint64_t>(size, 4), std::move(name)});
    return int(vbs_.size() - 1);
  }
  uint32_t AddLayer(PlanProgram& prog, std::string name, std::string op, int32_t op_index) {
    PlanLayer l;
    l.name = std::move(name);
    l.op = std::move(op);
    l.op_index = op_index;
    prog.layers.push_back(std::move(l));
    return layer_ = uint32_t(prog.layers.size() - 1);
  }
  PlanIo MakeIo(int t) const;
  Status PlaceAndEmit(PlanProgram& prog, PipelineTable* pipelines, BundlePlan* plan);

  const LowerInputs& in_;
  const int64_t tokens_;
  const PackedConstants& consts_;
  std::vector<VBuf> vbs_;
  std::map<int, int> tensor_vb_;      // the buffer kernels read/write for tensor t
  std::map<int, int> row_params_vb_;  // per-token int8 tensors: their [rows] x {scale, zp}
  std::vector<DSpec> specs_;
  uint32_t layer_ = 0;
  std::map<std::string, Quantized> quantized_;
  std::map<int, Bind> halves_;
  std::map<int, RowPrologue> row_prologues_;
  std::map<size_t, PairOutput> pairs_;
  std::map<size_t, int> norm_tails_;
  int sync_vb_ = -1;
  BundlePlan* plan_ = nullptr;  // during Build
};

PlanIo ProgramLowering::MakeIo(int t) const {
  const ir::Tensor& ten = tensor(t);
  PlanIo io;
  io.name = ten.name;
  for (int64_t d : ten.shape) io.shape.push_back(Dim(d));
  io.dtype = uint8_t(ten.dtype);
  io.size = uint64_t(ten.NumElements(tokens_)) * uint64_t(ir::DTypeBits(ten.dtype) / 8);
  if (ten.quant) {
    io.scheme = uint8_t(ten.quant->scheme);
    io.scales = ten.quant->scales;
    io.zero_points = ten.quant->zero_points;
  }
  return io;
}

Status ProgramLowering::Build(PipelineTable* pipelines, BundlePlan* plan) {
  const ir::Graph& g = in_.graph;
  plan_ = plan;
  PlanProgram prog;
  prog.tokens = uint32_t(tokens_);
  prog.name = tokens_ ? "tokens=" + std::to_string(tokens_) : "main";

  // Graph inputs and outputs; int8 ones are dense bytes there and packed in the arena.
  struct Repack {
    int tensor, dense, packed;
  };
  std::vector<Repack> repack_in, repack_out;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const int t = g.inputs[i];
    prog.inputs.push_back(MakeIo(t));
    const int io = AddVb(SliceKind::Input, uint32_t(i), (prog.inputs.back().size + 3) / 4 * 4, tensor(t).name);
    if (tensor(t).dtype == ir::DType::I8) {
      tensor_vb_[t] = AddVb(SliceKind::Arena, 0, DeviceBytes(t), tensor(t).name + ".packed");
      repack_in.push_back({t, io, tensor_vb_[t]});
    } else {
      tensor_vb_[t] = io;
    }
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const int t = g.outputs[i];
    prog.outputs.push_back(MakeIo(t));
    const int io = AddVb(SliceKind::Output, uint32_t(i), (prog.outputs.back().size + 3) / 4 * 4, tensor(t).name);
    if (tensor_vb_.count(t)) return UserError("tensor '" + tensor(t).name + "' is both a graph input and output");
    if (tensor(t).dtype == ir::DType::I8) {
      tensor_vb_[t] = AddVb(SliceKind::Arena, 0, DeviceBytes(t), tensor(t).name + ".packed");
      repack_out.push_back({t, io, tensor_vb_[t]});
    } else {
      tensor_vb_[t] = io;
    }
  }
  // State tensors (KV caches): one buffer each, shared by every program.
  uint32_t state_index = 0;
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (g.tensors[t].state) tensor_vb_[int(t)] = AddVb(SliceKind::State, state_index++, DeviceBytes(int(t)), g.tensors[t].name);
  // The runtime owns the position input of a stateful program (the one rope and attention read).
  if (state_index > 0 && tokens_ == 0)
    return UserError("the graph has state (a KV cache) but no symbolic token dimension: a stateful graph's rows are "
                     "the tokens of a run; give its activations the leading dimension '" + g.symbolic_dim + "'");
  if (state_index > 0)
    for (const ir::Op& op : g.ops) {
      const int slot = op.type == ir::OpType::Attention ? 5 : op.type == ir::OpType::Rope ? 1 : -1;
      if (slot < 0) continue;
      const int t = op.inputs[size_t(slot)];
      const int32_t idx = int32_t(std::find(g.inputs.begin(), g.inputs.end(), t) - g.inputs.begin());
      if (prog.position_input >= 0 && prog.position_input != idx)
        return UserError("op '" + op.name + "' reads position input '" + tensor(t).name + "', another op reads '" +
                         tensor(g.inputs[size_t(prog.position_input)]).name +
                         "': a stateful graph has one position input");
      prog.position_input = idx;
    }
  for (size_t oi = 0; oi < g.ops.size(); ++oi)
    for (int t : g.ops[oi].outputs) {
      if (!in_.fold.folded[oi].empty()) continue;
      if (!tensor_vb_.count(t)) tensor_vb_[t] = AddVb(SliceKind::Arena, 0, DeviceBytes(t), tensor(t).name);
      const ir::Tensor& ten = tensor(t);
      if (ten.dtype == ir::DType::I8 && ten.quant && ten.quant->scheme == ir::Scheme::DQ8CA)
        row_params_vb_[t] =
            AddVb(SliceKind::Arena, 0, uint64_t(ten.NumElements(tokens_) / ten.shape.back()) * 8, ten.name + ".params");
    }

  // int8 graph inputs/outputs: dense bytes <-> packed rows, each its own layer.
  auto repack = [&](const Repack& r, bool to_packed) {
    const ir::Tensor& ten = tensor(r.tensor);
    const int64_t k = ten.shape.back(), m = ten.NumElements(tokens_) / k;
    AddLayer(prog, "repack:" + ten.name, "repack", -1);
    const Bind dense{r.dense, 0, 0, !to_packed}, packed{r.packed, 0, 0, to_packed};
    Dispatch(linear::RepackDispatch(to_packed, m, k, in_.profile),
             to_packed ? std::vector<Bind>{dense, packed} : std::vector<Bind>{packed, dense});
  };
  for (const Repack& r : repack_in) repack(r, true);

  std::vector<uint32_t> op_layer(g.ops.size());  // each op's layer
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const ir::Op& op = g.ops[i];
    const int32_t source = in_.source_op.empty() ? int32_t(i) : in_.source_op[i];
    op_layer[i] = AddLayer(prog, op.name, ir::OpTypeName(op.type), source);
    PlanLayer& pl = prog.layers[layer_];
    if (!in_.fold.folded[i].empty()) {
      pl.variant = "folded";
      pl.reason = in_.fold.folded[i];
      continue;
    }
    if (const int by = in_.fuse.emitted_by[i]; by >= 0) {  // computed by another op's dispatch (fuse_rows.h)
      // The sum and the rotated rows are written; silu's output is not; a depthwise convolution's
      // only where its pointwise reader runs it as a dispatch of its own (its layer says).
      const bool written = op.type == ir::OpType::Add || op.type == ir::OpType::Rope || op.type == ir::OpType::AvgPool2d;
      const bool conv = op.type == ir::OpType::Conv2d;
      pl.variant = written || conv ? "fused" : "folded";
      // A convolution computes the depthwise conv before it and the add / pool after it in its own
      // kernel or as a dispatch of its layer (its layer says which); the row kernels in one dispatch.
      // An rms_norm computes the add in its row kernel, or leaves both to its readers' GEMV prologues.
      const bool by_conv = g.ops[size_t(by)].type == ir::OpType::Conv2d;
      const bool by_norm = g.ops[size_t(by)].type == ir::OpType::RmsNorm;
      if (op.type == ir::OpType::Linear) {  // the second of a gate/up pair (linear/pair.h)
        pl.variant = "fused";
        pl.reason = "computed by '" + g.ops[size_t(by)].name +
                    "' (linear) as one linear over both layers' interleaved channels (its layer says more)";
        for (const PlanLayer& l : prog.layers)  // the pair's arithmetic (the reference checks follow it)
          if (l.op_index == by) pl.integer_path = l.integer_path;
        continue;
      }
      pl.reason = std::string(written ? "computed and written by" : "computed by") + " '" + g.ops[size_t(by)].name +
                  "' (" + ir::OpTypeName(g.ops[size_t(by)].type) + ")" +
                  (by_conv ? "" : by_norm ? " with the norm (its layer says where)" : " in one dispatch");
      continue;
    }
    const kernels::Family* family = kernels::FamilyFor(op.type);
    if (!family)
      return UserError(OpLabel(i) + ": op type '" + ir::OpTypeName(op.type) +
                       "' is not supported by the compiler in this version");
    VKQC_TRY(family->lower(*this, i, pl));
    if (!op.compiler_note.empty()) pl.reason += "; " + op.compiler_note;
    // A split linear's concat (the layer of its source op) has its parts' arithmetic (they
    // precede it), which the reference checks follow; not the concat's own (an int8 copy).
    if (!in_.source_op.empty() && source >= 0 && op.type == ir::OpType::Concat) {
      pl.integer_path = false;
      for (size_t p = 0; p < i; ++p)
        if (in_.source_op[p] < 0 && std::find(op.inputs.begin(), op.inputs.end(), g.ops[p].outputs[0]) != op.inputs.end())
          pl.integer_path = pl.integer_path || prog.layers[op_layer[p]].integer_path;
    }
  }
  if (log::Enabled(log::Level::Debug))
    for (const PlanLayer& l : prog.layers) {
      log::Debug(prog.name + ": layer '" + l.name + "' (" + l.op + "): " + (l.variant.empty() ? "-" : l.variant) +
                 (l.reason.empty() ? "" : "; why: " + l.reason));
      if (!l.detail.empty()) log::Trace(prog.name + ": layer '" + l.name + "': " + l.detail);
    }
  for (const Repack& r : repack_out) repack(r, false);
  return PlaceAndEmit(prog, pipelines, plan);
}

// Lifetimes (in dispatch steps) and arena placement, pipelines, barriers, layer ranges.
Status ProgramLowering::PlaceAndEmit(PlanProgram& prog, PipelineTable* pipelines, BundlePlan* plan) {
  const ir::Graph& g = in_.graph;
  for (uint32_t step = 0; step < specs_.size(); ++step)
    for (const Bind& b : specs_[step].binds)
      if (b.vb >= 0) {
        vbs_[b.vb].first = std::min(vbs_[b.vb].first, step);
        vbs_[b.vb].last = std::max(vbs_[b.vb].last, step);
      }
  std::vector<ArenaRequest> reqs;
  std::vector<int> req_vb;
  for (size_t v = 0; v < vbs_.size(); ++v)
    if (vbs_[v].kind == SliceKind::Arena && vbs_[v].first != UINT32_MAX) {
      if (in_.options.keep_intermediates) reqs.push_back({vbs_[v].name, vbs_[v].size, 0, uint32_t(specs_.size())});
      else reqs.push_back({vbs_[v].name, vbs_[v].size, vbs_[v].first, vbs_[v].last});
      req_vb.push_back(int(v));
    }
  const ArenaPlan arena = PlanArena(reqs, in_.align);
  prog.arena_size = std::max<uint64_t>(arena.size, 256);
  if (log::Enabled(log::Level::Debug)) {
    uint64_t unshared = 0;
    for (const ArenaRequest& r : reqs) unshared += r.size;
    log::Debug(prog.name + ": memory plan: " + std::to_string(reqs.size()) + " arena tensors in " +
               log::Bytes(prog.arena_size) + " (" + log::Bytes(unshared) + " without reuse), " +
               std::to_string(specs_.size()) + " dispatches");
  }
  for (size_t r = 0; r < reqs.size(); ++r) {
    vbs_[req_vb[r]].offset = arena.offsets[r];
    prog.arena_tensors.push_back({reqs[r].name, arena.offsets[r], reqs[r].size, reqs[r].first, reqs[r].last});
  }
  // Tensors folded onto another one's buffer are readable under their own name too.
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (in_.fold.alias[t] == int(t) || !tensor_vb_.count(in_.fold.alias[t])) continue;
    const VBuf& v = vbs_[tensor_vb_.at(in_.fold.alias[t])];
    if (v.kind != SliceKind::Arena || v.first == UINT32_MAX) continue;
    const bool keep = in_.options.keep_intermediates;
    prog.arena_tensors.push_back(
        {g.tensors[t].name, v.offset, v.size, keep ? 0 : v.first, keep ? uint32_t(specs_.size()) : v.last});
  }

  std::vector<PlanDispatch> dispatches;
  const std::string stage = "compiling shaders (" + prog.name + ")";
  for (const DSpec& s : specs_) {
    ReportProgress(in_.options.progress, stage, dispatches.size(), specs_.size());
    PlanDispatch d;
    VKQC_ASSIGN_OR_RETURN(d.pipeline, pipelines->PipelineFor(s.params, plan));
    for (const Bind& b : s.binds) {
      if (b.vb < 0) d.buffers.push_back({SliceKind::Weights, 0, b.w_offset, b.w_size, false});
      else d.buffers.push_back({vbs_[b.vb].kind, vbs_[b.vb].index, vbs_[b.vb].offset, vbs_[b.vb].size, b.written});
      // Constants wider than a binding are split by their families; a tensor is as large as the
      // program's token count makes it (prefill logits of a large vocabulary, say).
      if (const uint64_t range = in_.profile.max_storage_buffer_range; d.buffers.back().size > range)
        return UserError(prog.name + ": layer '" + prog.layers[s.layer].name + "' binds " +
                         (b.vb < 0 ? std::string("its constants") : "'" + vbs_[b.vb].name + "'") + " (" +
                         std::to_string(d.buffers.back().size) + " bytes), more than one binding may hold on target '" +
                         in_.profile.name + "' (maxStorageBufferRange " + std::to_string(range) + ")" +
                         (b.vb >= 0 && tokens_ > 1 ? ": build this program for fewer tokens (--tokens)" : ""));
    }
    if (d.buffers.size() != plan->pipelines[d.pipeline].bindings.size())
      return InternalError(plan->pipelines[d.pipeline].name + ": " + std::to_string(d.buffers.size()) +
                           " buffers bound, the shader declares " +
                           std::to_string(plan->pipelines[d.pipeline].bindings.size()));
    d.push = s.params.push;
    std::copy(s.params.group_count, s.params.group_count + 3, d.group_count);
    d.layer = s.layer;
    dispatches.push_back(std::move(d));
  }

  ReportProgress(in_.options.progress, stage, specs_.size(), specs_.size());
  // Barriers; then map layers to command ranges.
  prog.commands = InsertBarriers(dispatches);
  std::vector<bool> is_prefetch(prog.commands.size(), false);
  VKQC_TRY(AddPrefetches(prog, pipelines, plan, &is_prefetch));
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
    if (!prog.commands[ci].is_barrier && !is_prefetch[ci]) cmd_of_step.push_back(ci);
  for (auto& t : prog.arena_tensors) {
    t.first_command = cmd_of_step[std::min<size_t>(t.first_command, cmd_of_step.size() - 1)];
    t.last_command = cmd_of_step[std::min<size_t>(t.last_command, cmd_of_step.size() - 1)];
  }
  plan->programs.push_back(std::move(prog));
  return {};
}

// Weight prefetches (prefetch.h) in programs of 1..kPrefetchMaxTokens rows, where the option
// gives them bytes.
Status ProgramLowering::AddPrefetches(PlanProgram& prog, PipelineTable* pipelines, BundlePlan* plan,
                                      std::vector<bool>* is_prefetch) {
  const TargetProfile& p = in_.profile;
  const uint32_t max_groups = std::min<uint32_t>(p.max_compute_work_group_count[0], 65535);
  const uint64_t budget =
      std::min<uint64_t>({in_.options.prefetch_max_bytes, p.max_storage_buffer_range,
                          uint64_t(max_groups) * kPrefetchLocal * kPrefetchUnroll * 16});
  if (tokens_ < 1 || tokens_ > kPrefetchMaxTokens || budget == 0) return {};
  const std::vector<PrefetchSite> sites = PlanPrefetches(prog.commands, budget, in_.align, plan->weights.size());
  if (sites.empty()) return {};
  linear::DispatchParams d;
  d.shader = {"prefetch.comp", {}};
  const uint32_t local = std::min<uint32_t>(kPrefetchLocal, p.max_compute_work_group_invocations);
  if (local != kPrefetchLocal) return {};  // a target allowing fewer than 256 invocations (Vulkan's minimum is 128): no prefetch
  d.spec = {{0, local}, {1, kPrefetchUnroll}};
  d.local_size[0] = local;
  d.local_size[1] = d.local_size[2] = 1;
  d.push.resize(8);
  VKQC_ASSIGN_OR_RETURN(uint32_t pipeline, pipelines->PipelineFor(d, plan));
  const uint32_t sink = CompilerState(kSinkStateName, SinkStateBytes(in_.align));
  for (const PrefetchSite& site : sites) {
    uint64_t bytes = 0;
    for (const PrefetchRange& r : site.ranges) bytes += r.size;
    std::string names;
    for (uint32_t l : site.for_layers) names += (names.empty() ? "" : ", ") + prog.layers[l].name;
    PlanLayer& l = prog.layers[site.layer];
    l.detail += std::string(l.detail.empty() ? "" : "; ") + "then prefetches " + log::Bytes(bytes) +
                " of the weights of " + names + " into the cache (" + std::to_string(site.ranges.size()) +
                " dispatch" + (site.ranges.size() > 1 ? "es" : "") + ")";
  }
  InsertPrefetches(prog.commands, sites, pipeline, max_groups, sink, in_.align, is_prefetch);
  return {};
}

}  // namespace

void PlanStates(const LowerInputs& in, BundlePlan* plan) {
  const ir::Graph& g = in.graph;
  uint64_t max_context = 0;
  for (const ir::Tensor& t : g.tensors) {
    if (!t.state) continue;
    plan->states.push_back({t.name, t.shape, uint8_t(t.dtype), TensorDeviceBytes(t, 1)});
    if (t.shape.size() == 3) max_context = max_context ? std::min<uint64_t>(max_context, t.shape[1]) : t.shape[1];
  }
  if (plan->states.empty()) return;
  // The compiler's own state (arrival counters) is added after the graph's by the first kernel
  // asking for it (ProgramLowering::SyncState).
  for (const ir::Op& op : g.ops)
    if (op.type == ir::OpType::Rope) max_context = std::min<uint64_t>(max_context, uint64_t(op.rope.max_positions));
  plan->max_context = uint32_t(std::min<uint64_t>(max_context, 1u << 24));
}

Result<PackedConstants> PackAll(const LowerInputs& in, BundlePlan* plan) {
  PackedConstants out;
  const size_t n = in.graph.ops.size();
  out.offset.assign(n, 0);
  out.size.assign(n, 0);
  out.kept.resize(n);
  Packer packer(in, plan, &out);
  for (size_t i = 0; i < n; ++i) {
    ReportProgress(in.options.progress, "packing weights", i, n);
    if (!in.fold.folded[i].empty()) continue;
    const kernels::Family* f = kernels::FamilyFor(in.graph.ops[i].type);
    if (f && f->pack) VKQC_TRY(f->pack(packer, i));
  }
  ReportProgress(in.options.progress, "packing weights", n, n);
  plan->weights.resize(AlignUp(plan->weights.size(), 64));
  log::Debug("weight segment: " + log::Bytes(plan->weights.size()) + " for " + std::to_string(n) + " ops");
  return out;
}

Result<uint32_t> PipelineTable::PipelineFor(const linear::DispatchParams& d, BundlePlan* plan) {
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
    module = uint32_t(plan->modules.size());
    plan->modules.push_back({sh.name, sh.spirv, sh.hash});
    module_index_[sh.hash] = module;
    log::Debug("shader module " + std::to_string(module) + ": " + sh.name + " (" + std::to_string(sh.spirv.size() * 4) +
               " bytes of SPIR-V)");
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
  pp.bindings.insert(pp.bindings.end(), r.uniform_buffer_bindings.begin(), r.uniform_buffer_bindings.end());
  std::sort(pp.bindings.begin(), pp.bindings.end());
  pp.uniform_bindings = r.uniform_buffer_bindings;
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
  const uint32_t idx = uint32_t(plan->pipelines.size());
  plan->pipelines.push_back(std::move(pp));
  pipeline_index_[key.str()] = idx;
  return idx;
}

Status LowerProgram(const LowerInputs& in, int64_t tokens, const PackedConstants& consts, PipelineTable* pipelines,
                    BundlePlan* plan) {
  ProgramLowering lowering(in, tokens, consts);
  return lowering.Build(pipelines, plan);
}

}  // namespace vkqc
