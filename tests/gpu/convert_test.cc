// quantize / dequantize through convert.comp on a real Vulkan device against the CPU reference:
// f32 and f16 to and from int8 and int32; per tensor, per channel (every axis of a rank-4
// tensor, channel counts 3, 13, 100) and per token; odd element counts so f16 words are shared
// by two rows; saturation at both ends of int8 and int32. Outputs are poisoned before the run
// and must equal the reference bit for bit (the integer codes, and the f32/f16 values).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "compiler/common/half.h"
#include "compiler/passes/pipeline.h"
#include "gpu_fixture.h"
#include "reference/reference.h"

namespace vkqc {
namespace {

struct ConvertCase {
  std::vector<int64_t> shape;
  ir::DType float_type;  // F32 or F16: the input of quantize and the output of dequantize
  ir::DType int_type;    // I8 or I32
  ir::Scheme scheme;     // Q8TA, Q8PC (axis), DQ8CA
  int32_t axis;
};

std::vector<uint8_t> Encode(const std::vector<float>& v, ir::DType t) {
  std::vector<uint8_t> b(v.size() * size_t(ir::DTypeBits(t) / 8));
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == ir::DType::F16) {
      const uint16_t h = FloatToHalf(v[i]);
      std::memcpy(b.data() + 2 * i, &h, 2);
    } else {
      std::memcpy(b.data() + 4 * i, &v[i], 4);
    }
  }
  return b;
}

float DecodeFloat(const uint8_t* p, ir::DType t) {
  if (t == ir::DType::F16) return HalfToFloat(uint16_t(p[0] | (p[1] << 8)));
  float f;
  std::memcpy(&f, p, 4);
  return f;
}

// x (float) -> quantize -> q (int) -> dequantize -> y (float); outputs q and y.
void CheckConvert(const ConvertCase& cc, uint32_t seed) {
  std::ostringstream where;
  where << ir::DTypeName(cc.float_type) << " <-> " << ir::DTypeName(cc.int_type) << " " << ir::SchemeName(cc.scheme)
        << " axis " << cc.axis << " shape";
  for (int64_t d : cc.shape) where << " " << d;
  SCOPED_TRACE(where.str());
  std::mt19937 rng(seed);
  ir::Graph g;
  g.tensors.push_back({"x", cc.shape, cc.float_type, {}, {}});
  ir::Quant q;
  q.scheme = cc.scheme;
  const bool i32 = cc.int_type == ir::DType::I32;
  const float base = i32 ? (cc.float_type == ir::DType::F16 ? 1e-6f : 1e-4f) : 0.02f;
  if (cc.scheme == ir::Scheme::Q8TA) {
    q.scales = {base};
    q.zero_points = {i32 ? 0 : -7};
  } else if (cc.scheme == ir::Scheme::Q8PC) {
    q.axis = cc.axis;
    for (int64_t c = 0; c < cc.shape[size_t(cc.axis)]; ++c) {
      q.scales.push_back(base * std::uniform_real_distribution<float>(0.3f, 3.0f)(rng));
      q.zero_points.push_back(i32 ? 0 : int32_t(rng() % 61) - 30);
    }
  }
  g.tensors.push_back({"q", cc.shape, cc.int_type, q, {}});
  g.tensors.push_back({"y", cc.shape, cc.float_type, {}, {}});
  g.ops = {gpu_test::MakeOp("quant", ir::OpType::Quantize, {0}, {1}),
           gpu_test::MakeOp("dequant", ir::OpType::Dequantize, {1}, {2})};
  g.inputs = {0};
  g.outputs = {1, 2};
  auto profile = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(profile.ok());
  auto bundle = CompileGraph(g, *profile, {}, 0);
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;

  size_t count = 1;
  for (int64_t d : cc.shape) count *= size_t(d);
  std::vector<float> x(count);
  std::normal_distribution<float> nd(0.0f, i32 ? 50.0f : 1.0f);
  for (auto& v : x) v = nd(rng);
  // Saturation at both ends, and exact ties of the rounding.
  if (count > 8) {
    x[0] = i32 ? 1e30f : 100.0f;
    x[1] = i32 ? -1e30f : -100.0f;
    x[2] = i32 ? 3e5f : 4.0f;
    x[3] = 0.0f;
  }
  if (cc.float_type == ir::DType::F16)
    for (auto& v : x) v = std::clamp(v, -6e4f, 6e4f);
  const std::vector<uint8_t> input = Encode(x, cc.float_type);

  gpu_test::Loaded guard;
  ASSERT_TRUE(gpu_test::LoadAndRun(*bundle, input.data(), input.size(), &guard));
  vkqc_model model = guard.model;
  gpu_test::ExpectNoValidationMessages(where.str());
  std::vector<uint8_t> qb(count * size_t(ir::DTypeBits(cc.int_type) / 8));
  std::vector<uint8_t> yb(count * size_t(ir::DTypeBits(cc.float_type) / 8));
  ASSERT_EQ(vkqc_model_read_output(model, 0, 0, qb.data(), qb.size()), VKQC_OK) << vkqc_last_error();
  ASSERT_EQ(vkqc_model_read_output(model, 0, 1, yb.data(), yb.size()), VKQC_OK) << vkqc_last_error();

  ref::RunOptions ro;
  auto want = ref::RunGraphDetailed(g, {{"x", x}}, ro);
  ASSERT_TRUE(want.ok()) << want.error().message;
  int bad = 0, saturated = 0;
  for (size_t i = 0; i < count; ++i) {
    int64_t got_q, want_q;
    if (i32) {
      int32_t v;
      std::memcpy(&v, qb.data() + 4 * i, 4);
      got_q = v;
      want_q = want->int32_outputs.at("q")[i];
      saturated += want_q == INT32_MAX || want_q == INT32_MIN;
    } else {
      got_q = int8_t(qb[i]);
      want_q = int64_t(want->outputs.at("q")[i]);
      saturated += want_q == 127 || want_q == -128;
    }
    if (got_q != want_q && ++bad <= 5) ADD_FAILURE() << "q[" << i << "] = " << got_q << ", reference " << want_q;
    const float got_y = DecodeFloat(yb.data() + i * (yb.size() / count), cc.float_type);
    const float want_y = want->outputs.at("y")[i];
    if (std::bit_cast<uint32_t>(got_y) != std::bit_cast<uint32_t>(want_y) && ++bad <= 5)
      ADD_FAILURE() << "y[" << i << "] = " << got_y << ", reference " << want_y;
  }
  EXPECT_EQ(bad, 0);
  if (count > 8) {
    EXPECT_GE(saturated, 2) << "the saturation inputs did not saturate";
  }
}

