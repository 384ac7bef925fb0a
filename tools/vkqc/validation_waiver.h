// The one validation waiver, shared by the GPU tests and the CLI's --validation. Debian 12's
// Khronos validation layer (1.3.239) predates VK_KHR_cooperative_matrix (1.3.255): it reports the
// extension's feature struct as unknown, says it does not support the extension, and cannot parse
// a module that uses it, so each such module draws the same handful of messages. Those are waived,
// each by what identifies it: the unknown struct by its VkStructureType (1000506000); the rest
// only after the layer said it does not support the extension, and then: the module messages that
// name capability 6022 or SPV_KHR_cooperative_matrix or an unhandled capability, and the two
// follow-on messages of a pipeline (specialization failed, local size read as 1) only for a module
// handle the layer already reported as carrying capability 6022. Every other message, and every
// message of a layer that knows the extension, counts.
#pragma once
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

namespace vkqc::validation {

class Waiver {
 public:
  // True when `m` is one of the waived messages (it then counts in waived()).
  bool Waive(const std::string& m) {
    const bool w = Match(m);
    if (w) ++waived_;
    return w;
  }
  size_t waived() const { return waived_; }
  void ResetCount() { waived_ = 0; }

 private:
  static bool Has(const std::string& s, const char* sub) { return s.find(sub) != std::string::npos; }
  // The hex handle that follows `prefix` in `m` ("" when absent).
  static std::string HandleAfter(const std::string& m, const char* prefix) {
    const size_t at = m.find(prefix);
    if (at == std::string::npos) return "";
    const size_t b = at + std::strlen(prefix);
    size_t e = b;
    while (e < m.size() && (std::isxdigit(static_cast<unsigned char>(m[e])) || m[e] == 'x')) ++e;
    return m.substr(b, e - b);
  }
  bool Match(const std::string& m) {
    if (Has(m, "VK_KHR_cooperative_matrix is not supported by this layer")) {
      layer_lacks_khr_coopmat_ = true;
      return true;
    }
    if (Has(m, "VUID-VkDeviceCreateInfo-pNext-pNext") && Has(m, "unknown VkStructureType (1000506000)")) return true;
    if (!layer_lacks_khr_coopmat_) return false;
    if (Has(m, "Invalid capability operand: 6022")) {
      const std::string h = HandleAfter(m, "VkShaderModule ");
      if (!h.empty()) khr_modules_.push_back(h);
      return true;
    }
    if (Has(m, "(SPV_KHR_cooperative_matrix) was declared") || Has(m, "(Unhandled OpCapability) was declared"))
      return true;
    auto known = [&](const std::string& h) {
      return !h.empty() && std::find(khr_modules_.begin(), khr_modules_.end(), h) != khr_modules_.end();
    };
    if (Has(m, "attempted to apply specialization constants with spirv-opt but failed"))
      return known(HandleAfter(m, "VkShaderModule "));
    if (Has(m, "Local workgroup size x (1) is not a multiple of")) return known(HandleAfter(m, "handle = "));
    return false;
  }

  bool layer_lacks_khr_coopmat_ = false;
  std::vector<std::string> khr_modules_;  // shader-module handles reported with capability 6022
  size_t waived_ = 0;
};

}  // namespace vkqc::validation
