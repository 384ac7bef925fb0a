// resize_nearest lowering (kernels/lowering.h): shaders/resize_nearest.comp, NHWC, f32 or int8
// (a copy of packed row words).
#pragma once
#include "compiler/kernels/lowering.h"

namespace vkqc::resize {
const kernels::Family& Lowering();
}  // namespace vkqc::resize
