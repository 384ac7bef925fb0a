// rope lowering (kernels/lowering.h): the cos/sin table (ir::RopeTable, computed in double at
// compile time, so the GPU and the reference use identical values) in the weight segment,
// shaders/rope.comp one invocation per rotated pair at the run's positions.
#pragma once
#include "compiler/kernels/lowering.h"

namespace vkqc::rope {
const kernels::Family& Lowering();
}  // namespace vkqc::rope
