// Verifier rules of the layout ops transpose and reshape, and of clip (semantics in ir.h).
// verify.cc's kOpRules lists them.
#include <cmath>
#include <string>
#include <vector>

#include "compiler/graph/verify_ops.h"

namespace vkqc::verify {
namespace {

using ir::DType;
using ir::Scheme;
using ir::Tensor;

constexpr size_t kMaxTransposeRank = 6;

std::string Ints(const std::vector<int32_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size() && i < 8; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() > 8 ? ", ... (" + std::to_string(v.size()) + " entries)]" : "]");
}

std::string Float(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "+inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", double(v));
  return buf;
}

std::string QuantText(const ir::Quant& q) {
  return std::string(ir::SchemeName(q.scheme)) + " scale " + Float(q.scales.empty() ? 0.0f : q.scales[0]) +
         " zero point " + std::to_string(q.zero_points.empty() ? 0 : q.zero_points[0]);
}

bool PerTensor(const Tensor& t) {
  return t.quant && (t.quant->scheme == Scheme::Q8TA || t.quant->scheme == Scheme::Q8TO) &&
         t.quant->scales.size() == 1 && t.quant->zero_points.size() <= 1;
}

// The shared part of transpose and reshape: a computed f32 or per-tensor i8 input of rank >= 1,
// and an output of the same dtype carrying the same quantization (both ops copy values).
Status CheckCopyOp(const OpCtx& c) {
  const char* type = ir::OpTypeName(c.op.type);
  const Tensor& x = c.In(0);
  const Tensor& y = c.Out(0);
  const std::string xn = "input " + Quote(x.name), yn = "output " + Quote(y.name);
  if (x.is_constant()) {
    return c.Fail(xn + " is a constant; " + type +
                  " takes a computed tensor in this version (apply it to the constant at import)");
  }
  if (x.dtype == DType::I8) {
    if (!PerTensor(x)) {
      const Scheme s = x.quant ? x.quant->scheme : Scheme::None;
      return c.Fail(xn + " is i8 " +
                    (s == Scheme::None ? std::string("without quantization")
                                       : std::string("with quant ") + ir::SchemeName(s)) +
                    "; " + type + " takes f32, or i8 with a per-tensor q8ta/q8to quant (one scale, one zero point)" +
                    (s == Scheme::DQ8CA ? " (per-token parameters belong to rows, which it would move)" : ""));
    }
  } else if (x.dtype != DType::F32) {
    return c.Fail(xn + " is " + ir::DTypeName(x.dtype) + "; " + type +
                  " takes f32, or i8 with a per-tensor q8ta/q8to quant");
  }
  if (x.shape.empty()) return c.Fail(xn + " is a scalar (rank 0); " + type + " takes rank >= 1");
  if (y.shape.empty()) return c.Fail(yn + " is a scalar (rank 0); " + type + " takes rank >= 1");
  if (y.dtype != x.dtype) {
    return c.Fail(yn + " is " + ir::DTypeName(y.dtype) + " but " + xn + " is " + ir::DTypeName(x.dtype) + "; " +
                  type + " copies values, so the output has the input's dtype");
  }
  if (x.dtype == DType::I8) {
    const bool same = PerTensor(y) && y.quant->scales[0] == x.quant->scales[0] &&
                      (y.quant->zero_points.empty() ? 0 : y.quant->zero_points[0]) ==
                          (x.quant->zero_points.empty() ? 0 : x.quant->zero_points[0]);
    if (!same) {
      return c.Fail(yn + " has " + (y.quant ? "quant " + QuantText(*y.quant) : std::string("no quantization")) +
                    " but " + xn + " has " + QuantText(*x.quant) + "; " + type +
                    " copies int8 values, so the output carries the input's scale and zero point (requantize "
                    "separately)");
    }
  } else if (y.quant && y.quant->scheme != Scheme::None) {
    return c.Fail(yn + " is f32 but carries quant " + ir::SchemeName(y.quant->scheme) + "; remove it");
  }
  return {};
}

}  // namespace

