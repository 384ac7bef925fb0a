// SPIR-V validation of untrusted bundles (vkqc_context_options.validate_spirv): SPIRV-Tools'
// validator where the runtime is built with it (the full build's static runtime); the shared
// library and the runtime-only build leave it out (it would multiply their size) and say so.
#include <string>

#include "internal.h"

#ifdef VKQC_RUNTIME_SPIRV_TOOLS
#include <spirv-tools/libspirv.hpp>
#endif

namespace vkqc::rt {

#ifdef VKQC_RUNTIME_SPIRV_TOOLS
bool SpirvValidatorAvailable() { return true; }

bool ValidateSpirvModule(const uint32_t* words, size_t count, std::string* why) {
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_1);
  std::string first;
  tools.SetMessageConsumer([&](spv_message_level_t, const char*, const spv_position_t& pos, const char* m) {
    if (first.empty()) first = "word " + std::to_string(pos.index) + ": " + m;
  });
  if (tools.Validate(words, count)) return true;
  *why = first.empty() ? std::string("rejected by the validator") : first;
  if (why->size() > 300) why->resize(300);
  return false;
}
#else
bool SpirvValidatorAvailable() { return false; }

bool ValidateSpirvModule(const uint32_t*, size_t, std::string* why) {
  *why = "this runtime was built without SPIRV-Tools";
  return false;
}
#endif

}  // namespace vkqc::rt
