// Pure planning (barriers, requirements) and the runtime's bundle verifier, without a GPU.
#include <gtest/gtest.h>

#include <cstring>

#include <fstream>
#include <iterator>
#include <random>

#include "compiler/emit/bundle_plan.h"
#include "compiler/graph/vkqg_io.h"
#include "compiler/passes/pipeline.h"
#include "compiler/shaderlib/shaderlib.h"
#include "runtime/include/vkqc/vkqc.h"
#include "runtime/src/internal.h"
#include "schema/bundle_integrity.h"
#include "tests/common/bundle_reseal.h"
#include "compiler/graph/synthetic.h"

namespace vkqc {
namespace {

PlanDispatch D(std::vector<PlanSlice> s) {
  PlanDispatch d;
  d.buffers = std::move(s);
  return d;
}
PlanSlice Arena(uint64_t off, uint64_t size, bool written) { return {SliceKind::Arena, 0, off, size, written}; }

int CountBarriers(const std::vector<PlanCommand>& cmds) {
  int n = 0;
  for (const auto& c : cmds) n += c.is_barrier;
  return n;
}

TEST(Barriers, ReadAfterWrite) {
  auto cmds = InsertBarriers({D({Arena(0, 64, true)}), D({Arena(32, 64, false), Arena(256, 64, true)})});
  ASSERT_EQ(cmds.size(), 3u);
  EXPECT_TRUE(cmds[1].is_barrier);
}

TEST(Barriers, WriteAfterReadAndWriteAfterWrite) {
  EXPECT_EQ(CountBarriers(InsertBarriers({D({Arena(0, 64, false)}), D({Arena(0, 64, true)})})), 1);
  EXPECT_EQ(CountBarriers(InsertBarriers({D({Arena(0, 64, true)}), D({Arena(60, 8, true)})})), 1);
}

TEST(Barriers, IndependentDispatchesNeedNone) {
  EXPECT_EQ(CountBarriers(InsertBarriers({D({Arena(0, 64, true)}), D({Arena(64, 64, true)}),
                                          D({{SliceKind::Weights, 0, 0, 64, false}, Arena(128, 64, true)})})),
            0);
  // Same offsets in different buffers do not alias.
  EXPECT_EQ(CountBarriers(InsertBarriers({D({{SliceKind::Output, 0, 0, 64, true}}),
                                          D({{SliceKind::Output, 1, 0, 64, true}})})),
            0);
}

std::vector<uint8_t> SmallBundle(const char* profile = "lavapipe") {
  testing_graphs::LayerSpec l{40, 24, true, 0.05f, 1, true, true};
  ir::Graph g = testing_graphs::MakeLinearChain(3, {l, {24, 8, false, 0, 0, false, false}}, 4);
  auto p = LoadProfile(profile);
  EXPECT_TRUE(p.ok());
  auto b = CompileGraph(g, *p, {}, 0);
  EXPECT_TRUE(b.ok()) << b.error().message;
  return b.ok() ? *b : std::vector<uint8_t>{};
}

rt::Err Parse(const std::vector<uint8_t>& b) {
  rt::BundleView v;
  return rt::ParseBundle(b.data(), b.size(), &v);
}

// Recomputes the integrity checksum after a test changed the flatbuffer on purpose, so the
// checks behind it see the change (the modules' own hashes stay as they are).
void Reseal(std::vector<uint8_t>& b) {
  ASSERT_TRUE(testing_bundles::ResealBundle(b.data(), b.size(), /*module_hashes=*/false));
}

TEST(BundleVerifier, AcceptsACompiledBundle) {
  auto b = SmallBundle();
  EXPECT_TRUE(Parse(b).ok()) << Parse(b).message;
}

TEST(BundleVerifier, RejectsTruncationAtEveryLength) {
  auto b = SmallBundle();
  for (size_t n = 0; n < b.size(); n += 7) {
    std::vector<uint8_t> t(b.begin(), b.begin() + n);
    auto e = Parse(t);
    ASSERT_FALSE(e.ok()) << "length " << n;
    EXPECT_EQ(e.status, VKQC_ERROR_INVALID_BUNDLE);
  }
}

// Found by the .vkqb fuzz target: a flatbuffer of 4..7 bytes had its identifier read past the
// end (the ASan build of this test reads exactly-sized buffers).
TEST(BundleVerifier, RejectsFlatbuffersTooSmallForTheIdentifier) {
  for (uint32_t fb = 4; fb < 8; ++fb) {
    std::vector<uint8_t> b(4 + fb, 0);
    std::memcpy(b.data(), &fb, 4);
    auto e = Parse(b);
    ASSERT_FALSE(e.ok()) << fb;
    EXPECT_NE(e.message.find("too small"), std::string::npos) << e.message;
  }
}

TEST(BundleVerifier, RejectsWrongIdentifier) {
  auto b = SmallBundle();
  b[4 + 4] = 'X';  // identifier follows the root offset
  auto e = Parse(b);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.message.find("VKQB"), std::string::npos) << e.message;
}

TEST(BundleVerifier, RejectsCorruptShaderCode) {
  auto b = SmallBundle();
  rt::BundleView v;
  ASSERT_TRUE(rt::ParseBundle(b.data(), b.size(), &v).ok());
  const auto* spv = v.bundle->modules()->Get(0)->spirv();
  const size_t pos = size_t(reinterpret_cast<const uint8_t*>(spv->data()) - b.data()) + 40;
  b[pos] ^= 0x10;
  auto e = Parse(b);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.message.find("integrity checksum mismatch"), std::string::npos) << e.message;
  Reseal(b);  // behind the bundle's checksum, the module's own
  e = Parse(b);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.message.find("shader module 0"), std::string::npos) << e.message;
}

