// quantize / dequantize lowering (kernels/lowering.h): the requantize left by the fold pass,
// convert.comp for f16 / i32 / per-channel conversions, and the f32 <-> int8 per-tensor and
// per-token kernels (quantize_*.comp, dequantize through conv::DequantizeDispatch).
#pragma once
#include "compiler/kernels/lowering.h"

namespace vkqc::quantize {
const kernels::Family& Lowering();
// A row kernel: shaders/quantize_dq8ca.comp with row ops in front (`row_ops`: VKQC_ROW_ADD,
// VKQC_ROW_NORM, VKQC_ROW_SWIGLU; bindings X, [B], [W], [S], [Y], [Q, P]), quantizing the row per
// token (dq8ca) unless !quant. One workgroup per row of k values.
linear::DispatchParams RowDispatch(std::vector<std::string> row_ops, bool quant, int64_t m, int64_t k, float eps,
                                   const TargetProfile& p);
}  // namespace vkqc::quantize
