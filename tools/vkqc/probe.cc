#include "tools/vkqc/probe.h"

#include <volk.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <ctime>
#include <vector>

#include "runtime/src/coopmat_khr.h"

namespace vkqc {
namespace {

using khr::ComponentTypeName;
using khr::kScopeSubgroup;
using khr::kStypeCoopMatFeatures;
using khr::kStypeCoopMatProperties;
using CoopMatFeaturesKHR = khr::CoopMatFeatures;
using CoopMatPropertiesKHR = khr::CoopMatProperties;
using khr::PfnGetCoopMatProps;

// Instance-level entry points of our own instance; volk's globals are not touched.
struct InstanceFns {
  PFN_vkDestroyInstance DestroyInstance = nullptr;
  PFN_vkEnumeratePhysicalDevices EnumeratePhysicalDevices = nullptr;
  PFN_vkGetPhysicalDeviceProperties GetProperties = nullptr;
  PFN_vkGetPhysicalDeviceProperties2 GetProperties2 = nullptr;
  PFN_vkGetPhysicalDeviceFeatures GetFeatures = nullptr;
  PFN_vkGetPhysicalDeviceFeatures2 GetFeatures2 = nullptr;
  PFN_vkEnumerateDeviceExtensionProperties EnumerateDeviceExtensions = nullptr;
  PFN_vkGetPhysicalDeviceMemoryProperties GetMemoryProperties = nullptr;
  PfnGetCoopMatProps GetCoopMatProps = nullptr;
};

class Instance {
 public:
  ~Instance() {
    if (handle && fns.DestroyInstance) fns.DestroyInstance(handle, nullptr);
  }
  VkInstance handle = VK_NULL_HANDLE;
  uint32_t api = 0;  // VkApplicationInfo::apiVersion it was created with
  InstanceFns fns;
};

template <typename T>
T Load(VkInstance instance, const char* name) {
  return reinterpret_cast<T>(vkGetInstanceProcAddr(instance, name));
}

std::string ApiString(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

// Driver versions are vendor-encoded (as vulkaninfo and gpuinfo decode them).
std::string DriverVersionString(uint32_t vendor, uint32_t v) {
  auto s = [](uint32_t x) { return std::to_string(x); };
  if (vendor == 0x10de)
    return s((v >> 22) & 0x3ff) + "." + s((v >> 14) & 0xff) + "." + s((v >> 6) & 0xff) + "." + s(v & 0x3f);
#ifdef _WIN32
  if (vendor == 0x8086) return s(v >> 14) + "." + s(v & 0x3fff);
#endif
  return ApiString(v);
}

const char* DeviceTypeName(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

// "llvmpipe (LLVM 15.0.6, 256 bits)" -> "llvmpipe-llvm-15-0-6-256-bits".
std::string SanitizeDeviceName(const std::string& name) {
  std::string s;
  for (char ch : name) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c)) s += static_cast<char>(std::tolower(c));
    else if (!s.empty() && s.back() != '-') s += '-';
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s.empty() ? "device" : s;
}

Result<Instance*> CreateInstance(Instance& inst) {
  if (vkGetInstanceProcAddr == nullptr && volkInitialize() != VK_SUCCESS)
    return UserError("no Vulkan loader found (libvulkan.so.1 / vulkan-1.dll): install a Vulkan driver, or use a "
                     "built-in target profile (vkqc profiles)");
  uint32_t loader = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion) vkEnumerateInstanceVersion(&loader);
  // 1.3 is the newest API whose structs the probe knows; a 1.0 loader gets no *2 queries.
  uint32_t api = std::min(loader, VK_API_VERSION_1_3);

