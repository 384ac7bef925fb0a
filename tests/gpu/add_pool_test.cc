// int8 add with requantization and average pooling (windowed and global) against the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "compiler/passes/pipeline.h"
#include "gpu_fixture.h"
#include "reference/reference.h"
#include "compiler/graph/synthetic.h"

namespace vkqc {
namespace {

struct Out {
  std::vector<uint8_t> bytes;
};

::testing::AssertionResult RunRaw(const ir::Graph& g, const std::vector<std::vector<uint8_t>>& inputs, Out* out) {
  auto profile = LoadProfile(gpu_test::TestProfile());
  if (!profile.ok()) return ::testing::AssertionFailure() << profile.error().message;
  auto bundle = CompileGraph(g, *profile, {}, 0);
  if (!bundle.ok()) return ::testing::AssertionFailure() << bundle.error().message;
  vkqc_model model = nullptr;
  vkqc_model_options mo;
  vkqc_model_options_init(&mo);
  mo.poison_memory = 1;
  if (vkqc_model_load(gpu_test::Context(), bundle->data(), bundle->size(), &mo, &model) != VKQC_OK)
    return ::testing::AssertionFailure() << vkqc_last_error();
  gpu_test::Loaded guard;
  guard.model = model;
  for (uint32_t i = 0; i < inputs.size(); ++i)
    if (vkqc_model_write_input(model, 0, i, inputs[i].data(), inputs[i].size()) != VKQC_OK)
      return ::testing::AssertionFailure() << vkqc_last_error();
  if (vkqc_model_run(model, 0) != VKQC_OK) return ::testing::AssertionFailure() << vkqc_last_error();
  vkqc_tensor_info info;
  vkqc_model_output_info(model, 0, 0, &info);
  out->bytes.resize(info.size_bytes);
  if (vkqc_model_read_output(model, 0, 0, out->bytes.data(), out->bytes.size()) != VKQC_OK)
    return ::testing::AssertionFailure() << vkqc_last_error();
  return ::testing::AssertionSuccess();
}

std::vector<uint8_t> RandomI8(size_t n, uint32_t seed, std::vector<float>* as_float) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> b(n);
  for (size_t i = 0; i < n; ++i) {
    const int v = int(rng() % 256) - 128;
    b[i] = uint8_t(int8_t(v));
    as_float->push_back(float(v));
  }
  return b;
}

TEST(AddPool, Int8AddRequantizes) {
  for (auto act : {ir::Activation::None, ir::Activation::Relu6}) {
    ir::Graph g;
    g.tensors.push_back({"a", {2, 5, 7, 13}, ir::DType::I8, ir::Quant{ir::Scheme::Q8TA, {0.05f}, {3}, 0, 0}, {}});
    g.tensors.push_back({"b", {2, 5, 7, 13}, ir::DType::I8, ir::Quant{ir::Scheme::Q8TA, {0.02f}, {-7}, 0, 0}, {}});
    ir::Quant oq{ir::Scheme::Q8TO, {0.04f}, {-1}, 0, 0};
    g.tensors.push_back({"y", {2, 5, 7, 13}, ir::DType::I8, oq, {}});
    ir::Op op;
    op.name = "add";
    op.type = ir::OpType::Add;
    op.inputs = {0, 1};
    op.outputs = {2};
    op.add.activation = act;
    op.add.output_quant = oq;
    g.ops = {op};
    g.inputs = {0, 1};
    g.outputs = {2};
    std::vector<float> af, bf;
    auto a = RandomI8(2 * 5 * 7 * 13, 1, &af), b = RandomI8(2 * 5 * 7 * 13, 2, &bf);
    Out out;
    ASSERT_TRUE(RunRaw(g, {a, b}, &out));
    gpu_test::ExpectNoValidationMessages("add");
    auto want = ref::RunGraph(g, {{"a", af}, {"b", bf}}, {});
    ASSERT_TRUE(want.ok()) << want.error().message;
    for (size_t i = 0; i < out.bytes.size(); ++i)
      ASSERT_LE(std::abs(int(int8_t(out.bytes[i])) - int(want->at("y")[i])), 1) << i;
  }
}

TEST(AddPool, AveragePoolWindowedAndGlobal) {
  for (bool global : {false, true}) {
    ir::Graph g;
    ir::Quant xq{ir::Scheme::Q8TA, {0.05f}, {-20}, 0, 0};
    g.tensors.push_back({"x", {2, 15, 15, 13}, ir::DType::I8, xq, {}});
    ir::Quant oq{ir::Scheme::Q8TO, {0.03f}, {5}, 0, 0};
    ir::Op op;
    op.name = "pool";
    op.type = ir::OpType::AvgPool2d;
    op.inputs = {0};
    op.outputs = {1};
    op.pool.global = global;
    op.pool.output_quant = oq;
    if (global) {
      g.tensors.push_back({"y", {2, 13}, ir::DType::I8, oq, {}});
    } else {
      op.pool.kernel[0] = op.pool.kernel[1] = 3;
      op.pool.stride[0] = op.pool.stride[1] = 2;
      for (auto& p : op.pool.padding) p = 1;
      g.tensors.push_back({"y", {2, 8, 8, 13}, ir::DType::I8, oq, {}});
    }
    g.ops = {op};
    g.inputs = {0};
    g.outputs = {1};
    std::vector<float> xf;
    auto x = RandomI8(2 * 15 * 15 * 13, 3, &xf);
    Out out;
    ASSERT_TRUE(RunRaw(g, {x}, &out));
    gpu_test::ExpectNoValidationMessages("pool");
    auto want = ref::RunGraph(g, {{"x", xf}}, {});
    ASSERT_TRUE(want.ok()) << want.error().message;
    ASSERT_EQ(out.bytes.size(), want->at("y").size());
    for (size_t i = 0; i < out.bytes.size(); ++i)
      ASSERT_LE(std::abs(int(int8_t(out.bytes[i])) - int(want->at("y")[i])), 1) << (global ? "global " : "") << i;
  }
}

}  // namespace
}  // namespace vkqc
