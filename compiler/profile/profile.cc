// Target profiles: Vulkan Profiles JSON (+ vkqc sidecar) -> TargetProfile (DESIGN 2.2).
//
// A profile's requirements are the capability blocks it lists (the first of each list of
// alternatives) plus those of the profiles it names under "profiles" that the same document
// defines (merged first, depth first; names defined elsewhere are ignored). Every block is a
// requirement, so blocks merge to the strongest statement, following vk.xml's limittype:
//   booleans (features, "...Accelerated" properties)  OR
//   "max*" limits, subgroupSize                        maximum (element-wise for arrays)
//   "min*" limits (alignment, minSubgroupSize)         minimum
//   flag lists (stages, subgroup operations)           union
//   extensions                                         union, in first-seen order
// A member may sit in a core aggregate (VkPhysicalDeviceVulkan1xFeatures/Properties) or in its
// extension struct, with or without a KHR/EXT suffix; all spellings feed the same field.
// Only members the compiler reads are type-checked; anything else in the document is ignored.
#include "compiler/profile/profile.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "compiler/common/embedded.h"

namespace vkqc {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kSchema = "https://schema.khronos.org/vulkan/profiles-0.8-latest.json#";
constexpr const char* kComputeStage = "VK_SHADER_STAGE_COMPUTE_BIT";
constexpr const char* kAllStages = "VK_SHADER_STAGE_ALL";
constexpr const char* kArithmeticOp = "VK_SUBGROUP_FEATURE_ARITHMETIC_BIT";
constexpr uint64_t kMaxFileBytes = 64ull << 20;

// What the merged capability blocks say; nullopt / false / empty = no block said it.
struct Caps {
  bool shader_integer_dot_product = false;
  bool int_dot_accelerated = false;
  bool shader_int8 = false;
  bool shader_float16 = false;
  bool shader_int16 = false;
  bool storage_8bit = false;
  bool storage_16bit = false;
  bool subgroup_size_control = false;
  bool compute_full_subgroups = false;
  bool cooperative_matrix = false;

  std::optional<uint64_t> subgroup_size, min_subgroup_size, max_subgroup_size;
  std::set<std::string> subgroup_stages, subgroup_ops, required_size_stages;

  std::optional<uint64_t> shared_memory, invocations, storage_range, storage_buffers, push_constants,
      storage_alignment;
  std::optional<std::array<uint64_t, 3>> work_group_size, work_group_count;