// Any changed byte of the flatbuffer (metadata, spec constants, dispatches, code, padding, the
// checksum itself) is refused by the integrity checksum, before anything reaches a driver.
TEST(BundleVerifier, RejectsEveryFlippedByteOfTheFlatbuffer) {
  auto b = SmallBundle();
  uint32_t fb = 0;
  std::memcpy(&fb, b.data(), 4);
  EXPECT_EQ(fb::bundle::GetBundle(b.data() + 4)->format_version(), kBundleFormatVersion);
  for (size_t pos = 0; pos < size_t(fb) + 4; ++pos) {
    auto c = b;
    c[pos] ^= 0xFF;
    auto e = Parse(c);
    ASSERT_FALSE(e.ok()) << "byte " << pos;
    EXPECT_EQ(e.status, VKQC_ERROR_INVALID_BUNDLE);
  }
}

// The H100 sweep's crashing mutant: `OpSpecConstantOp CompositeExtract %gl_WorkGroupSize 0` with
// the index changed to 47872 passes spirv-val and crashed NVIDIA's compiler; the verifier refuses
// it (module hash and integrity resealed, as a tamperer would). Index 2 (in range) still loads.
TEST(BundleVerifier, RefusesSpecConstantOpIndexOutOfRange) {
  auto b = SmallBundle();
  auto* bundle = fb::bundle::GetMutableBundle(b.data() + 4);
  uint32_t* index = nullptr;
  for (uint32_t mi = 0; mi < bundle->modules()->size() && !index; ++mi) {
    auto* spv = bundle->mutable_modules()->GetMutableObject(mi)->mutable_spirv();
    uint32_t* w = spv->data();
    for (size_t at = 5; at < spv->size() && !index;) {
      const uint32_t count = w[at] >> 16;
      if ((w[at] & 0xffff) == 52 && count == 6 && w[at + 3] == 81) index = &w[at + 5];  // one index
      at += count ? count : 1;
    }
  }
  ASSERT_NE(index, nullptr) << "no OpSpecConstantOp CompositeExtract in the bundle's shaders";
  const uint32_t original = *index;
  *index = 47872;
  ASSERT_TRUE(testing_bundles::ResealBundle(b.data(), b.size(), /*module_hashes=*/true));
  auto e = Parse(b);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.message.find("index 47872 is out of range (3 elements)"), std::string::npos) << e.message;
  *index = 3;
  ASSERT_TRUE(testing_bundles::ResealBundle(b.data(), b.size(), true));
  EXPECT_FALSE(Parse(b).ok());
  *index = original == 2 ? 1 : 2;
  ASSERT_TRUE(testing_bundles::ResealBundle(b.data(), b.size(), true));
  EXPECT_TRUE(Parse(b).ok()) << Parse(b).message;
}

