// The compiler pipeline: verified graph + target profile -> bundle bytes.
// Order: verify -> per program (token count): select kernels -> pack weights once (shared by
// all programs) -> plan arena -> build dispatches -> compile + reflect shaders -> barriers ->
// requirements -> serialize.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/common/result.h"
#include "compiler/graph/ir.h"
#include "compiler/kernels/conv/conv.h"
#include "compiler/kernels/linear/linear.h"
#include "compiler/profile/profile.h"

namespace vkqc {

inline constexpr const char* kCompilerVersion = "vkqc 0.1.0";

struct CompileOptions {
  // Programs to build, one per token count; required when the graph has a symbolic dimension.
  std::vector<int64_t> tokens;
  linear::SelectOptions select;
  conv::ConvSelectOptions conv;
  // Debugging: give every arena tensor its own memory (no reuse), so every intermediate can be
  // read after a run (`vkqc run --per-op` checks each op against the reference on them).
  bool keep_intermediates = false;
};

// `graph_hash` identifies the source graph file (FNV-1a of its bytes) and is stored as is.
Result<std::vector<uint8_t>> CompileGraph(const ir::Graph& graph, const TargetProfile& profile,
                                          const CompileOptions& options, uint64_t graph_hash);

}  // namespace vkqc
