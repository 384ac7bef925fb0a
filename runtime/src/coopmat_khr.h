// VK_KHR_cooperative_matrix declarations (Vulkan header 1.3.255) for builds against the 1.3.239
// headers of Debian 12: structure-type and enum values as the specification defines them. Used
// by the runtime (enabling the feature, checking a bundle's shapes) and by `vkqc probe`.
#pragma once
#include <vulkan/vulkan_core.h>

#include <cstdint>

namespace vkqc::khr {

constexpr VkStructureType kStypeCoopMatFeatures = static_cast<VkStructureType>(1000506000);
constexpr VkStructureType kStypeCoopMatProperties = static_cast<VkStructureType>(1000506001);
constexpr const char* kCoopMatExtension = "VK_KHR_cooperative_matrix";
constexpr int32_t kScopeSubgroup = 3;  // VK_SCOPE_SUBGROUP_KHR

struct CoopMatFeatures {
  VkStructureType sType;
  void* pNext;
  VkBool32 cooperativeMatrix;
  VkBool32 cooperativeMatrixRobustBufferAccess;
};
struct CoopMatProperties {
  VkStructureType sType;
  void* pNext;
  uint32_t MSize, NSize, KSize;
  int32_t AType, BType, CType, ResultType;  // VkComponentTypeKHR
  VkBool32 saturatingAccumulation;
  int32_t scope;  // VkScopeKHR
};
using PfnGetCoopMatProps = VkResult(VKAPI_PTR*)(VkPhysicalDevice, uint32_t*, CoopMatProperties*);

// VkComponentTypeKHR name as profiles spell it; null for values vkqc does not know.
inline const char* ComponentTypeName(int64_t t) {
  switch (t) {
    case 0: return "float16";
    case 1: return "float32";
    case 2: return "float64";
    case 3: return "sint8";
    case 4: return "sint16";
    case 5: return "sint32";
    case 6: return "sint64";
    case 7: return "uint8";
    case 8: return "uint16";
    case 9: return "uint32";
    case 10: return "uint64";
    case 1000141000: return "bfloat16";
    case 1000491002: return "float8_e4m3";
    case 1000491003: return "float8_e5m2";
    default: return nullptr;
  }
}

}  // namespace vkqc::khr
