#include "compiler/kernels/embedding/lower.h"

#include <cstring>

#include "compiler/emit/bundle_plan.h"

namespace vkqc::embedding {
namespace {

struct Packed {
  uint32_t scale_off = 0;  // words
};

// [table bytes as the IR holds them, zero padded to 16 bytes][f32 scales]
Status Pack(kernels::PackContext& ctx, size_t i) {
  const ir::Tensor& t = ctx.tensor(ctx.op(i).inputs[1]);
  std::vector<uint8_t> region(t.data->data(), t.data->data() + t.data->size);
  auto p = std::make_shared<Packed>();
  if (t.quant) {
    region.resize((region.size() + 15) / 16 * 16, 0);
    p->scale_off = uint32_t(region.size() / 4);
    const auto& sc = t.quant->scales;
    const size_t at = region.size();
    region.resize(at + sc.size() * 4);
    std::memcpy(region.data() + at, sc.data(), sc.size() * 4);
  }
  region.resize((region.size() + 15) / 16 * 16, 0);
  VKQC_TRY(ctx.AddConstants(i, region));
  ctx.Keep(i, p);
  return {};
}

Status Lower(kernels::LowerContext& ctx, size_t i, PlanLayer& pl) {
  const ir::Op& op = ctx.op(i);
  const ir::Tensor& ids = ctx.tensor(op.inputs[0]);
  const ir::Tensor& t = ctx.tensor(op.inputs[1]);
  const int64_t v = t.shape[0], c = t.shape[1], rows = ids.NumElements(ctx.tokens());
  const char* mode = t.dtype == ir::DType::F32 ? "VKQC_EMB_F32" : t.dtype == ir::DType::I8 ? "VKQC_EMB_I8" : "VKQC_EMB_I4";
  linear::DispatchParams d = kernels::FlatDispatch("embedding.comp", {mode}, uint64_t(rows * c), 128, ctx.profile());
  const uint32_t g = t.quant ? uint32_t(t.quant->group_size ? t.quant->group_size : c) : 1;
  d.spec.insert(d.spec.end(), {{1, uint32_t(c)}, {2, uint32_t(v)}, {3, uint32_t(rows)},
                               {4, ctx.KeptAs<Packed>(i).scale_off}, {5, g}});
  ctx.Dispatch(d, {ctx.Read(op.inputs[0]), ctx.Constants(i), ctx.Write(op.outputs[0])});
  pl.variant = std::string("embedding_") + (t.quant ? ir::SchemeName(t.quant->scheme) : "f32");
  pl.reason = "gather of rows by token id, dequantized in the shader; ids outside the table give zeros";
  pl.detail = std::to_string(rows) + " rows of " + std::to_string(c) + " from a " + std::to_string(v) + "-row table";
  pl.weight_bytes = ctx.ConstantBytes(i);
  return {};
}

}  // namespace

const kernels::Family& Lowering() {
  static const kernels::Family f{"embedding", {ir::OpType::Embedding}, Pack, Lower};
  return f;
}

}  // namespace vkqc::embedding
