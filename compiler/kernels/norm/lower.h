// rms_norm lowering (kernels/lowering.h): shaders/rms_norm.comp, one workgroup per row.
#pragma once
#include "compiler/kernels/lowering.h"

namespace vkqc::norm {
const kernels::Family& Lowering();
}  // namespace vkqc::norm
