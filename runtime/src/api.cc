// C API boundary: argument checks, thread-local error messages, no exceptions escape.
#include <cstdio>
#include <cstddef>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "model.h"
#include "schema/bundle_integrity.h"

#define VKQC_STR2(x) #x
#define VKQC_STR(x) VKQC_STR2(x)
#define VKQC_VERSION_STRING VKQC_STR(VKQC_VERSION_MAJOR) "." VKQC_STR(VKQC_VERSION_MINOR) "." VKQC_STR(VKQC_VERSION_PATCH)

using namespace vkqc::rt;

namespace {
thread_local std::string g_last_error;

vkqc_status Report(const Err& e) {
  g_last_error = e.ok() ? std::string() : e.message;
  return e.status;
}
vkqc_status Invalid(const std::string& m) { return Report(Fail(VKQC_ERROR_INVALID_ARGUMENT, m)); }

bool ValidProgram(vkqc_model m, uint32_t program) { return m && program < m->programs.size(); }

vkqc_status FillInfo(const IoInfo& io, vkqc_tensor_info* out) {
  std::memset(out, 0, sizeof(*out));
  out->name = io.name.c_str();
  out->rank = uint32_t(io.shape.size());
  for (size_t i = 0; i < io.shape.size() && i < 8; ++i) out->shape[i] = io.shape[i];
  out->dtype = io.dtype;
  out->size_bytes = io.size;
  return Report(Ok());
}

const IoInfo* GetIo(vkqc_model m, uint32_t program, uint32_t index, bool output, vkqc_status* st) {
  if (!ValidProgram(m, program)) {
    *st = Invalid("model is null or program index out of range");
    return nullptr;
  }
  const auto& v = output ? m->programs[program].outputs : m->programs[program].inputs;
  if (index >= v.size()) {
    *st = Report(Fail(VKQC_ERROR_NOT_FOUND, std::string(output ? "output" : "input") + " index " +
                                                std::to_string(index) + " out of range (" +
                                                std::to_string(v.size()) + ")"));
    return nullptr;
  }
  *st = VKQC_OK;
  return &v[index];
}
}  // namespace

extern "C" {

const char* vkqc_version(void) { return VKQC_VERSION_STRING; }
uint32_t vkqc_abi_version(void) { return VKQC_ABI_VERSION; }
uint32_t vkqc_bundle_format_version(void) { return vkqc::kBundleFormatVersion; }

const char* vkqc_status_string(vkqc_status s) {
  switch (s) {
    case VKQC_OK: return "ok";
    case VKQC_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case VKQC_ERROR_INVALID_BUNDLE: return "invalid bundle";
    case VKQC_ERROR_UNSUPPORTED_DEVICE: return "unsupported device";
    case VKQC_ERROR_NO_DEVICE: return "no device";
    case VKQC_ERROR_VULKAN: return "vulkan error";
    case VKQC_ERROR_DEVICE_LOST: return "device lost";
    case VKQC_ERROR_OUT_OF_MEMORY: return "out of memory";
    case VKQC_ERROR_TIMEOUT: return "timeout";
    case VKQC_ERROR_IO: return "i/o error";
    case VKQC_ERROR_NOT_FOUND: return "not found";
  }
  return "unknown status";
}

const char* vkqc_last_error(void) { return g_last_error.c_str(); }

void vkqc_context_options_init(vkqc_context_options* o) {
  if (!o) return;
  std::memset(o, 0, sizeof(*o));
  o->struct_size = sizeof(*o);
  o->device_index = -1;
}

vkqc_status vkqc_context_create(const vkqc_context_options* options, vkqc_context* out) {
  if (!out) return Invalid("out_context is null");
  *out = nullptr;
  vkqc_context_options o;
  vkqc_context_options_init(&o);
  if (options) {
    // Older headers end before the appended fields: accept them, the rest keeps its defaults.
    const size_t v1 = offsetof(vkqc_context_options, timeout_ns);
    if (options->struct_size < v1 || options->struct_size > sizeof(vkqc_context_options))
      return Invalid("options.struct_size mismatch");
    std::memcpy(&o, options, options->struct_size);
  }
  auto* ctx = new (std::nothrow) vkqc_context_t;
  if (!ctx) return Report(Fail(VKQC_ERROR_OUT_OF_MEMORY, "out of host memory"));
  Err e = CreateContext(o, ctx);
  if (!e.ok()) {
    DestroyContext(ctx);
    delete ctx;
    return Report(e);
  }
  *out = ctx;
  return Report(Ok());
}

void vkqc_context_destroy(vkqc_context ctx) {
  if (!ctx) return;
  DestroyContext(ctx);
  delete ctx;
}

vkqc_status vkqc_context_device_name(vkqc_context ctx, const char** out_name) {
  if (!ctx || !out_name) return Invalid("null argument");
  *out_name = ctx->caps.name.c_str();
  return Report(Ok());
}

vkqc_status vkqc_context_pipeline_cache_data(vkqc_context ctx, void* data, size_t* size) {
  if (!ctx || !size) return Invalid("null argument");
  VkResult r = vkGetPipelineCacheData(ctx->device, ctx->cache, size, data);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) return Report(VkFail(r, "vkGetPipelineCacheData"));
  return Report(Ok());
}

