// A linear layer shape for selection tests (the Llama-3-8B MLP shape by default).
#pragma once

#include "compiler/kernels/linear/linear.h"

namespace vkqc::linear {

inline LinearShape Shape(ir::Scheme act, ir::Scheme w, int64_t gs, int64_t m = 512, int64_t k = 4096,
                         int64_t n = 14336) {
  LinearShape s;
  s.m = m;
  s.k = k;
  s.n = n;
  s.act = act;
  s.weights = w;
  s.group_size = w == ir::Scheme::Q8CSW ? 0 : gs;
  return s;
}

}  // namespace vkqc::linear
