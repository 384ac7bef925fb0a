// SPV_NV_cooperative_matrix -> SPV_KHR_cooperative_matrix, on the SPIR-V words.
//
// Debian 12's glslang (11.13) emits only the NV extension, and NVIDIA's driver lists integer
// types only for the KHR one, so vkqc writes its cooperative-matrix kernels against the NV GLSL
// extension and translates the module (the instructions map one to one):
//   OpCapability CooperativeMatrixNV (5357)       -> CooperativeMatrixKHR (6022)
//   OpExtension "SPV_NV_cooperative_matrix"       -> "SPV_KHR_cooperative_matrix"
//   OpTypeCooperativeMatrixNV (5358) T S R C      -> OpTypeCooperativeMatrixKHR (4456) T S R C Use
//   OpCooperativeMatrixLoadNV (5359) P Stride Col -> OpCooperativeMatrixLoadKHR (4457) P Layout Stride
//   OpCooperativeMatrixStoreNV (5360) P O S Col   -> OpCooperativeMatrixStoreKHR (4458) P O Layout S
//   OpCooperativeMatrixMulAddNV (5361) A B C      -> OpCooperativeMatrixMulAddKHR (4459) A B C Operands
//   OpCooperativeMatrixLengthNV (5362)            -> OpCooperativeMatrixLengthKHR (4460)
// Each matrix type's Use (MatrixA, MatrixB, Accumulator) comes from where MulAdd takes it; a type
// MulAdd never takes is an Accumulator. A type taken as two different uses is an error (declare
// A and B with different row/column constants: glslang keys types by those ids). The column-major
// flags must be OpConstantTrue/False; MulAdd's signedness operands come from the OpTypeInt
// signedness of each matrix's component type (KHR reads components as unsigned without them).
// Stride units and memory-access operands are the same in both extensions.
#pragma once
#include <cstdint>
#include <vector>

#include "compiler/common/result.h"

namespace vkqc {

Result<std::vector<uint32_t>> CoopMatNvToKhr(const std::vector<uint32_t>& nv);

}  // namespace vkqc