void vkqc_model_options_init(vkqc_model_options* o) {
  if (!o) return;
  std::memset(o, 0, sizeof(*o));
  o->struct_size = sizeof(*o);
}

namespace {
// ParseBundle reads 8-byte fields and vectors in place: bytes handed in at an address that is not
// a multiple of 8 (a bundle inside an app's asset blob, say) are parsed from an aligned copy.
class AlignedBundle {
 public:
  AlignedBundle(const void* data, size_t size) : p_(static_cast<const uint8_t*>(data)) {
    if (reinterpret_cast<uintptr_t>(data) % 8 != 0) {
      copy_.resize((size + 7) / 8);
      std::memcpy(copy_.data(), data, size);
      p_ = reinterpret_cast<const uint8_t*>(copy_.data());
    }
  }
  const uint8_t* data() const { return p_; }

 private:
  std::vector<uint64_t> copy_;
  const uint8_t* p_;
};
}  // namespace

vkqc_status vkqc_verify_bundle(const void* data, size_t size) {
  if (!data && size) return Invalid("null argument");
  BundleView view;
  const AlignedBundle a(data, size);
  return Report(ParseBundle(a.data(), size, &view));
}

vkqc_status vkqc_verify_bundle_signature(const void* data, size_t size, const void* trusted_keys, uint32_t key_count) {
  if (!data || (key_count && !trusted_keys)) return Invalid("null argument");
  BundleView view;
  const AlignedBundle a(data, size);
  if (Err e = ParseBundle(a.data(), size, &view); !e.ok()) return Report(e);
  std::vector<vkqc::Ed25519Key> keys(key_count);
  if (key_count) std::memcpy(keys.data(), trusted_keys, size_t(key_count) * 32);
  const std::string why = vkqc::VerifyBundleSignature(static_cast<const uint8_t*>(data), size, keys.data(), keys.size());
  return Report(why.empty() ? Ok() : Fail(VKQC_ERROR_INVALID_BUNDLE, "signature check failed: " + why));
}

vkqc_status vkqc_check_bundle(vkqc_context ctx, const void* data, size_t size) {
  if (!ctx || !data) return Invalid("null argument");
  BundleView view;
  const AlignedBundle a(data, size);
  if (Err e = ParseBundle(a.data(), size, &view); !e.ok()) return Report(e);
  const auto missing = MissingRequirements(view.bundle->requirements(), ctx->caps);
  if (missing.empty()) return Report(Ok());
  std::string m = "device '" + ctx->caps.name + "' cannot run this bundle; missing:";
  for (const auto& s : missing) m += "\n  - " + s;
  return Report(Fail(VKQC_ERROR_UNSUPPORTED_DEVICE, m));
}

