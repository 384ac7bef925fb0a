// Gate/up pairs: the two linears of a gated MLP, mul(silu(gate(x)), up(x)), run as one linear of
// 2N channels whose weights interleave theirs (channel 2j = gate's j, 2j + 1 = up's j; scales,
// zero points, minimums and bias likewise), so one dispatch reads x once for both, and every
// output pair sits in one GEMV workgroup: the GEMV writes silu(gate) * up in its epilogue
// (VKQC_OUT_PAIRS), other kernels write the 2N interleaved outputs for the mul's row kernel
// (VKQC_ROW_PAIRS). The weights are packed once in that order and shared by every program.
#pragma once
#include <cstdint>

#include "compiler/graph/ir.h"
#include "compiler/kernels/linear/linear.h"

namespace vkqc::linear {

// Whether `gate` and `up` can run as one linear: both read the same input with the same
// attributes (no fused activation, float output), constant weights of one scheme, shape and group
// size, both with or without bias, outputs of one shape that are not graph outputs, and the pair's
// packed weights within `max_range` bytes (one binding).
bool CanPair(const ir::Graph& g, const ir::Op& gate, const ir::Op& up, uint64_t max_range);

// The pair's weights packed as one linear of 2N channels (PackLinear's layout).
PackedLinear PackPair(const ir::Graph& g, const ir::Op& gate, const ir::Op& up);

}  // namespace vkqc::linear