  std::vector<const char*> exts;
  VkInstanceCreateFlags flags = 0;
  uint32_t n = 0;
  vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> avail(n);
  vkEnumerateInstanceExtensionProperties(nullptr, &n, avail.data());
  for (const VkExtensionProperties& e : avail) {
    if (std::strcmp(e.extensionName, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME) == 0) {  // MoltenVK
      exts.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
      flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
    }
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "vkqc probe";
  app.apiVersion = api;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.flags = flags;
  ci.pApplicationInfo = &app;
  ci.enabledExtensionCount = static_cast<uint32_t>(exts.size());
  ci.ppEnabledExtensionNames = exts.data();
  inst.api = api;
  VkResult res = vkCreateInstance(&ci, nullptr, &inst.handle);
  if (res != VK_SUCCESS) {
    inst.handle = VK_NULL_HANDLE;
    return UserError("vkCreateInstance failed (VkResult " + std::to_string(res) +
                     "): no usable Vulkan driver (VK_DRIVER_FILES / VK_ICD_FILENAMES may point nowhere)");
  }
  InstanceFns& f = inst.fns;
  f.DestroyInstance = Load<PFN_vkDestroyInstance>(inst.handle, "vkDestroyInstance");
  f.EnumeratePhysicalDevices = Load<PFN_vkEnumeratePhysicalDevices>(inst.handle, "vkEnumeratePhysicalDevices");
  f.GetProperties = Load<PFN_vkGetPhysicalDeviceProperties>(inst.handle, "vkGetPhysicalDeviceProperties");
  f.GetFeatures = Load<PFN_vkGetPhysicalDeviceFeatures>(inst.handle, "vkGetPhysicalDeviceFeatures");
  f.EnumerateDeviceExtensions =
      Load<PFN_vkEnumerateDeviceExtensionProperties>(inst.handle, "vkEnumerateDeviceExtensionProperties");
  f.GetMemoryProperties =
      Load<PFN_vkGetPhysicalDeviceMemoryProperties>(inst.handle, "vkGetPhysicalDeviceMemoryProperties");
  if (api >= VK_API_VERSION_1_1) {
    f.GetProperties2 = Load<PFN_vkGetPhysicalDeviceProperties2>(inst.handle, "vkGetPhysicalDeviceProperties2");
    f.GetFeatures2 = Load<PFN_vkGetPhysicalDeviceFeatures2>(inst.handle, "vkGetPhysicalDeviceFeatures2");
  }
  f.GetCoopMatProps = Load<PfnGetCoopMatProps>(inst.handle, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
  if (!f.DestroyInstance || !f.EnumeratePhysicalDevices || !f.GetProperties || !f.GetFeatures ||
      !f.EnumerateDeviceExtensions || !f.GetMemoryProperties)
    return UserError("the Vulkan loader lacks core 1.0 instance functions");
  return &inst;
}

TargetProfile Describe(const Instance& inst, VkPhysicalDevice pd, ProbedDeviceFacts* facts) {
  const InstanceFns& f = inst.fns;
  TargetProfile t;
  VkPhysicalDeviceProperties props{};
  f.GetProperties(pd, &props);
  uint32_t api = std::min(props.apiVersion, inst.api);  // what this instance may use of the device

  uint32_t n = 0;
  f.EnumerateDeviceExtensions(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  f.EnumerateDeviceExtensions(pd, nullptr, &n, exts.data());
  exts.resize(n);
  for (const VkExtensionProperties& e : exts) t.extensions.push_back(e.extensionName);
  auto has = [&](const char* name) { return t.HasExtension(name); };

  const VkPhysicalDeviceLimits& l = props.limits;
  t.api_version = VK_MAKE_API_VERSION(0, VK_API_VERSION_MAJOR(props.apiVersion), VK_API_VERSION_MINOR(props.apiVersion),
                                      VK_API_VERSION_PATCH(props.apiVersion));
  t.max_compute_shared_memory_size = l.maxComputeSharedMemorySize;
  t.max_compute_work_group_invocations = l.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    t.max_compute_work_group_size[i] = l.maxComputeWorkGroupSize[i];
    t.max_compute_work_group_count[i] = l.maxComputeWorkGroupCount[i];
  }
  t.max_storage_buffer_range = l.maxStorageBufferRange;
  t.max_per_stage_descriptor_storage_buffers = l.maxPerStageDescriptorStorageBuffers;
  t.max_push_constants_size = l.maxPushConstantsSize;
  t.min_storage_buffer_offset_alignment = static_cast<uint32_t>(l.minStorageBufferOffsetAlignment);

  std::string driver_info;
  if (f.GetProperties2 && api >= VK_API_VERSION_1_1) {
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    VkPhysicalDeviceSubgroupProperties sg{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceSubgroupSizeControlProperties sgc{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
    VkPhysicalDeviceShaderIntegerDotProductProperties dot{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES};
    VkPhysicalDeviceDriverProperties drv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    void** tail = &p2.pNext;
    auto chain = [&tail](auto& s) {
      *tail = &s;
      tail = &s.pNext;
    };
    chain(sg);
    bool want_sgc = api >= VK_API_VERSION_1_3 || has(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
    bool want_dot = api >= VK_API_VERSION_1_3 || has(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
    bool want_drv = api >= VK_API_VERSION_1_2 || has(VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
    if (want_sgc) chain(sgc);
    if (want_dot) chain(dot);
    if (want_drv) chain(drv);
    f.GetProperties2(pd, &p2);
    t.subgroup_size = sg.subgroupSize;
    t.subgroup_arithmetic_compute = (sg.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) &&
                                    (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT);
    if (want_sgc) {
      t.min_subgroup_size = sgc.minSubgroupSize;
      t.max_subgroup_size = sgc.maxSubgroupSize;
      t.required_subgroup_size_compute = (sgc.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
    }
    if (want_dot) t.int_dot_4x8_packed_signed_accelerated = dot.integerDotProduct4x8BitPackedSignedAccelerated;
    if (want_drv) driver_info = std::string(drv.driverName) + ", " + drv.driverInfo;
  }

  VkPhysicalDeviceFeatures f1{};
  f.GetFeatures(pd, &f1);
  t.shader_int16 = f1.shaderInt16;
  if (f.GetFeatures2 && api >= VK_API_VERSION_1_1) {
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan13Features v13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDevice16BitStorageFeatures s16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    VkPhysicalDevice8BitStorageFeatures s8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
    VkPhysicalDeviceShaderFloat16Int8Features fi{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
    VkPhysicalDeviceSubgroupSizeControlFeatures sgc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
    VkPhysicalDeviceShaderIntegerDotProductFeatures dot{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
    CoopMatFeaturesKHR cm{kStypeCoopMatFeatures, nullptr, VK_FALSE, VK_FALSE};
    void** tail = &f2.pNext;
    auto chain = [&tail](auto& s) {
      *tail = &s;
      tail = &s.pNext;
    };
    // Core aggregates where the device has them, else the extension structs (never both).
    bool has12 = api >= VK_API_VERSION_1_2, has13 = api >= VK_API_VERSION_1_3;
    if (has12) {
      chain(v11);
      chain(v12);
    } else {
      chain(s16);
    }
    if (!has12 && has(VK_KHR_8BIT_STORAGE_EXTENSION_NAME)) chain(s8);
    if (!has12 && has(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME)) chain(fi);
    if (has13) chain(v13);
    if (!has13 && has(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME)) chain(sgc);
    if (!has13 && has(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME)) chain(dot);
    if (has("VK_KHR_cooperative_matrix")) chain(cm);
    f.GetFeatures2(pd, &f2);
    t.storage_buffer_16bit_access = has12 ? v11.storageBuffer16BitAccess : s16.storageBuffer16BitAccess;
    t.storage_buffer_8bit_access = has12 ? v12.storageBuffer8BitAccess : s8.storageBuffer8BitAccess;
    t.shader_int8 = has12 ? v12.shaderInt8 : fi.shaderInt8;
    t.shader_float16 = has12 ? v12.shaderFloat16 : fi.shaderFloat16;
    t.subgroup_size_control = has13 ? v13.subgroupSizeControl : sgc.subgroupSizeControl;
    t.compute_full_subgroups = has13 ? v13.computeFullSubgroups : sgc.computeFullSubgroups;
    t.shader_integer_dot_product = has13 ? v13.shaderIntegerDotProduct : dot.shaderIntegerDotProduct;
    t.cooperative_matrix = cm.cooperativeMatrix;
  }

  if (t.cooperative_matrix && f.GetCoopMatProps) {
    uint32_t count = 0;
    if (f.GetCoopMatProps(pd, &count, nullptr) == VK_SUCCESS && count > 0) {
      std::vector<CoopMatPropertiesKHR> shapes(count, CoopMatPropertiesKHR{kStypeCoopMatProperties});
      if (f.GetCoopMatProps(pd, &count, shapes.data()) >= VK_SUCCESS) {
        shapes.resize(count);
        for (const CoopMatPropertiesKHR& s : shapes) {
          const char* a = ComponentTypeName(s.AType);
          const char* b = ComponentTypeName(s.BType);
          const char* c = ComponentTypeName(s.CType);
          const char* r = ComponentTypeName(s.ResultType);
          if (s.scope != kScopeSubgroup || s.saturatingAccumulation || !a || !b || !c || !r) continue;
          t.coopmat_shapes.push_back({s.MSize, s.NSize, s.KSize, a, b, c, r});
        }
      }
    }
  }

  t.name = SanitizeDeviceName(props.deviceName);
  t.label = std::string(props.deviceName) + " driver " + DriverVersionString(props.vendorID, props.driverVersion);
  if (!driver_info.empty()) t.label += " (" + driver_info + ")";
  t.source = "vkqc probe " + TodayUtc();
  // A CPU implementation (lavapipe, SwiftShader): the compiler keeps the conservative kernel forms
  // there (profiles/README.md, quirks).
  if (props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) t.quirks.push_back("cpu_device");
  if (facts) {
    facts->device_name = props.deviceName;
    facts->driver = driver_info.empty() ? DriverVersionString(props.vendorID, props.driverVersion) : driver_info;
    facts->is_cpu = props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    facts->type = DeviceTypeName(props.deviceType);
    VkPhysicalDeviceMemoryProperties mem{};
    f.GetMemoryProperties(pd, &mem);
    for (uint32_t i = 0; i < mem.memoryHeapCount; ++i)
      if (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
        facts->device_local_heap_bytes = std::max<uint64_t>(facts->device_local_heap_bytes, mem.memoryHeaps[i].size);
  }
  if (t.min_subgroup_size != 0 && t.min_subgroup_size == t.max_subgroup_size)
    t.tuned_subgroup_size = t.min_subgroup_size;
  return t;
}

}  // namespace

std::string TodayUtc() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

Result<TargetProfile> ProbeLocalDevice(int device_index, std::string* out_device_list_for_errors,
                                       ProbedDeviceFacts* out_facts) {
  Instance inst;
  VKQC_TRY(CreateInstance(inst));
  const InstanceFns& f = inst.fns;
  uint32_t count = 0;
  VkResult res = f.EnumeratePhysicalDevices(inst.handle, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  if (res == VK_SUCCESS && count > 0) res = f.EnumeratePhysicalDevices(inst.handle, &count, devices.data());
  if (res < VK_SUCCESS || count == 0)
    return UserError("no Vulkan device found (vkEnumeratePhysicalDevices returned " + std::to_string(count) +
                     " devices, VkResult " + std::to_string(res) + "): install a Vulkan driver for your GPU, or "
                     "use a built-in target profile (vkqc profiles)");
  devices.resize(count);

  std::string list;
  for (uint32_t i = 0; i < count; ++i) {
    VkPhysicalDeviceProperties p{};
    f.GetProperties(devices[i], &p);
    list += std::to_string(i) + ": " + p.deviceName + " (" + DeviceTypeName(p.deviceType) + ", Vulkan " +
            ApiString(p.apiVersion) + ")\n";
  }
  if (out_device_list_for_errors) *out_device_list_for_errors = list;
  if (device_index < -1 || device_index >= static_cast<int>(count))
    return UserError("device index " + std::to_string(device_index) + " is out of range; devices:\n" + list);
  return Describe(inst, devices[device_index < 0 ? 0 : device_index], out_facts);
}

}  // namespace vkqc