// Format version 1 (written before the checksum) is read without one; version 2 needs it.
TEST(BundleVerifier, IntegrityByFormatVersion) {
  auto b = SmallBundle();
  auto* bundle = fb::bundle::GetMutableBundle(b.data() + 4);
  ASSERT_TRUE(bundle->mutate_format_version(1));
  bundle->mutate_integrity(12345);  // a legacy file has none: whatever is there is not read
  EXPECT_TRUE(Parse(b).ok()) << Parse(b).message;
  ASSERT_TRUE(bundle->mutate_format_version(3));
  auto e = Parse(b);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.message.find("newer vkqc"), std::string::npos) << e.message;
  ASSERT_TRUE(bundle->mutate_format_version(2));
  e = Parse(b);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.message.find("integrity checksum mismatch"), std::string::npos) << e.message;
  Reseal(b);
  EXPECT_TRUE(Parse(b).ok()) << Parse(b).message;
}

TEST(BundleVerifier, RandomCorruptionNeverCrashes) {
  auto b = SmallBundle();
  std::mt19937 rng(5);
  for (int trial = 0; trial < 3000; ++trial) {
    auto c = b;
    const int flips = 1 + int(rng() % 4);
    for (int i = 0; i < flips; ++i) c[rng() % c.size()] ^= uint8_t(1 + rng() % 255);
    (void)Parse(c);  // must return, ok or not
  }
}

// A one-dispatch plan written through the normal writer: its dispatch reads a 64-byte slice of the
// 512-byte weight segment at `offset`.
BundlePlan OneDispatchPlan(uint64_t offset) {
  BundlePlan plan;
  plan.compiler_version = "test";
  // A header and the one instruction the verifier needs: OpExecutionMode %1 LocalSize 1 1 1.
  const std::vector<uint32_t> spirv = {0x07230203u, 0x00010300u, 0, 2, 0, (6u << 16) | 16u, 1, 17, 1, 1, 1};
  plan.modules.push_back({"m", spirv, Fnv1a64(spirv.data(), spirv.size() * 4)});
  PlanPipeline pp;
  pp.bindings = {0};
  plan.pipelines.push_back(pp);
  PlanProgram prog;
  prog.name = "p";
  prog.arena_size = 256;
  PlanDispatch d;
  d.buffers = {{SliceKind::Weights, 0, offset, 64, false}};
  prog.commands.push_back({false, d});
  prog.layers.push_back({"l", "linear", "v", "", "", 0, 1, 0, false, 0});
  plan.programs.push_back(prog);
  plan.weights.assign(512, 0);
  return plan;
}

// A bundle whose dispatch points outside its buffers, written through the normal writer.
TEST(BundleVerifier, RejectsSliceOutsideTheWeightSegment) {
  BundlePlan plan = OneDispatchPlan(1024);
  plan.requirements = DeriveRequirements(plan, 256);
  auto bytes = WriteBundle(plan);
  auto e = Parse(bytes);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.message.find("outside its buffer"), std::string::npos) << e.message;
  // The same dispatch inside the segment is accepted.
  plan.programs[0].commands[0].dispatch.buffers[0].offset = 256;
  EXPECT_TRUE(Parse(WriteBundle(plan)).ok()) << Parse(WriteBundle(plan)).message;
  // A pipeline index out of range is rejected.
  plan.programs[0].commands[0].dispatch.pipeline = 3;
  e = Parse(WriteBundle(plan));
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.message.find("pipeline index"), std::string::npos) << e.message;
}

// An offset alignment of 0 (or not a power of two) is refused before any slice offset is taken
// modulo it (the fuzz long run found the division by zero: tests/fuzz/corpus/vkqb/9a47ff...).
TEST(BundleVerifier, RejectsOffsetAlignmentNotAPowerOfTwo) {
  BundlePlan plan = OneDispatchPlan(64);
  for (uint32_t a : {0u, 3u, 48u}) {
    plan.requirements = DeriveRequirements(plan, a);
    auto e = Parse(WriteBundle(plan));
    ASSERT_FALSE(e.ok()) << a;
    EXPECT_NE(e.message.find("offset alignment must be a power of two"), std::string::npos) << e.message;
  }
  plan.requirements = DeriveRequirements(plan, 64);
  EXPECT_TRUE(Parse(WriteBundle(plan)).ok());
}

