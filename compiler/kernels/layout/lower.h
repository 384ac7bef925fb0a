// Layout lowering (kernels/lowering.h): transpose and reshape (layout.h). A reshape or transpose
// the view pass (passes/fold_views.h) folded never reaches this family.
#pragma once
#include "compiler/kernels/lowering.h"

namespace vkqc::layout {
const kernels::Family& Lowering();
}  // namespace vkqc::layout
