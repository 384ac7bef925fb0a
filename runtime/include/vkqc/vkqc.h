/* vkqc runtime C API (DESIGN 2.4).
 *
 * Loads a .vkqb bundle produced by `vkqc compile`, checks the device against the bundle's
 * requirements, uploads weights, creates pipelines, records one command buffer per program
 * and replays it on every run. Depends on Vulkan headers and volk only.
 *
 * Errors: every function returns a vkqc_status; on failure, vkqc_last_error() returns a
 * readable message for the calling thread (valid until that thread's next vkqc call).
 *
 * Threading and lifetimes: a vkqc_context may be used from one thread at a time (callers
 * serialize); models belong to their context and must be destroyed before it. A model's
 * mapped input/output pointers stay valid until the model is destroyed. Pointers passed in
 * (bundle bytes, options) are not retained unless stated. Distinct contexts, with their models,
 * may be created and used from different threads at the same time; the functions that take no
 * context or model (vkqc_verify_bundle, vkqc_version, vkqc_status_string, ...) from any thread.
 * A context's log callback runs on the thread of the vkqc call that logs (validation-layer
 * messages: on the thread the layer reports them from). (tests/threads checks this under
 * ThreadSanitizer.)
 */
#ifndef VKQC_H_
#define VKQC_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this header and of the library (vkqc_version). The ABI version changes when a
 * compiled app must be rebuilt (a function removed or changed); appended functions and appended
 * option fields (struct_size) keep it. Bundles carry a format version; vkqc_bundle_format_version
 * is the newest this runtime reads (older ones are read too). */
#define VKQC_VERSION_MAJOR 0
#define VKQC_VERSION_MINOR 4
#define VKQC_VERSION_PATCH 0
#define VKQC_ABI_VERSION 1
const char* vkqc_version(void);                 /* "0.4.0" */
uint32_t vkqc_abi_version(void);                /* VKQC_ABI_VERSION of the library */
uint32_t vkqc_bundle_format_version(void);      /* newest bundle format this runtime reads */

typedef enum vkqc_status {
  VKQC_OK = 0,
  VKQC_ERROR_INVALID_ARGUMENT = 1,
  VKQC_ERROR_INVALID_BUNDLE = 2,     /* malformed, truncated or inconsistent bundle */
  VKQC_ERROR_UNSUPPORTED_DEVICE = 3, /* device lacks what the bundle requires */
  VKQC_ERROR_NO_DEVICE = 4,          /* no Vulkan loader or no suitable device */
  VKQC_ERROR_VULKAN = 5,             /* a Vulkan call failed */
  VKQC_ERROR_DEVICE_LOST = 6,
  VKQC_ERROR_OUT_OF_MEMORY = 7,
  VKQC_ERROR_IO = 8,                 /* file could not be read */
  VKQC_ERROR_NOT_FOUND = 9,          /* no such program / tensor */
  VKQC_ERROR_TIMEOUT = 10            /* the GPU did not finish within the timeout; the work is still
                                        in flight: vkqc_model_wait again, or destroy the model */
} vkqc_status;

typedef enum vkqc_log_level {
  VKQC_LOG_DEBUG = 0,
  VKQC_LOG_INFO = 1,
  VKQC_LOG_WARNING = 2,
  VKQC_LOG_ERROR = 3,
  VKQC_LOG_VALIDATION = 4 /* a message from the Vulkan validation layer */
} vkqc_log_level;

typedef void (*vkqc_log_fn)(void* user_data, vkqc_log_level level, const char* message);

typedef struct vkqc_context_t* vkqc_context;
typedef struct vkqc_model_t* vkqc_model;

/* Opaque Vulkan handles, so this header needs no Vulkan include. */
typedef struct vkqc_external_device {
  void* instance;        /* VkInstance */
  void* physical_device; /* VkPhysicalDevice */
  void* device;          /* VkDevice, created with the features the bundles need */
  void* queue;           /* VkQueue supporting compute */
  uint32_t queue_family_index;
  uint32_t api_version;  /* the API version the instance/device were created with */
} vkqc_external_device;

