// The norm tail: a one-row rms_norm (with the residual add fused into it, passes/fuse_rows.h)
// whose input is the output of a one-row GEMV is computed by the last workgroup of that GEMV to
// finish (shaders/linear_gemv.comp, VKQC_NORM_TAIL): every workgroup writes its outputs, counts
// itself in an arrival counter of the bundle's sync state, and the last one reads the whole row
// back and computes what the norm's row kernel would in the next dispatch: the sum, the norm and
// its per-token int8 quantization for the linears reading it. The norm has no dispatch of its
// own, so a decode step has one dependent dispatch (and one barrier) less per norm: in a
// Llama-style decoder the o_proj computes post_attention_layernorm and the down_proj the next
// layer's input_layernorm (or the final norm).
//
// Taken where: the norm reads one row (its input has one row of C values, C a multiple of 4);
// its input, or one operand of the add fused into it, is the linear's output and nothing else
// reads that; the add's other operand is computed before the linear (or is a graph input);
// intermediates are not kept. The counter lives in the bundle's sync state (`vkqc.sync`, added to
// any bundle whose kernels count arrivals, zero at load and after every such dispatch). The linear decides
// (linear/lower.cc): a one-row GEMV, float output, no gate/up pair, the extra bindings within the
// target's per-stage limit and the row within NT_RV words per thread.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "compiler/kernels/lowering.h"

namespace vkqc::norm {

struct TailSite {
  size_t norm_op = 0;
  int add = -1;       // the add fused into the norm, or -1
  int residual = -1;  // the add's other operand (a tensor), or -1
  bool quant = false; // every reader of the norm's output quantizes it per token (dq8ca)
  int64_t c = 0;      // the row length
  uint32_t Buffers() const { return (add >= 0 ? 2u : 0u) + 2u + (quant ? 2u : 0u) + 1u; }
};

// Where linear op `linear` may compute a norm in its GEMV's tail (the conditions above that do
// not depend on the kernel choice), or nothing.
std::optional<TailSite> FindTail(const kernels::LowerContext& ctx, size_t linear);

// The most vec4 words of the row each tail invocation holds in registers.
constexpr uint32_t kTailMaxWordsPerThread = 16;

// Creates the tail's bindings in the shader's order (residual, sum; gamma, the norm's output;
// quantized rows, row parameters; the sync state), registers the quantized rows for the norm's
// readers and marks the norm as computed by `linear` (ctx.NormTailOf). Appends to `binds`.
struct TailBinding {
  float eps = 0;
  uint32_t counter = 0;  // the arrival counter's word in the sync state
  std::string note;      // for the linear's reason
};
TailBinding BindTail(kernels::LowerContext& ctx, size_t linear, const TailSite& site, std::vector<kernels::Bind>* binds);

}  // namespace vkqc::norm
