// vkqc_model_decode_greedy (validation and synchronization validation on): a small stateful decoder
// (token -> embeddings -> attention over the KV cache -> logits -> argmax) decoded greedily with the
// token fed back on the GPU at every queue depth, against the CPU reference's greedy sequence and
// against the run-and-read loop of the C API (same tokens, same cache bytes, same position); stops
// (stop token, callback) with runs queued past them discarded; the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>

#include "compiler/graph/synthetic.h"
#include "compiler/passes/pipeline.h"
#include "gpu_fixture.h"
#include "reference/reference.h"

namespace vkqc {
namespace {

using testing_graphs::AddTensor;
using testing_graphs::OwnBytes;
using testing_graphs::RandomFloats;

constexpr int64_t kVocab = 61, kHq = 4, kHkv = 2, kD = 16, kCache = 40;

int AddTable(ir::Graph& g, const std::string& name, int64_t cols, uint32_t seed) {
  const auto f = RandomFloats(size_t(kVocab * cols), seed, 0.6f);
  const int t = AddTensor(g, name, {kVocab, cols});
  g.tensors[size_t(t)].data = OwnBytes(f.data(), f.size() * 4);
  return t;
}

// ids [T] -> q, k, v embeddings -> attention (f16 caches) -> logits (float x q8csw) -> argmax.
// Outputs: next (i32 [T]), then logits.
ir::Graph DecoderGraph() {
  ir::Graph g;
  const int ids = AddTensor(g, "ids", {ir::kSymbolicDim}, ir::DType::I32);
  const int pos = AddTensor(g, "pos", {1}, ir::DType::I32);
  const int eq = AddTable(g, "eq", kHq * kD, 11), ek = AddTable(g, "ek", kHkv * kD, 12), ev = AddTable(g, "ev", kHkv * kD, 13);
  const int q = AddTensor(g, "q", {ir::kSymbolicDim, kHq * kD});
  const int k = AddTensor(g, "k", {ir::kSymbolicDim, kHkv * kD});
  const int v = AddTensor(g, "v", {ir::kSymbolicDim, kHkv * kD});
  g.ops.push_back(gpu_test::MakeOp("embed_q", ir::OpType::Embedding, {ids, eq}, {q}));
  g.ops.push_back(gpu_test::MakeOp("embed_k", ir::OpType::Embedding, {ids, ek}, {k}));
  g.ops.push_back(gpu_test::MakeOp("embed_v", ir::OpType::Embedding, {ids, ev}, {v}));
  const int kc = AddTensor(g, "k_cache", {kHkv, kCache, kD}, ir::DType::F16);
  const int vc = AddTensor(g, "v_cache", {kHkv, kCache, kD}, ir::DType::F16);
  g.tensors[size_t(kc)].state = g.tensors[size_t(vc)].state = true;
  const int y = AddTensor(g, "y", {ir::kSymbolicDim, kHq * kD});
  g.ops.push_back(gpu_test::MakeOp("attn", ir::OpType::Attention, {q, k, v, kc, vc, pos}, {y}));
  g.ops.back().attention = {kHq, kHkv, kD, 0.0f};
  std::vector<int8_t> wq(size_t(kVocab * kHq * kD));
  std::mt19937 rng(5);
  for (auto& x : wq) x = int8_t(int(rng() % 255) - 127);
  const int w = AddTensor(g, "w_out", {kVocab, kHq * kD}, ir::DType::I8);
  g.tensors[size_t(w)].data = OwnBytes(wq.data(), wq.size());
  g.tensors[size_t(w)].quant = ir::Quant{ir::Scheme::Q8CSW, std::vector<float>(size_t(kVocab), 0.05f), {}, 0, 0};
  const int logits = AddTensor(g, "logits", {ir::kSymbolicDim, kVocab});
  g.ops.push_back(gpu_test::MakeOp("lm_head", ir::OpType::Linear, {y, w}, {logits}));
  const int next = AddTensor(g, "next", {ir::kSymbolicDim}, ir::DType::I32);
  g.ops.push_back(gpu_test::MakeOp("argmax", ir::OpType::Argmax, {logits}, {next}));
  g.inputs = {ids, pos};
  g.outputs = {next, logits};
  return g;
}

std::vector<uint8_t> CompileDecoder(const ir::Graph& g) {
  auto p = LoadProfile(gpu_test::TestProfile());
  EXPECT_TRUE(p.ok());
  CompileOptions o;
  o.tokens = {1, 4};
  auto b = CompileGraph(g, *p, o, 0);
  EXPECT_TRUE(b.ok()) << b.error().message;
  return b.ok() ? *b : std::vector<uint8_t>{};
}

// The CPU reference's greedy sequence from `first` at position 0: n tokens; fails the test where a
// step's top two logits are too close for the order of a float sum not to matter.
std::vector<int32_t> ReferenceGreedy(const ir::Graph& g, int32_t first, int n) {
  std::map<std::string, std::vector<float>> state;
  std::vector<int32_t> out;
  int32_t tok = first;
  for (int t = 0; t < n; ++t) {
    ref::RunOptions ro;
    ro.tokens = 1;
    ro.int32_inputs["ids"] = {tok};
    ro.int32_inputs["pos"] = {t};
    ro.state = &state;
    auto r = ref::RunGraphDetailed(g, {{"ids", {float(tok)}}, {"pos", {float(t)}}}, ro);
    EXPECT_TRUE(r.ok()) << r.error().message;
    if (!r.ok()) return out;
    std::vector<float> z = r->outputs.at("logits");
    const int32_t best = int32_t(std::max_element(z.begin(), z.end()) - z.begin());
    EXPECT_EQ(int32_t(r->outputs.at("next")[0]), best);
    float scale = 0;
    for (float x : z) scale = std::max(scale, std::fabs(x));
    const float top = z[size_t(best)];
    z[size_t(best)] = -INFINITY;
    const float second = *std::max_element(z.begin(), z.end());
    EXPECT_GT(top - second, 1e-3f * scale) << "step " << t << ": the test data's top two logits are too close";
    out.push_back(best);
    tok = best;
  }
  return out;
}

struct Model {
  gpu_test::Loaded l;
  uint32_t p1 = 0, p4 = 0;
};

::testing::AssertionResult LoadDecoder(const std::vector<uint8_t>& bundle, Model* m) {
  vkqc_model_options mo;
  vkqc_model_options_init(&mo);
  mo.poison_memory = 1;
  if (vkqc_model_load(gpu_test::Context(), bundle.data(), bundle.size(), &mo, &m->l.model) != VKQC_OK)
    return ::testing::AssertionFailure() << "load: " << vkqc_last_error();
  if (vkqc_model_find_program(m->l.model, 1, &m->p1) != VKQC_OK || vkqc_model_find_program(m->l.model, 4, &m->p4) != VKQC_OK)
    return ::testing::AssertionFailure() << "programs: " << vkqc_last_error();
  return ::testing::AssertionSuccess();
}

// The run-and-read loop: n runs of the tokens=1 program from the model's position.
std::vector<int32_t> HostLoop(vkqc_model m, uint32_t p1, int32_t first, int n) {
  std::vector<int32_t> out;
  int32_t tok = first;
  for (int t = 0; t < n; ++t) {
    EXPECT_EQ(vkqc_model_write_input(m, p1, 0, &tok, 4), VKQC_OK) << vkqc_last_error();
    EXPECT_EQ(vkqc_model_run(m, p1), VKQC_OK) << vkqc_last_error();
    EXPECT_EQ(vkqc_model_read_output(m, p1, 0, &tok, 4), VKQC_OK) << vkqc_last_error();
    out.push_back(tok);
  }
  return out;
}

std::vector<uint8_t> Cache(vkqc_model m, const char* name) {
  std::vector<uint8_t> raw(size_t(kHkv * kCache * kD * 2));
  EXPECT_EQ(vkqc_model_read_state(m, name, raw.data(), raw.size()), VKQC_OK) << vkqc_last_error();
  return raw;
}

// The decoder's bundle and the reference's greedy sequence of kSteps tokens from token 7.
constexpr int kSteps = 30;
struct Case {
  ir::Graph g = DecoderGraph();
  std::vector<uint8_t> bundle = CompileDecoder(g);
  std::vector<int32_t> want = ReferenceGreedy(g, 7, kSteps);
  bool ok() const { return !bundle.empty() && want.size() == size_t(kSteps); }
};

TEST(GreedyDecode, MatchesReferenceAndTheRunAndReadLoopAtEveryDepth) {
  const Case su;
  ASSERT_TRUE(su.ok());
  const auto& bundle = su.bundle;
  const auto& want = su.want;
  const int n = kSteps;
  EXPECT_GE(std::set<int32_t>(want.begin(), want.end()).size(), 6u) << "the test sequence should vary";
  Model m;
  ASSERT_TRUE(LoadDecoder(bundle, &m));
  const auto loop = HostLoop(m.l.model, m.p1, 7, n);
  EXPECT_EQ(loop, want);
  const auto k_loop = Cache(m.l.model, "k_cache"), v_loop = Cache(m.l.model, "v_cache");
  for (uint32_t depth : {0u, 1u, 2u, 3u, 4u}) {
    ASSERT_EQ(vkqc_model_reset_state(m.l.model), VKQC_OK);
    vkqc_greedy_options o;
    vkqc_greedy_options_init(&o);
    o.depth = depth;
    std::vector<int32_t> got(size_t(n), -5);
    uint32_t count = 0;
    double ns = -1;
    ASSERT_EQ(vkqc_model_decode_greedy(m.l.model, &o, 7, uint32_t(n), got.data(), &count, &ns), VKQC_OK)
        << vkqc_last_error();
    EXPECT_EQ(count, uint32_t(n)) << "depth " << depth;
    EXPECT_EQ(got, want) << "depth " << depth;
    EXPECT_EQ(vkqc_model_position(m.l.model), uint32_t(n));
    EXPECT_EQ(Cache(m.l.model, "k_cache"), k_loop) << "depth " << depth;
    EXPECT_EQ(Cache(m.l.model, "v_cache"), v_loop) << "depth " << depth;
    double total = 0;
    if (vkqc_model_run_timed(m.l.model, m.p1, nullptr, &total) == VKQC_OK) {
      EXPECT_GT(ns, 0.0) << "depth " << depth;  // the queue has timestamps
    } else {
      EXPECT_EQ(ns, 0.0);
    }
  }
  // Explicit indices, no output array; then the run-and-read loop continues where it stopped.
  ASSERT_EQ(vkqc_model_reset_state(m.l.model), VKQC_OK);
  vkqc_greedy_options o;
  vkqc_greedy_options_init(&o);
  o.program = m.p1;
  o.token_input = 0;
  o.token_output = 0;
  uint32_t count = 0;
  ASSERT_EQ(vkqc_model_decode_greedy(m.l.model, &o, 7, 10, nullptr, &count, nullptr), VKQC_OK) << vkqc_last_error();
  EXPECT_EQ(count, 10u);
  const auto rest = HostLoop(m.l.model, m.p1, want[9], n - 10);
  EXPECT_TRUE(std::equal(rest.begin(), rest.end(), want.begin() + 10));
  gpu_test::ExpectNoValidationMessages("greedy decoding");
}

struct Stopper {
  int stop_after = 0;
  std::vector<int32_t> seen;
  vkqc_model model = nullptr;
  vkqc_status inner = VKQC_OK;
};

int OnToken(void* user, int32_t token) {
  auto* s = static_cast<Stopper*>(user);
  s->seen.push_back(token);
  if (s->model) s->inner = vkqc_model_run(s->model, 0);  // not allowed from the callback
  return int(s->seen.size()) >= s->stop_after ? 1 : 0;
}

TEST(GreedyDecode, StopsDiscardRunsQueuedPastThem) {
  const Case su;
  ASSERT_TRUE(su.ok());
  const auto& bundle = su.bundle;
  const auto& want = su.want;
  const int n = kSteps;
  // The stop token: the first one that appears late enough and not before.
  size_t at = 4;
  while (at < want.size() && std::find(want.begin(), want.begin() + long(at), want[at]) != want.begin() + long(at)) ++at;
  ASSERT_LT(at, want.size() - 8);
  Model m;
  ASSERT_TRUE(LoadDecoder(bundle, &m));
  for (uint32_t depth : {1u, 2u, 4u}) {
    // By stop token: the runs queued after it are discarded, the position ends after it, and the
    // run-and-read loop goes on from there as the reference does.
    ASSERT_EQ(vkqc_model_reset_state(m.l.model), VKQC_OK);
    vkqc_greedy_options o;
    vkqc_greedy_options_init(&o);
    o.depth = depth;
    o.stop_token = want[at];
    std::vector<int32_t> got(size_t(n), -5);
    uint32_t count = 0;
    ASSERT_EQ(vkqc_model_decode_greedy(m.l.model, &o, 7, uint32_t(n), got.data(), &count, nullptr), VKQC_OK)
        << vkqc_last_error();
    ASSERT_EQ(count, uint32_t(at + 1)) << "depth " << depth;
    EXPECT_TRUE(std::equal(want.begin(), want.begin() + long(at + 1), got.begin())) << "depth " << depth;
    EXPECT_EQ(got[at + 1], -5) << "nothing past the stop is written";
    EXPECT_EQ(vkqc_model_position(m.l.model), uint32_t(at + 1));
    const auto rest = HostLoop(m.l.model, m.p1, want[at], 6);
    EXPECT_TRUE(std::equal(rest.begin(), rest.end(), want.begin() + long(at + 1))) << "depth " << depth;
    // By callback, which may not use the model; then a second call goes on from there.
    ASSERT_EQ(vkqc_model_reset_state(m.l.model), VKQC_OK);
    Stopper s;
    s.stop_after = 5;
    s.model = m.l.model;
    o.stop_token = -1;
    o.on_token = &OnToken;
    o.user_data = &s;
    ASSERT_EQ(vkqc_model_decode_greedy(m.l.model, &o, 7, uint32_t(n), nullptr, &count, nullptr), VKQC_OK)
        << vkqc_last_error();
    EXPECT_EQ(count, 5u);
    EXPECT_EQ(s.seen, std::vector<int32_t>(want.begin(), want.begin() + 5));
    EXPECT_EQ(s.inner, VKQC_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(vkqc_model_position(m.l.model), 5u);
    o.on_token = nullptr;
    ASSERT_EQ(vkqc_model_decode_greedy(m.l.model, &o, want[4], 7, got.data(), &count, nullptr), VKQC_OK)
        << vkqc_last_error();
    EXPECT_EQ(count, 7u);
    EXPECT_TRUE(std::equal(got.begin(), got.begin() + 7, want.begin() + 5)) << "depth " << depth;
  }
  gpu_test::ExpectNoValidationMessages("greedy decoding stops");
}

TEST(GreedyDecode, Refusals) {
  const ir::Graph g = DecoderGraph();
  const auto bundle = CompileDecoder(g);
  ASSERT_FALSE(bundle.empty());
  Model m;
  ASSERT_TRUE(LoadDecoder(bundle, &m));
  auto refused = [&](const vkqc_greedy_options* o, int32_t first, uint32_t max, const char* says) {
    uint32_t count = 7;
    EXPECT_EQ(vkqc_model_decode_greedy(m.l.model, o, first, max, nullptr, &count, nullptr), VKQC_ERROR_INVALID_ARGUMENT)
        << says;
    EXPECT_NE(std::string(vkqc_last_error()).find(says), std::string::npos) << vkqc_last_error();
    EXPECT_EQ(count, 0u);
  };
  vkqc_greedy_options o;
  vkqc_greedy_options_init(&o);
  o.program = m.p4;
  refused(&o, 1, 3, "tokens=1 program");
  o.program = 9;
  refused(&o, 1, 3, "out of range");
  vkqc_greedy_options_init(&o);
  o.token_input = uint32_t(vkqc_model_position_input(m.l.model, m.p1));
  refused(&o, 1, 3, "is not an i32 [1] input");
  vkqc_greedy_options_init(&o);
  o.token_output = 1;  // the logits
  refused(&o, 1, 3, "is not an i32 [1] output");
  vkqc_greedy_options_init(&o);
  o.depth = 5;
  refused(&o, 1, 3, "not in 1..4");
  o.struct_size = 8;
  refused(&o, 1, 3, "struct_size");
  // The context bound: nothing runs, the cache is unchanged.
  ASSERT_EQ(vkqc_model_set_position(m.l.model, uint32_t(kCache - 3)), VKQC_OK);
  const auto before = Cache(m.l.model, "k_cache");
  refused(nullptr, 1, 4, "context overflow");
  EXPECT_EQ(Cache(m.l.model, "k_cache"), before);
  EXPECT_EQ(vkqc_model_position(m.l.model), uint32_t(kCache - 3));
  uint32_t count = 9;
  EXPECT_EQ(vkqc_model_decode_greedy(m.l.model, nullptr, 1, 0, nullptr, &count, nullptr), VKQC_OK);
  EXPECT_EQ(count, 0u);
  EXPECT_EQ(vkqc_model_decode_greedy(m.l.model, nullptr, 1, 3, nullptr, &count, nullptr), VKQC_OK) << vkqc_last_error();
  EXPECT_EQ(count, 3u);  // exactly to the end of the cache
  EXPECT_EQ(vkqc_model_position(m.l.model), uint32_t(kCache));
  EXPECT_EQ(vkqc_model_decode_greedy(nullptr, nullptr, 1, 3, nullptr, &count, nullptr), VKQC_ERROR_INVALID_ARGUMENT);
  // A stateless bundle.
  ir::Graph s;
  const int x = AddTensor(s, "x", {2, 9});
  const int y = AddTensor(s, "y", {2}, ir::DType::I32);
  s.ops.push_back(gpu_test::MakeOp("argmax", ir::OpType::Argmax, {x}, {y}));
  s.inputs = {x};
  s.outputs = {y};
  auto p = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(p.ok());
  auto sb = CompileGraph(s, *p, CompileOptions{}, 0);
  ASSERT_TRUE(sb.ok()) << sb.error().message;
  gpu_test::Loaded l;
  ASSERT_EQ(vkqc_model_load(gpu_test::Context(), sb->data(), sb->size(), nullptr, &l.model), VKQC_OK);
  EXPECT_EQ(vkqc_model_decode_greedy(l.model, nullptr, 1, 3, nullptr, &count, nullptr), VKQC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(vkqc_last_error()).find("stateful bundle"), std::string::npos) << vkqc_last_error();
  gpu_test::ExpectNoValidationMessages("greedy decoding refusals");
}

}  // namespace
}  // namespace vkqc