typedef struct vkqc_context_options {
  uint32_t struct_size;          /* sizeof(vkqc_context_options) */
  int32_t device_index;          /* -1: first device with a compute queue */
  int enable_validation;         /* enable VK_LAYER_KHRONOS_validation + sync validation */
  vkqc_log_fn log;               /* optional */
  void* log_user_data;
  const vkqc_external_device* external; /* optional: adopt the app's instance/device/queue */
  const void* pipeline_cache_data;      /* optional: from vkqc_context_pipeline_cache_data */
  size_t pipeline_cache_size;
  const void* allocation_callbacks;     /* optional VkAllocationCallbacks* */
  int robust_buffer_access;             /* enable the device's robustBufferAccess: shaders of a
                                           bundle crafted to index out of bounds stay inside their
                                           buffers (corruption is caught by the bundle checksum;
                                           this is for bundles from untrusted sources). Fails
                                           context creation where the device lacks it; ignored
                                           with an external device (the app chose its features) */
  uint64_t timeout_ns;                  /* bound of every wait the runtime does for the GPU (runs,
                                           uploads, reads of state): past it a call returns
                                           VKQC_ERROR_TIMEOUT. 0: 60 seconds; UINT64_MAX: unbounded.
                                           (Appended: a smaller struct_size from an older header
                                           keeps the default.) */
  int validate_spirv;                   /* for bundles from untrusted sources: every shader module is
                                           checked by SPIRV-Tools' validator (Vulkan 1.1 rules) before
                                           it reaches the driver; an invalid module fails the load
                                           with VKQC_ERROR_INVALID_BUNDLE. Available where the runtime
                                           was built with SPIRV-Tools (the full build's static
                                           runtime, used by the vkqc tool); elsewhere (libvkqc.so,
                                           the runtime-only build) context creation fails with
                                           VKQC_ERROR_INVALID_ARGUMENT saying so.
                                           (Appended after timeout_ns.) */
  const void* trusted_keys;             /* signed bundles: Ed25519 public keys, 32 bytes each,
                                           trusted_key_count of them back to back (copied at context
                                           creation). When set, every vkqc_model_load(_file) first
                                           verifies the bundle's signature (`vkqc compile --sign-key`,
                                           `vkqc sign`) over the whole file and refuses, with
                                           VKQC_ERROR_INVALID_BUNDLE and before any of it reaches the
                                           driver, a bundle that is unsigned, signed by a key not in
                                           the list, or changed after it was signed. What closes
                                           crafted bundles that are valid SPIR-V a driver still
                                           crashes on. (Appended after validate_spirv.) */
  uint32_t trusted_key_count;
  int capture_pipeline_statistics;      /* kernel tuning: pipelines are created with the driver's
                                           statistics captured (VK_KHR_pipeline_executable_properties:
                                           registers, code size, ... as the driver names them), read
                                           with vkqc_model_layer_statistics. Fails context creation
                                           with VKQC_ERROR_UNSUPPORTED_DEVICE where the device lacks
                                           the extension or its pipelineExecutableInfo feature, and
                                           with VKQC_ERROR_INVALID_ARGUMENT with an external device
                                           (the app enables the device's extensions). Capturing may
                                           bypass the driver's pipeline caching: not for shipping.
                                           (Appended after trusted_key_count.) */
} vkqc_context_options;

void vkqc_context_options_init(vkqc_context_options* options);

/* Each context has its own VkDevice and queue. Contexts created without allocation callbacks and
 * without an external device share one VkInstance per process and validation setting, created by
 * the first of them and kept until the process exits (NVIDIA's driver refuses new instances after
 * about 30 were created and destroyed in one process); with validation, every such context's log
 * callback receives the messages of the shared instance. */
vkqc_status vkqc_context_create(const vkqc_context_options* options, vkqc_context* out_context);
void vkqc_context_destroy(vkqc_context context);

/* The chosen device's name and Vulkan version. */
vkqc_status vkqc_context_device_name(vkqc_context context, const char** out_name);

/* Serialized VkPipelineCache for the app to persist. Call with data == NULL to get the size. */
vkqc_status vkqc_context_pipeline_cache_data(vkqc_context context, void* data, size_t* inout_size);

typedef struct vkqc_model_options {
  uint32_t struct_size;          /* sizeof(vkqc_model_options) */
  uint64_t staging_bytes;        /* bound of the weight-upload staging buffer; 0: 16 MiB */
  int poison_memory;             /* fill arena and outputs with 0xFF bytes (NaN) at load (tests) */
  int force_staging;             /* upload weights through the staging buffer even where their
                                    memory is host-visible (tests the discrete-GPU path) */
  int force_staged_reads;        /* read every output through the GPU copy into cached host
                                    memory (tests the discrete-GPU path of the reads below).
                                    (Appended: struct_size from the older header is accepted.) */
  uint64_t max_weight_buffer_bytes; /* the largest buffer the weights are held in; 0: the device's
                                    maxMemoryAllocationSize and maxBufferSize. Weights larger than
                                    that are held in several buffers of whole bindings; a bundle
                                    binding more than that at once is refused with
                                    VKQC_ERROR_UNSUPPORTED_DEVICE. (Appended: the 0.4 struct_size
                                    is accepted, as 0.3's.) */
} vkqc_model_options;

