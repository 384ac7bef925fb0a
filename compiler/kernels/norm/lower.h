// Row-reduction ops (kernels/lowering.h): rms_norm (shaders/rms_norm.comp) and softmax over the
// last axis (shaders/softmax.comp), one workgroup per row.
#pragma once
#include "compiler/kernels/lowering.h"

namespace vkqc::norm {
const kernels::Family& Lowering();
}  // namespace vkqc::norm
