// vkqc_model_decode_greedy: greedy decoding with each run's next token read by the next run on the
// GPU, several runs queued at once. A run-and-read loop leaves the GPU idle between tokens for the
// host's submit, fence wait and 4-byte read (0.11-0.12 ms per token on an H100, bench/RESULTS.md
// 2026-11-24); here the host reads run i's token while run i + 1 executes.
//
// Slot s (of `depth`) has the program's command buffer, recorded once, with its own descriptor
// sets: where the program binds its position input, its token input and its next-token output,
// they bind the ring (host-visible): slot s's position (written by the host before the submit),
// slot s - 1's token (written by the run before) and slot s's token (read by the host after the
// fence). So nothing is copied and the command buffer has no command the program does not: the
// runs execute in submission order on the one queue, the program's own first barrier ordering
// each after the last.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "model.h"

using namespace vkqc::rt;

namespace {

bool IsI32Scalar(const IoInfo& io) { return io.dtype == VKQC_I32 && io.shape.size() == 1 && io.shape[0] == 1; }

// A refusal's message, formatted out of line (the runtime's size is a budget: tests/e2e/package.sh).
__attribute__((format(printf, 2, 3), noinline)) Err Refuse(vkqc_status status, const char* fmt, ...) {
  char buf[320];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return Fail(status, buf);
}
constexpr vkqc_status kInvalid = VKQC_ERROR_INVALID_ARGUMENT;

}  // namespace

void vkqc_model_t::DestroyChain() {
  for (VkCommandBuffer cb : chain.cmds)
    if (cb) vkFreeCommandBuffers(ctx->device, ctx->pool, 1, &cb);
  for (VkFence f : chain.fences)
    if (f) vkDestroyFence(ctx->device, f, ctx->alloc);
  if (chain.queries) vkDestroyQueryPool(ctx->device, chain.queries, ctx->alloc);
  if (chain.pool) vkDestroyDescriptorPool(ctx->device, chain.pool, ctx->alloc);
  DestroyBuffer(&chain.ring);
  chain = GreedyChain{};
}

Err vkqc_model_t::WaitChain(uint64_t timeout_ns) {
  for (size_t s = 0; s < chain.pending.size(); ++s) {
    if (!chain.pending[s]) continue;
    const VkResult r = vkWaitForFences(ctx->device, 1, &chain.fences[s], VK_TRUE, timeout_ns);
    if (r == VK_TIMEOUT)
      return Refuse(VKQC_ERROR_TIMEOUT, "a greedy-decoding run is still running after %llu ms",
                    (unsigned long long)(timeout_ns / 1000000));
    if (r != VK_SUCCESS) return Note(VkFail(r, "vkWaitForFences"));
    vkResetFences(ctx->device, 1, &chain.fences[s]);
    chain.pending[s] = false;
  }
  return Ok();
}

