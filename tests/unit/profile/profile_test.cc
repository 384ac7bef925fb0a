// Target profiles (DESIGN 2.2): built-ins, Profiles JSON merging rules, sidecar, round trip, errors.
#include "compiler/profile/profile.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

namespace vkqc {
namespace {

using Json = nlohmann::ordered_json;

const char* const kBuiltins[] = {"adreno-7xx",   "amd-rdna3", "android-16",   "android-baseline-2022",
                                 "apple-moltenvk", "intel-arc", "lavapipe",     "mali-valhall",
                                 "nvidia-ada",   "nvidia-hopper"};

constexpr uint32_t Api(uint32_t major, uint32_t minor, uint32_t patch) {
  return (major << 22) | (minor << 12) | patch;
}

bool IsPow2(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

TargetProfile MustLoad(const std::string& name) {
  Result<TargetProfile> r = LoadProfile(name);
  EXPECT_TRUE(r.ok()) << name << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? r.value() : TargetProfile{};
}

// One capability block per entry of `blocks`; profile "VP_TEST" lists `caps` (a JSON array).
std::string MakeDoc(const Json& blocks, const Json& caps, const Json& extra_profiles = Json::object()) {
  Json profiles = {
      {"VP_TEST", {{"version", 1}, {"api-version", "1.3.276"}, {"label", "test"}, {"capabilities", caps}}}};
  for (const auto& [k, v] : extra_profiles.items()) profiles[k] = v;
  return Json{{"$schema", "x"}, {"capabilities", blocks}, {"profiles", profiles}}.dump();
}

TargetProfile MustParse(const std::string& doc, const std::string& sidecar = "", const std::string& name = "") {
  Result<TargetProfile> r = ParseProfileJson(doc, sidecar, "test/doc.json", name);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? r.value() : TargetProfile{};
}

std::string ParseError(const std::string& doc, const std::string& sidecar = "", const std::string& name = "") {
  Result<TargetProfile> r = ParseProfileJson(doc, sidecar, "test/doc.json", name);
  EXPECT_FALSE(r.ok()) << "expected an error";
  if (r.ok()) return "";
  EXPECT_EQ(r.error().kind, ErrorKind::User);
  EXPECT_NE(r.error().message.find("test/doc.json"), std::string::npos) << r.error().message;
  return r.error().message;
}

// Every field of TargetProfile. If this fails, TargetProfile changed: update ExpectSame and
// WriteProfileJson/ParseProfileJson for the new field.
static_assert(sizeof(TargetProfile) == 448, "TargetProfile changed: update ExpectSame and the (de)serializer");

void ExpectSameRoofline(const Roofline& a, const Roofline& b) {
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.driver, b.driver);
  EXPECT_EQ(a.date, b.date);
  EXPECT_EQ(a.read_gbps, b.read_gbps);
  EXPECT_EQ(a.int8_dot_tops, b.int8_dot_tops);
  EXPECT_EQ(a.fp32_tflops, b.fp32_tflops);
  EXPECT_EQ(a.fp16_tflops, b.fp16_tflops);
  EXPECT_EQ(a.coopmat_int8_tops, b.coopmat_int8_tops);
  EXPECT_EQ(a.coopmat_fp16_tflops, b.coopmat_fp16_tflops);
}

void ExpectSame(const TargetProfile& a, const TargetProfile& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.label, b.label);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.api_version, b.api_version);
  EXPECT_EQ(a.shader_integer_dot_product, b.shader_integer_dot_product);
  EXPECT_EQ(a.int_dot_4x8_packed_signed_accelerated, b.int_dot_4x8_packed_signed_accelerated);
  EXPECT_EQ(a.shader_int8, b.shader_int8);
  EXPECT_EQ(a.shader_float16, b.shader_float16);
  EXPECT_EQ(a.shader_int16, b.shader_int16);
  EXPECT_EQ(a.storage_buffer_8bit_access, b.storage_buffer_8bit_access);
  EXPECT_EQ(a.storage_buffer_16bit_access, b.storage_buffer_16bit_access);
  EXPECT_EQ(a.subgroup_size_control, b.subgroup_size_control);
  EXPECT_EQ(a.compute_full_subgroups, b.compute_full_subgroups);
  EXPECT_EQ(a.cooperative_matrix, b.cooperative_matrix);
  EXPECT_EQ(a.subgroup_size, b.subgroup_size);
  EXPECT_EQ(a.min_subgroup_size, b.min_subgroup_size);
  EXPECT_EQ(a.max_subgroup_size, b.max_subgroup_size);
  EXPECT_EQ(a.subgroup_arithmetic_compute, b.subgroup_arithmetic_compute);
  EXPECT_EQ(a.required_subgroup_size_compute, b.required_subgroup_size_compute);
  EXPECT_EQ(a.tuned_subgroup_size, b.tuned_subgroup_size);
  EXPECT_EQ(a.max_compute_shared_memory_size, b.max_compute_shared_memory_size);
  EXPECT_EQ(a.max_compute_work_group_invocations, b.max_compute_work_group_invocations);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(a.max_compute_work_group_size[i], b.max_compute_work_group_size[i]) << i;
    EXPECT_EQ(a.max_compute_work_group_count[i], b.max_compute_work_group_count[i]) << i;
  }
  EXPECT_EQ(a.max_storage_buffer_range, b.max_storage_buffer_range);
  EXPECT_EQ(a.max_per_stage_descriptor_storage_buffers, b.max_per_stage_descriptor_storage_buffers);
  EXPECT_EQ(a.max_push_constants_size, b.max_push_constants_size);
  EXPECT_EQ(a.min_storage_buffer_offset_alignment, b.min_storage_buffer_offset_alignment);
  EXPECT_EQ(a.extensions, b.extensions);
  ASSERT_EQ(a.coopmat_shapes.size(), b.coopmat_shapes.size());
  for (size_t i = 0; i < a.coopmat_shapes.size(); ++i) {
    const CoopMatShape &x = a.coopmat_shapes[i], &y = b.coopmat_shapes[i];
    EXPECT_EQ(x.m, y.m);
    EXPECT_EQ(x.n, y.n);
    EXPECT_EQ(x.k, y.k);
    EXPECT_EQ(x.a_type, y.a_type);
    EXPECT_EQ(x.b_type, y.b_type);
    EXPECT_EQ(x.c_type, y.c_type);
    EXPECT_EQ(x.result_type, y.result_type);
  }
  EXPECT_EQ(a.quirks, b.quirks);
  EXPECT_EQ(a.gemv_max_m, b.gemv_max_m);
  EXPECT_EQ(a.coopmat_gemv_max_m, b.coopmat_gemv_max_m);
  EXPECT_EQ(a.gemm_rows_int4, b.gemm_rows_int4);
  EXPECT_EQ(a.gemm_rows_int8, b.gemm_rows_int8);
  EXPECT_EQ(a.conv_im2col_min_channels, b.conv_im2col_min_channels);
  EXPECT_EQ(a.conv_im2col_max_pixels, b.conv_im2col_max_pixels);
  EXPECT_EQ(a.gemv_threads, b.gemv_threads);
  EXPECT_EQ(a.gemv_channels, b.gemv_channels);
  EXPECT_EQ(a.gemv_unroll, b.gemv_unroll);
  EXPECT_EQ(a.gemm_tile, b.gemm_tile);
  ExpectSameRoofline(a.roofline, b.roofline);
}

