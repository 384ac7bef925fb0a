// Selection rules for the linear family (DESIGN 5). Pure function of (shape, profile, options).
#include <algorithm>
#include <sstream>

#include "compiler/kernels/linear/linear.h"

namespace vkqc::linear {
namespace {

// Largest K for which int32 accumulation of (xq - zp_x) * wq cannot overflow (DESIGN 4).
constexpr int64_t kMaxExactK = 65793;

uint32_t FloorPow2(uint32_t v) {
  uint32_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

Status ChooseAccum(const LinearShape& s, const TargetProfile& p, const SelectOptions& o,
                   LinearChoice& c) {
  const bool quantized = s.Quantized();
  if (o.force_accum && *o.force_accum == Accum::IntDot && !quantized) {
    c.accum = Accum::Dequant;
    c.reason = "float activations (weight-only): int-dot forcing does not apply, dequantize in the shader";
    return {};
  }
  if (o.force_accum) {
    if (*o.force_accum == Accum::IntDot) {
      if (!p.shader_integer_dot_product)
        return UserError("int-dot accumulation was forced, but target '" + p.name +
                         "' lacks the shaderIntegerDotProduct feature");
      if (s.k > kMaxExactK)
        return UserError("int-dot accumulation was forced, but K=" + std::to_string(s.k) +
                         " exceeds " + std::to_string(kMaxExactK) + " (int32 accumulation would overflow)");
    }
    c.accum = *o.force_accum;
    c.reason = std::string("accumulation forced to ") + AccumName(c.accum);
    return {};
  }
  const bool accel = p.shader_integer_dot_product && p.int_dot_4x8_packed_signed_accelerated;
  if (!quantized) {
    c.accum = Accum::Dequant;
    c.reason = "float activations (weight-only): dequantize weights in the shader, fp32 accumulation";
  } else if (!accel) {
    c.accum = Accum::Dequant;
    c.reason = std::string("integer dot product ") +
               (p.shader_integer_dot_product ? "is not accelerated" : "is not supported") + " on '" + p.name +
               "' (integerDotProduct4x8BitPackedSignedAccelerated=false): dequant fallback, " +
               (s.x_int8 ? "the int8 input is dequantized as it is read"
                         : "activation quantization skipped (weight-only function)");
  } else if (s.k > kMaxExactK) {
    c.accum = Accum::Dequant;
    c.reason = "K=" + std::to_string(s.k) + " exceeds the exact int32 range: dequant fallback";
  } else {
    c.accum = Accum::IntDot;
    c.reason = "int8 dot product is accelerated on '" + p.name + "': int32 accumulation" +
               (s.Int4() ? " per group, folded into fp32 at each group" : "");
  }
  return {};
}

}  // namespace

Result<LinearChoice> SelectLinear(const LinearShape& s, const TargetProfile& p,
                                  const SelectOptions& o) {
  LinearChoice c;
  c.int4 = s.Int4();
  VKQC_TRY(ChooseAccum(s, p, o, c));

  const uint32_t gemv_max = o.gemv_max_m ? o.gemv_max_m
                            : p.gemv_max_m ? p.gemv_max_m
                                           : kDefaultGemvMaxM;
  std::ostringstream why;
  if (o.force_algo) {
    c.algo = *o.force_algo;
    why << "; algorithm forced to " << AlgoName(c.algo);
  } else {
    c.algo = s.m <= int64_t(gemv_max) ? Algo::Gemv : Algo::Gemm;
    why << "; M=" << s.m << (c.algo == Algo::Gemv ? " <= " : " > ") << "GEMV threshold "
        << gemv_max << ": " << (c.algo == Algo::Gemv ? "cooperative GEMV" : "tiled GEMM");
  }

  const uint32_t inv = p.max_compute_work_group_invocations;
  const uint32_t shm = p.max_compute_shared_memory_size;
  if (c.algo == Algo::Gemm) {
    c.tx = std::min<uint32_t>(16, p.max_compute_work_group_size[0]);
    c.ty = std::min<uint32_t>({16u, std::max(1u, inv / c.tx), p.max_compute_work_group_size[1]});
    c.rm = 4;
    c.rn = 4;
    c.bk4 = kKWordAlign;
    // Few 64x64 tiles leave most of a large GPU idle while each workgroup walks all of K:
    // use 32x32 tiles (8x8 threads) so four times as many workgroups hide the latency.
    const int64_t tiles64 = ((s.m + 63) / 64) * ((s.n + 63) / 64);
    if (p.gemm_tile == 32 || p.gemm_tile == 64) {
      if (p.gemm_tile == 32) c.tx = c.ty = 8;
      why << " (" << p.gemm_tile << "x" << p.gemm_tile << " tiles: the profile's tuned gemm_tile)";
    } else if (tiles64 < 128 && c.tx * c.ty > 64) {
      c.tx = 8;
      c.ty = 8;
      why << " (32x32 tiles: only " << tiles64 << " 64x64 tiles)";
    }
    while (c.SharedMemoryBytes() > shm && c.ty > 1) c.ty /= 2;
  } else {
    const uint32_t k16 = (s.Int4() ? PackedK8(s.k) : PackedK4(s.k)) / 4;  // uvec4 units
    const uint32_t max_threads = FloorPow2(std::min(inv, p.max_compute_work_group_size[0]));
    if (p.gemv_threads) {
      c.threads = std::min(p.gemv_threads, max_threads);
    } else {
      c.threads = std::min(128u, max_threads);
      while (c.threads > 32 && c.threads / 2 >= k16) c.threads /= 2;
    }
    c.nr = s.n >= 16 || s.out_q8 ? 4 : (s.n >= 2 ? 2 : 1);  // int8 outputs: whole words
    if (p.gemv_channels) c.nr = std::max(p.gemv_channels, s.out_q8 ? 4u : 1u);
    c.unroll = p.gemv_unroll ? p.gemv_unroll : (k16 >= 2 * c.threads ? 2u : 1u);
    why << ", " << c.threads << " threads x " << c.nr << " channels, " << c.unroll << " unit(s) in flight"
        << (p.gemv_threads || p.gemv_channels || p.gemv_unroll ? " (tuned)" : "");
    c.mb = uint32_t(std::min<int64_t>(s.m, 8));
    const uint32_t sg = p.tuned_subgroup_size;
    if (p.subgroup_arithmetic_compute && p.subgroup_size_control &&
        p.required_subgroup_size_compute && sg != 0 && sg <= c.threads && c.threads % sg == 0 &&
        (p.min_subgroup_size == 0 || sg >= p.min_subgroup_size) &&
        (p.max_subgroup_size == 0 || sg <= p.max_subgroup_size)) {
      c.subgroup_size = sg;
      why << ", subgroupAdd reduction at pinned subgroup size " << sg;
    } else {
      why << ", shared-memory tree reduction";
    }
    while (c.SharedMemoryBytes() > shm && c.nr > (s.out_q8 ? 4u : 1u)) c.nr /= 2;
  }
  if (c.SharedMemoryBytes() > shm || c.Invocations() > inv)
    return InternalError("linear selection produced a workgroup that exceeds the limits of '" +
                         p.name + "'");
  c.reason += why.str();
  return c;
}

}  // namespace vkqc::linear
