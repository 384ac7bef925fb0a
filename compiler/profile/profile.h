// Target capability profiles (DESIGN 2.2): a Khronos Vulkan Profiles JSON file, read unchanged,
// plus an optional vkqc sidecar (`<file>.vkqc.json` beside it, or a "vkqc" member inside the
// JSON) for what that schema cannot say (cooperative-matrix shapes, exact subgroup size, quirks).
// A TargetProfile is the flattened answer to every capability question the compiler asks.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/common/result.h"

namespace vkqc {

struct CoopMatShape {
  uint32_t m = 0, n = 0, k = 0;
  std::string a_type, b_type, c_type, result_type;  // "sint8", "float16", "sint32", "float32"
};

// A device's measured roofline (`vkqc roofline`, stored as the sidecar's "roofline" member).
// Rates are medians of GPU-timestamped microbenchmarks; 0 = not measured / unknown.
struct Roofline {
  std::string device;  // device name as the driver reports it
  std::string driver;  // driver name, version and info
  std::string date;    // YYYY-MM-DD (UTC) of the measurement
  double read_gbps = 0;       // stream read bandwidth, 1e9 bytes/s (16-byte loads)
  double int8_dot_tops = 0;   // packed 4x8 signed dot with int32 accumulate, 1e12 ops/s (8 per dot)
  double fp32_tflops = 0;     // fp32 FMA, 1e12 flops/s (2 per FMA)
  double fp16_tflops = 0;     // fp16 FMA, 1e12 flops/s (2 per FMA)
  // VK_KHR_cooperative_matrix MulAdd rates (subgroup scope, 2 ops per multiply-add).
  double coopmat_int8_tops = 0;    // sint8 x sint8 + sint32
  double coopmat_fp16_tflops = 0;  // float16 x float16 + float32
  bool Known() const {
    return read_gbps > 0 || int8_dot_tops > 0 || fp32_tflops > 0 || fp16_tflops > 0 || coopmat_int8_tops > 0 ||
           coopmat_fp16_tflops > 0;
  }
};

struct TargetProfile {
  std::string name;         // profile name (built-in name or the file's profile key)
  std::string label;        // human description
  std::string source;       // where the values come from (device report, spec)
  uint32_t api_version = 0; // VK_MAKE_API_VERSION(0, major, minor, patch)

  // Features.
  bool shader_integer_dot_product = false;
  bool int_dot_4x8_packed_signed_accelerated = false;
  bool shader_int8 = false;
  bool shader_float16 = false;
  bool shader_int16 = false;
  bool storage_buffer_8bit_access = false;
  bool storage_buffer_16bit_access = false;
  bool subgroup_size_control = false;
  bool compute_full_subgroups = false;
  bool cooperative_matrix = false;  // VK_KHR_cooperative_matrix feature

  // Subgroups.
  uint32_t subgroup_size = 0;              // default (VkPhysicalDeviceSubgroupProperties)
  uint32_t min_subgroup_size = 0;          // 0 = unknown
  uint32_t max_subgroup_size = 0;
  bool subgroup_arithmetic_compute = false; // ARITHMETIC bit and COMPUTE stage
  bool required_subgroup_size_compute = false;  // requiredSubgroupSizeStages has COMPUTE
  uint32_t tuned_subgroup_size = 0;        // sidecar: exact width to tune for (0 = none)

  // Limits.
  uint32_t max_compute_shared_memory_size = 16384;
  uint32_t max_compute_work_group_invocations = 128;
  uint32_t max_compute_work_group_size[3] = {128, 128, 64};
  uint32_t max_compute_work_group_count[3] = {65535, 65535, 65535};
  uint64_t max_storage_buffer_range = 134217728;
  uint32_t max_per_stage_descriptor_storage_buffers = 4;
  uint32_t max_push_constants_size = 128;
  uint32_t min_storage_buffer_offset_alignment = 256;

  std::vector<std::string> extensions;
  std::vector<CoopMatShape> coopmat_shapes;  // sidecar
  std::vector<std::string> quirks;           // sidecar, free-form identifiers (HasQuirk)

