// Pure planning of the layout ops (kernels/layout/layout.h) and the view pass
// (passes/fold_views.h), without a GPU: canonical transposes, which reshapes keep the device
// bytes, the kernel each transpose gets, and which ops the view pass folds and how aliases chain.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "compiler/kernels/layout/layout.h"
#include "compiler/kernels/lowering.h"
#include "compiler/passes/fold_quant.h"
#include "compiler/passes/fold_views.h"
#include "compiler/passes/pipeline.h"
#include "compiler/graph/verify.h"
#include "compiler/profile/profile.h"

namespace vkqc {
namespace {

using layout::Canonical;
using layout::Canonicalize;

ir::Tensor T(std::vector<int64_t> shape, ir::DType dt = ir::DType::F32) {
  ir::Tensor t;
  t.name = "t";
  t.shape = std::move(shape);
  t.dtype = dt;
  if (dt == ir::DType::I8) t.quant = ir::Quant{ir::Scheme::Q8TA, {0.1f}, {0}, 0, 0};
  return t;
}

uint32_t Spec(const linear::DispatchParams& d, uint32_t id) {
  for (const auto& s : d.spec)
    if (s.id == id) return s.value;
  ADD_FAILURE() << "no spec constant " << id;
  return 0;
}

TEST(LayoutPlan, CanonicalDropsOnesAndMergesRuns) {
  // NCHW -> NHWC: [N, C, H*W] -> [N, H*W, C].
  Canonical c = Canonicalize({2, 3, 5, 7}, {0, 2, 3, 1});
  EXPECT_EQ(c.dims, (std::vector<int64_t>{2, 3, 35}));
  EXPECT_EQ(c.perm, (std::vector<int>{0, 2, 1}));
  EXPECT_TRUE(c.SwapLastTwo());
  // NHWC -> NCHW with N = 1: [H*W, C] -> [C, H*W].
  c = Canonicalize({1, 5, 7, 3}, {0, 3, 1, 2});
  EXPECT_EQ(c.dims, (std::vector<int64_t>{35, 3}));
  EXPECT_EQ(c.perm, (std::vector<int>{1, 0}));
  EXPECT_TRUE(c.SwapLastTwo());
  // Only ones move: the identity.
  c = Canonicalize({1, 5, 1, 3}, {2, 1, 0, 3});
  EXPECT_TRUE(c.Identity());
  EXPECT_EQ(c.dims, (std::vector<int64_t>{15}));
  c = Canonicalize({1, 1}, {1, 0});
  EXPECT_EQ(c.dims, (std::vector<int64_t>{1}));
  EXPECT_TRUE(c.Identity());
  // A real 3-way permutation stays 3-way.
  c = Canonicalize({2, 3, 5}, {2, 0, 1});
  EXPECT_EQ(c.dims, (std::vector<int64_t>{6, 5}));  // [2, 3] stays together
  EXPECT_EQ(c.perm, (std::vector<int>{1, 0}));
  c = Canonicalize({2, 3, 5}, {1, 2, 0});
  EXPECT_EQ(c.dims, (std::vector<int64_t>{2, 15}));
  c = Canonicalize({2, 3, 5, 7}, {3, 1, 0, 2});
  EXPECT_EQ(c.dims, (std::vector<int64_t>{2, 3, 5, 7}));
  EXPECT_EQ(c.perm, (std::vector<int>{3, 1, 0, 2}));
  EXPECT_FALSE(c.SwapLastTwo());
}

TEST(LayoutPlan, CanonicalPreservesTheElementMapping) {
  // Every perm of a 4-d shape with ones: the canonical form gathers the same source elements.
  const std::vector<int64_t> shape{3, 1, 4, 2};
  std::vector<int32_t> perm{0, 1, 2, 3};
  do {
    auto source_of = [](const std::vector<int64_t>& dims, const std::vector<int>& p) {
      std::vector<int64_t> stride(dims.size(), 1), out;
      for (size_t k = dims.size(); k-- > 1;) stride[k - 1] = stride[k] * dims[k];
      for (int a : p) out.push_back(dims[size_t(a)]);
      std::vector<int64_t> src;
      int64_t total = 1;
      for (int64_t d : out) total *= d;
      for (int64_t e = 0; e < total; ++e) {
        int64_t r = e, s = 0;
        for (size_t k = out.size(); k-- > 0;) {
          s += (r % out[k]) * stride[size_t(p[k])];
          r /= out[k];
        }
        src.push_back(s);
      }
      return src;
    };
    const Canonical c = Canonicalize(shape, perm);
    EXPECT_EQ(source_of(shape, std::vector<int>(perm.begin(), perm.end())), source_of(c.dims, c.perm))
        << layout::PermString(perm);
  } while (std::next_permutation(perm.begin(), perm.end()));
}

TEST(LayoutPlan, SameDeviceBytes) {
  EXPECT_TRUE(layout::SameDeviceBytes(T({2, 3, 5}), T({5, 6})));  // f32: always
  EXPECT_TRUE(layout::SameDeviceBytes(T({2, 3, 5}, ir::DType::I8), T({6, 5}, ir::DType::I8)));  // last dim kept
  EXPECT_TRUE(layout::SameDeviceBytes(T({2, 64}, ir::DType::I8), T({4, 32}, ir::DType::I8)));  // whole rows
  EXPECT_FALSE(layout::SameDeviceBytes(T({2, 8}, ir::DType::I8), T({4, 4}, ir::DType::I8)));   // padded rows
  EXPECT_FALSE(layout::SameDeviceBytes(T({3, 5}, ir::DType::I8), T({15}, ir::DType::I8)));
  EXPECT_TRUE(layout::SameDeviceBytes(T({ir::kSymbolicDim, 5}, ir::DType::I8), T({ir::kSymbolicDim, 5}, ir::DType::I8)));
  EXPECT_FALSE(layout::SameDeviceBytes(T({ir::kSymbolicDim}, ir::DType::I8), T({ir::kSymbolicDim, 1}, ir::DType::I8)));
}

TEST(LayoutPlan, KernelChoice) {
  auto p = LoadProfile("android-baseline-2022");
  ASSERT_TRUE(p.ok()) << p.error().message;
  // NCHW -> NHWC with many channels: tiled, within the target's 128 invocations.
  linear::DispatchParams d = layout::TransposeDispatch({1, 32, 20, 20}, {0, 2, 3, 1}, false, *p);
  EXPECT_EQ(d.shader.source, "transpose_tile.comp");
  EXPECT_LE(d.local_size[0] * d.local_size[1], p->max_compute_work_group_invocations);
  EXPECT_EQ(Spec(d, 3), 32u);   // R = C
  EXPECT_EQ(Spec(d, 4), 400u);  // C = H*W
  EXPECT_EQ(uint64_t(d.group_count[0]) * d.group_count[1], 1u * 13u);
  // An RGB image (3 channels): the gather.
  d = layout::TransposeDispatch({1, 3, 20, 20}, {0, 2, 3, 1}, false, *p);
  EXPECT_EQ(d.shader.source, "transpose.comp");
  EXPECT_EQ(Spec(d, 1), 1200u);
  // int8: always the gather, one invocation per packed word: y [2, 20, 20, 3] is 800 rows of PackedK4(3).
  d = layout::TransposeDispatch({2, 3, 20, 20}, {0, 2, 3, 1}, true, *p);
  EXPECT_EQ(d.shader.source, "transpose.comp");
  EXPECT_NE(std::find(d.shader.defines.begin(), d.shader.defines.end(), "VKQC_I8"), d.shader.defines.end());
  EXPECT_EQ(Spec(d, 1), 2u * 20u * 20u * linear::PackedK4(3));
  EXPECT_EQ(Spec(d, 7), 3u);                           // D5: the output's last dim
  EXPECT_EQ(Spec(d, 13), linear::PackedK4(20) * 4 * 20);  // S5: x's dim 1 (C), in bytes
  EXPECT_EQ(Spec(d, 12), 1u);                          // S4: x's last dim (W)
  // Reshape copy of int8 rows: 3 -> 5 values per row.
  d = layout::ReshapeI8Dispatch(15, 3, 5, *p);
  EXPECT_EQ(Spec(d, 1), 3u * linear::PackedK4(5));
  EXPECT_EQ(Spec(d, 15), 3u);
}

// A graph x -> ops -> outputs, for the view pass.
struct Chain {
  ir::Graph g;
  int Tensor(const std::string& name, std::vector<int64_t> shape, ir::DType dt = ir::DType::F32) {
    ir::Tensor t = T(std::move(shape), dt);
    t.name = name;
    g.tensors.push_back(t);
    return int(g.tensors.size() - 1);
  }
  void Op(ir::OpType type, int in, int out, std::vector<int32_t> perm = {}) {
    ir::Op op;
    op.name = "op" + std::to_string(g.ops.size());
    op.type = type;
    op.inputs = {in};
    op.outputs = {out};
    op.transpose.perm = std::move(perm);
    g.ops.push_back(op);
  }
  FoldPlan Plan() {
    FoldPlan plan = FoldQuantization(g);
    FoldViews(g, &plan);
    return plan;
  }
};

TEST(LayoutPlan, ViewsAreFoldedAndChainsResolved) {
  Chain c;
  const int x = c.Tensor("x", {2, 3, 5});
  const int a = c.Tensor("a", {6, 5});
  const int b = c.Tensor("b", {30});
  const int t = c.Tensor("t", {1, 30}), u = c.Tensor("u", {30, 1});
  const int y = c.Tensor("y", {30, 1});
  c.Op(ir::OpType::Reshape, x, a);
  c.Op(ir::OpType::Reshape, a, b);
  c.Op(ir::OpType::Reshape, b, t);
  c.Op(ir::OpType::Transpose, t, u, {1, 0});  // only a one moves
  c.Op(ir::OpType::Clip, u, y);
  c.g.inputs = {x};
  c.g.outputs = {y};
  const FoldPlan plan = c.Plan();
  for (size_t i = 0; i < 4; ++i) EXPECT_NE(plan.folded[i].find("a view"), std::string::npos) << i;
  EXPECT_TRUE(plan.folded[4].empty());
  for (int v : {a, b, t, u}) EXPECT_EQ(plan.alias[size_t(v)], x) << c.g.tensors[size_t(v)].name;
  EXPECT_EQ(plan.alias[size_t(y)], y);
}

TEST(LayoutPlan, GraphOutputsAndRepaddedRowsAreNotViews) {
  Chain c;
  const int x = c.Tensor("x", {4, 6});
  const int y = c.Tensor("y", {24});
  const int q = c.Tensor("q", {4, 6}, ir::DType::I8);
  const int r = c.Tensor("r", {6, 4}, ir::DType::I8);
  const int s = c.Tensor("s", {2, 3, 4}, ir::DType::I8);
  const int t = c.Tensor("t", {2, 4, 3}, ir::DType::I8);
  c.Op(ir::OpType::Reshape, x, y);             // y is a graph output: copy
  c.Op(ir::OpType::Reshape, q, r);             // int8 rows 6 -> 4: re-padded, copy
  c.Op(ir::OpType::Reshape, r, s);             // int8, last dim 4 kept: view
  c.Op(ir::OpType::Transpose, s, t, {0, 2, 1});  // a real transpose
  c.g.inputs = {x, q};
  c.g.outputs = {y, t};
  const FoldPlan plan = c.Plan();
  EXPECT_TRUE(plan.folded[0].empty());
  EXPECT_TRUE(plan.folded[1].empty());
  EXPECT_FALSE(plan.folded[2].empty());
  EXPECT_TRUE(plan.folded[3].empty());
  EXPECT_EQ(plan.alias[size_t(s)], r);
  EXPECT_EQ(plan.alias[size_t(y)], y);
}

// Random chains x -> op -> t -> op -> y of transposes and reshapes (valid or not: shapes,
// perms, dtypes and quants drawn at random, t sometimes a graph output too): the verifier and
// the compiler agree, nothing crashes, and every refusal is the user's error, never an internal one.
TEST(LayoutPlan, RandomChainsCompileOrAreRefused) {
  auto p = LoadProfile("lavapipe");
  ASSERT_TRUE(p.ok()) << p.error().message;
  std::mt19937 rng(20251124);
  auto pick = [&](int n) { return int(rng() % uint32_t(n)); };
  const int64_t sizes[] = {1, 2, 3, 5, 17, 32};
  int compiled = 0, refused = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const bool i8 = pick(2) == 1, symbolic = pick(4) == 0;
    const ir::Quant q{ir::Scheme::Q8TA, {0.1f}, {3}, 0, 0};
    ir::Graph g;
    g.symbolic_dim = "tokens";
    auto tensor = [&](const std::string& name, std::vector<int64_t> shape) {
      ir::Tensor t;
      t.name = name;
      t.shape = std::move(shape);
      t.dtype = i8 && pick(16) ? ir::DType::I8 : ir::DType::F32;
      if (t.dtype == ir::DType::I8 && pick(16)) t.quant = q;
      g.tensors.push_back(t);
      return int(g.tensors.size() - 1);
    };
    std::vector<int64_t> xs(size_t(1 + pick(pick(8) == 0 ? 7 : 4)));
    for (int64_t& d : xs) d = sizes[pick(6)];
    if (symbolic) xs[0] = ir::kSymbolicDim;
    int cur = tensor("x", xs);
    g.inputs = {cur};
    for (int k = 0; k < 2; ++k) {
      ir::Op op;
      op.name = "op" + std::to_string(k);
      op.inputs = {cur};
      const std::vector<int64_t>& in = g.tensors[size_t(cur)].shape;
      std::vector<int64_t> out;
      if (pick(2)) {
        op.type = ir::OpType::Transpose;
        for (size_t a = 0; a < in.size(); ++a) op.transpose.perm.push_back(int32_t(a));
        std::shuffle(op.transpose.perm.begin() + (symbolic && pick(8) ? 1 : 0), op.transpose.perm.end(), rng);
        if (pick(10) == 0) op.transpose.perm[0] = int32_t(pick(9)) - 1;  // maybe not a permutation
        for (int32_t a : op.transpose.perm) out.push_back(a >= 0 && size_t(a) < in.size() ? in[size_t(a)] : 2);
      } else {
        op.type = ir::OpType::Reshape;
        int64_t n = 1;  // per token when symbolic
        for (size_t a = symbolic ? 1 : 0; a < in.size(); ++a) n *= in[a];
        if (symbolic) out.push_back(ir::kSymbolicDim);
        for (int64_t f : {32, 17, 5, 3, 2})  // factor n into random pieces
          while (n % f == 0 && pick(2)) {
            out.push_back(f);
            n /= f;
          }
        out.push_back(n * (pick(12) == 0 ? 2 : 1));  // maybe the wrong count
      }
      cur = tensor("t" + std::to_string(k), out);
      op.outputs = {cur};
      g.ops.push_back(op);
    }
    g.outputs = {cur};
    if (pick(3) == 0) g.outputs.push_back(g.ops[0].outputs[0]);
    const Status verified = VerifyGraph(g, "fuzz");
    CompileOptions o;
    if (g.HasSymbolicDim()) o.tokens = {1, 3};
    auto bundle = CompileGraph(g, *p, o, 0);
    if (verified.ok()) {
      EXPECT_TRUE(bundle.ok()) << bundle.error().message;
      ++compiled;
    } else {
      ASSERT_FALSE(bundle.ok());
      EXPECT_EQ(bundle.error().kind, ErrorKind::User) << bundle.error().message;
      ++refused;
    }
  }
  EXPECT_GT(compiled, 50);
  EXPECT_GT(refused, 50);
}

}  // namespace
}  // namespace vkqc
