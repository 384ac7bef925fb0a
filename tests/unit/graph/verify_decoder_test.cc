// VerifyGraph rules of the decoder ops and state tensors (compiler/graph/verify_decoder.cc), as
// docs/graph-json.md states them: the valid graph passes, and each documented refusal is a
// readable error naming the op or tensor.
#include "compiler/graph/synthetic.h"
#include "compiler/graph/verify.h"
#include "graph_test_util.h"

namespace vkqc {
namespace {

using testing_util::FailsWith;
using testing_util::Own;
using testing_util::ToBytes;

constexpr const char* kOrigin = "dec.vkqg";
// Tensors and ops of Decoder().
enum T { kIds, kPos, kEmb, kNormW, kX0, kH, kQ, kK, kV, kQr, kKr, kKc, kVc, kA, kNext };
enum O { kEmbed, kNorm, kRopeQ, kRopeK, kAttn, kArgmax };

int Add(ir::Graph& g, const char* name, std::vector<int64_t> shape, ir::DType dt = ir::DType::F32) {
  return testing_graphs::AddTensor(g, name, std::move(shape), dt);
}

ir::Op MakeOp(const char* name, ir::OpType type, std::vector<int> in, std::vector<int> out) {
  ir::Op op;
  op.name = name;
  op.type = type;
  op.inputs = std::move(in);
  op.outputs = std::move(out);
  return op;
}

// embed -> rms_norm -> (q, k, v as graph inputs) rope q/k -> attention -> argmax.
ir::Graph Decoder() {
  const int64_t s = ir::kSymbolicDim;
  ir::Graph g;
  Add(g, "ids", {s}, ir::DType::I32);
  Add(g, "pos", {1}, ir::DType::I32);
  Add(g, "emb", {16, 8});
  g.tensors[kEmb].data = Own(ToBytes(std::vector<float>(128, 0.5f)));
  Add(g, "norm.w", {8});
  g.tensors[kNormW].data = Own(ToBytes(std::vector<float>(8, 1.0f)));
  Add(g, "x0", {s, 8});
  Add(g, "h", {s, 8});
  Add(g, "q", {s, 8});
  Add(g, "k", {s, 4});
  Add(g, "v", {s, 4});
  Add(g, "q_rot", {s, 8});
  Add(g, "k_rot", {s, 4});
  Add(g, "k_cache", {1, 32, 4}, ir::DType::F16);
  Add(g, "v_cache", {1, 32, 4}, ir::DType::F16);
  g.tensors[kKc].state = g.tensors[kVc].state = true;
  Add(g, "a", {s, 8});
  Add(g, "next", {s}, ir::DType::I32);
  g.ops.push_back(MakeOp("embed", ir::OpType::Embedding, {kIds, kEmb}, {kX0}));
  g.ops.push_back(MakeOp("norm", ir::OpType::RmsNorm, {kX0, kNormW}, {kH}));
  ir::RopeAttrs r;
  r.head_dim = 4;
  r.max_positions = 32;
  g.ops.push_back(MakeOp("rope_q", ir::OpType::Rope, {kQ, kPos}, {kQr}));
  g.ops.back().rope = r;
  g.ops.push_back(MakeOp("rope_k", ir::OpType::Rope, {kK, kPos}, {kKr}));
  g.ops.back().rope = r;
  g.ops.push_back(MakeOp("attn", ir::OpType::Attention, {kQr, kKr, kV, kKc, kVc, kPos}, {kA}));
  g.ops.back().attention = {2, 1, 4, 0.0f};
  g.ops.push_back(MakeOp("argmax", ir::OpType::Argmax, {kA}, {kNext}));
  g.inputs = {kIds, kPos, kQ, kK, kV};
  g.outputs = {kH, kNext};
  return g;
}

TEST(VerifyDecoderTest, AcceptsTheDecoder) {
  Status s = VerifyGraph(Decoder(), kOrigin);
  EXPECT_TRUE(s.ok()) << s.error().message;
}

TEST(VerifyDecoderTest, RejectsEmbeddingInputs) {
  ir::Graph g = Decoder();
  g.tensors[kIds].dtype = ir::DType::F32;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"op 0 'embed'", "ids 'ids' must be a non-constant i32"}));
  g = Decoder();
  g.tensors[kEmb].dtype = ir::DType::I8;  // i8 without q8csw
  g.tensors[kEmb].data = Own(std::vector<uint8_t>(128, 1));
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"table 'emb'", "f32, i8 q8csw"}));
  g = Decoder();
  g.tensors[kX0].shape = {ir::kSymbolicDim, 9};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"output 'x0'", "must be f32 [tokens, 8]"}));
}

