// `vkqc import`: the JSON authoring form of a graph (docs/graph-json.md) whose constant
// tensors live in a safetensors file beside it. Produces a verified IR graph.
#pragma once
#include <string>

#include "compiler/common/result.h"
#include "compiler/graph/ir.h"

namespace vkqc {

Result<ir::Graph> ImportJsonGraph(const std::string& json_path);

}  // namespace vkqc