// ---- built-ins ------------------------------------------------------------------------------

TEST(BuiltinProfiles, ListHasExactlyTheTenTargets) {
  std::vector<BuiltinProfileInfo> list = ListBuiltinProfiles();
  ASSERT_EQ(list.size(), std::size(kBuiltins));
  for (size_t i = 0; i < list.size(); ++i) {
    EXPECT_EQ(list[i].name, kBuiltins[i]);
    EXPECT_EQ(list[i].summary.find("invalid"), std::string::npos) << list[i].summary;
    EXPECT_EQ(list[i].summary.find('\n'), std::string::npos);
  }
  EXPECT_NE(list[9].summary.find("int8 dot accelerated"), std::string::npos) << list[9].summary;
  EXPECT_NE(list[9].summary.find("subgroup 32 [32-32]"), std::string::npos) << list[9].summary;
  EXPECT_NE(list[6].summary.find("int8 dot not accelerated"), std::string::npos) << list[6].summary;
  EXPECT_NE(list[3].summary.find("int8 dot none"), std::string::npos) << list[3].summary;
}

TEST(BuiltinProfiles, EveryBuiltinLoadsWithSaneValues) {
  for (const char* name : kBuiltins) {
    SCOPED_TRACE(name);
    TargetProfile p = MustLoad(name);
    EXPECT_EQ(p.name, name);
    EXPECT_FALSE(p.label.empty());
    EXPECT_FALSE(p.source.empty());
    EXPECT_GE(p.api_version, Api(1, 1, 0));
    EXPECT_LT(p.api_version, Api(1, 5, 0));
    EXPECT_GE(p.max_compute_shared_memory_size, 16384u);
    EXPECT_LE(p.max_compute_shared_memory_size, 65536u);
    EXPECT_GE(p.max_compute_work_group_invocations, 128u);
    for (int i = 0; i < 3; ++i) {
      EXPECT_GE(p.max_compute_work_group_size[i], 64u);
      EXPECT_LE(p.max_compute_work_group_size[i], p.max_compute_work_group_invocations);
      EXPECT_GE(p.max_compute_work_group_count[i], 65535u);
    }
    EXPECT_GE(p.max_storage_buffer_range, 134217728u);
    EXPECT_GE(p.max_per_stage_descriptor_storage_buffers, 4u);
    EXPECT_GE(p.max_push_constants_size, 128u);
    EXPECT_TRUE(IsPow2(p.min_storage_buffer_offset_alignment));
    EXPECT_LE(p.min_storage_buffer_offset_alignment, 256u);
    EXPECT_TRUE(p.subgroup_size == 0 || IsPow2(p.subgroup_size));
    if (p.min_subgroup_size && p.max_subgroup_size) {
      EXPECT_LE(p.min_subgroup_size, p.subgroup_size);
      EXPECT_LE(p.subgroup_size, p.max_subgroup_size);
    }
    EXPECT_TRUE(p.tuned_subgroup_size == 0 || IsPow2(p.tuned_subgroup_size));
    EXPECT_TRUE(p.max_subgroup_size == 0 || p.tuned_subgroup_size <= p.max_subgroup_size);
    EXPECT_TRUE(p.tuned_subgroup_size == 0 || p.tuned_subgroup_size >= p.min_subgroup_size);
    EXPECT_TRUE(!p.int_dot_4x8_packed_signed_accelerated || p.shader_integer_dot_product);
    EXPECT_TRUE(!p.required_subgroup_size_compute || p.subgroup_size_control);
    EXPECT_TRUE(p.coopmat_shapes.empty() || p.cooperative_matrix);
    for (const CoopMatShape& s : p.coopmat_shapes) EXPECT_TRUE(s.m && s.n && s.k);
  }
}

TEST(BuiltinProfiles, NvidiaHopperGoldenFacts) {
  TargetProfile p = MustLoad("nvidia-hopper");
  EXPECT_EQ(p.api_version, Api(1, 4, 312));
  EXPECT_TRUE(p.shader_integer_dot_product);
  EXPECT_TRUE(p.int_dot_4x8_packed_signed_accelerated);
  EXPECT_EQ(p.subgroup_size, 32u);
  EXPECT_EQ(p.min_subgroup_size, 32u);
  EXPECT_EQ(p.max_subgroup_size, 32u);
  EXPECT_TRUE(p.subgroup_size_control);
  EXPECT_TRUE(p.compute_full_subgroups);
  EXPECT_TRUE(p.required_subgroup_size_compute);
  EXPECT_TRUE(p.subgroup_arithmetic_compute);
  EXPECT_EQ(p.tuned_subgroup_size, 32u);
  EXPECT_EQ(p.max_compute_shared_memory_size, 49152u);
  EXPECT_EQ(p.max_compute_work_group_invocations, 1024u);
  EXPECT_EQ(p.max_compute_work_group_size[2], 64u);
  EXPECT_EQ(p.max_storage_buffer_range, 4294967295u);
  EXPECT_EQ(p.min_storage_buffer_offset_alignment, 16u);
  EXPECT_TRUE(p.shader_int8 && p.shader_float16 && p.storage_buffer_8bit_access && p.storage_buffer_16bit_access);
  EXPECT_TRUE(p.cooperative_matrix);
  EXPECT_TRUE(p.HasExtension("VK_KHR_cooperative_matrix"));
  bool has_s8 = false;
  for (const CoopMatShape& s : p.coopmat_shapes)
    has_s8 |= s.m == 16 && s.n == 16 && s.k == 32 && s.a_type == "sint8" && s.result_type == "sint32";
  EXPECT_TRUE(has_s8);
  // Tuned on an H100 by `vkqc tune` (bench/RESULTS.md).
  EXPECT_EQ(p.gemv_max_m, 64u);
  EXPECT_EQ(p.gemv_threads, 128u);
  EXPECT_EQ(p.gemv_channels, 4u);
  EXPECT_EQ(p.gemv_unroll, 1u);
  EXPECT_EQ(p.gemm_tile, 64u);
}

