// CPU reference of the layout ops and clip (ir.h): transpose (numpy.transpose), reshape (the
// row-major order kept) and clip (min(max(x, min), max)). Plain loops over logical indices,
// independent of the device layouts; int8 tensors are their integer values and are copied.
#pragma once
#include <cstdint>
#include <map>
#include <vector>

#include "compiler/common/result.h"
#include "compiler/graph/ir.h"

namespace vkqc::ref {

bool IsLayoutOp(ir::OpType t);  // transpose, reshape, clip

// Runs `op` with `tokens` rows of the symbolic dimension; `values` holds every computed tensor.
Status RunLayoutOp(const ir::Graph& g, const ir::Op& op, int64_t tokens, std::map<int, std::vector<float>>& values);

}  // namespace vkqc::ref
