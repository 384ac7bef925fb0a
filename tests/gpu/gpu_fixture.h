// GPU test support: one vkqc context per test process, on lavapipe unless VKQC_TEST_ICD or
// VK_DRIVER_FILES says otherwise, with the Khronos validation layer and synchronization
// validation on. Every validation message is recorded; tests assert there are none.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "compiler/graph/ir.h"
#include "tools/vkqc/validation_waiver.h"
#include "vkqc/vkqc.h"

namespace vkqc::gpu_test {

inline std::vector<std::string>& Messages() {
  static std::vector<std::string> m;
  return m;
}

// The one waiver (tools/vkqc/validation_waiver.h): the Debian 1.3.239 layer's messages about
// VK_KHR_cooperative_matrix, each by what identifies it; every other message fails the test.
inline validation::Waiver& Waivers() {
  static validation::Waiver w;
  return w;
}

inline void OnLog(void*, vkqc_log_level level, const char* msg) {
  if (level != VKQC_LOG_VALIDATION) return;
  if (Waivers().Waive(msg)) return;
  Messages().push_back(msg);
}

inline vkqc_context Context() {
  static vkqc_context ctx = [] {
    if (!std::getenv("VK_DRIVER_FILES")) {
      const char* icd = std::getenv("VKQC_TEST_ICD");
      setenv("VK_DRIVER_FILES", icd ? icd : "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json", 1);
    }
    vkqc_context_options o;
    vkqc_context_options_init(&o);
    o.enable_validation = std::getenv("VKQC_TEST_NO_VALIDATION") ? 0 : 1;
    o.log = &OnLog;
    vkqc_context c = nullptr;
    if (vkqc_context_create(&o, &c) != VKQC_OK) {
      ADD_FAILURE() << "cannot create a Vulkan context: " << vkqc_last_error();
      return vkqc_context(nullptr);
    }
    return c;
  }();
  return ctx;
}

// The profile the device under test is compiled for: VKQC_TEST_PROFILE (a built-in name or a
// file written by `vkqc probe`), default lavapipe.
inline std::string TestProfile() {
  const char* p = std::getenv("VKQC_TEST_PROFILE");
  return p && *p ? p : "lavapipe";
}

// Fails the current test if validation said anything since the last call; clears the list.
inline void ExpectNoValidationMessages(const std::string& where) {
  auto& m = Messages();
  for (const auto& s : m) ADD_FAILURE() << where << ": validation message: " << s;
  m.clear();
  if (Waivers().waived()) {
    std::printf("[ waiver   ] %zu validation messages of a layer that predates VK_KHR_cooperative_matrix\n",
                Waivers().waived());
    Waivers().ResetCount();
  }
}

struct Loaded {
  vkqc_model model = nullptr;
  ~Loaded() { vkqc_model_destroy(model); }
};

// Loads `bundle` into `l` with poisoned memory, writes input 0 of program 0 (`bytes` bytes at
// `input`) and runs program 0 once.
inline ::testing::AssertionResult LoadAndRun(const std::vector<uint8_t>& bundle, const void* input, size_t bytes,
                                             Loaded* l) {
  vkqc_model_options mo;
  vkqc_model_options_init(&mo);
  mo.poison_memory = 1;
  if (vkqc_model_load(Context(), bundle.data(), bundle.size(), &mo, &l->model) != VKQC_OK)
    return ::testing::AssertionFailure() << "load: " << vkqc_last_error();
  if (vkqc_model_write_input(l->model, 0, 0, input, bytes) != VKQC_OK)
    return ::testing::AssertionFailure() << "write_input: " << vkqc_last_error();
  if (vkqc_model_run(l->model, 0) != VKQC_OK) return ::testing::AssertionFailure() << "run: " << vkqc_last_error();
  return ::testing::AssertionSuccess();
}

// Loads `bundle` on `ctx` (poisoned memory), runs program 0 once with f32 input x and returns
// output 0 as floats; keeps the model in *keep (the caller destroys it) or destroys it.
inline std::vector<float> RunOnContext(vkqc_context ctx, const std::vector<uint8_t>& bundle,
                                       const std::vector<float>& x, vkqc_model* keep = nullptr) {
  vkqc_model m = nullptr;
  vkqc_model_options mo;
  vkqc_model_options_init(&mo);
  mo.poison_memory = 1;
  EXPECT_EQ(vkqc_model_load(ctx, bundle.data(), bundle.size(), &mo, &m), VKQC_OK) << vkqc_last_error();
  if (!m) return {};
  vkqc_tensor_info info;
  EXPECT_EQ(vkqc_model_output_info(m, 0, 0, &info), VKQC_OK);
  std::vector<float> y(info.size_bytes / 4, -1.0f);
  EXPECT_EQ(vkqc_model_write_input(m, 0, 0, x.data(), x.size() * 4), VKQC_OK) << vkqc_last_error();
  EXPECT_EQ(vkqc_model_run(m, 0), VKQC_OK) << vkqc_last_error();
  EXPECT_EQ(vkqc_model_read_output(m, 0, 0, y.data(), y.size() * 4), VKQC_OK) << vkqc_last_error();
  if (keep) {
    *keep = m;
  } else {
    vkqc_model_destroy(m);
  }
  return y;
}

// An op of `type` from tensors `inputs` to `outputs` (indices), attributes at their defaults.
inline ir::Op MakeOp(const char* name, ir::OpType type, std::vector<int> inputs, std::vector<int> outputs) {
  ir::Op op;
  op.name = name;
  op.type = type;
  op.inputs = std::move(inputs);
  op.outputs = std::move(outputs);
  return op;
}

// Loads `bundle` (poisoned memory), runs program `tokens` with one f32 input, returns the
// f32 output and the layers' integer_path flags.
inline ::testing::AssertionResult RunBundle(const std::vector<uint8_t>& bundle, uint32_t tokens,
                                            const std::vector<float>& input, std::vector<float>* output,
                                            std::vector<bool>* integer_path = nullptr,
                                            std::vector<std::string>* variants = nullptr,
                                            uint64_t staging_bytes = 0) {
  vkqc_context ctx = Context();
  if (!ctx) return ::testing::AssertionFailure() << "no context";
  Loaded l;
  vkqc_model_options mo;
  vkqc_model_options_init(&mo);
  mo.poison_memory = 1;
  mo.staging_bytes = staging_bytes;
  mo.force_staging = staging_bytes != 0;
  if (vkqc_model_load(ctx, bundle.data(), bundle.size(), &mo, &l.model) != VKQC_OK)
    return ::testing::AssertionFailure() << "load: " << vkqc_last_error();
  uint32_t prog = 0;
  if (vkqc_model_find_program(l.model, tokens, &prog) != VKQC_OK)
    return ::testing::AssertionFailure() << vkqc_last_error();
  if (vkqc_model_write_input(l.model, prog, 0, input.data(), input.size() * 4) != VKQC_OK)
    return ::testing::AssertionFailure() << "write_input: " << vkqc_last_error();
  vkqc_tensor_info info;
  if (vkqc_model_output_info(l.model, prog, 0, &info) != VKQC_OK)
    return ::testing::AssertionFailure() << vkqc_last_error();
  // The output buffer was poisoned with NaN at load; check that it still is before the run.
  void* mapped = nullptr;
  if (vkqc_model_map_output(l.model, prog, 0, &mapped) != VKQC_OK || !mapped)
    return ::testing::AssertionFailure() << "map_output: " << vkqc_last_error();
  uint32_t first_word;
  std::memcpy(&first_word, mapped, 4);
  if (first_word != 0xFFFFFFFFu) return ::testing::AssertionFailure() << "output was not poisoned";
  if (vkqc_model_run(l.model, prog) != VKQC_OK) return ::testing::AssertionFailure() << "run: " << vkqc_last_error();
  output->assign(info.size_bytes / 4, 0.0f);
  if (vkqc_model_read_output(l.model, prog, 0, output->data(), info.size_bytes) != VKQC_OK)
    return ::testing::AssertionFailure() << vkqc_last_error();
  for (uint32_t i = 0; i < vkqc_model_layer_count(l.model, prog); ++i) {
    vkqc_layer_info li;
    vkqc_model_layer_info(l.model, prog, i, &li);
    if (integer_path) integer_path->push_back(li.integer_path);
    if (variants) variants->push_back(li.variant);
  }
  return ::testing::AssertionSuccess();
}

}  // namespace vkqc::gpu_test
