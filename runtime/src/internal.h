// Runtime internals. Nothing here is visible through vkqc.h.
#pragma once
#include <volk.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bundle_sign.h"
#include "schema/bundle_generated.h"
#include "vkqc/vkqc.h"

namespace vkqc::rt {

namespace fbb = vkqc::fb::bundle;

// Status + message, without exceptions.
struct Err {
  vkqc_status status = VKQC_OK;
  std::string message;
  bool ok() const { return status == VKQC_OK; }
};
inline Err Ok() { return {}; }

// SPIR-V validation of untrusted bundles (spirv_check.cc): available only where the runtime was
// built with SPIRV-Tools (VKQC_RUNTIME_SPIRV_TOOLS).
bool SpirvValidatorAvailable();
// True when `words` is valid SPIR-V for Vulkan 1.1; otherwise false and *why says where.
bool ValidateSpirvModule(const uint32_t* words, size_t count, std::string* why);
inline Err Fail(vkqc_status s, std::string m) { return {s, std::move(m)}; }
Err VkFail(VkResult r, const char* what);

// What the device can do, as far as bundle requirements are concerned.
struct DeviceCaps {
  std::string name;
  uint32_t api_version = 0;
  bool shader_integer_dot_product = false;
  bool shader_float16 = false;
  bool shader_int8 = false;
  bool storage_buffer_8bit_access = false;
  bool vulkan_memory_model = false;
  bool cooperative_matrix_nv = false;  // VK_NV_cooperative_matrix's cooperativeMatrix feature
  bool cooperative_matrix_khr = false; // VK_KHR_cooperative_matrix's cooperativeMatrix feature
  // Its subgroup-scope MulAdd shapes: M, N, K, then VkComponentTypeKHR of A, B, C, result.
  std::vector<std::array<uint32_t, 7>> coopmat_shapes;
  bool subgroup_size_control = false;
  bool compute_full_subgroups = false;
  bool subgroup_arithmetic_compute = false;
  uint32_t subgroup_size = 0, min_subgroup_size = 0, max_subgroup_size = 0;
  bool required_subgroup_size_compute = false;
  uint32_t max_compute_shared_memory_size = 0;
  uint32_t max_compute_work_group_invocations = 0;
  uint32_t max_compute_work_group_size[3] = {0, 0, 0};
  uint32_t max_compute_work_group_count[3] = {0, 0, 0};
  uint64_t max_storage_buffer_range = 0;
  uint32_t max_per_stage_descriptor_storage_buffers = 0;
  uint32_t max_push_constants_size = 0;
  uint64_t min_storage_buffer_offset_alignment = 0;
  uint64_t max_memory_allocation_size = 0;  // 0: not reported
  uint64_t max_buffer_size = 0;             // 0: not reported (before Vulkan 1.3 / maintenance4)
  float timestamp_period = 0;
  uint32_t timestamp_valid_bits = 0;
  std::vector<std::string> extensions;
};

// Pure check: every requirement the device misses, as readable lines. Empty = supported.
std::vector<std::string> MissingRequirements(const fbb::Requirements* req, const DeviceCaps& caps);

// Verified view of bundle bytes: the flatbuffer and every index, offset and size checked.
struct BundleView {
  const fbb::Bundle* bundle = nullptr;
  const uint8_t* weights = nullptr;
  uint64_t weights_size = 0;
};
Err ParseBundle(const uint8_t* data, size_t size, BundleView* out);
// spirv_scan.cc ("": ok): constant indices (OpSpecConstantOp, access chains) inside their types;
// the workgroup size after specialization with the given spec constants equals `expected`.
std::string CheckSpecConstantOps(const uint32_t* words, size_t count);
std::string CheckWorkgroupSize(const uint32_t* words, size_t count, const uint32_t* spec_ids, const uint32_t* spec_values,
                               size_t nspec, const uint32_t expected[3]);

}  // namespace vkqc::rt

struct vkqc_context_t {
  vkqc_log_fn log = nullptr;
  void* log_user_data = nullptr;
  bool owns_device = true;
  bool owns_instance = false;  // false: the process-wide shared instance (device.cc), or the app's
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger = nullptr;  // this instance's (device.cc)
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkPipelineCache cache = VK_NULL_HANDLE;
  const VkAllocationCallbacks* alloc = nullptr;
  VkPhysicalDeviceMemoryProperties mem{};
  vkqc::rt::DeviceCaps caps;
  int live_models = 0;
  uint64_t timeout_ns = 60ull * 1000000000ull;  // bound of every wait (vkqc_context_options.timeout_ns)
  bool validate_spirv = false;                   // vkqc_context_options.validate_spirv
  std::vector<vkqc::Ed25519Key> trusted_keys;    // vkqc_context_options.trusted_keys
  bool fence_pending = false;                    // `fence` belongs to a submission that timed out
  bool capture_statistics = false;               // vkqc_context_options.capture_pipeline_statistics
  // Their entry points, from vkGetDeviceProcAddr of this context's device (not volk's
  // process-wide pointers: CaptureStatistics then needs nothing of any other device or instance).
  PFN_vkGetPipelineExecutablePropertiesKHR get_executable_properties = nullptr;
  PFN_vkGetPipelineExecutableStatisticsKHR get_executable_statistics = nullptr;

  void Log(vkqc_log_level level, const std::string& msg) const {
    if (log) log(log_user_data, level, msg.c_str());
  }
  // Submits one command buffer and waits for it (at most timeout_ns; a submission that timed out
  // is waited for again, bounded, before the fence is reused).
  vkqc::rt::Err SubmitAndWait(VkCommandBuffer cb);
};

namespace vkqc::rt {
Err CreateContext(const vkqc_context_options& o, vkqc_context_t* ctx);
void DestroyContext(vkqc_context_t* ctx);
}  // namespace vkqc::rt
