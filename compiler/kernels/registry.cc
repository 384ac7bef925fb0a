// The explicit list of op families (DESIGN 8: registration is a list, not static initializers).
#include "compiler/kernels/conv/lower.h"
#include "compiler/kernels/elementwise/lower.h"
#include "compiler/kernels/linear/lower.h"
#include "compiler/kernels/lowering.h"
#include "compiler/kernels/pool/lower.h"
#include "compiler/kernels/quantize/lower.h"

namespace vkqc::kernels {

const std::vector<Family>& Families() {
  static const std::vector<Family> all{
      linear::Lowering(), conv::Lowering(), pool::Lowering(), elementwise::Lowering(), quantize::Lowering(),
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