Err vkqc_model_t::PrepareChain(uint32_t pi, uint32_t tin, uint32_t tout, uint32_t depth) {
  if (chain.program == pi && chain.token_input == tin && chain.token_output == tout && chain.depth == depth)
    return Ok();
  DestroyChain();  // nothing of it is in flight: the caller settled
  const bool timed = ctx->caps.timestamp_valid_bits != 0 && ctx->caps.timestamp_period > 0;
  constexpr uint64_t kSlot = GreedyChain::kSlotBytes, kToken = GreedyChain::kTokenOffset;
  Err e = [&]() -> Err {
    if (auto e = CreateBuffer(depth * kSlot, true, &chain.ring); !e.ok()) return e;
    if (!chain.ring.mapped) return Fail(VKQC_ERROR_OUT_OF_MEMORY, "no host-visible memory for the greedy-decoding ring");
    uint32_t nsets = 0, storage = 0, uniform = 0;
    CountSets(pi, &nsets, &storage, &uniform);
    VkDescriptorPoolSize ps[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max(storage * depth, 1u)},
                                  {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, std::max(uniform * depth, 1u)}};
    VkDescriptorPoolCreateInfo pci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pci.maxSets = std::max(nsets * depth, 1u);
    pci.poolSizeCount = 2;
    pci.pPoolSizes = ps;
    if (VkResult r = vkCreateDescriptorPool(ctx->device, &pci, ctx->alloc, &chain.pool); r != VK_SUCCESS)
      return VkFail(r, "vkCreateDescriptorPool");
    if (timed) {
      VkQueryPoolCreateInfo qci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
      qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
      qci.queryCount = 2 * depth;
      if (VkResult r = vkCreateQueryPool(ctx->device, &qci, ctx->alloc, &chain.queries); r != VK_SUCCESS)
        return VkFail(r, "vkCreateQueryPool");
    }
    chain.cmds.assign(depth, VK_NULL_HANDLE);
    chain.fences.assign(depth, VK_NULL_HANDLE);
    chain.pending.assign(depth, false);
    chain.sets.assign(depth, {});
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = ctx->pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = depth;
    if (VkResult r = vkAllocateCommandBuffers(ctx->device, &cai, chain.cmds.data()); r != VK_SUCCESS) {
      chain.cmds.clear();
      return VkFail(r, "vkAllocateCommandBuffers");
    }
    for (uint32_t s = 0; s < depth; ++s) {
      // This slot's position, the slot before's token (the previous run's), this slot's token.
      Rebind rb;
      rb.ring = chain.ring.buffer;
      rb.token_input = tin;
      rb.token_output = tout;
      rb.position_at = s * kSlot;
      rb.token_in_at = (s + depth - 1) % depth * kSlot + kToken;
      rb.token_out_at = s * kSlot + kToken;
      if (auto e = WriteSets(pi, chain.pool, &rb, &chain.sets[s]); !e.ok()) return e;
      VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
      if (VkResult r = vkCreateFence(ctx->device, &fci, ctx->alloc, &chain.fences[s]); r != VK_SUCCESS)
        return VkFail(r, "vkCreateFence");
      VkCommandBuffer cb = chain.cmds[s];
      VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
      if (VkResult r = vkBeginCommandBuffer(cb, &bi); r != VK_SUCCESS) return VkFail(r, "vkBeginCommandBuffer");
      if (timed) {
        vkCmdResetQueryPool(cb, chain.queries, 2 * s, 2);
        vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, chain.queries, 2 * s);
      }
      RecordBody(pi, cb, VK_NULL_HANDLE, false, &chain.sets[s]);
      if (timed) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, chain.queries, 2 * s + 1);
      if (VkResult r = vkEndCommandBuffer(cb); r != VK_SUCCESS) return VkFail(r, "vkEndCommandBuffer");
    }
    return Ok();
  }();
  if (!e.ok()) {
    DestroyChain();
    return e;
  }
  chain.program = pi;
  chain.token_input = tin;
  chain.token_output = tout;
  chain.depth = depth;
  return Ok();
}

