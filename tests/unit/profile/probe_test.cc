// `vkqc probe` against lavapipe (DESIGN 2.2): the probe must report what lavapipe reports.
#include "tools/vkqc/probe.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

namespace vkqc {
namespace {

constexpr const char* kLavapipeIcd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

TEST(Probe, LavapipeMatchesItsProfile) {
  if (!std::filesystem::exists(kLavapipeIcd)) GTEST_SKIP() << "lavapipe ICD not installed";
  // Before the loader's first vkCreateInstance in this process.
  setenv("VK_DRIVER_FILES", kLavapipeIcd, 1);
  setenv("VK_ICD_FILENAMES", kLavapipeIcd, 1);
  std::string devices;
  Result<TargetProfile> r = ProbeLocalDevice(-1, &devices);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const TargetProfile& p = r.value();
  EXPECT_NE(devices.find("llvmpipe"), std::string::npos) << devices;
  EXPECT_EQ(p.subgroup_size, 8u);
  EXPECT_EQ(p.tuned_subgroup_size, 8u);
  EXPECT_TRUE(p.shader_integer_dot_product);
  EXPECT_FALSE(p.int_dot_4x8_packed_signed_accelerated);
  EXPECT_TRUE(p.subgroup_arithmetic_compute);
  EXPECT_FALSE(p.cooperative_matrix);
  EXPECT_GE(p.api_version, (1u << 22) | (1u << 12));
  EXPECT_EQ(p.name.rfind("llvmpipe", 0), 0u) << p.name;
  EXPECT_EQ(p.source.rfind("vkqc probe ", 0), 0u) << p.source;
  // A CPU device: the quirk the compiler keys its conservative kernel forms on (profiles/README.md).
  EXPECT_EQ(p.quirks, std::vector<std::string>{"cpu_device"});

  // What the probe writes reads back as the same target.
  ProfileFiles files = WriteProfileJson(p);
  Result<TargetProfile> back = ParseProfileJson(files.profile_json, files.sidecar_json, "probe.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->subgroup_size, 8u);
  EXPECT_EQ(back->extensions, p.extensions);
  EXPECT_EQ(back->max_compute_shared_memory_size, p.max_compute_shared_memory_size);
  EXPECT_EQ(back->quirks, p.quirks);

  Result<TargetProfile> bad = ProbeLocalDevice(99);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("llvmpipe"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace vkqc
