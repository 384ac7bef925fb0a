// `vkqc probe`: the local Vulkan device as a TargetProfile (DESIGN 2.2), written out with
// WriteProfileJson. Uses volk; creates and destroys its own VkInstance, and leaves volk's global
// instance/device function pointers as they were (it loads its own through vkGetInstanceProcAddr).
// Not thread-safe with other code that initializes volk at the same time.
#pragma once
#include <string>

#include "compiler/common/result.h"
#include "compiler/profile/profile.h"

namespace vkqc {

// What `vkqc roofline` needs beyond the profile: how to size its buffers and what to call the device.
struct ProbedDeviceFacts {
  std::string device_name;         // VkPhysicalDeviceProperties::deviceName
  std::string driver;              // "driverName, driverInfo" (VK_KHR_driver_properties), else the decoded driverVersion
  bool is_cpu = false;             // VK_PHYSICAL_DEVICE_TYPE_CPU (lavapipe, SwiftShader)
  std::string type;                // "discrete", "integrated", "virtual", "cpu", "other"
  uint64_t device_local_heap_bytes = 0;  // the largest DEVICE_LOCAL memory heap
};

// Today's date (UTC) as YYYY-MM-DD: what probe and roofline stamp their results with.
std::string TodayUtc();

// device_index: index into vkEnumeratePhysicalDevices order; -1 = the first device.
// out_device_list_for_errors (optional) receives one line per device ("0: name (type, Vulkan x.y.z)")
// whenever devices could be enumerated, so a caller can show the choices.
// Errors (UserError): no Vulkan loader, no device, index out of range (the message lists devices).
// Cooperative-matrix shapes are those of subgroup scope without saturating accumulation.
// out_facts (optional) receives the device's ProbedDeviceFacts.
Result<TargetProfile> ProbeLocalDevice(int device_index, std::string* out_device_list_for_errors = nullptr,
                                       ProbedDeviceFacts* out_facts = nullptr);

}  // namespace vkqc
