// transpose, reshape and clip on the device against the CPU reference, exactly (they copy values;
// clip is exact): every perm of 4-d tensors in f32 and int8 (odd and aligned shapes, int8 rows
// not multiples of 4), the tiled float path, ranks 1 to 6, the symbolic dimension, reshape as a
// view (no dispatch, checked in the bundle) and as a copy, both at graph inputs and outputs, a
// chain as an imported NCHW model has it, and bundles for Android targets (4 storage buffers).
// Random inputs with fixed seeds, memory poisoned at load, validation on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <random>

#include "compiler/graph/import_json.h"
#include "compiler/graph/synthetic.h"
#include "compiler/graph/vkqg_io.h"
#include "compiler/passes/pipeline.h"
#include "gpu_fixture.h"
#include "reference/reference.h"
#include "schema/bundle_generated.h"

namespace vkqc {
namespace {

constexpr int64_t S = ir::kSymbolicDim;
constexpr float kInf = std::numeric_limits<float>::infinity();

ir::Quant Q8(ir::Scheme s, float scale, int32_t zp) { return ir::Quant{s, {scale}, {zp}, 0, 0}; }

// A graph under construction with its inputs' values.
struct Net {
  ir::Graph g;
  std::map<std::string, std::vector<float>> inputs;
  std::vector<int64_t> tokens;  // compile sizes when the graph is symbolic; runs use the last
  uint32_t seed = 1;

