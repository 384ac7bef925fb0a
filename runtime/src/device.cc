// Instance, device and queue: created here or adopted from the app (vkqc_external_device).
#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "internal.h"
#include "coopmat_khr.h"

namespace vkqc::rt {

Err VkFail(VkResult r, const char* what) {
  if (r == VK_ERROR_DEVICE_LOST) return Fail(VKQC_ERROR_DEVICE_LOST, std::string(what) + ": device lost");
  if (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY)
    return Fail(VKQC_ERROR_OUT_OF_MEMORY, std::string(what) + ": out of memory (VkResult " + std::to_string(r) + ")");
  return Fail(VKQC_ERROR_VULKAN, std::string(what) + " failed (VkResult " + std::to_string(r) + ")");
}

namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL OnDebugMessage(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                              VkDebugUtilsMessageTypeFlagsEXT,
                                              const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* ctx = static_cast<vkqc_context_t*>(user);
  const vkqc_log_level level =
      severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT ? VKQC_LOG_VALIDATION : VKQC_LOG_DEBUG;
  ctx->Log(level, data && data->pMessage ? data->pMessage : "(no message)");
  return VK_FALSE;
}

// volk keeps Vulkan's entry points in process-wide pointers. They are loaded once per process:
// the loader's own at the first context, the rest from the first instance a context creates or
// adopts through vkGetInstanceProcAddr (volkLoadInstance), whose trampolines dispatch on the
// handle they are called with and so serve every instance and device of the process, with each
// one's own layers. Loading them again per context, as before, wrote those pointers while other
// threads' contexts called through them (a data race ThreadSanitizer reported, tests/threads), and
// volkLoadDevice pointed every context at the last-created device's dispatch.
VkResult LoadVulkanLoader() {
  static const VkResult r = volkInitialize();  // thread-safe initialization, once
  return r;
}
void LoadVulkanEntryPoints(VkInstance instance) {
  static std::once_flag once;
  std::call_once(once, [instance] { volkLoadInstance(instance); });
}

// NVIDIA's driver (580 on the H100) refuses vkCreateInstance with VK_ERROR_INCOMPATIBLE_DRIVER after
// about 30 instances were created and destroyed in one process (tests/gpu/mutant_test.cc,
// Mutants.FortyContextsInOneProcess), whoever destroys them properly. Contexts without allocation
// callbacks therefore share one instance per validation setting, created by the first such context
// and kept until the process exits (each context still creates and destroys its own device and
// debug messenger). With allocation callbacks a context creates and destroys its own instance: the
// instance's allocations must go through that context's callbacks.
std::mutex g_instance_mu;
VkInstance g_shared_instance[2] = {};  // [enable_validation]

bool HasLayer(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> props(n);
  vkEnumerateInstanceLayerProperties(&n, props.data());
  for (const auto& p : props)
    if (std::strcmp(p.layerName, name) == 0) return true;
  return false;
}

bool HasInstanceExtension(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> props(n);
  vkEnumerateInstanceExtensionProperties(nullptr, &n, props.data());
  for (const auto& p : props)
    if (std::strcmp(p.extensionName, name) == 0) return true;
  return false;
}

bool Has(const std::vector<std::string>& v, const char* s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Features vkqc bundles may use; filled with what the device supports, then enabled as is.
struct FeatureChain {
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceShaderFloat16Int8Features f16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDeviceVulkan13Features v13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceSubgroupSizeControlFeatures sgc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  VkPhysicalDeviceShaderIntegerDotProductFeatures idp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
  VkPhysicalDevice8BitStorageFeatures s8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV cmnv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  khr::CoopMatFeatures cmkhr{khr::kStypeCoopMatFeatures, nullptr, VK_FALSE, VK_FALSE};
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pexe{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};

  // Core aggregates where the API version has them (Vulkan12 from 1.2, Vulkan13 from 1.3);
  // otherwise the extension structs when present (never both: the spec forbids it).
  void Link(uint32_t api, const std::vector<std::string>& exts) {
    void** next = &f2.pNext;
    if (api >= VK_API_VERSION_1_2) {
      *next = &v12;
      next = &v12.pNext;
    } else {
      if (Has(exts, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME)) { *next = &f16; next = &f16.pNext; }
      if (Has(exts, VK_KHR_8BIT_STORAGE_EXTENSION_NAME)) { *next = &s8; next = &s8.pNext; }
    }
    if (Has(exts, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME)) {
      *next = &cmnv;
      next = &cmnv.pNext;
    }
    if (Has(exts, khr::kCoopMatExtension)) {
      *next = &cmkhr;
      next = &cmkhr.pNext;
    }
    if (Has(exts, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) {
      *next = &pexe;
      next = &pexe.pNext;
    }
    if (api >= VK_API_VERSION_1_3) {
      *next = &v13;
      next = &v13.pNext;
    } else {
      if (Has(exts, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME)) { *next = &sgc; next = &sgc.pNext; }
      if (Has(exts, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME)) { *next = &idp; next = &idp.pNext; }
    }
  }
  // Keep only what vkqc uses, so enabling them costs nothing elsewhere.
  void Trim() {
    const VkPhysicalDeviceFeatures all = f2.features;
    f2.features = VkPhysicalDeviceFeatures{};
    f2.features.shaderInt16 = all.shaderInt16;
    const VkPhysicalDeviceVulkan12Features a12 = v12;
    v12 = VkPhysicalDeviceVulkan12Features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, v12.pNext};
    v12.shaderFloat16 = a12.shaderFloat16;
    v12.shaderInt8 = a12.shaderInt8;
    v12.storageBuffer8BitAccess = a12.storageBuffer8BitAccess;
    v12.vulkanMemoryModel = a12.vulkanMemoryModel;  // cooperative-matrix kernels (glslang declares it)
    v12.vulkanMemoryModelDeviceScope = a12.vulkanMemoryModelDeviceScope;
    const VkPhysicalDeviceShaderFloat16Int8Features af16 = f16;
    f16 = VkPhysicalDeviceShaderFloat16Int8Features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES,
                                                     f16.pNext};
    f16.shaderFloat16 = af16.shaderFloat16;
    f16.shaderInt8 = af16.shaderInt8;
    const VkBool32 ext_s8 = s8.storageBuffer8BitAccess;
    s8 = VkPhysicalDevice8BitStorageFeatures{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES, s8.pNext};
    s8.storageBuffer8BitAccess = ext_s8;
    const VkBool32 coop = cmnv.cooperativeMatrix;
    cmnv = VkPhysicalDeviceCooperativeMatrixFeaturesNV{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
                                                       cmnv.pNext};
    cmnv.cooperativeMatrix = coop;
    cmkhr.cooperativeMatrixRobustBufferAccess = VK_FALSE;
    const VkPhysicalDeviceVulkan13Features v = v13;
    v13 = VkPhysicalDeviceVulkan13Features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, v13.pNext};
    v13.subgroupSizeControl = v.subgroupSizeControl;
    v13.computeFullSubgroups = v.computeFullSubgroups;
    v13.shaderIntegerDotProduct = v.shaderIntegerDotProduct;
    v13.synchronization2 = VK_FALSE;
    pexe.pipelineExecutableInfo = VK_FALSE;  // enabled by CreateContext where the option asks
  }
};

