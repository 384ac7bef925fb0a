// Reading models in every input format the CLI accepts (.vkqg, graph JSON, GGUF), `vkqc import`,
// and the graph summary `vkqc inspect MODEL` prints.
#pragma once
#include <cstdint>
#include <string>

#include "compiler/common/result.h"
#include "compiler/graph/ir.h"
#include "tools/vkqc/cli.h"

namespace vkqc {

// A graph from .vkqg, graph JSON or GGUF (with --max-context, --quantize, --requantize from `a`);
// `hash` (optional) receives the FNV-1a 64 of the graph's serialized bytes.
Result<ir::Graph> LoadGraph(const std::string& path, uint64_t* hash, const Args* a = nullptr);

// The model's description, tokenizer and every constant tensor's format.
void PrintGraphSummary(const ir::Graph& g);

// `vkqc import GRAPH.json|MODEL.gguf -o MODEL.vkqg [--max-context N] [--quantize ..] [--requantize ..]`
Status CmdImport(const Args& a);

}  // namespace vkqc