  int Tensor(const std::string& name, std::vector<int64_t> shape, ir::DType dt = ir::DType::F32,
             std::optional<ir::Quant> q = {}) {
    g.tensors.push_back({name, std::move(shape), dt, std::move(q), {}});
    return int(g.tensors.size() - 1);
  }
  // A graph input: f32 normal values (stddev 3, so clips act), or random int8 codes.
  int Input(const std::string& name, std::vector<int64_t> shape, ir::DType dt = ir::DType::F32,
            std::optional<ir::Quant> q = {}) {
    const int t = Tensor(name, shape, dt, q);
    g.inputs.push_back(t);
    int64_t n = 1;
    for (int64_t d : shape) n *= d == S ? tokens.back() : d;
    std::mt19937 rng(seed++ * 7919u);
    if (dt == ir::DType::I8) {
      std::vector<float>& v = inputs[name];
      for (int64_t i = 0; i < n; ++i) v.push_back(float(int(rng() % 256) - 128));
    } else {
      inputs[name] = testing_graphs::RandomFloats(size_t(n), seed * 31u, 3.0f);
    }
    return t;
  }
  ir::Op& Op(const std::string& name, ir::OpType type, int in, int out) {
    g.ops.push_back(gpu_test::MakeOp(name.c_str(), type, {in}, {out}));
    return g.ops.back();
  }
  // y = transpose(x, perm), y's shape derived.
  int Transpose(const std::string& name, int x, std::vector<int32_t> perm) {
    const ir::Tensor xt = g.tensors[size_t(x)];
    std::vector<int64_t> ys;
    for (int32_t a : perm) ys.push_back(xt.shape[size_t(a)]);
    const int y = Tensor(name + ".out", ys, xt.dtype, xt.quant);
    Op(name, ir::OpType::Transpose, x, y).transpose.perm = std::move(perm);
    return y;
  }
  int Reshape(const std::string& name, int x, std::vector<int64_t> shape) {
    const ir::Tensor xt = g.tensors[size_t(x)];
    const int y = Tensor(name + ".out", std::move(shape), xt.dtype, xt.quant);
    Op(name, ir::OpType::Reshape, x, y);
    return y;
  }
  int Clip(const std::string& name, int x, float lo, float hi) {
    const int y = Tensor(name + ".out", g.tensors[size_t(x)].shape);
    Op(name, ir::OpType::Clip, x, y).unary = {lo, hi};
    return y;
  }
};

struct Ran {
  std::vector<std::string> variants;  // per layer
  uint32_t dispatches = 0;
};

uint32_t CountDispatches(const std::vector<uint8_t>& bundle, uint32_t program) {
  const auto* b = fb::bundle::GetBundle(bundle.data() + 4);
  const auto* types = b->programs()->Get(program)->commands_type();
  uint32_t n = 0;
  for (uint32_t i = 0; i < types->size(); ++i) n += fb::bundle::Command(types->Get(i)) == fb::bundle::Command::Dispatch;
  return n;
}

// Compiles `net` for `profile`, runs it (poisoned memory, every output checked to be poisoned
// before the run) and compares every output with the reference, exactly.
void RunAndCompare(const Net& net, Ran* ran = nullptr, const std::string& profile_name = gpu_test::TestProfile()) {
  auto profile = LoadProfile(profile_name);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  CompileOptions o;
  if (net.g.HasSymbolicDim()) o.tokens = net.tokens;
  auto bundle = CompileGraph(net.g, *profile, o, 0);
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  gpu_test::Loaded l;
  vkqc_model_options mo;
  vkqc_model_options_init(&mo);
  mo.poison_memory = 1;
  ASSERT_EQ(vkqc_model_load(gpu_test::Context(), bundle->data(), bundle->size(), &mo, &l.model), VKQC_OK)
      << vkqc_last_error();
  uint32_t prog = 0;
  const int64_t tokens = net.g.HasSymbolicDim() ? net.tokens.back() : 0;
  if (tokens) {
    ASSERT_EQ(vkqc_model_find_program(l.model, uint32_t(tokens), &prog), VKQC_OK) << vkqc_last_error();
  }
  for (size_t i = 0; i < net.g.inputs.size(); ++i) {
    const ir::Tensor& t = net.g.tensors[size_t(net.g.inputs[i])];
    const std::vector<float>& v = net.inputs.at(t.name);
    std::vector<uint8_t> b;
    if (t.dtype == ir::DType::I8) {
      for (float f : v) b.push_back(uint8_t(int8_t(f)));
    } else {
      b.resize(v.size() * 4);
      std::memcpy(b.data(), v.data(), b.size());
    }
    ASSERT_EQ(vkqc_model_write_input(l.model, prog, uint32_t(i), b.data(), b.size()), VKQC_OK) << vkqc_last_error();
  }
  for (size_t j = 0; j < net.g.outputs.size(); ++j) {
    void* mapped = nullptr;
    ASSERT_EQ(vkqc_model_map_output(l.model, prog, uint32_t(j), &mapped), VKQC_OK) << vkqc_last_error();
    uint32_t first;
    std::memcpy(&first, mapped, 4);
    ASSERT_EQ(first, 0xFFFFFFFFu) << "output " << j << " was not poisoned";
  }
  ASSERT_EQ(vkqc_model_run(l.model, prog), VKQC_OK) << vkqc_last_error();
  ref::RunOptions ro;
  ro.tokens = tokens;
  auto want = ref::RunGraph(net.g, net.inputs, ro);
  ASSERT_TRUE(want.ok()) << want.error().message;
  Ran r;
  r.dispatches = CountDispatches(*bundle, prog);
  for (uint32_t i = 0; i < vkqc_model_layer_count(l.model, prog); ++i) {
    vkqc_layer_info li;
    ASSERT_EQ(vkqc_model_layer_info(l.model, prog, i, &li), VKQC_OK);
    r.variants.push_back(li.variant);
  }
  std::string vs;
  for (const auto& v : r.variants) vs += (vs.empty() ? "" : ", ") + v;
  for (size_t j = 0; j < net.g.outputs.size(); ++j) {
    const ir::Tensor& yt = net.g.tensors[size_t(net.g.outputs[j])];
    vkqc_tensor_info info;
    ASSERT_EQ(vkqc_model_output_info(l.model, prog, uint32_t(j), &info), VKQC_OK);
    std::vector<uint8_t> got(info.size_bytes);
    ASSERT_EQ(vkqc_model_read_output(l.model, prog, uint32_t(j), got.data(), got.size()), VKQC_OK);
    const std::vector<float>& w = want->at(yt.name);
    const bool i8 = yt.dtype == ir::DType::I8;
    ASSERT_EQ(got.size(), w.size() * (i8 ? 1 : 4)) << yt.name;
    for (size_t i = 0; i < w.size(); ++i) {
      float g;
      if (i8) g = float(int8_t(got[i]));
      else std::memcpy(&g, got.data() + 4 * i, 4);
      ASSERT_EQ(std::memcmp(&g, &w[i], 4), 0) << yt.name << "[" << i << "] = " << g << ", want " << w[i] << " (" << vs << ")";
    }
  }
  gpu_test::ExpectNoValidationMessages(vs);
  if (ran) *ran = std::move(r);
}

std::string Perm(const std::vector<int32_t>& p) {
  std::string s;
  for (int32_t a : p) s += std::to_string(a);
  return s;
}

// ---- transpose ------------------------------------------------------------------------------------
// Every perm of 4-d tensors: f32 and int8 at once, ragged (dims 1, 3, 5, 17) and aligned shapes.
TEST(LayoutOps, TransposeEveryPermOf4d) {
  const std::vector<std::vector<int64_t>> shapes{{3, 1, 5, 17}, {2, 3, 5, 7}, {2, 4, 8, 32}};
  std::vector<int32_t> perm{0, 1, 2, 3};
  int n = 0;
  do {
    SCOPED_TRACE("perm " + Perm(perm));
    Net net;
    for (size_t s = 0; s < shapes.size(); ++s) {
      const std::string k = std::to_string(s);
      const int xf = net.Input("xf" + k, shapes[s]);
      const int xq = net.Input("xq" + k, shapes[s], ir::DType::I8, Q8(ir::Scheme::Q8TA, 0.05f, -3));
      net.g.outputs.push_back(net.Transpose("tf" + k, xf, perm));
      net.g.outputs.push_back(net.Transpose("tq" + k, xq, perm));
    }
    RunAndCompare(net);
    ++n;
  } while (std::next_permutation(perm.begin(), perm.end()) && !::testing::Test::HasFatalFailure());
  EXPECT_EQ(n, 24);
}

// Transposes in the middle of a graph (their inputs and outputs in the arena), NCHW <-> NHWC
// through the tiled path and the gather, int8 in between.
TEST(LayoutOps, NchwModelChain) {
  for (int64_t c : {3, 17, 32}) {
    SCOPED_TRACE("C=" + std::to_string(c));
    Net net;
    const int x = net.Input("x", {2, c, 19, 17});
    const int nhwc = net.Transpose("to_nhwc", x, {0, 2, 3, 1});
    const int q = net.Tensor("q", {2, 19, 17, c}, ir::DType::I8, Q8(ir::Scheme::Q8TA, 0.04f, 5));
    net.Op("quant", ir::OpType::Quantize, nhwc, q);
    const int qt = net.Transpose("to_nchw_i8", q, {0, 3, 1, 2});
    const int f = net.Tensor("f", {2, c, 19, 17});
    net.Op("dequant", ir::OpType::Dequantize, qt, f);
    const int r = net.Clip("relu6", f, 0.0f, 6.0f);
    const int back = net.Transpose("to_nhwc2", r, {0, 2, 3, 1});
    net.g.outputs = {net.Transpose("to_nchw", back, {0, 3, 1, 2})};
    Ran ran;
    RunAndCompare(net, &ran);
    if (c >= 16) {
      EXPECT_EQ(ran.variants[0], "transpose_f32_tiled");
      EXPECT_EQ(ran.variants[5], "transpose_f32_tiled");
    } else {
      EXPECT_EQ(ran.variants[0], "transpose_f32");
    }
    EXPECT_EQ(ran.variants[2], "transpose_i8");
  }
}

// The tiled path with partial tiles and a batch, both directions, f32 output buffers directly.
TEST(LayoutOps, TiledTransposeRaggedTiles) {
  Net net;
  const int a = net.Input("a", {3, 33, 5, 7});   // NCHW -> NHWC: [3, 33, 35] -> [3, 35, 33]
  const int b = net.Input("b", {1, 17, 65, 40});  // NHWC -> NCHW: [17*65, 40] -> [40, 17*65]
  const int c = net.Input("c", {40, 16});
  net.g.outputs = {net.Transpose("ta", a, {0, 2, 3, 1}), net.Transpose("tb", b, {0, 3, 1, 2}),
                   net.Transpose("tc", c, {1, 0})};
  Ran ran;
  RunAndCompare(net, &ran);
  for (const auto& v : ran.variants) EXPECT_EQ(v, "transpose_f32_tiled");
}

TEST(LayoutOps, TransposeRanks1To6) {
  Net net;
  const int r1 = net.Input("r1", {17});
  const int r2 = net.Input("r2", {5, 3}, ir::DType::I8, Q8(ir::Scheme::Q8TO, 0.1f, 0));
  const int r3 = net.Input("r3", {3, 1, 17});
  const int r5 = net.Input("r5", {2, 3, 5, 1, 6}, ir::DType::I8, Q8(ir::Scheme::Q8TA, 0.2f, 7));
  const int r6 = net.Input("r6", {2, 3, 1, 5, 2, 3});
  const int r6q = net.Input("r6q", {2, 3, 1, 5, 2, 3}, ir::DType::I8, Q8(ir::Scheme::Q8TA, 0.2f, 7));
  net.g.outputs = {net.Transpose("t1", r1, {0}),
                   net.Transpose("t2", r2, {1, 0}),
                   net.Transpose("t3", r3, {1, 2, 0}),
                   net.Transpose("t5", r5, {4, 2, 0, 3, 1}),
                   net.Transpose("t6", r6, {5, 3, 1, 0, 4, 2}),
                   net.Transpose("t6q", r6q, {3, 5, 0, 2, 4, 1})};
  Ran ran;
  RunAndCompare(net, &ran);
  EXPECT_EQ(ran.variants[3], "transpose_f32");  // after 3 input repacks: an identity, but a graph output: copied
}

TEST(LayoutOps, SymbolicTokens) {
  for (int64_t run : {5, 1}) {  // the program for each size of one bundle
    Net net;
    net.tokens = {run == 5 ? 1 : 5, run};
    const int x = net.Input("x", {S, 3, 17});
    const int xq = net.Input("xq", {S, 5, 6}, ir::DType::I8, Q8(ir::Scheme::Q8TA, 0.1f, 2));
    const int t = net.Transpose("t", x, {0, 2, 1});
    const int r = net.Reshape("r", t, {S, 51});
    const int tq = net.Transpose("tq", xq, {0, 2, 1});
    net.g.outputs = {net.Clip("c", r, -1.0f, kInf), net.Reshape("rq", tq, {S, 30})};
    RunAndCompare(net);
  }
}

// ---- reshape --------------------------------------------------------------------------------------
// A reshape inside the graph is a view: no dispatch of its own.
TEST(LayoutOps, ReshapeViewHasNoDispatch) {
  Net net;
  const int x = net.Input("x", {3, 5, 17});
  const int a = net.Clip("a", x, -1.0f, 1.0f);
  const int r = net.Reshape("r", a, {15, 17});
  const int r2 = net.Reshape("r2", r, {5, 51});
  net.g.outputs = {net.Clip("y", r2, 0.0f, kInf)};
  Ran ran;
  RunAndCompare(net, &ran);
  EXPECT_EQ(ran.variants, (std::vector<std::string>{"clip_f32", "folded", "folded", "clip_f32"}));
  EXPECT_EQ(ran.dispatches, 2u);
}

// At a graph input the view reads the input's buffer; at a graph output the reshape copies.
TEST(LayoutOps, ReshapeAtGraphInputAndOutput) {
  Net net;
  const int x = net.Input("x", {3, 5, 17});
  const int v = net.Reshape("in_view", x, {15, 17});
  const int c = net.Clip("c", v, -2.0f, 2.0f);
  const int out = net.Reshape("out_copy", c, {255});
  const int direct = net.Reshape("direct", x, {17, 15});  // input straight to output
  net.g.outputs = {out, direct};
  Ran ran;
  RunAndCompare(net, &ran);
  EXPECT_EQ(ran.variants, (std::vector<std::string>{"folded", "clip_f32", "reshape_f32_copy", "reshape_f32_copy"}));
  EXPECT_EQ(ran.dispatches, 3u);
}

// int8: views where the rows keep their bytes, one re-padding copy otherwise; graph inputs and
// outputs (dense bytes there, packed rows inside).
TEST(LayoutOps, ReshapeInt8ViewsAndCopies) {
  const ir::Quant q = Q8(ir::Scheme::Q8TA, 0.05f, 1);
  Net net;
  const int x = net.Input("x", {3, 5, 17}, ir::DType::I8, q);
  const int same_rows = net.Reshape("same_rows", x, {15, 17});   // view (last dim kept)
  const int repad = net.Reshape("repad", same_rows, {5, 51});   // copy: rows of 17 -> 51
  const int t = net.Transpose("t", repad, {1, 0});             // [51, 5]
  const int y = net.Reshape("to_out", t, {3, 17, 5});          // view... but a graph output: copy
  const int a = net.Input("a", {2, 64}, ir::DType::I8, q);
  const int dense = net.Reshape("dense", a, {4, 2, 16});        // rows of 64 -> 16: re-padded
  const int b = net.Input("b", {4, 64}, ir::DType::I8, q);
  const int whole = net.Reshape("whole", b, {8, 32});           // whole 32-byte rows: view
  const int wt = net.Transpose("wt", whole, {1, 0});
  net.g.outputs = {y, dense, wt};
  Ran ran;
  RunAndCompare(net, &ran);
  std::map<std::string, std::string> v;
  for (size_t i = 0; i < net.g.ops.size(); ++i) v[net.g.ops[i].name] = ran.variants[i + 3];  // 3 input repacks
  EXPECT_EQ(v["same_rows"], "folded");
  EXPECT_EQ(v["repad"], "reshape_i8_repad");
  EXPECT_EQ(v["to_out"], "reshape_i8_copy");
  EXPECT_EQ(v["dense"], "reshape_i8_repad");
  EXPECT_EQ(v["whole"], "folded");
  // 3 input repacks, repad, t, to_out, dense, wt, 3 output repacks.
  EXPECT_EQ(ran.dispatches, 11u);
}

// ---- clip -----------------------------------------------------------------------------------------
TEST(LayoutOps, ClipBounds) {
  Net net;
  const int x = net.Input("x", {3, 5, 17});
  net.g.outputs = {net.Clip("relu6", x, 0.0f, 6.0f), net.Clip("relu", x, 0.0f, kInf),
                   net.Clip("upper", x, -kInf, 0.5f), net.Clip("band", x, -1.25f, 1.0f),
                   net.Clip("none", x, -kInf, kInf), net.Clip("point", x, 0.75f, 0.75f)};
  RunAndCompare(net);
  // The values really were clipped at both ends.
  const auto& v = net.inputs.at("x");
  EXPECT_GT(std::count_if(v.begin(), v.end(), [](float f) { return f > 6.0f; }), 0);
  EXPECT_GT(std::count_if(v.begin(), v.end(), [](float f) { return f < -1.25f; }), 0);
}

// ---- Android targets --------------------------------------------------------------------------------
// Every kernel of these ops within 4 storage buffers per stage and 128 invocations; run on the
// local device as well where it satisfies the target (lavapipe does).
TEST(LayoutOps, AndroidProfiles) {
  for (const char* name : {"android-baseline-2022", "mali-valhall"}) {
    SCOPED_TRACE(name);
    Net net;
    const int x = net.Input("x", {1, 32, 9, 17});
    const int t = net.Transpose("tiled", x, {0, 2, 3, 1});
    const int g = net.Transpose("gather", t, {3, 1, 0, 2});
    const int q = net.Input("q", {3, 5, 6}, ir::DType::I8, Q8(ir::Scheme::Q8TA, 0.1f, 0));
    const int qt = net.Transpose("qt", q, {2, 0, 1});
    const int qr = net.Reshape("qr", qt, {6, 15});
    net.g.outputs = {net.Clip("clip", g, -0.5f, 0.5f), qr};
    auto profile = LoadProfile(name);
    ASSERT_TRUE(profile.ok()) << profile.error().message;
    auto bundle = CompileGraph(net.g, *profile, {}, 0);
    ASSERT_TRUE(bundle.ok()) << bundle.error().message;
    const auto* req = fb::bundle::GetBundle(bundle->data() + 4)->requirements();
    EXPECT_LE(req->max_per_stage_descriptor_storage_buffers(), 4u);
    EXPECT_LE(req->max_compute_work_group_invocations(), profile->max_compute_work_group_invocations);
    EXPECT_LE(req->max_compute_shared_memory_size(), profile->max_compute_shared_memory_size);
    RunAndCompare(net, nullptr, name);
  }
}

// ---- the example of docs/graph-json.md ----------------------------------------------------------------
// What the doc says inspect shows: the transpose is one dispatch, the flatten a view.
TEST(LayoutOps, DocExample) {
  std::ifstream in(std::string(VKQC_SOURCE_DIR) + "/docs/graph-json.md");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string block;
  for (size_t pos = 0; (pos = text.find("```json\n", pos)) != std::string::npos;) {
    const size_t end = text.find("\n```", pos + 8);
    ASSERT_NE(end, std::string::npos);
    const std::string b = text.substr(pos + 8, end - pos - 8);
    if (b.find("\"to_nhwc\"") != std::string::npos) block = b;
    pos = end + 4;
  }
  ASSERT_FALSE(block.empty()) << "docs/graph-json.md lacks the layout example";
  const std::string path = ::testing::TempDir() + "layout_doc_example.json";
  ASSERT_TRUE(WriteFileBytes(path, block.data(), block.size()).ok());
  auto g = ImportJsonGraph(path);
  ASSERT_TRUE(g.ok()) << g.error().message;
  Net net;
  net.g = *g;
  net.inputs["image"] = testing_graphs::RandomFloats(192, 11, 4.0f);
  Ran ran;
  RunAndCompare(net, &ran);
  EXPECT_EQ(ran.variants, (std::vector<std::string>{"transpose_f32", "clip_f32", "folded", "clip_f32"}));
  EXPECT_EQ(ran.dispatches, 3u);
}

// ---- refusals -------------------------------------------------------------------------------------
TEST(LayoutOps, BadGraphsAreRefusedReadably) {
  auto profile = LoadProfile(gpu_test::TestProfile());
  ASSERT_TRUE(profile.ok());
  Net net;
  const int x = net.Input("x", {2, 3});
  const int y = net.Transpose("t", x, {1, 0});
  net.g.outputs = {y};
  net.g.ops[0].transpose.perm = {1, 1};
  auto r = CompileGraph(net.g, *profile, {}, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::User);
  EXPECT_NE(r.error().message.find("is not a permutation"), std::string::npos) << r.error().message;
  Net clip;
  clip.g.outputs = {clip.Clip("c", clip.Input("x", {2, 3}), 1.0f, 0.0f)};
  r = CompileGraph(clip.g, *profile, {}, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("min 1 is greater than max 0"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace vkqc
