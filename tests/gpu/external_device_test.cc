// Adopting the app's Vulkan instance, device and queue (vkqc_context_options.external), as an
// Android or desktop app that already renders with Vulkan would: the test creates its own
// instance (Khronos validation with synchronization validation, its own debug messenger feeding
// the fixture's message list), device (with the features vkqc's bundles use, as the header asks)
// and queue through volk, hands them to vkqc, and checks that
//   - a bundle runs on the adopted device and computes bit for bit what it computes on a context
//     that created its own device (same driver);
//   - destroying the vkqc context leaves the app's device and queue usable, and every object vkqc
//     created is gone by then (the validation layer reports leaked children at vkDestroyDevice);
//   - a description with a missing handle or no api_version is refused with
//     VKQC_ERROR_INVALID_ARGUMENT before anything is touched (a refused context once called
//     vkDeviceWaitIdle on the app's device through a function pointer volk had not loaded).
#include <gtest/gtest.h>
#include <volk.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/graph/synthetic.h"
#include "compiler/passes/pipeline.h"
#include "gpu_fixture.h"

namespace vkqc {
namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL OnAppMessage(VkDebugUtilsMessageSeverityFlagBitsEXT, VkDebugUtilsMessageTypeFlagsEXT,
                                            const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  gpu_test::OnLog(nullptr, VKQC_LOG_VALIDATION, data && data->pMessage ? data->pMessage : "(no message)");
  return VK_FALSE;
}

// What an app owns: its instance (with validation), the first device with a compute queue, that
// queue, created with the features vkqc's kernels may use wherever the device has them.
struct AppDevice {
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  uint32_t api = VK_API_VERSION_1_3;
  std::string skip;  // why the device cannot be used (not a failure of vkqc)

  ::testing::AssertionResult Create() {
    if (volkInitialize() != VK_SUCCESS) return ::testing::AssertionFailure() << "no Vulkan loader";
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "vkqc external device test";
    app.apiVersion = api;
    const char* layers[] = {"VK_LAYER_KHRONOS_validation"};
    const char* exts[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
    const VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkValidationFeaturesEXT vf{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
    vf.enabledValidationFeatureCount = 1;
    vf.pEnabledValidationFeatures = enables;
    const bool validate = !std::getenv("VKQC_TEST_NO_VALIDATION");
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pNext = validate ? &vf : nullptr;
    ici.pApplicationInfo = &app;
    ici.enabledLayerCount = validate ? 1 : 0;
    ici.ppEnabledLayerNames = layers;
    ici.enabledExtensionCount = validate ? 1 : 0;
    ici.ppEnabledExtensionNames = exts;
    if (VkResult r = vkCreateInstance(&ici, nullptr, &instance); r != VK_SUCCESS)
      return ::testing::AssertionFailure() << "vkCreateInstance: " << r;
    volkLoadInstance(instance);
    if (validate) {
      VkDebugUtilsMessengerCreateInfoEXT mci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
      mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
      mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                        VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
      mci.pfnUserCallback = OnAppMessage;
      if (VkResult r = vkCreateDebugUtilsMessengerEXT(instance, &mci, nullptr, &messenger); r != VK_SUCCESS)
        return ::testing::AssertionFailure() << "vkCreateDebugUtilsMessengerEXT: " << r;
    }
    uint32_t n = 0;
    vkEnumeratePhysicalDevices(instance, &n, nullptr);
    std::vector<VkPhysicalDevice> devs(n);
    vkEnumeratePhysicalDevices(instance, &n, devs.data());
    for (VkPhysicalDevice d : devs) {
      uint32_t qn = 0;
      vkGetPhysicalDeviceQueueFamilyProperties(d, &qn, nullptr);
      std::vector<VkQueueFamilyProperties> qf(qn);
      vkGetPhysicalDeviceQueueFamilyProperties(d, &qn, qf.data());
      for (uint32_t q = 0; q < qn && !physical; ++q)
        if (qf[q].queueFlags & VK_QUEUE_COMPUTE_BIT) {
          physical = d;
          family = q;
        }
      if (physical) break;
    }
    if (!physical) return ::testing::AssertionFailure() << "no device with a compute queue";
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(physical, &props);
    if (props.apiVersion < VK_API_VERSION_1_3) {
      skip = "the test's app creates a Vulkan 1.3 device; this one is older";
      return ::testing::AssertionSuccess();
    }

    // The features vkqc's kernels may use (those the runtime enables on a device it creates),
    // each where the device has it.
    VkPhysicalDeviceVulkan13Features has13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features has12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &has13};
    VkPhysicalDeviceFeatures2 has{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &has12};
    vkGetPhysicalDeviceFeatures2(physical, &has);
    VkPhysicalDeviceVulkan13Features on13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    on13.subgroupSizeControl = has13.subgroupSizeControl;
    on13.computeFullSubgroups = has13.computeFullSubgroups;
    on13.shaderIntegerDotProduct = has13.shaderIntegerDotProduct;
    VkPhysicalDeviceVulkan12Features on12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &on13};
    on12.shaderFloat16 = has12.shaderFloat16;
    on12.shaderInt8 = has12.shaderInt8;
    on12.storageBuffer8BitAccess = has12.storageBuffer8BitAccess;
    on12.vulkanMemoryModel = has12.vulkanMemoryModel;
    on12.vulkanMemoryModelDeviceScope = has12.vulkanMemoryModelDeviceScope;
    VkPhysicalDeviceFeatures2 on{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &on12};
    on.features.shaderInt16 = has.features.shaderInt16;
    const float prio = 1.0f;
    VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = family;
    qci.queueCount = 1;
    qci.pQueuePriorities = &prio;
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = &on;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    if (VkResult r = vkCreateDevice(physical, &dci, nullptr, &device); r != VK_SUCCESS)
      return ::testing::AssertionFailure() << "vkCreateDevice: " << r;
    volkLoadDevice(device);
    vkGetDeviceQueue(device, family, 0, &queue);
    return ::testing::AssertionSuccess();
  }

