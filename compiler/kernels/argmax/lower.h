// argmax lowering (kernels/lowering.h): shaders/argmax.comp, one workgroup per row.
#pragma once
#include "compiler/kernels/lowering.h"

namespace vkqc::argmax {
const kernels::Family& Lowering();
}  // namespace vkqc::argmax
