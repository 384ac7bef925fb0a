// The compiler pipeline: verified graph + target profile -> bundle bytes.
// Order: verify -> fold quantization -> fold views (passes/fold_views.h) -> pack every op's
// constants once (shared by all programs) -> per program (token count): lower each op through its
// family (kernels/registry.cc), plan the arena, compile + reflect shaders, barriers ->
// requirements -> check against the profile -> serialize.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/common/result.h"
#include "compiler/graph/ir.h"
#include "compiler/kernels/lowering.h"  // CompileOptions
#include "compiler/profile/profile.h"

namespace vkqc {

inline constexpr const char* kCompilerVersion = "vkqc 0.1.0";

// `graph_hash` identifies the source graph file (FNV-1a of its bytes) and is stored as is.
Result<std::vector<uint8_t>> CompileGraph(const ir::Graph& graph, const TargetProfile& profile,
                                          const CompileOptions& options, uint64_t graph_hash);

}  // namespace vkqc