void vkqc_model_options_init(vkqc_model_options* options);

/* The bundle bytes are copied where needed; `data` may be freed after the call. */
vkqc_status vkqc_model_load(vkqc_context context, const void* data, size_t size,
                            const vkqc_model_options* options, vkqc_model* out_model);
vkqc_status vkqc_model_load_file(vkqc_context context, const char* path,
                                 const vkqc_model_options* options, vkqc_model* out_model);
void vkqc_model_destroy(vkqc_model model);

/* Verifies a bundle's structure (every index, offset, size, alignment and shader checksum)
 * without a device. */
vkqc_status vkqc_verify_bundle(const void* data, size_t size);

/* vkqc_verify_bundle, then the bundle's Ed25519 signature against trusted_keys (32 bytes each,
 * key_count of them): VKQC_OK only for an intact bundle signed by one of them; else
 * VKQC_ERROR_INVALID_BUNDLE and vkqc_last_error() says why (unsigned, other signer, changed). */
vkqc_status vkqc_verify_bundle_signature(const void* data, size_t size, const void* trusted_keys,
                                         uint32_t key_count);

/* Checks a bundle against the context's device without loading it. On
 * VKQC_ERROR_UNSUPPORTED_DEVICE, vkqc_last_error() lists everything that is missing. */
vkqc_status vkqc_check_bundle(vkqc_context context, const void* data, size_t size);

/* Programs: one per compiled token count (`vkqc compile --tokens 1,128`). */
uint32_t vkqc_model_program_count(vkqc_model model);
/* tokens == 0 selects a bundle's single static program. The error lists the compiled sizes. */
vkqc_status vkqc_model_find_program(vkqc_model model, uint32_t tokens, uint32_t* out_program);
uint32_t vkqc_model_program_tokens(vkqc_model model, uint32_t program);

typedef enum vkqc_dtype { VKQC_F32 = 0, VKQC_F16 = 1, VKQC_I8 = 2, VKQC_U8 = 3, VKQC_I32 = 6 } vkqc_dtype;

typedef struct vkqc_tensor_info {
  const char* name;
  uint32_t rank;
  int64_t shape[8];
  vkqc_dtype dtype;
  uint64_t size_bytes;
} vkqc_tensor_info;

uint32_t vkqc_model_input_count(vkqc_model model, uint32_t program);
uint32_t vkqc_model_output_count(vkqc_model model, uint32_t program);
vkqc_status vkqc_model_input_info(vkqc_model model, uint32_t program, uint32_t index, vkqc_tensor_info* out_info);
vkqc_status vkqc_model_output_info(vkqc_model model, uint32_t program, uint32_t index, vkqc_tensor_info* out_info);

/* Copy in / out (size must equal the tensor's size_bytes). */
vkqc_status vkqc_model_write_input(vkqc_model model, uint32_t program, uint32_t index, const void* data, size_t size);
vkqc_status vkqc_model_read_output(vkqc_model model, uint32_t program, uint32_t index, void* data, size_t size);
/* Bytes [offset, offset + size) of an output, e.g. the last row of [tokens, vocab] logits. Output
 * memory is device memory the GPU writes at full speed; on a discrete GPU the CPU reads it
 * uncached (a 512 KiB logits row took 8-17 ms to read in place on an H200), so this and
 * vkqc_model_read_output copy reads of more than 256 bytes on the GPU into cached host memory
 * first where the output's memory is not host-cached. */
vkqc_status vkqc_model_read_output_range(vkqc_model model, uint32_t program, uint32_t index, uint64_t offset,
                                         void* data, size_t size);
/* In-place access to host-visible input/output memory (no copy; see above for reading large outputs). */
vkqc_status vkqc_model_map_input(vkqc_model model, uint32_t program, uint32_t index, void** out_ptr);
vkqc_status vkqc_model_map_output(vkqc_model model, uint32_t program, uint32_t index, void** out_ptr);

/* Submits the program's pre-recorded command buffer and waits for it. On a stateful bundle
 * (below), runs at the model's position and advances it by the program's token count; fails with
 * VKQC_ERROR_INVALID_ARGUMENT, running nothing, where position + tokens would exceed the max
 * context (nothing is ever written past the KV cache). */
