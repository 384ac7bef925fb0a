// The one interface every op family implements (DESIGN 8: one folder per family). A family
// packs its op's constants once per bundle (shared by every program) and lowers the op to
// dispatches once per program (token count). The lowering pass (compiler/passes/lower.cc)
// owns the buffers, the arena plan, the pipelines and the barriers; a family only names what
// it binds and dispatches, through the contexts below.
//
// Registration is the explicit list in registry.cc: a new family adds one entry there, its own
// folder, and at most the schema, the importer and the reference.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/common/progress.h"
#include "compiler/common/result.h"
#include "compiler/graph/ir.h"
#include "compiler/kernels/conv/conv.h"
#include "compiler/kernels/linear/linear.h"
#include "compiler/profile/profile.h"

namespace vkqc {

struct FoldPlan;
struct FusePlan;
struct PlanLayer;

// Compiler options (`vkqc compile` flags) every family may consult.
struct CompileOptions {
  // Programs to build, one per token count; required when the graph has a symbolic dimension.
  std::vector<int64_t> tokens;
  linear::SelectOptions select;
  conv::ConvSelectOptions conv;
  // Attention over the KV cache: Auto (programs of up to 8 rows the decode kernel where it fits;
  // more rows tiled where it fits, else per row and head), or forced
  // (`--force-attention rows|tiled`): rows takes the per-row kernels everywhere (one-row programs
  // included); tiled takes the tiled kernel for every program of more than one row (an error where
  // it cannot run them) and leaves one-row programs to Auto's choice.
  enum class AttentionKernel { Auto, Rows, Tiled } attention = AttentionKernel::Auto;
  // Rows per workgroup of the decode kernel in programs of several rows (`--decode-attention-rows
  // N`, 1..attention::kDecodeMaxRows; 0: the selection's).
  uint32_t decode_attention_rows = 0;
  // Most chunks of the cache the decode kernel splits a layer into (0: the target's,
  // attention::kDecodeCpuMaxSplits on CPU devices, else attention::kDecodeMaxSplits; tests set the
  // latter to run the many-chunk combine on lavapipe).
  uint32_t decode_attention_max_splits = 0;
  // Debugging: give every arena tensor its own memory (no reuse), so every intermediate can be
  // read after a run (`vkqc run --per-op` checks each op against the reference on them).
  bool keep_intermediates = false;
  // A one-row rms_norm reading a one-row GEMV's output computed by that GEMV's last workgroup
  // (`--norm-tail`, norm/tail.h). Opt-in: on the H200 it lost (bench/RESULTS.md 2026-11-28 session 9).
  bool norm_tail = false;
  // Weight prefetch (`--prefetch-max-bytes B`, passes/prefetch.h): in programs of up to 16 rows,
  // up to B bytes of the weights each barrier interval reads are prefetched into the cache during
  // the interval before it. 0: none.
  uint64_t prefetch_max_bytes = 0;
  // Progress of packing and shader compilation (empty: none reported).
  ProgressFn progress;
};

namespace kernels {

// A buffer one binding of a dispatch reads or writes, before arena placement: a virtual buffer
// of the program (vb >= 0: an input, output, state or arena range) or a weight-segment slice.
struct Bind {
  int vb = -1;  // -1: weight segment [w_offset, w_offset + w_size)
  uint64_t w_offset = 0, w_size = 0;
  bool written = false;
  Bind AsRead() const { return {vb, w_offset, w_size, false}; }
  Bind AsWritten() const { return {vb, w_offset, w_size, true}; }
};

// Shared by both contexts: what the family reads about the compilation.
class CompileView {
 public:
  virtual ~CompileView() = default;
  virtual const ir::Graph& graph() const = 0;  // verified, after the fold pass
  virtual const TargetProfile& profile() const = 0;
  virtual const CompileOptions& options() const = 0;
  virtual const FoldPlan& fold() const = 0;
  virtual const FusePlan& fuse() const = 0;  // row fusion (passes/fuse_rows.h)
  const ir::Op& op(size_t i) const { return graph().ops[i]; }
  const ir::Tensor& tensor(int t) const { return graph().tensors[size_t(t)]; }
  // "op 3 ('fc1')", for error messages.
  std::string OpLabel(size_t i) const { return "op " + std::to_string(i) + " ('" + op(i).name + "')"; }
};

class PackContext : public CompileView {
 public:
  // Appends `region` to the weight segment as op `op`'s constants (aligned for binding) and
  // empties it. Refused when one binding of it exceeds the target's maxStorageBufferRange:
  // `max_bound` bytes, for a family that binds its region in parts (embedding: tables wider than
  // one binding); 0: the whole region is one binding.
  virtual Status AddConstants(size_t op, std::vector<uint8_t>& region, uint64_t max_bound = 0) = 0;
  // What the offset of a part a family binds inside its region must be a multiple of
  // (minStorageBufferOffsetAlignment, at least 256): the region itself starts at such an offset.
  virtual uint32_t binding_alignment() const = 0;
  // Family data kept from packing to lowering (layout offsets, the chosen algorithm).
  virtual void Keep(size_t op, std::shared_ptr<void> data) = 0;
};

class LowerContext : public CompileView {
 public:
  virtual int64_t tokens() const = 0;  // this program's size of the symbolic dimension (0: none)
  int64_t Dim(int64_t d) const { return d == ir::kSymbolicDim ? tokens() : d; }
  // Bytes of tensor t on the device: f32/i32 as is, f16 two per element (rounded up to words),
  // int8 as packed rows of PackedK4(last dim) words.
  virtual uint64_t DeviceBytes(int t) const = 0;

