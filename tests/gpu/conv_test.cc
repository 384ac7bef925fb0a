// conv2d (im2col + GEMM, 1x1 as plain GEMM, depthwise direct) and dequantize on a real Vulkan
// device against the CPU reference: odd channel counts and sizes, stride, dilation, padding,
// int8 and float inputs and outputs, int-dot and dequant accumulation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>

#include "compiler/passes/pipeline.h"
#include "gpu_fixture.h"
#include "reference/reference.h"
#include "compiler/graph/synthetic.h"

namespace vkqc {
namespace {

using testing_graphs::OwnBytes;

struct ConvCase {
  int64_t n, h, w, c, cout, k, stride, dilation, pad;
  bool depthwise;
  int64_t groups;  // used when not depthwise
  bool x_int8;   // int8 graph input (else f32 with input_quant q8ta)
  bool out_q8;
  ir::Activation act;
};

ir::Graph MakeConv(const ConvCase& cc, uint32_t seed) {
  std::mt19937 rng(seed);
  ir::Graph g;
  ir::Tensor x{"x", {cc.n, cc.h, cc.w, cc.c}, cc.x_int8 ? ir::DType::I8 : ir::DType::F32, {}, {}};
  if (cc.x_int8) x.quant = ir::Quant{ir::Scheme::Q8TA, {0.05f}, {-3}, 0, 0};
  g.tensors.push_back(x);
  const int64_t cin_g = cc.depthwise ? 1 : cc.c / cc.groups;
  const int64_t cout = cc.depthwise ? cc.c : cc.cout;
  std::vector<uint8_t> w(size_t(cout * cc.k * cc.k * cin_g));
  for (auto& b : w) b = uint8_t(int(rng() % 255) - 127);
  ir::Quant wq;
  wq.scheme = ir::Scheme::Q8CSW;
  std::uniform_real_distribution<float> sd(0.5f, 1.5f);
  for (int64_t i = 0; i < cout; ++i) wq.scales.push_back(sd(rng) / (60.0f * std::sqrt(float(cc.k * cc.k * cin_g))));
  g.tensors.push_back({"w", {cout, cc.k, cc.k, cin_g}, ir::DType::I8, wq, OwnBytes(w.data(), w.size())});
  std::vector<float> b(static_cast<size_t>(cout));
  for (auto& v : b) v = std::uniform_real_distribution<float>(-0.3f, 0.3f)(rng);
  g.tensors.push_back({"b", {cout}, ir::DType::F32, {}, OwnBytes(b.data(), b.size() * 4)});
  const int64_t oh = (cc.h + 2 * cc.pad - cc.dilation * (cc.k - 1) - 1) / cc.stride + 1;
  const int64_t ow = (cc.w + 2 * cc.pad - cc.dilation * (cc.k - 1) - 1) / cc.stride + 1;
  ir::Tensor y{"y", {cc.n, oh, ow, cout}, cc.out_q8 ? ir::DType::I8 : ir::DType::F32, {}, {}};
  ir::Op op;
  op.name = "conv";
  op.type = ir::OpType::Conv2d;
  op.inputs = {0, 1, 2};
  op.outputs = {3};
  auto& a = op.conv2d;
  a.stride[0] = a.stride[1] = int32_t(cc.stride);
  a.dilation[0] = a.dilation[1] = int32_t(cc.dilation);
  for (auto& p : a.padding) p = int32_t(cc.pad);
  a.groups = cc.depthwise ? int32_t(cc.c) : int32_t(cc.groups);
  a.activation = cc.act;
  if (!cc.x_int8) a.input_quant = ir::Quant{ir::Scheme::Q8TA, {0.04f}, {5}, 0, 0};
  if (cc.out_q8) {
    a.output_quant = ir::Quant{ir::Scheme::Q8TO, {0.03f}, {-7}, 0, 0};
    y.quant = a.output_quant;
  }
  g.tensors.push_back(y);
  g.ops.push_back(op);
  g.inputs = {0};
  g.outputs = {3};
  return g;
}

// Selection overrides of one check: the dense algorithm, the GEMM kernel (true: the rows kernel,
// false: the linear family's) and the profile (empty: the test profile).
struct ConvForce {
  std::optional<conv::ConvAlgo> algo;
  std::optional<bool> rows;
  std::string profile;
};

void CheckConv(const ConvCase& cc, linear::Accum accum, uint32_t seed, const ConvForce& force = {}) {
  const std::optional<conv::ConvAlgo>& force_conv = force.algo;
  std::ostringstream where;
  where << (cc.depthwise ? "depthwise" : "conv") << " N=" << cc.n << " H=" << cc.h << " W=" << cc.w << " C=" << cc.c
        << " Cout=" << cc.cout << " k=" << cc.k << " s=" << cc.stride << " d=" << cc.dilation << " p=" << cc.pad
        << (cc.x_int8 ? " i8-in" : " f32-in") << (cc.out_q8 ? " q8to" : " f32-out") << " " << linear::AccumName(accum)
        << (force_conv ? std::string(" ") + conv::ConvAlgoName(*force_conv) : std::string())
        << (force.rows ? (*force.rows ? " rows" : " linear-gemm") : "") << " " << force.profile;
  SCOPED_TRACE(where.str());
  ir::Graph g = MakeConv(cc, seed);
  auto profile = LoadProfile(force.profile.empty() ? gpu_test::TestProfile() : force.profile);
  ASSERT_TRUE(profile.ok());
  CompileOptions o;
  o.select.force_accum = accum;
  o.conv.force = force_conv;
  o.conv.rows = force.rows;
  auto bundle = CompileGraph(g, *profile, o, 0);
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  std::mt19937 rng(seed + 3);
  const size_t count = size_t(cc.n * cc.h * cc.w * cc.c);
  std::vector<float> xf(count);
  std::vector<uint8_t> input;
  if (cc.x_int8) {
    for (auto& v : xf) {
      v = float(int(rng() % 256) - 128);
      input.push_back(uint8_t(int8_t(v)));
    }
  } else {
    xf = testing_graphs::RandomFloats(count, seed + 3, 2.0f);
    input.resize(count * 4);
    std::memcpy(input.data(), xf.data(), input.size());
  }
  gpu_test::Loaded guard;
  ASSERT_TRUE(gpu_test::LoadAndRun(*bundle, input.data(), input.size(), &guard));
  vkqc_model model = guard.model;
  gpu_test::ExpectNoValidationMessages(where.str());
  vkqc_tensor_info info;
  vkqc_model_output_info(model, 0, 0, &info);
  std::vector<uint8_t> out(info.size_bytes);
  ASSERT_EQ(vkqc_model_read_output(model, 0, 0, out.data(), out.size()), VKQC_OK);
  vkqc_layer_info li;
  vkqc_model_layer_info(model, 0, 0, &li);
  const bool integer = li.integer_path;
  const bool rows = std::string(li.variant).find("_rows") != std::string::npos;
  const std::string variant = li.variant;
  const bool gemm = variant.rfind("conv2d_pointwise_", 0) == 0 || variant.rfind("conv2d_im2col_", 0) == 0;
  if (force.rows) {
    EXPECT_EQ(rows, *force.rows && gemm) << li.variant;
  }
  // The rows kernel gathers an im2col'd layer's rows itself where K fits its registers.
  if (rows && variant.rfind("conv2d_im2col_", 0) == 0) {
    EXPECT_EQ(variant.find("_gather") != std::string::npos, cc.k * cc.k * cc.c <= conv::kGatherMaxK) << variant;
  }
  auto want = ref::RunGraphDetailed(g, {{"x", xf}}, {});
  ASSERT_TRUE(want.ok()) << want.error().message;
  const auto& w = want->outputs.at("y");
  int bad = 0;
  if (cc.out_q8) {
    ASSERT_EQ(out.size(), w.size());
    for (size_t i = 0; i < w.size(); ++i)
      if (std::abs(int(int8_t(out[i])) - int(w[i])) > 1 && ++bad <= 5)
        ADD_FAILURE() << "y[" << i << "] = " << int(int8_t(out[i])) << ", reference " << w[i];
  } else {
    const auto& mag = want->magnitude.at("y");
    const bool direct = cc.depthwise || cc.groups > 1 || force_conv == conv::ConvAlgo::Direct;
    const double rel = (integer && accum == linear::Accum::IntDot) || direct || rows ? 4e-7 : 2e-5;
    for (size_t i = 0; i < w.size(); ++i) {
      float got;
      std::memcpy(&got, out.data() + 4 * i, 4);
      if (!(std::fabs(double(got) - w[i]) <= rel * mag[i] + 1e-30) && ++bad <= 5)
        ADD_FAILURE() << "y[" << i << "] = " << got << ", reference " << w[i];
    }
  }
  EXPECT_EQ(bad, 0) << bad << " of " << w.size() << " outputs out of tolerance (" << li.variant << ")";
}

const ConvCase kCases[] = {
    // n, h, w, c, cout, k, stride, dilation, pad, depthwise, groups, x_int8, out_q8, act
    {1, 7, 7, 3, 13, 3, 1, 1, 1, false, 1, true, false, ir::Activation::None},
    {2, 15, 15, 13, 100, 3, 2, 1, 1, false, 1, false, true, ir::Activation::Relu6},
    {1, 33, 33, 3, 16, 5, 2, 1, 2, false, 1, false, false, ir::Activation::Relu},
    {1, 15, 15, 13, 8, 3, 1, 2, 2, false, 1, true, true, ir::Activation::None},
    {1, 7, 7, 100, 13, 1, 1, 1, 0, false, 1, true, false, ir::Activation::None},   // pointwise
    {2, 15, 15, 13, 100, 1, 1, 1, 0, false, 1, true, true, ir::Activation::Relu6},  // pointwise q8to
    {1, 15, 15, 13, 0, 3, 1, 1, 1, true, 1, true, true, ir::Activation::Relu6},    // depthwise
    {1, 33, 33, 100, 0, 3, 2, 1, 1, true, 1, false, false, ir::Activation::None},
    {2, 7, 7, 3, 0, 5, 1, 2, 4, true, 1, true, false, ir::Activation::Relu},
    {1, 15, 15, 14, 10, 3, 2, 1, 1, false, 2, true, true, ir::Activation::Relu6},  // groups 2
    {2, 7, 7, 100, 50, 5, 1, 2, 3, false, 2, false, false, ir::Activation::None},   // groups 2, dilation
};

// Runs a bundle on its inputs (in the graph's order) with validation; output 0's bytes and each
// layer's variant by layer name.
struct Ran {
  std::vector<uint8_t> out;                // output 0's bytes
  std::vector<std::vector<uint8_t>> outs;  // every output's
  std::map<std::string, std::string> variant;
};
void RunBundle(const std::vector<uint8_t>& bundle, const std::vector<std::vector<uint8_t>>& inputs,
               const std::string& where, Ran* r) {
  gpu_test::Loaded guard;
  ASSERT_TRUE(gpu_test::LoadAndRun(bundle, inputs[0].data(), inputs[0].size(), &guard));
  if (inputs.size() > 1) {  // the other inputs, then run again
    for (size_t i = 1; i < inputs.size(); ++i)
      ASSERT_EQ(vkqc_model_write_input(guard.model, 0, uint32_t(i), inputs[i].data(), inputs[i].size()), VKQC_OK);
    ASSERT_EQ(vkqc_model_run(guard.model, 0), VKQC_OK);
  }
  gpu_test::ExpectNoValidationMessages(where);
  for (uint32_t o = 0; o < vkqc_model_output_count(guard.model, 0); ++o) {
    vkqc_tensor_info info;
    vkqc_model_output_info(guard.model, 0, o, &info);
    r->outs.emplace_back(info.size_bytes);
    ASSERT_EQ(vkqc_model_read_output(guard.model, 0, o, r->outs.back().data(), r->outs.back().size()), VKQC_OK);
  }
  r->out = r->outs.at(0);
  for (uint32_t l = 0; l < vkqc_model_layer_count(guard.model, 0); ++l) {
    vkqc_layer_info li;
    vkqc_model_layer_info(guard.model, 0, l, &li);
    r->variant[li.name] = li.variant;
  }
}

// Random int8 codes for every graph input: as floats by name (the reference's inputs) and as bytes
// in the graph's input order (the bundle's).
void RandomInt8Inputs(const ir::Graph& g, uint32_t seed, std::map<std::string, std::vector<float>>* in,
                      std::vector<std::vector<uint8_t>>* bytes) {
  std::mt19937 rng(seed);
  for (int t : g.inputs) {
    std::vector<float> v(size_t(g.tensors[size_t(t)].NumElements(0)));
    std::vector<uint8_t> b;
    for (auto& e : v) {
      e = float(int(rng() % 256) - 128);
      b.push_back(uint8_t(int8_t(e)));
    }
    (*in)[g.tensors[size_t(t)].name] = v;
    bytes->push_back(b);
  }
}

TEST(Conv2d, MatchesReferenceIntDot) {
  uint32_t seed = 10;
  for (const auto& cc : kCases) CheckConv(cc, linear::Accum::IntDot, seed++);
}

TEST(Conv2d, MatchesReferenceDequant) {
  uint32_t seed = 50;
  for (const auto& cc : kCases) CheckConv(cc, linear::Accum::Dequant, seed++);
}

// The direct kernel for dense convolutions (the Adreno rule picks it for narrow layers on large
// maps): every case, forced; and im2col forced (pointwise, depthwise and grouped keep theirs).
TEST(Conv2d, MatchesReferenceDirectAndIm2colForced) {
  uint32_t seed = 90;
  for (const auto& cc : kCases) CheckConv(cc, linear::Accum::IntDot, seed++, {conv::ConvAlgo::Direct});
  for (const auto& cc : kCases) CheckConv(cc, linear::Accum::Dequant, seed++, {conv::ConvAlgo::Im2col});
}

// The rows kernel (conv_rows_i8.comp) for pointwise and im2col'd GEMMs on the integer path, forced
// on and off, int8 dot products and int8 products, on the test profile (on lavapipe: one lane per
// output word) and on android-16 (lanes splitting K: up to 32 at K = 1000): 1, 3, 17 and 70 rows, K
// of 13 to 1000 (not multiples of 16), 7 to 83 output channels (not multiples of 4), and 12769 rows
// (4 rows per invocation, 12769 = 4 * 3192 + 1: the last invocation has one); im2col'd layers with
// K <= 64 have their rows gathered by the kernel (VKQC_GATHER, float inputs quantized per tap).
TEST(Conv2d, RowsKernelMatchesReference) {
  const ConvCase cases[] = {
      // n, h, w, c, cout, k, stride, dilation, pad, depthwise, groups, x_int8, out_q8, act
      {1, 1, 1, 13, 13, 1, 1, 1, 0, false, 1, true, true, ir::Activation::Relu6},
      {1, 1, 3, 100, 50, 1, 1, 1, 0, false, 1, false, false, ir::Activation::None},
      {1, 17, 1, 600, 7, 1, 1, 1, 0, false, 1, true, true, ir::Activation::None},
      {2, 5, 7, 1000, 12, 1, 1, 1, 0, false, 1, true, false, ir::Activation::Relu},
      {1, 9, 9, 3, 16, 3, 2, 1, 1, false, 1, false, true, ir::Activation::Relu6},  // im2col, K = 27
      {1, 11, 13, 20, 36, 5, 1, 2, 3, false, 1, true, true, ir::Activation::None},  // im2col, K = 500
      {1, 113, 113, 24, 48, 1, 1, 1, 0, false, 1, true, true, ir::Activation::Relu6},  // 4 rows per invocation
      {1, 113, 113, 16, 83, 1, 1, 1, 0, false, 1, true, false, ir::Activation::None},
      // gathered by the kernel (K <= 64): int8 input with stride, dilation and padding; K = 64
      // exactly; K = 72 (im2col); 12544 rows x 21 words (android-16: 6 words per invocation, the
      // last of each row's 4 invocations 3)
      {1, 13, 11, 5, 30, 3, 2, 2, 2, false, 1, true, true, ir::Activation::Relu},
      {2, 9, 9, 7, 83, 3, 1, 1, 1, false, 1, false, false, ir::Activation::None},
      {1, 10, 10, 4, 9, 4, 1, 1, 2, false, 1, true, true, ir::Activation::None},
      {1, 10, 10, 8, 9, 3, 1, 1, 1, false, 1, true, true, ir::Activation::None},
      {1, 224, 224, 3, 83, 3, 2, 1, 1, false, 1, false, true, ir::Activation::Relu6},
  };
  uint32_t seed = 140;
  for (const char* profile : {"", "android-16"})
    for (linear::Accum accum : {linear::Accum::IntDot, linear::Accum::Dequant})
      for (const auto& cc : cases) {
        CheckConv(cc, accum, seed++, {std::nullopt, true, profile});
        CheckConv(cc, accum, seed++, {std::nullopt, false, profile});
      }
}

// An int8 add reading a pointwise convolution's output computed by the convolution
// (passes/fuse_rows.cc): in the rows kernel's epilogue, or as a second dispatch of the layer on
// the linear GEMM; the convolution's output on either side of the add, with and without the
// add's relu6, batch 1 and 2; against the reference, which runs conv and add apart.
TEST(Conv2d, ResidualAddComputedByTheConvolution) {
  uint32_t seed = 200;
  for (const char* profile : {"", "android-16"})
    for (bool rows : {true, false})
      for (int side = 0; side < 2; ++side)
        for (int64_t n : {1, 2}) {
          const ConvCase cc{n, 7, 5, 40, 40, 1, 1, 1, 0, false, 1, true, true, ir::Activation::Relu6};
          std::ostringstream where;
          where << profile << (rows ? " rows" : " linear-gemm") << " conv output as operand " << side << " n=" << n;
          SCOPED_TRACE(where.str());
          ir::Graph g = MakeConv(cc, seed);
          g.outputs.clear();
          ir::Tensor r{"r", g.tensors[3].shape, ir::DType::I8, ir::Quant{ir::Scheme::Q8TO, {0.045f}, {4}, 0, 0}, {}};
          g.tensors.push_back(r);
          ir::Op add = gpu_test::MakeOp("add", ir::OpType::Add, side == 0 ? std::vector<int>{3, 0} : std::vector<int>{0, 3}, {4});
          add.add.output_quant = *r.quant;
          if (n == 2) add.add.activation = ir::Activation::Relu6;
          g.ops.push_back(add);
          g.outputs = {4};
          auto p = LoadProfile(*profile ? profile : gpu_test::TestProfile());
          ASSERT_TRUE(p.ok());
          CompileOptions o;
          o.conv.rows = rows;
          auto bundle = CompileGraph(g, *p, o, 0);
          ASSERT_TRUE(bundle.ok()) << bundle.error().message;
          std::mt19937 rng(seed++);
          std::vector<float> xf(size_t(n * 7 * 5 * 40));
          std::vector<uint8_t> input;
          for (auto& v : xf) {
            v = float(int(rng() % 256) - 128);
            input.push_back(uint8_t(int8_t(v)));
          }
          Ran ran;
          ASSERT_NO_FATAL_FAILURE(RunBundle(*bundle, {input}, where.str(), &ran));
          const std::string cv = ran.variant["conv"];
          EXPECT_EQ(ran.variant["add"], "fused");
          EXPECT_EQ(cv.size() > 9 && cv.compare(cv.size() - 9, 9, "_rows_add") == 0, rows) << cv;
          const std::vector<uint8_t>& out = ran.out;
          auto want = ref::RunGraphDetailed(g, {{"x", xf}}, {});
          ASSERT_TRUE(want.ok()) << want.error().message;
          const auto& w = want->outputs.at("r");
          ASSERT_EQ(w.size(), out.size());
          int bad = 0, nonzero = 0;
          for (size_t i = 0; i < w.size(); ++i) {
            nonzero += w[i] != float(r.quant->zero_points[0]);
            if (std::abs(int(int8_t(out[i])) - int(w[i])) > 1 && ++bad <= 5)
              ADD_FAILURE() << "r[" << i << "] = " << int(int8_t(out[i])) << ", reference " << w[i];
          }
          EXPECT_EQ(bad, 0);
          EXPECT_GT(nonzero, int(w.size() / 4));  // the check sees real sums, not a constant
        }
}

// A per-tensor quantize read only by a dense 3x3 convolution is folded into it: the convolution's
// im2col quantizes its float input per tap (fold_quant.cc). Not folded for a pointwise reader (its
// rows are the GEMM input as they are) nor when the int8 tensor has a second reader. Each graph
// against the reference of the graph as written; within 1 LSB (int8 output).
TEST(Conv2d, QuantizeFoldedIntoIm2col) {
  uint32_t seed = 300;
  for (int k : {3, 1})
    for (bool second_reader : {false, true}) {
      ConvCase cc{1, 19, 17, 5, 12, k, k == 3 ? 2 : 1, 1, k / 2, false, 1, true, true, ir::Activation::Relu6};
      SCOPED_TRACE(std::string(k == 3 ? "3x3" : "1x1") + (second_reader ? " + a second reader" : ""));
      ir::Graph g = MakeConv(cc, seed++);  // x (int8) -> conv -> y
      // x becomes the quantize's output of a float input xf.
      g.tensors.push_back({"xf", g.tensors[0].shape, ir::DType::F32, {}, {}});
      const int xf = int(g.tensors.size() - 1);
      g.ops.insert(g.ops.begin(), gpu_test::MakeOp("quantize", ir::OpType::Quantize, {xf}, {0}));
      g.inputs = {xf};
      if (second_reader) {
        g.tensors.push_back({"xd", g.tensors[0].shape, ir::DType::F32, {}, {}});
        g.ops.push_back(gpu_test::MakeOp("dequantize", ir::OpType::Dequantize, {0}, {int(g.tensors.size() - 1)}));
        g.outputs.push_back(int(g.tensors.size() - 1));
      }
      auto p = LoadProfile(gpu_test::TestProfile());
      ASSERT_TRUE(p.ok());
      auto bundle = CompileGraph(g, *p, {}, 0);
      ASSERT_TRUE(bundle.ok()) << bundle.error().message;
      const std::vector<float> x = testing_graphs::RandomFloats(size_t(19 * 17 * 5), seed, 3.0f);
      std::vector<uint8_t> input(x.size() * 4);
      std::memcpy(input.data(), x.data(), input.size());
      gpu_test::Loaded guard;
      ASSERT_TRUE(gpu_test::LoadAndRun(*bundle, input.data(), input.size(), &guard));
      gpu_test::ExpectNoValidationMessages("quantize fold");
      std::string qv;
      for (uint32_t l = 0; l < vkqc_model_layer_count(guard.model, 0); ++l) {
        vkqc_layer_info li;
        vkqc_model_layer_info(guard.model, 0, l, &li);
        if (std::string(li.name) == "quantize") qv = li.variant;
      }
      EXPECT_EQ(qv == "folded", k == 3 && !second_reader) << qv;
      vkqc_tensor_info info;
      vkqc_model_output_info(guard.model, 0, 0, &info);
      std::vector<uint8_t> out(info.size_bytes);
      ASSERT_EQ(vkqc_model_read_output(guard.model, 0, 0, out.data(), out.size()), VKQC_OK);
      auto want = ref::RunGraphDetailed(g, {{"xf", x}}, {});
      ASSERT_TRUE(want.ok()) << want.error().message;
      const auto& w = want->outputs.at("y");
      ASSERT_EQ(w.size(), out.size());
      int bad = 0;
      for (size_t i = 0; i < w.size(); ++i)
        if (std::abs(int(int8_t(out[i])) - int(w[i])) > 1 && ++bad <= 5)
          ADD_FAILURE() << "y[" << i << "] = " << int(int8_t(out[i])) << ", reference " << w[i];
      EXPECT_EQ(bad, 0);
    }
}

// A depthwise convolution read only by a pointwise one is computed by it (fuse_rows.cc): on GPU
// profiles (android-16; android-baseline-2022 where no residual add needs a fifth storage buffer;
// the test profile on a GPU) in the rows kernel's VKQC_DWPW (each workgroup's pixels' depthwise outputs once in
// shared memory; K of 13 to 1000, output words in slices where they exceed a workgroup: 150 words
// at N = 600), on a CPU device's profile (lavapipe) and with kept intermediates as a first
// dispatch of the pointwise layer. The outputs match the reference of the graph as written within
// 1 LSB, and the fused and unfused programs are bit-identical (the depthwise bytes are the ones
// dwconv_i8.comp writes); with and without a residual add after the pointwise convolution.
TEST(Conv2d, DepthwiseComputedByThePointwiseConvolution) {
  struct Case {
    int64_t n, h, w, c, cout, stride;
    bool out_q8, residual;
  };
  const Case cases[] = {
      {1, 1, 1, 13, 7, 1, true, false},     {1, 3, 5, 40, 50, 1, false, false}, {1, 17, 1, 100, 100, 1, true, true},
      {2, 9, 9, 24, 16, 2, true, false},    {1, 5, 7, 1000, 600, 1, true, false}, {1, 14, 14, 96, 96, 1, true, true},
      {1, 12, 11, 16, 16, 2, false, false},
  };
  uint32_t seed = 400;
  for (const Case& cc : cases)
    for (const char* profile : {"android-16", "", "android-baseline-2022"}) {
      std::ostringstream where;
      where << cc.n << "x" << cc.h << "x" << cc.w << "x" << cc.c << " -> " << cc.cout << " stride " << cc.stride
            << (cc.residual ? " + add " : " ") << profile;
      SCOPED_TRACE(where.str());
      // x -> depthwise 3x3 (relu6, q8to) -> h -> pointwise -> y [-> add(y, x2) -> r]
      ConvCase dwc{cc.n, cc.h, cc.w, cc.c, 0, 3, cc.stride, 1, 1, true, 1, true, true, ir::Activation::Relu6};
      ir::Graph g = MakeConv(dwc, seed++);
      const ir::Graph pw = MakeConv({cc.n, g.tensors[3].shape[1], g.tensors[3].shape[2], cc.c, cc.cout, 1, 1, 1, 0,
                                     false, 1, true, cc.out_q8, ir::Activation::None},
                                    seed++);
      const int h = 3, base = int(g.tensors.size());
      g.tensors[h].quant = g.ops[0].conv2d.output_quant;
      for (size_t t = 1; t < pw.tensors.size(); ++t) g.tensors.push_back(pw.tensors[t]);  // w, b, y
      g.tensors[h].name = "h";
      g.tensors[size_t(base)].name = "pw.w";
      g.tensors[size_t(base + 1)].name = "pw.b";
      ir::Op op = pw.ops[0];
      op.name = "pw";
      op.inputs = {h, base, base + 1};
      op.outputs = {base + 2};
      g.ops.push_back(op);
      g.outputs = {base + 2};
      std::string out_name = "y";
      if (cc.residual) {  // the add's other operand: a second graph input, the pointwise output's shape
        g.tensors.push_back({"x2", g.tensors[size_t(base + 2)].shape, ir::DType::I8,
                             ir::Quant{ir::Scheme::Q8TA, {0.04f}, {2}, 0, 0}, {}});
        g.tensors.push_back({"r", g.tensors[size_t(base + 2)].shape, ir::DType::I8,
                             ir::Quant{ir::Scheme::Q8TO, {0.05f}, {-1}, 0, 0}, {}});
        const int x2 = base + 3, r = base + 4;
        ir::Op add = gpu_test::MakeOp("add", ir::OpType::Add, {base + 2, x2}, {r});
        add.add.output_quant = *g.tensors[size_t(r)].quant;
        g.ops.push_back(add);
        g.inputs = {0, x2};
        g.outputs = {r};
        out_name = "r";
      }
      auto p = LoadProfile(*profile ? profile : gpu_test::TestProfile());
      ASSERT_TRUE(p.ok());
      std::map<std::string, std::vector<float>> in;
      std::vector<std::vector<uint8_t>> bytes;
      RandomInt8Inputs(g, seed++, &in, &bytes);
      std::vector<std::vector<uint8_t>> outs;
      std::vector<std::string> pw_variants;
      for (bool keep : {false, true}) {
        CompileOptions o;
        o.keep_intermediates = keep;
        auto bundle = CompileGraph(g, *p, o, 0);
        ASSERT_TRUE(bundle.ok()) << bundle.error().message;
        Ran ran;
        ASSERT_NO_FATAL_FAILURE(RunBundle(*bundle, bytes, where.str(), &ran));
        outs.push_back(ran.out);
        EXPECT_EQ(ran.variant["conv"], "fused");
        pw_variants.push_back(ran.variant["pw"]);
      }
      ASSERT_EQ(pw_variants.size(), 2u);
      const bool in_kernel = pw_variants[0].find("_rows_dw") != std::string::npos;
      // Not on CPU devices (lavapipe's profile), and not where the add's operand would be a fifth
      // storage buffer of a target with 4 (android-baseline-2022).
      const bool expect = !HasQuirk(*p, "cpu_device") && p->max_per_stage_descriptor_storage_buffers >= (cc.residual ? 5u : 4u);
      EXPECT_EQ(in_kernel, expect) << pw_variants[0];
      if (*profile) {
        EXPECT_EQ(in_kernel, std::string(profile) == "android-16" || !cc.residual) << pw_variants[0];
      }
      EXPECT_EQ(pw_variants[1].find("_rows_dw"), std::string::npos) << "kept intermediates: " << pw_variants[1];
      EXPECT_EQ(outs[0], outs[1]) << "fused and unfused programs differ";
      auto want = ref::RunGraphDetailed(g, in, {});
      ASSERT_TRUE(want.ok()) << want.error().message;
      const auto& w = want->outputs.at(out_name);
      int bad = 0;
      for (size_t i = 0; i < w.size(); ++i) {
        double got;
        if (cc.out_q8 || cc.residual) {
          got = double(int8_t(outs[0][i]));
        } else {
          float f;
          std::memcpy(&f, outs[0].data() + 4 * i, 4);
          got = f;
        }
        const double tol = cc.out_q8 || cc.residual ? 1.0 : 4e-7 * want->magnitude.at(out_name)[i] + 1e-30;
        if (!(std::fabs(got - w[i]) <= tol) && ++bad <= 5) ADD_FAILURE() << out_name << "[" << i << "] = " << got << ", reference " << w[i];
      }
      EXPECT_EQ(bad, 0);
    }
}

// An inverted-residual block's expand layer run by the previous block's kernel (fuse_rows.cc
// conv_next, conv_rows_i8.comp VKQC_CHAIN): x -> depthwise 3x3 -> pointwise (-> add with a second
// input) -> pointwise relu6 "ex" -> z. On a GPU profile with 12 storage buffers per stage
// (android-16) the depthwise + pointwise kernel computes "ex" where its workgroups hold every
// output word and the chained work per invocation is small; otherwise (a slice of the output
// words, too much chained work, or lavapipe's CPU profile where the depthwise convolution is a
// dispatch of its own) "ex" is a further dispatch of that layer; android-baseline-2022 (4 storage
// buffers) keeps it a layer of its own, as kept intermediates do. Stride 2, batch 2, channel
// counts not multiples of 4. Both outputs (z, and the block's output y or sum r) against the
// reference within 1 LSB and bit for bit against the kept-intermediates program.
TEST(Conv2d, PointwiseChainedIntoTheDepthwisePointwiseKernel) {
  struct Case {
    int64_t n, h, w, c, cout, cexp, stride;
    bool residual, chained_on_gpu;
  };
  const Case cases[] = {
      {1, 9, 9, 16, 24, 144, 2, false, true},  {2, 7, 5, 24, 24, 90, 1, true, true},
      {1, 13, 11, 13, 7, 30, 1, false, true},  {1, 17, 3, 32, 64, 192, 1, true, true},
      {1, 5, 7, 1000, 600, 40, 1, false, false},  // slices of the output words
      {1, 6, 6, 8, 30, 1500, 1, false, false},    // 16 pixels x 375 words x 2 units over 128 invocations
  };
  uint32_t seed = 700;
  for (const Case& cc : cases)
    for (const char* profile : {"android-16", "", "android-baseline-2022"}) {
      std::ostringstream where;
      where << cc.n << "x" << cc.h << "x" << cc.w << "x" << cc.c << " -> " << cc.cout << (cc.residual ? " + add" : "")
            << " -> " << cc.cexp << " stride " << cc.stride << " " << profile;
      SCOPED_TRACE(where.str());
      ConvCase dwc{cc.n, cc.h, cc.w, cc.c, 0, 3, cc.stride, 1, 1, true, 1, true, true, ir::Activation::Relu6};
      ir::Graph g = MakeConv(dwc, seed++);
      const int64_t oh = g.tensors[3].shape[1], ow = g.tensors[3].shape[2];
      g.tensors[3].name = "h";
      // Appends a pointwise q8to convolution of `in` (its weights, bias and output); returns the output.
      auto pointwise = [&](const char* name, int in, int64_t cout, ir::Activation act) {
        const ir::Graph pw = MakeConv({cc.n, oh, ow, g.tensors[size_t(in)].shape[3], cout, 1, 1, 1, 0, false, 1, true,
                                       true, act}, seed++);
        const int base = int(g.tensors.size());
        for (size_t t = 1; t < pw.tensors.size(); ++t) g.tensors.push_back(pw.tensors[t]);
        for (int t = 0; t < 3; ++t) g.tensors[size_t(base + t)].name = std::string(name) + "." + "wby"[t];
        ir::Op op = pw.ops[0];
        op.name = name;
        op.inputs = {in, base, base + 1};
        op.outputs = {base + 2};
        g.ops.push_back(op);
        return base + 2;
      };
      int block = pointwise("pw", 3, cc.cout, ir::Activation::None);
      g.inputs = {0};
      if (cc.residual) {
        const auto shape = g.tensors[size_t(block)].shape;
        g.tensors.push_back({"x2", shape, ir::DType::I8, ir::Quant{ir::Scheme::Q8TA, {0.04f}, {2}, 0, 0}, {}});
        g.tensors.push_back({"r", shape, ir::DType::I8, ir::Quant{ir::Scheme::Q8TO, {0.05f}, {-1}, 0, 0}, {}});
        const int x2 = int(g.tensors.size()) - 2, r = x2 + 1;
        ir::Op add = gpu_test::MakeOp("add", ir::OpType::Add, {block, x2}, {r});
        add.add.output_quant = *g.tensors[size_t(r)].quant;
        g.ops.push_back(add);
        g.inputs = {0, x2};
        block = r;
      }
      const int z = pointwise("ex", block, cc.cexp, ir::Activation::Relu6);
      g.outputs = {z, block};
      auto p = LoadProfile(*profile ? profile : gpu_test::TestProfile());
      ASSERT_TRUE(p.ok());
      std::map<std::string, std::vector<float>> in;
      std::vector<std::vector<uint8_t>> bytes;
      RandomInt8Inputs(g, seed++, &in, &bytes);
      std::vector<Ran> runs;
      for (bool keep : {false, true}) {
        CompileOptions o;
        o.keep_intermediates = keep;
        auto bundle = CompileGraph(g, *p, o, 0);
        ASSERT_TRUE(bundle.ok()) << bundle.error().message;
        runs.emplace_back();
        ASSERT_NO_FATAL_FAILURE(RunBundle(*bundle, bytes, where.str(), &runs.back()));
      }
      // Marked with 6 storage buffers per stage or more; in the kernel on GPU rules (not on a CPU
      // device, whose depthwise convolutions run apart) with one more for a fused add: android-16,
      // and a GPU's probed profile as the test profile (lavapipe's is a CPU device).
      const uint32_t buffers = p->max_per_stage_descriptor_storage_buffers;
      const bool marked = buffers >= 6;
      const bool gpu_rules = !HasQuirk(*p, "cpu_device") && buffers >= (cc.residual ? 7u : 6u);
      EXPECT_EQ(runs[0].variant["pw"].find("_chain") != std::string::npos, gpu_rules && cc.chained_on_gpu)
          << runs[0].variant["pw"];
      EXPECT_EQ(runs[0].variant["ex"] == "fused", marked) << runs[0].variant["ex"];
      EXPECT_NE(runs[1].variant["ex"], "fused") << "kept intermediates";
      EXPECT_EQ(runs[1].variant["pw"].find("_chain"), std::string::npos) << "kept intermediates";
      ASSERT_EQ(runs[0].outs.size(), 2u);
      EXPECT_EQ(runs[0].outs, runs[1].outs) << "chained and unchained programs differ";
      auto want = ref::RunGraphDetailed(g, in, {});
      ASSERT_TRUE(want.ok()) << want.error().message;
      for (int o = 0; o < 2; ++o) {
        const std::string name = g.tensors[size_t(g.outputs[size_t(o)])].name;
        const auto& w = want->outputs.at(name);
        ASSERT_EQ(runs[0].outs[size_t(o)].size(), w.size()) << name;
        int bad = 0;
        for (size_t i = 0; i < w.size(); ++i) {
          const double got = double(int8_t(runs[0].outs[size_t(o)][i]));
          if (!(std::fabs(got - w[i]) <= 1.0) && ++bad <= 5) ADD_FAILURE() << name << "[" << i << "] = " << got << ", reference " << w[i];
        }
        EXPECT_EQ(bad, 0) << name;
      }
    }
}

// quantize -> dequantize round trips: y = scale * (q - zp), bit for bit the reference's.
TEST(Dequantize, PerTensorAndPerToken) {
  for (ir::Scheme scheme : {ir::Scheme::Q8TA, ir::Scheme::DQ8CA}) {
    ir::Graph g;
    g.tensors.push_back({"x", {5, 37}, ir::DType::F32, {}, {}});
    ir::Quant q;
    q.scheme = scheme;
    if (scheme == ir::Scheme::Q8TA) q = ir::Quant{scheme, {0.02f}, {4}, 0, 0};
    g.tensors.push_back({"q", {5, 37}, ir::DType::I8, q, {}});
    g.tensors.push_back({"y", {5, 37}, ir::DType::F32, {}, {}});
    g.ops = {gpu_test::MakeOp("quant", ir::OpType::Quantize, {0}, {1}),
             gpu_test::MakeOp("dequant", ir::OpType::Dequantize, {1}, {2})};
    g.inputs = {0};
    g.outputs = {2};
    auto profile = LoadProfile(gpu_test::TestProfile());
    ASSERT_TRUE(profile.ok());
    auto bundle = CompileGraph(g, *profile, {}, 0);
    ASSERT_TRUE(bundle.ok()) << bundle.error().message;
    auto x = testing_graphs::RandomFloats(5 * 37, 4, 3.0f);
    std::vector<float> y;
    ASSERT_TRUE(gpu_test::RunBundle(*bundle, 0, x, &y));
    gpu_test::ExpectNoValidationMessages("dequantize");
    auto want = ref::RunGraph(g, {{"x", x}}, {});
    ASSERT_TRUE(want.ok()) << want.error().message;
    for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], want->at("y")[i]) << ir::SchemeName(scheme) << " " << i;
  }
}

