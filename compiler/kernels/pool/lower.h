// avg_pool2d lowering (kernels/lowering.h); the kernel is shaders/avgpool.comp (conv::PoolDispatch).
#pragma once
#include "compiler/kernels/lowering.h"

namespace vkqc::pool {
const kernels::Family& Lowering();
}  // namespace vkqc::pool