// flatbuffers' verifier checks a vector's length word for 4-byte alignment only: the fuzz long run
// made a bundle whose shape vector (8-byte elements) sat at 4 mod 8. Refused by name now.
TEST(BundleVerifier, RejectsMisalignedEightByteVectors) {
  const std::string path = std::string(VKQC_SOURCE_DIR) + "/tests/fuzz/corpus/vkqb/ae0dbed1972b78fc9f0a72c128d353066ff4f296";
  std::ifstream f(path, std::ios::binary);
  ASSERT_TRUE(f.good()) << path;
  std::vector<uint8_t> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(testing_bundles::ResealBundle(b.data(), b.size(), /*module_hashes=*/true));
  auto e = Parse(b);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.message.find("misaligned shape vector"), std::string::npos) << e.message;
}

// The public entry points take a bundle at any address (an asset inside a larger blob): one at an
// odd address is parsed from an aligned copy, accepted, and the same error text otherwise.
TEST(BundleVerifier, AcceptsABundleAtAnOddAddress) {
  const auto good = SmallBundle();
  std::vector<uint8_t> shifted(good.size() + 1);
  std::memcpy(shifted.data() + 1, good.data(), good.size());
  EXPECT_EQ(vkqc_verify_bundle(shifted.data() + 1, good.size()), VKQC_OK) << vkqc_last_error();
  shifted[1 + 200] ^= 0x55;
  EXPECT_EQ(vkqc_verify_bundle(shifted.data() + 1, good.size()), VKQC_ERROR_INVALID_BUNDLE);
}

TEST(Requirements, DerivedFromTheChosenKernelsOnly) {
  auto lvp = SmallBundle("lavapipe");
  auto hop = SmallBundle("nvidia-hopper");
  rt::BundleView a, b;
  ASSERT_TRUE(rt::ParseBundle(lvp.data(), lvp.size(), &a).ok());
  ASSERT_TRUE(rt::ParseBundle(hop.data(), hop.size(), &b).ok());
  // lavapipe: no accelerated int dot -> dequant kernels -> no int dot requirement.
  EXPECT_FALSE(a.bundle->requirements()->shader_integer_dot_product());
  EXPECT_TRUE(b.bundle->requirements()->shader_integer_dot_product());
  EXPECT_EQ(b.bundle->requirements()->required_subgroup_size(), 32u);
  EXPECT_LE(b.bundle->requirements()->max_compute_shared_memory_size(), 49152u);
  auto base = SmallBundle("android-baseline-2022");
  rt::BundleView c;
  ASSERT_TRUE(rt::ParseBundle(base.data(), base.size(), &c).ok());
  EXPECT_LE(c.bundle->requirements()->max_compute_work_group_invocations(), 128u);
  EXPECT_LE(c.bundle->requirements()->max_compute_shared_memory_size(), 16384u);
  EXPECT_EQ(c.bundle->requirements()->required_subgroup_size(), 0u);
  EXPECT_EQ(c.bundle->requirements()->api_version() >> 22, 1u);
  EXPECT_EQ((c.bundle->requirements()->api_version() >> 12) & 0x3FF, 1u);
}