vkqc_status vkqc_model_run(vkqc_model model, uint32_t program);

/* Asynchronous runs. vkqc_model_submit starts `program` and returns at once (a stateful bundle's
 * position advances at submit); vkqc_model_wait waits for it at most timeout_ns (0: poll) and
 * returns VKQC_OK when it finished, VKQC_ERROR_TIMEOUT while it still runs. Meanwhile the app may
 * prepare its next input in its own memory; every other call on the model that touches its buffers
 * or the GPU (write_input, read_output, map_*, run, submit, reset_state, read_state, ...) first
 * waits for the submission, bounded by the context's timeout. A device lost during a run makes
 * that call and every later one return VKQC_ERROR_DEVICE_LOST; the model can still be destroyed
 * (destroy waits for a submission in flight). vkqc_model_run is submit + wait(context timeout). */
vkqc_status vkqc_model_submit(vkqc_model model, uint32_t program);
vkqc_status vkqc_model_wait(vkqc_model model, uint64_t timeout_ns);

/* Stateful bundles: a decoder compiled with attention ops keeps its KV cache on the device from
 * load to destroy, shared by every program (a prefill chunk and a decode step read and write the
 * same cache). The state is zero at load. The model's position is where the next run's first
 * row goes: row t of a run is at position + t, attending to positions 0..position + t. Each
 * program's i32 [1] position input is owned by the runtime: vkqc_model_write_input on it sets the
 * position, vkqc_model_map_input on it is refused. Generation: reset, run prefill chunks of the
 * compiled sizes over the prompt, then the tokens=1 program once per new token, feeding back the
 * previous token (README: "A generation loop in C"). */
uint32_t vkqc_model_max_context(vkqc_model model);  /* positions the state holds; 0: stateless */

/* Greedy decoding with the token fed back on the GPU. Runs a tokens=1 program of a stateful bundle
 * up to max_tokens times from the model's position: the first run takes first_token, each later
 * run the previous run's next-token output (the graph's argmax), which it reads on the GPU (the
 * runs bind a ring of positions and tokens in place of the position, token input and next-token
 * output: no copies, no commands beyond the program's), with `depth` runs queued at once so the GPU
 * does not wait for the host between tokens (a run-and-read loop leaves it idle for a submit, a
 * fence wait and a read per token). Each run's
 * token is passed to on_token in order and written to out_tokens[i] (max_tokens entries; may be
 * NULL). Decoding stops after max_tokens runs, after a run whose token is stop_token, or when
 * on_token returns nonzero; *out_count is the number of tokens delivered and the position advances
 * by exactly that many (a run queued past the stop is waited for and discarded: the cache row it
 * wrote lies past the position, where the next run writes again). Refused, running nothing, when
 * position + max_tokens exceeds the max context. The program's other outputs (e.g. logits) then
 * hold the last run's, which may be a discarded one; its token input and next-token output buffers
 * are not written. on_token must not call functions of this model (they fail with
 * VKQC_ERROR_INVALID_ARGUMENT). *out_gpu_ns (may be NULL): GPU time from the first run's start to
 * the last delivered run's end, host gaps included (0 without timestamps on the queue). */
typedef int (*vkqc_token_fn)(void* user_data, int32_t token);
#define VKQC_AUTO 0xFFFFFFFFu
typedef struct vkqc_greedy_options {
  uint32_t struct_size;    /* sizeof(vkqc_greedy_options) */
  uint32_t program;        /* VKQC_AUTO (default): the tokens=1 program */
  uint32_t token_input;    /* VKQC_AUTO: the program's one i32 [1] input besides the position */
  uint32_t token_output;   /* VKQC_AUTO: the program's first i32 [1] output */
  uint32_t depth;          /* runs queued at once, 1-4; 0 (default): 2 */
  int32_t stop_token;      /* -1 (default): none */
  vkqc_token_fn on_token;  /* NULL: none */
  void* user_data;
} vkqc_greedy_options;
void vkqc_greedy_options_init(vkqc_greedy_options* options);
vkqc_status vkqc_model_decode_greedy(vkqc_model model, const vkqc_greedy_options* options, int32_t first_token,
                                     uint32_t max_tokens, int32_t* out_tokens, uint32_t* out_count,
                                     double* out_gpu_ns);

/* An opaque entry the compiler carried from the graph into the bundle (e.g. "tokenizer": the
 * serialized tokenizer of an imported GGUF model; "description": one line of text about the
 * model). *data points into the model's copy of the bundle and lives until vkqc_model_destroy.
 * VKQC_ERROR_INVALID_ARGUMENT when the bundle has no such entry. */
