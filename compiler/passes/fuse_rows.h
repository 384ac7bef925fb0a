// Row fusion (runs after the fold pass, on the compiler's copy of the graph): row-wise glue ops
// that feed a row op are computed by it in one dispatch (shaders/quantize_dq8ca.comp's row ops),
// so a decode step has fewer dependent dispatches:
//  - a float residual `add` whose output feeds an `rms_norm` (and only later ops) is computed by
//    that rms_norm, which writes both the sum and the normalized row;
//  - a `silu` whose output only a `mul` reads (as a, b of the same shape) is computed by that mul
//    (y = silu(a) * b);
//  - an int8 `add` reading a convolution's int8 output (only it reads that, and the add's other
//    operand is computed before the convolution) is computed by that convolution: in its rows
//    kernel's epilogue (conv_rows_i8.comp), or as a second dispatch of its layer otherwise;
//  - an int8 depthwise `conv2d` whose output only a pointwise int8 `conv2d` reads is computed by
//    that convolution: into shared memory, once per workgroup, by its rows kernel (VKQC_DWPW), or as a
//    first dispatch of its layer where that kernel is not taken;
//  - an int8 global average pool whose input only a pointwise int8 `conv2d` writes and only it
//    reads is computed by that convolution: its rows kernel (VKQC_POOL) pools each image's output
//    codes as it computes them and writes only the pool's output; otherwise a second dispatch of
//    its layer;
//  - a pointwise int8 `conv2d` (q8to) reading the output of a convolution that computes its
//    depthwise input as above (or the sum of that convolution's fused add) is computed by that
//    convolution too: its rows kernel (VKQC_CHAIN) writes its output rows, keeps them in shared
//    memory and computes the chained convolution's outputs of the same pixels from there (an
//    inverted-residual block's expand layer run by the previous block's kernel), or as a second
//    dispatch of its layer where that kernel cannot (decided at lowering: conv/conv.h CanChain);
//    not with kept intermediates, and only where the target allows 6 storage buffers per stage;
//  - the gate and up linears of a gated MLP (mul(silu(gate(x)), up(x)), both reading x with the
//    same input quantization, weights of one scheme and shape, each output read only by the
//    silu / the mul) run as one linear over their interleaved channels (linear/pair.h): the first
//    of the two computes both, and the mul reads its interleaved output (or a GEMV writes the
//    mul's output in its epilogue; decided at lowering);
//  - the two `rope` ops whose outputs only an `attention` reads (its q and k, same attributes and
//    position) run with its KV-cache append as one dispatch (rope_append.comp), where the target
//    allows its 8 storage buffers per stage (the position is a uniform buffer).
// A residual add is fused into its norm only where the target allows the row kernel's 5 storage
// buffers per stage (and the per-token quantization only where its 2 more fit: decided at
// lowering), so targets with 4 (android-baseline-2022, adreno-7xx, mali-valhall) run them apart.
// The op indices never change: a fused op stays in the graph and compiles to a layer without
// commands. (The rms_norm and swiglu rows are also quantized in the same dispatch when all their
// consumers quantize them per token: decided at lowering, where the kernel choices are known.)
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/graph/ir.h"
#include "compiler/passes/fold_quant.h"

namespace vkqc {

struct FusePlan {
  std::vector<int> emitted_by;  // per op: the op whose dispatch computes it (a later one; an earlier conv for an add or a pool), or -1
  std::vector<int> row_input;   // per op: the fused op it computes first (add for rms_norm, silu for mul), or -1
  std::vector<int> rope_q, rope_k;  // per attention op: the rope ops it runs with its append, or -1
  std::vector<int> conv_add;        // per conv2d op: the int8 add it computes, or -1
  std::vector<int> conv_dw;         // per pointwise conv2d op: the depthwise conv2d it computes first, or -1
  std::vector<int> conv_pool;       // per pointwise conv2d op: the global average pool it computes, or -1
  std::vector<int> conv_next;       // per pointwise conv2d op with conv_dw: the pointwise conv2d reading its output it computes, or -1
  // Gate/up pairs: per linear op that computes both (the first of the two), the mul of the gated
  // MLP, or -1; per such mul, the gate and the up linear, or -1. The second is emitted_by the first.
  std::vector<int> pair_mul, pair_gate, pair_up;
  int PairFirst(size_t mul) const { return std::min(pair_gate[mul], pair_up[mul]); }
  bool empty() const;
};

struct FuseOptions {
  uint32_t max_storage_buffers = 8;  // the target's per-stage storage-buffer limit
  uint64_t max_storage_buffer_range = UINT64_MAX;  // a pair's packed weights must fit one binding
  bool pair_linears = true;  // off with kept intermediates (the gate and up outputs would not exist)
  bool chain_convs = true;   // conv_next; off with kept intermediates (its depthwise input is then a dispatch of its own)
};

// `g` verified and folded; `fold` its fold plan.
FusePlan FuseRows(const ir::Graph& g, const FoldPlan& fold, const FuseOptions& o = {});

}  // namespace vkqc