  vkqc_external_device External() const {
    vkqc_external_device e{};
    e.instance = instance;
    e.physical_device = physical;
    e.device = device;
    e.queue = queue;
    e.queue_family_index = family;
    e.api_version = api;
    return e;
  }

  // The app keeps using its queue after vkqc is gone: an empty submission signalling a fence.
  ::testing::AssertionResult QueueStillWorks() const {
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence = VK_NULL_HANDLE;
    if (vkCreateFence(device, &fci, nullptr, &fence) != VK_SUCCESS) return ::testing::AssertionFailure() << "fence";
    VkResult r = vkQueueSubmit(queue, 0, nullptr, fence);
    if (r == VK_SUCCESS) r = vkWaitForFences(device, 1, &fence, VK_TRUE, 10ull * 1000000000ull);
    vkDestroyFence(device, fence, nullptr);
    if (r != VK_SUCCESS) return ::testing::AssertionFailure() << "the app's queue after vkqc: VkResult " << r;
    return ::testing::AssertionSuccess();
  }

  ~AppDevice() {
    if (device) {
      vkDeviceWaitIdle(device);
      vkDestroyDevice(device, nullptr);  // the layer reports any object vkqc left on it
    }
    if (messenger) vkDestroyDebugUtilsMessengerEXT(instance, messenger, nullptr);
    if (instance) vkDestroyInstance(instance, nullptr);
  }
};

// A dq8ca x q4gsw linear on the int8 dot path (int8 storage and OpSDot on the adopted device),
// programs for M = 1 and M = 5.
std::vector<uint8_t> Bundle() {
  testing_graphs::QLayerSpec s;
  s.m = 5;
  s.k = 256;
  s.n = 64;
  s.weights = ir::Scheme::Q4GSW;
  s.act = ir::Scheme::DQ8CA;
  auto p = LoadProfile(gpu_test::TestProfile());
  EXPECT_TRUE(p.ok()) << p.error().message;
  if (!p.ok()) return {};
  CompileOptions o;
  o.select.force_accum = linear::Accum::IntDot;
  auto b = CompileGraph(testing_graphs::MakeQLayer(s, 7), *p, o, 0);
  EXPECT_TRUE(b.ok()) << b.error().message;
  return b.ok() ? *b : std::vector<uint8_t>{};
}


TEST(ExternalDevice, AdoptedDeviceRunsLikeAnOwnedOne) {
  const std::vector<uint8_t> bundle = Bundle();
  ASSERT_FALSE(bundle.empty());
  const std::vector<float> x = testing_graphs::RandomFloats(5 * 256, 11);

  // The runtime's own device first (the fixture's context: same driver, validation on).
  vkqc_context own = gpu_test::Context();
  ASSERT_NE(own, nullptr);
  const std::vector<float> expected = gpu_test::RunOnContext(own, bundle, x);
  ASSERT_EQ(expected.size(), size_t(5 * 64));
  gpu_test::ExpectNoValidationMessages("owned device");

  {
    AppDevice app;
    ASSERT_TRUE(app.Create());
    if (!app.skip.empty()) GTEST_SKIP() << app.skip;
    const vkqc_external_device ext = app.External();
    vkqc_context_options o;
    vkqc_context_options_init(&o);
    o.external = &ext;
    o.log = &gpu_test::OnLog;
    vkqc_context ctx = nullptr;
    ASSERT_EQ(vkqc_context_create(&o, &ctx), VKQC_OK) << vkqc_last_error();
    const char* name = nullptr;
    ASSERT_EQ(vkqc_context_device_name(ctx, &name), VKQC_OK);
    std::printf("adopted device: %s\n", name);
    for (int round = 0; round < 2; ++round) {  // a second load reuses the context's pool, fence and cache
      const std::vector<float> got = gpu_test::RunOnContext(ctx, bundle, x);
      ASSERT_EQ(got.size(), expected.size());
      EXPECT_EQ(std::memcmp(got.data(), expected.data(), got.size() * 4), 0)
          << "round " << round << ": the adopted device's output differs from the owned device's";
    }
    vkqc_context_destroy(ctx);
    EXPECT_TRUE(app.QueueStillWorks());
    gpu_test::ExpectNoValidationMessages("adopted device, before the app destroys it");
  }  // the app destroys its device and instance: leaks of vkqc's objects would be reported here
  gpu_test::ExpectNoValidationMessages("the app's vkDestroyDevice/vkDestroyInstance");
}

TEST(ExternalDevice, IncompleteDescriptionIsRefused) {
  // Fake handles: nothing may be called on them (the checks come before any use, and the refused
  // context must not wait on or destroy what it was given).
  int dummy[4];
  vkqc_external_device ext{};
  ext.instance = &dummy[0];
  ext.physical_device = &dummy[1];
  ext.device = &dummy[2];
  ext.queue = nullptr;
  ext.api_version = VK_API_VERSION_1_3;
  gpu_test::Context();  // VK_DRIVER_FILES as the fixture sets it
  vkqc_context_options o;
  vkqc_context_options_init(&o);
  o.external = &ext;
  vkqc_context ctx = nullptr;
  EXPECT_EQ(vkqc_context_create(&o, &ctx), VKQC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx, nullptr);
  EXPECT_NE(std::strstr(vkqc_last_error(), "queue are required"), nullptr) << vkqc_last_error();
  ext.queue = &dummy[3];
  ext.api_version = 0;  // forgotten: the runtime would otherwise see a Vulkan 1.0 device
  EXPECT_EQ(vkqc_context_create(&o, &ctx), VKQC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx, nullptr);
  EXPECT_NE(std::strstr(vkqc_last_error(), "api_version"), nullptr) << vkqc_last_error();
}

}  // namespace
}  // namespace vkqc
