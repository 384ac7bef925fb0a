// Linear op family: variant choice, weight packing and dispatch parameters.
// Variants (DESIGN 5): linear_<act>_<weights>[_q8to]_<accum>_<algo>, accum in {dot, dequant,
// cm, cmf16}, algo in {gemm, gemv}. dot = int32 accumulation with the packed int8 dot product
// after a quantize_q8ta/dq8ca dispatch; dequant = weights dequantized in the shader, fp32
// accumulation, activation quantization skipped (the weight-only function, DESIGN 4);
// cm = cooperative-matrix GEMM (tensor cores, VK_NV_cooperative_matrix) with int8 operands and
// int32 accumulation, the same function as dot; cmf16 = cooperative-matrix GEMM of float
// activations with fp16 operands and fp32 accumulation (opt-in: fp16 rounding).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/common/result.h"
#include "compiler/graph/ir.h"
#include "compiler/profile/profile.h"

namespace vkqc::linear {

enum class Algo { Gemm, Gemv };
enum class Accum { IntDot, Dequant, CoopMat };
const char* AlgoName(Algo a);    // "gemm" / "gemv"
const char* AccumName(Accum a);  // "dot" / "dequant" / "cm"

struct LinearShape {
  int64_t m = 1, k = 1, n = 1;
  ir::Scheme act = ir::Scheme::Float;     // Float, Q8TA or DQ8CA (how a float x is quantized)
  bool x_int8 = false;                    // x is already int8 (per-tensor parameters)
  ir::Scheme weights = ir::Scheme::Q8CSW; // Q8CSW, Q4GSW or Q4GAW
  int64_t group_size = 0;                 // int4 only
  bool has_bias = false;
  bool relu = false;
  bool relu6 = false;
  bool out_q8 = false;                    // q8to output
  bool conv = false;                      // the GEMM of a convolution (no cooperative matrix yet)
  bool Quantized() const { return x_int8 || act == ir::Scheme::Q8TA || act == ir::Scheme::DQ8CA; }
  bool Int4() const { return weights == ir::Scheme::Q4GSW || weights == ir::Scheme::Q4GAW || weights == ir::Scheme::Q4GMW; }
  // Scales per group along K (int4 schemes and q8gsw), folded into fp32 at each group's end.
  bool Grouped() const { return Int4() || weights == ir::Scheme::Q8GSW; }
};

struct SelectOptions {
  std::optional<Algo> force_algo;
  std::optional<Accum> force_accum;  // CoopMat: int8 or fp16 operands by the activations
  uint32_t gemv_max_m = 0;  // 0: the profile's sidecar value, else kDefaultGemvMaxM
  bool no_coopmat = false;  // never choose the cooperative-matrix GEMM on its own
  bool allow_fp16 = false;  // float (weight-only) layers may use the fp16 cooperative-matrix GEMM
  bool cm_nv = false;       // use VK_NV_cooperative_matrix even where the target has the KHR one
  // Cooperative-matrix tile override (tuning): subgroups wm x wn, tiles per subgroup tm x tn,
  // K words per step, shared operand buffers (1 or 2); 0 = chosen by selection.
  uint32_t cm_wm = 0, cm_wn = 0, cm_tm = 0, cm_tn = 0, cm_bkw = 0, cm_stages = 0;
  // K slices of the cooperative matrix (grouped weights on the int8 path; `--coopmat-split N`):
  // 0 = chosen by selection, 1 = none.
  uint32_t cm_ksplit = 0;
  // Tiled GEMM override (tuning): rows per thread (4 or 8) and packed K words per step (a
  // multiple of 8 dividing the layer's padded K); 0 = chosen by selection.
  uint32_t gemm_rm = 0, gemm_bk4 = 0;
  // GEMV prologues (xq_prologue, xq_norm): taken where the rows they read over all workgroups stay
  // within this many bytes (`--prologue-max-bytes`); 0 = kPrologueBytes for the quantization
  // alone, and no rms_norm in prologues (opt-in: it lost on the H100, norm/lower.cc).
  uint64_t prologue_max_bytes = 0;
};
constexpr uint32_t kDefaultGemvMaxM = 8;
// One row on the int-dot path of a GPU (select.cc): channels per workgroup; and where each
// workgroup quantizes a row of at least kRowPrologueLongK values itself, its threads.
constexpr uint32_t kOneRowChannels = 2;
constexpr int64_t kRowPrologueLongK = 8192;
constexpr uint32_t kRowPrologueThreads = 256;
// GEMV thresholds where a cooperative-matrix GEMM replaces the GEMV on a target that has one
// (select.cc; measured on the H100): grouped int4/int8 weights on the int8 path, and float
// activations on the fp16 cooperative matrix (--allow-fp16) with int4 / int8 weights.
constexpr uint32_t kCoopMatGroupedGemvMaxM = 8;
constexpr uint32_t kCoopMatF16Int4GemvMaxM = 4;
// int8 weights from M = 8 since batches of up to 16 rows take 32x32 blocks: 93.7 us at M = 8 against
// the GEMV's 120.2 (H100, float x q8csw 4096x14336).
constexpr uint32_t kCoopMatF16Int8GemvMaxM = 7;
// int8 weights on the int8 path (q8csw), narrow layers (16-63 column blocks of 128): the GEMV up to
// one matrix row tile. H100 dq8ca x q8csw, GEMV against 32x32 blocks, M = 13 / 16 / 32, us
// (bench/RESULTS.md 2026-11-27 session 5): 8192x2048 27.7 / 28.0 / 44.4 against 31.1 / 31.5 / 32.2,
// 14336x4096 69.2 / 70.2 / 120.6 against 84.8 / 84.9 / 86.1.
constexpr uint32_t kCoopMatInt8NarrowGemvMaxM = 16;
// The tiled GEMM takes the profile's taller tiles (gemm_rows_int4 / gemm_rows_int8) only when they
// still give this many workgroups (H100, bench/RESULTS.md session 4: 8 rows won with 224 to 1792
// workgroups, tied or lost with 128 and fewer), and on the int-dot path int4 weights only in
// groups of at least kMinTallTilesInt4DotGroup values (with groups of 32 the per-group fold of 8
// rows cost more than the taller tile saved).
constexpr uint64_t kMinWorkgroupsForTallTiles = 192;
constexpr int64_t kMinTallTilesInt4DotGroup = 128;
// The GEMV prologue quantization (LinearChoice::xq_prologue) is taken where the rows it reads over
// all workgroups stay within this: 16 MiB. Measured on the H100 (bench/RESULTS.md, 2026-11-26
// sessions 6-7): the 1b example's down_proj (512 workgroups re-reading its 32 KiB row, 16 MiB)
// took 10.40 us with the prologue against 9.66 + 5.89 for the GEMV and a quantize dispatch; a
// dependent dispatch alone costs ~2 us there.
constexpr uint64_t kPrologueBytes = 16ull << 20;
// A one-row silu(gate) * up whose readers quantize it per token is computed in their GEMV
// prologues (no silu·mul dispatch) where the two rows they read over all workgroups stay within
// this. Measured on the H100 (bench/RESULTS.md, 2026-11-26 sessions 6-7): the 1b example's
// down_proj (2048 x 8192, 512 workgroups) re-reading a 32 KiB row in every workgroup (16 MiB)
// took 0.7 us more than reading the quantized row, against 5.9 us for the silu·mul dispatch;
// with both rows that is 32 MiB.
constexpr uint64_t kSwigluPrologueBytes = 32ull << 20;

// A layer's kernel choice. Pure data: selection is a function of (shape, profile, options).
struct LinearChoice {
  Algo algo = Algo::Gemm;
  Accum accum = Accum::Dequant;
  // GEMM: workgroup tx*ty threads, rm x rn outputs per thread, bk4 packed words per K step.
  uint32_t tx = 16, ty = 16, rm = 4, rn = 4, bk4 = 8;
  // GEMV: `threads` per workgroup (power of two), nr channels and mb rows per workgroup,
  // subgroup_size > 0 pins the subgroup width and enables the subgroupAdd reduction.
  // unroll: 16-byte weight units each thread loads per iteration before computing.
  uint32_t threads = 128, nr = 4, mb = 1, subgroup_size = 0, unroll = 1;
  // GEMV with mb > 1: every row's sums reduced at once and the rows finished side by side
  // (linear_gemv.comp, VKQC_SEVERAL_ROWS); false: one row after another.
  bool rows_at_once = false;
  // GEMV with mb > 1, int4 x int8 in groups of a multiple of 32: the next batch of weights loaded
  // before each batch is computed (linear_gemv.comp, VKQC_ROWS_PIPELINE; select.cc: 4 rows on GPUs).
  bool pipelined = false;
  // GEMV: the rows split into row_blocks blocks of mb rows whose workgroups over the same channels
  // are launched side by side (linear_gemv.comp's RB: the row block is the fastest-varying
  // workgroup index, so the second block's weight reads hit the L2 the first one's filled).
  uint32_t row_blocks = 1;
  bool int4 = false;   // grouped weights (the GEMM stages group scales in shared memory)
  bool mins = false;   // q4gmw (the GEMM stages the groups' minimums too)
  // Cooperative matrix (accum CoopMat, algo Gemm): cm_m x cm_n x cm_k matrix shape; a workgroup
  // of cm_wm x cm_wn subgroups of cm_sg invocations, each cm_tm x cm_tn tiles, so the block is
  // (cm_wm*cm_tm*cm_m) x (cm_wn*cm_tn*cm_n); cm_bkw shared words (4 bytes) along K per step;
  // cm_stages shared operand buffers (2: the next step stored while this one multiplies);
  // cm_nslot chunk slots of per-group weight sums (int4 weights on the int8 path);
  // cm_pin_subgroup: pin cm_sg as the required subgroup size.
  bool cm_int8 = true;  // int8 operands (quantized activations) or fp16 (float activations)
  uint32_t cm_m = 16, cm_n = 16, cm_k = 32, cm_sg = 32, cm_wm = 2, cm_wn = 4, cm_tm = 4, cm_tn = 2,
           cm_bkw = 16, cm_stages = 1, cm_nslot = 0;
  // Split K: cm_ksplit workgroups along z, each over cm_kslice K values, partial outputs added by
  // a second dispatch (linear_splitk.comp); 1 = the whole K in one workgroup.
  uint32_t cm_ksplit = 1, cm_kslice = 0;
  bool cm_pin_subgroup = false;
  bool cm_khr = false;  // VK_KHR_cooperative_matrix (the NV module translated); else VK_NV_cooperative_matrix
  // GEMV at M = 1 on the int path with dq8ca activations: each workgroup quantizes the float row
  // itself (VKQC_XQ_PROLOGUE) instead of reading rows a quantize dispatch wrote. Decided at
  // lowering (it depends on whether another op already provides the quantized row).
  bool xq_prologue = false;
  // With xq_prologue: the row is an rms_norm's output the prologue computes from the norm's input
  // (VKQC_XQ_NORM), itself a residual add's sum (xq_add 1: VKQC_XQ_ADD; 2: this layer also writes
  // the sum, VKQC_XQ_SUM). See kernels::LowerContext::RowPrologue.
  bool xq_norm = false;
  // With xq_prologue: the row is silu(x) * u, u the second prologue operand (VKQC_XQ_SILU).
  bool xq_silu = false;
  // A gate/up pair (linear/pair.h) on the GEMV: the workgroup's channel pairs (2j gate, 2j + 1 up)
  // leave as silu(gate) * up, N / 2 outputs (VKQC_OUT_PAIRS). Decided at lowering; needs nr even.
  bool out_pairs = false;
  uint32_t xq_add = 0;
  float xq_eps = 0;
  // A one-row GEMV whose last workgroup computes the rms_norm reading its output (norm/tail.h,
  // VKQC_NORM_TAIL): nt_base its first binding (0: no tail), nt_add the residual add fused into
  // the norm, nt_quant the norm's per-token quantization, nt_counter its arrival counter's word
  // in the sync state. Decided at lowering.
  uint32_t nt_base = 0, nt_counter = 0;
  bool nt_add = false, nt_quant = false;
  float nt_eps = 0;
  std::string reason;  // human-readable: why this variant (printed by vkqc inspect)

