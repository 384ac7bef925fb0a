// CPU reference of the glue ops of convolutional networks (ir.h): max_pool2d, concat, sigmoid,
// hard_sigmoid, hard_swish, resize_nearest, softmax, and mul with broadcasting. Plain loops over
// logical indices, independent of the device layouts; float math in double, int8 requantization
// as DESIGN 4 (fp32 real value, fp32 inverse scale, roundEven).
#pragma once
#include <cstdint>
#include <map>
#include <vector>

#include "compiler/common/result.h"
#include "compiler/graph/ir.h"

namespace vkqc::ref {

// The ops RunCnnOp computes (mul only when b's shape differs from a's).
bool IsCnnOp(const ir::Graph& g, const ir::Op& op);

// Runs `op` with `tokens` rows of the symbolic dimension; `values` holds every computed tensor
// (int8 tensors as their integer values).
Status RunCnnOp(const ir::Graph& g, const ir::Op& op, int64_t tokens, std::map<int, std::vector<float>>& values);

}  // namespace vkqc::ref
