// Shared by the graph verifier's files: the per-op check context and message helpers, the checks
// of the transformer-decoder ops (verify_decoder.cc) and of the CNN glue ops (verify_cnn_ops.cc).
// verify.cc's kOpRules lists them.
#pragma once
#include <string>
#include <vector>

#include "compiler/common/result.h"
#include "compiler/graph/ir.h"

namespace vkqc::verify {

inline std::string Quote(const std::string& s) { return "'" + s + "'"; }
inline std::string Num(int64_t v) { return std::to_string(v); }

inline std::string Dims(const ir::Graph& g, const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i] == ir::kSymbolicDim ? g.symbolic_dim : std::to_string(shape[i]);
  }
  return s + "]";
}

struct OpCtx {
  const ir::Graph& g;
  const std::string& origin;
  int index;
  const ir::Op& op;
  const ir::Tensor& In(size_t i) const { return g.tensors[op.inputs[i]]; }
  const ir::Tensor& Out(size_t i) const { return g.tensors[op.outputs[i]]; }
  Error Fail(const std::string& what) const {
    std::string name = op.name.empty() ? std::string("(unnamed)") : Quote(op.name);
    return UserError(origin + ": op " + std::to_string(index) + " " + name + " (" + ir::OpTypeName(op.type) +
                     "): " + what);
  }
};

// A constant weight [n, k] in one of the linear weight schemes (q8csw, q4gsw, q4gaw), verify.cc.
Status CheckWeight(const OpCtx& c, const ir::Tensor& w, int64_t n, int64_t k);

Status CheckEmbedding(const OpCtx& c);
Status CheckRmsNorm(const OpCtx& c);
Status CheckRope(const OpCtx& c);
Status CheckAttention(const OpCtx& c);
Status CheckArgmax(const OpCtx& c);

// Shared rules of verify.cc, for the other files: a non-constant i8 input with a per-tensor
// q8ta/q8to quant; a non-constant input; a non-constant rank-4 NHWC input; an output that is f32
// `want` (oq none) or i8 `want` carrying oq (q8to); the f32 elementwise rule (verify.cc).
Status CheckPerTensorInt8Input(const OpCtx& c, const ir::Tensor& t);
Status CheckNotConstantInput(const OpCtx& c, const ir::Tensor& t);
Status CheckNhwcInput(const OpCtx& c, const ir::Tensor& x);
Status CheckOutputQuant(const OpCtx& c, const ir::Tensor& y, const ir::Quant& oq, const std::vector<int64_t>& want);
Status CheckElementwiseOp(const OpCtx& c);
// An activation kind this version knows; a per-tensor quant (one scale, one zero point) (verify.cc).
Status CheckActivationKind(const OpCtx& c, ir::Activation a);
Status CheckPerTensorQuant(const OpCtx& c, const std::string& what, const ir::Quant& q);

// quantize and dequantize (verify_quant_ops.cc).
Status CheckQuantize(const OpCtx& c);
Status CheckDequantize(const OpCtx& c);

// conv2d, add, avg/max_pool2d (verify_cnn_ops.cc); semantics in ir.h.
Status CheckConv2d(const OpCtx& c);
Status CheckAdd(const OpCtx& c);
Status CheckPool2d(const OpCtx& c);

// The ops of convolutional networks' glue (verify_cnn_ops.cc); semantics in ir.h.
// b broadcasts to a's shape (numpy rules: rank(b) <= rank(a), each dim of b 1 or a's).
Status CheckBroadcast(const OpCtx& c, const ir::Tensor& a, const ir::Tensor& b);
Status CheckConcat(const OpCtx& c);
Status CheckHardSigmoid(const OpCtx& c);
Status CheckResizeNearest(const OpCtx& c);
Status CheckSoftmax(const OpCtx& c);

// The layout ops and clip (verify_shape_ops.cc); semantics in ir.h.
Status CheckTranspose(const OpCtx& c);
Status CheckReshape(const OpCtx& c);
Status CheckClip(const OpCtx& c);

// State tensors (KV caches): f16/f32, concrete shape, no data or quant, never a graph input or
// output, never an op's output, and read only by attention ops as their caches (once each).
Status CheckStateTensors(const ir::Graph& g, const std::string& origin);

}  // namespace vkqc::verify