  std::vector<std::string> extensions;
  std::set<std::string> extension_set;
};

enum class Merge { Max, Min };

struct BoolMember {
  const char* strukt;  // canonical struct name (no KHR/EXT suffix)
  const char* member;
  bool Caps::*field;
};
struct NumberMember {
  const char* strukt;
  const char* member;
  std::optional<uint64_t> Caps::*field;
  Merge merge;
};
struct FlagsMember {
  const char* strukt;
  const char* member;
  std::set<std::string> Caps::*field;
};

constexpr BoolMember kFeatures[] = {
    {"VkPhysicalDeviceFeatures", "shaderInt16", &Caps::shader_int16},
    {"VkPhysicalDeviceVulkan11Features", "storageBuffer16BitAccess", &Caps::storage_16bit},
    {"VkPhysicalDevice16BitStorageFeatures", "storageBuffer16BitAccess", &Caps::storage_16bit},
    {"VkPhysicalDeviceVulkan12Features", "shaderInt8", &Caps::shader_int8},
    {"VkPhysicalDeviceVulkan12Features", "shaderFloat16", &Caps::shader_float16},
    {"VkPhysicalDeviceVulkan12Features", "storageBuffer8BitAccess", &Caps::storage_8bit},
    {"VkPhysicalDeviceShaderFloat16Int8Features", "shaderInt8", &Caps::shader_int8},
    {"VkPhysicalDeviceShaderFloat16Int8Features", "shaderFloat16", &Caps::shader_float16},
    {"VkPhysicalDeviceFloat16Int8Features", "shaderInt8", &Caps::shader_int8},
    {"VkPhysicalDeviceFloat16Int8Features", "shaderFloat16", &Caps::shader_float16},
    {"VkPhysicalDevice8BitStorageFeatures", "storageBuffer8BitAccess", &Caps::storage_8bit},
    {"VkPhysicalDeviceVulkan13Features", "shaderIntegerDotProduct", &Caps::shader_integer_dot_product},
    {"VkPhysicalDeviceVulkan13Features", "subgroupSizeControl", &Caps::subgroup_size_control},
    {"VkPhysicalDeviceVulkan13Features", "computeFullSubgroups", &Caps::compute_full_subgroups},
    {"VkPhysicalDeviceShaderIntegerDotProductFeatures", "shaderIntegerDotProduct",
     &Caps::shader_integer_dot_product},
    {"VkPhysicalDeviceSubgroupSizeControlFeatures", "subgroupSizeControl", &Caps::subgroup_size_control},
    {"VkPhysicalDeviceSubgroupSizeControlFeatures", "computeFullSubgroups", &Caps::compute_full_subgroups},
    {"VkPhysicalDeviceCooperativeMatrixFeatures", "cooperativeMatrix", &Caps::cooperative_matrix},
};

constexpr BoolMember kBoolProperties[] = {
    {"VkPhysicalDeviceVulkan13Properties", "integerDotProduct4x8BitPackedSignedAccelerated",
     &Caps::int_dot_accelerated},
    {"VkPhysicalDeviceShaderIntegerDotProductProperties", "integerDotProduct4x8BitPackedSignedAccelerated",
     &Caps::int_dot_accelerated},
};

constexpr NumberMember kNumberProperties[] = {
    {"VkPhysicalDeviceSubgroupProperties", "subgroupSize", &Caps::subgroup_size, Merge::Max},
    {"VkPhysicalDeviceVulkan11Properties", "subgroupSize", &Caps::subgroup_size, Merge::Max},
    {"VkPhysicalDeviceSubgroupSizeControlProperties", "minSubgroupSize", &Caps::min_subgroup_size, Merge::Min},
    {"VkPhysicalDeviceSubgroupSizeControlProperties", "maxSubgroupSize", &Caps::max_subgroup_size, Merge::Max},
    {"VkPhysicalDeviceVulkan13Properties", "minSubgroupSize", &Caps::min_subgroup_size, Merge::Min},
    {"VkPhysicalDeviceVulkan13Properties", "maxSubgroupSize", &Caps::max_subgroup_size, Merge::Max},
};

constexpr FlagsMember kFlagsProperties[] = {
    {"VkPhysicalDeviceSubgroupProperties", "supportedStages", &Caps::subgroup_stages},
    {"VkPhysicalDeviceSubgroupProperties", "supportedOperations", &Caps::subgroup_ops},
    {"VkPhysicalDeviceVulkan11Properties", "subgroupSupportedStages", &Caps::subgroup_stages},
    {"VkPhysicalDeviceVulkan11Properties", "subgroupSupportedOperations", &Caps::subgroup_ops},
    {"VkPhysicalDeviceSubgroupSizeControlProperties", "requiredSubgroupSizeStages",
     &Caps::required_size_stages},
    {"VkPhysicalDeviceVulkan13Properties", "requiredSubgroupSizeStages", &Caps::required_size_stages},
};

// VkPhysicalDeviceProperties.limits members; the 32-bit ones are uint32_t in Vulkan.
constexpr NumberMember kLimits[] = {
    {"limits", "maxComputeSharedMemorySize", &Caps::shared_memory, Merge::Max},
    {"limits", "maxComputeWorkGroupInvocations", &Caps::invocations, Merge::Max},
    {"limits", "maxStorageBufferRange", &Caps::storage_range, Merge::Max},
    {"limits", "maxPerStageDescriptorStorageBuffers", &Caps::storage_buffers, Merge::Max},
    {"limits", "maxPushConstantsSize", &Caps::push_constants, Merge::Max},
    {"limits", "minStorageBufferOffsetAlignment", &Caps::storage_alignment, Merge::Min},
};

const std::set<std::string>& KnownComponentTypes() {
  static const std::set<std::string> types = {
      "sint8", "uint8", "sint16", "uint16", "sint32", "uint32", "sint64", "uint64",
      "float16", "float32", "float64", "bfloat16", "float8_e4m3", "float8_e5m2"};
  return types;
}

// "VkPhysicalDeviceFooFeaturesKHR" -> "VkPhysicalDeviceFooFeatures".
std::string CanonicalStruct(const std::string& name) {
  for (const char* suffix : {"KHR", "EXT"}) {
    size_t n = std::strlen(suffix);
    if (name.size() > n && name.compare(name.size() - n, n, suffix) == 0) return name.substr(0, name.size() - n);
  }
  return name;
}

// Short description of a value for error messages; never recurses (documents may nest deeply).
std::string Describe(const Json& v) {
  if (v.is_structured()) return std::string(v.type_name()) + " of " + std::to_string(v.size()) + " entries";
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return std::string(v.type_name()) + " " + s;
}

// Errors from one document: every message starts with its origin.
class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}
  Error Fail(const std::string& what) const { return UserError(origin_ + ": " + what); }

  Result<uint64_t> Uint(const Json& v, const std::string& where, uint64_t max = UINT32_MAX) const {
    if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<int64_t>() < 0))
      return Fail(where + " must be a non-negative integer, got " + Describe(v));
    uint64_t x = v.is_number_unsigned() ? v.get<uint64_t>() : static_cast<uint64_t>(v.get<int64_t>());
    if (x > max) return Fail(where + " = " + std::to_string(x) + " is out of range (max " + std::to_string(max) + ")");
    return x;
  }
  Result<bool> Bool(const Json& v, const std::string& where) const {
    if (!v.is_boolean()) return Fail(where + " must be a boolean, got " + Describe(v));
    return v.get<bool>();
  }
  Result<std::string> String(const Json& v, const std::string& where) const {
    if (!v.is_string()) return Fail(where + " must be a string, got " + Describe(v));
    return v.get<std::string>();
  }
  Status Object(const Json& v, const std::string& where) const {
    if (!v.is_object()) return Fail(where + " must be an object, got " + Describe(v));
    return {};
  }
  Status Array(const Json& v, const std::string& where) const {
    if (!v.is_array()) return Fail(where + " must be an array, got " + Describe(v));
    return {};
  }

 private:
  std::string origin_;
};

void MergeNumber(std::optional<uint64_t>& slot, uint64_t v, Merge merge) {
  if (!slot) slot = v;
  else slot = merge == Merge::Max ? std::max(*slot, v) : std::min(*slot, v);
}

Status ReadFlags(const Reader& r, const Json& v, const std::string& where, std::set<std::string>& out) {
  VKQC_TRY(r.Array(v, where));
  for (const Json& e : v) {
    if (e.is_string()) out.insert(e.get<std::string>());
    else if (!e.is_number_integer())  // vulkaninfo writes bits it cannot name as numbers
      return r.Fail(where + " entries must be flag names (strings), got " + Describe(e));
  }
  return {};
}