vkqc_status vkqc_model_load(vkqc_context ctx, const void* data, size_t size, const vkqc_model_options* options,
                            vkqc_model* out) {
  if (!ctx || !out || (!data && size)) return Invalid("null argument");
  *out = nullptr;
  vkqc_model_options o;
  vkqc_model_options_init(&o);
  if (options) {
    // 0.3's struct ended at force_staging (force_staged_reads appended in 0.4, max_weight_buffer_bytes after it).
    constexpr uint32_t v1 = uint32_t(offsetof(vkqc_model_options, force_staged_reads));
    if (options->struct_size < v1 || options->struct_size > sizeof(vkqc_model_options))
      return Invalid("options.struct_size mismatch");
    std::memcpy(&o, options, options->struct_size);
  }
  auto* m = new (std::nothrow) vkqc_model_t;
  if (!m) return Report(Fail(VKQC_ERROR_OUT_OF_MEMORY, "out of host memory"));
  m->ctx = ctx;
  const auto* p = static_cast<const uint8_t*>(data);
  m->bytes.assign(p, p + size);
  Err e = m->Load(o);
  if (!e.ok()) {
    m->Destroy();
    delete m;
    return Report(e);
  }
  ++ctx->live_models;
  *out = m;
  return Report(Ok());
}

vkqc_status vkqc_model_load_file(vkqc_context ctx, const char* path, const vkqc_model_options* options,
                                 vkqc_model* out) {
  if (!ctx || !path || !out) return Invalid("null argument");
  std::FILE* f = std::fopen(path, "rb");
  if (!f) return Report(Fail(VKQC_ERROR_IO, std::string(path) + ": cannot open: " + std::strerror(errno)));
  std::string bytes;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) bytes.append(buf, n);
  const bool err = std::ferror(f);
  std::fclose(f);
  if (err) return Report(Fail(VKQC_ERROR_IO, std::string(path) + ": read error"));
  vkqc_status s = vkqc_model_load(ctx, bytes.data(), bytes.size(), options, out);
  if (s != VKQC_OK) g_last_error = std::string(path) + ": " + g_last_error;
  return s;
}

void vkqc_model_destroy(vkqc_model m) {
  if (!m) return;
  m->Destroy();
  --m->ctx->live_models;
  delete m;
}

uint32_t vkqc_model_program_count(vkqc_model m) { return m ? uint32_t(m->programs.size()) : 0; }

uint32_t vkqc_model_program_tokens(vkqc_model m, uint32_t program) {
  return ValidProgram(m, program) ? m->programs[program].tokens : 0;
}

vkqc_status vkqc_model_find_program(vkqc_model m, uint32_t tokens, uint32_t* out) {
  if (!m || !out) return Invalid("null argument");
  for (uint32_t i = 0; i < m->programs.size(); ++i)
    if (m->programs[i].tokens == tokens || (tokens == 0 && m->programs.size() == 1)) {
      *out = i;
      return Report(Ok());
    }
  std::string have;
  for (const auto& p : m->programs) have += (have.empty() ? "" : ", ") + std::to_string(p.tokens);
  return Report(Fail(VKQC_ERROR_NOT_FOUND, "no program for tokens=" + std::to_string(tokens) +
                                               "; the bundle was compiled for tokens " + have));
}

uint32_t vkqc_model_input_count(vkqc_model m, uint32_t program) {
  return ValidProgram(m, program) ? uint32_t(m->programs[program].inputs.size()) : 0;
}
uint32_t vkqc_model_output_count(vkqc_model m, uint32_t program) {
  return ValidProgram(m, program) ? uint32_t(m->programs[program].outputs.size()) : 0;
}

vkqc_status vkqc_model_input_info(vkqc_model m, uint32_t program, uint32_t index, vkqc_tensor_info* out) {
  vkqc_status st;
  const IoInfo* io = GetIo(m, program, index, false, &st);
  if (!io) return st;
  if (!out) return Invalid("out_info is null");
  return FillInfo(*io, out);
}
vkqc_status vkqc_model_output_info(vkqc_model m, uint32_t program, uint32_t index, vkqc_tensor_info* out) {
  vkqc_status st;
  const IoInfo* io = GetIo(m, program, index, true, &st);
  if (!io) return st;
  if (!out) return Invalid("out_info is null");
  return FillInfo(*io, out);
}