TEST(BuiltinProfiles, AndroidBaseline2022GoldenFacts) {
  TargetProfile p = MustLoad("android-baseline-2022");
  EXPECT_EQ(p.api_version, Api(1, 1, 106));
  EXPECT_EQ(p.max_compute_shared_memory_size, 16384u);
  EXPECT_EQ(p.max_compute_work_group_invocations, 128u);
  EXPECT_EQ(p.max_compute_work_group_size[0], 128u);
  EXPECT_EQ(p.max_compute_work_group_size[1], 128u);
  EXPECT_EQ(p.max_compute_work_group_size[2], 64u);
  EXPECT_EQ(p.max_per_stage_descriptor_storage_buffers, 4u);
  EXPECT_EQ(p.min_storage_buffer_offset_alignment, 256u);
  EXPECT_EQ(p.max_storage_buffer_range, 134217728u);
  EXPECT_EQ(p.max_push_constants_size, 128u);
  EXPECT_TRUE(p.shader_int16);
  EXPECT_FALSE(p.shader_int8);
  EXPECT_FALSE(p.shader_float16);
  EXPECT_FALSE(p.storage_buffer_8bit_access);
  EXPECT_FALSE(p.storage_buffer_16bit_access);
  EXPECT_FALSE(p.subgroup_arithmetic_compute);
  EXPECT_FALSE(p.shader_integer_dot_product);
  EXPECT_FALSE(p.int_dot_4x8_packed_signed_accelerated);
  EXPECT_FALSE(p.subgroup_size_control);
  EXPECT_FALSE(p.cooperative_matrix);
  EXPECT_EQ(p.tuned_subgroup_size, 0u);
  EXPECT_TRUE(p.HasExtension("VK_KHR_storage_buffer_storage_class"));  // from the inherited 2021 profile
}

TEST(BuiltinProfiles, Android16LayersOn2022) {
  TargetProfile p = MustLoad("android-16");
  EXPECT_EQ(p.api_version, Api(1, 3, 276));
  EXPECT_TRUE(p.shader_integer_dot_product);
  EXPECT_FALSE(p.int_dot_4x8_packed_signed_accelerated);
  EXPECT_EQ(p.max_compute_work_group_invocations, 256u);
  EXPECT_EQ(p.max_compute_work_group_size[0], 256u);
  EXPECT_EQ(p.max_compute_work_group_size[2], 64u);
  EXPECT_TRUE(p.subgroup_arithmetic_compute);
  EXPECT_TRUE(p.shader_int8 && p.shader_float16 && p.storage_buffer_8bit_access && p.storage_buffer_16bit_access);
  EXPECT_EQ(p.max_per_stage_descriptor_storage_buffers, 12u);
  EXPECT_EQ(p.max_compute_shared_memory_size, 16384u);
  EXPECT_EQ(p.min_storage_buffer_offset_alignment, 256u);
  EXPECT_EQ(p.max_storage_buffer_range, 134217728u);
}

TEST(BuiltinProfiles, LavapipeIsThisMachinesLavapipe) {
  TargetProfile p = MustLoad("lavapipe");
  EXPECT_EQ(p.subgroup_size, 8u);
  EXPECT_EQ(p.tuned_subgroup_size, 8u);
  EXPECT_TRUE(p.shader_integer_dot_product);
  EXPECT_FALSE(p.int_dot_4x8_packed_signed_accelerated);
  EXPECT_EQ(p.max_compute_shared_memory_size, 32768u);
  EXPECT_EQ(p.max_storage_buffer_range, 134217728u);
  EXPECT_EQ(p.min_storage_buffer_offset_alignment, 16u);
  EXPECT_TRUE(p.subgroup_arithmetic_compute);
  EXPECT_FALSE(p.cooperative_matrix);
}

TEST(BuiltinProfiles, OtherTargetsKeyFacts) {
  TargetProfile apple = MustLoad("apple-moltenvk");
  EXPECT_TRUE(apple.shader_integer_dot_product);
  EXPECT_FALSE(apple.int_dot_4x8_packed_signed_accelerated);
  EXPECT_FALSE(apple.required_subgroup_size_compute);
  EXPECT_FALSE(apple.cooperative_matrix);
  TargetProfile amd = MustLoad("amd-rdna3");
  EXPECT_EQ(amd.subgroup_size, 64u);
  EXPECT_EQ(amd.min_subgroup_size, 32u);
  EXPECT_EQ(amd.max_compute_shared_memory_size, 32768u);
  EXPECT_TRUE(amd.int_dot_4x8_packed_signed_accelerated);  // from ...PropertiesKHR
  TargetProfile intel = MustLoad("intel-arc");
  EXPECT_EQ(intel.max_storage_buffer_range, 1073741820u);
  EXPECT_EQ(intel.min_storage_buffer_offset_alignment, 64u);
  TargetProfile adreno = MustLoad("adreno-7xx");
  EXPECT_EQ(adreno.max_compute_shared_memory_size, 32768u);  // device block beats the inherited floor
  EXPECT_EQ(adreno.max_per_stage_descriptor_storage_buffers, 4u);
  EXPECT_FALSE(adreno.cooperative_matrix);
}

// ---- merging rules --------------------------------------------------------------------------

