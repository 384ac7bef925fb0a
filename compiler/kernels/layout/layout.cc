#include "compiler/kernels/layout/layout.h"

#include <algorithm>
#include <numeric>

#include "compiler/kernels/lowering.h"

namespace vkqc::layout {
namespace {

// transpose.comp's specialization constants.
enum Spec : uint32_t { kCount = 1, kDim0 = 2, kStride0 = 8, kK4p = 14, kKx = 15, kKx4p = 16 };

// The gather over output dims `out` (outermost first, at most kMaxRank) reading source element
// (or byte) sum_i idx_i * stride[i]; `count` invocations.
linear::DispatchParams Gather(std::vector<std::string> defines, const std::vector<int64_t>& out,
                              const std::vector<int64_t>& stride, uint64_t count, const TargetProfile& p) {
  linear::DispatchParams d = kernels::FlatDispatch("transpose.comp", std::move(defines), count, 128, p);
  d.spec.push_back({kCount, uint32_t(count)});
  const size_t pad = size_t(kMaxRank) - out.size();
  for (size_t i = 0; i < size_t(kMaxRank); ++i) {
    const bool real = i >= pad;
    d.spec.push_back({kDim0 + uint32_t(i), real ? uint32_t(out[i - pad]) : 1u});
    d.spec.push_back({kStride0 + uint32_t(i), real ? uint32_t(stride[i - pad]) : 0u});
  }
  return d;
}

int64_t Product(const std::vector<int64_t>& v, size_t from = 0, size_t to = SIZE_MAX) {
  const size_t end = std::min(to, v.size());
  int64_t n = 1;
  for (auto it = v.begin() + int64_t(std::min(from, end)); it != v.begin() + int64_t(end); ++it) n *= *it;
  return n;
}

}  // namespace

bool Canonical::Identity() const {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != int(i)) return false;
  return true;
}

bool Canonical::SwapLastTwo() const {
  return perm == std::vector<int>{1, 0} || perm == std::vector<int>{0, 2, 1};
}

Canonical Canonicalize(const std::vector<int64_t>& shape, const std::vector<int32_t>& perm) {
  // Drop the dimensions of size 1, renumbering the others.
  std::vector<int> index(shape.size(), -1);
  std::vector<int64_t> dims;
  for (size_t a = 0; a < shape.size(); ++a)
    if (shape[a] != 1) {
      index[a] = int(dims.size());
      dims.push_back(shape[a]);
    }
  std::vector<int> p;
  for (int32_t a : perm)
    if (shape[size_t(a)] != 1) p.push_back(index[size_t(a)]);
  // Runs of consecutive input axes, in output order.
  std::vector<std::pair<int, int>> runs;
  for (size_t i = 0; i < p.size(); ++i) {
    if (i > 0 && p[i] == runs.back().second + 1) runs.back().second = p[i];
    else runs.push_back({p[i], p[i]});
  }
  std::vector<int> order(runs.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return runs[size_t(a)].first < runs[size_t(b)].first; });
  std::vector<int> rank(runs.size());
  Canonical c;
  for (size_t j = 0; j < order.size(); ++j) {
    const auto [first, last] = runs[size_t(order[j])];
    rank[size_t(order[j])] = int(j);
    c.dims.push_back(Product(dims, size_t(first), size_t(last) + 1));
  }
  for (size_t i = 0; i < runs.size(); ++i) c.perm.push_back(rank[i]);
  if (c.dims.empty()) {
    c.dims = {1};
    c.perm = {0};
  }
  return c;
}

bool SameDeviceBytes(const ir::Tensor& x, const ir::Tensor& y) {
  if (x.dtype != ir::DType::I8) return true;
  const int64_t kx = x.shape.back(), ky = y.shape.back();
  if (kx == ky) return true;  // the same rows (a symbolic last dimension only when both are)
  auto dense = [](int64_t k) { return k != ir::kSymbolicDim && int64_t(linear::PackedK4(k)) * 4 == k; };
  return dense(kx) && dense(ky);
}

