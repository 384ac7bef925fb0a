// `vkqc probe`: the local Vulkan device as a TargetProfile (DESIGN 2.2), written out with
// WriteProfileJson. Uses volk; creates and destroys its own VkInstance, and leaves volk's global
// instance/device function pointers as they were (it loads its own through vkGetInstanceProcAddr).
// Not thread-safe with other code that initializes volk at the same time.
#pragma once
#include <string>

#include "compiler/common/result.h"
#include "compiler/profile/profile.h"

namespace vkqc {

// device_index: index into vkEnumeratePhysicalDevices order; -1 = the first device.
// out_device_list_for_errors (optional) receives one line per device ("0: name (type, Vulkan x.y.z)")
// whenever devices could be enumerated, so a caller can show the choices.
// Errors (UserError): no Vulkan loader, no device, index out of range (the message lists devices).
// Cooperative-matrix shapes are those of subgroup scope without saturating accumulation.
Result<TargetProfile> ProbeLocalDevice(int device_index, std::string* out_device_list_for_errors = nullptr);

}  // namespace vkqc
