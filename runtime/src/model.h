// A loaded bundle: device memory, pipelines and one recorded command buffer per program.
#pragma once
#include <string>
#include <vector>

#include "internal.h"
#include "weight_parts.h"

struct vkqc_model_t;

namespace vkqc::rt {

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint64_t size = 0;
  void* mapped = nullptr;  // host-visible buffers stay mapped
  bool host_visible = false;
  bool cached = false;     // host-cached: the CPU reads it at memory speed
};

// Where a buffer lives: device memory; host-visible memory the CPU writes (device-local where the
// device has such, the BAR of a discrete GPU); host-cached memory the CPU reads (readback).
enum class Mem { Device, Upload, Readback };

struct IoInfo {
  std::string name;
  std::vector<int64_t> shape;
  vkqc_dtype dtype = VKQC_F32;
  uint64_t size = 0;
  Buffer buffer;
};

struct LayerInfo {
  std::string name, op, variant;
  bool integer_path = false;
  uint64_t flops = 0, weight_bytes = 0;
  uint32_t first_command = 0, command_count = 0;
  int32_t op_index = -1;
};

struct Program {
  uint32_t tokens = 0;
  Buffer arena;
  std::vector<IoInfo> inputs, outputs;
  std::vector<LayerInfo> layers;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkCommandBuffer timed_cmd = VK_NULL_HANDLE;  // recorded on first timed run
  VkQueryPool queries = VK_NULL_HANDLE;
  VkCommandBuffer total_cmd = VK_NULL_HANDLE;  // whole-buffer timestamps only (layer_ns == NULL)
  VkQueryPool total_queries = VK_NULL_HANDLE;
  // Profiling (RunTimedWithout): the command buffers of the last two sets of layers left out, so
  // that runs of two of them can alternate without recording again.
  struct Without {
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkQueryPool queries = VK_NULL_HANDLE;
    std::vector<uint8_t> mask;  // the layers left out
    uint64_t last_use = 0;
  };
  Without without[2];
  uint64_t without_uses = 0;
  std::vector<VkDescriptorSet> sets;           // one per dispatch, in command order
  int32_t position_input = -1;                 // index of the runtime-owned position input
};

struct StateInfo {
  std::string name;
  Buffer buffer;
};

// vkqc_model_decode_greedy's resources (greedy.cc), made on first use for one program and
// configuration: per slot the program's command buffer with descriptor sets that bind, instead of
// the position input, the token input and the next-token output, the slot's position, the
// previous slot's token and the slot's token in the host-visible ring; its fence and two
// timestamps.
struct GreedyChain {
  static constexpr uint32_t kSlotBytes = 512, kTokenOffset = 256;  // offsets aligned for any binding
  uint32_t program = UINT32_MAX, token_input = 0, token_output = 0, depth = 0;
  std::vector<VkCommandBuffer> cmds;
  std::vector<VkFence> fences;
  std::vector<bool> pending;  // slot submitted and not waited for
  Buffer ring;                // per slot: the position at 0, the token the run makes at kTokenOffset
  VkDescriptorPool pool = VK_NULL_HANDLE;
  std::vector<std::vector<VkDescriptorSet>> sets;  // per slot, the program's with the ring bound
  VkQueryPool queries = VK_NULL_HANDLE;
};

}  // namespace vkqc::rt

struct vkqc_model_t {
  vkqc_context_t* ctx = nullptr;
  std::vector<uint8_t> bytes;   // copy of the bundle (the flatbuffer is read in place)
  vkqc::rt::BundleView view;
  // The weight segment: one buffer, or parts of whole bindings where it exceeds one allocation
  // (weight_parts.h); weight_buffers[i] holds bytes [weight_parts[i].begin, .end).
  std::vector<vkqc::rt::WeightPart> weight_parts;
  std::vector<vkqc::rt::Buffer> weight_buffers;
  std::vector<VkShaderModule> modules;
  std::vector<VkDescriptorSetLayout> set_layouts;  // per pipeline
  std::vector<VkPipelineLayout> layouts;           // per pipeline
  std::vector<VkPipeline> pipelines;
  struct Statistic {
    std::string name, description;
    double value = 0;
  };
  std::vector<std::vector<Statistic>> statistics;  // per pipeline (context capture_pipeline_statistics)
  VkDescriptorPool pool = VK_NULL_HANDLE;
  std::vector<vkqc::rt::Program> programs;
  std::vector<vkqc::rt::StateInfo> states;  // KV caches shared by all programs
  uint32_t max_context = 0;                 // 0: stateless
  uint32_t position = 0;                    // where the next run's first row goes
  VkFence fence = VK_NULL_HANDLE;           // this model's runs (vkqc_model_submit / _wait / _run)
  int32_t in_flight = -1;                   // the program submitted and not yet waited for, or -1
  bool lost = false;                        // the device was lost: every call fails, destroy works
  vkqc::rt::GreedyChain chain;              // vkqc_model_decode_greedy (greedy.cc)
  bool in_callback = false;                 // inside decode_greedy's on_token: every other call fails
  vkqc::rt::Buffer readback;                // host-cached staging of reads, grown on demand
  bool force_staged_reads = false;          // vkqc_model_options.force_staged_reads

