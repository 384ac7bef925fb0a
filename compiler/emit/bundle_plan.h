// The compiled bundle as plain data (DESIGN 8: plan in pure code). The pipeline pass fills a
// BundlePlan; WriteBundle serializes it to the .vkqb layout; barrier insertion and requirement
// derivation are pure functions over it, unit-tested without a GPU.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace vkqc {

enum class SliceKind : uint8_t { Weights = 0, Arena = 1, Input = 2, Output = 3, State = 4 };

struct PlanSlice {
  SliceKind kind = SliceKind::Arena;
  uint32_t index = 0;   // input/output/state number; 0 for weights and arena
  uint64_t offset = 0;
  uint64_t size = 0;
  bool written = false;  // the dispatch writes this binding (else reads it)
};

struct PlanDispatch {
  uint32_t pipeline = 0;
  std::vector<PlanSlice> buffers;  // binding order
  std::vector<uint8_t> push;
  uint32_t group_count[3] = {1, 1, 1};
  uint32_t layer = 0;
};

struct PlanCommand {
  bool is_barrier = false;
  PlanDispatch dispatch;  // valid when !is_barrier
};

struct PlanSpec {
  uint32_t id = 0, value = 0;
};

// A VK_KHR_cooperative_matrix MulAdd shape: sizes and VkComponentTypeKHR values.
struct PlanCoopMatShape {
  uint32_t m = 0, n = 0, k = 0, a = 0, b = 0, c = 0, result = 0;
  bool operator==(const PlanCoopMatShape& o) const {
    return m == o.m && n == o.n && k == o.k && a == o.a && b == o.b && c == o.c && result == o.result;
  }
};

struct PlanPipeline {
  std::string name;
  uint32_t module = 0;
  std::vector<PlanSpec> spec;
  uint32_t local_size[3] = {1, 1, 1};
  uint32_t push_constant_size = 0;
  std::vector<uint32_t> bindings;          // every binding, sorted (a dispatch's buffers follow it)
  std::vector<uint32_t> uniform_bindings;  // those that are uniform buffers (the rest: storage)
  uint32_t required_subgroup_size = 0;
  uint32_t shared_memory_bytes = 0;
  bool int_dot = false;
  bool subgroup_arithmetic = false;
  bool float16 = false;  // 16-bit float arithmetic (SPIR-V capability Float16)
  bool int8 = false;     // 8-bit integer arithmetic (Int8): shaderInt8
  bool storage_buffer_8bit = false;    // StorageBuffer8BitAccess
  bool cooperative_matrix_nv = false;  // CooperativeMatrixNV: VK_NV_cooperative_matrix
  bool cooperative_matrix_khr = false; // CooperativeMatrixKHR: VK_KHR_cooperative_matrix
  PlanCoopMatShape coopmat;            // its MulAdd shape (KHR; m = 0: none)
  bool vulkan_memory_model = false;    // VulkanMemoryModel: vulkanMemoryModel (Vulkan 1.2)
};

struct PlanModule {
  std::string name;
  std::vector<uint32_t> spirv;
  uint64_t hash = 0;
};

struct PlanIo {
  std::string name;
  std::vector<int64_t> shape;
  uint8_t dtype = 0;  // schema DType
  uint64_t size = 0;
  uint8_t scheme = 0;
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
};

struct PlanLayer {
  std::string name, op, variant, reason, detail;
  uint32_t first_command = 0, command_count = 0;
  uint64_t weight_bytes = 0;
  bool integer_path = false;
  uint64_t flops = 0;
  int32_t op_index = -1;  // source graph op; -1 for layers the compiler added
};

struct PlanTensor {
  std::string name;
  uint64_t offset = 0, size = 0;
  uint32_t first_command = 0, last_command = 0;
};

struct PlanProgram {
  std::string name;
  uint32_t tokens = 0;
  uint64_t arena_size = 0;
  std::vector<PlanIo> inputs, outputs;
  std::vector<PlanCommand> commands;
  std::vector<PlanLayer> layers;
  std::vector<PlanTensor> arena_tensors;
  int32_t position_input = -1;  // index into inputs of the i32 [1] position, or -1
};

struct PlanState {
  std::string name;
  std::vector<int64_t> shape;
  uint8_t dtype = 1;  // schema DType (F16)
  uint64_t size = 0;
};

struct PlanRequirements {
  uint32_t api_version = 0;
  bool shader_integer_dot_product = false;
  bool shader_float16 = false;
  bool shader_int8 = false;
  bool storage_buffer_8bit_access = false;
  bool cooperative_matrix_nv = false;  // also puts VK_NV_cooperative_matrix into extensions
  bool cooperative_matrix_khr = false; // also puts VK_KHR_cooperative_matrix into extensions
  std::vector<PlanCoopMatShape> coopmat_shapes;  // KHR MulAdd shapes the device must list
  bool vulkan_memory_model = false;
  bool subgroup_arithmetic = false;
  uint32_t required_subgroup_size = 0;
  uint32_t max_compute_shared_memory_size = 0;
  uint32_t max_compute_work_group_invocations = 0;
  uint32_t max_compute_work_group_size[3] = {0, 0, 0};
  uint32_t max_compute_work_group_count[3] = {0, 0, 0};
  uint64_t max_storage_buffer_range = 0;
  uint32_t max_per_stage_descriptor_storage_buffers = 0;
  uint32_t max_push_constants_size = 0;
  uint32_t min_storage_buffer_offset_alignment = 0;
  std::vector<std::string> extensions;
};

struct BundlePlan {
  std::string compiler_version;
  std::string target_profile;
  uint64_t graph_hash = 0;
  PlanRequirements requirements;
  std::vector<PlanModule> modules;
  std::vector<PlanPipeline> pipelines;
  std::vector<PlanProgram> programs;
  std::vector<uint8_t> weights;  // the weight segment
  std::vector<PlanState> states;  // KV caches, shared by all programs
  uint32_t max_context = 0;       // positions the state holds (0: stateless)
  std::map<std::string, std::vector<uint8_t>> metadata;  // the graph's, carried unchanged
};

// Inserts a compute->compute barrier before each dispatch that reads or writes a range an
// earlier dispatch (since the last barrier) wrote, or writes a range one of them read.
std::vector<PlanCommand> InsertBarriers(const std::vector<PlanDispatch>& dispatches);

// Derives the bundle's requirements from the pipelines and dispatches actually used.
PlanRequirements DeriveRequirements(const BundlePlan& plan, uint32_t offset_alignment);

// Serializes to the .vkqb layout: [u32 size][flatbuffer VKQB][pad to 64][weight segment].
std::vector<uint8_t> WriteBundle(const BundlePlan& plan);

}  // namespace vkqc
