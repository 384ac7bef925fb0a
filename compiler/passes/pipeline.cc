// The order of the passes; what each does lives in its own file.
#include "compiler/passes/pipeline.h"

#include <algorithm>

#include "compiler/common/log.h"
#include "compiler/emit/bundle_plan.h"
#include "compiler/graph/verify.h"
#include "compiler/passes/fold_quant.h"
#include "compiler/passes/fold_views.h"
#include "compiler/passes/fuse_rows.h"
#include "compiler/passes/lower.h"
#include "compiler/passes/split_wide.h"

namespace vkqc {
namespace {

Result<std::vector<int64_t>> ProgramSizes(const ir::Graph& g, const CompileOptions& o) {
  std::vector<int64_t> tokens = o.tokens;
  if (!g.HasSymbolicDim()) {
    if (!tokens.empty()) return UserError("--tokens was given, but the graph has no symbolic dimension");
    return std::vector<int64_t>{0};  // one program with the static shapes
  }
  if (tokens.empty())
    return UserError("the graph has a symbolic '" + g.symbolic_dim +
                     "' dimension: pass the sizes to build with --tokens N[,N...]");
  for (int64_t t : tokens)
    if (t < 1 || t > (1 << 20)) return UserError("--tokens " + std::to_string(t) + " is out of range (1..1048576)");
  std::sort(tokens.begin(), tokens.end());
  tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
  return tokens;
}

// The requirements must fit the profile the bundle was compiled for.
Status CheckAgainstProfile(const PlanRequirements& r, const TargetProfile& p) {
  std::vector<std::string> bad;
  if (r.max_compute_shared_memory_size > p.max_compute_shared_memory_size) bad.push_back("shared memory");
  if (r.max_compute_work_group_invocations > p.max_compute_work_group_invocations) bad.push_back("invocations");
  for (int i = 0; i < 3; ++i) {
    if (r.max_compute_work_group_size[i] > p.max_compute_work_group_size[i]) bad.push_back("workgroup size");
    if (r.max_compute_work_group_count[i] > p.max_compute_work_group_count[i]) bad.push_back("workgroup count");
  }
  if (r.max_storage_buffer_range > p.max_storage_buffer_range) bad.push_back("maxStorageBufferRange");
  if (r.max_per_stage_descriptor_storage_buffers > p.max_per_stage_descriptor_storage_buffers)
    bad.push_back("storage buffers per stage");
  if (r.max_push_constants_size > p.max_push_constants_size) bad.push_back("push constants");
  if (r.shader_float16 && !p.shader_float16) bad.push_back("shaderFloat16");
  if (r.shader_int8 && !p.shader_int8) bad.push_back("shaderInt8");
  if (r.cooperative_matrix_nv && !p.HasExtension("VK_NV_cooperative_matrix")) bad.push_back("VK_NV_cooperative_matrix");
  if (r.cooperative_matrix_khr && !(p.cooperative_matrix && p.HasExtension("VK_KHR_cooperative_matrix")))
    bad.push_back("VK_KHR_cooperative_matrix");
  if (bad.empty()) return {};
  std::string s;
  for (const auto& b : bad) s += (s.empty() ? "" : ", ") + b;
  return UserError("the compiled program exceeds limits of target '" + p.name + "': " + s);
}

}  // namespace

Result<std::vector<uint8_t>> CompileGraph(const ir::Graph& graph, const TargetProfile& profile,
                                          const CompileOptions& options, uint64_t graph_hash) {
  VKQC_TRY(VerifyGraph(graph, "graph"));
  ir::Graph g = graph;  // the compiler's copy, rewritten by the passes
  const std::vector<int32_t> source_op = SplitWideLinears(&g, profile.max_storage_buffer_range);
  if (!source_op.empty()) {
    log::Debug("linears wider than one binding split by output channels: " + std::to_string(graph.ops.size()) +
               " ops became " + std::to_string(g.ops.size()));
    if (auto v = VerifyGraph(g, "graph"); !v.ok()) return InternalError("splitting wide linears: " + v.error().message);
  }
  FoldPlan fold = FoldQuantization(g);
  FoldViews(g, &fold);
  const FusePlan fuse = FuseRows(g, fold, {profile.max_per_stage_descriptor_storage_buffers,
                                           profile.max_storage_buffer_range, !options.keep_intermediates,
                                           !options.keep_intermediates});
  VKQC_ASSIGN_OR_RETURN(const std::vector<int64_t> sizes, ProgramSizes(g, options));
  if (log::Enabled(log::Level::Debug)) {
    size_t folded = 0;
    for (const std::string& why : fold.folded) folded += !why.empty();
    std::string programs;
    for (int64_t t : sizes) {
      if (!programs.empty()) programs += ", ";
      programs += t ? "tokens=" : "main";
      if (t) programs += std::to_string(t);
    }
    log::Debug("target '" + profile.name + "': " + std::to_string(g.ops.size()) + " ops, " + std::to_string(folded) +
               " folded by the compiler; programs " + programs);
  }
  const uint32_t align = std::max<uint32_t>(256, profile.min_storage_buffer_offset_alignment);
  const LowerInputs in{g, fold, fuse, profile, options, align, source_op};
  BundlePlan plan;
  plan.compiler_version = kCompilerVersion;
  plan.target_profile = profile.name;
  plan.graph_hash = graph_hash;
  plan.metadata = g.metadata;
  PlanStates(in, &plan);
  VKQC_ASSIGN_OR_RETURN(const PackedConstants consts, PackAll(in, &plan));
  PipelineTable pipelines;
  for (int64_t t : sizes) VKQC_TRY(LowerProgram(in, t, consts, &pipelines, &plan));
  plan.requirements = DeriveRequirements(plan, align);
  if (log::Enabled(log::Level::Debug)) {
    const PlanRequirements& r = plan.requirements;
    log::Debug("requirements: " + std::to_string(r.max_compute_shared_memory_size) + " B shared memory, " +
               std::to_string(r.max_compute_work_group_invocations) + " invocations, " +
               std::to_string(r.max_per_stage_descriptor_storage_buffers) + " storage buffers per stage, " +
               std::to_string(r.max_push_constants_size) + " B push constants" +
               (r.shader_integer_dot_product ? ", integer dot product" : "") +
               (r.subgroup_arithmetic ? ", subgroup arithmetic" : "") +
               (r.cooperative_matrix_khr || r.cooperative_matrix_nv ? ", cooperative matrix" : ""));
  }
  VKQC_TRY(CheckAgainstProfile(plan.requirements, profile));
  return WriteBundle(plan);
}

}  // namespace vkqc
