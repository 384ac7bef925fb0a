// Variant names and dispatch parameters of the linear family.
#include <algorithm>
#include <cstring>

#include "compiler/kernels/linear/linear.h"

namespace vkqc::linear {

const char* AlgoName(Algo a) { return a == Algo::Gemm ? "gemm" : "gemv"; }
const char* AccumName(Accum a) {
  return a == Accum::IntDot ? "dot" : a == Accum::CoopMat ? "cm" : "dequant";
}

std::string LinearChoice::VariantName(const LinearShape& s) const {
  std::string v = "linear_";
  if (s.x_int8) v += s.act == ir::Scheme::DQ8CA ? "i8ca_" : "i8_";
  else if (s.act == ir::Scheme::Q8TA) v += "q8ta_";
  else if (s.act == ir::Scheme::DQ8CA) v += "dq8ca_";
  v += ir::SchemeName(s.weights);
  v += "_";
  if (s.out_q8) v += "q8to_";
  v += AccumName(accum);
  if (accum == Accum::CoopMat && !cm_int8) v += "f16";
  if (accum == Accum::CoopMat && !cm_khr) v += "nv";
  v += "_";
  v += AlgoName(algo);
  if (xq_prologue) v += xq_add ? "_rowq_addnorm" : xq_norm ? "_rowq_norm" : xq_silu ? "_rowq_silu" : "_rowq";
  if (out_pairs) v += "_swiglu";
  if (nt_base) v += nt_add ? "_addnorm_tail" : "_norm_tail";
  if (accum == Accum::CoopMat && cm_ksplit > 1) v += "_splitk";
  return v;
}

uint32_t LinearChoice::PrologueSharedBytes(int64_t k) const { return PackedK4(k) * 4 + threads * 8 + 12; }

uint32_t LinearChoice::SharedMemoryBytes() const {
  if (accum == Accum::CoopMat) {  // shaders/linear_coopmat.comp's shared arrays
    const uint32_t bm = CmBlockM(), bn = CmBlockN();
    // The operand rows and, after the K loop, the epilogue's per-subgroup tiles share one array.
    uint32_t b = std::max((bm + bn) * (cm_bkw / 4 + 1) * 16 * cm_stages, cm_wm * cm_wn * cm_m * cm_n * 4);
    if (cm_int8) b += bm * 4 + cm_nslot * bn * 8;
    return b;
  }
  if (algo == Algo::Gemm) {
    // sA: int-dot rows of bk4 / 4 + 1 uvec4 (16-byte loads of 4 K words), dequant rows of bk4 + 1 vec4.
    const uint32_t a_row = accum == Accum::IntDot ? (bk4 / 4 + 1) * 16 : (bk4 + 1) * 16;
    return ty * rm * a_row + bk4 * tx * rn * 4 + (int4 ? bk4 * tx * rn * 4 : 0) + (mins ? bk4 * tx * rn * 4 : 0);
  }
  // shaders/linear_gemv.comp: red (every row's partials at once: a word per subgroup with
  // subgroups, per invocation for the shared-memory tree) and outv.
  return (subgroup_size ? threads / subgroup_size : threads) * nr * mb * 4 + nr * mb * 4;
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
uint32_t FloorPow2(uint32_t v) {
  uint32_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}
// An elementwise pass over float rows [M,K] (spec constants: 0 workgroup size, 1 M, 2 K, 3 K4P):
// one invocation per output item, `items` in all, 128 per workgroup.
DispatchParams RowWordsDispatch(const char* shader, int64_t m, int64_t k, uint64_t items, const TargetProfile& p) {
  DispatchParams d;
  d.shader = {shader, {}};
  const uint32_t local = std::min<uint32_t>(128, p.max_compute_work_group_invocations);
  d.spec = {{0, local}, {1, uint32_t(m)}, {2, uint32_t(k)}, {3, PackedK4(k)}};
  d.local_size[0] = local;
  d.local_size[1] = d.local_size[2] = 1;
  SplitGroups(Ceil(int64_t(items), local), p.max_compute_work_group_count[0], d.group_count);
  d.group_count[2] = 1;
  return d;
}
// The linear shaders' push constants (LinearPush): per-tensor activation and output
// parameters, bias / relu / relu6 flags.
std::vector<uint8_t> PushBytes(const LinearShape& s, const LinearConsts& k) {
  const uint32_t flags = (s.relu ? kFlagRelu : 0) | (s.relu6 ? kFlagRelu6 : 0) | (s.has_bias ? kFlagBias : 0);
  return Bytes(LinearPush{k.act_scale, k.act_zero_point, flags, 1.0f / k.out_scale, k.out_zero_point, {0, 0, 0}});
}
}  // namespace

DispatchParams QuantizeDispatch(ir::Scheme act, int64_t m, int64_t k, float scale, int32_t zero_point,
                                const TargetProfile& p) {
  DispatchParams d;
  const uint32_t k4p = PackedK4(k);
  if (act == ir::Scheme::DQ8CA) {
    // One workgroup per row: a min/max reduction, then the row's words. Up to one thread per
    // word of real values (at most 1024): at decode sizes this dispatch is latency-bound, one
    // row per workgroup, so the row's loads are spread over as many threads as it has words and
    // each thread holds its RV words in registers (one read of the row, all loads in flight).
    const uint32_t kv = Ceil(k, 4);
    const uint32_t local = FloorPow2(std::min<uint32_t>({1024, std::max<uint32_t>(32, kv),
                                                         p.max_compute_work_group_invocations,
                                                         p.max_compute_work_group_size[0]}));
    std::vector<std::string> defs;
    if (k % 4 == 0) defs.push_back("VKQC_VEC4");
    if (p.subgroup_arithmetic_compute) defs.push_back("VKQC_SUBGROUP");
    d.shader = {"quantize_dq8ca.comp", defs};
    d.spec = {{0, local}, {1, uint32_t(m)}, {2, uint32_t(k)}, {3, k4p}, {4, Ceil(kv, local)}};
    d.local_size[0] = local;
    d.local_size[1] = d.local_size[2] = 1;
    SplitGroups(uint64_t(m), p.max_compute_work_group_count[0], d.group_count);
    d.group_count[2] = 1;
    d.shared_memory_bytes = local * 8 + 8;
    return d;
  }
  d = RowWordsDispatch("quantize_q8ta.comp", m, k, uint64_t(m) * k4p, p);
  d.push = Bytes(QuantizePush{1.0f / scale, zero_point});
  return d;
}

DispatchParams HalfDispatch(int64_t m, int64_t k, const TargetProfile& p) {
  return RowWordsDispatch("convert_f16.comp", m, k, uint64_t(m) * (PackedK4(k) / 2), p);
}

DispatchParams RepackDispatch(bool to_packed, int64_t m, int64_t k, const TargetProfile& p) {
  DispatchParams d;
  d.shader = {"repack_i8.comp", {}};
  if (to_packed) d.shader.defines.push_back("VKQC_TO_PACKED");
  const uint32_t local = std::min<uint32_t>(128, p.max_compute_work_group_invocations);
  const uint32_t k4p = PackedK4(k);
  d.spec = {{0, local}, {1, uint32_t(m)}, {2, uint32_t(k)}, {3, k4p}};
  d.local_size[0] = local;
  d.local_size[1] = d.local_size[2] = 1;
  const uint64_t words = to_packed ? uint64_t(m) * k4p : (uint64_t(m) * k + 3) / 4;
  SplitGroups(Ceil(int64_t(words), local), p.max_compute_work_group_count[0], d.group_count);
  d.group_count[2] = 1;
  return d;
}

DispatchParams LinearDispatch(const LinearShape& s, const LinearChoice& c, const PackedLinear& pk,
                              const LinearConsts& k, const TargetProfile& p) {
  DispatchParams d;
  d.push = PushBytes(s, k);
  d.shared_memory_bytes = c.SharedMemoryBytes();
  auto& defs = d.shader.defines;
  const bool cm = c.accum == Accum::CoopMat;
  if (c.accum == Accum::IntDot) defs.push_back("VKQC_INT_DOT");
  else if (cm && c.cm_int8) defs.push_back("VKQC_CM_INT");
  else if (s.x_int8) defs.push_back("VKQC_X_Q8");
  if (s.Int4()) defs.push_back("VKQC_W4");
  if (s.weights == ir::Scheme::Q8GSW) defs.push_back("VKQC_W8G");
  if (s.weights == ir::Scheme::Q4GAW) defs.push_back("VKQC_W4_ZP");
  if (s.weights == ir::Scheme::Q4GMW) defs.push_back("VKQC_W4_MIN");
  // Groups of one MulAdd's K: folded right after each MulAdd, no int32 accumulators kept.
  if (cm && c.cm_int8 && s.Grouped() && uint32_t(s.group_size) == c.cm_k) defs.push_back("VKQC_CM_G1");
  // Per-row activation parameters: computed for this layer (int path), or carried by a
  // per-token int8 input (either path).
  const bool int_path = c.accum == Accum::IntDot || (cm && c.cm_int8);
  if (c.xq_prologue) {
    defs.push_back("VKQC_XQ_PROLOGUE");
    if (c.xq_norm) defs.push_back("VKQC_XQ_NORM");
    if (c.xq_silu) defs.push_back("VKQC_XQ_SILU");
    if (c.xq_add) defs.push_back("VKQC_XQ_ADD");
    if (c.xq_add == 2) defs.push_back("VKQC_XQ_SUM");
    d.shared_memory_bytes += c.PrologueSharedBytes(s.k);
  } else if (s.act == ir::Scheme::DQ8CA && (int_path || s.x_int8)) {
    defs.push_back("VKQC_ACT_ROW");
  }
  const bool split = cm && c.cm_ksplit > 1;  // float partial outputs; the second dispatch finishes them
  if (s.out_q8 && !split) defs.push_back("VKQC_OUT_Q8");
  if (c.out_pairs) defs.push_back("VKQC_OUT_PAIRS");
  if (split) defs.push_back("VKQC_SPLITK");
  const uint32_t gs = s.Grouped() ? uint32_t(s.group_size) : 32u;
  d.spec = {{2, uint32_t(s.m)},     {3, uint32_t(s.n)},  {4, uint32_t(s.k)},  {5, PackedK4(s.k)},
            {6, pk.kw},             {7, gs},             {8, pk.scale_off},   {9, pk.zp_off},
            {10, pk.wsum_off},      {11, pk.bias_off},   {12, PackedK4(s.n)}};
  if (cm) {
    d.shader.source = "linear_coopmat.comp";
    if (c.cm_khr) {
      defs.push_back("VKQC_CM_KHR");
      // VkComponentTypeKHR: FLOAT16 0, FLOAT32 1, SINT8 3, SINT32 5.
      d.coopmat = c.cm_int8 ? CoopMatNeed{c.cm_m, c.cm_n, c.cm_k, 3, 3, 5, 5} : CoopMatNeed{c.cm_m, c.cm_n, c.cm_k, 0, 0, 1, 1};
    }
    const uint32_t nt = c.Invocations();
    d.spec.insert(d.spec.begin(), {0, nt});
    for (SpecValue v : {SpecValue{13, c.cm_sg}, {14, c.cm_wm}, {15, c.cm_wn}, {16, c.cm_tm}, {17, c.cm_tn},
                        {18, c.cm_m}, {19, c.cm_n}, {20, c.cm_k}, {21, c.cm_bkw}, {22, std::max(1u, c.cm_nslot)},
                        {23, c.cm_stages}})
      d.spec.push_back(v);
    if (split) d.spec.push_back({24, c.cm_kslice});
    d.local_size[0] = nt;
    d.local_size[1] = d.local_size[2] = 1;
    // Row blocks along x: the workgroups that read the same weight columns are launched together
    // (one read of each weight block from memory while they run; linear_coopmat.comp).
    d.group_count[0] = Ceil(s.m, c.CmBlockM());
    d.group_count[1] = Ceil(s.n, c.CmBlockN());
    d.group_count[2] = split ? c.cm_ksplit : 1;
    d.required_subgroup_size = c.cm_pin_subgroup ? c.cm_sg : 0;
  } else if (c.algo == Algo::Gemm) {
    d.shader.source = "linear_gemm.comp";
    d.spec.insert(d.spec.begin(), {{0, c.tx}, {1, c.ty}});
    d.spec.push_back({13, c.bk4});
    d.spec.push_back({14, c.rm});
    d.local_size[0] = c.tx;
    d.local_size[1] = c.ty;
    d.local_size[2] = 1;
    d.group_count[0] = Ceil(s.n, c.tx * c.rn);
    d.group_count[1] = Ceil(s.m, c.ty * c.rm);
    d.group_count[2] = 1;
  } else {
    d.shader.source = "linear_gemv.comp";
    if (c.subgroup_size) defs.push_back("VKQC_SUBGROUP");
    if (c.rows_at_once) defs.push_back("VKQC_SEVERAL_ROWS");  // epilogue_rows
    if (c.pipelined) defs.push_back("VKQC_ROWS_PIPELINE");
    d.spec.insert(d.spec.begin(), {0, c.threads});
    d.spec.push_back({13, c.nr});
    d.spec.push_back({14, c.mb});
    d.spec.push_back({15, c.subgroup_size ? c.subgroup_size : 32u});
    d.spec.push_back({16, c.unroll});
    if (c.row_blocks > 1) d.spec.push_back({20, c.row_blocks});
    if (c.xq_norm) {
      uint32_t eps;
      std::memcpy(&eps, &c.xq_eps, 4);
      d.spec.push_back({17, eps});
    }
    if (c.nt_base) {  // the norm tail: its bindings from nt_base, its reductions' shared memory
      defs.push_back("VKQC_NORM_TAIL");
      defs.push_back("VKQC_NT_BASE=" + std::to_string(c.nt_base));
      if (c.nt_add) defs.push_back("VKQC_NT_ADD");
      if (c.nt_quant) defs.push_back("VKQC_NT_QUANT");
      uint32_t eps;
      std::memcpy(&eps, &c.nt_eps, 4);
      d.spec.push_back({18, eps});
      d.spec.push_back({19, c.nt_counter});
      d.shared_memory_bytes += (2 * c.threads + 3) * 4;
    }
    d.local_size[0] = c.threads;
    d.local_size[1] = d.local_size[2] = 1;
    SplitGroups(Ceil(s.n, c.nr) * c.row_blocks, p.max_compute_work_group_count[0], d.group_count);
    d.group_count[2] = Ceil(s.m, c.mb * c.row_blocks);
    d.required_subgroup_size = c.subgroup_size;
  }
  return d;
}

DispatchParams SplitKReduceDispatch(const LinearShape& s, const LinearChoice& c, const PackedLinear& pk,
                                    const LinearConsts& k, const TargetProfile& p) {
  DispatchParams d;
  d.push = PushBytes(s, k);  // linear_common.glslh's push block: finish() and requantize() read it
  d.shader = {"linear_splitk.comp", {}};
  if (s.out_q8) d.shader.defines.push_back("VKQC_OUT_Q8");
  const uint32_t local = std::min<uint32_t>(128, p.max_compute_work_group_invocations);
  d.spec = {{0, local}, {2, uint32_t(s.m)}, {3, uint32_t(s.n)}, {11, pk.bias_off}, {12, PackedK4(s.n)},
            {13, c.cm_ksplit}};
  d.local_size[0] = local;
  d.local_size[1] = d.local_size[2] = 1;
  const uint64_t items = uint64_t(s.m) * (s.out_q8 ? PackedK4(s.n) : uint64_t(s.n));
  SplitGroups(Ceil(int64_t(items), local), p.max_compute_work_group_count[0], d.group_count);
  d.group_count[2] = 1;
  return d;
}

}  // namespace vkqc::linear
