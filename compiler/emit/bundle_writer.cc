#include <algorithm>
#include <cstring>

#include "compiler/emit/bundle_plan.h"
#include "schema/bundle_generated.h"
#include "schema/bundle_integrity.h"

namespace vkqc {
namespace fbb = vkqc::fb::bundle;

namespace {
bool RangesOverlap(const PlanSlice& a, const PlanSlice& b) {
  return a.kind == b.kind && a.index == b.index && a.offset < b.offset + b.size &&
         b.offset < a.offset + a.size;
}
constexpr uint32_t kVkMakeApi13 = (1u << 22) | (3u << 12);
constexpr uint32_t kVkMakeApi11 = (1u << 22) | (1u << 12);
constexpr uint32_t kVkMakeApi12 = (1u << 22) | (2u << 12);
}  // namespace

std::vector<PlanCommand> InsertBarriers(const std::vector<PlanDispatch>& dispatches) {
  std::vector<PlanCommand> out;
  std::vector<PlanSlice> pending_writes, pending_reads;
  for (const auto& d : dispatches) {
    bool hazard = false;
    for (const auto& s : d.buffers) {
      for (const auto& w : pending_writes) hazard |= RangesOverlap(s, w);      // RAW, WAW
      if (s.written)
        for (const auto& r : pending_reads) hazard |= RangesOverlap(s, r);     // WAR
    }
    if (hazard) {
      PlanCommand b;
      b.is_barrier = true;
      out.push_back(b);
      pending_writes.clear();
      pending_reads.clear();
    }
    for (const auto& s : d.buffers) (s.written ? pending_writes : pending_reads).push_back(s);
    PlanCommand c;
    c.dispatch = d;
    out.push_back(std::move(c));
  }
  return out;
}

PlanRequirements DeriveRequirements(const BundlePlan& plan, uint32_t offset_alignment) {
  PlanRequirements r;
  r.api_version = kVkMakeApi11;
  r.min_storage_buffer_offset_alignment = offset_alignment;
  for (const auto& p : plan.pipelines) {
    if (p.int_dot) r.shader_integer_dot_product = true;
    if (p.subgroup_arithmetic) r.subgroup_arithmetic = true;
    if (p.float16) r.shader_float16 = true;
    if (p.int8) r.shader_int8 = true;
    if (p.storage_buffer_8bit) r.storage_buffer_8bit_access = true;
    if (p.cooperative_matrix_nv) r.cooperative_matrix_nv = true;
    if (p.cooperative_matrix_khr) {
      r.cooperative_matrix_khr = true;
      if (std::find(r.coopmat_shapes.begin(), r.coopmat_shapes.end(), p.coopmat) == r.coopmat_shapes.end())
        r.coopmat_shapes.push_back(p.coopmat);
    }
    if (p.vulkan_memory_model) r.vulkan_memory_model = true;
    if (p.required_subgroup_size) r.required_subgroup_size = p.required_subgroup_size;
    if (p.vulkan_memory_model) r.api_version = std::max(r.api_version, kVkMakeApi12);
    if (p.int_dot || p.required_subgroup_size) r.api_version = kVkMakeApi13;
    r.max_compute_shared_memory_size = std::max(r.max_compute_shared_memory_size, p.shared_memory_bytes);
    r.max_compute_work_group_invocations = std::max(
        r.max_compute_work_group_invocations, p.local_size[0] * p.local_size[1] * p.local_size[2]);
    for (int i = 0; i < 3; ++i)
      r.max_compute_work_group_size[i] = std::max(r.max_compute_work_group_size[i], p.local_size[i]);
    r.max_push_constants_size = std::max(r.max_push_constants_size, p.push_constant_size);
    r.max_per_stage_descriptor_storage_buffers =
        std::max<uint32_t>(r.max_per_stage_descriptor_storage_buffers,
                           uint32_t(p.bindings.size() - p.uniform_bindings.size()));
    // Uniform buffers: at most one small block per pipeline, within every device's minimum limits
    // (12 per stage, 16 KiB range), so no requirement is recorded.
  }
  if (r.cooperative_matrix_nv) r.extensions.push_back("VK_NV_cooperative_matrix");
  if (r.cooperative_matrix_khr) r.extensions.push_back("VK_KHR_cooperative_matrix");
  for (const auto& prog : plan.programs)
    for (const auto& c : prog.commands) {
      if (c.is_barrier) continue;
      for (int i = 0; i < 3; ++i)
        r.max_compute_work_group_count[i] = std::max(r.max_compute_work_group_count[i], c.dispatch.group_count[i]);
      for (const auto& s : c.dispatch.buffers)
        r.max_storage_buffer_range = std::max(r.max_storage_buffer_range, s.size);
    }
  return r;
}

std::vector<uint8_t> WriteBundle(const BundlePlan& plan) {
  flatbuffers::FlatBufferBuilder b(1 << 16);
  const auto& rq = plan.requirements;
  std::vector<flatbuffers::Offset<flatbuffers::String>> exts;
  for (const auto& e : rq.extensions) exts.push_back(b.CreateString(e));
  const std::vector<uint32_t> wgs(rq.max_compute_work_group_size, rq.max_compute_work_group_size + 3);
  const std::vector<uint32_t> wgc(rq.max_compute_work_group_count, rq.max_compute_work_group_count + 3);
  std::vector<fbb::CoopMatShape> cm_shapes;
  for (const auto& s : rq.coopmat_shapes) cm_shapes.emplace_back(s.m, s.n, s.k, s.a, s.b, s.c, s.result);
  auto req = fbb::CreateRequirements(
      b, rq.api_version, rq.shader_integer_dot_product, rq.shader_int8, rq.shader_float16,
      rq.storage_buffer_8bit_access, false,
      rq.subgroup_arithmetic, rq.required_subgroup_size, rq.max_compute_shared_memory_size,
      rq.max_compute_work_group_invocations, b.CreateVector(wgs), b.CreateVector(wgc),
      uint32_t(std::min<uint64_t>(rq.max_storage_buffer_range, 0xFFFFFFFFull)),
      rq.max_per_stage_descriptor_storage_buffers, rq.max_push_constants_size,
      rq.min_storage_buffer_offset_alignment, b.CreateVector(exts), rq.cooperative_matrix_nv,
      rq.vulkan_memory_model, rq.cooperative_matrix_khr, b.CreateVectorOfStructs(cm_shapes));

  std::vector<flatbuffers::Offset<fbb::ShaderModule>> mods;
  for (const auto& m : plan.modules)
    mods.push_back(fbb::CreateShaderModule(b, b.CreateVector(m.spirv), m.hash, b.CreateString(m.name)));

  std::vector<flatbuffers::Offset<fbb::Pipeline>> pipes;
  for (const auto& p : plan.pipelines) {
    std::vector<fbb::SpecConstant> spec;
    for (const auto& s : p.spec) spec.emplace_back(s.id, s.value);
    std::vector<flatbuffers::Offset<fbb::Binding>> binds;
    for (uint32_t bi : p.bindings) {
      const bool uniform = std::find(p.uniform_bindings.begin(), p.uniform_bindings.end(), bi) != p.uniform_bindings.end();
      binds.push_back(fbb::CreateBinding(b, bi, uniform ? fbb::DescriptorType::UniformBuffer : fbb::DescriptorType::StorageBuffer));
    }
    const std::vector<uint32_t> ls(p.local_size, p.local_size + 3);
    pipes.push_back(fbb::CreatePipeline(b, b.CreateString(p.name), p.module, b.CreateString("main"),
                                        b.CreateVectorOfStructs(spec), b.CreateVector(ls),
                                        p.push_constant_size, b.CreateVector(binds),
                                        p.required_subgroup_size, p.shared_memory_bytes));
  }

  auto io_vec = [&](const std::vector<PlanIo>& ios) {
    std::vector<flatbuffers::Offset<fbb::IoTensor>> v;
    for (const auto& io : ios)
      v.push_back(fbb::CreateIoTensor(b, b.CreateString(io.name), b.CreateVector(io.shape),
                                      fbb::DType(io.dtype), io.size, int8_t(io.scheme),
                                      b.CreateVector(io.scales), b.CreateVector(io.zero_points)));
    return b.CreateVector(v);
  };

  std::vector<flatbuffers::Offset<fbb::Program>> progs;
  for (const auto& pr : plan.programs) {
    std::vector<fbb::Command> types;
    std::vector<flatbuffers::Offset<void>> cmds;
    for (const auto& c : pr.commands) {
      if (c.is_barrier) {
        // VK_ACCESS_SHADER_WRITE_BIT (0x40) -> SHADER_READ (0x20) | SHADER_WRITE (0x40).
        types.push_back(fbb::Command::Barrier);
        cmds.push_back(fbb::CreateBarrier(b, 0x40, 0x60).Union());
        continue;
      }
      const auto& d = c.dispatch;
      std::vector<fbb::BufferSlice> slices;
      for (const auto& s : d.buffers) slices.emplace_back(fbb::BufferKind(s.kind), s.index, s.offset, s.size);
      const std::vector<uint32_t> gc(d.group_count, d.group_count + 3);
      types.push_back(fbb::Command::Dispatch);
      cmds.push_back(fbb::CreateDispatch(b, d.pipeline, b.CreateVectorOfStructs(slices),
                                         b.CreateVector(d.push), b.CreateVector(gc), d.layer)
                         .Union());
    }
    std::vector<flatbuffers::Offset<fbb::Layer>> layers;
    for (const auto& l : pr.layers)
      layers.push_back(fbb::CreateLayer(b, b.CreateString(l.name), b.CreateString(l.op),
                                        b.CreateString(l.variant), l.first_command, l.command_count,
                                        b.CreateString(l.reason), b.CreateString(l.detail),
                                        l.weight_bytes, l.integer_path, l.flops, l.op_index));
    std::vector<flatbuffers::Offset<fbb::PlannedTensor>> tensors;
    for (const auto& t : pr.arena_tensors)
      tensors.push_back(fbb::CreatePlannedTensor(b, b.CreateString(t.name), t.offset, t.size,
                                                 t.first_command, t.last_command));
    auto ins = io_vec(pr.inputs);
    auto outs = io_vec(pr.outputs);
    progs.push_back(fbb::CreateProgram(b, b.CreateString(pr.name), pr.tokens, pr.arena_size, ins, outs,
                                       b.CreateVector(types), b.CreateVector(cmds),
                                       b.CreateVector(layers), b.CreateVector(tensors), pr.position_input));
  }
  std::vector<flatbuffers::Offset<fbb::StateTensor>> states;
  for (const auto& st : plan.states)
    states.push_back(fbb::CreateStateTensor(b, b.CreateString(st.name), b.CreateVector(st.shape), fbb::DType(st.dtype),
                                            st.size));
  const auto states_v = b.CreateVector(states);
  std::vector<flatbuffers::Offset<fbb::BundleMeta>> meta;
  for (const auto& [k, v] : plan.metadata) meta.push_back(fbb::CreateBundleMeta(b, b.CreateString(k), b.CreateVector(v)));
  const auto meta_v = b.CreateVector(meta);
  const auto signer_v = b.CreateVector(std::vector<uint8_t>(32, 0));     // unsigned until `vkqc sign`
  const auto signature_v = b.CreateVector(std::vector<uint8_t>(64, 0));
  // integrity: a non-default placeholder so the field is written, then the checksum over the
  // finished flatbuffer with those 8 bytes read as zero.
  auto root = fbb::CreateBundle(b, kBundleFormatVersion, b.CreateString(plan.compiler_version),
                                b.CreateString(plan.target_profile), plan.graph_hash, req,
                                b.CreateVector(mods), b.CreateVector(pipes), b.CreateVector(progs),
                                plan.weights.size(), ~0ull, states_v, plan.max_context, meta_v, signer_v,
                                signature_v);
  b.FinishSizePrefixed(root, fbb::BundleIdentifier());

  std::vector<uint8_t> out(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  {
    auto* bundle = fbb::GetMutableBundle(out.data() + 4);
    const uint8_t* field = reinterpret_cast<const flatbuffers::Table*>(bundle)->GetAddressOf(fbb::Bundle::VT_INTEGRITY);
    bundle->mutate_integrity(BundleIntegrity(out.data(), out.size(), field));
  }
  out.resize((out.size() + 63) / 64 * 64, 0);
  out.insert(out.end(), plan.weights.begin(), plan.weights.end());
  return out;
}

}  // namespace vkqc
