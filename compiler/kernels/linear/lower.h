// Linear family lowering (kernels/lowering.h): pack once, per program quantize + GEMM/GEMV.
#pragma once
#include <string>

#include "compiler/kernels/linear/linear.h"
#include "compiler/kernels/lowering.h"

namespace vkqc::linear {

const kernels::Family& Lowering();
// The shape of a linear op in this program (x [.., K] rows flattened to M).
LinearShape ShapeOf(const kernels::LowerContext& ctx, const ir::Op& op);
// True when `tensor` (f32) is read only by linear ops that quantize it per token (dq8ca) on the
// integer path in this program: a row kernel that produces it may quantize it for them.
bool ConsumersQuantizePerToken(const kernels::LowerContext& ctx, int tensor);
// Whether linear op `i` would quantize its f32 input row in its GEMV prologue in this program
// (one row, dq8ca, int-dot GEMV, K a multiple of 4, the packed row fits shared memory) when that
// prologue reads `rows` rows of K floats per workgroup (1: the row; 2: an rms_norm's input and
// weight; 3: and a residual add's second operand; 2 also: silu·mul's operands) within
// SelectOptions::prologue_max_bytes over all workgroups, or `default_limit` where none is given,
// and the dispatch binds `buffers` storage buffers.
bool TakesRowPrologue(const kernels::LowerContext& ctx, size_t i, uint32_t rows, uint32_t buffers,
                      uint64_t default_limit = kPrologueBytes);
// Tiles, workgroup, shared memory and grid of a choice, for `vkqc inspect`.
std::string ChoiceDetail(const LinearShape& shape, const LinearChoice& choice, const DispatchParams& d);

}  // namespace vkqc::linear
