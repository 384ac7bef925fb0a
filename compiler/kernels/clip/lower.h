// clip lowering (kernels/lowering.h): y = min(max(x, min), max) over f32 values, shaders/clip.comp.
#pragma once
#include "compiler/kernels/lowering.h"

namespace vkqc::clip {
const kernels::Family& Lowering();
}  // namespace vkqc::clip