TEST(ProfileParse, AliasStructsFeedTheSameField) {
  // shaderIntegerDotProduct through the 1.3 aggregate or the KHR extension struct.
  for (const char* s : {"VkPhysicalDeviceVulkan13Features", "VkPhysicalDeviceShaderIntegerDotProductFeatures",
                        "VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR"}) {
    Json block = {{"features", {{s, {{"shaderIntegerDotProduct", true}}}}}};
    EXPECT_TRUE(MustParse(MakeDoc({{"b", block}}, {"b"})).shader_integer_dot_product) << s;
  }
  for (const char* s : {"VkPhysicalDeviceVulkan13Properties", "VkPhysicalDeviceShaderIntegerDotProductPropertiesKHR"}) {
    Json block = {{"properties", {{s, {{"integerDotProduct4x8BitPackedSignedAccelerated", true}}}}}};
    EXPECT_TRUE(MustParse(MakeDoc({{"b", block}}, {"b"})).int_dot_4x8_packed_signed_accelerated) << s;
  }
  // One alias true, the other false: true wins (OR).
  Json both = {{"features",
                {{"VkPhysicalDeviceVulkan12Features", {{"shaderInt8", false}}},
                 {"VkPhysicalDeviceShaderFloat16Int8FeaturesKHR", {{"shaderInt8", true}, {"shaderFloat16", false}}},
                 {"VkPhysicalDevice8BitStorageFeaturesKHR", {{"storageBuffer8BitAccess", true}}},
                 {"VkPhysicalDeviceSubgroupSizeControlFeaturesEXT", {{"subgroupSizeControl", true}}}}}};
  TargetProfile p = MustParse(MakeDoc({{"b", both}}, {"b"}));
  EXPECT_TRUE(p.shader_int8);
  EXPECT_FALSE(p.shader_float16);
  EXPECT_TRUE(p.storage_buffer_8bit_access);
  EXPECT_TRUE(p.subgroup_size_control);
  EXPECT_FALSE(p.compute_full_subgroups);
  // Subgroup properties through Vulkan11Properties' differently named members.
  Json v11 = {{"properties",
               {{"VkPhysicalDeviceVulkan11Properties",
                 {{"subgroupSize", 16},
                  {"subgroupSupportedStages", {"VK_SHADER_STAGE_ALL"}},
                  {"subgroupSupportedOperations", {"VK_SUBGROUP_FEATURE_ARITHMETIC_BIT"}}}}}}};
  p = MustParse(MakeDoc({{"b", v11}}, {"b"}));
  EXPECT_EQ(p.subgroup_size, 16u);
  EXPECT_TRUE(p.subgroup_arithmetic_compute);
  // A NV struct is not the KHR one.
  Json nv = {{"features", {{"VkPhysicalDeviceCooperativeMatrixFeaturesNV", {{"cooperativeMatrix", true}}}}}};
  EXPECT_FALSE(MustParse(MakeDoc({{"b", nv}}, {"b"})).cooperative_matrix);
}

TEST(ProfileParse, ApiVersionAndDefaults) {
  TargetProfile p = MustParse(MakeDoc({{"b", Json::object()}}, {"b"}));
  EXPECT_EQ(p.api_version, 4206868u);  // VK_MAKE_API_VERSION(0, 1, 3, 276)
  EXPECT_EQ(p.name, "VP_TEST");
  EXPECT_EQ(p.label, "test");
  TargetProfile floor;  // absent limits keep the Android-floor defaults of TargetProfile
  EXPECT_EQ(p.max_compute_shared_memory_size, floor.max_compute_shared_memory_size);
  EXPECT_EQ(p.min_storage_buffer_offset_alignment, floor.min_storage_buffer_offset_alignment);
  EXPECT_EQ(p.subgroup_size, 0u);
  EXPECT_EQ(p.tuned_subgroup_size, 0u);
}

TEST(ProfileParse, InheritedProfilesMergeToTheStrongestRequirement) {
  Json parent_block = {
      {"extensions", {{"VK_KHR_a", 1}, {"VK_KHR_b", 1}}},
      {"features", {{"VkPhysicalDeviceFeatures", {{"shaderInt16", true}}}}},
      {"properties",
       {{"VkPhysicalDeviceProperties",
         {{"limits",
           {{"maxComputeSharedMemorySize", 16384},
            {"minStorageBufferOffsetAlignment", 256},
            {"maxComputeWorkGroupSize", {128, 128, 64}}}}}},
        {"VkPhysicalDeviceSubgroupProperties", {{"supportedOperations", {"VK_SUBGROUP_FEATURE_ARITHMETIC_BIT"}}}}}}};
  Json child_block = {
      {"extensions", {{"VK_KHR_b", 1}, {"VK_KHR_c", 1}}},
      {"properties",
       {{"VkPhysicalDeviceProperties",
         {{"limits",
           {{"maxComputeSharedMemorySize", 8192},  // weaker than the parent: ignored
            {"minStorageBufferOffsetAlignment", 64},
            {"maxComputeWorkGroupSize", {256, 64, 64}}}}}},
        {"VkPhysicalDeviceSubgroupProperties", {{"supportedStages", {"VK_SHADER_STAGE_COMPUTE_BIT"}}}}}}};
  Json parent = {{"version", 1}, {"api-version", "1.1.106"}, {"label", "parent"}, {"capabilities", {"pb"}}};
  std::string doc = MakeDoc({{"pb", parent_block}, {"cb", child_block}}, {"cb"}, {{"VP_PARENT", parent}});
  Json j = Json::parse(doc);
  j["profiles"]["VP_TEST"]["profiles"] = {"VP_PARENT", "VP_ELSEWHERE"};  // the second is not in this document
  TargetProfile p = MustParse(j.dump());
  EXPECT_TRUE(p.shader_int16);
  EXPECT_EQ(p.max_compute_shared_memory_size, 16384u);
  EXPECT_EQ(p.min_storage_buffer_offset_alignment, 64u);
  EXPECT_EQ(p.max_compute_work_group_size[0], 256u);
  EXPECT_EQ(p.max_compute_work_group_size[1], 128u);
  EXPECT_TRUE(p.subgroup_arithmetic_compute);  // operations from the parent, stage from the child
  EXPECT_EQ(p.api_version, Api(1, 3, 276));
  EXPECT_EQ(p.extensions, (std::vector<std::string>{"VK_KHR_a", "VK_KHR_b", "VK_KHR_c"}));

  // Without the inheritance the parent's block does not apply.
  j["profiles"]["VP_TEST"].erase("profiles");
  p = MustParse(j.dump());
  EXPECT_FALSE(p.shader_int16);
  EXPECT_FALSE(p.subgroup_arithmetic_compute);

  // A cycle terminates.
  j["profiles"]["VP_TEST"]["profiles"] = {"VP_PARENT"};
  j["profiles"]["VP_PARENT"]["profiles"] = {"VP_TEST"};
  EXPECT_TRUE(MustParse(j.dump()).shader_int16);
  // Selecting the parent by name gives the parent's view plus what it inherits (the child, here).
  EXPECT_EQ(MustParse(j.dump(), "", "VP_PARENT").label, "parent");
}

