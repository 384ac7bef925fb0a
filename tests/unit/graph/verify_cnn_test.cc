// VerifyGraph rules of the static-int8 CNN ops (dequantize, conv2d, add, avg_pool2d) and of
// linear's fused_relu6, starting from MakeCnnGraph (the CNN example of docs/graph-json.md):
// accepted variants, then one table row per rejected check.
#include <functional>

#include "compiler/graph/verify.h"
#include "graph_test_util.h"

namespace vkqc {
namespace {

using testing_util::FailsWith;
using testing_util::MakeCnnGraph;
using testing_util::Own;
using testing_util::Pattern;
using testing_util::Scales;
using testing_util::ToBytes;

constexpr const char* kOrigin = "cnn.vkqg";

// Tensor and op indices of MakeCnnGraph.
constexpr int kX = 0, kXq = 1, kStemW = 2, kStemB = 3, kH1 = 4, kDwW = 5, kH2 = 7, kPwW = 8,
              kH3 = 9, kH4 = 10, kPooled = 11, kFeat = 12;
constexpr int kQuantOp = 0, kStem = 1, kDw = 2, kPw = 3, kAdd = 4, kPool = 5, kDeq = 6, kFc = 7;

void ExpectOk(const ir::Graph& g) {
  Status s = VerifyGraph(g, kOrigin);
  EXPECT_TRUE(s.ok()) << s.error().message;
}

ir::Quant Q(ir::Scheme s, float scale, int32_t zp) { return ir::Quant{s, {scale}, {zp}, 0, 0}; }

// Replaces tensor t's constant data with a pattern for `shape` (i8) and `cout` q8csw scales.
void SetWeight(ir::Graph& g, int t, std::vector<int64_t> shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  g.tensors[t].shape = shape;
  g.tensors[t].data = Own(ToBytes(Pattern(n, 9)));
  g.tensors[t].quant->scales = Scales(static_cast<size_t>(shape[0]), 0.01f);
}

TEST(VerifyCnnTest, AcceptsDocumentedCnn) { ExpectOk(MakeCnnGraph()); }

TEST(VerifyCnnTest, AcceptsVariants) {
  {
    SCOPED_TRACE("f32 conv input, weight-only, f32 output, relu");
    ir::Graph g = MakeCnnGraph();
    g.ops[kStem].inputs[0] = kX;  // quant_x stays; its output is now unused
    g.ops[kStem].conv2d.activation = ir::Activation::Relu;
    ExpectOk(g);
    g.ops[kStem].conv2d.input_quant = Q(ir::Scheme::Q8TA, 0.1f, 0);
    ExpectOk(g);
    g.ops[kStem].conv2d.input_quant = ir::Quant{ir::Scheme::Float, {}, {}, 0, 0};
    ExpectOk(g);
  }
  {
    SCOPED_TRACE("i8 conv with f32 output, then f32 add, f32 pool, f32 add");
    ir::Graph g = MakeCnnGraph();
    g.ops[kPw].conv2d.output_quant = {};
    g.tensors[kH3].dtype = ir::DType::F32;
    g.tensors[kH3].quant.reset();
    g.ops[kAdd].inputs = {kH3, kH3};
    g.ops[kAdd].add.output_quant = {};
    g.tensors[kH4].dtype = ir::DType::F32;
    g.tensors[kH4].quant.reset();
    g.ops[kPool].pool.output_quant = {};
    g.tensors[kPooled].dtype = ir::DType::F32;
    g.tensors[kPooled].quant.reset();
    g.ops[kDeq].type = ir::OpType::Add;  // f32 + f32 -> f32 instead of dequantize
    g.ops[kDeq].inputs = {kPooled, kPooled};
    ExpectOk(g);
  }
  {
    SCOPED_TRACE("grouped conv (groups 2) with dilation 2 and stride 1");
    ir::Graph g = MakeCnnGraph();
    g.ops[kDw].conv2d.groups = 2;
    SetWeight(g, kDwW, {8, 3, 3, 4});
    g.ops[kDw].conv2d.dilation[0] = g.ops[kDw].conv2d.dilation[1] = 2;
    for (int32_t& p : g.ops[kDw].conv2d.padding) p = 2;
    ExpectOk(g);
  }
  {
    SCOPED_TRACE("asymmetric padding and stride: 8x8 -> (8+0+1-3)/2+1 = 4");
    ir::Graph g = MakeCnnGraph();
    ir::Conv2dAttrs& a = g.ops[kStem].conv2d;
    a.padding[0] = a.padding[1] = 0;
    ExpectOk(g);
  }
  {
    SCOPED_TRACE("global pool writing [N, 1, 1, C]");
    ir::Graph g = MakeCnnGraph();
    g.tensors[kPooled].shape = {ir::kSymbolicDim, 1, 1, 8};
    g.tensors[kFeat].shape = {ir::kSymbolicDim, 1, 1, 8};
    g.ops.pop_back();  // no classifier: the f32 features are the output
    g.tensors.resize(kFeat + 1);
    g.outputs = {kFeat};
    ExpectOk(g);
  }
  {
    SCOPED_TRACE("windowed pool 3x3 stride 1 padding 1: 4x4 -> 4x4");
    ir::Graph g = MakeCnnGraph();
    ir::Pool2dAttrs& p = g.ops[kPool].pool;
    p.global = false;
    p.kernel[0] = p.kernel[1] = 3;
    for (int32_t& v : p.padding) v = 1;
    g.tensors[kPooled].shape = {ir::kSymbolicDim, 4, 4, 8};
    g.tensors[kFeat].shape = {ir::kSymbolicDim, 4, 4, 8};
    g.ops.pop_back();
    g.tensors.resize(kFeat + 1);
    g.outputs = {kFeat};
    ExpectOk(g);
  }
  {
    SCOPED_TRACE("add with relu, f32 pool, dequantize of per-token int8, linear relu6");
    ir::Graph g = MakeCnnGraph();
    g.ops[kAdd].add.activation = ir::Activation::Relu;
    g.ops[kFc].linear.fused_relu6 = true;
    ExpectOk(g);
  }
}

TEST(VerifyCnnTest, AcceptsDequantizeOfPerTokenInt8) {
  ir::Graph g = MakeCnnGraph();
  // Re-point: quantize feat' (f32 [N, 8]) per token, dequantize it, then the classifier.
  ir::Tensor fq;
  fq.name = "fq";
  fq.shape = {ir::kSymbolicDim, 8};
  fq.dtype = ir::DType::I8;
  fq.quant = ir::Quant{ir::Scheme::DQ8CA, {}, {}, 0, 0};
  ir::Tensor f2 = g.tensors[kFeat];
  f2.name = "feat2";
  g.tensors.push_back(fq);
  g.tensors.push_back(f2);
  const int fq_i = static_cast<int>(g.tensors.size()) - 2;
  ir::Op q;
  q.name = "quant_feat";
  q.type = ir::OpType::Quantize;
  q.inputs = {kFeat};
  q.outputs = {fq_i};
  ir::Op d;
  d.name = "dequant_feat";
  d.type = ir::OpType::Dequantize;
  d.inputs = {fq_i};
  d.outputs = {fq_i + 1};
  g.ops.insert(g.ops.begin() + kFc, {q, d});
  g.ops.back().inputs[0] = fq_i + 1;
  ExpectOk(g);
}

struct RejectCase {
  const char* name;
  std::function<void(ir::Graph&)> mutate;
  std::vector<std::string> fragments;
};

std::string OpLabel(int i, const char* name, const char* type) {
  return "op " + std::to_string(i) + " '" + name + "' (" + type + ")";
}

TEST(VerifyCnnTest, Rejects) {
  const std::string stem = OpLabel(kStem, "stem", "conv2d");
  const std::string dw = OpLabel(kDw, "dw", "conv2d");
  const std::string pw = OpLabel(kPw, "pw", "conv2d");
  const std::string add = OpLabel(kAdd, "residual", "add");
  const std::string pool = OpLabel(kPool, "pool", "avg_pool2d");
  const std::string deq = OpLabel(kDeq, "dequant", "dequantize");
  const std::string fc = OpLabel(kFc, "fc", "linear");
  const std::vector<RejectCase> cases = {
      // ---- conv2d
      {"BadGroups", [](ir::Graph& g) { g.ops[kDw].conv2d.groups = 3; },
       {dw, "groups 3 must be >= 1 and divide the 8 input channels of 'h1'"}},
      {"ZeroGroups", [](ir::Graph& g) { g.ops[kDw].conv2d.groups = 0; }, {dw, "groups 0"}},
      {"GroupsNotDividingCout",
       [](ir::Graph& g) {
         g.ops[kDw].conv2d.groups = 2;
         SetWeight(g, kDwW, {7, 3, 3, 4});
         g.tensors[6].shape = {7};
         g.tensors[6].data = Own(ToBytes(std::vector<float>(7, 0.0f)));
         g.tensors[kH2].shape = {ir::kSymbolicDim, 4, 4, 7};
       },
       {dw, "groups 2 must divide the 7 output channels of weight 'dw.weight'"}},
      {"WeightShapeMismatch", [](ir::Graph& g) { SetWeight(g, kDwW, {8, 3, 3, 2}); },
       {dw, "weight 'dw.weight' has shape [8, 3, 3, 2]", "input 'h1' [batch, 4, 4, 8]",
        "with groups 8 needs [Cout, KH, KW, 1]"}},
      {"WeightNotRank4", [](ir::Graph& g) { SetWeight(g, kPwW, {8, 8}); },
       {pw, "weight 'pw.weight' has shape [8, 8]", "needs [Cout, KH, KW, 8]"}},
      {"WeightScaleCount",
       [](ir::Graph& g) { g.tensors[kStemW].quant->scales.pop_back(); },
       {stem, "weight 'stem.weight' has 7 scales but 8 output channels"}},
      {"WeightNotQ8csw",
       [](ir::Graph& g) { g.tensors[kStemW].quant->scheme = ir::Scheme::Q4GSW; },
       {stem, "weight 'stem.weight' has scheme q4gsw", "q8csw"}},
      {"WeightNotConstant",
       [](ir::Graph& g) { g.ops[kPw].inputs[1] = kH2; },
       {pw, "weight 'h2' must be a constant"}},
      {"OutputSizeBelowOne",
       [](ir::Graph& g) {
         for (int32_t& p : g.ops[kDw].conv2d.padding) p = 0;
         g.ops[kDw].conv2d.dilation[0] = 2;  // 3x3 with dilation 2 spans 5 > 4
       },
       {dw, "does not fit input 'h1' [batch, 4, 4, 8]", "the output would be 0x2"}},
      {"ZeroStride", [](ir::Graph& g) { g.ops[kStem].conv2d.stride[1] = 0; },
       {stem, "stride [2, 0] must be >= 1"}},
      {"ZeroDilation", [](ir::Graph& g) { g.ops[kStem].conv2d.dilation[0] = 0; },
       {stem, "dilation [0, 1] must be >= 1"}},
      {"NegativePadding", [](ir::Graph& g) { g.ops[kStem].conv2d.padding[2] = -1; },
       {stem, "padding [1, 1, -1, 1] (top, left, bottom, right) must be >= 0"}},
      {"WrongOutputShape",
       [](ir::Graph& g) { g.ops[kStem].conv2d.stride[0] = 1; },
       {stem, "output 'h1' is i8 [batch, 4, 4, 8]", "must be i8 [batch, 8, 4, 8]"}},
      {"InputNotRank4", [](ir::Graph& g) { g.ops[kFc].type = ir::OpType::Conv2d; },
       {"op 7 'fc' (conv2d)", "input 'feat' has shape [batch, 8]", "rank 4 NHWC"}},
      {"InputQuantOnInt8Input",
       [](ir::Graph& g) { g.ops[kStem].conv2d.input_quant = Q(ir::Scheme::Q8TA, 0.1f, 0); },
       {stem, "input 'xq' is already int8", "remove input_quant"}},
      {"Dq8caInputQuant",
       [](ir::Graph& g) {
         g.ops[kStem].inputs[0] = kX;
         g.ops[kStem].conv2d.input_quant.scheme = ir::Scheme::DQ8CA;
       },
       {stem, "input_quant scheme dq8ca is not supported by conv2d", "q8ta"}},
      {"PerTokenInt8AddInput",
       [](ir::Graph& g) {
         // quantize feat per token into fq, then add(fq, fq) -> sum (i8 q8to).
         ir::Tensor fq = g.tensors[kPooled];
         fq.name = "fq";
         fq.quant = ir::Quant{ir::Scheme::DQ8CA, {}, {}, 0, 0};
         ir::Tensor sum = g.tensors[kPooled];
         sum.name = "sum";
         g.tensors.push_back(fq);
         g.tensors.push_back(sum);
         const int fq_i = static_cast<int>(g.tensors.size()) - 2;
         ir::Op q;
         q.name = "quant_feat";
         q.type = ir::OpType::Quantize;
         q.inputs = {kFeat};
         q.outputs = {fq_i};
         ir::Op a;
         a.name = "sum_fq";
         a.type = ir::OpType::Add;
         a.inputs = {fq_i, fq_i};
         a.outputs = {fq_i + 1};
         a.add.output_quant = g.ops[kPool].pool.output_quant;
         g.ops.push_back(q);
         g.ops.push_back(a);
       },
       {"op 9 'sum_fq' (add)", "input 'fq' is i8 with quant dq8ca", "add takes per-tensor int8"}},
      {"OutputQuantMismatch",
       [](ir::Graph& g) { g.tensors[kH3].quant = Q(ir::Scheme::Q8TO, 0.5f, 2); },
       {pw, "output 'h3' must carry the same q8to quant"}},
      {"Int8OutputWithoutQuant", [](ir::Graph& g) { g.ops[kPw].conv2d.output_quant = {}; },
       {pw, "output 'h3' is i8", "or set output_quant q8to"}},
      {"BadBias",
       [](ir::Graph& g) { g.tensors[kStemB].shape = {2, 4}; },
       {stem, "bias 'stem.bias' must be a constant f32 [8]"}},
      {"UnknownActivation",
       [](ir::Graph& g) { g.ops[kStem].conv2d.activation = static_cast<ir::Activation>(7); },
       {stem, "unknown activation 7"}},
      {"ForeignAttrs", [](ir::Graph& g) { g.ops[kStem].linear.fused_relu = true; },
       {stem, "carries linear attributes", "a conv2d op takes only its own"}},
      {"ConvAttrsOnDequantize", [](ir::Graph& g) { g.ops[kDeq].conv2d.groups = 2; },
       {deq, "carries conv2d attributes", "a dequantize op takes none"}},
      // ---- add
      {"AddShapeMismatch", [](ir::Graph& g) { g.ops[kAdd].inputs[1] = kXq; },
       {add, "inputs 'h1' [batch, 4, 4, 8] and 'xq' [batch, 8, 8, 3] differ in shape"}},
      {"AddInt8WithoutQ8to", [](ir::Graph& g) { g.ops[kAdd].add.output_quant = {}; },
       {add, "int8 inputs 'h1' and 'h3' need output_quant q8to", "but it is none"}},
      {"AddMixedDtypes",
       [](ir::Graph& g) {
         g.ops[kPw].conv2d.output_quant = {};
         g.tensors[kH3].dtype = ir::DType::F32;
         g.tensors[kH3].quant.reset();
       },
       {add, "inputs 'h1' (i8) and 'h3' (f32) differ in dtype"}},
      {"AddF32WithQ8to",
       [](ir::Graph& g) {
         g.ops[kDeq].type = ir::OpType::Add;
         g.ops[kDeq].inputs = {kX, kX};
         g.ops[kDeq].add.output_quant = Q(ir::Scheme::Q8TO, 0.1f, 0);
       },
       {"op 6 'dequant' (add)", "output_quant q8to needs int8 inputs", "'x' and 'x' are f32"}},
      {"AddConstantInput", [](ir::Graph& g) { g.ops[kAdd].inputs[1] = kStemW; },
       {add, "input 'stem.weight' is a constant"}},
      // ---- avg_pool2d
      {"PoolKernelMissing", [](ir::Graph& g) { g.ops[kPool].pool.global = false; },
       {pool, "kernel [0, 0] is missing", "or set global"}},
      {"PoolGlobalWithKernel", [](ir::Graph& g) { g.ops[kPool].pool.kernel[0] = 4; },
       {pool, "is global", "also sets kernel [4, 0]", "remove them"}},
      {"PoolInt8WithoutQ8to", [](ir::Graph& g) { g.ops[kPool].pool.output_quant = {}; },
       {pool, "input 'h4' is int8, so output_quant must be q8to"}},
      {"PoolPaddingNotBelowKernel",
       [](ir::Graph& g) {
         ir::Pool2dAttrs& p = g.ops[kPool].pool;
         p.global = false;
         p.kernel[0] = p.kernel[1] = 2;
         p.padding[3] = 2;
       },
       {pool, "padding [0, 0, 0, 2]", "smaller than the kernel [2, 2]",
        "padded taps are not counted"}},
      {"PoolKernelTooBig",
       [](ir::Graph& g) {
         ir::Pool2dAttrs& p = g.ops[kPool].pool;
         p.global = false;
         p.kernel[0] = p.kernel[1] = 5;
       },
       {pool, "kernel [5, 5] does not fit input 'h4' [batch, 4, 4, 8]"}},
      {"PoolWrongOutputShape",
       [](ir::Graph& g) { g.tensors[kPooled].shape = {ir::kSymbolicDim, 2, 8}; },
       {pool, "output 'pooled' is i8 [batch, 2, 8]", "must be i8 [batch, 1, 1, 8]"}},
      {"PoolF32WithQ8to",
       [](ir::Graph& g) {
         g.ops[kPool].inputs = {kX};
         g.tensors[kPooled].shape = {ir::kSymbolicDim, 3};
       },
       {pool, "output_quant q8to needs an int8 input", "input 'x' is f32"}},
      // ---- dequantize
      {"DequantizeF32",
       [](ir::Graph& g) {
         g.ops[kDeq].inputs = {kX};
       },
       {deq, "input 'x' is f32", "dequantize takes an i8 or i32 tensor", "drop the dequantize"}},
      {"DequantizeWithoutQuant",
       [](ir::Graph& g) {
         ir::Tensor raw = g.tensors[kPooled];
         raw.name = "raw";
         raw.quant.reset();
         g.tensors.push_back(raw);
         g.inputs.push_back(static_cast<int>(g.tensors.size()) - 1);
         g.ops[kDeq].inputs = {static_cast<int>(g.tensors.size()) - 1};
       },
       {deq, "input 'raw' is i8 without quantization", "dequantize needs q8ta/q8to"}},
      {"DequantizeShapeMismatch",
       [](ir::Graph& g) { g.tensors[kFeat].shape = {ir::kSymbolicDim, 4}; },
       {deq, "output 'feat' is f32 [batch, 4]", "must be f32 or f16 [batch, 8] like its input 'pooled'"}},
      {"DequantizeConstant",
       [](ir::Graph& g) { g.ops[kDeq].inputs = {kStemW}; },
       {deq, "input 'stem.weight' is a constant"}},
      // ---- linear relu + relu6
      {"LinearReluAndRelu6",
       [](ir::Graph& g) {
         g.ops[kFc].linear.fused_relu = true;
         g.ops[kFc].linear.fused_relu6 = true;
       },
       {fc, "sets both fused_relu and fused_relu6; set one"}},
      {"LinearAttrsOnAdd",
       [](ir::Graph& g) {
         g.ops[kAdd].linear.fused_relu6 = true;
       },
       {add, "carries linear attributes", "fused_relu6"}},
      // ---- quantize of rank 4 per token
      {"PerTokenQuantizeRank4",
       [](ir::Graph& g) { g.tensors[kXq].quant = ir::Quant{ir::Scheme::DQ8CA, {}, {}, 0, 0}; },
       {"op 0 'quant_x' (quantize)", "input 'x' has shape [batch, 8, 8, 3]",
        "per-token (dq8ca) quantize takes rank 2 [M, K]"}},
  };
  for (const RejectCase& rc : cases) {
    SCOPED_TRACE(rc.name);
    ir::Graph g = MakeCnnGraph();
    rc.mutate(g);
    Status s = VerifyGraph(g, kOrigin);
    ASSERT_FALSE(s.ok()) << rc.name << ": expected an error";
    EXPECT_TRUE(testing_util::MessageHas(s.error(), {kOrigin})) << rc.name;
    for (const std::string& f : rc.fragments) {
      EXPECT_NE(s.error().message.find(f), std::string::npos)
          << rc.name << ": message lacks \"" << f << "\": " << s.error().message;
    }
  }
}

}  // namespace
}  // namespace vkqc