  // Sidecar tuning: M at or below which GEMV is chosen over tiled GEMM (0 = compiler default).
  uint32_t gemv_max_m = 0;
  // Sidecar: the same threshold where the alternative is the int8 cooperative-matrix GEMM (int8
  // weights on the int8 path), which overtakes the GEMV much earlier; 4x it for layers of fewer
  // than 64 column blocks, which fill few multiprocessors (0 = gemv_max_m applies).
  uint32_t coopmat_gemv_max_m = 0;
  // Sidecar: rows per thread (4 or 8) of the tiled GEMM for int4 weights (0 = 4; applied to
  // groups of 128 values or more) and for int8 weights on the int-dot path (0 = 4); either only
  // while the taller tiles leave enough workgroups (linear::kMinWorkgroupsForTallTiles).
  uint32_t gemm_rows_int4 = 0;
  uint32_t gemm_rows_int8 = 0;
  // Sidecar: the im2col-vs-direct rule for dense (groups == 1) non-pointwise int8 convolutions.
  // Both 0 (the default, e.g. Mali and desktop GPUs): always im2col + GEMM. Otherwise im2col
  // only when Cin >= conv_im2col_min_channels or OH*OW <= conv_im2col_max_pixels, else the
  // direct kernel (Adreno: 32 and 4096, where im2col of narrow, large maps lost in ET-VK's
  // measurements; ../shared/research/etvk.md 5.1).
  uint32_t conv_im2col_min_channels = 0;
  uint32_t conv_im2col_max_pixels = 0;

  // Sidecar tuning of the linear kernels (`vkqc tune` writes them; 0 = the compiler's default).
  uint32_t gemv_threads = 0;   // GEMV workgroup size (power of two)
  uint32_t gemv_channels = 0;  // GEMV output channels per workgroup (1, 2, 4, 8, 16)
  uint32_t gemv_unroll = 0;    // GEMV 16-byte weight units per thread and iteration (1, 2, 4)
  uint32_t gemm_tile = 0;      // int-dot/dequant tiled GEMM output tile edge: 32 or 64

  Roofline roofline;  // sidecar "roofline"; unknown unless measured

  bool HasExtension(const std::string& ext) const;
};

// Parse a Vulkan Profiles JSON document (as `vulkaninfo --json` or gpuinfo.org writes it).
// `profile_name` selects one entry of "profiles" (empty: the first). `sidecar_json` may be empty.
// `origin` names the file for error messages.
Result<TargetProfile> ParseProfileJson(const std::string& json_text, const std::string& sidecar_json,
                                       const std::string& origin, const std::string& profile_name = "");

// Load by built-in name ("lavapipe", "nvidia-hopper", ...) or by path to a .json file
// (its sidecar `X.vkqc.json` is read when present).
Result<TargetProfile> LoadProfile(const std::string& name_or_path);

// Whether the profile's sidecar lists quirk `q` (profiles/README.md).
bool HasQuirk(const TargetProfile& p, const std::string& q);

struct BuiltinProfileInfo {
  std::string name;
  std::string summary;  // one line
};
// Built-in profiles are embedded in the binary at build time from profiles/.
std::vector<BuiltinProfileInfo> ListBuiltinProfiles();

// Serialize a profile as Vulkan Profiles JSON plus its sidecar, which ParseProfileJson reads
// back to an equal TargetProfile. Used by `vkqc probe -o X.json` (writes X.json, X.vkqc.json).
struct ProfileFiles {
  std::string profile_json;
  std::string sidecar_json;
};
ProfileFiles WriteProfileJson(const TargetProfile& p);

// The roofline of a built-in profile name, a profile .json (with its sidecar), or a sidecar
// file on its own (a path ending in ".vkqc.json", validated like any sidecar). The result may be
// empty (Roofline::Known() false) when the file has none.
Result<Roofline> LoadRoofline(const std::string& name_or_path);

// `sidecar_json` with its "roofline" member set to `r`, every other member kept as it was; an
// empty `sidecar_json` gives a new sidecar holding only the roofline. Text that is not a valid
// vkqc sidecar (not JSON, a Vulkan Profiles document, an unknown key...) is refused, naming
// `origin`, so a caller never overwrites a file it does not understand.
Result<std::string> SetSidecarRoofline(const std::string& sidecar_json, const std::string& origin, const Roofline& r);

// `sidecar_json` with the linear tuning members (gemv_max_m, gemv_threads, gemv_channels,
// gemv_unroll, gemm_tile) set from `tuned`, everything else kept; refusals as above.
Result<std::string> SetSidecarTuning(const std::string& sidecar_json, const std::string& origin,
                                     const TargetProfile& tuned);

}  // namespace vkqc
