#include "compiler/kernels/embedding/lower.h"

#include <algorithm>
#include <cstring>

#include "compiler/common/log.h"
#include "compiler/emit/bundle_plan.h"

namespace vkqc::embedding {
namespace {

// A table wider than one storage-buffer binding (a 128256-row vocabulary on a target whose
// maxStorageBufferRange is 128 MiB) is stored as parts of whole rows, each bound alone and
// gathered by a dispatch of its own; a table that fits is one part.
struct Part {
  uint32_t row0 = 0, rows = 0;   // the table's rows [row0, row0 + rows)
  uint64_t offset = 0, bytes = 0;  // in the op's region; offset a multiple of the binding alignment
  uint32_t scale_off = 0;          // words from the part's start
};
struct Packed {
  std::vector<Part> parts;
};

uint64_t Pad16(uint64_t b) { return (b + 15) / 16 * 16; }

// Bytes of `rows` rows of the table in one part: [the rows' values as the IR holds them, zero
// padded to 16 bytes][their f32 scales], padded to 16 bytes.
uint64_t PartBytes(const ir::Tensor& t, uint64_t rows) {
  const uint64_t c = uint64_t(t.shape[1]);
  const uint64_t values = t.dtype == ir::DType::F32 ? rows * c * 4 : t.dtype == ir::DType::I8 ? rows * c : (rows * c + 1) / 2;
  if (!t.quant) return Pad16(values);
  const uint64_t per_row = t.quant->scheme == ir::Scheme::Q8CSW ? 1 : c / uint64_t(t.quant->group_size);
  return Pad16(Pad16(values) + rows * per_row * 4);
}

// The row count of each part but the last: the most rows (a multiple of 8, so an int4 part
// starts on a byte) whose part fits `range`; every row where the whole table fits.
uint64_t RowsPerPart(const ir::Tensor& t, uint64_t range) {
  const uint64_t v = uint64_t(t.shape[0]);
  if (PartBytes(t, v) <= range) return v;
  uint64_t lo = 0, hi = v / 8;  // in units of 8 rows: PartBytes grows with the rows
  while (lo < hi) {
    const uint64_t mid = (lo + hi + 1) / 2;
    if (PartBytes(t, mid * 8) <= range) lo = mid;
    else hi = mid - 1;
  }
  return lo * 8;  // 0: not even 8 rows fit (AddConstants refuses)
}

Status Pack(kernels::PackContext& ctx, size_t i) {
  const ir::Tensor& t = ctx.tensor(ctx.op(i).inputs[1]);
  const uint64_t v = uint64_t(t.shape[0]), c = uint64_t(t.shape[1]);
  const uint64_t range = ctx.profile().max_storage_buffer_range;
  const uint64_t per = RowsPerPart(t, range);
  if (per == 0)
    return UserError(ctx.OpLabel(i) + ": 8 rows of table '" + t.name + "' (" + std::to_string(PartBytes(t, 8)) +
                     " bytes) exceed maxStorageBufferRange " + std::to_string(range) + " of target '" +
                     ctx.profile().name + "'");
  const uint64_t per_row_scales =
      !t.quant ? 0 : t.quant->scheme == ir::Scheme::Q8CSW ? 1 : c / uint64_t(t.quant->group_size);
  const uint32_t align = ctx.binding_alignment();
  auto p = std::make_shared<Packed>();
  std::vector<uint8_t> region;
  uint64_t max_bound = 0;
  for (uint64_t r0 = 0; r0 < v; r0 += per) {
    Part part;
    part.row0 = uint32_t(r0);
    part.rows = uint32_t(std::min(per, v - r0));
    part.offset = (region.size() + align - 1) / align * align;
    part.bytes = PartBytes(t, part.rows);
    region.resize(part.offset, 0);
    // The part's values: whole bytes, since r0 is a multiple of 8 rows (the last part's end
    // rounded up to the IR's last byte).
    const uint64_t bits = t.dtype == ir::DType::F32 ? 32 : t.dtype == ir::DType::I8 ? 8 : 4;
    auto byte_at = [&](uint64_t row) { return std::min<uint64_t>((row * c * bits + 7) / 8, t.data->size); };
    const uint64_t begin = byte_at(r0), end = byte_at(r0 + part.rows);
    region.insert(region.end(), t.data->data() + begin, t.data->data() + end);
    region.resize(part.offset + Pad16(end - begin), 0);
    if (t.quant) {
      part.scale_off = uint32_t((region.size() - part.offset) / 4);
      const size_t at = region.size(), n = size_t(part.rows * per_row_scales);
      region.resize(at + n * 4);
      std::memcpy(region.data() + at, t.quant->scales.data() + r0 * per_row_scales, n * 4);
    }
    region.resize(part.offset + part.bytes, 0);
    max_bound = std::max(max_bound, part.bytes);
    p->parts.push_back(part);
  }
  VKQC_TRY(ctx.AddConstants(i, region, p->parts.size() > 1 ? max_bound : 0));
  ctx.Keep(i, p);
  return {};
}

Status Lower(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const ir::Tensor& ids = ctx.tensor(op.inputs[0]);
  const ir::Tensor& t = ctx.tensor(op.inputs[1]);
  const int64_t v = t.shape[0], c = t.shape[1], rows = ids.NumElements(ctx.tokens());
  const char* mode = t.dtype == ir::DType::F32 ? "VKQC_EMB_F32" : t.dtype == ir::DType::I8 ? "VKQC_EMB_I8" : "VKQC_EMB_I4";
  const uint32_t g = t.quant ? uint32_t(t.quant->group_size ? t.quant->group_size : c) : 1;
  const Packed& packed = ctx.KeptAs<Packed>(i);
  const kernels::Bind table = ctx.Constants(i);
  // Each part's dispatch writes the rows whose id it holds; the first part's also the zeros of
  // ids outside the table. They write disjoint rows of one output (a barrier between them).
  for (const Part& part : packed.parts) {
    linear::DispatchParams d = kernels::FlatDispatch("embedding.comp", {mode}, uint64_t(rows * c), 128, ctx.profile());
    d.spec.insert(d.spec.end(), {{1, uint32_t(c)}, {2, part.rows}, {3, uint32_t(rows)}, {4, part.scale_off}, {5, g},
                                 {6, part.row0}, {7, uint32_t(v)}});
    kernels::Bind b = table;
    b.w_offset += part.offset;
    b.w_size = part.bytes;
    ctx.Dispatch(d, {ctx.Read(op.inputs[0]), b, ctx.Write(op.outputs[0])});
  }
  pl.variant = std::string("embedding_") + (t.quant ? ir::SchemeName(t.quant->scheme) : "f32");
  pl.reason = "gather of rows by token id, dequantized in the shader; ids outside the table give zeros";
  if (packed.parts.size() > 1)
    pl.reason += "; the table is wider than one binding (maxStorageBufferRange " +
                 std::to_string(ctx.profile().max_storage_buffer_range) + "): " + std::to_string(packed.parts.size()) +
                 " parts of up to " + std::to_string(packed.parts[0].rows) + " rows, one dispatch each";
  pl.detail = std::to_string(rows) + " rows of " + std::to_string(c) + " from a " + std::to_string(v) + "-row table of " +
              log::Bytes(ctx.ConstantBytes(i));
  // What a run reads of the table: its rows (and their scales), not the whole table (bench's
  // bytes; the table's size is in the detail).
  pl.weight_bytes = std::min<uint64_t>(ctx.ConstantBytes(i), uint64_t(rows) * (PartBytes(t, 8) / 8));
  return {};
}

}  // namespace

const kernels::Family& Lowering() {
  static const kernels::Family f{"embedding", {ir::OpType::Embedding}, Pack, Lower};
  return f;
}

}  // namespace vkqc::embedding
