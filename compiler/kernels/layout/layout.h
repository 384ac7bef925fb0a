// Layout ops (transpose, reshape): pure planning, unit-tested without a GPU. The device layout
// these work on (passes/lower.cc, kernels/lowering.h): f32 tensors dense row-major; int8 tensors
// packed rows of the last dimension, PackedK4(last) words each, zero padded.
//  - A reshape keeps the row-major order, so it needs no data movement where the device bytes of
//    the input and the output are the same: always for f32; for i8 when the last dimension is
//    unchanged, or when neither tensor's rows are padded (both last dimensions fill whole rows).
//    A transpose whose permutation only moves dimensions of size 1 is such a reshape.
//  - Otherwise a transpose is one gather dispatch (shaders/transpose.comp): one invocation per
//    output value (f32) or per output word of four int8 values, so writes are coalesced; a float
//    transpose that reduces to swapping the last two of [B, R, C] (NCHW <-> NHWC among them) with
//    R and C of at least kTileMin runs through 32 x 32 shared-memory tiles, so reads are
//    coalesced too (shaders/transpose_tile.comp). An int8 reshape whose rows are re-padded is one
//    copy dispatch (transpose.comp, VKQC_RESHAPE).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/graph/ir.h"
#include "compiler/kernels/linear/linear.h"
#include "compiler/profile/profile.h"

namespace vkqc::layout {

constexpr int kMaxRank = 6;     // transpose's limit (the shader's dimension count)
constexpr int64_t kTileMin = 16;  // both sides of the swapped pair at least this: tiled

// A transpose reduced to its essentials: dimensions of size 1 dropped, runs of input dimensions
// that stay adjacent and in order in the output merged. Output dimension i is dims[perm[i]].
// Never empty (a tensor of one value is dims [1], perm [0]). A symbolic dimension must be given
// as its size, or as any value > 1 for a token-independent answer.
struct Canonical {
  std::vector<int64_t> dims;
  std::vector<int> perm;
  bool Identity() const;
  // [B, R, C] -> [B, C, R] (B may be absent): the swap of the last two of a 2- or 3-d shape.
  bool SwapLastTwo() const;
};
Canonical Canonicalize(const std::vector<int64_t>& shape, const std::vector<int32_t>& perm);

// Whether tensors x and y (the same element count) hold the same bytes on the device when y is x
// reshaped in row-major order (see above). Token-independent: a symbolic dimension counts as
// unknown.
bool SameDeviceBytes(const ir::Tensor& x, const ir::Tensor& y);
// Whether op (a reshape, or a transpose) can be compiled as a view of its input's buffer.
bool IsView(const ir::Graph& g, const ir::Op& op);

// Dispatches. Shapes are concrete (the program's token count applied).
// y = transpose(x, perm), f32 or int8 packed rows.
linear::DispatchParams TransposeDispatch(const std::vector<int64_t>& x_shape, const std::vector<int32_t>& perm,
                                         bool int8, const TargetProfile& p);
// A copy of `count` f32 values (a reshape that writes its own buffer).
linear::DispatchParams CopyF32Dispatch(uint64_t count, const TargetProfile& p);
// int8 rows of kx values re-cut into rows of ky values (rows * ky == total values).
linear::DispatchParams ReshapeI8Dispatch(int64_t total, int64_t kx, int64_t ky, const TargetProfile& p);

// "[0, 2, 3, 1]", for messages and `vkqc inspect`.
std::string PermString(const std::vector<int32_t>& perm);
std::string DimsString(const std::vector<int64_t>& dims);

}  // namespace vkqc::layout
