// Bundle verification (DESIGN 3): the flatbuffers verifier, then every cross-reference.
#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "internal.h"
#include "coopmat_khr.h"
#include "schema/bundle_integrity.h"

namespace vkqc::rt {
namespace {

constexpr uint64_t kMaxBytes = 1ull << 40;

uint64_t DTypeBytes(fbb::DType t) {
  switch (t) {
    case fbb::DType::F32: case fbb::DType::I32: return 4;
    case fbb::DType::F16: return 2;
    case fbb::DType::I8: case fbb::DType::U8: return 1;
    default: return 0;
  }
}

Err Bad(const std::string& m) { return Fail(VKQC_ERROR_INVALID_BUNDLE, "invalid bundle: " + m); }

// flatbuffers' verifier checks a vector's length word for 4-byte alignment, not its elements for
// theirs: a crafted bundle can place a vector of 8-byte values (shapes, buffer slices) at 4 mod 8
// (the fuzz long run found the misaligned load). The buffer itself is 8-aligned (ParseBundle).
template <class V>
bool Aligned8(const V* v) {
  return !v || reinterpret_cast<uintptr_t>(v->Data()) % 8 == 0;
}

Err CheckIo(const flatbuffers::Vector<flatbuffers::Offset<fbb::IoTensor>>* ios, const std::string& where) {
  if (!ios) return Ok();
  for (uint32_t i = 0; i < ios->size(); ++i) {
    const auto* io = ios->Get(i);
    const std::string w = where + " tensor " + std::to_string(i) + " ('" + io->name()->str() + "')";
    if (!Aligned8(io->shape())) return Bad(w + ": misaligned shape vector");
    if (!io->shape() || io->shape()->size() == 0 || io->shape()->size() > 8) return Bad(w + ": bad rank");
    uint64_t n = 1;
    for (int64_t d : *io->shape()) {
      if (d < 1 || d > (1ll << 31)) return Bad(w + ": bad dimension " + std::to_string(d));
      n *= uint64_t(d);
      if (n > kMaxBytes) return Bad(w + ": too large");
    }
    const uint64_t eb = DTypeBytes(io->dtype());
    if (eb == 0) return Bad(w + ": unsupported dtype");
    if (io->size() != n * eb) return Bad(w + ": size " + std::to_string(io->size()) + " != shape x dtype");
  }
  return Ok();
}

}  // namespace

Err ParseBundle(const uint8_t* data, size_t size, BundleView* out) {
  if (!data || size < 8) return Bad("file is too small (" + std::to_string(size) + " bytes)");
  // The callers copy a bundle at an address that is not a multiple of 8 first (AlignedBundle).
  if (reinterpret_cast<uintptr_t>(data) % 8 != 0)
    return Fail(VKQC_ERROR_INVALID_ARGUMENT, "internal: bundle bytes not 8-byte aligned");
  uint32_t fb_size = 0;
  std::memcpy(&fb_size, data, 4);
  if (uint64_t(fb_size) + 4 > size)
    return Bad("truncated: the flatbuffer claims " + std::to_string(fb_size) + " bytes, the file has " +
               std::to_string(size));
  // The root offset and the file identifier come first (the fuzzer found the identifier read past
  // a flatbuffer of 4 bytes).
  if (fb_size < 8) return Bad("the flatbuffer is too small (" + std::to_string(fb_size) + " bytes)");
  if (!fbb::BundleBufferHasIdentifier(data + 4)) return Bad("not a vkqc bundle (file identifier is not VKQB)");
  flatbuffers::Verifier v(data, size_t(fb_size) + 4, 64, 10000000);
  if (!fbb::VerifySizePrefixedBundleBuffer(v)) return Bad("the flatbuffer failed verification (corrupt or truncated)");
  const fbb::Bundle* b = fbb::GetBundle(data + 4);
  const uint64_t seg = (uint64_t(fb_size) + 4 + 63) / 64 * 64;
  if (seg + b->weight_segment_size() != size)
    return Bad("weight segment of " + std::to_string(b->weight_segment_size()) + " bytes at offset " +
               std::to_string(seg) + " does not match the file size " + std::to_string(size));
  // Version 1 (written before the checksum existed) has none; version 2 must carry it and match.
  if (b->format_version() != 1 && b->format_version() != 2)
    return Bad("unsupported format version " + std::to_string(b->format_version()) +
               " (this runtime reads 1 and 2; the file may come from a newer vkqc)");
  if (b->format_version() == 2) {
    // Bundle derives privately from flatbuffers::Table (same address): ask the table for the field.
    const uint8_t* field = reinterpret_cast<const flatbuffers::Table*>(b)->GetAddressOf(fbb::Bundle::VT_INTEGRITY);
    if (!field) return Bad("the integrity checksum is missing (corrupt bundle)");
    if (BundleIntegrity(data, size_t(fb_size) + 4, field) != b->integrity())
      return Bad("integrity checksum mismatch: the bundle's metadata or shader code changed after it was written "
                 "(corrupt file); recompile it");
  }
  if ((b->signer() && b->signer()->size() != 32) || (b->signature() && b->signature()->size() != 64) ||
      (!b->signer() != !b->signature()))
    return Bad("malformed signature slots (signer must be 32 bytes, signature 64)");
  if (!b->requirements()) return Bad("missing requirements");
  const auto* rq = b->requirements();
  if (!rq->max_compute_work_group_size() || rq->max_compute_work_group_size()->size() != 3 ||
      !rq->max_compute_work_group_count() || rq->max_compute_work_group_count()->size() != 3)
    return Bad("requirements: workgroup size/count must have 3 entries");
  // Checked before any slice's offset is taken modulo it.
  if (rq->min_storage_buffer_offset_alignment() == 0 ||
      (rq->min_storage_buffer_offset_alignment() & (rq->min_storage_buffer_offset_alignment() - 1)))
    return Bad("requirements: offset alignment must be a power of two");

  const uint32_t nmod = b->modules() ? b->modules()->size() : 0;
  for (uint32_t i = 0; i < nmod; ++i) {
    const auto* m = b->modules()->Get(i);
    if (m->spirv()->size() < 5 || m->spirv()->Get(0) != 0x07230203u)
      return Bad("shader module " + std::to_string(i) + " is not SPIR-V");
    // FNV-1a 64 of the SPIR-V bytes, written by the compiler: catches corruption before the
    // driver sees the code.
    if (ModuleContentHash(m->spirv()->data(), m->spirv()->size()) != m->content_hash())
      return Bad("shader module " + std::to_string(i) + " is corrupt (checksum mismatch)");
    if (std::string why = CheckSpecConstantOps(m->spirv()->data(), m->spirv()->size()); !why.empty())
      return Bad("shader module " + std::to_string(i) + ": " + why);
  }
  const uint32_t npipe = b->pipelines() ? b->pipelines()->size() : 0;
  for (uint32_t i = 0; i < npipe; ++i) {
    const auto* p = b->pipelines()->Get(i);
    const std::string w = "pipeline " + std::to_string(i);
    if (p->module_() >= nmod) return Bad(w + ": module index " + std::to_string(p->module_()) + " out of range");
    if (!p->local_size() || p->local_size()->size() != 3) return Bad(w + ": local_size must have 3 entries");
    if (!p->bindings() || p->bindings()->size() == 0 || p->bindings()->size() > 16) return Bad(w + ": bad bindings");
    for (uint32_t j = 0; j < p->bindings()->size(); ++j) {
      if (p->bindings()->Get(j)->binding() >= 16) return Bad(w + ": binding number out of range");
      const auto type = p->bindings()->Get(j)->type();
      if (type != fbb::DescriptorType::StorageBuffer && type != fbb::DescriptorType::UniformBuffer)
        return Bad(w + ": unsupported descriptor type");
    }
    if (p->push_constant_size() > 256 || p->push_constant_size() % 4) return Bad(w + ": bad push-constant size");
    // The module's own resource declarations against the pipeline's (a crafted module that moved a
    // buffer to another binding or set would read a descriptor nobody wrote): every DescriptorSet
    // decoration must be 0 and every Binding one of the pipeline's bindings.
    {
      const auto* spv = b->modules()->Get(p->module_())->spirv();
      const uint32_t* wd = spv->data();
      const size_t nw = spv->size();
      for (size_t at = 5; at < nw;) {
        const uint32_t count = wd[at] >> 16, op = wd[at] & 0xffffu;
        if (count == 0 || at + count > nw) return Bad(w + ": its shader module has a malformed instruction");
        if (op == 71 && count >= 4 && (wd[at + 2] == 33 || wd[at + 2] == 34)) {  // OpDecorate Binding/DescriptorSet
          const uint32_t v = wd[at + 3];
          bool ok = wd[at + 2] == 34 ? v == 0 : false;
          for (uint32_t j = 0; wd[at + 2] == 33 && j < p->bindings()->size(); ++j) ok = ok || p->bindings()->Get(j)->binding() == v;
          if (!ok)
            return Bad(w + ": its shader module declares " + (wd[at + 2] == 33 ? "binding " : "descriptor set ") +
                       std::to_string(v) + ", which the pipeline does not bind");
        }
        at += count;
      }
    }
    if (p->spec_constants() && p->spec_constants()->size() > 64) return Bad(w + ": too many specialization constants");
    {
      std::vector<uint32_t> ids, values;
      if (p->spec_constants())
        for (const auto* sc : *p->spec_constants()) {
          ids.push_back(sc->id());
          values.push_back(sc->value());
        }
      const uint32_t expected[3] = {p->local_size()->Get(0), p->local_size()->Get(1), p->local_size()->Get(2)};
      const auto* spv = b->modules()->Get(p->module_())->spirv();
      if (std::string why = CheckWorkgroupSize(spv->data(), spv->size(), ids.data(), values.data(), ids.size(), expected);
          !why.empty())
        return Bad(w + ": " + why);
      uint64_t invocations = 1;
      for (int d = 0; d < 3; ++d) {
        if (expected[d] == 0 || expected[d] > rq->max_compute_work_group_size()->Get(d))
          return Bad(w + ": local size " + std::to_string(expected[d]) + " beyond the bundle's own requirement");
        invocations *= expected[d];
      }
      if (invocations > rq->max_compute_work_group_invocations())
        return Bad(w + ": " + std::to_string(invocations) + " invocations beyond the bundle's own requirement");
    }
  }
  if (!b->programs() || b->programs()->size() == 0) return Bad("no programs");
  const uint32_t nstate = b->states() ? b->states()->size() : 0;
  if (nstate > 4096) return Bad("too many state tensors");
  bool cache = false;  // a KV cache ([Hkv, S, D]); the compiler's arrival counters alone are rank 1
  for (uint32_t i = 0; i < nstate; ++i) {
    const auto* st = b->states()->Get(i);
    if (!Aligned8(st->shape())) return Bad("state tensor " + std::to_string(i) + ": misaligned shape vector");
    if (st->size() == 0 || st->size() % 4 || st->size() > kMaxBytes)
      return Bad("state tensor " + std::to_string(i) + ": bad size " + std::to_string(st->size()));
    cache = cache || (st->shape() && st->shape()->size() == 3);
  }
  if ((cache && b->max_context() == 0) || b->max_context() > (1u << 24))
    return Bad("a bundle with a KV cache needs max_context in 1..16777216");
  for (uint32_t pi = 0; pi < b->programs()->size(); ++pi) {
    const auto* pr = b->programs()->Get(pi);
    const std::string pw = "program " + std::to_string(pi);
    if (auto e = CheckIo(pr->inputs(), pw + " input"); !e.ok()) return e;
    if (auto e = CheckIo(pr->outputs(), pw + " output"); !e.ok()) return e;
    const uint32_t nin = pr->inputs() ? pr->inputs()->size() : 0;
    const uint32_t nout = pr->outputs() ? pr->outputs()->size() : 0;
    const uint32_t nlayers = pr->layers() ? pr->layers()->size() : 0;
    if (pr->arena_size() > kMaxBytes) return Bad(pw + ": arena too large");
    if (pr->position_input() >= 0) {
      if (uint32_t(pr->position_input()) >= nin) return Bad(pw + ": position input index out of range");
      const auto* pio = pr->inputs()->Get(uint32_t(pr->position_input()));
      if (pio->dtype() != fbb::DType::I32 || pio->size() != 4) return Bad(pw + ": the position input is not i32 [1]");
      if (nstate == 0) return Bad(pw + ": a position input without state");
    } else if (pr->position_input() != -1) {
      return Bad(pw + ": bad position input index");
    }
    const auto* types = pr->commands_type();
    const auto* cmds = pr->commands();
    if (!types || !cmds || types->size() != cmds->size()) return Bad(pw + ": malformed command list");
    for (uint32_t ci = 0; ci < cmds->size(); ++ci) {
      const std::string cw = pw + " command " + std::to_string(ci);
      const auto t = fbb::Command(types->Get(ci));
      if (t == fbb::Command::Barrier) continue;
      if (t != fbb::Command::Dispatch) return Bad(cw + ": unknown command type");
      const auto* d = static_cast<const fbb::Dispatch*>(cmds->Get(ci));
      if (d->pipeline() >= npipe) return Bad(cw + ": pipeline index " + std::to_string(d->pipeline()) + " out of range");
      const auto* p = b->pipelines()->Get(d->pipeline());
      if (!d->buffers() || d->buffers()->size() != p->bindings()->size())
        return Bad(cw + ": buffer count does not match the pipeline's bindings");
      if (!Aligned8(d->buffers())) return Bad(cw + ": misaligned buffer-slice vector");
      if (!d->group_count() || d->group_count()->size() != 3) return Bad(cw + ": group_count must have 3 entries");
      for (uint32_t g : *d->group_count())
        if (g == 0) return Bad(cw + ": zero workgroup count");
      const uint32_t push = d->push_constants() ? d->push_constants()->size() : 0;
      if (push != p->push_constant_size()) return Bad(cw + ": push-constant bytes do not match the pipeline");
      if (d->layer() >= nlayers) return Bad(cw + ": layer index out of range");
      for (uint32_t si = 0; si < d->buffers()->size(); ++si) {
        const auto* s = d->buffers()->Get(si);
        uint64_t limit = 0;
        switch (s->kind()) {
          case fbb::BufferKind::Weights: limit = b->weight_segment_size(); break;
          case fbb::BufferKind::Arena: limit = pr->arena_size(); break;
          case fbb::BufferKind::Input:
            if (s->index() >= nin) return Bad(cw + ": input index out of range");
            limit = (pr->inputs()->Get(s->index())->size() + 3) / 4 * 4;  // int8 tensors: whole words
            break;
          case fbb::BufferKind::Output:
            if (s->index() >= nout) return Bad(cw + ": output index out of range");
            limit = (pr->outputs()->Get(s->index())->size() + 3) / 4 * 4;
            break;
          case fbb::BufferKind::State:
            if (s->index() >= nstate) return Bad(cw + ": state index out of range");
            limit = b->states()->Get(s->index())->size();
            break;
          default: return Bad(cw + ": unknown buffer kind");
        }
        if (s->size() == 0 || s->offset() > limit || s->size() > limit - s->offset())
          return Bad(cw + " binding " + std::to_string(si) + ": slice [offset " + std::to_string(s->offset()) +
                     ", " + std::to_string(s->size()) + " bytes] lies outside its buffer (" +
                     std::to_string(limit) + " bytes)");
        if (s->offset() % rq->min_storage_buffer_offset_alignment() != 0)
          return Bad(cw + " binding " + std::to_string(si) + ": offset not aligned to the bundle's alignment");
        // Uniform blocks: within every device's minimum range (16 KiB) and offset alignment (256).
        if (p->bindings()->Get(si)->type() == fbb::DescriptorType::UniformBuffer &&
            (s->size() > 16384 || s->offset() % 256 != 0))
          return Bad(cw + " binding " + std::to_string(si) + ": a uniform-buffer slice must be at most 16 KiB at a "
                     "256-byte aligned offset");
      }
    }
    for (uint32_t li = 0; li < nlayers; ++li) {
      const auto* l = pr->layers()->Get(li);
      if (uint64_t(l->first_command()) + l->command_count() > cmds->size())
        return Bad(pw + " layer " + std::to_string(li) + ": command range out of range");
    }
  }
  out->bundle = b;
  out->weights = data + seg;
  out->weights_size = b->weight_segment_size();
  return Ok();
}

std::vector<std::string> MissingRequirements(const fbb::Requirements* r, const DeviceCaps& c) {
  std::vector<std::string> miss;
  auto ver = [](uint32_t v) {
    return std::to_string(v >> 22) + "." + std::to_string((v >> 12) & 0x3FF);
  };
  if (c.api_version < r->api_version())
    miss.push_back("Vulkan " + ver(r->api_version()) + " (device has " + ver(c.api_version) + ")");
  if (r->shader_integer_dot_product() && !c.shader_integer_dot_product)
    miss.push_back("feature shaderIntegerDotProduct");
  if (r->shader_float16() && !c.shader_float16) miss.push_back("feature shaderFloat16 (16-bit float arithmetic)");
  if (r->shader_int8() && !c.shader_int8) miss.push_back("feature shaderInt8 (8-bit integer arithmetic)");
  if (r->storage_buffer_8bit_access() && !c.storage_buffer_8bit_access)
    miss.push_back("feature storageBuffer8BitAccess");
  if (r->vulkan_memory_model() && !c.vulkan_memory_model) miss.push_back("feature vulkanMemoryModel");
  if (r->cooperative_matrix_nv() && !c.cooperative_matrix_nv)
    miss.push_back("extension VK_NV_cooperative_matrix with its cooperativeMatrix feature (tensor-core GEMM)");
  if (r->cooperative_matrix_khr() && !c.cooperative_matrix_khr)
    miss.push_back("extension VK_KHR_cooperative_matrix with its cooperativeMatrix feature (tensor-core GEMM)");
  if (r->cooperative_matrix_khr() && c.cooperative_matrix_khr && r->cooperative_matrix_shapes())
    for (const auto* s : *r->cooperative_matrix_shapes()) {
      const std::array<uint32_t, 7> want{s->m(), s->n(), s->k(), s->a(), s->b(), s->c(), s->result()};
      if (std::find(c.coopmat_shapes.begin(), c.coopmat_shapes.end(), want) != c.coopmat_shapes.end()) continue;
      auto name = [](uint32_t t) { return std::string(khr::ComponentTypeName(t) ? khr::ComponentTypeName(t) : "?"); };
      miss.push_back("cooperative-matrix shape " + std::to_string(s->m()) + "x" + std::to_string(s->n()) + "x" +
                     std::to_string(s->k()) + " " + name(s->a()) + " x " + name(s->b()) + " + " + name(s->c()) +
                     " -> " + name(s->result()) + " at subgroup scope (VK_KHR_cooperative_matrix)");
    }
  if (r->subgroup_arithmetic() && !c.subgroup_arithmetic_compute)
    miss.push_back("subgroup arithmetic operations in compute shaders");
  if (r->required_subgroup_size()) {
    const uint32_t sg = r->required_subgroup_size();
    if (!c.subgroup_size_control || !c.required_subgroup_size_compute)
      miss.push_back("feature subgroupSizeControl for compute (to pin subgroup size " + std::to_string(sg) + ")");
    else if (sg < c.min_subgroup_size || sg > c.max_subgroup_size)
      miss.push_back("subgroup size " + std::to_string(sg) + " (device supports " +
                     std::to_string(c.min_subgroup_size) + ".." + std::to_string(c.max_subgroup_size) + ")");
    if (!c.compute_full_subgroups) miss.push_back("feature computeFullSubgroups");
  }
  auto lim = [&](const char* name, uint64_t need, uint64_t have) {
    if (need > have)
      miss.push_back(std::string(name) + " >= " + std::to_string(need) + " (device has " + std::to_string(have) + ")");
  };
  lim("maxComputeSharedMemorySize", r->max_compute_shared_memory_size(), c.max_compute_shared_memory_size);
  lim("maxComputeWorkGroupInvocations", r->max_compute_work_group_invocations(), c.max_compute_work_group_invocations);
  for (int i = 0; i < 3; ++i) {
    lim(("maxComputeWorkGroupSize[" + std::to_string(i) + "]").c_str(), r->max_compute_work_group_size()->Get(i),
        c.max_compute_work_group_size[i]);
    lim(("maxComputeWorkGroupCount[" + std::to_string(i) + "]").c_str(), r->max_compute_work_group_count()->Get(i),
        c.max_compute_work_group_count[i]);
  }
  lim("maxStorageBufferRange", r->max_storage_buffer_range(), c.max_storage_buffer_range);
  lim("maxPerStageDescriptorStorageBuffers", r->max_per_stage_descriptor_storage_buffers(),
      c.max_per_stage_descriptor_storage_buffers);
  lim("maxPushConstantsSize", r->max_push_constants_size(), c.max_push_constants_size);
  if (c.min_storage_buffer_offset_alignment > r->min_storage_buffer_offset_alignment())
    miss.push_back("minStorageBufferOffsetAlignment <= " + std::to_string(r->min_storage_buffer_offset_alignment()) +
                   " (device has " + std::to_string(c.min_storage_buffer_offset_alignment) + ")");
  if (r->extensions())
    for (const auto* e : *r->extensions()) {
      bool found = false;
      for (const auto& x : c.extensions) found |= x == e->str();
      if (r->cooperative_matrix_nv() && e->str() == "VK_NV_cooperative_matrix") continue;  // reported above
      if (r->cooperative_matrix_khr() && e->str() == khr::kCoopMatExtension) continue;
      if (!found) miss.push_back("extension " + e->str());
    }
  return miss;
}

}  // namespace vkqc::rt