Status ApplyLimits(const Reader& r, const Json& limits, const std::string& where, Caps& caps) {
  VKQC_TRY(r.Object(limits, where));
  for (const NumberMember& m : kLimits) {
    auto it = limits.find(m.member);
    if (it == limits.end()) continue;
    uint64_t max = std::strcmp(m.member, "maxStorageBufferRange") == 0 ? UINT64_MAX : UINT32_MAX;
    VKQC_ASSIGN_OR_RETURN(uint64_t v, r.Uint(*it, where + "." + m.member, max));
    MergeNumber(caps.*m.field, v, m.merge);
  }
  for (auto [member, slot] : {std::pair{"maxComputeWorkGroupSize", &caps.work_group_size},
                              std::pair{"maxComputeWorkGroupCount", &caps.work_group_count}}) {
    auto it = limits.find(member);
    if (it == limits.end()) continue;
    std::string w = where + "." + member;
    if (!it->is_array() || it->size() != 3) return r.Fail(w + " must be an array of 3 integers, got " + Describe(*it));
    std::array<uint64_t, 3> v{};
    for (size_t i = 0; i < 3; ++i) {
      VKQC_ASSIGN_OR_RETURN(v[i], r.Uint((*it)[i], w + "[" + std::to_string(i) + "]"));
    }
    if (*slot)
      for (size_t i = 0; i < 3; ++i) v[i] = std::max(v[i], (**slot)[i]);
    *slot = v;
  }
  return {};
}

Status ApplyBlock(const Reader& r, const Json& block, const std::string& block_name, Caps& caps) {
  const std::string where = "capability block \"" + block_name + "\"";
  VKQC_TRY(r.Object(block, where));

  if (auto it = block.find("extensions"); it != block.end()) {
    VKQC_TRY(r.Object(*it, where + ".extensions"));
    for (const auto& [name, spec] : it->items()) {
      VKQC_TRY(r.Uint(spec, where + ".extensions." + name));  // the spec version
      if (caps.extension_set.insert(name).second) caps.extensions.push_back(name);
    }
  }

  if (auto it = block.find("features"); it != block.end()) {
    VKQC_TRY(r.Object(*it, where + ".features"));
    for (const auto& [sname, sval] : it->items()) {
      std::string canon = CanonicalStruct(sname);
      for (const BoolMember& m : kFeatures) {
        if (canon != m.strukt) continue;
        VKQC_TRY(r.Object(sval, where + ".features." + sname));
        if (auto mv = sval.find(m.member); mv != sval.end()) {
          VKQC_ASSIGN_OR_RETURN(bool b, r.Bool(*mv, where + ".features." + sname + "." + m.member));
          caps.*m.field = caps.*m.field || b;
        }
      }
    }
  }

  if (auto it = block.find("properties"); it != block.end()) {
    VKQC_TRY(r.Object(*it, where + ".properties"));
    for (const auto& [sname, sval] : it->items()) {
      const std::string sw = where + ".properties." + sname;
      std::string canon = CanonicalStruct(sname);
      if (canon == "VkPhysicalDeviceProperties") {
        VKQC_TRY(r.Object(sval, sw));
        if (auto lim = sval.find("limits"); lim != sval.end()) VKQC_TRY(ApplyLimits(r, *lim, sw + ".limits", caps));
      }
      for (const BoolMember& m : kBoolProperties) {
        if (canon != m.strukt) continue;
        VKQC_TRY(r.Object(sval, sw));
        if (auto mv = sval.find(m.member); mv != sval.end()) {
          VKQC_ASSIGN_OR_RETURN(bool b, r.Bool(*mv, sw + "." + m.member));
          caps.*m.field = caps.*m.field || b;
        }
      }
      for (const NumberMember& m : kNumberProperties) {
        if (canon != m.strukt) continue;
        VKQC_TRY(r.Object(sval, sw));
        if (auto mv = sval.find(m.member); mv != sval.end()) {
          VKQC_ASSIGN_OR_RETURN(uint64_t v, r.Uint(*mv, sw + "." + m.member));
          MergeNumber(caps.*m.field, v, m.merge);
        }
      }
      for (const FlagsMember& m : kFlagsProperties) {
        if (canon != m.strukt) continue;
        VKQC_TRY(r.Object(sval, sw));
        if (auto mv = sval.find(m.member); mv != sval.end())
          VKQC_TRY(ReadFlags(r, *mv, sw + "." + m.member, caps.*m.field));
      }
    }
  }
  return {};
}

// VK_MAKE_API_VERSION(0, major, minor, patch) from "major.minor.patch".
Result<uint32_t> ParseApiVersion(const Reader& r, const Json& v, const std::string& where) {
  VKQC_ASSIGN_OR_RETURN(std::string s, r.String(v, where));
  const uint32_t max[3] = {127, 1023, 4095};
  uint32_t parts[3] = {0, 0, 0};
  size_t i = 0, digits = 0;
  bool ok = !s.empty();
  for (char ch : s) {
    if (ch == '.' && digits > 0 && i < 2) {
      ++i, digits = 0;
    } else if (ch >= '0' && ch <= '9' && digits < 5) {
      parts[i] = parts[i] * 10 + static_cast<uint32_t>(ch - '0');
      ++digits;
    } else {
      ok = false;
    }
  }
  ok = ok && i == 2 && digits > 0 && parts[0] <= max[0] && parts[1] <= max[1] && parts[2] <= max[2];
  if (!ok) return r.Fail(where + " must be \"major.minor.patch\" (e.g. \"1.3.276\"), got \"" + s + "\"");
  return (parts[0] << 22) | (parts[1] << 12) | parts[2];
}

struct Sidecar {
  std::optional<std::string> name, profile, source;
  std::optional<uint32_t> tuned_subgroup_size, gemv_max_m, coopmat_gemv_max_m, gemm_rows_int4, gemm_rows_int8,
      conv_im2col_min_channels, conv_im2col_max_pixels;
  uint32_t gemv_threads = 0, gemv_channels = 0, gemv_unroll = 0, gemm_tile = 0;
  std::vector<CoopMatShape> coopmat_shapes;
  std::vector<std::string> quirks;
  Roofline roofline;
};

constexpr std::pair<const char*, double Roofline::*> kRooflineRates[] = {
    {"read_gbps", &Roofline::read_gbps},
    {"int8_dot_tops", &Roofline::int8_dot_tops},
    {"fp32_tflops", &Roofline::fp32_tflops},
    {"fp16_tflops", &Roofline::fp16_tflops},
    {"coopmat_int8_tops", &Roofline::coopmat_int8_tops},
    {"coopmat_fp16_tflops", &Roofline::coopmat_fp16_tflops}};