TEST(ProfileParse, AlternativesTakeTheFirst) {
  Json a = {{"features", {{"VkPhysicalDeviceVulkan12Features", {{"shaderInt8", true}}}}}};
  Json b = {{"features", {{"VkPhysicalDeviceVulkan12Features", {{"shaderFloat16", true}}}}}};
  TargetProfile p = MustParse(MakeDoc({{"a", a}, {"b", b}}, Json::array({Json::array({"a", "b"})})));
  EXPECT_TRUE(p.shader_int8);
  EXPECT_FALSE(p.shader_float16);
  p = MustParse(MakeDoc({{"a", a}, {"b", b}}, Json::array({Json::array({"b", "a"})})));
  EXPECT_FALSE(p.shader_int8);
  EXPECT_TRUE(p.shader_float16);
}

TEST(ProfileParse, SelectsProfileByNameOrSidecarOrFirst) {
  Json a = {{"features", {{"VkPhysicalDeviceVulkan12Features", {{"shaderInt8", true}}}}}};
  Json other = {{"version", 1}, {"api-version", "1.2.0"}, {"label", "other"}, {"capabilities", {"a"}}};
  std::string doc = MakeDoc({{"a", a}, {"e", Json::object()}}, {"e"}, {{"VP_OTHER", other}});
  EXPECT_FALSE(MustParse(doc).shader_int8);  // first profile
  TargetProfile p = MustParse(doc, "", "VP_OTHER");
  EXPECT_TRUE(p.shader_int8);
  EXPECT_EQ(p.api_version, Api(1, 2, 0));
  EXPECT_TRUE(MustParse(doc, R"({"profile": "VP_OTHER"})").shader_int8);
  std::string err = ParseError(doc, R"({"profile": "VP_OTHER"})", "VP_TEST");
  EXPECT_NE(err.find("sidecar"), std::string::npos) << err;
}

TEST(ProfileParse, LinearTuningFields) {
  std::string doc = MakeDoc({{"b", Json::object()}}, {"b"});
  TargetProfile p = MustParse(doc, R"({"gemv_threads": 64, "gemv_channels": 8, "gemv_unroll": 2, "gemm_tile": 32})");
  EXPECT_EQ(p.gemv_threads, 64u);
  EXPECT_EQ(p.gemv_channels, 8u);
  EXPECT_EQ(p.gemv_unroll, 2u);
  EXPECT_EQ(p.gemm_tile, 32u);
  TargetProfile d = MustParse(doc);
  EXPECT_EQ(d.gemv_threads + d.gemv_channels + d.gemv_unroll + d.gemm_tile, 0u) << "0 = the compiler's default";
  const std::pair<const char*, const char*> bad[] = {
      {R"({"gemv_threads": 96})", "gemv_threads"},  {R"({"gemv_threads": 2048})", "gemv_threads"},
      {R"({"gemv_channels": 3})", "gemv_channels"}, {R"({"gemv_channels": 32})", "gemv_channels"},
      {R"({"gemv_unroll": 8})", "gemv_unroll"},     {R"({"gemm_tile": 48})", "gemm_tile"},
      {R"({"gemm_tile": -1})", "gemm_tile"},
  };
  for (const auto& [side, key] : bad) {
    const std::string e = ParseError(doc, side);
    EXPECT_NE(e.find(key), std::string::npos) << side << ": " << e;
  }
}

TEST(ProfileParse, SidecarFields) {
  std::string doc = MakeDoc({{"b", Json::object()}}, {"b"});
  const char* side = R"({"$comment": "x", "name": "mine", "source": "measured", "tuned_subgroup_size": 16,
    "gemv_max_m": 4, "quirks": ["q1", "q2"], "conv_im2col_min_channels": 32, "conv_im2col_max_pixels": 4096,
    "coopmat_shapes": [{"m": 16, "n": 16, "k": 32, "a": "sint8", "b": "sint8", "c": "sint32", "result": "sint32"}]})";
  TargetProfile p = MustParse(doc, side);
  EXPECT_EQ(p.name, "mine");
  EXPECT_EQ(p.source, "measured");
  EXPECT_EQ(p.tuned_subgroup_size, 16u);
  EXPECT_EQ(p.gemv_max_m, 4u);
  EXPECT_EQ(p.conv_im2col_min_channels, 32u);
  EXPECT_EQ(p.conv_im2col_max_pixels, 4096u);
  EXPECT_NE(ParseError(doc, R"({"conv_im2col_max_pixels": -1})").find("conv_im2col_max_pixels"), std::string::npos);
  EXPECT_EQ(p.quirks, (std::vector<std::string>{"q1", "q2"}));
  ASSERT_EQ(p.coopmat_shapes.size(), 1u);
  EXPECT_EQ(p.coopmat_shapes[0].k, 32u);
  EXPECT_EQ(p.coopmat_shapes[0].result_type, "sint32");

  // The same sidecar as a "vkqc" member of the document; a sidecar file overrides it key by key.
  Json j = Json::parse(doc);
  j["vkqc"] = Json::parse(side);
  EXPECT_EQ(MustParse(j.dump()).gemv_max_m, 4u);
  p = MustParse(j.dump(), R"({"gemv_max_m": 2})");
  EXPECT_EQ(p.gemv_max_m, 2u);
  EXPECT_EQ(p.tuned_subgroup_size, 16u);
}

TEST(ProfileParse, TunedSubgroupSizeRule) {
  auto with_range = [](int lo, int hi) {
    Json range = {{"minSubgroupSize", lo}, {"maxSubgroupSize", hi}};
    Json b = {{"properties", {{"VkPhysicalDeviceSubgroupSizeControlProperties", range}}}};
    return MakeDoc({{"b", b}}, {"b"});
  };
  EXPECT_EQ(MustParse(with_range(32, 32)).tuned_subgroup_size, 32u);
  EXPECT_EQ(MustParse(with_range(32, 64)).tuned_subgroup_size, 0u);
  EXPECT_EQ(MustParse(with_range(32, 32), R"({"tuned_subgroup_size": 0})").tuned_subgroup_size, 0u);
  EXPECT_EQ(MustParse(with_range(32, 64), R"({"tuned_subgroup_size": 64})").tuned_subgroup_size, 64u);
}