// An int8 global average pool that only reads a pointwise convolution's output is computed by
// the convolution (fuse_rows.cc): in its rows kernel (VKQC_POOL: each image's output codes summed
// per workgroup, only the pool's output written) or, with kept intermediates or on the linear
// family's GEMM, as a second dispatch of its layer. 1 to 150 pixels per image (150: two rounds of
// 128 slots), batch 2, K of 13 to 1000 (lanes on GPU profiles), output channels not multiples of
// 4; a pool whose kernel is the map (not flagged global) too; not fused where the convolution's
// output is also a graph output; after a depthwise convolution the pointwise layer computes (GPU
// profiles: the depthwise convolution in the kernel, the pool a second dispatch). Against the reference of the graph as written (1 LSB), and the
// in-kernel and second-dispatch programs bit for bit.
TEST(Conv2d, GlobalPoolComputedByTheConvolution) {
  struct Case {
    int64_t n, h, w, c, cout;
    bool global_flag, second_reader;
    bool dw_first = false;  // the pointwise convolution reads a depthwise one
  };
  const Case cases[] = {
      {1, 7, 7, 320, 1280, true, false}, {2, 7, 7, 40, 30, true, false},   {1, 1, 1, 13, 7, true, false},
      {1, 10, 15, 100, 83, true, false}, {1, 3, 3, 1000, 12, false, false}, {1, 5, 5, 24, 16, true, true},
      {1, 7, 7, 96, 40, true, false, true},
  };
  uint32_t seed = 500;
  for (const Case& cc : cases)
    for (const char* profile : {"", "android-16", "android-baseline-2022"}) {
      std::ostringstream where;
      where << cc.n << "x" << cc.h << "x" << cc.w << "x" << cc.c << " -> " << cc.cout
            << (cc.global_flag ? " global" : " kernel = map") << (cc.second_reader ? " + conv output " : " ")
            << (cc.dw_first ? "after a depthwise conv " : "") << profile;
      SCOPED_TRACE(where.str());
      // x [-> depthwise 3x3 -> h] -> pointwise "conv" (relu6, q8to) -> y -> avg pool -> p
      const ConvCase pwc{cc.n, cc.h, cc.w, cc.c, cc.cout, 1, 1, 1, 0, false, 1, true, true, ir::Activation::Relu6};
      ir::Graph g = MakeConv(pwc, seed++);
      int y = 3;
      if (cc.dw_first) {
        g = MakeConv({cc.n, cc.h, cc.w, cc.c, 0, 3, 1, 1, 1, true, 1, true, true, ir::Activation::Relu6}, seed++);
        const ir::Graph pw = MakeConv(pwc, seed++);
        const int base = int(g.tensors.size());
        g.ops[0].name = "dw";
        g.tensors[3].name = "h";
        g.tensors[3].quant = g.ops[0].conv2d.output_quant;
        for (size_t t = 1; t < pw.tensors.size(); ++t) g.tensors.push_back(pw.tensors[t]);  // w, b, y
        g.tensors[size_t(base)].name = "pw.w";
        g.tensors[size_t(base + 1)].name = "pw.b";
        ir::Op op = pw.ops[0];
        op.inputs = {3, base, base + 1};
        op.outputs = {base + 2};
        g.ops.push_back(op);
        y = base + 2;
      }
      const int pt = int(g.tensors.size());
      g.tensors.push_back({"p", {cc.n, 1, 1, cc.cout}, ir::DType::I8, ir::Quant{ir::Scheme::Q8TO, {0.02f}, {-30}, 0, 0}, {}});
      ir::Op pool = gpu_test::MakeOp("pool", ir::OpType::AvgPool2d, {y}, {pt});
      pool.pool.global = cc.global_flag;
      if (!cc.global_flag) {
        pool.pool.kernel[0] = int32_t(cc.h);
        pool.pool.kernel[1] = int32_t(cc.w);
      }
      pool.pool.output_quant = *g.tensors[size_t(pt)].quant;
      g.ops.push_back(pool);
      g.outputs = {pt};
      if (cc.second_reader) g.outputs.push_back(y);
      auto p = LoadProfile(*profile ? profile : gpu_test::TestProfile());
      ASSERT_TRUE(p.ok());
      std::mt19937 rng(seed++);
      std::vector<float> xf(size_t(cc.n * cc.h * cc.w * cc.c));
      std::vector<uint8_t> input;
      for (auto& v : xf) {
        v = float(int(rng() % 256) - 128);
        input.push_back(uint8_t(int8_t(v)));
      }
      std::vector<std::vector<uint8_t>> outs;
      std::vector<std::string> conv_variants;
      for (int mode = 0; mode < 3; ++mode) {  // default, kept intermediates, the linear family's GEMM
        CompileOptions o;
        o.keep_intermediates = mode == 1;
        if (mode == 2) o.conv.rows = false;
        auto bundle = CompileGraph(g, *p, o, 0);
        ASSERT_TRUE(bundle.ok()) << bundle.error().message;
        Ran ran;
        ASSERT_NO_FATAL_FAILURE(RunBundle(*bundle, {input}, where.str(), &ran));
        outs.push_back(ran.out);
        EXPECT_EQ(ran.variant["pool"] == "fused", !cc.second_reader) << ran.variant["pool"];
        conv_variants.push_back(ran.variant["conv"]);
      }
      ASSERT_EQ(conv_variants.size(), 3u);
      // A depthwise convolution inside the kernel (GPU profiles) leaves the pool a dispatch of its own.
      const bool dw_in_kernel = cc.dw_first && !HasQuirk(*p, "cpu_device");
      EXPECT_EQ(conv_variants[0].find("_rows_pool") != std::string::npos, !cc.second_reader && !dw_in_kernel)
          << conv_variants[0];
      EXPECT_EQ(conv_variants[0].find("_rows_dw") != std::string::npos, dw_in_kernel) << conv_variants[0];
      EXPECT_EQ(conv_variants[1].find("_pool"), std::string::npos) << "kept intermediates: " << conv_variants[1];
      EXPECT_EQ(conv_variants[2].find("_rows"), std::string::npos) << "linear GEMM: " << conv_variants[2];
      EXPECT_EQ(outs[0], outs[1]) << "the pool in the kernel and as a second dispatch differ";
      auto want = ref::RunGraphDetailed(g, {{"x", xf}}, {});
      ASSERT_TRUE(want.ok()) << want.error().message;
      const auto& w = want->outputs.at("p");
      for (int mode = 0; mode < 3; ++mode) {
        ASSERT_EQ(outs[size_t(mode)].size(), w.size());
        int bad = 0, distinct = 0;
        for (size_t i = 0; i < w.size(); ++i) {
          distinct += i > 0 && w[i] != w[i - 1];
          if (std::abs(int(int8_t(outs[size_t(mode)][i])) - int(w[i])) > 1 && ++bad <= 5)
            ADD_FAILURE() << "mode " << mode << ": p[" << i << "] = " << int(int8_t(outs[size_t(mode)][i]))
                          << ", reference " << w[i];
        }
        EXPECT_EQ(bad, 0) << "mode " << mode;
        if (w.size() > 4) {
          EXPECT_GT(distinct, int(w.size() / 4)) << "the check sees real averages, not a constant";
        }
      }
    }
}

}  // namespace
}  // namespace vkqc