constexpr std::pair<const char*, std::string Roofline::*> kRooflineTexts[] = {
    {"device", &Roofline::device}, {"driver", &Roofline::driver}, {"date", &Roofline::date}};

// "roofline": {"device", "driver", "date": strings; rates: a positive number, or null when not
// measured}. Every member is optional; unknown members are errors.
Result<Roofline> ParseRoofline(const Reader& r, const Json& j) {
  VKQC_TRY(r.Object(j, "\"roofline\""));
  Roofline out;
  for (const auto& [key, v] : j.items()) {
    const std::string w = "roofline." + key;
    bool known = false;
    for (const auto& [k, field] : kRooflineTexts)
      if (key == k) {
        known = true;
        VKQC_ASSIGN_OR_RETURN(out.*field, r.String(v, w));
      }
    for (const auto& [k, field] : kRooflineRates)
      if (key == k) {
        known = true;
        if (v.is_null()) continue;
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0)
          return r.Fail(w + " must be a positive number (or null when not measured), got " + Describe(v));
        out.*field = v.get<double>();
      }
    if (!known && (key.empty() || key[0] != '$'))
      return r.Fail("unknown key \"" + w + "\" (known: device, driver, date, read_gbps, int8_dot_tops, "
                    "fp32_tflops, fp16_tflops, coopmat_int8_tops, coopmat_fp16_tflops)");
  }
  return out;
}

Json RooflineJson(const Roofline& rl) {
  Json j = Json::object();
  for (const auto& [k, field] : kRooflineTexts) j[k] = rl.*field;
  for (const auto& [k, field] : kRooflineRates) j[k] = rl.*field > 0 ? Json(rl.*field) : Json(nullptr);
  return j;
}

Result<Sidecar> ParseSidecar(const Reader& r, const Json& j) {
  Sidecar sc;
  VKQC_TRY(r.Object(j, "the sidecar"));
  for (const auto& [key, v] : j.items()) {
    if (!key.empty() && key[0] == '$') continue;  // "$comment", "$schema"
    if (key == "name" || key == "profile" || key == "source") {
      VKQC_ASSIGN_OR_RETURN(std::string s, r.String(v, "\"" + key + "\""));
      (key == "name" ? sc.name : key == "profile" ? sc.profile : sc.source) = s;
    } else if (key == "tuned_subgroup_size" || key == "gemv_max_m" || key == "coopmat_gemv_max_m") {
      VKQC_ASSIGN_OR_RETURN(uint64_t x, r.Uint(v, "\"" + key + "\""));
      if (x > UINT32_MAX) return r.Fail("\"" + key + "\" = " + std::to_string(x) + " is too large");
      (key == "gemv_max_m" ? sc.gemv_max_m : key == "coopmat_gemv_max_m" ? sc.coopmat_gemv_max_m : sc.tuned_subgroup_size) =
          static_cast<uint32_t>(x);
    } else if (key == "gemm_rows_int4" || key == "gemm_rows_int8") {
      VKQC_ASSIGN_OR_RETURN(uint64_t x, r.Uint(v, "\"" + key + "\""));
      if (x != 0 && x != 4 && x != 8) return r.Fail("\"" + key + "\" = " + std::to_string(x) + " (0, 4 or 8)");
      (key == "gemm_rows_int4" ? sc.gemm_rows_int4 : sc.gemm_rows_int8) = static_cast<uint32_t>(x);
    } else if (key == "conv_im2col_min_channels" || key == "conv_im2col_max_pixels") {
      VKQC_ASSIGN_OR_RETURN(uint64_t x, r.Uint(v, "\"" + key + "\""));
      if (x > UINT32_MAX) return r.Fail("\"" + key + "\" = " + std::to_string(x) + " is too large");
      (key == "conv_im2col_min_channels" ? sc.conv_im2col_min_channels : sc.conv_im2col_max_pixels) =
          static_cast<uint32_t>(x);
    } else if (key == "gemv_threads" || key == "gemv_channels" || key == "gemv_unroll" || key == "gemm_tile") {
      VKQC_ASSIGN_OR_RETURN(uint64_t x, r.Uint(v, "\"" + key + "\""));
      const bool pow2 = x != 0 && (x & (x - 1)) == 0;
      if (key == "gemv_threads" && !(x == 0 || (pow2 && x >= 4 && x <= 1024)))
        return r.Fail("\"gemv_threads\" = " + std::to_string(x) + " must be 0 or a power of two in 4..1024");
      if (key == "gemv_channels" && !(x == 0 || (pow2 && x <= 16)))
        return r.Fail("\"gemv_channels\" = " + std::to_string(x) + " must be 0, 1, 2, 4, 8 or 16");
      if (key == "gemv_unroll" && !(x == 0 || (pow2 && x <= 4)))
        return r.Fail("\"gemv_unroll\" = " + std::to_string(x) + " must be 0, 1, 2 or 4");
      if (key == "gemm_tile" && !(x == 0 || x == 32 || x == 64))
        return r.Fail("\"gemm_tile\" = " + std::to_string(x) + " must be 0 (automatic), 32 or 64");
      (key == "gemv_threads"    ? sc.gemv_threads
       : key == "gemv_channels" ? sc.gemv_channels
       : key == "gemv_unroll"   ? sc.gemv_unroll
                                : sc.gemm_tile) = static_cast<uint32_t>(x);
    } else if (key == "quirks") {
      VKQC_TRY(r.Array(v, "\"quirks\""));
      for (const Json& q : v) {
        VKQC_ASSIGN_OR_RETURN(std::string s, r.String(q, "\"quirks\" entries"));
        sc.quirks.push_back(s);
      }
    } else if (key == "coopmat_shapes") {
      VKQC_TRY(r.Array(v, "\"coopmat_shapes\""));
      for (size_t i = 0; i < v.size(); ++i) {
        const std::string w = "coopmat_shapes[" + std::to_string(i) + "]";
        const Json& e = v[i];
        VKQC_TRY(r.Object(e, w));
        CoopMatShape s;
        for (auto [k, dim] : {std::pair{"m", &s.m}, std::pair{"n", &s.n}, std::pair{"k", &s.k}}) {
          auto it = e.find(k);
          if (it == e.end()) return r.Fail(w + " has no \"" + k + "\"");
          VKQC_ASSIGN_OR_RETURN(uint64_t x, r.Uint(*it, w + "." + k));
          *dim = static_cast<uint32_t>(x);
        }
        for (auto [k, type] : {std::pair{"a", &s.a_type}, std::pair{"b", &s.b_type}, std::pair{"c", &s.c_type},
                               std::pair{"result", &s.result_type}}) {
          auto it = e.find(k);
          if (it == e.end()) return r.Fail(w + " has no \"" + k + "\"");
          VKQC_ASSIGN_OR_RETURN(*type, r.String(*it, w + "." + k));
          if (!KnownComponentTypes().count(*type))
            return r.Fail(w + "." + k + " = \"" + *type + "\" is not a component type (sint8, uint8, float16, ...)");
        }
        sc.coopmat_shapes.push_back(std::move(s));
      }
    } else if (key == "roofline") {
      VKQC_ASSIGN_OR_RETURN(sc.roofline, ParseRoofline(r, v));
    } else {
      return r.Fail("unknown sidecar key \"" + key +
                    "\" (known: name, profile, source, tuned_subgroup_size, gemv_max_m, coopmat_gemv_max_m, gemm_rows_int4, "
                    "gemm_rows_int8, conv_im2col_min_channels, "
                    "conv_im2col_max_pixels, gemv_threads, gemv_channels, gemv_unroll, gemm_tile, coopmat_shapes, "
                    "quirks, roofline)");
    }
  }
  return sc;
}

