// Variant names and dispatch parameters of the linear family.
#include <algorithm>
#include <cstring>

#include "compiler/kernels/linear/linear.h"

namespace vkqc::linear {

const char* AlgoName(Algo a) { return a == Algo::Gemm ? "gemm" : "gemv"; }
const char* AccumName(Accum a) { return a == Accum::IntDot ? "dot" : "dequant"; }

std::string LinearChoice::VariantName(ir::Scheme act) const {
  std::string s = "linear_";
  if (act == ir::Scheme::Q8TA) s += "q8ta_";
  s += "q8csw_";
  s += AccumName(accum);
  s += "_";
  s += AlgoName(algo);
  return s;
}

uint32_t LinearChoice::SharedMemoryBytes() const {
  if (algo == Algo::Gemm) {
    const uint32_t sbk = bk4 + 1;
    const uint32_t a_elem = accum == Accum::IntDot ? 4 : 16;
    return ty * rm * sbk * a_elem + tx * rn * sbk * 4;
  }
  const uint32_t slots = subgroup_size ? threads / subgroup_size : threads;
  return slots * nr * 4;
}

void SplitGroups(uint64_t groups, uint32_t max_x, uint32_t out[2]) {
  if (groups == 0) groups = 1;
  out[0] = uint32_t(std::min<uint64_t>(groups, max_x));
  out[1] = uint32_t((groups + out[0] - 1) / out[0]);
}

namespace {
template <typename T>
std::vector<uint8_t> Bytes(const T& v) {
  std::vector<uint8_t> b(sizeof(T));
  std::memcpy(b.data(), &v, sizeof(T));
  return b;
}
uint32_t Ceil(int64_t a, int64_t b) { return uint32_t((a + b - 1) / b); }
}  // namespace

DispatchParams QuantizeDispatch(int64_t m, int64_t k, float scale, int32_t zero_point,
                                const TargetProfile& p) {
  DispatchParams d;
  d.shader = {"quantize_q8ta.comp", {}};
  const uint32_t local = std::min<uint32_t>(128, p.max_compute_work_group_invocations);
  const uint32_t k4p = PackedK4(k);
  d.spec = {{0, local}, {1, uint32_t(m)}, {2, uint32_t(k)}, {3, k4p}};
  d.local_size[0] = local;
  d.local_size[1] = d.local_size[2] = 1;
  SplitGroups(Ceil(m * k4p, local), p.max_compute_work_group_count[0], d.group_count);
  d.group_count[2] = 1;
  d.push = Bytes(QuantizePush{1.0f / scale, zero_point});
  return d;
}

DispatchParams LinearDispatch(const LinearShape& s, const LinearChoice& c, float act_scale,
                              int32_t act_zero_point, const TargetProfile& p) {
  DispatchParams d;
  const uint32_t k4p = PackedK4(s.k);
  const uint32_t flags = (s.relu ? kFlagRelu : 0) | (s.has_bias ? kFlagBias : 0);
  d.push = Bytes(LinearPush{act_scale, act_zero_point, flags, 0.0f});
  d.shared_memory_bytes = c.SharedMemoryBytes();
  if (c.accum == Accum::IntDot) d.shader.defines.push_back("VKQC_INT_DOT");
  if (c.algo == Algo::Gemm) {
    d.shader.source = "linear_gemm.comp";
    d.spec = {{0, c.tx}, {1, c.ty}, {2, uint32_t(s.m)}, {3, uint32_t(s.n)}, {4, uint32_t(s.k)},
              {5, k4p}, {6, c.rm}, {7, c.rn}, {8, c.bk4}};
    d.local_size[0] = c.tx;
    d.local_size[1] = c.ty;
    d.local_size[2] = 1;
    d.group_count[0] = Ceil(s.n, c.tx * c.rn);
    d.group_count[1] = Ceil(s.m, c.ty * c.rm);
    d.group_count[2] = 1;
  } else {
    d.shader.source = "linear_gemv.comp";
    if (c.subgroup_size) d.shader.defines.push_back("VKQC_SUBGROUP");
    d.spec = {{0, c.threads}, {1, uint32_t(s.m)}, {2, uint32_t(s.n)}, {3, uint32_t(s.k)},
              {4, k4p}, {5, c.nr}, {6, c.mb}, {7, c.subgroup_size ? c.subgroup_size : 32u}};
    d.local_size[0] = c.threads;
    d.local_size[1] = d.local_size[2] = 1;
    SplitGroups(Ceil(s.n, c.nr), p.max_compute_work_group_count[0], d.group_count);
    d.group_count[2] = Ceil(s.m, c.mb);
    d.required_subgroup_size = c.subgroup_size;
  }
  return d;
}

}  // namespace vkqc::linear