Status CheckTranspose(const OpCtx& c) {
  VKQC_TRY(CheckCopyOp(c));
  const Tensor& x = c.In(0);
  const Tensor& y = c.Out(0);
  const std::vector<int32_t>& perm = c.op.transpose.perm;
  const size_t rank = x.shape.size();
  if (rank > kMaxTransposeRank) {
    return c.Fail("input " + Quote(x.name) + " " + Dims(c.g, x.shape) + " has rank " + Num(int64_t(rank)) +
                  "; transpose takes rank 1 to " + Num(kMaxTransposeRank) + " (merge adjacent dimensions first)");
  }
  if (perm.size() != rank) {
    return c.Fail("perm " + Ints(perm) + " has " + Num(int64_t(perm.size())) + " entries but input " + Quote(x.name) +
                  " " + Dims(c.g, x.shape) + " has rank " + Num(int64_t(rank)) + "; give one entry per dimension");
  }
  std::vector<bool> seen(rank, false);
  for (int32_t a : perm) {
    if (a < 0 || size_t(a) >= rank || seen[size_t(a)]) {
      return c.Fail("perm " + Ints(perm) + " is not a permutation of 0.." + Num(int64_t(rank) - 1) +
                    " (each axis exactly once, no negative axes)");
    }
    seen[size_t(a)] = true;
  }
  if (x.shape[0] == ir::kSymbolicDim && perm[0] != 0) {
    return c.Fail("input " + Quote(x.name) + " " + Dims(c.g, x.shape) + " leads with the symbolic dimension " +
                  Quote(c.g.symbolic_dim) + ", which must stay first: perm " + Ints(perm) + " must start with 0");
  }
  std::vector<int64_t> want;
  for (int32_t a : perm) want.push_back(x.shape[size_t(a)]);
  if (y.shape != want) {
    return c.Fail("output " + Quote(y.name) + " has shape " + Dims(c.g, y.shape) + " but input " + Quote(x.name) +
                  " " + Dims(c.g, x.shape) + " transposed by perm " + Ints(perm) + " is " + Dims(c.g, want));
  }
  return {};
}

Status CheckReshape(const OpCtx& c) {
  VKQC_TRY(CheckCopyOp(c));
  const Tensor& x = c.In(0);
  const Tensor& y = c.Out(0);
  const bool xs = x.shape[0] == ir::kSymbolicDim, ys = y.shape[0] == ir::kSymbolicDim;
  if (xs != ys) {
    const Tensor& with = xs ? x : y;
    return c.Fail(std::string(xs ? "input " : "output ") + Quote(with.name) + " " + Dims(c.g, with.shape) +
                  " leads with the symbolic dimension " + Quote(c.g.symbolic_dim) + " but " +
                  (xs ? "output " : "input ") + Quote((xs ? y : x).name) + " " + Dims(c.g, (xs ? y : x).shape) +
                  " does not; a reshape keeps it leading in both (the element count must not depend on it)");
  }
  // Element counts per token (the symbolic dimension is kept leading on both sides).
  const int64_t nx = x.NumElements(1), ny = y.NumElements(1);
  if (nx != ny) {
    return c.Fail("output " + Quote(y.name) + " " + Dims(c.g, y.shape) + " has " + Num(ny) +
                  " elements but input " + Quote(x.name) + " " + Dims(c.g, x.shape) + " has " + Num(nx) +
                  (xs ? " (per " + Quote(c.g.symbolic_dim) + ")" : std::string()) +
                  "; reshape keeps the element count");
  }
  return {};
}

Status CheckClip(const OpCtx& c) {
  VKQC_TRY(CheckElementwiseOp(c));
  const float lo = c.op.unary.alpha, hi = c.op.unary.beta;
  if (std::isnan(lo) || std::isnan(hi)) {
    return c.Fail("min " + Float(lo) + " and max " + Float(hi) +
                  " must be numbers (an absent bound is -inf or +inf, not nan)");
  }
  if (lo > hi) return c.Fail("min " + Float(lo) + " is greater than max " + Float(hi) + "; give min <= max");
  return {};
}

}  // namespace vkqc::verify