bool IsView(const ir::Graph& g, const ir::Op& op) {
  const ir::Tensor& x = g.tensors[size_t(op.inputs[0])];
  const ir::Tensor& y = g.tensors[size_t(op.outputs[0])];
  if (op.type == ir::OpType::Transpose) {
    std::vector<int64_t> shape = x.shape;
    for (int64_t& d : shape)
      if (d == ir::kSymbolicDim) d = 2;  // any size > 1: the answer then holds for every token count
    if (!Canonicalize(shape, op.transpose.perm).Identity()) return false;
  } else if (op.type != ir::OpType::Reshape) {
    return false;
  }
  return SameDeviceBytes(x, y);
}

linear::DispatchParams TransposeDispatch(const std::vector<int64_t>& x_shape, const std::vector<int32_t>& perm,
                                         bool int8, const TargetProfile& p) {
  if (int8) {
    // Byte strides of the packed source: rows of PackedK4(last) words.
    const size_t r = x_shape.size();
    std::vector<int64_t> xs(r, 1);
    for (size_t j = r - 1; j-- > 0;)
      xs[j] = j + 2 == r ? int64_t(linear::PackedK4(x_shape[r - 1])) * 4 : xs[j + 1] * x_shape[j + 1];
    std::vector<int64_t> out, stride;
    for (int32_t a : perm) {
      out.push_back(x_shape[size_t(a)]);
      stride.push_back(xs[size_t(a)]);
    }
    const uint32_t k4p = linear::PackedK4(out.back());
    linear::DispatchParams d =
        Gather({"VKQC_I8"}, out, stride, uint64_t(Product(out, 0, out.size() - 1)) * k4p, p);
    d.spec.push_back({kK4p, k4p});
    return d;
  }
  const Canonical c = Canonicalize(x_shape, perm);
  const size_t r = c.dims.size();
  if (c.SwapLastTwo() && c.dims[r - 2] >= kTileMin && c.dims[r - 1] >= kTileMin) {
    linear::DispatchParams d;
    d.shader = {"transpose_tile.comp", {}};
    const uint32_t rows = std::max<uint32_t>(1, std::min<uint32_t>({8, p.max_compute_work_group_invocations / 32,
                                                                     p.max_compute_work_group_size[1]}));
    d.local_size[0] = 32;
    d.local_size[1] = rows;
    d.local_size[2] = 1;
    const int64_t b = r == 3 ? c.dims[0] : 1, rr = c.dims[r - 2], cc = c.dims[r - 1];
    d.spec = {{1, rows}, {2, uint32_t(b)}, {3, uint32_t(rr)}, {4, uint32_t(cc)}};
    d.shared_memory_bytes = 32 * 33 * 4;
    linear::SplitGroups(uint64_t(b) * uint64_t((rr + 31) / 32) * uint64_t((cc + 31) / 32),
                        p.max_compute_work_group_count[0], d.group_count);
    d.group_count[2] = 1;
    return d;
  }
  std::vector<int64_t> xs(r, 1);
  for (size_t j = r - 1; j-- > 0;) xs[j] = xs[j + 1] * c.dims[j + 1];
  std::vector<int64_t> out, stride;
  for (int a : c.perm) {
    out.push_back(c.dims[size_t(a)]);
    stride.push_back(xs[size_t(a)]);
  }
  return Gather({}, out, stride, uint64_t(Product(out)), p);
}

linear::DispatchParams CopyF32Dispatch(uint64_t count, const TargetProfile& p) {
  return Gather({}, {int64_t(count)}, {1}, count, p);
}

linear::DispatchParams ReshapeI8Dispatch(int64_t total, int64_t kx, int64_t ky, const TargetProfile& p) {
  const uint32_t k4p = linear::PackedK4(ky);
  linear::DispatchParams d = Gather({"VKQC_I8", "VKQC_RESHAPE"}, {ky}, {1}, uint64_t(total / ky) * k4p, p);
  d.spec.push_back({kK4p, k4p});
  d.spec.push_back({kKx, uint32_t(kx)});
  d.spec.push_back({kKx4p, linear::PackedK4(kx)});
  return d;
}

std::string PermString(const std::vector<int32_t>& perm) {
  std::string s = "[";
  for (size_t i = 0; i < perm.size(); ++i) s += (i ? ", " : "") + std::to_string(perm[i]);
  return s + "]";
}

std::string DimsString(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

}  // namespace vkqc::layout
