// avg_pool2d and max_pool2d lowering (kernels/lowering.h); the kernels are shaders/avgpool.comp
// (conv::PoolDispatch) and shaders/maxpool.comp.
#pragma once
#include "compiler/kernels/lowering.h"

namespace vkqc::pool {
const kernels::Family& Lowering();
}  // namespace vkqc::pool
