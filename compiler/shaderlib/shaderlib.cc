#include "compiler/shaderlib/shaderlib.h"

#include <shaderc/shaderc.hpp>
#include <spirv-tools/libspirv.hpp>
#include <spirv_cross/spirv_cross.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>

#include "compiler/common/embedded.h"
#include "compiler/common/log.h"
#include "compiler/shaderlib/coopmat_khr.h"

namespace vkqc {
namespace {

const EmbeddedFile* FindShaderSource(const std::string& name) {
  for (size_t i = 0; i < vkqc_embedded_shaders_count; ++i)
    if (name == vkqc_embedded_shaders[i].name) return &vkqc_embedded_shaders[i];
  return nullptr;
}

// Resolves #include "x.glslh" against the embedded shaders/ files.
class EmbeddedIncluder : public shaderc::CompileOptions::IncluderInterface {
 public:
  shaderc_include_result* GetInclude(const char* requested, shaderc_include_type,
                                     const char*, size_t) override {
    auto* r = new shaderc_include_result{};
    auto* name = new std::string(requested);
    const EmbeddedFile* f = FindShaderSource(*name);
    static const char kMissing[] = "include not found among the embedded shaders";
    r->source_name = name->c_str();
    r->source_name_length = f ? name->size() : 0;
    r->content = f ? f->data : kMissing;
    r->content_length = f ? f->size : sizeof(kMissing) - 1;
    r->user_data = name;
    return r;
  }
  void ReleaseInclude(shaderc_include_result* r) override {
    delete static_cast<std::string*>(r->user_data);
    delete r;
  }
};

uint64_t HashWords(const std::vector<uint32_t>& w) {
  uint64_t h = 14695981039346656037ull;
  const auto* p = reinterpret_cast<const uint8_t*>(w.data());
  for (size_t i = 0; i < w.size() * 4; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

bool DeclaresCapability(const std::vector<uint32_t>& spirv, uint32_t cap) {
  for (size_t i = 5; i < spirv.size();) {
    const uint32_t n = spirv[i] >> 16, op = spirv[i] & 0xFFFF;
    if (n == 0) break;
    if (op == 17 && i + 1 < spirv.size() && spirv[i + 1] == cap) return true;  // OpCapability
    if (op != 17 && op != 11 && op != 10) break;  // capabilities precede everything else but imports
    i += n;
  }
  return false;
}

// The subset of reflection vkqc needs, read straight from the instruction stream: this
// toolchain's SPIRV-Cross cannot parse OpTypeCooperativeMatrixNV, so cooperative-matrix kernels
// are reflected here. Covers what vkqc shaders declare: storage buffers in set 0, one
// push-constant block of scalars and vectors, specialization constants, capabilities.
Result<ShaderReflection> ReflectSpirvDirect(const std::vector<uint32_t>& w) {
  ShaderReflection r;
  if (w.size() < 5 || w[0] != 0x07230203u) return InternalError("not SPIR-V");
  std::map<uint32_t, uint32_t> binding, set, bytes;              // by id
  std::map<uint32_t, std::pair<uint32_t, uint32_t>> pointer;     // id -> (storage class, pointee)
  std::map<uint32_t, std::vector<uint32_t>> members;             // struct id -> member type ids
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> offsets;     // (struct, member) -> offset
  std::vector<std::pair<uint32_t, uint32_t>> variables;          // (pointer type, id)
  for (size_t i = 5; i < w.size();) {
    const uint32_t n = w[i] >> 16, op = w[i] & 0xFFFF;
    if (n == 0 || i + n > w.size()) return InternalError("malformed SPIR-V instruction stream");
    const uint32_t* a = &w[i + 1];
    switch (op) {
      case 17:  // OpCapability
        if (a[0] == spv::CapabilityGroupNonUniformArithmetic) r.uses_subgroup_arithmetic = true;
        if (a[0] == 6019) r.uses_int_dot = true;
        if (a[0] == spv::CapabilityFloat16) r.uses_float16 = true;
        if (a[0] == spv::CapabilityInt8) r.uses_int8 = true;
        if (a[0] == 4448) r.uses_storage_buffer_8bit = true;
        if (a[0] == 5357) r.uses_cooperative_matrix_nv = true;
        if (a[0] == 5345) r.uses_vulkan_memory_model = true;
        break;
      case 71:  // OpDecorate target decoration literals
        if (n >= 4 && a[1] == 33) binding[a[0]] = a[2];
        if (n >= 4 && a[1] == 34) set[a[0]] = a[2];
        if (n >= 4 && a[1] == 1) r.spec_constant_ids.push_back(a[2]);
        break;
      case 72:  // OpMemberDecorate struct member Offset
        if (n >= 5 && a[2] == 35) offsets[{a[0], a[1]}] = a[3];
        break;
      case 21: case 22:  // OpTypeInt / OpTypeFloat: id width
        bytes[a[0]] = a[1] / 8;
        break;
      case 23:  // OpTypeVector id component count
        bytes[a[0]] = bytes[a[1]] * a[2];
        break;
      case 30:  // OpTypeStruct
        members[a[0]].assign(a + 1, a + n - 1);
        break;
      case 32:  // OpTypePointer id storage-class type
        pointer[a[0]] = {a[1], a[2]};
        break;
      case 59:  // OpVariable type id storage-class
        variables.push_back({a[0], a[1]});
        break;
      default:
        break;
    }
    i += n;
  }
  for (const auto& [type, id] : variables) {
    const auto& [sc, pointee] = pointer[type];
    if (sc == 12) {  // StorageBuffer
      if (set[id] != 0) return InternalError("shader uses a descriptor set other than 0");
      r.storage_buffer_bindings.push_back(binding[id]);
    } else if (sc == 9) {  // PushConstant: the end of its last member
      for (uint32_t m = 0; m < members[pointee].size(); ++m) {
        const uint32_t b = bytes[members[pointee][m]];
        if (b == 0) return InternalError("push-constant member of a type the direct reflection does not size");
        r.push_constant_size = std::max(r.push_constant_size, offsets[{pointee, m}] + b);
      }
    } else if (sc == 2) {  // Uniform: a uniform buffer block
      if (set[id] != 0) return InternalError("shader uses a descriptor set other than 0");
      r.uniform_buffer_bindings.push_back(binding[id]);
    } else if (sc == 0) {  // UniformConstant
      return InternalError("shader uses descriptor types other than storage and uniform buffers");
    }
  }
  // Two views of one buffer (e.g. float and vec4) share a binding: one descriptor.
  std::sort(r.storage_buffer_bindings.begin(), r.storage_buffer_bindings.end());
  r.storage_buffer_bindings.erase(std::unique(r.storage_buffer_bindings.begin(), r.storage_buffer_bindings.end()),
                                  r.storage_buffer_bindings.end());
  std::sort(r.spec_constant_ids.begin(), r.spec_constant_ids.end());
  return r;
}

}  // namespace

Result<ShaderReflection> ReflectSpirv(const std::vector<uint32_t>& spirv) {
  if (DeclaresCapability(spirv, 5357)) return ReflectSpirvDirect(spirv);  // CooperativeMatrixNV
  // SPIRV-Cross reports malformed input by exception; this is the one place we translate it.
  try {
    spirv_cross::Compiler comp(spirv);
    ShaderReflection r;
    const auto res = comp.get_shader_resources();
    for (const auto& b : res.storage_buffers) {
      if (comp.get_decoration(b.id, spv::DecorationDescriptorSet) != 0)
        return InternalError("shader uses a descriptor set other than 0");
      r.storage_buffer_bindings.push_back(comp.get_decoration(b.id, spv::DecorationBinding));
    }
    std::sort(r.storage_buffer_bindings.begin(), r.storage_buffer_bindings.end());
    r.storage_buffer_bindings.erase(std::unique(r.storage_buffer_bindings.begin(), r.storage_buffer_bindings.end()),
                                    r.storage_buffer_bindings.end());
    for (const auto& b : res.uniform_buffers) {
      if (comp.get_decoration(b.id, spv::DecorationDescriptorSet) != 0)
        return InternalError("shader uses a descriptor set other than 0");
      r.uniform_buffer_bindings.push_back(comp.get_decoration(b.id, spv::DecorationBinding));
    }
    std::sort(r.uniform_buffer_bindings.begin(), r.uniform_buffer_bindings.end());
    if (!res.sampled_images.empty() || !res.storage_images.empty())
      return InternalError("shader uses descriptor types other than storage and uniform buffers");
    for (const auto& pc : res.push_constant_buffers) {
      const auto& type = comp.get_type(pc.base_type_id);
      r.push_constant_size = uint32_t(comp.get_declared_struct_size(type));
    }
    for (const auto& sc : comp.get_specialization_constants()) r.spec_constant_ids.push_back(sc.constant_id);
    std::sort(r.spec_constant_ids.begin(), r.spec_constant_ids.end());
    for (auto cap : comp.get_declared_capabilities()) {
      if (cap == spv::CapabilityGroupNonUniformArithmetic) r.uses_subgroup_arithmetic = true;
      if (uint32_t(cap) == 6019) r.uses_int_dot = true;  // DotProduct (KHR)
      if (cap == spv::CapabilityFloat16) r.uses_float16 = true;
      if (cap == spv::CapabilityInt8) r.uses_int8 = true;
      if (uint32_t(cap) == 4448) r.uses_storage_buffer_8bit = true;     // StorageBuffer8BitAccess
      if (uint32_t(cap) == 5357) r.uses_cooperative_matrix_nv = true;   // CooperativeMatrixNV
      if (uint32_t(cap) == 5345) r.uses_vulkan_memory_model = true;     // VulkanMemoryModel
    }
    return r;
  } catch (const std::exception& e) {
    return InternalError(std::string("SPIRV-Cross reflection failed: ") + e.what());
  }
}

Status ValidateSpirv(const std::vector<uint32_t>& spirv, const std::string& name) {
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_1);
  std::string messages;
  tools.SetMessageConsumer([&](spv_message_level_t, const char*, const spv_position_t& pos, const char* m) {
    messages += "\n  word " + std::to_string(pos.index) + ": " + m;
  });
  if (!tools.Validate(spirv.data(), spirv.size()))
    return InternalError("SPIR-V of " + name + " fails validation:" + messages);
  return {};
}

Result<CompiledShader> CompileShader(const std::string& source_file,
                                     const std::vector<std::string>& defines) {
  static std::mutex mu;
  static std::map<std::string, CompiledShader> cache;
  std::string key = source_file;
  for (const auto& d : defines) key += "|" + d;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  const EmbeddedFile* src = FindShaderSource(source_file);
  if (!src) return InternalError("shader source '" + source_file + "' is not embedded");
  const auto t0 = std::chrono::steady_clock::now();

  shaderc::Compiler compiler;
  shaderc::CompileOptions opts;
  opts.SetTargetEnvironment(shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_1);
  // spirv-opt of this toolchain (SPIRV-Tools 2022.4) crashes on cooperative-matrix arithmetic;
  // those kernels go to the driver unoptimized (it optimizes anyway) and are validated instead.
  const bool optimize = source_file.find("coopmat") == std::string::npos;
  opts.SetOptimizationLevel(optimize ? shaderc_optimization_level_performance : shaderc_optimization_level_zero);
  opts.SetIncluder(std::make_unique<EmbeddedIncluder>());
  for (const auto& d : defines) {  // NAME or NAME=VALUE
    const size_t eq = d.find('=');
    if (eq == std::string::npos) opts.AddMacroDefinition(d);
    else opts.AddMacroDefinition(d.substr(0, eq), d.substr(eq + 1));
  }
  auto res = compiler.CompileGlslToSpv(src->data, src->size, shaderc_compute_shader,
                                       source_file.c_str(), "main", opts);
  if (res.GetCompilationStatus() != shaderc_compilation_status_success)
    return InternalError("shaderc failed on " + key + ": " + res.GetErrorMessage());

  CompiledShader out;
  out.name = source_file;
  if (!defines.empty()) {
    out.name += "[";
    for (size_t i = 0; i < defines.size(); ++i) out.name += (i ? "," : "") + defines[i];
    out.name += "]";
  }
  out.spirv.assign(res.cbegin(), res.cend());
  out.hash = HashWords(out.spirv);
  if (!optimize) VKQC_TRY(ValidateSpirv(out.spirv, out.name));
  VKQC_ASSIGN_OR_RETURN(out.reflection, ReflectSpirv(out.spirv));
  // VKQC_CM_KHR: the NV module, validated and reflected above (this toolchain's SPIRV-Tools and
  // SPIRV-Cross predate SPV_KHR_cooperative_matrix), is translated to the KHR extension.
  if (std::find(defines.begin(), defines.end(), "VKQC_CM_KHR") != defines.end()) {
    if (!out.reflection.uses_cooperative_matrix_nv)
      return InternalError(out.name + ": VKQC_CM_KHR on a shader without cooperative matrices");
    VKQC_ASSIGN_OR_RETURN(out.spirv, CoopMatNvToKhr(out.spirv));
    out.hash = HashWords(out.spirv);
    out.reflection.uses_cooperative_matrix_nv = false;
    out.reflection.uses_cooperative_matrix_khr = true;
  }
  if (log::Enabled(log::Level::Debug)) {
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    log::Debug("compiled shader " + out.name + ": " + std::to_string(out.spirv.size() * 4) + " bytes of SPIR-V in " +
               std::to_string(int64_t(ms)) + " ms" + (optimize ? "" : " (unoptimized, validated)"));
  }
  std::lock_guard<std::mutex> lock(mu);
  cache.emplace(key, out);
  return out;
}

}  // namespace vkqc