// ---- round trip -----------------------------------------------------------------------------

TEST(ProfileWrite, RoundTripsEveryBuiltin) {
  for (const char* name : kBuiltins) {
    SCOPED_TRACE(name);
    TargetProfile p = MustLoad(name);
    ProfileFiles files = WriteProfileJson(p);
    Result<TargetProfile> back = ParseProfileJson(files.profile_json, files.sidecar_json, "written.json");
    ASSERT_TRUE(back.ok()) << back.error().message;
    ExpectSame(p, back.value());
    Json doc = Json::parse(files.profile_json);
    EXPECT_TRUE(doc["capabilities"].contains("device"));
    EXPECT_EQ(doc["profiles"].size(), 1u);
    EXPECT_EQ(doc["profiles"].begin().key().rfind("VP_VKQC_", 0), 0u);
  }
}

TEST(ProfileWrite, RoundTripsEveryFieldSet) {
  TargetProfile p;
  p.name = "My GPU (rev 2)";
  p.label = "My GPU driver 1.2.3";
  p.source = "vkqc probe 2026-01-01";
  p.api_version = Api(1, 4, 999);
  p.shader_integer_dot_product = p.int_dot_4x8_packed_signed_accelerated = p.shader_int8 = true;
  p.shader_float16 = p.shader_int16 = p.storage_buffer_8bit_access = p.storage_buffer_16bit_access = true;
  p.subgroup_size_control = p.compute_full_subgroups = p.cooperative_matrix = true;
  p.subgroup_size = 64;
  p.min_subgroup_size = 32;
  p.max_subgroup_size = 128;
  p.subgroup_arithmetic_compute = p.required_subgroup_size_compute = true;
  p.tuned_subgroup_size = 0;  // explicit 0 although min != max
  p.max_compute_shared_memory_size = 65536;
  p.max_compute_work_group_invocations = 2048;
  uint32_t size[3] = {2048, 1024, 512}, count[3] = {4294967295u, 7, 8};
  std::copy(size, size + 3, p.max_compute_work_group_size);
  std::copy(count, count + 3, p.max_compute_work_group_count);
  p.max_storage_buffer_range = 1ull << 40;
  p.max_per_stage_descriptor_storage_buffers = 1000000;
  p.max_push_constants_size = 4096;
  p.min_storage_buffer_offset_alignment = 4;
  p.extensions = {"VK_KHR_z", "VK_KHR_a"};
  p.coopmat_shapes = {{16, 8, 16, "float16", "float16", "float32", "float32"},
                      {16, 16, 32, "uint8", "uint8", "uint32", "uint32"}};
  p.quirks = {"quirk_b", "quirk_a"};
  p.gemv_max_m = 7;
  p.coopmat_gemv_max_m = 2;
  p.gemm_rows_int4 = 8;
  p.gemm_rows_int8 = 8;
  p.gemv_threads = 64;
  p.gemv_channels = 8;
  p.gemv_unroll = 2;
  p.gemm_tile = 32;
  p.conv_im2col_min_channels = 24;
  p.conv_im2col_max_pixels = 1000;
  p.roofline = {"My GPU", "mydriver, 1.2.3", "2026-01-02", 3175.1, 104.3, 60.51, 0.1 + 0.2, 812.5, 401.25};
  ProfileFiles files = WriteProfileJson(p);
  Result<TargetProfile> back = ParseProfileJson(files.profile_json, files.sidecar_json, "written.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ExpectSame(p, back.value());

  p.subgroup_arithmetic_compute = p.required_subgroup_size_compute = p.cooperative_matrix = false;
  p.tuned_subgroup_size = 16;
  p.coopmat_shapes.clear();
  p.roofline.int8_dot_tops = p.roofline.fp16_tflops = p.roofline.coopmat_int8_tops = 0;  // not measured: null
  files = WriteProfileJson(p);
  EXPECT_TRUE(Json::parse(files.sidecar_json)["roofline"]["fp16_tflops"].is_null()) << files.sidecar_json;
  back = ParseProfileJson(files.profile_json, files.sidecar_json, "written.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ExpectSame(p, back.value());
}

// ---- files ----------------------------------------------------------------------------------

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/vkqc_profile_test_XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string Write(const std::string& name, const std::string& text) const {
    std::string p = path_ + "/" + name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

 private:
  std::string path_;
};

TEST(ProfileLoad, FileWithSidecarBesideIt) {
  TempDir dir;
  TargetProfile hopper = MustLoad("nvidia-hopper");
  ProfileFiles files = WriteProfileJson(hopper);
  std::string path = dir.Write("gpu.json", files.profile_json);
  dir.Write("gpu.vkqc.json", files.sidecar_json);
  TargetProfile p = MustLoad(path);
  ExpectSame(hopper, p);

  std::string bad_side = dir.Write("bad.vkqc.json", R"({"tuned_subgroup_size": "32"})");
  std::string bad = dir.Write("bad.json", files.profile_json);
  Result<TargetProfile> r = LoadProfile(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(bad_side), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("tuned_subgroup_size"), std::string::npos) << r.error().message;
}

TEST(ProfileLoad, FileErrorsNameTheFile) {
  TempDir dir;
  std::string path = dir.Write("broken.json", "{\"profiles\": ");
  Result<TargetProfile> r = LoadProfile(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(path), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("not valid JSON"), std::string::npos) << r.error().message;

  r = LoadProfile("/nonexistent/dir/x.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("/nonexistent/dir/x.json"), std::string::npos) << r.error().message;
}

TEST(ProfileLoad, UnknownBuiltinListsTheKnownOnes) {
  Result<TargetProfile> r = LoadProfile("nvidia-hoper");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::User);
  EXPECT_NE(r.error().message.find("nvidia-hoper"), std::string::npos) << r.error().message;
  for (const char* name : kBuiltins) EXPECT_NE(r.error().message.find(name), std::string::npos) << name;
}

// ---- errors ---------------------------------------------------------------------------------

TEST(ProfileErrors, NotJson) {
  EXPECT_NE(ParseError("this is not json").find("not valid JSON"), std::string::npos);
  EXPECT_NE(ParseError("").find("not valid JSON"), std::string::npos);
  // A number out of double's range throws out_of_range, not parse_error (it escaped before).
  EXPECT_NE(ParseError("{\"profiles\": 1e999}").find("not valid JSON"), std::string::npos);
}

TEST(ProfileErrors, TruncatedJson) {
  std::string doc = MakeDoc({{"b", Json::object()}}, {"b"});
  std::string err = ParseError(doc.substr(0, doc.size() / 2));
  EXPECT_NE(err.find("not valid JSON"), std::string::npos) << err;
}

TEST(ProfileErrors, MissingProfiles) {
  std::string err = ParseError(R"({"capabilities": {}})");
  EXPECT_NE(err.find("\"profiles\""), std::string::npos) << err;
  EXPECT_NE(ParseError("[1, 2]").find("object"), std::string::npos);
  EXPECT_NE(ParseError(R"({"profiles": {}, "capabilities": {}})").find("empty"), std::string::npos);
}

TEST(ProfileErrors, UnknownProfileName) {
  std::string err = ParseError(MakeDoc({{"b", Json::object()}}, {"b"}), "", "VP_NOPE");
  EXPECT_NE(err.find("VP_NOPE"), std::string::npos) << err;
  EXPECT_NE(err.find("VP_TEST"), std::string::npos) << err;  // lists what the document defines
}

TEST(ProfileErrors, WrongTypeForALimit) {
  Json b = {{"properties",
             {{"VkPhysicalDeviceProperties", {{"limits", {{"maxComputeSharedMemorySize", "32768"}}}}}}}};
  std::string err = ParseError(MakeDoc({{"b", b}}, {"b"}));
  EXPECT_NE(err.find("maxComputeSharedMemorySize"), std::string::npos) << err;
  EXPECT_NE(err.find("integer"), std::string::npos) << err;
  b["properties"]["VkPhysicalDeviceProperties"]["limits"] = {{"minStorageBufferOffsetAlignment", -16}};
  EXPECT_NE(ParseError(MakeDoc({{"b", b}}, {"b"})).find("minStorageBufferOffsetAlignment"), std::string::npos);
  b["properties"]["VkPhysicalDeviceProperties"]["limits"] = {{"maxComputeWorkGroupSize", {1024, 1024}}};
  EXPECT_NE(ParseError(MakeDoc({{"b", b}}, {"b"})).find("maxComputeWorkGroupSize"), std::string::npos);
  b["properties"]["VkPhysicalDeviceProperties"]["limits"] = {{"maxPushConstantsSize", 4294967296ull}};
  EXPECT_NE(ParseError(MakeDoc({{"b", b}}, {"b"})).find("out of range"), std::string::npos);
}

TEST(ProfileErrors, OtherWrongTypesAndReferences) {
  Json feat = {{"features", {{"VkPhysicalDeviceVulkan12Features", {{"shaderInt8", 1}}}}}};
  EXPECT_NE(ParseError(MakeDoc({{"b", feat}}, {"b"})).find("shaderInt8"), std::string::npos);
  Json flags = {{"properties", {{"VkPhysicalDeviceSubgroupProperties", {{"supportedStages", "COMPUTE"}}}}}};
  EXPECT_NE(ParseError(MakeDoc({{"b", flags}}, {"b"})).find("supportedStages"), std::string::npos);
  EXPECT_NE(ParseError(MakeDoc({{"b", Json::object()}}, {"missing"})).find("missing"), std::string::npos);
  EXPECT_NE(ParseError(MakeDoc({{"b", 5}}, {"b"})).find("\"b\""), std::string::npos);
  Json j = Json::parse(MakeDoc({{"b", Json::object()}}, {"b"}));
  j["profiles"]["VP_TEST"]["api-version"] = "1.3";
  EXPECT_NE(ParseError(j.dump()).find("api-version"), std::string::npos);
  j["profiles"]["VP_TEST"]["api-version"] = 13;
  EXPECT_NE(ParseError(j.dump()).find("api-version"), std::string::npos);
  j["profiles"]["VP_TEST"].erase("api-version");
  EXPECT_NE(ParseError(j.dump()).find("api-version"), std::string::npos);
  std::string doc = MakeDoc({{"b", Json::object()}}, {"b"});
  EXPECT_NE(ParseError(doc, R"({"tuned_subgroupsize": 32})").find("tuned_subgroupsize"), std::string::npos);
  EXPECT_NE(ParseError(doc, R"({"coopmat_shapes": [{"m": 16, "n": 16, "k": 16, "a": "int8", "b": "sint8",
    "c": "sint32", "result": "sint32"}]})").find("int8"), std::string::npos);
  EXPECT_NE(ParseError(doc, "[").find("sidecar"), std::string::npos);
}

