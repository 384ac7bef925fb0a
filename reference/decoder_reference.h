// CPU reference of the transformer-decoder ops (DESIGN 4.2): embedding, rms_norm, rope,
// attention over a KV cache, argmax. Float work in double unless DESIGN says fp32 (rope's
// rotation; the KV cache holds f16-rounded values, as the device stores them).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler/common/result.h"
#include "compiler/graph/ir.h"

namespace vkqc::ref {

bool IsDecoderOp(ir::OpType t);

// The values the reference keeps per tensor while running a graph.
struct DecoderValues {
  std::map<int, std::vector<float>>& values;  // every computed tensor (i32 ones as floats too)
  std::map<int, std::vector<int32_t>>& ints;  // i32 tensors, exact
  // KV caches by tensor name: [Hkv][S][D] values (f16-rounded for f16 caches). Missing entries
  // start as zeros; attention ops update them in place. nullptr: a fresh, zero state.
  std::map<std::string, std::vector<float>>* state;
  std::map<int, std::vector<float>>& magnitude;  // the scale of each output's rounding error
};

// Runs op `op` of `g` with `tokens` rows, reading and writing `v`.
Status RunDecoderOp(const ir::Graph& g, const ir::Op& op, int64_t tokens, DecoderValues& v);

}  // namespace vkqc::ref