vkqc_status vkqc_model_write_input(vkqc_model m, uint32_t program, uint32_t index, const void* data, size_t size) {
  vkqc_status st;
  const IoInfo* io = GetIo(m, program, index, false, &st);
  if (!io) return st;
  if (!data || size != io->size)
    return Invalid("input '" + io->name + "' takes " + std::to_string(io->size) + " bytes, got " + std::to_string(size));
  if (auto e = m->Settle(); !e.ok()) return Report(e);
  if (int32_t(index) == m->programs[program].position_input) {  // owned by the runtime: sets the position
    int32_t pos;
    std::memcpy(&pos, data, 4);
    return vkqc_model_set_position(m, pos < 0 ? UINT32_MAX : uint32_t(pos));
  }
  std::memcpy(io->buffer.mapped, data, size);
  return Report(Ok());
}

vkqc_status vkqc_model_read_output(vkqc_model m, uint32_t program, uint32_t index, void* data, size_t size) {
  vkqc_status st;
  const IoInfo* io = GetIo(m, program, index, true, &st);
  if (!io) return st;
  if (!data || size != io->size)
    return Invalid("output '" + io->name + "' has " + std::to_string(io->size) + " bytes, got " + std::to_string(size));
  return Report(m->Note(m->ReadOutput(program, index, 0, data, size)));
}

vkqc_status vkqc_model_read_output_range(vkqc_model m, uint32_t program, uint32_t index, uint64_t offset, void* data,
                                         size_t size) {
  vkqc_status st;
  const IoInfo* io = GetIo(m, program, index, true, &st);
  if (!io) return st;
  if ((!data && size) || offset > io->size || size > io->size - offset)
    return Invalid("bytes [" + std::to_string(offset) + ", " + std::to_string(offset + size) + ") lie outside output '" +
                   io->name + "' of " + std::to_string(io->size) + " bytes");
  return Report(m->Note(m->ReadOutput(program, index, offset, data, size)));
}

vkqc_status vkqc_model_map_input(vkqc_model m, uint32_t program, uint32_t index, void** out) {
  vkqc_status st;
  const IoInfo* io = GetIo(m, program, index, false, &st);
  if (!io) return st;
  if (!out) return Invalid("out_ptr is null");
  if (int32_t(index) == m->programs[program].position_input)
    return Invalid("input '" + io->name + "' is the position of a stateful bundle, owned by the runtime: use "
                   "vkqc_model_set_position (or vkqc_model_write_input)");
  if (auto e = m->Settle(); !e.ok()) return Report(e);
  *out = io->buffer.mapped;
  return Report(Ok());
}

vkqc_status vkqc_model_map_output(vkqc_model m, uint32_t program, uint32_t index, void** out) {
  vkqc_status st;
  const IoInfo* io = GetIo(m, program, index, true, &st);
  if (!io) return st;
  if (!out) return Invalid("out_ptr is null");
  if (auto e = m->Settle(); !e.ok()) return Report(e);
  *out = io->buffer.mapped;
  return Report(Ok());
}

vkqc_status vkqc_model_submit(vkqc_model m, uint32_t program) {
  if (!ValidProgram(m, program)) return Invalid("model is null or program index out of range");
  return Report(m->Note(m->Submit(program)));
}

vkqc_status vkqc_model_wait(vkqc_model m, uint64_t timeout_ns) {
  if (!m) return Invalid("model is null");
  return Report(m->Wait(timeout_ns));
}

vkqc_status vkqc_model_run(vkqc_model m, uint32_t program) {
  if (!ValidProgram(m, program)) return Invalid("model is null or program index out of range");
  return Report(m->Note(m->Run(program)));
}

uint32_t vkqc_model_max_context(vkqc_model m) { return m ? m->max_context : 0; }

void vkqc_greedy_options_init(vkqc_greedy_options* o) {
  if (!o) return;
  *o = vkqc_greedy_options{};
  o->struct_size = sizeof(*o);
  o->program = o->token_input = o->token_output = VKQC_AUTO;
  o->stop_token = -1;
}