Result<Json> ParseJsonText(const std::string& text, const Reader& r) {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for numbers such as 1e999
    return r.Fail(std::string("not valid JSON: ") + e.what());
  }
}

// Merges `name` (a key of doc["profiles"]) and the profiles it inherits into `caps`.
Status MergeProfile(const Reader& r, const Json& profiles, const Json& blocks, const std::string& name,
                    std::set<std::string>& visited, Caps& caps, uint32_t& api) {
  if (!visited.insert(name).second) return {};
  const std::string where = "profile \"" + name + "\"";
  const Json& p = *profiles.find(name);
  VKQC_TRY(r.Object(p, where));
  if (auto inh = p.find("profiles"); inh != p.end()) {
    VKQC_TRY(r.Array(*inh, where + ".profiles"));
    for (const Json& parent : *inh) {
      VKQC_ASSIGN_OR_RETURN(std::string pn, r.String(parent, where + ".profiles entries"));
      if (profiles.contains(pn)) VKQC_TRY(MergeProfile(r, profiles, blocks, pn, visited, caps, api));
    }
  }
  if (auto v = p.find("api-version"); v != p.end()) {
    VKQC_ASSIGN_OR_RETURN(uint32_t a, ParseApiVersion(r, *v, where + ".api-version"));
    api = std::max(api, a);
  }
  auto list = p.find("capabilities");
  if (list == p.end()) return r.Fail(where + " has no \"capabilities\" list");
  VKQC_TRY(r.Array(*list, where + ".capabilities"));
  for (const Json& entry : *list) {
    const Json* chosen = &entry;
    if (entry.is_array()) {  // alternatives: the first is the one the compiler targets
      if (entry.empty()) return r.Fail(where + ".capabilities has an empty list of alternatives");
      chosen = &entry[0];
    }
    VKQC_ASSIGN_OR_RETURN(std::string bn, r.String(*chosen, where + ".capabilities entries"));
    auto b = blocks.find(bn);
    if (b == blocks.end())
      return r.Fail(where + " lists capability block \"" + bn + "\", which \"capabilities\" does not define");
    VKQC_TRY(ApplyBlock(r, *b, bn, caps));
  }
  return {};
}

bool HasCompute(const std::set<std::string>& stages) {
  return stages.count(kComputeStage) || stages.count(kAllStages);
}

TargetProfile ToTarget(const Caps& c) {
  TargetProfile t;
  t.shader_integer_dot_product = c.shader_integer_dot_product;
  t.int_dot_4x8_packed_signed_accelerated = c.int_dot_accelerated;
  t.shader_int8 = c.shader_int8;
  t.shader_float16 = c.shader_float16;
  t.shader_int16 = c.shader_int16;
  t.storage_buffer_8bit_access = c.storage_8bit;
  t.storage_buffer_16bit_access = c.storage_16bit;
  t.subgroup_size_control = c.subgroup_size_control;
  t.compute_full_subgroups = c.compute_full_subgroups;
  t.cooperative_matrix = c.cooperative_matrix;
  t.subgroup_size = static_cast<uint32_t>(c.subgroup_size.value_or(0));
  t.min_subgroup_size = static_cast<uint32_t>(c.min_subgroup_size.value_or(0));
  t.max_subgroup_size = static_cast<uint32_t>(c.max_subgroup_size.value_or(0));
  t.subgroup_arithmetic_compute = c.subgroup_ops.count(kArithmeticOp) && HasCompute(c.subgroup_stages);
  t.required_subgroup_size_compute = HasCompute(c.required_size_stages);
  auto set32 = [](uint32_t& dst, const std::optional<uint64_t>& v) {
    if (v) dst = static_cast<uint32_t>(*v);
  };
  set32(t.max_compute_shared_memory_size, c.shared_memory);
  set32(t.max_compute_work_group_invocations, c.invocations);
  set32(t.max_per_stage_descriptor_storage_buffers, c.storage_buffers);
  set32(t.max_push_constants_size, c.push_constants);
  set32(t.min_storage_buffer_offset_alignment, c.storage_alignment);
  if (c.storage_range) t.max_storage_buffer_range = *c.storage_range;
  for (size_t i = 0; i < 3; ++i) {
    if (c.work_group_size) t.max_compute_work_group_size[i] = static_cast<uint32_t>((*c.work_group_size)[i]);
    if (c.work_group_count) t.max_compute_work_group_count[i] = static_cast<uint32_t>((*c.work_group_count)[i]);
  }
  t.extensions = c.extensions;
  return t;
}

