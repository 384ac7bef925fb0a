// embedding lowering (kernels/lowering.h): the table is stored as the graph holds it (f32, int8
// rows or int4 nibbles, then the scales) and gathered by shaders/embedding.comp.
#pragma once
#include "compiler/kernels/lowering.h"

namespace vkqc::embedding {
const kernels::Family& Lowering();
}  // namespace vkqc::embedding
