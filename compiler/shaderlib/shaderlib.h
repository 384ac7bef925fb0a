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
  uint32_t push_constant_size = 0;                // bytes of the push-constant block (0: none)
  std::vector<uint32_t> spec_constant_ids;        // sorted
  bool uses_subgroup_arithmetic = false;
  bool uses_int_dot = false;
  bool uses_float16 = false;  // capability Float16: needs the shaderFloat16 feature
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

}  // namespace vkqc
