// GGUF tensor data -> vkqc weights. Exact conversions (DESIGN 4 / 4.1): Q4_0 -> q4gsw groups of
// 32 (fp16 scale widened, q = nibble - 8); Q8_0 -> q8gsw groups of 32 (q8csw when every block of a
// row has the same scale); Q4_1 -> q4gmw groups of 32 (s = d, m = -min); Q4_K -> q4gmw groups of 32
// (each sub-block's s = d * scale and m = dmin * min, computed in fp32 exactly as ggml does);
// F32 / F16 / BF16 -> f32 (widened). Every ggml type this file knows can also be dequantized to
// f32 exactly as ggml computes it (the block formats of the GGUF specification), which the
// importer uses for embedding tables and, when the user asks, to re-quantize (with the error
// reported).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/common/result.h"
#include "compiler/graph/gguf.h"

namespace vkqc::gguf {

float Bf16ToFloat(uint16_t h);

// Types Dequantize() accepts.
bool CanDequantize(Type t);
std::string DequantizableTypes();  // "F32, F16, BF16, Q4_0, ..."

// All elements of `t` as f32, row-major (GGUF dims[0] innermost).
Result<std::vector<float>> Dequantize(const File& f, const TensorInfo& t);

// A 2-D weight [n][k] (k = dims[0]) in a vkqc scheme: int8 bytes (q8csw, one per element) or
// packed int4 (q4gsw: element [n, 2j] in the low nibble of byte [n, j], two's complement), with
// its f32 scales ([n] or [n][k / group]).
struct ConvertedWeight {
  std::string scheme;  // "q8csw", "q8gsw", "q4gsw" or "q4gmw" (u4 nibbles, w = s * q - m)
  int32_t group_size = 0;
  std::vector<uint8_t> data;
  std::vector<float> scales;
  std::vector<float> mins;  // q4gmw: one per scale
};

// Exact conversion, or an empty scheme when the type has no exact vkqc form (the reason in `why`).
ConvertedWeight ConvertExact(const File& f, const TensorInfo& t, std::string* why);

// Round-to-nearest-even symmetric quantization of float rows: q8csw (scale = max|w| / 127 per
// row) or q4gsw with `group` (scale = max|w| / 7 per group, q clamped to [-8, 7]). Zero rows or
// groups get scale 1. `max_err` receives max |w - s*q| and `rms` the RMS of w. A NaN or infinite
// weight, w.size() != n*k, or (q4gsw) a group that is not positive or does not divide k: error.
Result<ConvertedWeight> QuantizeFloat(const std::vector<float>& w, int64_t n, int64_t k, const std::string& scheme,
                                      int32_t group, double* max_err, double* rms);

}  // namespace vkqc::gguf