Result<TargetProfile> Parse(const std::string& json_text, const std::string& sidecar_text,
                            const std::string& origin, const std::string& sidecar_origin,
                            const std::string& profile_name) {
  Reader r(origin);
  VKQC_ASSIGN_OR_RETURN(Json doc, ParseJsonText(json_text, r));
  VKQC_TRY(r.Object(doc, "the document"));

  // Sidecar: the "vkqc" member of the document, overridden key by key by the sidecar file.
  Json side = Json::object();
  if (auto it = doc.find("vkqc"); it != doc.end()) {
    VKQC_TRY(r.Object(*it, "\"vkqc\""));
    side = *it;
  }
  Reader sr(sidecar_origin);
  if (!sidecar_text.empty()) {
    VKQC_ASSIGN_OR_RETURN(Json file_side, ParseJsonText(sidecar_text, sr));
    VKQC_TRY(sr.Object(file_side, "the sidecar"));
    for (const auto& [k, v] : file_side.items()) side[k] = v;
  }
  VKQC_ASSIGN_OR_RETURN(Sidecar sc, ParseSidecar(sidecar_text.empty() ? r : sr, side));

  auto profiles = doc.find("profiles");
  if (profiles == doc.end())
    return r.Fail("no \"profiles\" object: not a Vulkan Profiles JSON document (vulkaninfo --json writes one)");
  VKQC_TRY(r.Object(*profiles, "\"profiles\""));
  if (profiles->empty()) return r.Fail("\"profiles\" is empty");
  auto blocks = doc.find("capabilities");
  if (blocks == doc.end()) return r.Fail("no \"capabilities\" object");
  VKQC_TRY(r.Object(*blocks, "\"capabilities\""));

  std::string selected = profile_name;
  if (!selected.empty() && sc.profile && *sc.profile != selected)
    return sr.Fail("the sidecar describes profile \"" + *sc.profile + "\" but \"" + selected + "\" was selected");
  if (selected.empty()) selected = sc.profile ? *sc.profile : profiles->begin().key();
  if (!profiles->contains(selected)) {
    std::string known;
    for (const auto& [k, v] : profiles->items()) known += (known.empty() ? "" : ", ") + k;
    return r.Fail("no profile named \"" + selected + "\" (the document defines: " + known + ")");
  }

  Caps caps;
  uint32_t api = 0;
  std::set<std::string> visited;
  VKQC_TRY(MergeProfile(r, *profiles, *blocks, selected, visited, caps, api));
  const Json& sel = *profiles->find(selected);
  if (!sel.contains("api-version")) return r.Fail("profile \"" + selected + "\" has no \"api-version\"");

  TargetProfile t = ToTarget(caps);
  t.api_version = api;
  t.name = sc.name.value_or(selected);
  t.label = selected;
  if (auto l = sel.find("label"); l != sel.end()) {
    VKQC_ASSIGN_OR_RETURN(t.label, r.String(*l, "profile \"" + selected + "\".label"));
  }
  if (sc.source) {
    t.source = *sc.source;
  } else if (auto d = sel.find("description"); d != sel.end()) {
    VKQC_ASSIGN_OR_RETURN(t.source, r.String(*d, "profile \"" + selected + "\".description"));
  }
  if (sc.tuned_subgroup_size) t.tuned_subgroup_size = *sc.tuned_subgroup_size;
  else if (t.min_subgroup_size != 0 && t.min_subgroup_size == t.max_subgroup_size)
    t.tuned_subgroup_size = t.min_subgroup_size;
  t.gemv_max_m = sc.gemv_max_m.value_or(0);
  t.coopmat_gemv_max_m = sc.coopmat_gemv_max_m.value_or(0);
  t.gemm_rows_int4 = sc.gemm_rows_int4.value_or(0);
  t.gemm_rows_int8 = sc.gemm_rows_int8.value_or(0);
  t.conv_im2col_min_channels = sc.conv_im2col_min_channels.value_or(0);
  t.conv_im2col_max_pixels = sc.conv_im2col_max_pixels.value_or(0);
  t.gemv_threads = sc.gemv_threads;
  t.gemv_channels = sc.gemv_channels;
  t.gemv_unroll = sc.gemv_unroll;
  t.gemm_tile = sc.gemm_tile;
  t.coopmat_shapes = std::move(sc.coopmat_shapes);
  t.quirks = std::move(sc.quirks);
  t.roofline = std::move(sc.roofline);
  return t;
}

