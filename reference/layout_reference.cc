#include "reference/layout_reference.h"

#include <algorithm>
#include <string>

namespace vkqc::ref {

bool IsLayoutOp(ir::OpType t) {
  return t == ir::OpType::Transpose || t == ir::OpType::Reshape || t == ir::OpType::Clip;
}

Status RunLayoutOp(const ir::Graph& g, const ir::Op& op, int64_t tokens, std::map<int, std::vector<float>>& values) {
  const std::vector<float>& x = values.at(op.inputs[0]);
  const ir::Tensor& xt = g.tensors[size_t(op.inputs[0])];
  if (int64_t(x.size()) != xt.NumElements(tokens))
    return UserError("reference: op '" + op.name + "': input '" + xt.name + "' has the wrong element count");
  std::vector<float> y(x.size());
  if (op.type == ir::OpType::Reshape) {
    y = x;
  } else if (op.type == ir::OpType::Clip) {
    for (size_t i = 0; i < x.size(); ++i) y[i] = std::min(std::max(x[i], op.unary.alpha), op.unary.beta);
  } else {
    // y[o_0, ..., o_{r-1}] = x[i] with i_{perm[k]} = o_k: walk y in row-major order with a
    // counter per output dimension, stepping x by the stride of the input dimension it moves.
    const size_t r = xt.shape.size();
    std::vector<int64_t> dims(r), stride(r, 1), out(r), step(r), idx(r, 0);
    for (size_t k = 0; k < r; ++k) dims[k] = xt.shape[k] == ir::kSymbolicDim ? tokens : xt.shape[k];
    for (size_t k = r; k-- > 1;) stride[k - 1] = stride[k] * dims[k];
    for (size_t k = 0; k < r; ++k) {
      out[k] = dims[size_t(op.transpose.perm[k])];
      step[k] = stride[size_t(op.transpose.perm[k])];
    }
    int64_t src = 0;
    for (size_t e = 0; e < y.size(); ++e) {
      y[e] = x[size_t(src)];
      for (size_t k = r; k-- > 0;) {  // increment the output index, last dimension fastest
        src += step[k];
        if (++idx[k] < out[k]) break;
        src -= step[k] * out[k];
        idx[k] = 0;
      }
    }
  }
  values[op.outputs[0]] = std::move(y);
  return {};
}

}  // namespace vkqc::ref