TEST(Convert, PerTensorAndPerChannelAllTypes) {
  uint32_t seed = 200;
  for (ir::DType ft : {ir::DType::F32, ir::DType::F16})
    for (ir::DType it : {ir::DType::I8, ir::DType::I32}) {
      CheckConvert({{5, 37}, ft, it, ir::Scheme::Q8TA, 0}, seed++);
      CheckConvert({{1, 3}, ft, it, ir::Scheme::Q8TA, 0}, seed++);
      for (int32_t axis = 0; axis < 4; ++axis) CheckConvert({{2, 7, 15, 13}, ft, it, ir::Scheme::Q8PC, axis}, seed++);
      CheckConvert({{33, 100}, ft, it, ir::Scheme::Q8PC, 1}, seed++);
      CheckConvert({{3, 7, 3}, ft, it, ir::Scheme::Q8PC, 2}, seed++);
    }
}

// f32 -> dq8ca (per token) -> f16: dequantize with each row's own parameters.
TEST(Convert, PerTokenToHalf) {
  ir::Graph g;
  g.tensors.push_back({"x", {17, 33}, ir::DType::F32, {}, {}});
  ir::Quant q;
  q.scheme = ir::Scheme::DQ8CA;
  g.tensors.push_back({"q", {17, 33}, ir::DType::I8, q, {}});
  g.tensors.push_back({"y", {17, 33}, ir::DType::F16, {}, {}});
  const ir::Op qop = gpu_test::MakeOp("quant", ir::OpType::Quantize, {0}, {1});
  const ir::Op dop = gpu_test::MakeOp("dequant", ir::OpType::Dequantize, {1}, {2});
  g.ops = {qop, dop};
  g.inputs = {0};
  g.outputs = {2};
  auto profile = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(profile.ok());
  auto bundle = CompileGraph(g, *profile, {}, 0);
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  std::mt19937 rng(77);
  std::vector<float> x(17 * 33);
  for (auto& v : x) v = std::normal_distribution<float>(0.5f, 2.0f)(rng);
  gpu_test::Loaded guard;
  ASSERT_TRUE(gpu_test::LoadAndRun(*bundle, x.data(), x.size() * 4, &guard));
  vkqc_model model = guard.model;
  gpu_test::ExpectNoValidationMessages("per-token to f16");
  std::vector<uint8_t> yb(x.size() * 2);
  ASSERT_EQ(vkqc_model_read_output(model, 0, 0, yb.data(), yb.size()), VKQC_OK);
  auto want = ref::RunGraph(g, {{"x", x}}, {});
  ASSERT_TRUE(want.ok()) << want.error().message;
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(DecodeFloat(yb.data() + 2 * i, ir::DType::F16), want->at("y")[i]) << i;
}