Result<std::string> ReadFile(const std::string& path) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return UserError(path + ": no such file");
  if (!std::filesystem::is_regular_file(status)) return UserError(path + ": not a regular file");
  uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return UserError(path + ": cannot read: " + ec.message());
  if (size > kMaxFileBytes) return UserError(path + ": too large for a profile (" + std::to_string(size) + " bytes)");
  std::ifstream in(path, std::ios::binary);
  if (!in) return UserError(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return UserError(path + ": read error");
  return ss.str();
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

const EmbeddedFile* FindEmbedded(const std::string& file_name) {
  for (size_t i = 0; i < vkqc_embedded_profiles_count; ++i)
    if (file_name == vkqc_embedded_profiles[i].name) return &vkqc_embedded_profiles[i];
  return nullptr;
}

std::vector<std::string> BuiltinNames() {
  std::vector<std::string> names;
  for (size_t i = 0; i < vkqc_embedded_profiles_count; ++i) {
    std::string f = vkqc_embedded_profiles[i].name;
    if (EndsWith(f, ".json") && !EndsWith(f, ".vkqc.json")) names.push_back(f.substr(0, f.size() - 5));
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string ApiString(uint32_t v) {
  return std::to_string((v >> 22) & 0x7f) + "." + std::to_string((v >> 12) & 0x3ff) + "." + std::to_string(v & 0xfff);
}

std::string SanitizeName(const std::string& name) {
  std::string s;
  for (char ch : name) s += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return s.empty() ? "unnamed" : s;
}

std::string Dump(const Json& j) { return j.dump(4, ' ', false, Json::error_handler_t::replace) + "\n"; }

}  // namespace

bool TargetProfile::HasExtension(const std::string& ext) const {
  return std::find(extensions.begin(), extensions.end(), ext) != extensions.end();
}

Result<TargetProfile> ParseProfileJson(const std::string& json_text, const std::string& sidecar_json,
                                       const std::string& origin, const std::string& profile_name) {
  return Parse(json_text, sidecar_json, origin, origin + " (sidecar)", profile_name);
}

bool HasQuirk(const TargetProfile& p, const std::string& q) {
  return std::find(p.quirks.begin(), p.quirks.end(), q) != p.quirks.end();
}

Result<TargetProfile> LoadProfile(const std::string& name_or_path) {
  if (const EmbeddedFile* f = FindEmbedded(name_or_path + ".json")) {
    const EmbeddedFile* side = FindEmbedded(name_or_path + ".vkqc.json");
    std::string origin = "built-in profile " + name_or_path + " (profiles/" + name_or_path + ".json)";
    VKQC_ASSIGN_OR_RETURN(TargetProfile t,
                          Parse(std::string(f->view()), side ? std::string(side->view()) : std::string(), origin,
                                "built-in profile " + name_or_path + " (profiles/" + name_or_path + ".vkqc.json)",
                                ""));
    t.name = name_or_path;
    return t;
  }
  std::error_code ec;
  if (!std::filesystem::exists(name_or_path, ec)) {
    std::string known;
    for (const std::string& n : BuiltinNames()) known += (known.empty() ? "" : ", ") + n;
    if (name_or_path.find('/') != std::string::npos || EndsWith(name_or_path, ".json"))
      return UserError(name_or_path + ": no such file (built-in profiles: " + known + ")");
    return UserError("unknown target profile \"" + name_or_path + "\": not a built-in (" + known +
                     ") and no such file");
  }
  VKQC_ASSIGN_OR_RETURN(std::string text, ReadFile(name_or_path));
  std::string stem = EndsWith(name_or_path, ".json") ? name_or_path.substr(0, name_or_path.size() - 5) : name_or_path;
  std::string side_path = stem + ".vkqc.json";
  std::string side_text;
  if (std::filesystem::exists(side_path, ec)) {
    VKQC_ASSIGN_OR_RETURN(side_text, ReadFile(side_path));
  }
  return Parse(text, side_text, name_or_path, side_path, "");
}

std::vector<BuiltinProfileInfo> ListBuiltinProfiles() {
  std::vector<BuiltinProfileInfo> out;
  for (const std::string& name : BuiltinNames()) {
    Result<TargetProfile> r = LoadProfile(name);
    if (!r.ok()) {
      out.push_back({name, "invalid: " + r.error().message});
      continue;
    }
    const TargetProfile& p = r.value();
    std::string sg = p.subgroup_size ? std::to_string(p.subgroup_size) : "?";
    if (p.min_subgroup_size && p.max_subgroup_size)
      sg += " [" + std::to_string(p.min_subgroup_size) + "-" + std::to_string(p.max_subgroup_size) + "]";
    std::string dot = p.int_dot_4x8_packed_signed_accelerated ? "accelerated"
                      : p.shader_integer_dot_product           ? "not accelerated"
                                                               : "none";
    out.push_back({name, p.label + " | Vulkan " + ApiString(p.api_version) + " | subgroup " + sg +
                             " | int8 dot " + dot + " | shared " +
                             std::to_string(p.max_compute_shared_memory_size / 1024) + " KiB"});
  }
  return out;
}

ProfileFiles WriteProfileJson(const TargetProfile& p) {
  const std::string key = "VP_VKQC_" + SanitizeName(p.name);
  Json ext = Json::object();
  for (const std::string& e : p.extensions) ext[e] = 1;

  Json features = {
      {"VkPhysicalDeviceFeatures", {{"shaderInt16", p.shader_int16}}},
      {"VkPhysicalDeviceShaderFloat16Int8Features",
       {{"shaderInt8", p.shader_int8}, {"shaderFloat16", p.shader_float16}}},
      {"VkPhysicalDevice8BitStorageFeatures", {{"storageBuffer8BitAccess", p.storage_buffer_8bit_access}}},
      {"VkPhysicalDevice16BitStorageFeatures", {{"storageBuffer16BitAccess", p.storage_buffer_16bit_access}}},
      {"VkPhysicalDeviceShaderIntegerDotProductFeatures", {{"shaderIntegerDotProduct", p.shader_integer_dot_product}}},
      {"VkPhysicalDeviceSubgroupSizeControlFeatures",
       {{"subgroupSizeControl", p.subgroup_size_control}, {"computeFullSubgroups", p.compute_full_subgroups}}},
      {"VkPhysicalDeviceCooperativeMatrixFeaturesKHR", {{"cooperativeMatrix", p.cooperative_matrix}}},
  };
  Json stages = p.subgroup_arithmetic_compute ? Json::array({kComputeStage}) : Json::array();
  Json ops = p.subgroup_arithmetic_compute ? Json::array({"VK_SUBGROUP_FEATURE_BASIC_BIT", kArithmeticOp})
                                           : Json::array();
  Json required = p.required_subgroup_size_compute ? Json::array({kComputeStage}) : Json::array();
  auto arr3 = [](const uint32_t* v) { return Json::array({v[0], v[1], v[2]}); };
  Json properties = {
      {"VkPhysicalDeviceProperties",
       {{"limits",
         {{"maxComputeSharedMemorySize", p.max_compute_shared_memory_size},
          {"maxComputeWorkGroupInvocations", p.max_compute_work_group_invocations},
          {"maxComputeWorkGroupSize", arr3(p.max_compute_work_group_size)},
          {"maxComputeWorkGroupCount", arr3(p.max_compute_work_group_count)},
          {"maxStorageBufferRange", p.max_storage_buffer_range},
          {"maxPerStageDescriptorStorageBuffers", p.max_per_stage_descriptor_storage_buffers},
          {"maxPushConstantsSize", p.max_push_constants_size},
          {"minStorageBufferOffsetAlignment", p.min_storage_buffer_offset_alignment}}}}},
      {"VkPhysicalDeviceSubgroupProperties",
       {{"subgroupSize", p.subgroup_size}, {"supportedStages", stages}, {"supportedOperations", ops}}},
      {"VkPhysicalDeviceSubgroupSizeControlProperties",
       {{"minSubgroupSize", p.min_subgroup_size},
        {"maxSubgroupSize", p.max_subgroup_size},
        {"requiredSubgroupSizeStages", required}}},
      {"VkPhysicalDeviceShaderIntegerDotProductProperties",
       {{"integerDotProduct4x8BitPackedSignedAccelerated", p.int_dot_4x8_packed_signed_accelerated}}},
  };
  Json doc = {
      {"$schema", kSchema},
      {"capabilities", {{"device", {{"extensions", ext}, {"features", features}, {"properties", properties}}}}},
      {"profiles",
       {{key,
         {{"version", 1},
          {"api-version", ApiString(p.api_version)},
          {"label", p.label},
          {"description", p.source},
          {"capabilities", Json::array({"device"})}}}}},
  };

  Json shapes = Json::array();
  for (const CoopMatShape& s : p.coopmat_shapes)
    shapes.push_back({{"m", s.m}, {"n", s.n}, {"k", s.k}, {"a", s.a_type}, {"b", s.b_type}, {"c", s.c_type},
                      {"result", s.result_type}});
  Json side = {{"name", p.name},
               {"profile", key},
               {"source", p.source},
               {"tuned_subgroup_size", p.tuned_subgroup_size},
               {"gemv_max_m", p.gemv_max_m},
               {"coopmat_gemv_max_m", p.coopmat_gemv_max_m},
               {"gemm_rows_int4", p.gemm_rows_int4},
               {"gemm_rows_int8", p.gemm_rows_int8},
               {"conv_im2col_min_channels", p.conv_im2col_min_channels},
               {"conv_im2col_max_pixels", p.conv_im2col_max_pixels},
               {"gemv_threads", p.gemv_threads},
               {"gemv_channels", p.gemv_channels},
               {"gemv_unroll", p.gemv_unroll},
               {"gemm_tile", p.gemm_tile},
               {"coopmat_shapes", shapes},
               {"quirks", p.quirks}};
  if (p.roofline.Known()) side["roofline"] = RooflineJson(p.roofline);
  return {Dump(doc), Dump(side)};
}

Result<Roofline> LoadRoofline(const std::string& name_or_path) {
  if (!EndsWith(name_or_path, ".vkqc.json")) {
    VKQC_ASSIGN_OR_RETURN(TargetProfile t, LoadProfile(name_or_path));
    return t.roofline;
  }
  VKQC_ASSIGN_OR_RETURN(std::string text, ReadFile(name_or_path));
  Reader r(name_or_path);
  VKQC_ASSIGN_OR_RETURN(Json j, ParseJsonText(text, r));
  VKQC_ASSIGN_OR_RETURN(Sidecar sc, ParseSidecar(r, j));
  return sc.roofline;
}

namespace {
// The sidecar text as JSON (an empty text: an empty sidecar), refusing what is not one.
Result<Json> ExistingSidecar(const std::string& sidecar_json, const std::string& origin) {
  Json j = Json::object();
  if (sidecar_json.empty()) return j;
  Reader r(origin);
  VKQC_ASSIGN_OR_RETURN(j, ParseJsonText(sidecar_json, r));
  if (j.is_object() && (j.contains("profiles") || j.contains("capabilities")))
    return r.Fail("this is a Vulkan Profiles document, not a vkqc sidecar: write to its sidecar "
                  "(the same name ending in .vkqc.json)");
  VKQC_TRY(ParseSidecar(r, j));
  return j;
}
}  // namespace

Result<std::string> SetSidecarRoofline(const std::string& sidecar_json, const std::string& origin,
                                       const Roofline& rl) {
  VKQC_ASSIGN_OR_RETURN(Json j, ExistingSidecar(sidecar_json, origin));
  j["roofline"] = RooflineJson(rl);
  return Dump(j);
}

Result<std::string> SetSidecarTuning(const std::string& sidecar_json, const std::string& origin,
                                     const TargetProfile& t) {
  VKQC_ASSIGN_OR_RETURN(Json j, ExistingSidecar(sidecar_json, origin));
  j["gemv_max_m"] = t.gemv_max_m;
  j["gemv_threads"] = t.gemv_threads;
  j["gemv_channels"] = t.gemv_channels;
  j["gemv_unroll"] = t.gemv_unroll;
  j["gemm_tile"] = t.gemm_tile;
  j["gemm_rows_int4"] = t.gemm_rows_int4;
  j["gemm_rows_int8"] = t.gemm_rows_int8;
  j["coopmat_gemv_max_m"] = t.coopmat_gemv_max_m;
  return Dump(j);
}

}  // namespace vkqc
