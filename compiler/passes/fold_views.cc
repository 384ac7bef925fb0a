#include "compiler/passes/fold_views.h"

#include <algorithm>

#include "compiler/kernels/layout/layout.h"

namespace vkqc {

void FoldViews(const ir::Graph& g, FoldPlan* plan) {
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const ir::Op& op = g.ops[i];
    if (!plan->folded[i].empty() || (op.type != ir::OpType::Reshape && op.type != ir::OpType::Transpose)) continue;
    const int x = op.inputs[0], y = op.outputs[0];
    if (std::find(g.outputs.begin(), g.outputs.end(), y) != g.outputs.end()) continue;
    if (!layout::IsView(g, op)) continue;
    plan->alias[size_t(y)] = x;
    plan->folded[i] = "a view: '" + g.tensors[size_t(y)].name + "' is the buffer of '" + g.tensors[size_t(x)].name +
                      "' (the same bytes on the device), no dispatch";
  }
  // Resolve chains (a view of a view, a folded quantize of a view): aliases point backwards in
  // the op order, so following them ends.
  for (size_t t = 0; t < plan->alias.size(); ++t) {
    int a = plan->alias[t];
    while (plan->alias[size_t(a)] != a) a = plan->alias[size_t(a)];
    plan->alias[t] = a;
  }
}

}  // namespace vkqc