  virtual Bind Read(int tensor) = 0;    // the tensor's buffer (after folding aliases)
  virtual Bind Write(int tensor) = 0;
  virtual Bind Constants(size_t op) const = 0;  // the op's weight-segment region
  virtual uint64_t ConstantBytes(size_t op) const = 0;
  virtual void* Kept(size_t op) const = 0;
  template <class T>
  const T& KeptAs(size_t op) const { return *static_cast<const T*>(Kept(op)); }
  // The per-row {f32 scale, i32 zero point} buffer of a dq8ca int8 tensor.
  virtual Bind RowParams(int tensor, bool written) = 0;
  // A fresh arena range only this op uses (placed by lifetime like any tensor); written.
  virtual Bind Scratch(uint64_t bytes, const std::string& name) = 0;
  // The bundle's compiler-owned state of arrival counters (PlanStates adds it where a family asks
  // for it: attention::SyncStateBytes); zero at load, and every kernel using it leaves it zero.
  virtual Bind SyncState() = 0;
  virtual void Dispatch(const linear::DispatchParams& d, std::vector<Bind> binds) = 0;

  // Packed int8 rows (and dq8ca row parameters) of float tensor t quantized as `act`, shared by
  // every layer that quantizes the same tensor the same way: the first one dispatches the
  // quantization, later ones reuse it and get `*note` set.
  struct Quantized {
    Bind rows;
    Bind params;  // dq8ca only (vb -1 otherwise)
  };
  virtual Quantized QuantizeShared(int tensor, ir::Scheme act, float scale, int32_t zero_point, int64_t m,
                                   int64_t k, std::string* note) = 0;
  // Whether packed rows of `tensor` quantized that way exist already (QuantizeShared would reuse them).
  virtual bool HasQuantized(int tensor, ir::Scheme act, float scale, int32_t zero_point) const = 0;
  // Registers rows a fused row kernel already quantized (dq8ca: scale 1, zero point 0 as keys),
  // so the layers that would quantize `tensor` the same way reuse them.
  virtual void ProvideQuantized(int tensor, ir::Scheme act, float scale, int32_t zero_point, Quantized q) = 0;
  // fp16 rows of a float activation for the fp16 cooperative-matrix GEMM, shared likewise.
  virtual Bind HalvesShared(int tensor, int64_t m, int64_t k, std::string* note) = 0;

