// Graph verification: every check that makes later passes safe (indices, shapes, dtypes,
// schemes, topological order). Errors name `origin`, the op (by index and name) or tensor,
// and what is wrong.
#pragma once
#include <string>

#include "compiler/common/result.h"
#include "compiler/graph/ir.h"

namespace vkqc {

Status VerifyGraph(const ir::Graph& graph, const std::string& origin);

}  // namespace vkqc