// The f16 conversion itself, against compiler/common/half.h's (itself checked against _Float16
// and exhaustively in tests/unit/core/half_test.cc) on every half bit pattern's
// neighbourhood: subnormals, the largest finite value, ties.
TEST(Convert, HalfRoundingMatchesReferenceOnEdges) {
  std::vector<float> x;
  for (float v : {5.9604645e-8f, 2.9802322e-8f, 2.98023259e-8f, 8.940697e-8f, 6.1035156e-5f, 6.0975552e-5f,
                  65504.0f, 65519.99f, 65520.0f, 1.0009765625f, 1.00048828125f, 1.00146484375f, -0.0f, 3.0e-10f})
    for (float s : {1.0f, -1.0f}) x.push_back(v * s);
  while (x.size() % 7) x.push_back(0.25f);
  // Per-element channels (q8pc along the only axis) with scale x / 1024: q = 1024 and
  // y = scale * 1024 = x exactly, so y carries x's f32 value into the f16 rounding.
  ir::Graph g;
  const int64_t n = int64_t(x.size());
  g.tensors.push_back({"x", {n}, ir::DType::F32, {}, {}});
  ir::Quant q;
  q.scheme = ir::Scheme::Q8PC;
  for (float v : x) {
    q.scales.push_back(v == 0.0f ? 1.0f : std::fabs(v) / 1024.0f);
    q.zero_points.push_back(0);
  }
  g.tensors.push_back({"q", {n}, ir::DType::I32, q, {}});
  g.tensors.push_back({"y", {n}, ir::DType::F16, {}, {}});
  g.ops = {{"quant", ir::OpType::Quantize, {0}, {1}, {}, {}, {}, {}},
           {"dequant", ir::OpType::Dequantize, {1}, {2}, {}, {}, {}, {}}};
  g.inputs = {0};
  g.outputs = {2};
  auto profile = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(profile.ok());
  auto bundle = CompileGraph(g, *profile, {}, 0);
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  std::vector<uint8_t> yb(x.size() * 2);
  vkqc_model model = nullptr;
  ASSERT_EQ(vkqc_model_load(gpu_test::Context(), bundle->data(), bundle->size(), nullptr, &model), VKQC_OK);
  gpu_test::Loaded guard;
  guard.model = model;
  ASSERT_EQ(vkqc_model_write_input(model, 0, 0, x.data(), x.size() * 4), VKQC_OK);
  ASSERT_EQ(vkqc_model_run(model, 0), VKQC_OK) << vkqc_last_error();
  gpu_test::ExpectNoValidationMessages("half edges");
  ASSERT_EQ(vkqc_model_read_output(model, 0, 0, yb.data(), yb.size()), VKQC_OK);
  auto want = ref::RunGraph(g, {{"x", x}}, {});
  ASSERT_TRUE(want.ok()) << want.error().message;
  for (size_t i = 0; i < x.size(); ++i) {
    const uint16_t got = uint16_t(yb[2 * i] | (yb[2 * i + 1] << 8));
    const uint16_t exp = FloatToHalf(want->at("y")[i]);
    EXPECT_EQ(got, exp) << "x = " << x[i];
    if (x[i] != 0.0f) {
      EXPECT_EQ(want->at("y")[i], RoundToHalf(x[i])) << "x = " << x[i];
    }
  }
}

}  // namespace
}  // namespace vkqc
