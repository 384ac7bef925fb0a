// Convolution family (NHWC, int8 static activations, q8csw weights): im2col into packed GEMM
// rows feeding the linear GEMM (1x1 stride-1 unpadded convolutions skip im2col), and a direct
// depthwise kernel. Also the dequantize dispatch for int8 tensors.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/kernels/linear/linear.h"
#include "compiler/profile/profile.h"

namespace vkqc::conv {

struct ConvGeometry {
  int64_t n = 1, h = 1, w = 1, c = 1;      // input NHWC
  int64_t kh = 1, kw = 1;
  int64_t sh = 1, sw = 1, pt = 0, pl = 0, pb = 0, pr = 0, dh = 1, dw = 1;
  int64_t oh = 1, ow = 1;
  int64_t rows() const { return n * oh * ow; }
  int64_t k() const { return kh * kw * c; }  // GEMM K of a groups=1 convolution
  bool pointwise() const {
    return kh == 1 && kw == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0 && pb == 0 && pr == 0;
  }
};

// The conv family's workgroup size on a target: 128 invocations, or the target's limit.
uint32_t Workgroup(const TargetProfile& p);

// How a convolution runs. Pointwise (1x1, stride 1, no padding): the input rows are the GEMM
// rows. Im2col: packed columns, then the linear GEMM/GEMV. Direct: conv_direct_i8 (any groups).
// Depthwise: dwconv_i8.
enum class ConvAlgo { Pointwise, Im2col, Direct, Depthwise };
const char* ConvAlgoName(ConvAlgo a);
struct ConvSelectOptions {
  std::optional<ConvAlgo> force;  // Im2col or Direct; applies to dense non-pointwise convolutions
  // The GEMM of pointwise / im2col'd layers on the integer path: true = the rows kernel
  // (conv_rows_i8.comp), false = the linear family's kernels; unset = SelectConvRows' rule.
  std::optional<bool> rows;
};
struct ConvChoice {
  ConvAlgo algo = ConvAlgo::Im2col;
  std::string reason;  // for `vkqc inspect`; im2col/pointwise reasons end in "; " (GEMM's follows)
};
// The per-profile rule (TargetProfile::conv_im2col_*); pure function of its arguments.
ConvChoice SelectConv(const ConvGeometry& g, int64_t cout, int64_t groups, const TargetProfile& p,
                      const ConvSelectOptions& o);

// A 1x1 stride-1 unpadded dense conv2d (its input rows are the GEMM rows), and an int8 -> int8
// depthwise one (groups = input channels = output channels): what the passes' rules look for.
bool IsPointwise(const ir::Graph& g, const ir::Op& conv);
bool IsInt8Depthwise(const ir::Graph& g, const ir::Op& conv);
// An int8 -> int8 average pool over each image's whole map (global, or a kernel of the map's size
// without padding).
bool IsInt8GlobalAvgPool(const ir::Graph& g, const ir::Op& pool);

// Elementwise add of [rows][c] tensors: int8 (per-tensor parameters each, q8to output) or f32.
struct AddParams {
  float scale_a = 1, scale_b = 1, out_scale = 1;
  int32_t zero_point_a = 0, zero_point_b = 0, out_zero_point = 0;
  uint32_t flags = 0;  // linear::kFlagRelu | kFlagRelu6
};
// The GEMM of a pointwise or im2col'd convolution on the integer path (int8 input rows, q8csw
// weights packed as the linear family packs them) runs on conv_rows_i8.comp where it is small:
// one invocation per (row, 4 output channels, lane), `lanes` splitting K. H100 (bench/RESULTS.md
// 2026-11-26, the MobileNetV2-shaped CNN, every layer <= 20M multiply-adds): 29 of its 35 GEMMs
// 1.2-6x faster than on the tiled GEMM, two large-map expand layers (M 12544 / 3136, K 16 / 24)
// 5-9% slower; the whole network 658 -> 260 us. Larger layers are not measured: they keep the GEMM.
constexpr uint64_t kRowsMaxMacs = uint64_t(1) << 26;
constexpr uint64_t kRowsMaxInvocations = uint64_t(1) << 18;  // lanes are added only while the grid stays below
constexpr uint64_t kRowsManyOutputs = uint64_t(1) << 16;  // output words from which one lane takes 4 rows
struct RowsChoice {
  bool use = false;
  uint32_t lanes = 1;
  uint32_t rows_per_invocation = 1;  // with one lane: rows sharing each weight load
  std::string reason;  // for `vkqc inspect`
};
RowsChoice SelectConvRows(int64_t m, int64_t k, int64_t n, const TargetProfile& p, const ConvSelectOptions& o);

// The int8 add that reads a convolution's q8to output, computed in the same dispatch
// (passes/fuse_rows.cc): its parameters with this layer's output as operand b.
struct FusedAdd {
  AddParams add;           // scale_b / zero_point_b: the convolution's output parameters
  bool keep_conv_output;   // the convolution's own output is written too (kept intermediates)
};
// x packed int8 rows [M][PackedK4(K)], y [M][N] (f32) or packed q8to rows; with `fused`, bindings
// (x, w, sum, other operand, conv output when kept).
struct PackedDepthwise;
// A pointwise layer that computes the int8 depthwise convolution it reads (passes/fuse_rows.cc),
// conv_rows_i8.comp's VKQC_DWPW: a workgroup computes the depthwise outputs of `pixels` rows into
// shared memory, then `words` of their output words (all of them, or a slice: the depthwise
// outputs are then computed once per slice) with `lanes` lanes each, at most kDwpwLaneUnits units
// of K per lane. Not on CPU devices (lavapipe: no idle lanes for the per-slice recomputation).
constexpr uint32_t kDwpwLaneUnits = 2;
struct DwpwChoice {
  bool use = false;
  uint32_t workgroup = 128, lanes = 1, words = 1, pixels = 1;
  std::string reason;
};
// all_words_lane_units > 0: every output word in the workgroup (for a chained convolution,
// CanChain), lanes of at most that many units of K; not used where that does not fit.
DwpwChoice SelectDwpw(int64_t k, int64_t n, const TargetProfile& p, uint32_t all_words_lane_units = 0);
struct DepthwiseInput {
  ConvGeometry geometry;           // of the depthwise convolution
  const PackedDepthwise* packed = nullptr;
  linear::LinearConsts consts;     // its input (act_*) and output (out_*) parameters
  uint32_t flags = 0;              // its bias / relu / relu6
  DwpwChoice choice;
};
// An im2col'd layer whose rows the rows kernel gathers from the convolution's input itself
// (conv_rows_i8.comp's VKQC_GATHER: no im2col pass, no columns in memory): K <= kGatherMaxK (the
// row's bytes live in registers), one lane; `words` output words per invocation share one gather
// of the row. The input is packed int8 pixels, or (`quantize`) the float input the convolution
// quantizes per tensor (its input_quant), each tap quantized as it is gathered.
constexpr int64_t kGatherMaxK = 64;
struct GatherInput {
  bool use = false;
  ConvGeometry geometry;
  bool quantize = false;
  uint32_t words = 1;
  std::string reason;
};
GatherInput SelectGather(const ConvGeometry& g, int64_t n, const RowsChoice& rows, const TargetProfile& p);

// A pointwise layer that computes the int8 global average pool that only reads it
// (passes/fuse_rows.cc), conv_rows_i8.comp's VKQC_POOL: a workgroup takes one image and `words`
// output words; its `slots` pixel slots (`lanes` lanes each) compute the image's output codes,
// `slots` pixels per round, and their sums give the pooled words. `pool` holds the pool's input
// (this layer's output) and output parameters.
struct PoolInput {
  bool use = false;
  int64_t pixels = 1;  // per image
  uint32_t lanes = 1, words = 1, slots = 1;
  AddParams pool;  // scale_a / zero_point_a: the input's; out_*: the output's
  std::string reason;
};
PoolInput SelectPool(int64_t pixels, int64_t k, int64_t n, const TargetProfile& p);

// The pointwise int8 convolution that reads a VKQC_DWPW layer's output (or its fused add's sum),
// computed by that layer's kernel (passes/fuse_rows.cc conv_next; conv_rows_i8.comp's
// VKQC_CHAIN): where the workgroup holds every output word of its pixels (no slices), the pixels'
// output rows go to shared memory and the workgroup computes the chained convolution's output words
// of the same pixels from there. At most kChainUnits units of its K per invocation in all (its
// output words of the workgroup's pixels over the workgroup, times its K's units).
constexpr uint32_t kChainUnits = 16;
// A layer whose workgroups would take a slice of its output words widens them to all of its words
// for a chained convolution (fewer lanes, so more units of K each) up to this many units per lane.
// H100, the MobileNetV2-shaped example (bench/RESULTS.md 2026-12-07 session 22, whole program):
// no chains 200.6-201.1 us; chains without widening (7) 193.9; this cap (10 chains) 189.9-190.1;
// a cap of 9 (13 chains: the 14x14 blocks at 9 units per lane) 199.9-200.3; the 14x14 and 7x7
// blocks chained in workgroups of 512 or 1024 threads instead (13 / 16 chains) 190.4-190.8 / 195.1.
constexpr uint32_t kChainLaneUnits = 4;
struct ChainInput {
  const linear::PackedLinear* packed = nullptr;  // its q8csw weights (the linear family's region)
  int64_t n = 1;                                 // its output channels
  linear::LinearConsts consts;                   // its input (this layer's output) and output parameters
  uint32_t flags = 0;                            // its bias / relu / relu6
};
// Whether a VKQC_DWPW layer of K `k`, N `n` with `dw` chosen can compute a chained pointwise
// convolution of `chain_n` output channels in its kernel (`why` says why not).
bool CanChain(int64_t k, int64_t n, const DwpwChoice& dw, int64_t chain_n, const TargetProfile& p, std::string* why);

// One dispatch of the rows kernel. Bindings: x (with `dw`: the depthwise convolution's input;
// with `gather`: the convolution's input), w, y (the sum with `fused`, the pool's output with `pool`), [the add's other operand,
// [the convolution's own output when kept]], [the depthwise weights, [the chained weights, its output]].
struct RowsLayer {
  int64_t m = 1, k = 1, n = 1;
  RowsChoice rows;
  bool int_dot = false, out_q8 = false;
  const linear::PackedLinear* packed = nullptr;
  linear::LinearConsts consts;
  uint32_t flags = 0;
  const FusedAdd* fused = nullptr;
  const DepthwiseInput* dw = nullptr;
  const GatherInput* gather = nullptr;
  const PoolInput* pool = nullptr;
  const ChainInput* chain = nullptr;  // with dw: [the chained weights, the chained output] after the depthwise weights
};
linear::DispatchParams RowsDispatch(const RowsLayer& l, const TargetProfile& p);

// Packed input [N*H*W][PackedK4(C)] words -> packed columns [rows][PackedK4(K)] words; with
// `quantize_scale`, a float input [N*H*W][C] quantized per tensor (scale, input_zero_point) per tap.
linear::DispatchParams Im2colDispatch(const ConvGeometry& g, int32_t input_zero_point, const TargetProfile& p,
                                      const float* quantize_scale = nullptr);
// Weight-only convolutions: f32 input [N*H*W][C] -> f32 columns [rows][K] (padded taps 0).
linear::DispatchParams Im2colF32Dispatch(const ConvGeometry& g, const TargetProfile& p);

// Depthwise weights region: [KH*KW][ceil(C/4)] words (4 channels per word), f32 scales [C],
// f32 bias [C]. `w` is the IR weight [C][KH][KW][1] int8.
struct PackedDepthwise {
  std::vector<uint8_t> region;
  uint32_t cw = 0, scale_off = 0, bias_off = 0;
};
PackedDepthwise PackDepthwise(const int8_t* w, int64_t c, int64_t kh, int64_t kw, const float* scales,
                              const float* bias);

linear::DispatchParams DepthwiseDispatch(const ConvGeometry& g, const PackedDepthwise& pk, bool out_q8,
                                         const linear::LinearConsts& k, uint32_t flags, const TargetProfile& p);

// Direct grouped convolution (any groups): region [Cout][RW] words of int8 [KH][KW][Cin/groups]
// per output channel (rows padded to words), f32 scales [Cout], f32 bias [Cout].
struct PackedDirect {
  std::vector<uint8_t> region;
  uint32_t rw = 0, scale_off = 0, bias_off = 0;
};
PackedDirect PackDirect(const int8_t* w, int64_t cout, int64_t per_channel, const float* scales, const float* bias);
// x_f32: weight-only (f32 input, fp32 accumulation of x * w, scaled per output channel).
linear::DispatchParams DirectDispatch(const ConvGeometry& g, int64_t cout, int64_t groups, const PackedDirect& pk,
                                      bool out_q8, const linear::LinearConsts& k, uint32_t flags,
                                      const TargetProfile& p, bool x_f32 = false);

// int8 [M][K] (packed) -> f32: per tensor (scale, zp) or per row (row_params binding).
linear::DispatchParams DequantizeDispatch(int64_t m, int64_t k, bool per_row, float scale, int32_t zero_point,
                                          const TargetProfile& p);

// quantize/dequantize through convert.comp: dense f32/f16 <-> int8 packed rows [count/k][PackedK4(k)]
// or dense int32, with per-tensor (channels 1) or per-channel parameters (element e uses channel
// (e / inner) % channels) from a constants region (PackConvertParams), or per-row parameters.
std::vector<uint8_t> PackConvertParams(const ir::Quant& q);
linear::DispatchParams ConvertDispatch(ir::DType src, ir::DType dst, int64_t count, int64_t k, int64_t inner,
                                       int64_t channels, bool row_params, const TargetProfile& p);
// An int8 add's parameters (inputs and output per tensor, relu/relu6) from the graph.
AddParams Int8AddParams(const ir::Graph& g, const ir::Op& add);
// add.comp over `rows` rows of c values.
linear::DispatchParams AddDispatch(int64_t rows, int64_t c, bool int8, const AddParams& a, const TargetProfile& p);

// Average pooling (padded taps excluded). `g` uses kh/kw/sh/sw/pt/pl/oh/ow; dilation 1.
linear::DispatchParams PoolDispatch(const ConvGeometry& g, bool int8, float act_scale, int32_t act_zero_point,
                                    float out_scale, int32_t out_zero_point, const TargetProfile& p);

}  // namespace vkqc::conv
