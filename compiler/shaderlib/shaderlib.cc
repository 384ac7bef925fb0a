#include "compiler/shaderlib/shaderlib.h"

#include <shaderc/shaderc.hpp>
#include <spirv_cross/spirv_cross.hpp>

#include <algorithm>
#include <map>
#include <mutex>

#include "compiler/common/embedded.h"

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

}  // namespace

Result<ShaderReflection> ReflectSpirv(const std::vector<uint32_t>& spirv) {
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
    if (!res.uniform_buffers.empty() || !res.sampled_images.empty() || !res.storage_images.empty())
      return InternalError("shader uses descriptor types other than storage buffers");
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
    }
    return r;
  } catch (const std::exception& e) {
    return InternalError(std::string("SPIRV-Cross reflection failed: ") + e.what());
  }
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

  shaderc::Compiler compiler;
  shaderc::CompileOptions opts;
  opts.SetTargetEnvironment(shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_1);
  opts.SetOptimizationLevel(shaderc_optimization_level_performance);
  opts.SetIncluder(std::make_unique<EmbeddedIncluder>());
  for (const auto& d : defines) opts.AddMacroDefinition(d);
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
  VKQC_ASSIGN_OR_RETURN(out.reflection, ReflectSpirv(out.spirv));
  std::lock_guard<std::mutex> lock(mu);
  cache.emplace(key, out);
  return out;
}

}  // namespace vkqc
