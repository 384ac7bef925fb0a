// GGUF checkpoint -> vkqc graph: Llama-family decoders (architectures `llama` and `qwen2`) with
// their weights converted exactly where a vkqc scheme holds them (gguf_tensors.h), their
// hyperparameters from the metadata, and the tokenizer carried in the graph's metadata.
#pragma once
#include <functional>
#include <string>

#include "compiler/common/progress.h"
#include "compiler/common/result.h"
#include "compiler/graph/ir.h"

namespace vkqc {

struct GgufImportOptions {
  int64_t max_context = 0;  // KV cache positions; 0: the model's context_length, at most 4096
  // Float (F32/F16/BF16) linear weights: "" (refused), "q8" (q8csw) or "8da4w" (q4gsw groups of 32;
  // both with dq8ca activations). Never applied to weights that are already quantized.
  std::string quantize;
  // Quantized types with no exact vkqc scheme (Q4_1, Q5_*, Q4_K, Q5_K, Q6_K, Q8_0 with per-block
  // scales): "" (refused, with the list) or "q8csw" / "q4gsw" (dequantized, then re-quantized).
  std::string requantize;
  std::function<void(const std::string&)> log;  // the recipe, one line at a time
  ProgressFn progress;  // the weights converted, block by block
};

// Architectures ImportGguf accepts.
const char* GgufArchitectures();

Result<ir::Graph> ImportGguf(const std::string& path, const GgufImportOptions& options);

// Keys of ir::Graph::metadata the importer writes.
inline constexpr const char* kMetaTokenizer = "tokenizer";     // tok::Serialize(TokenizerData)
inline constexpr const char* kMetaDescription = "description";  // one line: architecture, sizes, formats

}  // namespace vkqc