// Replacing any value of a real document with another type must give a value or an error,
// never a crash; and so must every truncation.
TEST(ProfileErrors, NeverCrashesOnMutatedDocuments) {
  std::string text = WriteProfileJson(MustLoad("nvidia-hopper")).profile_json;
  Json doc = Json::parse(text);
  std::vector<Json> replacements = {Json("x"), Json(-1), Json(nullptr), Json::array({1}), Json::object()};
  size_t mutations = 0, errors = 0;
  std::function<void(Json&)> walk = [&](Json& node) {
    for (const Json& repl : replacements) {
      Json saved = node;
      node = repl;
      Result<TargetProfile> r = ParseProfileJson(doc.dump(), "", "mutated.json");
      ++mutations;
      if (!r.ok()) {
        ++errors;
        EXPECT_NE(r.error().message.find("mutated.json"), std::string::npos) << r.error().message;
      }
      node = saved;
    }
    if (node.is_structured())
      for (auto& child : node) walk(child);
  };
  walk(doc);
  EXPECT_GT(mutations, 100u);
  EXPECT_GT(errors, mutations / 4);
  for (size_t n = 0; n <= text.find_last_of('}'); n += 7) {  // every cut before the closing brace
    Result<TargetProfile> r = ParseProfileJson(text.substr(0, n), "", "cut.json");
    EXPECT_FALSE(r.ok());
  }
  std::string deep(100000, '[');
  EXPECT_FALSE(ParseProfileJson(deep, "", "deep.json").ok());
  EXPECT_FALSE(ParseProfileJson(deep + std::string(100000, ']'), "", "deep.json").ok());
}