TEST(VerifyDecoderTest, RejectsRmsNormWeightAndEps) {
  ir::Graph g = Decoder();
  g.tensors[kNormW].shape = {7};
  g.tensors[kNormW].data = Own(ToBytes(std::vector<float>(7, 1.0f)));
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"op 1 'norm'", "weight 'norm.w' must be a constant f32 [8]"}));
  g = Decoder();
  g.ops[kNorm].norm.eps = 0.0f;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"eps is", "finite number > 0"}));
}

TEST(VerifyDecoderTest, RejectsRopeAttributesAndPosition) {
  ir::Graph g = Decoder();
  g.ops[kRopeQ].rope.head_dim = 3;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"op 2 'rope_q'", "head_dim is 3", "even"}));
  g = Decoder();
  g.ops[kRopeQ].rope.max_positions = 0;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"max_positions is 0"}));
  g = Decoder();
  g.ops[kRopeQ].rope.factor = 8.0f;  // scaling parameters without the scaling type
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"no scaling type"}));
  g = Decoder();
  g.ops[kRopeQ].rope.llama3 = true;
  g.ops[kRopeQ].rope.high_freq_factor = 0.5f;  // below low_freq_factor
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"llama3 scaling needs"}));
  g = Decoder();
  g.tensors[kPos].shape = {2};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"position input 'pos' must be a graph input i32 [1]"}));
}

TEST(VerifyDecoderTest, RejectsAttentionShapesAndCaches) {
  ir::Graph g = Decoder();
  g.ops[kAttn].attention.num_heads = 3;  // not a multiple of num_kv_heads 2
  g.ops[kAttn].attention.num_kv_heads = 2;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"op 4 'attn'", "multiple of num_kv_heads"}));
  g = Decoder();
  g.ops[kAttn].attention.head_dim = 258;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"head_dim is 258", "2..256"}));
  g = Decoder();
  g.tensors[kK].shape = {ir::kSymbolicDim, 8};
  g.tensors[kKr].shape = {ir::kSymbolicDim, 8};
  g.ops[kRopeK].rope = g.ops[kRopeQ].rope;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"k 'k_rot'", "must be [tokens, 4]"}));
  g = Decoder();
  g.tensors[kKc].state = false;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"op 4 'attn'", "input 'k_cache' is never produced", "a KV cache must be a state tensor"}));
  g = Decoder();
  g.tensors[kVc].dtype = ir::DType::F32;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"differ in shape or dtype"}));
  g = Decoder();
  g.tensors[kKc].shape = {2, 32, 4};
  g.tensors[kVc].shape = {2, 32, 4};
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"must be [num_kv_heads 1, max_context, head_dim 4]"}));
  g = Decoder();
  g.ops[kAttn].inputs[4] = kKc;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"more than one attention op"}));
}

TEST(VerifyDecoderTest, RejectsStateMisuse) {
  ir::Graph g = Decoder();
  g.tensors[kKc].dtype = ir::DType::I8;
  g.tensors[kVc].dtype = ir::DType::I8;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"state tensor 'k_cache'", "f16 (default) or f32"}));
  g = Decoder();
  g.outputs.push_back(kKc);
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"state tensor 'k_cache'", "graph output"}));
  g = Decoder();
  g.ops[kNorm].inputs[0] = kKc;  // a state tensor read by another op
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"reads the state tensor 'k_cache'", "only by attention ops"}));
  g = Decoder();
  g.ops[kEmbed].outputs[0] = kKc;  // an op writing state
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"lists the state tensor 'k_cache' as an output"}));
}

TEST(VerifyDecoderTest, RejectsArgmaxOutput) {
  ir::Graph g = Decoder();
  g.tensors[kNext].dtype = ir::DType::F32;
  EXPECT_TRUE(FailsWith(VerifyGraph(g, kOrigin), {"op 5 'argmax'", "argmax writes i32 [tokens]"}));
}

}  // namespace
}  // namespace vkqc
