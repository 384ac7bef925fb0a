// Quantization folding (runs before kernel selection, on the compiler's own copy of the graph):
// a static int8 chain never round-trips through float.
//  - dequantize(p) -> quantize with the same per-tensor parameters: the quantize's output is
//    p itself (bit exact: scale * (q - zp) * (1 / scale) rounds back to q - zp);
//  - the same with other parameters, p written by a linear/conv2d/add/avg_pool2d/max_pool2d/concat
//    q8to output that nothing else reads, and the new real range inside the old one (so the old
//    clamp never acts): that op requantizes to the new parameters directly (one rounding instead
//    of two: within 1 LSB of the unfused graph);
//  - otherwise one requantize dispatch (int8 -> int8, bit exact) replaces the pair;
//  - a linear or conv2d with a float output read only by a per-tensor int8 quantize writes
//    that int8 tensor itself (q8to, bit exact).
// Op indices never change (layers keep mapping to the source graph's ops): a folded op stays in
// the graph and is compiled to a layer without commands.
#pragma once
#include <string>
#include <vector>

#include "compiler/graph/ir.h"

namespace vkqc {

struct FoldPlan {
  // Per op: empty = compiled as usual; otherwise the op emits no dispatch, and this says why.
  std::vector<std::string> folded;
  // Per op: a quantize that became a requantize of int8 tensor `requant_source[i]` (else -1).
  std::vector<int> requant_source;
  // Per tensor: the tensor whose buffer it is (itself unless folded away; passes/fold_views.h
  // adds the outputs of reshapes that keep the device bytes).
  std::vector<int> alias;
  // Per op that still converts between float and int8 (quantize/dequantize/requantize): why it
  // remains, for `vkqc inspect`.
  std::vector<std::string> remains;
};

// Rewrites `g` (attributes and producer outputs) and returns the plan. `g` must be verified.
FoldPlan FoldQuantization(ir::Graph& g);

}  // namespace vkqc