  vkqc::rt::Err Load(const vkqc_model_options& o);
  vkqc::rt::Err Run(uint32_t program);      // Submit + Wait(the context's timeout)
  vkqc::rt::Err Submit(uint32_t program);
  vkqc::rt::Err Wait(uint64_t timeout_ns);
  // Before touching buffers or the GPU: fails when lost, waits (bounded) for a submission in flight.
  vkqc::rt::Err Settle();
  // Marks the model lost when `e` says so; returns e.
  vkqc::rt::Err Note(vkqc::rt::Err e) {
    if (e.status == VKQC_ERROR_DEVICE_LOST) lost = true;
    return e;
  }
  vkqc::rt::Err RunTimed(uint32_t program, double* layer_ns, double* total_ns);
  // Profiling: one run timed as a whole with the dispatches of the layers marked in `leave_out`
  // (one byte per layer) not recorded; outputs and state are not meaningful afterwards.
  vkqc::rt::Err RunTimedWithout(uint32_t program, const uint8_t* leave_out, double* total_ns);
  vkqc::rt::Err ReadArena(uint32_t program, uint64_t offset, void* data, size_t size);
  vkqc::rt::Err ReadState(uint32_t state, void* data, size_t size);
  // An output's bytes [offset, offset + size): in place where its memory is host-cached or the read
  // is small, else through the readback buffer.
  vkqc::rt::Err ReadOutput(uint32_t program, uint32_t index, uint64_t offset, void* data, size_t size);
  vkqc::rt::Err ResetState();  // zeros every state buffer, position 0
  // Before a run: the position input of a stateful program, and the context bound.
  vkqc::rt::Err PreparePosition(uint32_t program);
  // greedy.cc
  vkqc::rt::Err DecodeGreedy(const vkqc_greedy_options& o, int32_t first_token, uint32_t max_tokens,
                             int32_t* out_tokens, uint32_t* out_count, double* out_gpu_ns);
  vkqc::rt::Err WaitChain(uint64_t timeout_ns);  // the chain's runs in flight
  void DestroyChain();
  void Destroy();

 private:
  vkqc::rt::Err CreateBuffer(uint64_t size, bool host_visible, vkqc::rt::Buffer* out) {
    return CreateBuffer(size, host_visible ? vkqc::rt::Mem::Upload : vkqc::rt::Mem::Device, out);
  }
  vkqc::rt::Err CreateBuffer(uint64_t size, vkqc::rt::Mem where, vkqc::rt::Buffer* out);
  void DestroyBuffer(vkqc::rt::Buffer* b);
  vkqc::rt::Err Upload(uint64_t staging_bytes, bool force_staging);
  vkqc::rt::Err CreatePipelines();
  vkqc::rt::Err CaptureStatistics();
  vkqc::rt::Err CreateDescriptors();
  vkqc::rt::Err Poison();
  // Timed runs: creates `*pool` (when it has none) with `queries` timestamp queries and allocates
  // `*cmd`; runs `cmd` at the current position (not advancing it) and reads ticks->size()
  // timestamps; the nanoseconds between two of them.
  vkqc::rt::Err AllocateTimed(uint32_t queries, VkQueryPool* pool, VkCommandBuffer* cmd);
  vkqc::rt::Err SubmitTimed(uint32_t program, VkCommandBuffer cmd, VkQueryPool pool, std::vector<uint64_t>* ticks);
  double TicksNs(uint64_t from, uint64_t to) const;
  vkqc::rt::Err Record(uint32_t program, VkCommandBuffer cb, VkQueryPool timestamps, bool per_layer,
                       const std::vector<uint8_t>* leave_out = nullptr);
  // Record's commands between begin and end (the chain records more around them).
  void RecordBody(uint32_t program, VkCommandBuffer cb, VkQueryPool timestamps, bool per_layer,
                  const std::vector<VkDescriptorSet>* sets = nullptr, const std::vector<uint8_t>* leave_out = nullptr);
  // The program's descriptor sets, allocated from `pool`, binding the bundle's buffers, or with
  // `rebind` (a greedy-decoding slot) its position input, token input and next-token output in the ring.
  struct Rebind {
    VkBuffer ring = VK_NULL_HANDLE;
    uint32_t token_input = 0, token_output = 0;
    uint64_t position_at = 0, token_in_at = 0, token_out_at = 0;
  };
  vkqc::rt::Err WriteSets(uint32_t program, VkDescriptorPool pool, const Rebind* rebind,
                          std::vector<VkDescriptorSet>* out);
  // Descriptor sets and bindings of a program's dispatches (pool sizes).
  void CountSets(uint32_t program, uint32_t* sets, uint32_t* storage, uint32_t* uniform) const;
  vkqc::rt::Err PrepareChain(uint32_t program, uint32_t token_input, uint32_t token_output, uint32_t depth);
  // The buffer and range a dispatch binds for slice `s` (a weight slice in its part's buffer).
  VkDescriptorBufferInfo BufferFor(uint32_t program, const vkqc::fb::bundle::BufferSlice* s) const;
  // Weight parts for the device's allocation limits (or `max_bytes`, where nonzero and smaller).
  vkqc::rt::Err PlanWeights(uint64_t max_bytes);
  vkqc::rt::Err CopyToHost(VkBuffer src, uint64_t offset, void* data, size_t size);  // through `readback`
};
