// Weights wider than one binding or one allocation (README, "Weights wider than one binding or
// one allocation"): embedding tables gathered in parts of whole rows, and
// linears split by output channels into parts joined by a concat (passes/split_wide.h), on the
// device against the CPU reference, compiled for the test profile with its maxStorageBufferRange
// lowered so that each case takes 3 or more parts (the device's own range is larger, so the
// bundle runs). Every embedding part boundary is read, ids outside the table give zeros, every
// weight scheme and activation kind of the linear runs at M = 1, 3 and 17, outputs poisoned
// first, validation on; the runtime holding the weights in several buffers gives the same
// results. The refusals (not even the smallest part fits) are readable errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "combinations_case.h"
#include "compiler/kernels/linear/linear.h"
#include "compiler/passes/pipeline.h"
#include "compiler/passes/split_wide.h"
#include "gpu_fixture.h"
#include "reference/reference.h"
#include "schema/bundle_generated.h"

namespace vkqc {
namespace {

using combos::Case;
using combos::Dq8ca;
using combos::Q8;
constexpr int64_t S = ir::kSymbolicDim;

// The test profile with `range` as its maxStorageBufferRange.
TargetProfile ProfileWithRange(uint64_t range) {
  auto p = LoadProfile(gpu_test::TestProfile());
  EXPECT_TRUE(p.ok()) << p.error().message;
  TargetProfile t = p.ok() ? *p : TargetProfile{};
  t.max_storage_buffer_range = range;
  return t;
}

// The bundle's layers of program 0 named `name` or `name/<part>`, and the most bytes any
// dispatch binds of the weight segment.
struct Shape {
  int parts = 0;            // layers named name/<k>
  int dispatches = 0;       // dispatches of the layer named `name`
  uint64_t max_weight_binding = 0;
  uint32_t required_range = 0;
};
Shape BundleShape(const std::vector<uint8_t>& bundle, const std::string& name) {
  Shape s;
  const auto* b = fb::bundle::GetBundle(bundle.data() + 4);
  s.required_range = b->requirements()->max_storage_buffer_range();
  const auto* prog = b->programs()->Get(0);
  for (const auto* l : *prog->layers()) {
    const std::string n = l->name()->str();
    if (n.rfind(name + "/", 0) == 0) ++s.parts;
    if (n != name) continue;
    for (uint32_t c = l->first_command(); c < l->first_command() + l->command_count(); ++c)
      s.dispatches += fb::bundle::Command(prog->commands_type()->Get(c)) == fb::bundle::Command::Dispatch;
  }
  for (uint32_t c = 0; c < prog->commands()->size(); ++c) {
    if (fb::bundle::Command(prog->commands_type()->Get(c)) != fb::bundle::Command::Dispatch) continue;
    const auto* d = static_cast<const fb::bundle::Dispatch*>(prog->commands()->Get(c));
    for (const auto* buf : *d->buffers())
      if (buf->kind() == fb::bundle::BufferKind::Weights) s.max_weight_binding = std::max(s.max_weight_binding, buf->size());
  }
  return s;
}

// `c` compiled for its tokens on the test profile with maxStorageBufferRange `range` (int_dot: the
// linears on the integer path).
Result<std::vector<uint8_t>> CompileForRange(const Case& c, uint64_t range, bool int_dot = false) {
  CompileOptions o;
  o.tokens = c.tokens;
  if (int_dot) o.select.force_accum = linear::Accum::IntDot;
  return CompileGraph(c.g, ProfileWithRange(range), o, 0);
}

// Compiles `c` for the test profile with `range` and expects a user error holding every fragment.
void ExpectRefused(const Case& c, uint64_t range, const std::vector<std::string>& fragments) {
  auto bundle = CompileForRange(c, range);
  ASSERT_FALSE(bundle.ok());
  EXPECT_EQ(bundle.error().kind, ErrorKind::User) << bundle.error().message;
  for (const std::string& f : fragments)
    EXPECT_NE(bundle.error().message.find(f), std::string::npos) << bundle.error().message;
}

// ---- embedding ---------------------------------------------------------------------------------

TEST(WideConstants, EmbeddingTableInPartsOfRows) {
  const int64_t v = 1001;  // rows: the table's bytes well above the activations' at M = 17
  for (ir::Scheme scheme : {ir::Scheme::None, ir::Scheme::Q8CSW, ir::Scheme::Q8GSW, ir::Scheme::Q4GSW})
    for (int64_t m : {1, 3, 17}) {
      const int64_t ch = scheme == ir::Scheme::Q8GSW ? 64 : 40;
      SCOPED_TRACE(std::string(scheme == ir::Scheme::None ? "f32" : ir::SchemeName(scheme)) + " M=" + std::to_string(m));
      Case c;
      c.tokens = {m};
      const int ids = c.Input("ids", {S}, ir::DType::I32, {}, 0, int32_t(v));
      const int t = scheme == ir::Scheme::None ? c.Floats("table", {v, ch}, 1.0f)
                                               : c.Weight("table", {v, ch}, scheme, scheme == ir::Scheme::Q8GSW ? 32 : 8);
      const int y = c.Tensor("y", {S, ch});
      c.Op("embedding", ir::OpType::Embedding, {ids, t}, {y});
      c.g.outputs = {y};
      // About a third of the table's values a binding (the scales too): 3 or more parts.
      const uint64_t table_bytes = c.g.tensors[size_t(t)].data->size;
      const uint64_t range = (table_bytes / 3 + 255) / 256 * 256 + 256;
      auto bundle = CompileForRange(c, range);
      ASSERT_TRUE(bundle.ok()) << bundle.error().message;
      const Shape s = BundleShape(*bundle, "embedding");
      EXPECT_GE(s.dispatches, 3) << "the table in parts, one dispatch each";
      EXPECT_LE(s.max_weight_binding, range);
      EXPECT_LE(s.required_range, range);
      // The rows a part holds, as the layer's reason says; ids on both sides of every part
      // boundary, the table's first and last rows, and outside it (zeros) come first.
      const std::string reason = fb::bundle::GetBundle(bundle->data() + 4)->programs()->Get(0)->layers()->Get(0)->reason()->str();
      const size_t at = reason.find("parts of up to ");
      ASSERT_NE(at, std::string::npos) << reason;
      const int32_t per = int32_t(std::stoul(reason.substr(at + 15)));
      EXPECT_EQ(per % 8, 0);
      EXPECT_EQ(s.dispatches, int((v + per - 1) / per));
      std::vector<int32_t> edges = {int32_t(v - 1), per, -1, per - 1, 0, int32_t(v)};
      for (int32_t b = 2 * per; b < v; b += per) edges.insert(edges.end(), {b - 1, b});
      edges.push_back(int32_t(v + 1000));
      std::vector<int32_t>& idv = c.int32_inputs["ids"];
      for (size_t i = 0; i < idv.size() && i < edges.size(); ++i) idv[i] = edges[i];
      c.inputs["ids"] = std::vector<float>(idv.begin(), idv.end());
      combos::RunCheck rc;
      rc.exact = true;  // s * q
      combos::RunAndCheck(c, *bundle, rc);
      gpu_test::ExpectNoValidationMessages("embedding in parts");
    }
}

TEST(WideConstants, EmbeddingRefusedWhereEightRowsExceedTheRange) {
  Case c;
  const int ids = c.Input("ids", {S}, ir::DType::I32, {}, 0, 50);
  const int t = c.Floats("table", {50, 64}, 1.0f);  // 8 rows: 2048 bytes
  const int y = c.Tensor("y", {S, 64});
  c.Op("embedding", ir::OpType::Embedding, {ids, t}, {y});
  c.g.outputs = {y};
  c.tokens = {3};
  ExpectRefused(c, 1024, {"8 rows of table 'table' (2048 bytes) exceed maxStorageBufferRange 1024"});
}

// ---- linear ------------------------------------------------------------------------------------

enum class X { F32, F32Float, F32Q8ta, F32Dq8ca, I8Q8ta };
const char* Name(X x) {
  switch (x) {
    case X::F32: return "f32";
    case X::F32Float: return "f32, input_quant float";
    case X::F32Q8ta: return "f32, input_quant q8ta";
    case X::F32Dq8ca: return "f32, input_quant dq8ca";
    case X::I8Q8ta: return "i8 q8ta";
  }
  return "?";
}

// [m, k] x [n, k]^T (+ bias): n = 301 channels, not a multiple of 4 or of the parts' 64.
int BuildLinear(Case& c, X x, ir::Scheme w, bool out_q8, bool bias, int64_t k) {
  const int64_t n = 301;
  const int xt = x == X::I8Q8ta ? c.Input("x", {S, k}, ir::DType::I8, Q8(ir::Scheme::Q8TA, 0.03f, 2)) : c.Input("x", {S, k});
  std::vector<int> in{xt, c.Weight("w", {n, k}, w, w == ir::Scheme::Q8GSW || w == ir::Scheme::Q4GSW ? 32 : 8)};
  if (bias) in.push_back(c.Floats("b", {n}, 0.3f));
  const int y = c.Tensor("y", {S, n}, out_q8 ? ir::DType::I8 : ir::DType::F32,
                         out_q8 ? std::optional<ir::Quant>(Q8(ir::Scheme::Q8TO, 0.02f, 3)) : std::nullopt);
  ir::Op& op = c.Op("fc", ir::OpType::Linear, in, {y});
  if (x == X::F32Float) op.linear.input_quant.scheme = ir::Scheme::Float;
  if (x == X::F32Q8ta) op.linear.input_quant = Q8(ir::Scheme::Q8TA, 0.03f, -2);
  if (x == X::F32Dq8ca) op.linear.input_quant = Dq8ca();
  if (out_q8) op.linear.output_quant = Q8(ir::Scheme::Q8TO, 0.02f, 3);
  c.g.outputs = {y};
  return in[1];
}

TEST(WideConstants, LinearSplitByOutputChannels) {
  int cases = 0;
  for (X x : {X::F32, X::F32Float, X::F32Q8ta, X::F32Dq8ca, X::I8Q8ta})
    for (ir::Scheme w : {ir::Scheme::Q8CSW, ir::Scheme::Q8GSW, ir::Scheme::Q4GSW, ir::Scheme::Q4GAW, ir::Scheme::Q4GMW})
      for (int64_t m : {1, 3, 17})
        for (bool int_dot : {false, true}) {
          const bool quantized = x != X::F32 && x != X::F32Float;
          if (int_dot && !quantized) continue;
          const bool out_q8 = m == 3 && x != X::F32Float, bias = m != 17 || w == ir::Scheme::Q8CSW;
          // K: the weights' bytes above the activations' at M = 17 (520: not a multiple of the tiles' K).
          const int64_t k = w == ir::Scheme::Q8CSW ? 520 : 512;
          SCOPED_TRACE(std::string(Name(x)) + " x " + ir::SchemeName(w) + (out_q8 ? " -> q8to" : " -> f32") +
                       (bias ? ", bias" : "") + " M=" + std::to_string(m) + " K=" + std::to_string(k) +
                       (int_dot ? ", int dot forced" : ""));
          Case c;
          c.tokens = {m};
          c.seed = uint32_t(int(x) * 100 + int(w) * 10 + m);
          const int wt = BuildLinear(c, x, w, out_q8, bias, k);
          const ir::Tensor& wten = c.g.tensors[size_t(wt)];
          // 128 channels fit a binding, 192 do not: parts of 128, 128 and 45 channels.
          const uint64_t range = linear::PackedLinearBytes(w, 128, k, wten.quant->group_size);
          auto bundle = CompileForRange(c, range, int_dot);
          ASSERT_TRUE(bundle.ok()) << bundle.error().message;
          const Shape s = BundleShape(*bundle, "fc");
          EXPECT_EQ(s.parts, 3);
          EXPECT_LE(s.max_weight_binding, range);
          EXPECT_LE(s.required_range, range);
          combos::RunAndCheck(c, *bundle, {});
          gpu_test::ExpectNoValidationMessages("linear in parts");
          ++cases;
        }
  EXPECT_EQ(cases, 5 * 5 * 3 + 3 * 5 * 3);
}

TEST(WideConstants, SplitKeepsEveryChannelAndTheSourceOps) {
  Case c;
  c.tokens = {3};
  const int wt = BuildLinear(c, X::F32Dq8ca, ir::Scheme::Q4GSW, false, true, 96);
  const ir::Tensor w = c.g.tensors[size_t(wt)];
  const uint64_t whole = linear::PackedLinearBytes(ir::Scheme::Q4GSW, 301, 96, 32);
  // 192 channels fit a binding, 256 do not: two parts, of 192 and 109 channels.
  const uint64_t range = linear::PackedLinearBytes(ir::Scheme::Q4GSW, 192, 96, 32);
  ir::Graph g = c.g;
  EXPECT_TRUE(SplitWideLinears(&g, whole).empty()) << "fits: nothing split";
  EXPECT_EQ(g.ops.size(), 1u);
  const std::vector<int32_t> source = SplitWideLinears(&g, range);
  ASSERT_EQ(g.ops.size(), 3u) << "two parts and the concat";
  EXPECT_EQ(source, (std::vector<int32_t>{-1, -1, 0}));
  int64_t next = 0;
  for (size_t p = 0; p < 2; ++p) {
    const ir::Op& op = g.ops[p];
    EXPECT_EQ(op.name, "fc/" + std::to_string(p));
    const ir::Tensor& wp = g.tensors[size_t(op.inputs[1])];
    const int64_t np = wp.shape[0];
    EXPECT_LE(linear::PackedLinearBytes(ir::Scheme::Q4GSW, np, 96, 32), range);
    EXPECT_EQ(np, p == 0 ? 192 : 109);
    EXPECT_EQ(wp.data->data(), w.data->data() + next * 96 / 2) << "a view of the source's rows";
    EXPECT_EQ(wp.quant->scales.size(), size_t(np * 3));
    EXPECT_EQ(wp.quant->scales.front(), w.quant->scales[size_t(next * 3)]);
    EXPECT_EQ(g.tensors[size_t(op.inputs[2])].shape, std::vector<int64_t>{np});
    EXPECT_EQ(g.tensors[size_t(op.outputs[0])].shape, (std::vector<int64_t>{S, np}));
    next += np;
  }
  EXPECT_EQ(next, 301);
  EXPECT_EQ(g.ops[2].type, ir::OpType::Concat);
  EXPECT_EQ(g.ops[2].name, "fc");
  EXPECT_EQ(g.ops[2].outputs, c.g.ops[0].outputs) << "the concat writes the source's output";
}

TEST(WideConstants, SplitPartNamesStayUniqueWhereTheGraphHasThemAlready) {
  Case c;
  c.tokens = {3};
  const int wt = BuildLinear(c, X::F32Dq8ca, ir::Scheme::Q4GSW, false, true, 96);
  const std::string wname = c.g.tensors[size_t(wt)].name;
  // The bias takes the name the first part's output would, and an op after it the first part's.
  const int y = c.g.ops[0].outputs[0];
  const std::string yname = c.g.tensors[size_t(y)].name;
  c.g.tensors[size_t(c.g.ops[0].inputs[2])].name = yname + "/0";
  const int z = c.Tensor("z", {S, 301});
  c.Op("fc/0", ir::OpType::Silu, {y}, {z});
  c.g.outputs.push_back(z);
  const uint64_t range = linear::PackedLinearBytes(ir::Scheme::Q4GSW, 192, 96, 32);
  ir::Graph g = c.g;
  ASSERT_FALSE(SplitWideLinears(&g, range).empty());
  std::set<std::string> names, op_names;
  for (const ir::Tensor& t : g.tensors) EXPECT_TRUE(names.insert(t.name).second) << "tensor name twice: " << t.name;
  for (const ir::Op& op : g.ops) EXPECT_TRUE(op_names.insert(op.name).second) << "op name twice: " << op.name;
  EXPECT_EQ(g.tensors[size_t(g.ops[0].outputs[0])].name, yname + "/0'");
  EXPECT_EQ(g.ops[0].name, "fc/0'");
  EXPECT_EQ(g.tensors[size_t(g.ops[1].inputs[1])].name, wname + "/1");
  EXPECT_EQ(g.ops[1].name, "fc/1");
  // It compiles (the split graph verifies) and computes the linear and the silu after it.
  auto bundle = CompileForRange(c, range);
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  EXPECT_EQ(BundleShape(*bundle, "fc").parts, 3);  // fc/0', fc/1 and the silu fc/0
  combos::RunAndCheck(c, *bundle, {});
  gpu_test::ExpectNoValidationMessages("split with names taken");
}

TEST(WideConstants, LinearRefusedWhere64ChannelsExceedTheRange) {
  Case c;
  c.tokens = {3};
  BuildLinear(c, X::F32, ir::Scheme::Q8CSW, false, true, 200);
  const uint64_t range = linear::PackedLinearBytes(ir::Scheme::Q8CSW, 64, 200, 0) - 16;
  ExpectRefused(c, range,
                {"op 0 ('fc'): packed constants (" +
                 std::to_string(linear::PackedLinearBytes(ir::Scheme::Q8CSW, 301, 200, 0)) +
                 " bytes) exceed maxStorageBufferRange " + std::to_string(range)});
}

TEST(WideConstants, ActivationWiderThanABindingRefusedWithItsName) {
  Case c;
  c.tokens = {64};
  BuildLinear(c, X::F32, ir::Scheme::Q8CSW, false, true, 200);  // y: 64 x 301 f32, 77056 bytes
  ExpectRefused(c, 65536,
                {"tokens=64: layer 'fc' binds 'y' (77056 bytes), more than one binding may hold", "fewer tokens (--tokens)"});
}

// ---- the runtime's weight buffers ------------------------------------------------------------

// A model whose weights are larger than one buffer may be (max_weight_buffer_bytes standing for a
// device's maxMemoryAllocationSize): held in several buffers of whole bindings, through mapped
// memory and through the staging copy, the same results; a bound range larger than that refused.
TEST(WideConstants, WeightsInSeveralBuffers) {
  Case c;
  c.tokens = {3};
  const int ids = c.Input("ids", {S}, ir::DType::I32, {}, -2, 1003);
  const int table = c.Weight("table", {1001, 64}, ir::Scheme::Q8CSW);
  const int e = c.Tensor("e", {S, 64});
  c.Op("embedding", ir::OpType::Embedding, {ids, table}, {e});
  const int w = c.Weight("w", {301, 64}, ir::Scheme::Q4GSW, 32);
  const int y = c.Tensor("y", {S, 301});
  c.Op("fc", ir::OpType::Linear, {e, w, c.Floats("b", {301}, 0.3f)}, {y}).linear.input_quant = Dq8ca();
  c.g.outputs = {y};
  const uint64_t range = 16384;
  auto bundle = CompileForRange(c, range);
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  const auto* fbb = fb::bundle::GetBundle(bundle->data() + 4);
  const uint64_t segment = fbb->weight_segment_size();
  ASSERT_GT(segment, 4 * range) << "several buffers of at most " << range << " bytes";
  for (bool staging : {false, true}) {
    SCOPED_TRACE(staging ? "staging" : "mapped");
    combos::RunCheck rc;
    rc.max_weight_buffer_bytes = range;
    rc.force_staging = staging;
    combos::RunAndCheck(c, *bundle, rc);
    gpu_test::ExpectNoValidationMessages("weights in several buffers");
  }
  const uint64_t largest = BundleShape(*bundle, "").max_weight_binding;
  vkqc_model_options mo;
  vkqc_model_options_init(&mo);
  mo.max_weight_buffer_bytes = largest - 256;
  vkqc_model m = nullptr;
  EXPECT_EQ(vkqc_model_load(gpu_test::Context(), bundle->data(), bundle->size(), &mo, &m), VKQC_ERROR_UNSUPPORTED_DEVICE);
  EXPECT_NE(std::string(vkqc_last_error()).find("cannot hold this bundle's weights: weights ["), std::string::npos)
      << vkqc_last_error();
  EXPECT_NE(std::string(vkqc_last_error()).find("more than one buffer may hold on this device (" +
                                                std::to_string(largest - 256) + " bytes"),
            std::string::npos)
      << vkqc_last_error();
  gpu_test::ExpectNoValidationMessages("weights refused");
}

}  // namespace
}  // namespace vkqc