  std::string VariantName(const LinearShape& shape) const;
  uint32_t SharedMemoryBytes() const;
  // The prologue's shared memory for K: the packed row, the reduction, the parameters.
  uint32_t PrologueSharedBytes(int64_t k) const;
  uint32_t Invocations() const {
    return accum == Accum::CoopMat ? cm_sg * cm_wm * cm_wn : algo == Algo::Gemm ? tx * ty : threads;
  }
  uint32_t CmBlockM() const { return cm_wm * cm_tm * cm_m; }
  uint32_t CmBlockN() const { return cm_wn * cm_tn * cm_n; }
};

Result<LinearChoice> SelectLinear(const LinearShape& shape, const TargetProfile& profile,
                                  const SelectOptions& options);
// Whether `choice` is a one-row GEMV on the int-dot path of a GPU (not a CPU device, no int8
// outputs): its workgroup follows the compiler's one-row rule, not the profile's tuned GEMV values.
bool OneRowIntDotOnGpu(const LinearShape& shape, const TargetProfile& profile, const LinearChoice& choice);
// The choice of a GEMV that quantizes (or computes) its input row in every workgroup's prologue
// (xq_prologue): one row on the int-dot path of a GPU with K >= kRowPrologueLongK takes
// kRowPrologueThreads threads x 4 channels; any other choice is returned as it is.
LinearChoice ForRowPrologue(const LinearShape& shape, const TargetProfile& profile, LinearChoice choice);

// ---- packing ------------------------------------------------------------------------------
// A layer's constants form one region of the weight segment, bound as one storage buffer and
// addressed in 32-bit words (offsets are specialization constants; shaders/linear_common.glslh):
//   [0, N*KW)     weights. q8csw: KW = K4P = ceil(K/4) rounded up to kKWordAlign words, each word
//                 4 consecutive int8 K values. int4: KW = ceil(K/8) rounded up to 4 words, each
//                 word 8 K values as nibbles (+8 bias for q4gsw, raw 0..15 for q4gaw), byte b =
//                 k_b (low nibble) | k_(4+b) (high nibble). Padding is zero.
//   scale_off     f32 scales: [N] (q8csw) or [N][G]
//   zp_off        q4gaw zero points, bytes [N][G] (4 per word)
//   wsum_off      q8csw: i32 sum of each channel's weights [N]
//   bias_off      f32 bias [N] (zero when the layer has none)
//   the region is zero padded to a multiple of 16 bytes (linear_coopmat.comp reads uvec4).
// One layout serves GEMM and GEMV, so every program of a bundle shares one copy.
constexpr uint32_t kKWordAlign = 8;
uint32_t PackedK4(int64_t k);   // activation / q8 words per row
uint32_t PackedK8(int64_t k);   // int4 weight words per row

struct PackedLinear {
  std::vector<uint8_t> region;
  uint32_t kw = 0;  // weight words per output channel
  uint32_t scale_off = 0, zp_off = 0, wsum_off = 0, bias_off = 0;  // in words
};

// `w` is the weight tensor's data as the IR holds it (i8 bytes, or i4/u4 two per byte, low
// nibble first); `scales` has N (q8csw) or N*G entries; `zero_points` N*G (q4gaw) or empty;
// `mins` N*G (q4gmw: w = s * q - m, stored as f32 where q4gaw keeps its zero points) or null.
PackedLinear PackLinear(ir::Scheme scheme, const uint8_t* w, int64_t n, int64_t k, int64_t group_size,
                        const float* scales, const int32_t* zero_points, const float* bias /* nullable */,
                        const float* mins = nullptr);
// The offsets PackLinear uses (region empty) and the region's size in words.
PackedLinear PackedLayout(ir::Scheme scheme, int64_t n, int64_t k, int64_t group_size, uint64_t* words);
// Bytes of the region PackLinear packs for these shapes (the one binding a linear reads).
uint64_t PackedLinearBytes(ir::Scheme scheme, int64_t n, int64_t k, int64_t group_size);
// The signed weight values (w - zp) back from a packed region (round-trip tests).
std::vector<int32_t> UnpackLinear(ir::Scheme scheme, const PackedLinear& p, int64_t n, int64_t k, int64_t group_size);

// ---- dispatch parameters ------------------------------------------------------------------
// Push constants; twins of the GLSL blocks, checked against SPIR-V reflection at compile time.
struct LinearPush {
  float act_scale;
  int32_t act_zero_point;
  uint32_t flags;  // kFlagRelu | kFlagBias
  float out_inv_scale;
  int32_t out_zero_point;
  uint32_t reserved[3];
};
static_assert(sizeof(LinearPush) == 32);
constexpr uint32_t kFlagRelu = 1, kFlagBias = 2, kFlagRelu6 = 4;

struct QuantizePush {
  float inv_scale;
  int32_t zero_point;
};
static_assert(sizeof(QuantizePush) == 8);

struct ShaderKey {
  std::string source;                 // file in shaders/
  std::vector<std::string> defines;   // e.g. "VKQC_INT_DOT"
};

struct SpecValue {
  uint32_t id;
  uint32_t value;
};

// A cooperative-matrix MulAdd shape a kernel uses: sizes and VkComponentTypeKHR values.
struct CoopMatNeed {
  uint32_t m = 0, n = 0, k = 0, a = 0, b = 0, c = 0, result = 0;
};

struct DispatchParams {
  ShaderKey shader;
  std::vector<SpecValue> spec;
  uint32_t local_size[3];
  uint32_t group_count[3];
  uint32_t required_subgroup_size = 0;
  uint32_t shared_memory_bytes = 0;
  std::vector<uint8_t> push;
  // VK_KHR_cooperative_matrix kernels: the MulAdd shape the device must list (m = 0: none).
  CoopMatNeed coopmat;
};

// Activation quantization feeding an int-dot layer: x float [M,K] -> packed int8 [M][K4P].
// q8ta: per tensor (scale, zero point); dq8ca: per row, parameters computed on the GPU into a
// [M] x {f32 scale, i32 zp} buffer (the dispatch's third binding).
DispatchParams QuantizeDispatch(ir::Scheme act, int64_t m, int64_t k, float scale, int32_t zero_point,
                                const TargetProfile& profile);
// fp16 activation rows for the fp16 cooperative-matrix GEMM: x float [M,K] -> [M][K4P / 2] uvec4
// of halves (K zero padded), shaders/convert_f16.comp.
DispatchParams HalfDispatch(int64_t m, int64_t k, const TargetProfile& profile);
// The linear dispatch itself.
struct LinearConsts {
  float act_scale = 1.0f;
  int32_t act_zero_point = 0;
  float out_scale = 1.0f;
  int32_t out_zero_point = 0;
};
DispatchParams LinearDispatch(const LinearShape& shape, const LinearChoice& choice, const PackedLinear& packed,
                              const LinearConsts& consts, const TargetProfile& profile);
// The split-K cooperative matrix's second dispatch (choice.cm_ksplit > 1): adds the [ksplit][M][N]
// partial outputs (binding 0) and applies bias / relu / requantization into the output (binding 2).
DispatchParams SplitKReduceDispatch(const LinearShape& shape, const LinearChoice& choice, const PackedLinear& packed,
                                    const LinearConsts& consts, const TargetProfile& profile);
// int8 graph inputs/outputs: dense [M][K] bytes <-> packed [M][K4P] words.
DispatchParams RepackDispatch(bool to_packed, int64_t m, int64_t k, const TargetProfile& profile);

// Grid helper: spreads `groups` over x (<= max_x) and y.
void SplitGroups(uint64_t groups, uint32_t max_x, uint32_t out[2]);

}  // namespace vkqc::linear
