// Views (runs after the quantization fold pass, before row fusion): a reshape, or a transpose
// that only moves dimensions of size 1, whose output holds the same bytes on the device as its
// input (kernels/layout/layout.h: always for f32; for int8 when the rows keep their padding) is
// compiled to no dispatch: the output becomes an alias of the input's buffer (FoldPlan::alias)
// and the op is folded (a layer without commands, variant "folded"). Not where the output is a
// graph output, which has a buffer of its own: that reshape copies (one dispatch). A graph input
// may be viewed: readers of the view read the input's buffer.
#pragma once
#include "compiler/graph/ir.h"
#include "compiler/passes/fold_quant.h"

namespace vkqc {

// `g` verified and folded by FoldQuantization, whose plan this extends. Afterwards every alias
// names a tensor that is not itself an alias (chains through folded views are resolved).
void FoldViews(const ir::Graph& g, FoldPlan* plan);

}  // namespace vkqc
