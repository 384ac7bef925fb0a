// Load = verify -> check device -> allocate -> upload -> pipelines -> descriptors -> record.
// Run = submit the recorded command buffer and wait. Nothing is allocated on the run path.
#include "model.h"

#include <algorithm>
#include <cstring>

namespace vkqc::rt {
namespace {

int FindMemoryType(const VkPhysicalDeviceMemoryProperties& mem, uint32_t bits, VkMemoryPropertyFlags want) {
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i)
    if ((bits & (1u << i)) && (mem.memoryTypes[i].propertyFlags & want) == want) return int(i);
  return -1;
}

vkqc_dtype ToDType(fbb::DType t) { return vkqc_dtype(int(t)); }

}  // namespace
}  // namespace vkqc::rt

using namespace vkqc::rt;

Err vkqc_model_t::CreateBuffer(uint64_t size, Mem where, Buffer* out) {
  const bool host_visible = where != Mem::Device;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = std::max<uint64_t>(size, 16);
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
              VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  if (VkResult r = vkCreateBuffer(ctx->device, &bci, ctx->alloc, &out->buffer); r != VK_SUCCESS)
    return VkFail(r, "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(ctx->device, out->buffer, &req);
  int type = -1;
  if (where == Mem::Readback)
    type = FindMemoryType(ctx->mem, req.memoryTypeBits,
                          VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                              VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  if (type >= 0) {
  } else if (host_visible) {
    type = FindMemoryType(ctx->mem, req.memoryTypeBits,
                          VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                              VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (type < 0)
      type = FindMemoryType(ctx->mem, req.memoryTypeBits,
                            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  } else {
    type = FindMemoryType(ctx->mem, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (type < 0) type = FindMemoryType(ctx->mem, req.memoryTypeBits, 0);
  }
  if (type < 0) return Fail(VKQC_ERROR_OUT_OF_MEMORY, "no suitable memory type");
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = uint32_t(type);
  VkResult r = vkAllocateMemory(ctx->device, &mai, ctx->alloc, &out->memory);
  if (r != VK_SUCCESS && host_visible && (ctx->mem.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) {
    // The small device-local host-visible heap may be full: fall back to system memory.
    type = FindMemoryType(ctx->mem, req.memoryTypeBits,
                          VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    mai.memoryTypeIndex = uint32_t(type);
    r = vkAllocateMemory(ctx->device, &mai, ctx->alloc, &out->memory);
  }
  if (r != VK_SUCCESS) return VkFail(r, "vkAllocateMemory");
  if (VkResult r2 = vkBindBufferMemory(ctx->device, out->buffer, out->memory, 0); r2 != VK_SUCCESS)
    return VkFail(r2, "vkBindBufferMemory");
  out->size = size;
  out->host_visible = ctx->mem.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
  out->cached = ctx->mem.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  if (out->host_visible) {
    if (VkResult r3 = vkMapMemory(ctx->device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped); r3 != VK_SUCCESS)
      return VkFail(r3, "vkMapMemory");
  }
  return Ok();
}

void vkqc_model_t::DestroyBuffer(Buffer* b) {
  if (b->buffer) vkDestroyBuffer(ctx->device, b->buffer, ctx->alloc);
  if (b->memory) vkFreeMemory(ctx->device, b->memory, ctx->alloc);
  *b = Buffer{};
}

Err vkqc_model_t::CreatePipelines() {
  const auto* b = view.bundle;
  const uint32_t nmod = b->modules() ? b->modules()->size() : 0;
  for (uint32_t i = 0; i < nmod; ++i) {
    const auto* spv = b->modules()->Get(i)->spirv();
    VkShaderModuleCreateInfo ci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    ci.codeSize = spv->size() * 4;
    ci.pCode = spv->data();
    VkShaderModule m;
    if (VkResult r = vkCreateShaderModule(ctx->device, &ci, ctx->alloc, &m); r != VK_SUCCESS)
      return VkFail(r, "vkCreateShaderModule");
    modules.push_back(m);
  }
  const uint32_t np = b->pipelines() ? b->pipelines()->size() : 0;
  std::vector<VkComputePipelineCreateInfo> cis(np);
  std::vector<std::vector<VkSpecializationMapEntry>> entries(np);
  std::vector<std::vector<uint32_t>> values(np);
  std::vector<VkSpecializationInfo> spec(np);
  std::vector<VkPipelineShaderStageRequiredSubgroupSizeCreateInfo> sg(np);
  for (uint32_t i = 0; i < np; ++i) {
    const auto* p = b->pipelines()->Get(i);
    std::vector<VkDescriptorSetLayoutBinding> binds;
    for (const auto* bd : *p->bindings())
      binds.push_back({bd->binding(), VkDescriptorType(bd->type()), 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
    VkDescriptorSetLayoutCreateInfo dl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dl.bindingCount = uint32_t(binds.size());
    dl.pBindings = binds.data();
    VkDescriptorSetLayout sl;
    if (VkResult r = vkCreateDescriptorSetLayout(ctx->device, &dl, ctx->alloc, &sl); r != VK_SUCCESS)
      return VkFail(r, "vkCreateDescriptorSetLayout");
    set_layouts.push_back(sl);
    VkPushConstantRange pcr{VK_SHADER_STAGE_COMPUTE_BIT, 0, p->push_constant_size()};
    VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pl.setLayoutCount = 1;
    pl.pSetLayouts = &sl;
    pl.pushConstantRangeCount = p->push_constant_size() ? 1 : 0;
    pl.pPushConstantRanges = &pcr;
    VkPipelineLayout lay;
    if (VkResult r = vkCreatePipelineLayout(ctx->device, &pl, ctx->alloc, &lay); r != VK_SUCCESS)
      return VkFail(r, "vkCreatePipelineLayout");
    layouts.push_back(lay);
    if (p->spec_constants())
      for (uint32_t j = 0; j < p->spec_constants()->size(); ++j) {
        entries[i].push_back({p->spec_constants()->Get(j)->id(), j * 4, 4});
        values[i].push_back(p->spec_constants()->Get(j)->value());
      }
    spec[i] = {uint32_t(entries[i].size()), entries[i].data(), values[i].size() * 4, values[i].data()};
    VkComputePipelineCreateInfo& ci = cis[i];
    ci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = modules[p->module_()];
    ci.stage.pName = "main";
    ci.stage.pSpecializationInfo = &spec[i];
    if (p->required_subgroup_size()) {
      sg[i] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
      sg[i].requiredSubgroupSize = p->required_subgroup_size();
      ci.stage.pNext = &sg[i];
      ci.stage.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
    }
    ci.layout = lay;
    if (ctx->capture_statistics) ci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  }
  pipelines.assign(np, VK_NULL_HANDLE);
  if (np) {
    if (VkResult r = vkCreateComputePipelines(ctx->device, ctx->cache, np, cis.data(), ctx->alloc, pipelines.data());
        r != VK_SUCCESS)
      return VkFail(r, "vkCreateComputePipelines");
  }
  if (ctx->capture_statistics) return CaptureStatistics();
  return Ok();
}

// The driver's statistics of every pipeline (one executable each: a compute pipeline has one
// stage; should a driver report several, their statistics follow one another).
Err vkqc_model_t::CaptureStatistics() {
  statistics.assign(pipelines.size(), {});
  for (size_t i = 0; i < pipelines.size(); ++i) {
    VkPipelineInfoKHR pi{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
    pi.pipeline = pipelines[i];
    uint32_t ne = 0;
    if (VkResult r = ctx->get_executable_properties(ctx->device, &pi, &ne, nullptr); r != VK_SUCCESS)
      return VkFail(r, "vkGetPipelineExecutablePropertiesKHR");
    for (uint32_t e = 0; e < ne; ++e) {
      VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
      ei.pipeline = pipelines[i];
      ei.executableIndex = e;
      uint32_t ns = 0;
      if (VkResult r = ctx->get_executable_statistics(ctx->device, &ei, &ns, nullptr); r != VK_SUCCESS)
        return VkFail(r, "vkGetPipelineExecutableStatisticsKHR");
      std::vector<VkPipelineExecutableStatisticKHR> st(ns, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
      if (VkResult r = ctx->get_executable_statistics(ctx->device, &ei, &ns, st.data()); r < VK_SUCCESS)
        return VkFail(r, "vkGetPipelineExecutableStatisticsKHR");
      st.resize(ns);
      for (const auto& x : st) {
        double v = 0;
        switch (x.format) {
          case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: v = x.value.b32 ? 1 : 0; break;
          case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: v = double(x.value.i64); break;
          case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: v = double(x.value.u64); break;
          case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: v = x.value.f64; break;
          default: continue;  // a format this header does not know
        }
        statistics[i].push_back({std::string(x.name, strnlen(x.name, VK_MAX_DESCRIPTION_SIZE)),
                                 std::string(x.description, strnlen(x.description, VK_MAX_DESCRIPTION_SIZE)), v});
      }
    }
  }
  return Ok();
}

VkDescriptorBufferInfo vkqc_model_t::BufferFor(uint32_t program, const vkqc::fb::bundle::BufferSlice* s) const {
  const Program& p = programs[program];
  switch (s->kind()) {
    case fbb::BufferKind::Weights: {
      const size_t i = WeightPartOf(weight_parts, s->offset());
      return {weight_buffers[i].buffer, s->offset() - weight_parts[i].begin, s->size()};
    }
    case fbb::BufferKind::Arena: return {p.arena.buffer, s->offset(), s->size()};
    case fbb::BufferKind::Input: return {p.inputs[s->index()].buffer.buffer, s->offset(), s->size()};
    case fbb::BufferKind::Output: return {p.outputs[s->index()].buffer.buffer, s->offset(), s->size()};
    case fbb::BufferKind::State: return {states[s->index()].buffer.buffer, s->offset(), s->size()};
  }
  return {VK_NULL_HANDLE, 0, 0};
}

void vkqc_model_t::CountSets(uint32_t pi, uint32_t* sets, uint32_t* storage, uint32_t* uniform) const {
  const auto* b = view.bundle;
  const auto* pr = b->programs()->Get(pi);
  for (uint32_t ci = 0; ci < pr->commands()->size(); ++ci)
    if (fbb::Command(pr->commands_type()->Get(ci)) == fbb::Command::Dispatch) {
      ++*sets;
      const auto* d = static_cast<const fbb::Dispatch*>(pr->commands()->Get(ci));
      for (const auto* bd : *b->pipelines()->Get(d->pipeline())->bindings())
        ++*(bd->type() == fbb::DescriptorType::UniformBuffer ? uniform : storage);
    }
}

Err vkqc_model_t::WriteSets(uint32_t pi, VkDescriptorPool from, const Rebind* rebind,
                            std::vector<VkDescriptorSet>* out) {
  const int32_t pos_input = programs[pi].position_input;
  const auto* b = view.bundle;
  const auto* pr = b->programs()->Get(pi);
  for (uint32_t ci = 0; ci < pr->commands()->size(); ++ci) {
    if (fbb::Command(pr->commands_type()->Get(ci)) != fbb::Command::Dispatch) continue;
    const auto* d = static_cast<const fbb::Dispatch*>(pr->commands()->Get(ci));
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = from;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &set_layouts[d->pipeline()];
    VkDescriptorSet set;
    if (VkResult r = vkAllocateDescriptorSets(ctx->device, &ai, &set); r != VK_SUCCESS)
      return VkFail(r, "vkAllocateDescriptorSets");
    const auto* binds = b->pipelines()->Get(d->pipeline())->bindings();
    std::vector<VkDescriptorBufferInfo> infos(d->buffers()->size());
    std::vector<VkWriteDescriptorSet> writes(d->buffers()->size());
    for (uint32_t si = 0; si < d->buffers()->size(); ++si) {
      const auto* s = d->buffers()->Get(si);
      infos[si] = BufferFor(pi, s);
      if (rebind) {
        const bool in = s->kind() == fbb::BufferKind::Input, out_ = s->kind() == fbb::BufferKind::Output;
        const uint64_t at = in && int32_t(s->index()) == pos_input   ? rebind->position_at
                            : in && s->index() == rebind->token_input ? rebind->token_in_at
                            : out_ && s->index() == rebind->token_output ? rebind->token_out_at
                                                                         : ~0ull;
        if (at != ~0ull) infos[si] = {rebind->ring, at + s->offset(), s->size()};
      }
      writes[si] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[si].dstSet = set;
      writes[si].dstBinding = binds->Get(si)->binding();
      writes[si].descriptorCount = 1;
      writes[si].descriptorType = VkDescriptorType(binds->Get(si)->type());
      writes[si].pBufferInfo = &infos[si];
    }
    vkUpdateDescriptorSets(ctx->device, uint32_t(writes.size()), writes.data(), 0, nullptr);
    out->push_back(set);
  }
  return Ok();
}

Err vkqc_model_t::CreateDescriptors() {
  uint32_t sets = 0, storage = 0, uniform = 0;
  for (uint32_t pi = 0; pi < programs.size(); ++pi) CountSets(pi, &sets, &storage, &uniform);
  if (sets == 0) return Ok();
  VkDescriptorPoolSize ps[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max(storage, 1u)},
                                {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, std::max(uniform, 1u)}};
  VkDescriptorPoolCreateInfo pci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pci.maxSets = sets;
  pci.poolSizeCount = 2;
  pci.pPoolSizes = ps;
  if (VkResult r = vkCreateDescriptorPool(ctx->device, &pci, ctx->alloc, &pool); r != VK_SUCCESS)
    return VkFail(r, "vkCreateDescriptorPool");
  for (uint32_t pi = 0; pi < programs.size(); ++pi)
    if (auto e = WriteSets(pi, pool, nullptr, &programs[pi].sets); !e.ok()) return e;
  return Ok();
}

namespace {

// Records `fill` into a one-time command buffer, submits it and waits.
template <class Fill>
Err OneTimeCommands(vkqc_context_t* ctx, Fill&& fill) {
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = ctx->pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VkCommandBuffer cb;
  if (VkResult r = vkAllocateCommandBuffers(ctx->device, &cai, &cb); r != VK_SUCCESS)
    return VkFail(r, "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkBeginCommandBuffer(cb, &bi);
  fill(cb);
  vkEndCommandBuffer(cb);
  Err e = ctx->SubmitAndWait(cb);
  vkFreeCommandBuffers(ctx->device, ctx->pool, 1, &cb);
  return e;
}

}  // namespace

Err vkqc_model_t::Poison() {
  return OneTimeCommands(ctx, [&](VkCommandBuffer cb) {
    for (auto& p : programs) {
      vkCmdFillBuffer(cb, p.arena.buffer, 0, VK_WHOLE_SIZE, 0xFFFFFFFFu);
      for (auto& o : p.outputs) vkCmdFillBuffer(cb, o.buffer.buffer, 0, VK_WHOLE_SIZE, 0xFFFFFFFFu);
    }
  });
}

Err vkqc_model_t::Record(uint32_t pi, VkCommandBuffer cb, VkQueryPool ts, bool per_layer,
                         const std::vector<uint8_t>* leave_out) {
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  if (VkResult r = vkBeginCommandBuffer(cb, &bi); r != VK_SUCCESS) return VkFail(r, "vkBeginCommandBuffer");
  RecordBody(pi, cb, ts, per_layer, nullptr, leave_out);
  if (VkResult r = vkEndCommandBuffer(cb); r != VK_SUCCESS) return VkFail(r, "vkEndCommandBuffer");
  return Ok();
}

void vkqc_model_t::RecordBody(uint32_t pi, VkCommandBuffer cb, VkQueryPool ts, bool per_layer,
                              const std::vector<VkDescriptorSet>* sets, const std::vector<uint8_t>* leave_out) {
  const auto* pr = view.bundle->programs()->Get(pi);
  Program& prog = programs[pi];
  if (!sets) sets = &prog.sets;
  // Order this run after everything earlier on the queue: weight upload and poisoning
  // (transfer), the previous run (compute), and host writes of the inputs.
  VkMemoryBarrier pre{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  pre.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT |
                      VK_ACCESS_HOST_WRITE_BIT;
  pre.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &pre, 0, nullptr, 0, nullptr);
  // Timestamps: per layer (queries 2i, 2i+1) and the whole buffer (2n, 2n+1); or, without
  // per-layer ones, the whole buffer only (queries 0, 1), which leaves the program's timing as is.
  const uint32_t nlayers = per_layer ? uint32_t(prog.layers.size()) : 0;
  if (ts) {
    vkCmdResetQueryPool(cb, ts, 0, 2 * nlayers + 2);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, ts, 2 * nlayers);
    // Layers without commands (folded or fused into another layer) still get their two queries
    // written: waiting on a query that is never written hangs (NVIDIA waits forever).
    for (uint32_t li = 0; li < nlayers; ++li)
      if (!prog.layers[li].command_count) {
        vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, ts, 2 * li);
        vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, ts, 2 * li + 1);
      }
  }
  // Profiling (leave_out): the left-out layers' dispatches are not recorded, and the barriers
  // between two recorded dispatches become one, with the union of their access masks (so every
  // hazard between recorded dispatches that one of them covered is still covered).
  std::vector<uint8_t> skip;
  VkAccessFlags pending_src = 0, pending_dst = 0;
  bool dispatched_since_barrier = false;
  if (leave_out) {
    skip.assign(pr->commands()->size(), 0);
    for (uint32_t li = 0; li < prog.layers.size() && li < leave_out->size(); ++li)
      if ((*leave_out)[li])
        for (uint32_t c = 0; c < prog.layers[li].command_count; ++c) skip.at(prog.layers[li].first_command + c) = 1;
  }
  auto barrier = [&](VkAccessFlags src, VkAccessFlags dst) {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = src;
    mb.dstAccessMask = dst;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb,
                         0, nullptr, 0, nullptr);
  };
  uint32_t set_index = 0;
  for (uint32_t ci = 0; ci < pr->commands()->size(); ++ci) {
    if (ts)
      for (uint32_t li = 0; li < nlayers; ++li)
        if (prog.layers[li].command_count && prog.layers[li].first_command == ci)
          vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, ts, 2 * li);
    if (fbb::Command(pr->commands_type()->Get(ci)) == fbb::Command::Barrier) {
      const auto* br = static_cast<const fbb::Barrier*>(pr->commands()->Get(ci));
      if (leave_out) {
        pending_src |= br->src_access();
        pending_dst |= br->dst_access();
      } else {
        barrier(br->src_access(), br->dst_access());
      }
    } else if (leave_out && skip[ci]) {
      ++set_index;  // one set per dispatch, recorded or not
    } else {
      if (leave_out && (pending_src || pending_dst) && dispatched_since_barrier) {
        barrier(pending_src, pending_dst);
        dispatched_since_barrier = false;
      }
      pending_src = pending_dst = 0;  // none before the first dispatch recorded: the run's own barrier orders it
      dispatched_since_barrier = true;
      const auto* d = static_cast<const fbb::Dispatch*>(pr->commands()->Get(ci));
      vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines[d->pipeline()]);
      vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layouts[d->pipeline()], 0, 1,
                              &(*sets)[set_index++], 0, nullptr);
      if (d->push_constants() && d->push_constants()->size())
        vkCmdPushConstants(cb, layouts[d->pipeline()], VK_SHADER_STAGE_COMPUTE_BIT, 0, d->push_constants()->size(),
                           d->push_constants()->data());
      vkCmdDispatch(cb, d->group_count()->Get(0), d->group_count()->Get(1), d->group_count()->Get(2));
    }
    if (ts)
      for (uint32_t li = 0; li < nlayers; ++li)
        if (prog.layers[li].command_count && prog.layers[li].first_command + prog.layers[li].command_count - 1 == ci)
          vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, ts, 2 * li + 1);
  }
  if (ts) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, ts, 2 * nlayers + 1);
  VkMemoryBarrier post{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  post.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  post.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &post, 0, nullptr, 0,
                       nullptr);
}

Err vkqc_model_t::Load(const vkqc_model_options& o) {
  force_staged_reads = o.force_staged_reads != 0;
  if (auto e = ParseBundle(bytes.data(), bytes.size(), &view); !e.ok()) return e;
  if (!ctx->trusted_keys.empty()) {  // before anything touches the device
    const std::string why = vkqc::VerifyBundleSignature(bytes.data(), bytes.size(), ctx->trusted_keys.data(), ctx->trusted_keys.size());
    if (!why.empty()) return Fail(VKQC_ERROR_INVALID_BUNDLE, "signature check failed: " + why);
  }
  if (ctx->validate_spirv && view.bundle->modules()) {  // before anything touches the device
    for (uint32_t i = 0; i < view.bundle->modules()->size(); ++i) {
      const auto* spv = view.bundle->modules()->Get(i)->spirv();
      std::string why;
      if (!ValidateSpirvModule(spv->data(), spv->size(), &why))
        return Fail(VKQC_ERROR_INVALID_BUNDLE, "shader module " + std::to_string(i) + " is not valid SPIR-V (" + why +
                                                   "); refused before the driver saw it");
    }
  }
  const auto missing = MissingRequirements(view.bundle->requirements(), ctx->caps);
  if (!missing.empty()) {
    std::string m = "device '" + ctx->caps.name + "' cannot run this bundle (compiled for '" +
                    (view.bundle->target_profile() ? view.bundle->target_profile()->str() : "?") + "'); missing:";
    for (const auto& s : missing) m += "\n  - " + s;
    return Fail(VKQC_ERROR_UNSUPPORTED_DEVICE, m);
  }
  if (auto e = PlanWeights(o.max_weight_buffer_bytes); !e.ok()) return e;
  if (view.bundle->states()) {
    for (const auto* st : *view.bundle->states()) {
      StateInfo si;
      si.name = st->name()->str();
      if (auto e = CreateBuffer(st->size(), false, &si.buffer); !e.ok()) return e;
      states.push_back(std::move(si));
    }
    max_context = view.bundle->max_context();
  }
  const auto* progs = view.bundle->programs();
  programs.resize(progs->size());
  for (uint32_t pi = 0; pi < progs->size(); ++pi) {
    const auto* pr = progs->Get(pi);
    Program& p = programs[pi];
    p.tokens = pr->tokens();
    p.position_input = pr->position_input();
    if (auto e = CreateBuffer(pr->arena_size(), false, &p.arena); !e.ok()) return e;
    auto make_io = [&](const fbb::IoTensor* t, std::vector<IoInfo>& v) -> Err {
      IoInfo io;
      io.name = t->name()->str();
      io.shape.assign(t->shape()->begin(), t->shape()->end());
      io.dtype = ToDType(t->dtype());
      io.size = t->size();
      if (auto e = CreateBuffer((io.size + 3) / 4 * 4, true, &io.buffer); !e.ok()) return e;
      v.push_back(std::move(io));
      return Ok();
    };
    if (pr->inputs())
      for (const auto* t : *pr->inputs())
        if (auto e = make_io(t, p.inputs); !e.ok()) return e;
    if (pr->outputs())
      for (const auto* t : *pr->outputs())
        if (auto e = make_io(t, p.outputs); !e.ok()) return e;
    for (auto& io : p.inputs)
      if (!io.buffer.mapped) return Fail(VKQC_ERROR_OUT_OF_MEMORY, "no host-visible memory for input buffers");
    if (pr->layers())
      for (const auto* l : *pr->layers()) {
        LayerInfo li;
        li.name = l->name() ? l->name()->str() : "";
        li.op = l->op() ? l->op()->str() : "";
        li.variant = l->variant() ? l->variant()->str() : "";
        li.integer_path = l->integer_path();
        li.flops = l->flops();
        li.weight_bytes = l->weight_bytes();
        li.first_command = l->first_command();
        li.command_count = l->command_count();
        li.op_index = l->op_index();
        p.layers.push_back(std::move(li));
      }
  }
  if (auto e = Upload(o.staging_bytes ? o.staging_bytes : (16ull << 20), o.force_staging); !e.ok()) return e;
  if (o.poison_memory)
    if (auto e = Poison(); !e.ok()) return e;
  if (!states.empty())
    if (auto e = ResetState(); !e.ok()) return e;
  if (auto e = CreatePipelines(); !e.ok()) return e;
  if (auto e = CreateDescriptors(); !e.ok()) return e;
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if (VkResult r = vkCreateFence(ctx->device, &fci, ctx->alloc, &fence); r != VK_SUCCESS)
    return VkFail(r, "vkCreateFence");
  for (uint32_t pi = 0; pi < programs.size(); ++pi) {
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = ctx->pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    if (VkResult r = vkAllocateCommandBuffers(ctx->device, &cai, &programs[pi].cmd); r != VK_SUCCESS)
      return VkFail(r, "vkAllocateCommandBuffers");
    if (auto e = Record(pi, programs[pi].cmd, VK_NULL_HANDLE, false); !e.ok()) return e;
  }
  return Ok();
}

Err vkqc_model_t::PreparePosition(uint32_t pi) {
  Program& p = programs[pi];
  if (p.position_input < 0) return Ok();
  const uint32_t tokens = std::max<uint32_t>(p.tokens, 1);
  if (uint64_t(position) + tokens > max_context)
    return Fail(VKQC_ERROR_INVALID_ARGUMENT,
                "context overflow: position " + std::to_string(position) + " + " + std::to_string(tokens) +
                    " tokens exceeds the max context " + std::to_string(max_context) +
                    " of this bundle's KV cache; reset the state (vkqc_model_reset_state) or compile a larger context");
  const int32_t pos = int32_t(position);
  std::memcpy(p.inputs[size_t(p.position_input)].buffer.mapped, &pos, 4);
  return Ok();
}

Err vkqc_model_t::Settle() {
  if (lost) return Fail(VKQC_ERROR_DEVICE_LOST, "the device was lost; destroy the model (and the context)");
  if (in_callback)
    return Fail(VKQC_ERROR_INVALID_ARGUMENT, "called from vkqc_model_decode_greedy's on_token, which must not use the model");
  if (auto e = WaitChain(ctx->timeout_ns); !e.ok()) return e;
  if (in_flight < 0) return Ok();
  Err e = Wait(ctx->timeout_ns);
  if (e.status == VKQC_ERROR_TIMEOUT)
    e.message = "program " + std::to_string(in_flight) + " submitted earlier is still running after the context's "
                "timeout (" + std::to_string(ctx->timeout_ns / 1000000) + " ms); vkqc_model_wait for it";
  return e;
}

Err vkqc_model_t::Submit(uint32_t pi) {
  if (auto e = Settle(); !e.ok()) return e;
  if (auto e = PreparePosition(pi); !e.ok()) return e;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &programs[pi].cmd;
  if (VkResult r = vkQueueSubmit(ctx->queue, 1, &si, fence); r != VK_SUCCESS) return Note(VkFail(r, "vkQueueSubmit"));
  in_flight = int32_t(pi);
  if (programs[pi].position_input >= 0) position += std::max<uint32_t>(programs[pi].tokens, 1);
  return Ok();
}

Err vkqc_model_t::Wait(uint64_t timeout_ns) {
  if (lost) return Fail(VKQC_ERROR_DEVICE_LOST, "the device was lost; destroy the model (and the context)");
  if (in_flight < 0) return Ok();
  const VkResult r = vkWaitForFences(ctx->device, 1, &fence, VK_TRUE, timeout_ns);
  if (r == VK_TIMEOUT)
    return Fail(VKQC_ERROR_TIMEOUT, "program " + std::to_string(in_flight) + " is still running");
  if (r != VK_SUCCESS) return Note(VkFail(r, "vkWaitForFences"));
  vkResetFences(ctx->device, 1, &fence);
  in_flight = -1;
  return Ok();
}

Err vkqc_model_t::Run(uint32_t pi) {
  if (auto e = Submit(pi); !e.ok()) return e;
  Err e = Wait(ctx->timeout_ns);
  if (e.status == VKQC_ERROR_TIMEOUT)
    e.message += " after the context's timeout (" + std::to_string(ctx->timeout_ns / 1000000) +
                 " ms); vkqc_model_wait for it, or raise vkqc_context_options.timeout_ns";
  return e;
}

Err vkqc_model_t::ResetState() {
  Err e = OneTimeCommands(ctx, [&](VkCommandBuffer cb) {
    // After any earlier run's reads and writes of the state.
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                         nullptr, 0, nullptr);
    for (auto& st : states) vkCmdFillBuffer(cb, st.buffer.buffer, 0, VK_WHOLE_SIZE, 0u);
  });
  if (e.ok()) position = 0;
  return e;
}

Err vkqc_model_t::ReadState(uint32_t si, void* data, size_t size) {
  return CopyToHost(states[si].buffer.buffer, 0, data, size);
}

Err vkqc_model_t::AllocateTimed(uint32_t queries, VkQueryPool* pool, VkCommandBuffer* cmd) {
  if (!*pool) {
    VkQueryPoolCreateInfo qci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qci.queryCount = queries;
    if (VkResult r = vkCreateQueryPool(ctx->device, &qci, ctx->alloc, pool); r != VK_SUCCESS)
      return VkFail(r, "vkCreateQueryPool");
  }
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = ctx->pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  if (VkResult r = vkAllocateCommandBuffers(ctx->device, &cai, cmd); r != VK_SUCCESS)
    return VkFail(r, "vkAllocateCommandBuffers");
  return Ok();
}

Err vkqc_model_t::SubmitTimed(uint32_t pi, VkCommandBuffer cmd, VkQueryPool pool, std::vector<uint64_t>* ticks) {
  if (auto e = PreparePosition(pi); !e.ok()) return e;  // runs at the current position, not advancing it
  if (auto e = ctx->SubmitAndWait(cmd); !e.ok()) return e;
  if (VkResult r = vkGetQueryPoolResults(ctx->device, pool, 0, uint32_t(ticks->size()), ticks->size() * 8,
                                         ticks->data(), 8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
      r != VK_SUCCESS)
    return VkFail(r, "vkGetQueryPoolResults");
  return Ok();
}

double vkqc_model_t::TicksNs(uint64_t from, uint64_t to) const {
  const uint64_t mask = ctx->caps.timestamp_valid_bits >= 64 ? ~0ull : ((1ull << ctx->caps.timestamp_valid_bits) - 1);
  return double((to - from) & mask) * ctx->caps.timestamp_period;
}

Err vkqc_model_t::RunTimed(uint32_t pi, double* layer_ns, double* total_ns) {
  Program& p = programs[pi];
  if (ctx->caps.timestamp_valid_bits == 0 || ctx->caps.timestamp_period <= 0)
    return Fail(VKQC_ERROR_UNSUPPORTED_DEVICE, "the device's compute queue does not support timestamps");
  const bool per_layer = layer_ns != nullptr;
  const uint32_t nl = per_layer ? uint32_t(p.layers.size()) : 0;
  VkCommandBuffer& cmd = per_layer ? p.timed_cmd : p.total_cmd;
  VkQueryPool& pool = per_layer ? p.queries : p.total_queries;
  if (!cmd) {
    if (auto e = AllocateTimed(2 * nl + 2, &pool, &cmd); !e.ok()) return e;
    if (auto e = Record(pi, cmd, pool, per_layer); !e.ok()) return e;
  }
  std::vector<uint64_t> t(2 * nl + 2);
  if (auto e = SubmitTimed(pi, cmd, pool, &t); !e.ok()) return e;
  for (uint32_t li = 0; li < nl; ++li)
    layer_ns[li] = p.layers[li].command_count ? TicksNs(t[2 * li], t[2 * li + 1]) : 0.0;
  *total_ns = TicksNs(t[2 * nl], t[2 * nl + 1]);
  return Ok();
}

Err vkqc_model_t::RunTimedWithout(uint32_t pi, const uint8_t* leave_out, double* total_ns) {
  Program& p = programs[pi];
  if (ctx->caps.timestamp_valid_bits == 0 || ctx->caps.timestamp_period <= 0)
    return Fail(VKQC_ERROR_UNSUPPORTED_DEVICE, "the device's compute queue does not support timestamps");
  std::vector<uint8_t> mask(p.layers.size());
  for (size_t li = 0; li < mask.size(); ++li) mask[li] = leave_out[li] ? 1 : 0;
  Program::Without* w = nullptr;
  for (auto& c : p.without)
    if (c.cmd && c.mask == mask) w = &c;
  if (!w) {  // record it in the slot used least recently
    w = p.without[0].last_use <= p.without[1].last_use ? &p.without[0] : &p.without[1];
    if (w->cmd) vkFreeCommandBuffers(ctx->device, ctx->pool, 1, &w->cmd);
    w->cmd = VK_NULL_HANDLE;
    w->mask.clear();
    if (auto e = AllocateTimed(2, &w->queries, &w->cmd); !e.ok()) return e;
    if (auto e = Record(pi, w->cmd, w->queries, false, &mask); !e.ok()) return e;
    w->mask = std::move(mask);
  }
  w->last_use = ++p.without_uses;
  std::vector<uint64_t> t(2);
  if (auto e = SubmitTimed(pi, w->cmd, w->queries, &t); !e.ok()) return e;
  *total_ns = TicksNs(t[0], t[1]);
  return Ok();
}

Err vkqc_model_t::ReadArena(uint32_t pi, uint64_t offset, void* data, size_t size) {
  Program& p = programs[pi];
  if (p.arena.mapped) {
    std::memcpy(data, static_cast<const uint8_t*>(p.arena.mapped) + offset, size);
    return Ok();
  }
  return CopyToHost(p.arena.buffer, offset, data, size);
}

// Copies [offset, offset + size) of a device buffer to host memory through the readback buffer
// (host-cached memory where the device has it), grown to the largest read so far.
Err vkqc_model_t::CopyToHost(VkBuffer src, uint64_t offset, void* data, size_t size) {
  if (size == 0) return Ok();
  if (readback.size < size) {
    DestroyBuffer(&readback);
    if (auto e = CreateBuffer(size, Mem::Readback, &readback); !e.ok()) return e;
    if (!readback.mapped) return Fail(VKQC_ERROR_OUT_OF_MEMORY, "no host-visible memory for reads");
  }
  Err e = OneTimeCommands(ctx, [&](VkCommandBuffer cb) {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
    // After the host's reads of earlier contents (the fence of that submission ordered them).
    VkBufferCopy copy{offset, 0, size};
    vkCmdCopyBuffer(cb, src, readback.buffer, 1, &copy);
    VkMemoryBarrier hb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    hb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    hb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &hb, 0, nullptr, 0,
                         nullptr);
  });
  if (e.ok()) std::memcpy(data, readback.mapped, size);
  return e;
}

Err vkqc_model_t::ReadOutput(uint32_t pi, uint32_t index, uint64_t offset, void* data, size_t size) {
  const IoInfo& io = programs[pi].outputs[index];
  if (!io.buffer.mapped) return Fail(VKQC_ERROR_OUT_OF_MEMORY, "output memory is not host-visible");
  if (auto e = Settle(); !e.ok()) return e;
  // In place: cached memory, or a few bytes (a token id) where uncached reads cost less than a copy.
  if (!force_staged_reads && (io.buffer.cached || size <= 256)) {
    std::memcpy(data, static_cast<const uint8_t*>(io.buffer.mapped) + offset, size);
    return Ok();
  }
  return CopyToHost(io.buffer.buffer, offset, data, size);
}

void vkqc_model_t::Destroy() {
  if (!ctx || !ctx->device) return;
  // A submission in flight must finish before its resources go (a lost device returns at once).
  if (in_flight >= 0) vkWaitForFences(ctx->device, 1, &fence, VK_TRUE, UINT64_MAX);
  vkDeviceWaitIdle(ctx->device);
  DestroyChain();
  if (fence) vkDestroyFence(ctx->device, fence, ctx->alloc);
  for (auto& p : programs) {
    if (p.cmd) vkFreeCommandBuffers(ctx->device, ctx->pool, 1, &p.cmd);
    if (p.timed_cmd) vkFreeCommandBuffers(ctx->device, ctx->pool, 1, &p.timed_cmd);
    if (p.queries) vkDestroyQueryPool(ctx->device, p.queries, ctx->alloc);
    if (p.total_cmd) vkFreeCommandBuffers(ctx->device, ctx->pool, 1, &p.total_cmd);
    if (p.total_queries) vkDestroyQueryPool(ctx->device, p.total_queries, ctx->alloc);
    for (auto& w : p.without) {
      if (w.cmd) vkFreeCommandBuffers(ctx->device, ctx->pool, 1, &w.cmd);
      if (w.queries) vkDestroyQueryPool(ctx->device, w.queries, ctx->alloc);
    }
    DestroyBuffer(&p.arena);
    for (auto& io : p.inputs) DestroyBuffer(&io.buffer);
    for (auto& io : p.outputs) DestroyBuffer(&io.buffer);
  }
  if (pool) vkDestroyDescriptorPool(ctx->device, pool, ctx->alloc);
  for (auto pl : pipelines) if (pl) vkDestroyPipeline(ctx->device, pl, ctx->alloc);
  for (auto l : layouts) vkDestroyPipelineLayout(ctx->device, l, ctx->alloc);
  for (auto l : set_layouts) vkDestroyDescriptorSetLayout(ctx->device, l, ctx->alloc);
  for (auto m : modules) vkDestroyShaderModule(ctx->device, m, ctx->alloc);
  for (auto& st : states) DestroyBuffer(&st.buffer);
  for (auto& w : weight_buffers) DestroyBuffer(&w);
  DestroyBuffer(&readback);
}
