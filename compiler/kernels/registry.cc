// The explicit list of op families (DESIGN 8: registration is a list, not static initializers).
#include "compiler/kernels/argmax/lower.h"
#include "compiler/kernels/attention/lower.h"
#include "compiler/kernels/clip/lower.h"
#include "compiler/kernels/concat/lower.h"
#include "compiler/kernels/conv/lower.h"
#include "compiler/kernels/elementwise/lower.h"
#include "compiler/kernels/embedding/lower.h"
#include "compiler/kernels/layout/lower.h"
#include "compiler/kernels/linear/lower.h"
#include "compiler/kernels/lowering.h"
#include "compiler/kernels/norm/lower.h"
#include "compiler/kernels/pool/lower.h"
#include "compiler/kernels/quantize/lower.h"
#include "compiler/kernels/resize/lower.h"
#include "compiler/kernels/rope/lower.h"

namespace vkqc::kernels {

const std::vector<Family>& Families() {
  static const std::vector<Family> all{
      linear::Lowering(),    conv::Lowering(), pool::Lowering(), elementwise::Lowering(), quantize::Lowering(),
      embedding::Lowering(), norm::Lowering(), rope::Lowering(), attention::Lowering(),   argmax::Lowering(),
      concat::Lowering(),    resize::Lowering(),
      layout::Lowering(),    clip::Lowering(),
  };
  return all;
}

const Family* FamilyFor(ir::OpType type) {
  for (const Family& f : Families())
    for (ir::OpType t : f.ops)
      if (t == type) return &f;
  return nullptr;
}

}  // namespace vkqc::kernels
