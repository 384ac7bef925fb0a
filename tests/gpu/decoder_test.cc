// The transformer-decoder ops on the device against the CPU reference (validation on):
// rms_norm, argmax, embedding (f32 / q8csw / q4gsw), rope (both layouts, Llama-3 scaling, positions
// up to the table's end), attention over the persistent KV cache (GQA ratios 1 to 32, head_dim
// 2 to 256, f16 and f32 caches, the rows, split, tiled and decode kernels, prefill then decode
// across programs), and the runtime's state API (position ownership, overflow refusal, reset).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "compiler/common/half.h"
#include "compiler/kernels/attention/lower.h"
#include "compiler/graph/synthetic.h"
#include "compiler/passes/pipeline.h"
#include "gpu_fixture.h"
#include "reference/reference.h"
#include "schema/bundle_generated.h"

namespace vkqc {
namespace {

using testing_graphs::AddTensor;
using testing_graphs::OwnBytes;
using testing_graphs::RandomFloats;

int AddConst(ir::Graph& g, const std::string& name, std::vector<int64_t> shape, ir::DType dt, const void* p, size_t n) {
  const int t = AddTensor(g, name, std::move(shape), dt);
  g.tensors[size_t(t)].data = OwnBytes(p, n);
  return t;
}

std::vector<uint8_t> Bytes(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  return std::vector<uint8_t>(b, b + n);
}

using AttentionKernel = CompileOptions::AttentionKernel;

Result<std::vector<uint8_t>> Compile(const ir::Graph& g, std::vector<int64_t> tokens = {},
                                     const std::string& profile = gpu_test::TestProfile(),
                                     AttentionKernel attention = AttentionKernel::Auto, bool int_dot = false,
                                     uint32_t decode_rows = 0, bool subgroup_arithmetic = true,
                                     uint32_t max_splits = attention::kDecodeMaxSplits) {
  VKQC_ASSIGN_OR_RETURN(TargetProfile p, LoadProfile(profile));
  // false: as for a target without subgroup arithmetic in compute (the kernels' shared-memory trees)
  if (!subgroup_arithmetic) p.subgroup_arithmetic_compute = false;
  CompileOptions o;
  o.tokens = std::move(tokens);
  o.attention = attention;
  o.decode_attention_rows = decode_rows;
  // The decode kernel's chunks as on a GPU target by default (the many-chunk combine runs on
  // lavapipe too); 0: the target's (at most 4 on lavapipe, a CPU device).
  o.decode_attention_max_splits = max_splits;
  if (int_dot) o.select.force_accum = linear::Accum::IntDot;  // linears on the integer path
  return CompileGraph(g, p, o, 0);
}

// Loads a bundle with poisoned memory.
::testing::AssertionResult Load(const std::vector<uint8_t>& bundle, gpu_test::Loaded* l) {
  vkqc_model_options mo;
  vkqc_model_options_init(&mo);
  mo.poison_memory = 1;
  if (vkqc_model_load(gpu_test::Context(), bundle.data(), bundle.size(), &mo, &l->model) != VKQC_OK)
    return ::testing::AssertionFailure() << "load: " << vkqc_last_error();
  return ::testing::AssertionSuccess();
}

// Writes the inputs of `prog`, runs it, returns output `out`'s bytes.
::testing::AssertionResult RunProgram(vkqc_model m, uint32_t prog, const std::vector<std::vector<uint8_t>>& inputs,
                                      uint32_t out, std::vector<uint8_t>* bytes) {
  for (uint32_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].empty() && vkqc_model_write_input(m, prog, i, inputs[i].data(), inputs[i].size()) != VKQC_OK)
      return ::testing::AssertionFailure() << "write_input " << i << ": " << vkqc_last_error();
  if (vkqc_model_run(m, prog) != VKQC_OK) return ::testing::AssertionFailure() << "run: " << vkqc_last_error();
  vkqc_tensor_info info;
  vkqc_model_output_info(m, prog, out, &info);
  bytes->resize(info.size_bytes);
  if (vkqc_model_read_output(m, prog, out, bytes->data(), bytes->size()) != VKQC_OK)
    return ::testing::AssertionFailure() << vkqc_last_error();
  return ::testing::AssertionSuccess();
}

std::vector<float> AsFloats(const std::vector<uint8_t>& b) {
  std::vector<float> f(b.size() / 4);
  std::memcpy(f.data(), b.data(), f.size() * 4);
  return f;
}

// max |a - b| / max(|scale|), over the elements.
double RelErr(const std::vector<float>& got, const std::vector<float>& want, const std::vector<float>& scale) {
  double e = 0, s = 1e-30;
  for (size_t i = 0; i < want.size(); ++i) {
    e = std::max(e, std::fabs(double(got[i]) - want[i]));
    s = std::max(s, std::fabs(double(scale[i])));
  }
  return e / s;
}

TEST(Decoder, RmsNormMatchesReference) {
  for (int64_t c : {1, 37, 256, 1000, 2048})
    for (int64_t rows : {1, 3, 17}) {
      ir::Graph g;
      const int x = AddTensor(g, "x", {rows, c});
      std::vector<float> w = RandomFloats(size_t(c), 7, 0.5f);
      const int wt = AddConst(g, "w", {c}, ir::DType::F32, w.data(), w.size() * 4);
      const int y = AddTensor(g, "y", {rows, c});
      g.ops.push_back(gpu_test::MakeOp("norm", ir::OpType::RmsNorm, {x, wt}, {y}));
      g.ops.back().norm.eps = 1e-6f;
      g.inputs = {x};
      g.outputs = {y};
      auto bundle = Compile(g);
      ASSERT_TRUE(bundle.ok()) << bundle.error().message;
      const std::vector<float> xv = RandomFloats(size_t(rows * c), uint32_t(c + rows), 3.0f);
      gpu_test::Loaded l;
      ASSERT_TRUE(Load(*bundle, &l));
      std::vector<uint8_t> out;
      ASSERT_TRUE(RunProgram(l.model, 0, {Bytes(xv.data(), xv.size() * 4)}, 0, &out));
      auto want = ref::RunGraph(g, {{"x", xv}}, {});
      ASSERT_TRUE(want.ok()) << want.error().message;
      const auto& r = want->at("y");
      EXPECT_LE(RelErr(AsFloats(out), r, r), 2e-6) << "C " << c << " rows " << rows;
      gpu_test::ExpectNoValidationMessages("rms_norm");
    }
}

TEST(Decoder, ArgmaxTakesTheFirstMaximum) {
  for (int64_t n : {1, 7, 1000, 32000})
    for (int64_t rows : {1, 3, 17}) {
      ir::Graph g;
      const int x = AddTensor(g, "x", {rows, n});
      const int y = AddTensor(g, "y", {rows}, ir::DType::I32);
      g.ops.push_back(gpu_test::MakeOp("argmax", ir::OpType::Argmax, {x}, {y}));
      g.inputs = {x};
      g.outputs = {y};
      auto bundle = Compile(g);
      ASSERT_TRUE(bundle.ok()) << bundle.error().message;
      std::vector<float> xv = RandomFloats(size_t(rows * n), uint32_t(n * 3 + rows));
      std::mt19937 rng{static_cast<uint32_t>(n)};
      for (int64_t r = 0; r < rows; ++r) {  // ties: the row's maximum again at a later and an earlier index
        float* row = xv.data() + r * n;
        const int64_t at = int64_t(rng() % uint64_t(n));
        row[at] = 100.0f + float(r);
        if (n > 2) row[(at + 1 + int64_t(rng() % uint64_t(n - 1))) % n] = row[at];
      }
      gpu_test::Loaded l;
      ASSERT_TRUE(Load(*bundle, &l));
      std::vector<uint8_t> out;
      ASSERT_TRUE(RunProgram(l.model, 0, {Bytes(xv.data(), xv.size() * 4)}, 0, &out));
      for (int64_t r = 0; r < rows; ++r) {
        const float* row = xv.data() + r * n;
        const int32_t want = int32_t(std::max_element(row, row + n) - row);  // the first maximum
        int32_t got;
        std::memcpy(&got, out.data() + 4 * r, 4);
        EXPECT_EQ(got, want) << "n " << n << " row " << r;
      }
      gpu_test::ExpectNoValidationMessages("argmax");
    }
}

TEST(Decoder, EmbeddingTablesMatchReference) {
  const int64_t v = 50;
  for (ir::DType dt : {ir::DType::F32, ir::DType::I8, ir::DType::I4})
    for (int64_t c : {40, 96}) {
      ir::Graph g;
      const int ids = AddTensor(g, "ids", {ir::kSymbolicDim}, ir::DType::I32);
      std::mt19937 rng(uint32_t(c) + uint32_t(dt));
      std::vector<uint8_t> data;
      ir::Quant q;
      if (dt == ir::DType::F32) {
        const auto f = RandomFloats(size_t(v * c), 3);
        data = Bytes(f.data(), f.size() * 4);
      } else if (dt == ir::DType::I8) {
        for (int64_t i = 0; i < v * c; ++i) data.push_back(uint8_t(rng()));
        q.scheme = ir::Scheme::Q8CSW;
        for (int64_t i = 0; i < v; ++i) q.scales.push_back(0.01f + 0.001f * float(i));
      } else {
        for (int64_t i = 0; i < v * c / 2; ++i) data.push_back(uint8_t(rng()));
        q.scheme = ir::Scheme::Q4GSW;
        q.group_size = 8;
        for (int64_t i = 0; i < v * c / 8; ++i) q.scales.push_back(0.05f + 0.002f * float(i % 37));
      }
      const int table = AddConst(g, "table", {v, c}, dt, data.data(), data.size());
      if (dt != ir::DType::F32) g.tensors[size_t(table)].quant = q;
      const int y = AddTensor(g, "y", {ir::kSymbolicDim, c});
      g.ops.push_back(gpu_test::MakeOp("embed", ir::OpType::Embedding, {ids, table}, {y}));
      g.inputs = {ids};
      g.outputs = {y};
      auto bundle = Compile(g, {1, 7});
      ASSERT_TRUE(bundle.ok()) << bundle.error().message;
      gpu_test::Loaded l;
      ASSERT_TRUE(Load(*bundle, &l));
      for (uint32_t tokens : {1u, 7u}) {
        std::vector<int32_t> idv = {int32_t(v - 1), 0, -1, int32_t(v), 3, int32_t(v + 1000), 17};
        idv.resize(tokens);
        if (tokens == 1) idv = {int32_t(v - 1)};
        uint32_t prog = 0;
        ASSERT_EQ(vkqc_model_find_program(l.model, tokens, &prog), VKQC_OK);
        std::vector<uint8_t> out;
        ASSERT_TRUE(RunProgram(l.model, prog, {Bytes(idv.data(), idv.size() * 4)}, 0, &out));
        ref::RunOptions ro;
        ro.tokens = tokens;
        ro.int32_inputs["ids"] = idv;
        std::vector<float> idf(idv.begin(), idv.end());
        auto want = ref::RunGraph(g, {{"ids", idf}}, ro);
        ASSERT_TRUE(want.ok()) << want.error().message;
        const auto got = AsFloats(out);
        const auto& r = want->at("y");
        for (size_t i = 0; i < r.size(); ++i)
          ASSERT_EQ(got[i], r[i]) << ir::DTypeName(dt) << " C " << c << " element " << i;  // exact: s * q
      }
      gpu_test::ExpectNoValidationMessages("embedding");
    }
}

TEST(Decoder, RopeLayoutsAndScaling) {
  for (bool interleaved : {false, true})
    for (int32_t d : {32, 64, 128})
      for (bool llama3 : {false, true}) {
        const int64_t heads = 3, maxpos = 300;
        ir::Graph g;
        const int x = AddTensor(g, "x", {ir::kSymbolicDim, heads * d});
        const int pos = AddTensor(g, "pos", {1}, ir::DType::I32);
        const int y = AddTensor(g, "y", {ir::kSymbolicDim, heads * d});
        g.ops.push_back(gpu_test::MakeOp("rope", ir::OpType::Rope, {x, pos}, {y}));
        ir::RopeAttrs& a = g.ops.back().rope;
        a.head_dim = d;
        a.theta = llama3 ? 500000.0f : 10000.0f;
        a.interleaved = interleaved;
        a.max_positions = int32_t(maxpos);
        if (llama3) {
          a.llama3 = true;
          a.factor = 32.0f;
          a.original_max_position = 8192;
        }
        g.inputs = {x, pos};
        g.outputs = {y};
        auto bundle = Compile(g, {5});
        ASSERT_TRUE(bundle.ok()) << bundle.error().message;
        gpu_test::Loaded l;
        ASSERT_TRUE(Load(*bundle, &l));
        for (int32_t p : {0, 17, int32_t(maxpos - 5)}) {  // the last run ends at the table's last row
          const auto xv = RandomFloats(size_t(5 * heads * d), uint32_t(d + p));
          std::vector<uint8_t> out;
          ASSERT_TRUE(RunProgram(l.model, 0, {Bytes(xv.data(), xv.size() * 4), Bytes(&p, 4)}, 0, &out));
          ref::RunOptions ro;
          ro.tokens = 5;
          ro.int32_inputs["pos"] = {p};
          auto want = ref::RunGraph(g, {{"x", xv}, {"pos", {float(p)}}}, ro);
          ASSERT_TRUE(want.ok()) << want.error().message;
          EXPECT_LE(RelErr(AsFloats(out), want->at("y"), xv), 1e-6)
              << (interleaved ? "interleaved" : "half") << " D " << d << " llama3 " << llama3 << " pos " << p;
        }
        gpu_test::ExpectNoValidationMessages("rope");
      }
}

struct AttnCase {
  int32_t hq, hkv, d;
  int64_t cache;
  bool f16;
  int64_t prefill;  // tokens of the first run (a second run decodes one token after it)
  int32_t start;    // position of the first run
  // The prefill run's kernel: `want` is the variant's prefix ("attention_tiled", "attention_rows",
  // "attention_split"; empty: not checked), compiled for `profile` (empty: the test profile) with
  // the attention kernel forced or not.
  std::string want = {};
  std::string profile = {};
  AttentionKernel force = AttentionKernel::Auto;
  int decode_steps = 1;          // one-row runs after the first run
  std::string want_decode = {};  // their kernel's variant prefix (empty: not checked)
  bool linear = false;           // y feeds a dq8ca x q8csw linear (output z)
  // Every third k value and every v value scaled by 1e-5 (f16 subnormals in the cache: y is of
  // that size, so a flushed or misdecoded value fails the relative check), every seventh value
  // zero: the decode kernel's exact decode of blocks holding subnormal halves.
  bool subnormal = false;
  int64_t step = 1;  // rows of each run after the first (several: batched / speculative decoding)
  uint32_t group_rows = 0;  // the decode kernel's rows per workgroup (--decode-attention-rows; 0: its selection)
  // false: compiled as for a target without subgroup arithmetic (the decode kernel's online softmax
  // and combine by shared-memory trees instead of one subgroup per query)
  bool subgroup_arithmetic = true;
  uint32_t max_splits = attention::kDecodeMaxSplits;  // 0: the target's (CompileOptions::decode_attention_max_splits)
};

// AttnCase::want_decode: the decode kernel where its shared memory fits the profile, else tiled.
const char* const kDecodeWhereItFits = "decode where it fits";

// q/k/v inputs [T, H*D] -> attention over state caches; programs `prefill` and 1 share the cache.
ir::Graph AttentionGraph(const AttnCase& c) {
  ir::Graph g;
  const int q = AddTensor(g, "q", {ir::kSymbolicDim, int64_t(c.hq) * c.d});
  const int k = AddTensor(g, "k", {ir::kSymbolicDim, int64_t(c.hkv) * c.d});
  const int v = AddTensor(g, "v", {ir::kSymbolicDim, int64_t(c.hkv) * c.d});
  const int pos = AddTensor(g, "pos", {1}, ir::DType::I32);
  const ir::DType cd = c.f16 ? ir::DType::F16 : ir::DType::F32;
  const int kc = AddTensor(g, "k_cache", {c.hkv, c.cache, c.d}, cd);
  const int vc = AddTensor(g, "v_cache", {c.hkv, c.cache, c.d}, cd);
  g.tensors[size_t(kc)].state = g.tensors[size_t(vc)].state = true;
  const int y = AddTensor(g, "y", {ir::kSymbolicDim, int64_t(c.hq) * c.d});
  g.ops.push_back(gpu_test::MakeOp("attn", ir::OpType::Attention, {q, k, v, kc, vc, pos}, {y}));
  g.ops.back().attention = {c.hq, c.hkv, c.d, 0.0f};
  g.inputs = {q, k, v, pos};
  g.outputs = {y};
  if (c.linear) {  // an o_proj that quantizes y per token
    const int64_t n = 24, kk = int64_t(c.hq) * c.d;
    std::vector<int8_t> wq(size_t(n * kk));
    for (size_t i = 0; i < wq.size(); ++i) wq[i] = int8_t(int(i * 37 % 255) - 127);
    const int w = AddConst(g, "wo", {n, kk}, ir::DType::I8, wq.data(), wq.size());
    g.tensors[size_t(w)].quant = ir::Quant{ir::Scheme::Q8CSW, std::vector<float>(size_t(n), 0.004f), {}, 0, 0};
    const int z = AddTensor(g, "z", {ir::kSymbolicDim, n});
    g.ops.push_back(gpu_test::MakeOp("o_proj", ir::OpType::Linear, {y, w}, {z}));
    g.ops.back().linear.input_quant.scheme = ir::Scheme::DQ8CA;
    g.outputs.push_back(z);
  }
  return g;
}

void CheckAttention(const AttnCase& c, std::map<std::string, int>* variants) {
  const ir::Graph g = AttentionGraph(c);
  std::vector<int64_t> programs{1, c.prefill};
  if (c.step != 1 && c.step != c.prefill) programs.push_back(c.step);
  auto bundle = Compile(g, programs, c.profile.empty() ? gpu_test::TestProfile() : c.profile, c.force, c.linear,
                        c.group_rows, c.subgroup_arithmetic, c.max_splits);
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  // Which paths each decode-kernel layer took, as its reason and detail in the bundle say: the
  // softmax by subgroups where the compiled-for target has subgroup arithmetic (else the trees),
  // 16-byte cache loads where DecodeVecLoads allows them. Counted in `variants` as path:*.
  {
    auto p = LoadProfile(c.profile.empty() ? gpu_test::TestProfile() : c.profile);
    ASSERT_TRUE(p.ok());
    const bool sg = c.subgroup_arithmetic && p->subgroup_arithmetic_compute;
    const auto* progs = fb::bundle::GetBundle(bundle->data() + 4)->programs();
    for (uint32_t pi = 0; pi < progs->size(); ++pi)
      for (const auto* layer : *progs->Get(pi)->layers()) {
        if (layer->variant()->str().rfind("attention_decode", 0) != 0) continue;
        const std::string reason = layer->reason()->str(), detail = layer->detail()->str();
        const size_t at = reason.find("in blocks of ");
        ASSERT_NE(at, std::string::npos) << reason;
        const uint32_t bk = uint32_t(std::stoul(reason.substr(at + 13)));
        const bool vec = detail.find("16-byte cache loads") != std::string::npos;
        EXPECT_EQ(vec, attention::DecodeVecLoads(uint32_t(c.d), bk, c.f16)) << detail;
        EXPECT_EQ(reason.find("in one subgroup") != std::string::npos, sg) << reason;
        ++(*variants)[!vec ? "path:scalar" : c.f16 ? "path:vec_f16" : "path:vec_f32"];
        ++(*variants)[sg ? "path:subgroup" : "path:trees"];
        // The PV step by key slices (DecodePvSlices): 128 / (head_dim / 2) slices dividing the block.
        const size_t pv = detail.find("PV by ");
        if (pv != std::string::npos) {
          const uint32_t ks = uint32_t(std::stoul(detail.substr(pv + 6)));
          EXPECT_EQ(ks, 128u / uint32_t(c.d / 2)) << detail;
          EXPECT_EQ(bk % ks, 0u) << detail;
        }
        ++(*variants)[pv != std::string::npos ? "path:pv_slices" : "path:pv_whole"];
        // The target's chunks on a CPU device: at most kDecodeCpuMaxSplits (here exactly, the
        // cases' caches being long enough).
        if (c.max_splits == 0 && HasQuirk(*p, "cpu_device")) {
          EXPECT_NE(detail.find(", " + std::to_string(attention::kDecodeCpuMaxSplits) + " chunks,"), std::string::npos)
              << detail;
          EXPECT_NE(reason.find("chunks on a CPU device (cpu_device)"), std::string::npos) << reason;
          ++(*variants)["path:cpu_chunks"];
        }
      }
  }
  gpu_test::Loaded l;
  ASSERT_TRUE(Load(*bundle, &l));
  ASSERT_EQ(vkqc_model_max_context(l.model), uint32_t(c.cache));
  ASSERT_EQ(vkqc_model_set_position(l.model, uint32_t(c.start)), VKQC_OK) << vkqc_last_error();
  std::map<std::string, std::vector<float>> state;  // the reference's caches, carried across runs
  // Positions before `start` hold what a prefill there would have written; here: the zeros of a
  // fresh state on both sides.
  const std::string what = "hq " + std::to_string(c.hq) + " hkv " + std::to_string(c.hkv) + " D " +
                           std::to_string(c.d) + " S " + std::to_string(c.cache) + (c.f16 ? " f16" : " f32") +
                           " T " + std::to_string(c.prefill) + " start " + std::to_string(c.start) +
                           (c.step > 1 ? " steps of " + std::to_string(c.step) : "") +
                           (c.group_rows ? " groups of " + std::to_string(c.group_rows) : "");
  int32_t at = c.start;
  std::vector<int64_t> runs{c.prefill};
  runs.insert(runs.end(), size_t(c.decode_steps), c.step);
  for (size_t run = 0; run < runs.size(); ++run) {
    const int64_t tokens = runs[run];
    if (at + tokens > c.cache) break;
    uint32_t prog = 0;
    ASSERT_EQ(vkqc_model_find_program(l.model, uint32_t(tokens), &prog), VKQC_OK);
    vkqc_layer_info li;
    vkqc_model_layer_info(l.model, prog, 0, &li);
    ++(*variants)[li.variant];
    if (run == 0 && !c.want.empty()) {
      EXPECT_EQ(std::string(li.variant).rfind(c.want, 0), 0u) << what << ": " << li.variant;
    }
    if (run > 0 && !c.want_decode.empty()) {
      std::string want = c.want_decode;
      if (want == kDecodeWhereItFits) {  // the decode kernel where its shared memory fits the profile, else tiled
        auto p = LoadProfile(c.profile.empty() ? gpu_test::TestProfile() : c.profile);
        ASSERT_TRUE(p.ok());
        want = attention::SelectDecodeAttention(c.hq, c.hkv, c.d, c.cache, false, *p, c.step, c.group_rows).bk
                   ? "attention_decode"
                   : "attention_tiled";
      }
      EXPECT_EQ(std::string(li.variant).rfind(want, 0), 0u) << what << " decode: " << li.variant;
    }
    const uint32_t seed = uint32_t(tokens * 131 + at);
    const auto qv = RandomFloats(size_t(tokens * c.hq * c.d), seed, 0.5f);
    auto kv = RandomFloats(size_t(tokens * c.hkv * c.d), seed + 1, 0.5f);
    auto vv = RandomFloats(size_t(tokens * c.hkv * c.d), seed + 2);
    if (c.subnormal)
      for (auto* x : {&kv, &vv})
        for (size_t i = 0; i < x->size(); ++i) (*x)[i] *= i % 7 == 3 ? 0.0f : (x == &vv || i % 3 == 0) ? 1e-5f : 1.0f;
    std::vector<uint8_t> out;
    ASSERT_TRUE(RunProgram(l.model, prog,
                           {Bytes(qv.data(), qv.size() * 4), Bytes(kv.data(), kv.size() * 4),
                            Bytes(vv.data(), vv.size() * 4), {}},
                           0, &out))
        << what;
    ASSERT_EQ(vkqc_model_position(l.model), uint32_t(at + tokens));
    ref::RunOptions ro;
    ro.tokens = tokens;
    ro.int32_inputs["pos"] = {at};
    ro.state = &state;
    auto want = ref::RunGraphDetailed(g, {{"q", qv}, {"k", kv}, {"v", vv}, {"pos", {float(at)}}}, ro);
    ASSERT_TRUE(want.ok()) << want.error().message;
    const auto got = AsFloats(out);
    const auto& r = want->outputs.at("y");
    // Relative to sum_j p_j |v_j| (the scale of the rounding error of each output).
    double e = 0;
    for (size_t i = 0; i < r.size(); ++i) e = std::max(e, std::fabs(double(got[i]) - r[i]) / (std::fabs(r[i]) + 0.1));
    EXPECT_LE(e, 2e-5) << what << " run of " << tokens << " at " << at << " (" << li.variant << ")";
    if (c.linear && tokens == 1) {  // one row: the linear quantizes y in its prologue
      vkqc_layer_info lo;
      ASSERT_EQ(vkqc_model_layer_info(l.model, prog, 1, &lo), VKQC_OK);
      EXPECT_NE(std::string(lo.variant).find("_dot_gemv_rowq"), std::string::npos) << lo.variant;
    }
    if (c.linear) {  // z from y quantized per token on the device: a quantization step apart at most
      std::vector<float> z(size_t(tokens) * 24);
      ASSERT_EQ(vkqc_model_read_output(l.model, prog, 1, z.data(), z.size() * 4), VKQC_OK);
      const auto& rz = want->outputs.at("z");
      double ez = 0, sz = 1e-30;
      for (size_t i = 0; i < rz.size(); ++i) {
        ASSERT_TRUE(std::isfinite(z[i])) << what << " z " << i;
        ez = std::max(ez, std::fabs(double(z[i]) - rz[i]));
        sz = std::max(sz, std::fabs(double(rz[i])));
      }
      EXPECT_LE(ez / sz, 1e-2) << what << " z, run of " << tokens << " at " << at;
    }
    // The device's cache holds exactly the reference's values (f16-rounded rows, zeros elsewhere).
    for (const char* name : {"k_cache", "v_cache"}) {
      vkqc_tensor_info si;
      ASSERT_EQ(vkqc_model_state_info(l.model, std::string(name) == "k_cache" ? 0 : 1, &si), VKQC_OK);
      std::vector<uint8_t> raw(si.size_bytes);
      ASSERT_EQ(vkqc_model_read_state(l.model, name, raw.data(), raw.size()), VKQC_OK) << vkqc_last_error();
      const auto& rc = state.at(name);
      for (size_t i = 0; i < rc.size(); ++i) {
        float v;
        if (c.f16) {
          uint16_t h;
          std::memcpy(&h, raw.data() + 2 * i, 2);
          v = HalfToFloat(h);
        } else {
          std::memcpy(&v, raw.data() + 4 * i, 4);
        }
        ASSERT_EQ(v, rc[i]) << what << " " << name << " element " << i;
      }
    }
    at += int32_t(tokens);
  }
  gpu_test::ExpectNoValidationMessages(what);
}

TEST(Decoder, AttentionMatchesReference) {
  std::map<std::string, int> variants;
  const AttnCase cases[] = {
      {8, 8, 64, 61, true, 17, 0, "attention_rows", "", AttentionKernel::Rows},  // GQA ratio 1, rows kernel
      {8, 2, 64, 300, true, 3, 0, "attention_split", "", AttentionKernel::Rows},  // ratio 4, split kernel
      {16, 2, 128, 300, true, 17, 0, "attention_split", "", AttentionKernel::Rows},  // ratio 8, head_dim 128
      {16, 2, 128, 300, false, 17, 0, "attention_split", "", AttentionKernel::Rows},  // f32 cache
      {16, 4, 128, 130, false, 64, 66, "attention_rows", "", AttentionKernel::Rows},  // to the cache's end
      {8, 1, 32, 200, true, 3, 196, "attention_tiled", "", AttentionKernel::Tiled},  // head_dim 32, tiles of 2 rows: to the cache's last row
      {8, 1, 32, 200, true, 3, 196, "attention_split", "", AttentionKernel::Rows},
      {4, 4, 128, 130, false, 1, 128},  // decode at the end of the cache, f32
      {32, 8, 64, 2048, true, 17, 1000, "attention_tiled"},
      // The tiled prefill kernel: ragged last tiles, positions past 0, the cache's end, GQA 1/4/8.
      {8, 8, 64, 61, true, 33, 0, "attention_tiled"},        // ratio 1: 32 rows per tile, a second tile of 1 row
      {32, 8, 64, 300, true, 45, 7, "attention_tiled"},      // ratio 4: 8 rows per tile
      {16, 2, 128, 300, false, 40, 100, "attention_tiled"},  // ratio 8, head_dim 128, f32 cache
      {8, 1, 64, 200, true, 37, 163, "attention_tiled"},     // ratio 8: ends at the cache's last row
      {4, 4, 128, 130, false, 64, 66, "attention_tiled"},    // head_dim 128 with 32 rows per tile, to the cache's end
      {16, 2, 128, 300, true, 2, 0, "attention_tiled", "", AttentionKernel::Tiled},  // forced: 2 rows, one ragged tile
      {12, 4, 64, 100, true, 23, 3, "attention_tiled"},   // ratio 3: 10 rows per tile, 2 virtual rows idle
      {28, 4, 128, 90, false, 9, 80, "attention_tiled"},  // ratio 7 (Qwen2.5-7B): 4 rows per tile
      // head_dim not a multiple of 64: the last 16-column slice of the output tile partly idle.
      {8, 2, 32, 100, true, 19, 4, "attention_tiled"},    // 8 vec4 columns of 16
      {12, 4, 96, 100, false, 21, 0, "attention_tiled"},  // 24 of 32 (Phi-3), ratio 3
      {4, 4, 80, 70, true, 35, 30, "attention_tiled"},    // 20 of 32 (Phi-2), ratio 1
      {4, 2, 4, 40, true, 11, 0, "attention_tiled"},      // one vec4 column
      // 16 KiB of shared memory (android-baseline-2022): tiles of 16 virtual rows for head_dim 64;
      // head_dim 128 does not fit and takes a per-row kernel.
      {8, 2, 64, 300, true, 21, 5, "attention_tiled", "android-baseline-2022"},
      {32, 32, 64, 80, false, 19, 0, "attention_tiled", "android-baseline-2022"},
      {16, 2, 128, 300, true, 21, 5, "attention_split", "android-baseline-2022"},
      // A GPU profile (android-16: f16 cache words by unpackHalf2x16, the integer decode for words
      // holding a subnormal half) for the split, rows and tiled kernels, with and without subnormals
      // and zeros in the cache; loads in batches of 8 with ragged ends (head_dim 6: 3 words; 61 keys).
      {8, 2, 64, 300, true, 2, 60, "attention_split", "android-16", AttentionKernel::Rows, 1, "", false, true},
      {8, 2, 64, 300, true, 2, 60, "attention_split", "android-16", AttentionKernel::Rows},
      {8, 8, 64, 61, true, 17, 0, "attention_rows", "android-16", AttentionKernel::Rows, 1, "", false, true},
      {4, 2, 6, 100, true, 3, 58, "attention_split", "android-16", AttentionKernel::Rows},
      {8, 2, 64, 300, true, 21, 5, "attention_tiled", "android-16", AttentionKernel::Auto, 1, "", false, true},
      {8, 2, 64, 300, true, 21, 5, "attention_tiled", "android-16"},
  };
  for (const AttnCase& c : cases) CheckAttention(c, &variants);
  EXPECT_GT(variants["attention_tiled_kvf16"], 0);
  EXPECT_GT(variants["attention_tiled_kvf32"], 0);
  EXPECT_GT(variants["attention_rows_kvf16"], 0);
  EXPECT_GT(variants["attention_split_kvf16"], 0);
  EXPECT_GT(variants["attention_split_kvf32"], 0);
}

// The decode kernel (one query row, one dispatch with the cache append): GQA ratios 1 to 32,
// head_dim 2 to 256, f16 and f32 caches, one to several chunks in use (the last to finish combines
// them, and leaves the arrival counters at zero for the next step), chunks of several blocks, runs
// to the cache's last row; refused with the reason where it cannot run; the online softmax and
// the combine per query in one subgroup (targets with subgroup arithmetic: lavapipe's subgroups of
// 8, the GPUs' 32) and by shared-memory trees (as for targets without).
TEST(Decoder, DecodeAttentionMatchesReference) {
  std::map<std::string, int> variants;
  const std::string d = "attention_decode";
  const AttnCase cases[] = {
      {32, 8, 64, 2048, true, 5, 120, "", "", AttentionKernel::Auto, 12, d},  // 1b-shaped: 2 then 3 chunks
      {8, 2, 64, 300, true, 3, 60, "", "", AttentionKernel::Auto, 8, d},      // crosses 64: 1 -> 2 chunks
      {16, 2, 128, 300, false, 1, 250, "", "", AttentionKernel::Auto, 5, d},  // f32, head_dim 128, 4 chunks
      {28, 4, 64, 90, false, 2, 30, "", "", AttentionKernel::Auto, 3, d},     // ratio 7
      {12, 4, 96, 100, true, 2, 40, "", "", AttentionKernel::Auto, 3, d},     // head_dim 96, ratio 3
      {8, 8, 80, 70, true, 1, 60, "", "", AttentionKernel::Auto, 9, d},       // ratio 1, head_dim 80, to the last row
      {32, 1, 64, 200, true, 1, 130, "", "", AttentionKernel::Auto, 2, d},    // ratio 32
      {8, 2, 2, 40, false, 1, 20, "", "", AttentionKernel::Auto, 2, d},       // head_dim 2: blocks of 128
      {4, 2, 6, 300, true, 1, 160, "", "", AttentionKernel::Auto, 2, d},      // head_dim 6: 2 chunks of 128
      {4, 2, 4, 40, true, 1, 30, "", "", AttentionKernel::Auto, 2, d},        // head_dim 4
      {2, 1, 256, 300, true, 1, 200, "", "", AttentionKernel::Auto, 3, d},    // head_dim 256
      {8, 2, 64, 9000, true, 1, 8500, "", "", AttentionKernel::Auto, 3, d},   // 47 chunks of 3 blocks
      {8, 2, 64, 9000, true, 200, 0, "", "", AttentionKernel::Auto, 2, d},    // their blocks all written
      // f16 subnormals and zeros in the cache (the exact decode), one and several chunks
      {8, 2, 64, 300, true, 40, 20, "", "", AttentionKernel::Auto, 3, d, false, true},
      {32, 8, 64, 2048, true, 70, 100, "", "", AttentionKernel::Auto, 2, d, false, true},
      // the same on a GPU profile (android-16: unpackHalf2x16, the integer decode for blocks with
      // subnormal halves) and on the test profile's integer decode (lavapipe: quirk cpu_device)
      {8, 2, 64, 300, true, 40, 20, "", "android-16", AttentionKernel::Auto, 3, d, false, true},
      {8, 2, 64, 300, true, 3, 100, "", "android-16", AttentionKernel::Auto, 2, d},
      // a target without subgroup arithmetic: the one-row kernel's shared-memory trees (one, two
      // and five chunks; chunks of 3 blocks; f16 subnormals)
      {8, 2, 64, 300, true, 3, 60, "", "", AttentionKernel::Auto, 8, d, false, false, 1, 0, false},
      {8, 2, 64, 9000, true, 200, 0, "", "", AttentionKernel::Auto, 2, d, false, false, 1, 0, false},
      {16, 2, 128, 300, false, 1, 250, "", "", AttentionKernel::Auto, 5, d, false, false, 1, 0, false},
      {8, 2, 64, 300, true, 40, 20, "", "", AttentionKernel::Auto, 3, d, false, true, 1, 0, false},
      // forced to the per-row kernels; 4 storage buffers per stage (android-baseline-2022): split
      {8, 2, 64, 300, true, 3, 100, "", "", AttentionKernel::Rows, 2, "attention_split"},
      {8, 2, 64, 300, true, 3, 100, "", "android-baseline-2022", AttentionKernel::Auto, 2, "attention_split"},
      {64, 1, 64, 100, true, 1, 10, "", "", AttentionKernel::Auto, 2, "attention_split"},  // ratio 64
      // y read by a linear on the integer path that quantizes it per token
      {32, 8, 64, 2048, true, 5, 120, "", "", AttentionKernel::Auto, 6, d, true},  // 2 then 3 chunks
      {8, 2, 64, 300, false, 3, 20, "", "", AttentionKernel::Auto, 2, d, true},    // one chunk
      {12, 4, 6, 300, true, 1, 100, "", "", AttentionKernel::Auto, 2, d, true},    // row of 72: 18 words
      // a phone profile (android-16: 16 KiB of shared memory, blocks of 32 keys); the linear's
      // prologue reduces with a shared-memory tree there
      {8, 2, 64, 300, true, 3, 100, "", "android-16", AttentionKernel::Auto, 2, d, true},
      // the target's chunks (lavapipe: at most 4, cpu_device): 1b-shaped, chunks of 8 blocks, and
      // of 36 blocks at 9000, prefilled then decoded across chunk boundaries
      {32, 8, 64, 2048, true, 70, 440, "", "", AttentionKernel::Auto, 3, d, false, false, 1, 0, true, 0},
      {8, 2, 64, 9000, true, 200, 2150, "", "", AttentionKernel::Auto, 3, d, false, false, 1, 0, true, 0},
  };
  for (const AttnCase& c : cases) CheckAttention(c, &variants);
  EXPECT_GT(variants["attention_decode_kvf16"], 0);
  EXPECT_GT(variants["attention_decode_kvf32"], 0);
  for (const char* path : {"path:vec_f16", "path:vec_f32", "path:scalar", "path:subgroup", "path:trees",
                           "path:pv_slices", "path:pv_whole"})
    EXPECT_GT(variants[path], 0) << path;
  auto p = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(p.ok());
  if (HasQuirk(*p, "cpu_device")) {
    EXPECT_GT(variants["path:cpu_chunks"], 0);
  }
}

// The decode kernel for a few rows (batched or speculative decoding: programs of 2 to 8 tokens),
// causal per row, in groups of rows per workgroup (the selection's: G x rows <= 4 but at most 4
// groups; forced: 1 to 8,
// a last group partly idle): new rows that straddle a chunk boundary (each chunk appends its own,
// rows of later groups read earlier groups' new rows from shared memory), one and several chunks,
// GQA ratios 1 to 8, head_dim 2 to 128, f16 and f32 caches, runs to the cache's last row, f16
// subnormals on a GPU profile, a linear reading y, the softmax and combine per query in one subgroup
// and by shared-memory trees (as for targets without subgroup arithmetic). A group of 32 queries
// needs 42.6 (head_dim 64) or 48.6 KB (128) of shared memory: on lavapipe's 32 KiB those programs
// take the tiled kernel.
TEST(Decoder, MultiRowDecodeAttentionMatchesReference) {
  std::map<std::string, int> variants;
  const std::string d = "attention_decode";
  const auto A = AttentionKernel::Auto;
  const AttnCase cases[] = {
      // 1b-shaped: steps of 2 from 125 (127..128 straddles 128), then of 8 (123..130 and on) in
      // the selection's groups (1 row; of 8: 2 rows), one group of 8, groups of 3 (3, 3, 2) and of 1
      {32, 8, 64, 2048, true, 5, 120, "", "", A, 3, d, false, false, 2},
      {32, 8, 64, 2048, true, 3, 120, "", "", A, 2, d, false, false, 8},
      {32, 8, 64, 2048, true, 3, 120, "", "", A, 2, kDecodeWhereItFits, false, false, 8, 8},
      {32, 8, 64, 2048, true, 3, 120, "", "", A, 2, d, false, false, 8, 3},
      {32, 8, 64, 2048, true, 3, 120, "", "", A, 2, d, false, false, 8, 1},
      {8, 2, 64, 300, true, 1, 60, "", "", A, 3, d, false, false, 3},       // 61..63, 64..66 (a new chunk), 67..69
      {8, 2, 64, 300, true, 1, 60, "", "", A, 3, d, false, false, 3, 3},    // the same in one group
      {8, 8, 80, 70, true, 1, 45, "", "", A, 3, d, false, false, 8},        // ratio 1 (one group), to the last row
      {8, 8, 80, 70, true, 1, 45, "", "", A, 3, d, false, false, 8, 3},
      {16, 2, 128, 300, false, 1, 250, "", "", A, 3, d, false, false, 4},   // f32, head_dim 128, ratio 8
      {16, 2, 128, 300, false, 1, 250, "", "", A, 3, kDecodeWhereItFits, false, false, 4, 4},  // 32 queries
      {28, 4, 64, 90, false, 2, 30, "", "", A, 3, d, false, false, 4},      // ratio 7
      {8, 2, 2, 40, false, 1, 20, "", "", A, 3, d, false, false, 5},        // head_dim 2 (blocks of 128), 5 rows
      {8, 2, 2, 40, false, 1, 20, "", "", A, 3, d, false, false, 5, 4},
      {4, 2, 6, 300, true, 1, 160, "", "", A, 2, d, false, false, 2},       // head_dim 6
      {8, 2, 64, 9000, true, 1, 8500, "", "", A, 2, d, false, false, 4},    // chunks of 3 blocks
      {8, 2, 64, 9000, true, 200, 0, "", "", A, 2, d, false, false, 4},     // their blocks all written
      // a target without subgroup arithmetic (shared-memory trees)
      {8, 2, 64, 300, true, 1, 60, "", "", A, 3, d, false, false, 3, 0, false},
      {32, 8, 64, 2048, true, 3, 120, "", "", A, 2, d, false, false, 8, 0, false},
      {8, 2, 64, 9000, true, 200, 0, "", "", A, 2, d, false, false, 4, 0, false},
      // subnormals: the test profile's integer decode and android-16's unpackHalf2x16 (16 KiB of
      // shared memory: blocks of 16 keys)
      {8, 2, 64, 300, true, 40, 20, "", "", A, 2, d, false, true, 3},
      {8, 2, 64, 300, true, 40, 20, "", "android-16", A, 2, d, false, true, 2},
      // y read by a linear that quantizes it per token
      {32, 8, 64, 2048, true, 5, 120, "", "", A, 2, d, true, false, 4},
      // 8 rows x 8 query heads per KV head in one group: past 32 queries, the tiled kernel
      {16, 2, 128, 300, true, 1, 100, "", "", A, 2, "attention_tiled", false, false, 8, 8},
  };
  for (const AttnCase& c : cases) CheckAttention(c, &variants);
  EXPECT_GT(variants["attention_decode_kvf16"], 0);
  EXPECT_GT(variants["attention_decode_kvf32"], 0);
  for (const char* path : {"path:vec_f16", "path:vec_f32", "path:scalar", "path:subgroup", "path:trees",
                           "path:pv_slices", "path:pv_whole"})
    EXPECT_GT(variants[path], 0) << path;
}

// Where the decode kernel is not taken (the reasons: AttentionSelect.DecodeKernel* and the CLI
// e2e), one-row programs run the per-row kernels and the bundle has no sync state.
TEST(Decoder, DecodeAttentionRefusalsRunPerRow) {
  const struct {
    AttnCase c;
    std::string profile;
    AttentionKernel force;
  } cases[] = {
      {{8, 2, 64, 64, true, 1, 0}, "android-baseline-2022", AttentionKernel::Auto},
      {{8, 2, 64, 64, true, 1, 0}, gpu_test::TestProfile(), AttentionKernel::Rows},
      {{64, 1, 64, 64, true, 1, 0}, gpu_test::TestProfile(), AttentionKernel::Auto},
  };
  for (const auto& r : cases) {
    auto b = Compile(AttentionGraph(r.c), {1}, r.profile, r.force);
    ASSERT_TRUE(b.ok()) << b.error().message;
    gpu_test::Loaded l;
    ASSERT_TRUE(Load(*b, &l));
    vkqc_layer_info li;
    ASSERT_EQ(vkqc_model_layer_info(l.model, 0, 0, &li), VKQC_OK);
    const std::string v = li.variant;
    EXPECT_TRUE(v.rfind("attention_split", 0) == 0 || v.rfind("attention_rows", 0) == 0) << v;
    EXPECT_EQ(vkqc_model_state_count(l.model), 2u);
  }
  // Taken: the sync state follows the graph's states, 4 bytes per (KV head, row group): 8 groups.
  auto b = Compile(AttentionGraph({8, 2, 64, 64, true, 1, 0}), {1});
  ASSERT_TRUE(b.ok()) << b.error().message;
  gpu_test::Loaded l;
  ASSERT_TRUE(Load(*b, &l));
  ASSERT_EQ(vkqc_model_state_count(l.model), 3u);
  vkqc_tensor_info si;
  ASSERT_EQ(vkqc_model_state_info(l.model, 2, &si), VKQC_OK);
  EXPECT_STREQ(si.name, "vkqc.sync");
  EXPECT_EQ(si.size_bytes, 2u * 8 * 4);
}

// --force-attention tiled where the tiled kernel cannot run is a compile error that says why;
// one-row programs of the same bundle still take the per-row kernels.
TEST(Decoder, ForcedTiledAttentionRefusals) {
  struct Refusal {
    AttnCase c;
    std::string profile, why;
  } refusals[] = {
      {{8, 2, 136, 64, true, 4, 0}, gpu_test::TestProfile(), "head_dim 136 (the tiled kernel takes multiples of 4 up to 128)"},
      {{8, 2, 30, 64, true, 4, 0}, gpu_test::TestProfile(), "head_dim 30 (the tiled kernel takes multiples of 4 up to 128)"},
      {{16, 2, 128, 64, true, 4, 0}, "android-baseline-2022", "bytes of shared memory, the target has 16384"},
      {{64, 1, 64, 64, true, 4, 0}, gpu_test::TestProfile(), "64 query heads per KV head (the tiled kernel takes up to 32)"},
  };
  for (const Refusal& r : refusals) {
    auto b = Compile(AttentionGraph(r.c), {1, r.c.prefill}, r.profile, AttentionKernel::Tiled);
    ASSERT_FALSE(b.ok()) << r.why;
    EXPECT_NE(b.error().message.find("--force-attention tiled"), std::string::npos) << b.error().message;
    EXPECT_NE(b.error().message.find(r.why), std::string::npos) << b.error().message;
  }
  // A head_dim the tiled kernel cannot take: forcing it is no error where every program has one row.
  auto one = Compile(AttentionGraph({8, 2, 136, 64, true, 1, 0}), {1}, gpu_test::TestProfile(), AttentionKernel::Tiled);
  EXPECT_TRUE(one.ok()) << one.error().message;
}

TEST(Decoder, StateApiAndContextOverflow) {
  const AttnCase c{4, 2, 32, 40, true, 16, 0};
  const ir::Graph g = AttentionGraph(c);
  auto bundle = Compile(g, {1, 16});
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  gpu_test::Loaded l;
  ASSERT_TRUE(Load(*bundle, &l));
  uint32_t p16 = 0;
  ASSERT_EQ(vkqc_model_find_program(l.model, 16, &p16), VKQC_OK);
  const int32_t pin = vkqc_model_position_input(l.model, p16);
  ASSERT_EQ(pin, 3);
  void* mapped = nullptr;
  EXPECT_EQ(vkqc_model_map_input(l.model, p16, uint32_t(pin), &mapped), VKQC_ERROR_INVALID_ARGUMENT);
  const int32_t p = 24;  // writing the position input sets the position
  ASSERT_EQ(vkqc_model_write_input(l.model, p16, uint32_t(pin), &p, 4), VKQC_OK);
  EXPECT_EQ(vkqc_model_position(l.model), 24u);
  // 24 + 16 = 40 fits; then nothing more does, and the refused run writes nothing.
  const auto qv = RandomFloats(16 * 4 * 32, 1), kv = RandomFloats(16 * 2 * 32, 2);
  for (uint32_t i = 0; i < 3; ++i)
    ASSERT_EQ(vkqc_model_write_input(l.model, p16, i, i == 0 ? qv.data() : kv.data(), (i == 0 ? qv : kv).size() * 4),
              VKQC_OK);
  ASSERT_EQ(vkqc_model_run(l.model, p16), VKQC_OK) << vkqc_last_error();
  EXPECT_EQ(vkqc_model_position(l.model), 40u);
  std::vector<uint8_t> before(2 * 40 * 32 * 2), after(before.size());
  ASSERT_EQ(vkqc_model_read_state(l.model, "k_cache", before.data(), before.size()), VKQC_OK);
  uint32_t p1 = 0;
  ASSERT_EQ(vkqc_model_find_program(l.model, 1, &p1), VKQC_OK);
  EXPECT_EQ(vkqc_model_run(l.model, p1), VKQC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(vkqc_last_error()).find("context overflow"), std::string::npos) << vkqc_last_error();
  ASSERT_EQ(vkqc_model_read_state(l.model, "k_cache", after.data(), after.size()), VKQC_OK);
  EXPECT_EQ(before, after);
  EXPECT_EQ(vkqc_model_set_position(l.model, 41), VKQC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(vkqc_model_read_state(l.model, "k_cache", after.data(), 12), VKQC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(vkqc_model_read_state(l.model, "nope", after.data(), after.size()), VKQC_ERROR_NOT_FOUND);
  // Reset: zeros and position 0.
  ASSERT_EQ(vkqc_model_reset_state(l.model), VKQC_OK);
  EXPECT_EQ(vkqc_model_position(l.model), 0u);
  ASSERT_EQ(vkqc_model_read_state(l.model, "k_cache", after.data(), after.size()), VKQC_OK);
  EXPECT_EQ(after, std::vector<uint8_t>(after.size(), 0));
  gpu_test::ExpectNoValidationMessages("state api");
}

}  // namespace
}  // namespace vkqc
