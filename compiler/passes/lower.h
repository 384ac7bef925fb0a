// The packing and lowering passes: every op's family (kernels/registry.cc) packs its constants
// into the weight segment once, then lowers each program (token count) to dispatches; this pass
// owns what families share: the program's buffers, the arena plan, pipelines (compiled,
// reflected, deduplicated), barriers and the layer -> command map.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/common/result.h"
#include "compiler/emit/bundle_plan.h"
#include "compiler/graph/ir.h"
#include "compiler/kernels/lowering.h"
#include "compiler/passes/fold_quant.h"
#include "compiler/passes/fuse_rows.h"

namespace vkqc {

// What packing produced per op: its weight-segment region and the family's kept data.
struct PackedConstants {
  std::vector<uint64_t> offset, size;
  std::vector<std::shared_ptr<void>> kept;
};

struct LowerInputs {
  const ir::Graph& graph;  // verified, folded
  const FoldPlan& fold;
  const FusePlan& fuse;
  const TargetProfile& profile;
  const CompileOptions& options;
  uint32_t align;  // binding offset alignment (>= minStorageBufferOffsetAlignment)
  // Per op of `graph`, the source graph's op it computes (-1: none), where a pass rewrote the
  // op list (passes/split_wide.h); empty: the ops are the source graph's.
  const std::vector<int32_t>& source_op;
};

// The bundle's state tensors (KV caches) and the context they hold.
void PlanStates(const LowerInputs& in, BundlePlan* plan);

// Packs every op's constants into plan->weights.
Result<PackedConstants> PackAll(const LowerInputs& in, BundlePlan* plan);

// Compiled pipelines shared by all programs of a bundle (by module hash, subgroup size and
// specialization).
class PipelineTable {
 public:
  Result<uint32_t> PipelineFor(const linear::DispatchParams& d, BundlePlan* plan);

 private:
  std::map<uint64_t, uint32_t> module_index_;
  std::map<std::string, uint32_t> pipeline_index_;
};

// Builds one program (tokens = the symbolic dimension's size, 0 for a static graph) into
// plan->programs.
Status LowerProgram(const LowerInputs& in, int64_t tokens, const PackedConstants& consts, PipelineTable* pipelines,
                    BundlePlan* plan);

}  // namespace vkqc