Err vkqc_model_t::DecodeGreedy(const vkqc_greedy_options& o, int32_t first_token, uint32_t max_tokens,
                               int32_t* out_tokens, uint32_t* out_count, double* out_gpu_ns) {
  *out_count = 0;
  *out_gpu_ns = 0;
  if (auto e = Settle(); !e.ok()) return e;
  if (max_context == 0)
    return Refuse(kInvalid, "greedy decoding needs a stateful bundle (a decoder compiled with attention ops over "
                            "state caches)");
  // The program, its token input and its next-token output.
  uint32_t pi = o.program;
  if (pi == VKQC_AUTO) {
    for (uint32_t i = 0; i < programs.size() && pi == VKQC_AUTO; ++i)
      if (programs[i].tokens == 1) pi = i;
    if (pi == VKQC_AUTO)
      return Refuse(kInvalid, "the bundle has no tokens=1 program (compile with --tokens 1,...)");
  } else if (pi >= programs.size()) {
    return Refuse(kInvalid, "program index %u out of range", pi);
  } else if (programs[pi].tokens != 1) {
    return Refuse(kInvalid, "program %u runs %u tokens; greedy decoding runs a tokens=1 program", pi,
                  programs[pi].tokens);
  }
  const Program& p = programs[pi];
  if (p.position_input < 0)
    return Refuse(kInvalid, "program %u has no position input", pi);
  uint32_t tin = o.token_input, tout = o.token_output;
  if (tin == VKQC_AUTO) {
    for (uint32_t i = 0; i < p.inputs.size(); ++i) {
      if (int32_t(i) == p.position_input) continue;
      if (tin != VKQC_AUTO || !IsI32Scalar(p.inputs[i]))
        return Refuse(kInvalid, "program %u has inputs besides the position other than one i32 [1] token id ('%s'): "
                                "give token_input", pi, p.inputs[i].name.c_str());
      tin = i;
    }
    if (tin == VKQC_AUTO)
      return Refuse(kInvalid, "program %u has no token input", pi);
  } else if (tin >= p.inputs.size() || int32_t(tin) == p.position_input || !IsI32Scalar(p.inputs[tin])) {
    return Refuse(kInvalid, "token_input %u is not an i32 [1] input of program %u other than its position", tin, pi);
  }
  if (tout == VKQC_AUTO) {
    for (uint32_t i = 0; i < p.outputs.size() && tout == VKQC_AUTO; ++i)
      if (IsI32Scalar(p.outputs[i])) tout = i;
    if (tout == VKQC_AUTO)
      return Refuse(kInvalid, "program %u has no i32 [1] next-token output (the graph's argmax)", pi);
  } else if (tout >= p.outputs.size() || !IsI32Scalar(p.outputs[tout])) {
    return Refuse(kInvalid, "token_output %u is not an i32 [1] output of program %u", tout, pi);
  }
  const uint32_t depth = o.depth ? o.depth : 2;
  if (depth > 4) return Refuse(kInvalid, "depth %u is not in 1..4", depth);
  if (max_tokens == 0) return Ok();
  if (uint64_t(position) + max_tokens > max_context)
    return Refuse(kInvalid, "context overflow: position %u + %u tokens exceeds the max context %u of this bundle's KV cache",
                  position, max_tokens, max_context);
  if (auto e = PrepareChain(pi, tin, tout, depth); !e.ok()) return e;

  auto* ring = static_cast<uint8_t*>(chain.ring.mapped);
  auto put = [&](uint64_t at, int32_t v) { std::memcpy(ring + at, &v, 4); };
  constexpr uint64_t kSlot = GreedyChain::kSlotBytes, kToken = GreedyChain::kTokenOffset;
  put((depth - 1) * kSlot + kToken, first_token);  // slot 0 reads the token of the slot before
  const uint32_t start = position;
  const uint64_t mask = ctx->caps.timestamp_valid_bits >= 64 ? ~0ull : ((1ull << ctx->caps.timestamp_valid_bits) - 1);
  uint64_t t_first = 0, t_last = 0;
  uint32_t submitted = 0, done = 0, delivered = 0;
  bool stop = false;
  Err err;
  while (err.ok()) {
    while (!stop && submitted < max_tokens && submitted - done < depth) {
      const uint32_t s = submitted % depth;
      put(s * kSlot, int32_t(start + submitted));
      VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
      si.commandBufferCount = 1;
      si.pCommandBuffers = &chain.cmds[s];
      if (VkResult r = vkQueueSubmit(ctx->queue, 1, &si, chain.fences[s]); r != VK_SUCCESS) {
        err = Note(VkFail(r, "vkQueueSubmit"));
        break;
      }
      chain.pending[s] = true;
      ++submitted;
    }
    if (!err.ok() || done == submitted) break;
    const uint32_t s = done % depth;
    const VkResult r = vkWaitForFences(ctx->device, 1, &chain.fences[s], VK_TRUE, ctx->timeout_ns);
    if (r == VK_TIMEOUT) {
      err = Refuse(VKQC_ERROR_TIMEOUT, "greedy-decoding run %u is still running after the context's timeout (%llu ms)", done,
                   (unsigned long long)(ctx->timeout_ns / 1000000));
      break;
    }
    if (r != VK_SUCCESS) {
      err = Note(VkFail(r, "vkWaitForFences"));
      break;
    }
    vkResetFences(ctx->device, 1, &chain.fences[s]);
    chain.pending[s] = false;
    ++done;
    if (stop) continue;  // queued past the stop: discarded
    int32_t token;
    std::memcpy(&token, ring + s * kSlot + kToken, 4);
    if (chain.queries) {
      uint64_t t[2] = {0, 0};
      if (VkResult q = vkGetQueryPoolResults(ctx->device, chain.queries, 2 * s, 2, sizeof(t), t, 8,
                                             VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
          q == VK_SUCCESS) {
        if (delivered == 0) t_first = t[0];
        t_last = t[1];
      }
    }
    if (out_tokens) out_tokens[delivered] = token;
    ++delivered;
    position = start + delivered;
    if (o.stop_token >= 0 && token == o.stop_token) stop = true;
    if (o.on_token) {
      in_callback = true;
      const int r2 = o.on_token(o.user_data, token);
      in_callback = false;
      if (r2 != 0) stop = true;
    }
  }
  *out_count = delivered;
  if (chain.queries && delivered > 0) *out_gpu_ns = double((t_last - t_first) & mask) * ctx->caps.timestamp_period;
  return err;
}