// The device's subgroup-scope VK_KHR_cooperative_matrix shapes (its entry point is newer than
// the headers volk was built with, so it is loaded here).
void QueryCoopMatShapes(vkqc_context_t* ctx) {
  auto get = reinterpret_cast<khr::PfnGetCoopMatProps>(
      vkGetInstanceProcAddr(ctx->instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
  uint32_t n = 0;
  if (!get || get(ctx->physical, &n, nullptr) != VK_SUCCESS || n == 0) return;
  std::vector<khr::CoopMatProperties> props(n, khr::CoopMatProperties{khr::kStypeCoopMatProperties});
  if (get(ctx->physical, &n, props.data()) < VK_SUCCESS) return;
  props.resize(n);
  for (const auto& p : props)
    if (p.scope == khr::kScopeSubgroup && !p.saturatingAccumulation)
      ctx->caps.coopmat_shapes.push_back({p.MSize, p.NSize, p.KSize, uint32_t(p.AType), uint32_t(p.BType),
                                          uint32_t(p.CType), uint32_t(p.ResultType)});
}

void QueryCaps(vkqc_context_t* ctx, uint32_t api) {
  DeviceCaps& c = ctx->caps;
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(ctx->physical, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> ext(n);
  vkEnumerateDeviceExtensionProperties(ctx->physical, nullptr, &n, ext.data());
  for (const auto& e : ext) c.extensions.push_back(e.extensionName);

  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  VkPhysicalDeviceSubgroupProperties sg{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceSubgroupSizeControlProperties sgc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceShaderIntegerDotProductProperties idp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES};
  p2.pNext = &sg;
  void** next = &sg.pNext;
  const bool has_sgc = api >= VK_API_VERSION_1_3 || Has(c.extensions, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  if (has_sgc) { *next = &sgc; next = &sgc.pNext; }
  if (api >= VK_API_VERSION_1_3 || Has(c.extensions, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME)) {
    *next = &idp;
    next = &idp.pNext;
  }
  // The largest allocation and buffer (weight_parts.h): Vulkan 1.1 and 1.3 core.
  VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceMaintenance4Properties m4{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES};
  *next = &m3;
  next = &m3.pNext;
  const bool has_m4 = api >= VK_API_VERSION_1_3 || Has(c.extensions, VK_KHR_MAINTENANCE_4_EXTENSION_NAME);
  if (has_m4) {
    *next = &m4;
    next = &m4.pNext;
  }
  vkGetPhysicalDeviceProperties2(ctx->physical, &p2);
  c.max_memory_allocation_size = m3.maxMemoryAllocationSize;
  c.max_buffer_size = has_m4 ? m4.maxBufferSize : 0;
  const VkPhysicalDeviceLimits& l = p2.properties.limits;
  c.name = p2.properties.deviceName;
  c.api_version = std::min(api, p2.properties.apiVersion);
  c.subgroup_size = sg.subgroupSize;
  c.subgroup_arithmetic_compute = (sg.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) &&
                                  (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT);
  if (has_sgc) {
    c.min_subgroup_size = sgc.minSubgroupSize;
    c.max_subgroup_size = sgc.maxSubgroupSize;
    c.required_subgroup_size_compute = sgc.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT;
  }
  c.max_compute_shared_memory_size = l.maxComputeSharedMemorySize;
  c.max_compute_work_group_invocations = l.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    c.max_compute_work_group_size[i] = l.maxComputeWorkGroupSize[i];
    c.max_compute_work_group_count[i] = l.maxComputeWorkGroupCount[i];
  }
  c.max_storage_buffer_range = l.maxStorageBufferRange;
  c.max_per_stage_descriptor_storage_buffers = l.maxPerStageDescriptorStorageBuffers;
  c.max_push_constants_size = l.maxPushConstantsSize;
  c.min_storage_buffer_offset_alignment = l.minStorageBufferOffsetAlignment;
  c.timestamp_period = l.timestampPeriod;
  vkGetPhysicalDeviceMemoryProperties(ctx->physical, &ctx->mem);
}

}  // namespace

Err CreateContext(const vkqc_context_options& o, vkqc_context_t* ctx) {
  ctx->log = o.log;
  ctx->log_user_data = o.log_user_data;
  if (o.timeout_ns) ctx->timeout_ns = o.timeout_ns;
  if (o.validate_spirv && !SpirvValidatorAvailable())
    return Fail(VKQC_ERROR_INVALID_ARGUMENT,
                "validate_spirv: this runtime was built without SPIRV-Tools (libvkqc.so and the runtime-only build "
                "leave the validator out to stay small); use the full build's static runtime, or robust_buffer_access");
  ctx->validate_spirv = o.validate_spirv != 0;
  if (o.trusted_key_count && !o.trusted_keys)
    return Fail(VKQC_ERROR_INVALID_ARGUMENT, "trusted_key_count is set but trusted_keys is null");
  if (o.trusted_key_count > 4096)
    return Fail(VKQC_ERROR_INVALID_ARGUMENT, "trusted_key_count " + std::to_string(o.trusted_key_count) + " > 4096");
  ctx->trusted_keys.resize(o.trusted_key_count);
  if (o.trusted_key_count) std::memcpy(ctx->trusted_keys.data(), o.trusted_keys, size_t(o.trusted_key_count) * 32);
  ctx->alloc = static_cast<const VkAllocationCallbacks*>(o.allocation_callbacks);
  if (o.capture_pipeline_statistics && o.external)
    return Fail(VKQC_ERROR_INVALID_ARGUMENT,
                "capture_pipeline_statistics needs a device the runtime creates (an external device's extensions are "
                "the app's choice)");
  ctx->capture_statistics = o.capture_pipeline_statistics != 0;
  if (LoadVulkanLoader() != VK_SUCCESS)
    return Fail(VKQC_ERROR_NO_DEVICE, "the Vulkan loader (libvulkan.so.1, or libvulkan.so as on Android) could not be loaded");
  uint32_t api = 0;
  if (o.external) {
    // Checked before anything is kept: a refused context must not wait on or destroy the app's handles.
    const vkqc_external_device& x = *o.external;
    if (!x.instance || !x.physical_device || !x.device || !x.queue)
      return Fail(VKQC_ERROR_INVALID_ARGUMENT, "external device: instance, physical device, device and queue are required");
    if (x.api_version < VK_API_VERSION_1_1)
      return Fail(VKQC_ERROR_INVALID_ARGUMENT, "external device: api_version must be the Vulkan version (1.1 or newer) "
                                               "the app created its instance and device with");
    ctx->owns_device = false;
    ctx->instance = static_cast<VkInstance>(x.instance);
    ctx->physical = static_cast<VkPhysicalDevice>(x.physical_device);
    ctx->device = static_cast<VkDevice>(x.device);
    ctx->queue = static_cast<VkQueue>(x.queue);
    ctx->queue_family = x.queue_family_index;
    api = x.api_version;
    LoadVulkanEntryPoints(ctx->instance);
  } else {
    uint32_t loader_api = VK_API_VERSION_1_0;
    if (vkEnumerateInstanceVersion) vkEnumerateInstanceVersion(&loader_api);
    api = std::min<uint32_t>(loader_api, VK_API_VERSION_1_3);
    if (api < VK_API_VERSION_1_1) return Fail(VKQC_ERROR_NO_DEVICE, "the Vulkan loader supports only Vulkan 1.0; 1.1 is required");
    std::vector<const char*> layers, exts;
    VkValidationFeaturesEXT vf{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
    const VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    if (o.enable_validation) {
      if (!HasLayer("VK_LAYER_KHRONOS_validation"))
        return Fail(VKQC_ERROR_NO_DEVICE, "validation was requested but VK_LAYER_KHRONOS_validation is not installed "
                                          "(Debian: apt-get install vulkan-validationlayers)");
      if (!HasInstanceExtension(VK_EXT_DEBUG_UTILS_EXTENSION_NAME))
        return Fail(VKQC_ERROR_NO_DEVICE, "validation was requested but VK_EXT_debug_utils is unavailable");
      layers.push_back("VK_LAYER_KHRONOS_validation");
      exts.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
      vf.enabledValidationFeatureCount = 1;
      vf.pEnabledValidationFeatures = enables;
    }
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "vkqc";
    app.pEngineName = "vkqc";
    app.apiVersion = api;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pNext = o.enable_validation ? &vf : nullptr;
    ici.pApplicationInfo = &app;
    ici.enabledLayerCount = uint32_t(layers.size());
    ici.ppEnabledLayerNames = layers.data();
    ici.enabledExtensionCount = uint32_t(exts.size());
    ici.ppEnabledExtensionNames = exts.data();
    if (ctx->alloc) {
      if (VkResult r = vkCreateInstance(&ici, ctx->alloc, &ctx->instance); r != VK_SUCCESS)
        return VkFail(r, "vkCreateInstance");
      ctx->owns_instance = true;
    } else {
      std::lock_guard<std::mutex> lock(g_instance_mu);
      VkInstance& shared = g_shared_instance[o.enable_validation ? 1 : 0];
      if (!shared) {
        if (VkResult r = vkCreateInstance(&ici, nullptr, &shared); r != VK_SUCCESS) {
          shared = VK_NULL_HANDLE;
          return VkFail(r, "vkCreateInstance");
        }
      }
      ctx->instance = shared;
      ctx->owns_instance = false;
    }
    LoadVulkanEntryPoints(ctx->instance);
    if (o.enable_validation) {
      VkDebugUtilsMessengerCreateInfoEXT mci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
      mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
      mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                        VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
      mci.pfnUserCallback = OnDebugMessage;
      mci.pUserData = ctx;
      // This instance's own entry points: the process-wide ones come from the first instance, which
      // may not have enabled VK_EXT_debug_utils (the loader then gives none).
      auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(ctx->instance, "vkCreateDebugUtilsMessengerEXT"));
      ctx->destroy_messenger = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(ctx->instance, "vkDestroyDebugUtilsMessengerEXT"));
      if (!create || !ctx->destroy_messenger) return Fail(VKQC_ERROR_NO_DEVICE, "VK_EXT_debug_utils has no entry points");
      if (VkResult r = create(ctx->instance, &mci, ctx->alloc, &ctx->messenger); r != VK_SUCCESS)
        return VkFail(r, "vkCreateDebugUtilsMessengerEXT");
    }
    uint32_t n = 0;
    vkEnumeratePhysicalDevices(ctx->instance, &n, nullptr);
    std::vector<VkPhysicalDevice> devs(n);
    vkEnumeratePhysicalDevices(ctx->instance, &n, devs.data());
    if (n == 0) return Fail(VKQC_ERROR_NO_DEVICE, "no Vulkan device found (install a driver; mesa-vulkan-drivers gives lavapipe)");
    std::vector<std::pair<VkPhysicalDevice, uint32_t>> candidates;
    for (VkPhysicalDevice d : devs) {
      uint32_t qn = 0;
      vkGetPhysicalDeviceQueueFamilyProperties(d, &qn, nullptr);
      std::vector<VkQueueFamilyProperties> qf(qn);
      vkGetPhysicalDeviceQueueFamilyProperties(d, &qn, qf.data());
      for (uint32_t q = 0; q < qn; ++q)
        if (qf[q].queueFlags & VK_QUEUE_COMPUTE_BIT) {
          candidates.push_back({d, q});
          break;
        }
    }
    if (candidates.empty()) return Fail(VKQC_ERROR_NO_DEVICE, "no Vulkan device with a compute queue");
    const int idx = o.device_index < 0 ? 0 : o.device_index;
    if (size_t(idx) >= candidates.size())
      return Fail(VKQC_ERROR_NO_DEVICE, "device index " + std::to_string(idx) + " out of range (" +
                                            std::to_string(candidates.size()) + " compute devices)");
    ctx->physical = candidates[idx].first;
    ctx->queue_family = candidates[idx].second;
  }

  QueryCaps(ctx, api);
  uint32_t qn = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical, &qn, nullptr);
  std::vector<VkQueueFamilyProperties> qf(qn);
  vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical, &qn, qf.data());
  if (ctx->queue_family < qn) ctx->caps.timestamp_valid_bits = qf[ctx->queue_family].timestampValidBits;

  FeatureChain fc;
  fc.Link(ctx->caps.api_version, ctx->caps.extensions);
  vkGetPhysicalDeviceFeatures2(ctx->physical, &fc.f2);
  const bool v12 = ctx->caps.api_version >= VK_API_VERSION_1_2;
  ctx->caps.shader_float16 = v12 ? fc.v12.shaderFloat16 : fc.f16.shaderFloat16;
  ctx->caps.shader_int8 = v12 ? fc.v12.shaderInt8 : fc.f16.shaderInt8;
  ctx->caps.storage_buffer_8bit_access = v12 ? fc.v12.storageBuffer8BitAccess : fc.s8.storageBuffer8BitAccess;
  ctx->caps.vulkan_memory_model = v12 && fc.v12.vulkanMemoryModel;
  ctx->caps.cooperative_matrix_nv = Has(ctx->caps.extensions, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME) &&
                                    fc.cmnv.cooperativeMatrix;
  ctx->caps.cooperative_matrix_khr = Has(ctx->caps.extensions, khr::kCoopMatExtension) && fc.cmkhr.cooperativeMatrix;
  if (ctx->caps.cooperative_matrix_khr) QueryCoopMatShapes(ctx);
  if (ctx->caps.api_version >= VK_API_VERSION_1_3) {
    ctx->caps.shader_integer_dot_product = fc.v13.shaderIntegerDotProduct;
    ctx->caps.subgroup_size_control = fc.v13.subgroupSizeControl;
    ctx->caps.compute_full_subgroups = fc.v13.computeFullSubgroups;
  } else {
    ctx->caps.shader_integer_dot_product = fc.idp.shaderIntegerDotProduct;
    ctx->caps.subgroup_size_control = fc.sgc.subgroupSizeControl;
    ctx->caps.compute_full_subgroups = fc.sgc.computeFullSubgroups;
  }

  if (ctx->owns_device) {
    const VkBool32 robust = fc.f2.features.robustBufferAccess;
    const VkBool32 exe_info = fc.pexe.pipelineExecutableInfo;
    fc.Trim();
    if (ctx->capture_statistics) {
      if (!Has(ctx->caps.extensions, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME) || !exe_info)
        return Fail(VKQC_ERROR_UNSUPPORTED_DEVICE,
                    "capture_pipeline_statistics: " + ctx->caps.name + " lacks " +
                        VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME + " (pipelineExecutableInfo)");
      fc.pexe.pipelineExecutableInfo = VK_TRUE;
    }
    if (o.robust_buffer_access) {
      if (!robust) return Fail(VKQC_ERROR_NO_DEVICE, "robust buffer access was requested but the device lacks robustBufferAccess");
      fc.f2.features.robustBufferAccess = VK_TRUE;
    }
    std::vector<const char*> dexts;
    if (ctx->caps.api_version < VK_API_VERSION_1_3) {
      if (Has(ctx->caps.extensions, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME))
        dexts.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
      if (Has(ctx->caps.extensions, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME))
        dexts.push_back(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
    }
    if (ctx->caps.api_version < VK_API_VERSION_1_2) {
      if (Has(ctx->caps.extensions, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME))
        dexts.push_back(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
      if (Has(ctx->caps.extensions, VK_KHR_8BIT_STORAGE_EXTENSION_NAME)) {
        dexts.push_back(VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
        if (Has(ctx->caps.extensions, VK_KHR_STORAGE_BUFFER_STORAGE_CLASS_EXTENSION_NAME))
          dexts.push_back(VK_KHR_STORAGE_BUFFER_STORAGE_CLASS_EXTENSION_NAME);
      }
    }
    if (ctx->caps.cooperative_matrix_nv) dexts.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    if (ctx->caps.cooperative_matrix_khr) dexts.push_back(khr::kCoopMatExtension);
    if (ctx->capture_statistics) dexts.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    const float prio = 1.0f;
    VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = ctx->queue_family;
    qci.queueCount = 1;
    qci.pQueuePriorities = &prio;
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = &fc.f2;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    dci.enabledExtensionCount = uint32_t(dexts.size());
    dci.ppEnabledExtensionNames = dexts.data();
    if (VkResult r = vkCreateDevice(ctx->physical, &dci, ctx->alloc, &ctx->device); r != VK_SUCCESS)
      return VkFail(r, "vkCreateDevice");
    vkGetDeviceQueue(ctx->device, ctx->queue_family, 0, &ctx->queue);
    if (ctx->capture_statistics) {
      ctx->get_executable_properties = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
          vkGetDeviceProcAddr(ctx->device, "vkGetPipelineExecutablePropertiesKHR"));
      ctx->get_executable_statistics = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
          vkGetDeviceProcAddr(ctx->device, "vkGetPipelineExecutableStatisticsKHR"));
      if (!ctx->get_executable_properties || !ctx->get_executable_statistics)
        return Fail(VKQC_ERROR_UNSUPPORTED_DEVICE, "capture_pipeline_statistics: the device's " +
                                                        std::string(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME) +
                                                        " entry points are missing");
    }
  }

  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = ctx->queue_family;
  if (VkResult r = vkCreateCommandPool(ctx->device, &pci, ctx->alloc, &ctx->pool); r != VK_SUCCESS)
    return VkFail(r, "vkCreateCommandPool");
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if (VkResult r = vkCreateFence(ctx->device, &fci, ctx->alloc, &ctx->fence); r != VK_SUCCESS)
    return VkFail(r, "vkCreateFence");
  VkPipelineCacheCreateInfo cci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  cci.initialDataSize = o.pipeline_cache_data ? o.pipeline_cache_size : 0;
  cci.pInitialData = o.pipeline_cache_data;
  if (VkResult r = vkCreatePipelineCache(ctx->device, &cci, ctx->alloc, &ctx->cache); r != VK_SUCCESS) {
    // A stale or foreign cache blob is not fatal: start empty.
    cci.initialDataSize = 0;
    cci.pInitialData = nullptr;
    if (VkResult r2 = vkCreatePipelineCache(ctx->device, &cci, ctx->alloc, &ctx->cache); r2 != VK_SUCCESS)
      return VkFail(r2, "vkCreatePipelineCache");
    ctx->Log(VKQC_LOG_WARNING, "pipeline cache data was rejected (VkResult " + std::to_string(r) + "); starting empty");
  }
  ctx->Log(VKQC_LOG_INFO, "device: " + ctx->caps.name);
  return Ok();
}