  // A one-row rms_norm (with the residual add fused into it, if any) or silu·mul left to the GEMV
  // prologues of the linears reading its output (norm family, LinearChoice::xq_norm; elementwise
  // family, xq_silu): each workgroup of each of them computes the row and its per-token
  // quantization itself; the first one lowered also writes the add's sum (then `sum` is cleared).
  struct RowPrologue {
    bool silu = false;  // the row is silu(x) * b; else rms_norm(x [+ b]) * gamma
    Bind x;             // the norm's input row, or the add's first operand; silu's input
    Bind b;             // the add's second operand (vb -1: no add); the mul's second operand
    Bind sum;           // the add's output, still to be written (vb -1: none, or written already)
    Bind gamma;         // the norm's weight (weight segment)
    float eps = 0;
    size_t norm_op = 0;  // the norm op; the mul op (silu)
  };
  virtual void ProvideRowPrologue(int tensor, RowPrologue p) = 0;
  virtual RowPrologue* RowPrologueOf(int tensor) = 0;  // nullptr: the tensor is computed as usual

  // A gate/up pair's output (linear/pair.h), left by the linear computing the pair for the mul of
  // its gated MLP: the mul's output written in the GEMV epilogue, or the 2N interleaved outputs.
  struct PairOutput {
    bool in_epilogue = false;
    Bind interleaved;  // [rows][2N] f32, when not in_epilogue
  };
  virtual void ProvidePairs(size_t mul_op, PairOutput p) = 0;
  // A one-row rms_norm computed by the last workgroup of the GEMV producing its input (norm/tail.h).
  virtual void ProvideNormTail(size_t norm_op, size_t linear_op) = 0;
  virtual int NormTailOf(size_t norm_op) const = 0;  // the linear computing it, or -1
  virtual const PairOutput* PairsOf(size_t mul_op) const = 0;  // nullptr: none left
};

struct Family {
  const char* name;                 // the folder under compiler/kernels/
  std::vector<ir::OpType> ops;      // the graph ops it lowers
  Status (*pack)(PackContext& ctx, size_t op);  // nullptr: no constants
  // Emits the op's dispatches and fills layer.variant / reason / detail / weight_bytes / flops.
  Status (*lower)(LowerContext& ctx, size_t op, PlanLayer& layer);
};

// The explicit registry (registry.cc). nullptr when no family lowers `type`.
const Family* FamilyFor(ir::OpType type);
const std::vector<Family>& Families();

// A float's bits as a specialization-constant value.
inline uint32_t FloatBits(float f) {
  uint32_t u;
  static_assert(sizeof u == sizeof f);
  __builtin_memcpy(&u, &f, 4);
  return u;
}

// A dispatch of `count` invocations in workgroups of up to `local` (grid spread over x and y).
inline linear::DispatchParams FlatDispatch(std::string shader, std::vector<std::string> defines, uint64_t count,
                                           uint32_t local, const TargetProfile& p) {
  linear::DispatchParams d;
  d.shader = {std::move(shader), std::move(defines)};
  local = std::min<uint32_t>(local, p.max_compute_work_group_invocations);
  d.spec = {{0, local}};
  d.local_size[0] = local;
  d.local_size[1] = d.local_size[2] = 1;
  linear::SplitGroups(std::max<uint64_t>((count + local - 1) / local, 1), p.max_compute_work_group_count[0],
                      d.group_count);
  d.group_count[2] = 1;
  return d;
}

// Per-tensor quantization parameters of a Quant (scales[0], zero_points[0] or 0).
inline float QScale(const ir::Quant& q) { return q.scales.empty() ? 1.0f : q.scales[0]; }
inline int32_t QZero(const ir::Quant& q) { return q.zero_points.empty() ? 0 : q.zero_points[0]; }

}  // namespace kernels
}  // namespace vkqc