vkqc_status vkqc_model_decode_greedy(vkqc_model m, const vkqc_greedy_options* options, int32_t first_token,
                                     uint32_t max_tokens, int32_t* out_tokens, uint32_t* out_count,
                                     double* out_gpu_ns) {
  if (out_count) *out_count = 0;
  if (out_gpu_ns) *out_gpu_ns = 0;
  if (!m) return Invalid("model is null");
  vkqc_greedy_options o;
  vkqc_greedy_options_init(&o);
  if (options) {
    if (options->struct_size != sizeof(vkqc_greedy_options)) return Invalid("options.struct_size mismatch");
    o = *options;
  }
  uint32_t n = 0;
  double ns = 0;
  const Err e = m->Note(m->DecodeGreedy(o, first_token, max_tokens, out_tokens, &n, &ns));
  if (out_count) *out_count = n;
  if (out_gpu_ns) *out_gpu_ns = ns;
  return Report(e);
}

vkqc_status vkqc_model_metadata(vkqc_model m, const char* key, const void** out_data, size_t* out_size) {
  if (!m || !key || !out_data || !out_size) return Invalid("model, key and outputs must not be null");
  if (const auto* meta = m->view.bundle->metadata())
    for (const auto* e : *meta)
      if (e && e->key() && e->value() && e->key()->str() == key) {
        *out_data = e->value()->data();
        *out_size = e->value()->size();
        return Report(Ok());
      }
  return Invalid(std::string("the bundle has no metadata entry '") + key + "'");
}

uint32_t vkqc_model_position(vkqc_model m) { return m ? m->position : 0; }

int32_t vkqc_model_position_input(vkqc_model m, uint32_t program) {
  return ValidProgram(m, program) ? m->programs[program].position_input : -1;
}

vkqc_status vkqc_model_set_position(vkqc_model m, uint32_t position) {
  if (!m) return Invalid("model is null");
  if (m->max_context == 0) return Invalid("this bundle has no state (no KV cache): there is no position to set");
  if (position > m->max_context)
    return Invalid("position " + std::to_string(position) + " is beyond the max context " +
                   std::to_string(m->max_context));
  m->position = position;
  return Report(Ok());
}

vkqc_status vkqc_model_reset_state(vkqc_model m) {
  if (!m) return Invalid("model is null");
  if (m->states.empty()) return Invalid("this bundle has no state (no KV cache) to reset");
  if (auto e = m->Settle(); !e.ok()) return Report(e);
  return Report(m->Note(m->ResetState()));
}

uint32_t vkqc_model_state_count(vkqc_model m) { return m ? uint32_t(m->states.size()) : 0; }

vkqc_status vkqc_model_state_info(vkqc_model m, uint32_t index, vkqc_tensor_info* out) {
  if (!m || !out || index >= m->states.size()) return Invalid("null argument or state index out of range");
  const auto* st = m->view.bundle->states()->Get(index);
  *out = {};
  out->name = m->states[index].name.c_str();
  out->rank = st->shape() ? std::min<uint32_t>(st->shape()->size(), 8) : 0;
  for (uint32_t i = 0; i < out->rank; ++i) out->shape[i] = st->shape()->Get(i);
  out->dtype = vkqc_dtype(int(st->dtype()));
  out->size_bytes = st->size();
  return Report(Ok());
}

vkqc_status vkqc_model_read_state(vkqc_model m, const char* name, void* data, size_t size) {
  if (!m || !name || !data) return Invalid("null argument");
  for (uint32_t i = 0; i < m->states.size(); ++i) {
    if (m->states[i].name != name) continue;
    if (size != m->view.bundle->states()->Get(i)->size())
      return Invalid(std::string("state '") + name + "' has " + std::to_string(m->view.bundle->states()->Get(i)->size()) +
                     " bytes, got " + std::to_string(size));
    if (auto e = m->Settle(); !e.ok()) return Report(e);
    return Report(m->Note(m->ReadState(i, data, size)));
  }
  return Report(Fail(VKQC_ERROR_NOT_FOUND, std::string("no state tensor '") + name + "'"));
}

