// Wide linears (runs first, on the verified graph): a linear whose packed weights are larger than
// one storage-buffer binding may be on the target (linear::PackedLinearBytes above
// maxStorageBufferRange: a 128256-channel lm_head on the 128 MiB of lavapipe and most Android
// GPUs) becomes linears over consecutive slices of its output channels, each packed within the
// range, and a concat along the last axis writing the original output. Every part computes its
// channels exactly as the whole linear would (same scheme, groups, bias and activation
// quantization), so the graph's function is unchanged; readers of the output see one tensor.
// Embedding tables are split by their own family (kernels/embedding), which needs no new op.
#pragma once
#include <cstdint>
#include <vector>

#include "compiler/graph/ir.h"

namespace vkqc {

// Rewrites `g` in place. Returns, per op of the rewritten graph, the index of the source graph's
// op it computes (the bundle's layer op_index): the concat stands for the split linear, its
// parts for none (-1, layers the compiler added); empty when nothing was split. A linear whose
// slices of 64 channels would still not fit is left whole (packing then refuses it with the sizes).
// The parts and their tensors are named '<name>/<p>' (the op's, the weights', the bias's, the
// output's), with "'" appended where the graph already has that name.
std::vector<int32_t> SplitWideLinears(ir::Graph* g, uint64_t max_storage_buffer_range);

}  // namespace vkqc