vkqc_status vkqc_model_metadata(vkqc_model model, const char* key, const void** out_data, size_t* out_size);
uint32_t vkqc_model_position(vkqc_model model);
/* The index of a program's runtime-owned position input, or -1 (stateless). */
int32_t vkqc_model_position_input(vkqc_model model, uint32_t program);
/* 0 <= position <= max context; rows before it must have been written by earlier runs. */
vkqc_status vkqc_model_set_position(vkqc_model model, uint32_t position);
/* Zeros the state and sets the position to 0. */
vkqc_status vkqc_model_reset_state(vkqc_model model);
uint32_t vkqc_model_state_count(vkqc_model model);
vkqc_status vkqc_model_state_info(vkqc_model model, uint32_t index, vkqc_tensor_info* out_info);
/* Copies a whole state tensor (f16/f32 [kv_heads, max_context, head_dim]) to `data`. */
vkqc_status vkqc_model_read_state(vkqc_model model, const char* name, void* data, size_t size);

/* Debugging: copies `size` bytes of the arena tensor `name` of the memory plan (as `vkqc
 * inspect` lists it, e.g. "x.dq8ca.params") after a run. Valid until the next run. */
vkqc_status vkqc_model_read_intermediate(vkqc_model model, uint32_t program, const char* name, void* data, size_t size);

/* Layers (for profiling and inspection). */
typedef struct vkqc_layer_info {
  const char* name;
  const char* op;
  const char* variant;
  int integer_path;     /* int32 accumulation of quantized activations */
  uint64_t flops;
  uint64_t weight_bytes;
  int32_t op_index;     /* index of the source graph op; -1 for layers the compiler added */
} vkqc_layer_info;
uint32_t vkqc_model_layer_count(vkqc_model model, uint32_t program);
vkqc_status vkqc_model_layer_info(vkqc_model model, uint32_t program, uint32_t index, vkqc_layer_info* out_info);

/* The driver's statistics of the pipelines a layer dispatches (context option
 * capture_pipeline_statistics): one entry per statistic of each of the layer's dispatches, in
 * dispatch order. Call with out == NULL to get the count in *inout_count; otherwise up to
 * *inout_count entries are written and *inout_count is set to the number written. A layer with no
 * dispatch (a fused one) has none. VKQC_ERROR_INVALID_ARGUMENT where the context was created
 * without capture_pipeline_statistics. */
typedef struct vkqc_pipeline_statistic {
  uint32_t dispatch;       /* index of the dispatch within the layer */
  const char* name;        /* the driver's name, e.g. "Register Count"; lives as long as the model */
  const char* description; /* the driver's description */
  double value;            /* integers, floats and booleans (0 / 1) alike */
} vkqc_pipeline_statistic;
vkqc_status vkqc_model_layer_statistics(vkqc_model model, uint32_t program, uint32_t layer,
                                        vkqc_pipeline_statistic* out, uint32_t* inout_count);

/* Runs once more with timestamp queries around every layer; out_ns[i] = GPU time of layer i
 * in nanoseconds, *out_total_ns the whole command buffer. Arrays hold layer_count entries.
 * out_layer_ns may be NULL: then only the whole command buffer is timed, with no timestamps
 * between layers (the program's own cost; per-layer timestamps serialize the GPU a little).
 * A stateful program runs at the current position without advancing it. */
vkqc_status vkqc_model_run_timed(vkqc_model model, uint32_t program, double* out_layer_ns, double* out_total_ns);

/* Profiling: runs once, timed as a whole (timestamps at the start and end of the command buffer
 * only), with the dispatches of every layer i whose leave_out[i] is non-zero left out (leave_out
 * holds layer_count bytes); the barriers between two dispatches still recorded become one. The
 * difference to vkqc_model_run_timed's whole-program time is what those layers cost inside the
 * program, without the per-layer timestamps that serialize it. Results are NOT meaningful after
 * it: the layers left out did not run and the others read stale data (a stateful program runs at
 * the current position without advancing it, and its cache row there holds garbage until a real
 * run writes it again). The command buffers of the last two leave_out sets are kept, so runs of
 * two of them can alternate without recording again. */
vkqc_status vkqc_model_time_without(vkqc_model model, uint32_t program, const uint8_t* leave_out, double* out_total_ns);

const char* vkqc_status_string(vkqc_status status);
const char* vkqc_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* VKQC_H_ */