vkqc_status vkqc_model_read_intermediate(vkqc_model m, uint32_t program, const char* name, void* data, size_t size) {
  if (!ValidProgram(m, program) || !name || (!data && size)) return Invalid("null argument or program out of range");
  const auto* pr = m->view.bundle->programs()->Get(program);
  if (pr->arena_tensors())
    for (const auto* t : *pr->arena_tensors()) {
      if (!t->name() || t->name()->str() != name) continue;
      if (size > t->size() || t->offset() > pr->arena_size() || t->size() > pr->arena_size() - t->offset())
        return Invalid(std::string("intermediate '") + name + "' has " + std::to_string(t->size()) + " bytes");
      if (auto e = m->Settle(); !e.ok()) return Report(e);
      return Report(m->Note(m->ReadArena(program, t->offset(), data, size)));
    }
  return Report(Fail(VKQC_ERROR_NOT_FOUND, std::string("no arena tensor named '") + name + "' in this program"));
}

uint32_t vkqc_model_layer_count(vkqc_model m, uint32_t program) {
  return ValidProgram(m, program) ? uint32_t(m->programs[program].layers.size()) : 0;
}

vkqc_status vkqc_model_layer_info(vkqc_model m, uint32_t program, uint32_t index, vkqc_layer_info* out) {
  if (!ValidProgram(m, program) || !out) return Invalid("null argument or program out of range");
  const auto& ls = m->programs[program].layers;
  if (index >= ls.size()) return Report(Fail(VKQC_ERROR_NOT_FOUND, "layer index out of range"));
  const LayerInfo& l = ls[index];
  out->name = l.name.c_str();
  out->op = l.op.c_str();
  out->variant = l.variant.c_str();
  out->integer_path = l.integer_path;
  out->flops = l.flops;
  out->weight_bytes = l.weight_bytes;
  out->op_index = l.op_index;
  return Report(Ok());
}

vkqc_status vkqc_model_layer_statistics(vkqc_model m, uint32_t program, uint32_t index,
                                        vkqc_pipeline_statistic* out, uint32_t* inout_count) {
  if (!ValidProgram(m, program) || !inout_count) return Invalid("null argument or program out of range");
  if (!m->ctx->capture_statistics)
    return Invalid("pipeline statistics are captured only for a context created with capture_pipeline_statistics");
  const auto& ls = m->programs[program].layers;
  if (index >= ls.size()) return Report(Fail(VKQC_ERROR_NOT_FOUND, "layer index out of range"));
  const LayerInfo& l = ls[index];
  const auto* pr = m->view.bundle->programs()->Get(program);
  uint32_t n = 0, dispatch = 0;
  for (uint32_t ci = l.first_command; ci < l.first_command + l.command_count; ++ci) {
    if (fbb::Command(pr->commands_type()->Get(ci)) != fbb::Command::Dispatch) continue;
    const auto* d = static_cast<const fbb::Dispatch*>(pr->commands()->Get(ci));
    for (const auto& st : m->statistics[d->pipeline()]) {
      if (out) {
        if (n == *inout_count) break;
        out[n] = {dispatch, st.name.c_str(), st.description.c_str(), st.value};
      }
      ++n;
    }
    ++dispatch;
  }
  *inout_count = n;
  return Report(Ok());
}

vkqc_status vkqc_model_run_timed(vkqc_model m, uint32_t program, double* layer_ns, double* total_ns) {
  if (!ValidProgram(m, program) || !total_ns) return Invalid("null argument or program out of range");
  if (auto e = m->Settle(); !e.ok()) return Report(e);
  return Report(m->Note(m->RunTimed(program, layer_ns, total_ns)));
}

vkqc_status vkqc_model_time_without(vkqc_model m, uint32_t program, const uint8_t* leave_out, double* total_ns) {
  if (!ValidProgram(m, program) || !leave_out || !total_ns) return Invalid("null argument or program out of range");
  if (auto e = m->Settle(); !e.ok()) return Report(e);
  return Report(m->Note(m->RunTimedWithout(program, leave_out, total_ns)));
}

}  // extern "C"
