// Shader variants: GLSL from shaders/ (embedded at build time) compiled by shaderc with
// defines, reflected by SPIRV-Cross. Results are cached per process by (source, defines);
// the cache is guarded by a mutex, so compilation is thread-safe.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/common/result.h"

namespace vkqc {

struct ShaderReflection {
  std::vector<uint32_t> storage_buffer_bindings;  // set 0, sorted
  std::vector<uint32_t> uniform_buffer_bindings;  // set 0, sorted (small parameter blocks: the position)
  uint32_t push_constant_size = 0;                // bytes of the push-constant block (0: none)
  std::vector<uint32_t> spec_constant_ids;        // sorted
  bool uses_subgroup_arithmetic = false;
  bool uses_int_dot = false;
  bool uses_float16 = false;  // capability Float16: needs the shaderFloat16 feature
  bool uses_int8 = false;     // capability Int8: needs the shaderInt8 feature
  bool uses_storage_buffer_8bit = false;   // StorageBuffer8BitAccess: storageBuffer8BitAccess
  bool uses_cooperative_matrix_nv = false; // CooperativeMatrixNV: VK_NV_cooperative_matrix
  bool uses_cooperative_matrix_khr = false; // CooperativeMatrixKHR: VK_KHR_cooperative_matrix
  bool uses_vulkan_memory_model = false;   // VulkanMemoryModel: the vulkanMemoryModel feature
};

struct CompiledShader {
  std::string name;  // "linear_gemm.comp[VKQC_INT_DOT]"
  std::vector<uint32_t> spirv;
  uint64_t hash = 0;  // FNV-1a of the SPIR-V words
  ShaderReflection reflection;
};

Result<CompiledShader> CompileShader(const std::string& source_file,
                                     const std::vector<std::string>& defines);

// Reflect arbitrary SPIR-V (exposed for tests).
Result<ShaderReflection> ReflectSpirv(const std::vector<uint32_t>& spirv);

// SPIRV-Tools' validator (what `spirv-val --target-env vulkan1.1` checks); the error names the
// shader. CompileShader runs it on shaders it does not optimize (cooperative-matrix kernels).
Status ValidateSpirv(const std::vector<uint32_t>& spirv, const std::string& name);

}  // namespace vkqc
