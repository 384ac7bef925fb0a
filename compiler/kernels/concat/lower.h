// concat lowering (kernels/lowering.h): one dispatch of shaders/concat.comp per input, each
// binding that input and the output (so any number of inputs fits targets with 4 storage buffers
// per stage), writing the input's part of the output.
#pragma once
#include "compiler/kernels/lowering.h"

namespace vkqc::concat {
const kernels::Family& Lowering();
}  // namespace vkqc::concat