// ---- roofline (`vkqc roofline`, `vkqc bench --roofline`) -----------------------------------

TEST(ProfileRoofline, HopperCarriesTheMeasuredH100Numbers) {
  const Roofline r = MustLoad("nvidia-hopper").roofline;
  EXPECT_EQ(r.read_gbps, 3170);  // `vkqc roofline` on the H100, 2026-11-23
  EXPECT_EQ(r.int8_dot_tops, 119.2);
  EXPECT_EQ(r.fp32_tflops, 63.4);
  EXPECT_EQ(r.fp16_tflops, 66.51);
  EXPECT_EQ(r.coopmat_int8_tops, 1301);
  EXPECT_EQ(r.coopmat_fp16_tflops, 651.3);
  EXPECT_NE(r.device.find("H100"), std::string::npos) << r.device;
  Result<Roofline> loaded = LoadRoofline("nvidia-hopper");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ExpectSameRoofline(r, *loaded);
  EXPECT_FALSE(MustLoad("lavapipe").roofline.Known());
}

TEST(ProfileRoofline, NullAndAbsentMeanNotMeasured) {
  const std::string doc = MakeDoc({{"b", Json::object()}}, {"b"});
  TargetProfile p = MustParse(doc, R"({"roofline": {"read_gbps": 12.5, "fp16_tflops": null, "$note": "x"}})");
  EXPECT_EQ(p.roofline.read_gbps, 12.5);
  EXPECT_EQ(p.roofline.fp16_tflops, 0);
  EXPECT_EQ(p.roofline.int8_dot_tops, 0);
  EXPECT_TRUE(p.roofline.Known());
  EXPECT_FALSE(MustParse(doc, R"({"roofline": {}})").roofline.Known());
}

TEST(ProfileRoofline, BadValuesAreRefusedNamingTheMember) {
  const std::string doc = MakeDoc({{"b", Json::object()}}, {"b"});
  const std::pair<const char*, const char*> cases[] = {
      {R"({"roofline": {"read_gbps": -3}})", "roofline.read_gbps must be a positive number"},
      {R"({"roofline": {"int8_dot_tops": 0}})", "roofline.int8_dot_tops must be a positive number"},
      {R"({"roofline": {"fp32_tflops": "60"}})", "roofline.fp32_tflops must be a positive number"},
      {R"({"roofline": {"fp16_tflops": true}})", "roofline.fp16_tflops must be a positive number"},
      {R"({"roofline": {"device": 7}})", "roofline.device must be a string"},
      {R"({"roofline": {"read_gb": 1}})", "unknown key \"roofline.read_gb\""},
      {R"({"roofline": [1, 2]})", "\"roofline\" must be an object"},
  };
  for (const auto& [side, want] : cases) {
    SCOPED_TRACE(side);
    const std::string msg = ParseError(doc, side);
    EXPECT_NE(msg.find(want), std::string::npos) << msg;
  }
}

TEST(ProfileRoofline, SetSidecarRooflineMergesAndKeepsTheRest) {
  const Roofline r{"dev", "drv", "2026-01-02", 10, 0, 2.5, 0};
  Result<std::string> fresh = SetSidecarRoofline("", "new.vkqc.json", r);
  ASSERT_TRUE(fresh.ok()) << fresh.error().message;
  Json j = Json::parse(*fresh);
  EXPECT_EQ(j.size(), 1u);
  EXPECT_EQ(j["roofline"]["read_gbps"], 10.0);
  EXPECT_TRUE(j["roofline"]["int8_dot_tops"].is_null());

  const std::string side = WriteProfileJson(MustLoad("lavapipe")).sidecar_json;
  Result<std::string> merged = SetSidecarRoofline(side, "mine.vkqc.json", r);
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  Json before = Json::parse(side), after = Json::parse(*merged);
  after.erase("roofline");
  EXPECT_EQ(before, after) << "every other member is kept as it was";
  const std::string doc = WriteProfileJson(MustLoad("lavapipe")).profile_json;
  ExpectSameRoofline(MustParse(doc, *merged).roofline, r);
  // A second measurement replaces the first.
  Result<std::string> again = SetSidecarRoofline(*merged, "mine.vkqc.json", Roofline{"d2", "", "", 1, 0, 0, 0});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(MustParse(doc, *again).roofline.device, "d2");

  const std::pair<std::string, const char*> refused[] = {
      {"{not json", "not valid JSON"},
      {doc, "Vulkan Profiles document"},
      {R"({"tuned_subgroup_size": "x"})", "tuned_subgroup_size"},
      {R"({"colour": 1})", "unknown sidecar key"},
      {"[1]", "must be an object"},
  };
  for (const auto& [text, want] : refused) {
    Result<std::string> e = SetSidecarRoofline(text, "old.vkqc.json", r);
    ASSERT_FALSE(e.ok()) << text;
    EXPECT_NE(e.error().message.find("old.vkqc.json"), std::string::npos) << e.error().message;
    EXPECT_NE(e.error().message.find(want), std::string::npos) << e.error().message;
  }
}

TEST(ProfileRoofline, LoadRooflineFromSidecarOrProfileFile) {
  TempDir dir;
  const Roofline r{"dev", "drv", "2026-01-02", 10, 1, 2, 3};
  const std::string side = *SetSidecarRoofline("", "x", r);
  ExpectSameRoofline(*LoadRoofline(dir.Write("alone.vkqc.json", side)), r);
  dir.Write("gpu.vkqc.json", side);
  Result<Roofline> via_profile = LoadRoofline(dir.Write("gpu.json", WriteProfileJson(MustLoad("lavapipe")).profile_json));
  ASSERT_TRUE(via_profile.ok()) << via_profile.error().message;
  ExpectSameRoofline(*via_profile, r);
  Result<Roofline> bad = LoadRoofline(dir.Write("bad.vkqc.json", R"({"roofline": {"read_gbps": -1}})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("bad.vkqc.json"), std::string::npos) << bad.error().message;
  EXPECT_FALSE(LoadRoofline("/nonexistent/x.vkqc.json").ok());
}

}  // namespace
}  // namespace vkqc