void DestroyContext(vkqc_context_t* ctx) {
  if (ctx->device) {
    vkDeviceWaitIdle(ctx->device);
    if (ctx->cache) vkDestroyPipelineCache(ctx->device, ctx->cache, ctx->alloc);
    if (ctx->fence) vkDestroyFence(ctx->device, ctx->fence, ctx->alloc);
    if (ctx->pool) vkDestroyCommandPool(ctx->device, ctx->pool, ctx->alloc);
    if (ctx->owns_device) vkDestroyDevice(ctx->device, ctx->alloc);
  }
  if (ctx->owns_device && ctx->instance) {
    if (ctx->messenger) ctx->destroy_messenger(ctx->instance, ctx->messenger, ctx->alloc);
    if (ctx->owns_instance) vkDestroyInstance(ctx->instance, ctx->alloc);
  }
}

}  // namespace vkqc::rt

vkqc::rt::Err vkqc_context_t::SubmitAndWait(VkCommandBuffer cb) {
  if (fence_pending) {  // an earlier transfer timed out: it must finish before the fence is reused
    VkResult r = vkWaitForFences(device, 1, &fence, VK_TRUE, timeout_ns);
    if (r == VK_TIMEOUT)
      return vkqc::rt::Fail(VKQC_ERROR_TIMEOUT, "an earlier transfer is still running on the GPU");
    if (r != VK_SUCCESS) return vkqc::rt::VkFail(r, "vkWaitForFences");
    vkResetFences(device, 1, &fence);
    fence_pending = false;
  }
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  if (VkResult r = vkQueueSubmit(queue, 1, &si, fence); r != VK_SUCCESS) return vkqc::rt::VkFail(r, "vkQueueSubmit");
  VkResult r = vkWaitForFences(device, 1, &fence, VK_TRUE, timeout_ns);
  if (r == VK_TIMEOUT) {
    fence_pending = true;
    return vkqc::rt::Fail(VKQC_ERROR_TIMEOUT, "the GPU did not finish within the context's timeout (" +
                                                  std::to_string(timeout_ns / 1000000) + " ms)");
  }
  vkResetFences(device, 1, &fence);
  if (r != VK_SUCCESS) return vkqc::rt::VkFail(r, "vkWaitForFences");
  return vkqc::rt::Ok();
}