TEST(Requirements, MissingListsEveryShortfall) {
  auto hop = SmallBundle("nvidia-hopper");
  rt::BundleView v;
  ASSERT_TRUE(rt::ParseBundle(hop.data(), hop.size(), &v).ok());
  rt::DeviceCaps caps;  // a weak device: Vulkan 1.1, small limits, no int dot, subgroup 16 fixed
  caps.api_version = (1u << 22) | (1u << 12);
  caps.max_compute_shared_memory_size = 1024;
  caps.max_compute_work_group_invocations = 64;
  for (int i = 0; i < 3; ++i) {
    caps.max_compute_work_group_size[i] = 64;
    caps.max_compute_work_group_count[i] = 65535;
  }
  caps.max_storage_buffer_range = 1 << 27;
  caps.max_per_stage_descriptor_storage_buffers = 4;
  caps.max_push_constants_size = 128;
  caps.min_storage_buffer_offset_alignment = 16;
  auto miss = rt::MissingRequirements(v.bundle->requirements(), caps);
  std::string all;
  for (const auto& m : miss) all += m + "\n";
  EXPECT_NE(all.find("Vulkan 1.3"), std::string::npos) << all;
  EXPECT_NE(all.find("shaderIntegerDotProduct"), std::string::npos) << all;
  EXPECT_NE(all.find("subgroupSizeControl"), std::string::npos) << all;
  EXPECT_NE(all.find("maxComputeWorkGroupInvocations"), std::string::npos) << all;
  // And a device that has everything passes.
  caps.api_version = (1u << 22) | (3u << 12);
  caps.shader_integer_dot_product = caps.subgroup_size_control = caps.compute_full_subgroups = true;
  caps.subgroup_arithmetic_compute = caps.required_subgroup_size_compute = true;
  caps.min_subgroup_size = caps.max_subgroup_size = 32;
  caps.max_compute_shared_memory_size = 49152;
  caps.max_compute_work_group_invocations = 1024;
  for (int i = 0; i < 3; ++i) caps.max_compute_work_group_size[i] = 1024;
  EXPECT_TRUE(rt::MissingRequirements(v.bundle->requirements(), caps).empty());
}

// shaderFloat16: derived from the SPIR-V capability by reflection, carried in the bundle, checked
// against the device.
TEST(Requirements, Float16FromTheShaderCapability) {
  auto f16 = CompileShader("roofline_fma.comp", {"VKQC_FP16"});
  auto f32 = CompileShader("roofline_fma.comp", {});
  ASSERT_TRUE(f16.ok() && f32.ok()) << (f16.ok() ? f32.error().message : f16.error().message);
  EXPECT_TRUE(f16->reflection.uses_float16);
  EXPECT_FALSE(f32->reflection.uses_float16);

  BundlePlan plan;
  plan.compiler_version = "test";
  plan.modules.push_back({f16->name, f16->spirv, f16->hash});
  PlanPipeline pp;
  pp.bindings = f16->reflection.storage_buffer_bindings;
  pp.push_constant_size = f16->reflection.push_constant_size;
  pp.float16 = f16->reflection.uses_float16;
  plan.pipelines.push_back(pp);
  PlanProgram prog;
  prog.name = "p";
  prog.arena_size = 256;
  PlanDispatch d;
  d.buffers = {Arena(0, 256, true)};
  d.push.assign(pp.push_constant_size, 0);
  prog.commands.push_back({false, d});
  prog.layers.push_back({"l", "roofline", "v", "", "", 0, 1, 0, false, 0});
  plan.programs.push_back(prog);
  plan.requirements = DeriveRequirements(plan, 256);
  EXPECT_TRUE(plan.requirements.shader_float16);
  const auto bytes = WriteBundle(plan);
  rt::BundleView v;
  ASSERT_TRUE(rt::ParseBundle(bytes.data(), bytes.size(), &v).ok());
  EXPECT_TRUE(v.bundle->requirements()->shader_float16());
  rt::DeviceCaps caps;
  caps.api_version = (1u << 22) | (3u << 12);
  caps.max_compute_shared_memory_size = 49152;
  caps.max_compute_work_group_invocations = 1024;
  for (int i = 0; i < 3; ++i) caps.max_compute_work_group_size[i] = caps.max_compute_work_group_count[i] = 65535;
  caps.max_storage_buffer_range = 1 << 27;
  caps.max_per_stage_descriptor_storage_buffers = 8;
  caps.max_push_constants_size = 128;
  caps.min_storage_buffer_offset_alignment = 16;
  auto miss = rt::MissingRequirements(v.bundle->requirements(), caps);
  ASSERT_EQ(miss.size(), 1u);
  EXPECT_NE(miss[0].find("shaderFloat16"), std::string::npos) << miss[0];
  caps.shader_float16 = true;
  EXPECT_TRUE(rt::MissingRequirements(v.bundle->requirements(), caps).empty());
  // The compiled models of the graph pipeline never ask for it.
  auto lvp = SmallBundle("lavapipe");
  ASSERT_TRUE(rt::ParseBundle(lvp.data(), lvp.size(), &v).ok());
  EXPECT_FALSE(v.bundle->requirements()->shader_float16());
}

}  // namespace
}  // namespace vkqc
