// conv2d lowering (kernels/lowering.h).
#pragma once
#include "compiler/kernels/conv/conv.h"
#include "compiler/kernels/lowering.h"

namespace vkqc::conv {

const kernels::Family& Lowering();
// The NHWC geometry of a conv2d, avg_pool2d or max_pool2d op with the symbolic batch set to `tokens`.
ConvGeometry Geometry(const ir::Graph& g, const ir::Op& op, int64_t tokens);

}  // namespace vkqc::conv
