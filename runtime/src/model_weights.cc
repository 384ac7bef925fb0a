// The weight segment on the device: the buffers weight_parts.h plans (one, or parts of whole
// bindings) and the upload into them (mapped memory, or a bounded staging buffer).
#include <algorithm>
#include <cstring>

#include "model.h"

using namespace vkqc::rt;

Err vkqc_model_t::PlanWeights(uint64_t max_bytes) {
  uint64_t limit = UINT64_MAX;
  for (uint64_t l : {ctx->caps.max_memory_allocation_size, ctx->caps.max_buffer_size, max_bytes})
    if (l) limit = std::min(limit, l);
  std::vector<std::pair<uint64_t, uint64_t>> slices;
  const auto* progs = view.bundle->programs();
  for (uint32_t pi = 0; pi < progs->size(); ++pi) {
    const auto* pr = progs->Get(pi);
    for (uint32_t ci = 0; ci < pr->commands()->size(); ++ci) {
      if (fbb::Command(pr->commands_type()->Get(ci)) != fbb::Command::Dispatch) continue;
      for (const auto* s : *static_cast<const fbb::Dispatch*>(pr->commands()->Get(ci))->buffers())
        if (s->kind() == fbb::BufferKind::Weights) slices.emplace_back(s->offset(), s->size());
    }
  }
  std::string why;
  if (!PlanWeightParts(std::move(slices), view.weights_size, limit, &weight_parts, &why))
    return Fail(VKQC_ERROR_UNSUPPORTED_DEVICE, "device '" + ctx->caps.name + "' cannot hold this bundle's weights: " + why);
  weight_buffers.resize(weight_parts.size());
  for (size_t i = 0; i < weight_parts.size(); ++i)
    if (auto e = CreateBuffer(weight_parts[i].end - weight_parts[i].begin, false, &weight_buffers[i]); !e.ok()) return e;
  return Ok();
}

Err vkqc_model_t::Upload(uint64_t staging_bytes, bool force_staging) {
  if (weight_parts.empty()) return Ok();
  if (!force_staging && std::all_of(weight_buffers.begin(), weight_buffers.end(), [](const Buffer& b) { return b.mapped; })) {
    for (size_t i = 0; i < weight_parts.size(); ++i)
      std::memcpy(weight_buffers[i].mapped, view.weights + weight_parts[i].begin, weight_parts[i].end - weight_parts[i].begin);
    return Ok();
  }
  // Bounded staging: copy in chunks through one host-visible buffer.
  uint64_t largest = 0;
  for (const WeightPart& p : weight_parts) largest = std::max(largest, p.end - p.begin);
  Buffer staging;
  const uint64_t chunk = std::min<uint64_t>(largest, staging_bytes);
  if (auto e = CreateBuffer(chunk, true, &staging); !e.ok()) return e;
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = ctx->pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VkCommandBuffer cb;
  if (VkResult r = vkAllocateCommandBuffers(ctx->device, &cai, &cb); r != VK_SUCCESS) {
    DestroyBuffer(&staging);
    return VkFail(r, "vkAllocateCommandBuffers");
  }
  Err err;
  bool first = true;
  for (size_t i = 0; i < weight_parts.size() && err.ok(); ++i) {
    const uint64_t size = weight_parts[i].end - weight_parts[i].begin;
    for (uint64_t off = 0; off < size && err.ok(); off += chunk) {
      const uint64_t n = std::min(chunk, size - off);
      std::memcpy(staging.mapped, view.weights + weight_parts[i].begin + off, n);
      VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
      bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
      vkBeginCommandBuffer(cb, &bi);
      if (!first) {
        // The previous chunk's copy read the staging buffer the host just rewrote: order them.
        VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        mb.srcAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
        mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, nullptr, 0,
                             nullptr);
      }
      first = false;
      VkBufferCopy copy{0, off, n};
      vkCmdCopyBuffer(cb, staging.buffer, weight_buffers[i].buffer, 1, &copy);
      vkEndCommandBuffer(cb);
      err = ctx->SubmitAndWait(cb);
    }
  }
  vkFreeCommandBuffers(ctx->device, ctx->pool, 1, &cb);
  DestroyBuffer(&staging);
  return err;
}
