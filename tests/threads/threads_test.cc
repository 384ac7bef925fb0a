// Thread safety as runtime/include/vkqc/vkqc.h states it, run on lavapipe; built plainly for ctest
// (tests/threads/run.sh) and with -fsanitize=thread by scripts/sanitize.sh, where any data race
// the runtime allows fails the run. What the header promises, and what is checked here:
//   1. independent contexts may be used from different threads at the same time: two threads
//      each create a context, load a different bundle and run it repeatedly, concurrently; every
//      output equals a single-threaded run's, bit for bit;
//   2. vkqc_last_error() is per thread: two threads fail at once with different messages and
//      each reads its own;
//   3. a context (and its models) may move between threads when the callers serialize: two
//      threads take turns under a mutex on one context and one model (write input, run, read
//      output, mapped pointers obtained by the other thread, submit in one thread and wait in the
//      other), then the model is destroyed before its context;
//   4. functions without a context (vkqc_verify_bundle, vkqc_status_string, vkqc_version) may be
//      called from any thread at any time;
//   5. a context's log callback gets that context's user_data, on the thread that made the call.
// usage: vkqc_threads_test BUNDLE_A BUNDLE_B [ROUNDS]   (VK_DRIVER_FILES selects lavapipe;
// VKQC_THREADS_VALIDATION=0 leaves the Khronos validation layer off, which is on by default and
// fails the test on any message, its thread-safety checks included)
#include <atomic>
#include <barrier>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "vkqc/vkqc.h"

namespace {

std::atomic<int> g_failures{0};
std::atomic<int> g_validation_messages{0};

#define CHECK(cond, ...)                                        \
  do {                                                          \
    if (!(cond)) {                                              \
      std::fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                        \
      std::fprintf(stderr, "\n");                               \
      ++g_failures;                                             \
    }                                                           \
  } while (0)

using Bytes = std::vector<uint8_t>;
using Outputs = std::vector<Bytes>;

struct LogSink {
  int id = 0;
  std::atomic<int> calls{0};
  std::thread::id owner;        // the thread that uses the context
  std::atomic<int> foreign{0};  // calls on another thread (never expected: the log comes from the caller)
};

void OnLog(void* user, vkqc_log_level level, const char* msg) {
  auto* sink = static_cast<LogSink*>(user);
  ++sink->calls;
  if (sink->owner != std::thread::id() && sink->owner != std::this_thread::get_id()) ++sink->foreign;
  if (level == VKQC_LOG_VALIDATION) {
    ++g_validation_messages;
    std::fprintf(stderr, "validation (context %d): %s\n", sink->id, msg);
  }
}

Bytes ReadFile(const char* path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

bool Validation() {
  const char* v = std::getenv("VKQC_THREADS_VALIDATION");
  return !v || std::strcmp(v, "0") != 0;
}

vkqc_context NewContext(LogSink* sink) {
  vkqc_context_options o;
  vkqc_context_options_init(&o);
  o.enable_validation = Validation();
  o.log = &OnLog;
  o.log_user_data = sink;
  vkqc_context ctx = nullptr;
  const vkqc_status s = vkqc_context_create(&o, &ctx);
  CHECK(s == VKQC_OK, "vkqc_context_create: %s", vkqc_last_error());
  return s == VKQC_OK ? ctx : nullptr;
}

// Deterministic inputs of program 0 (f32 values in [-2, 2), other types a byte pattern), seeded.
void WriteInputs(vkqc_model m, int seed) {
  for (uint32_t i = 0; i < vkqc_model_input_count(m, 0); ++i) {
    vkqc_tensor_info info;
    CHECK(vkqc_model_input_info(m, 0, i, &info) == VKQC_OK, "input_info: %s", vkqc_last_error());
    Bytes b(info.size_bytes);
    if (info.dtype == VKQC_F32) {
      for (size_t k = 0; k < b.size() / 4; ++k) {
        const float v = float(int((k * 37 + size_t(seed) * 11) % 64) - 32) / 16.0f;
        std::memcpy(b.data() + 4 * k, &v, 4);
      }
    } else {
      for (size_t k = 0; k < b.size(); ++k) b[k] = uint8_t(k * 7 + size_t(seed));
    }
    CHECK(vkqc_model_write_input(m, 0, i, b.data(), b.size()) == VKQC_OK, "write_input: %s", vkqc_last_error());
  }
}

Outputs ReadOutputs(vkqc_model m) {
  Outputs out;
  for (uint32_t i = 0; i < vkqc_model_output_count(m, 0); ++i) {
    vkqc_tensor_info info;
    CHECK(vkqc_model_output_info(m, 0, i, &info) == VKQC_OK, "output_info: %s", vkqc_last_error());
    Bytes b(info.size_bytes);
    CHECK(vkqc_model_read_output(m, 0, i, b.data(), b.size()) == VKQC_OK, "read_output: %s", vkqc_last_error());
    out.push_back(std::move(b));
  }
  return out;
}

// Load, run once per seed in [0, rounds) and return every round's outputs.
std::vector<Outputs> LoadAndRun(vkqc_context ctx, const Bytes& bundle, int rounds) {
  std::vector<Outputs> all;
  vkqc_model m = nullptr;
  const vkqc_status s = vkqc_model_load(ctx, bundle.data(), bundle.size(), nullptr, &m);
  CHECK(s == VKQC_OK, "vkqc_model_load: %s", vkqc_last_error());
  if (s != VKQC_OK) return all;
  for (int r = 0; r < rounds; ++r) {
    WriteInputs(m, r);
    CHECK(vkqc_model_run(m, 0) == VKQC_OK, "vkqc_model_run: %s", vkqc_last_error());
    all.push_back(ReadOutputs(m));
  }
  vkqc_model_destroy(m);
  return all;
}

// 1 and 5: two contexts in two threads, concurrently, against single-threaded references.
void TwoContextsTwoThreads(const Bytes& a, const Bytes& b, int rounds) {
  LogSink ref_sink;
  vkqc_context ref = NewContext(&ref_sink);
  if (!ref) return;
  const std::vector<Outputs> want_a = LoadAndRun(ref, a, rounds);
  const std::vector<Outputs> want_b = LoadAndRun(ref, b, rounds);
  vkqc_context_destroy(ref);

  LogSink sinks[2];
  sinks[0].id = 1;
  sinks[1].id = 2;
  std::vector<Outputs> got[2];
  std::barrier start(2);
  auto worker = [&](int t) {
    sinks[t].owner = std::this_thread::get_id();
    start.arrive_and_wait();  // create the contexts at the same time too
    vkqc_context ctx = NewContext(&sinks[t]);
    if (!ctx) return;
    got[t] = LoadAndRun(ctx, t == 0 ? a : b, rounds);
    vkqc_context_destroy(ctx);
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  CHECK(got[0] == want_a, "thread 0's outputs differ from the single-threaded run (%zu rounds)", got[0].size());
  CHECK(got[1] == want_b, "thread 1's outputs differ from the single-threaded run (%zu rounds)", got[1].size());
  for (const LogSink& s : sinks) {
    CHECK(s.calls > 0, "context %d's log callback was never called (context creation logs the device)", s.id);
    CHECK(s.foreign == 0, "context %d's log callback ran on another thread", s.id);
  }
  std::printf("ok   two contexts in two threads: %d runs each, outputs identical to the single-threaded runs\n",
              rounds);
}

// 2: vkqc_last_error() per thread.
void LastErrorPerThread() {
  std::barrier sync(2);
  auto worker = [&](size_t size) {
    const Bytes junk(size, 0xAB);
    CHECK(vkqc_verify_bundle(junk.data(), junk.size()) == VKQC_ERROR_INVALID_BUNDLE, "junk accepted");
    sync.arrive_and_wait();  // both threads have failed
    char want[32];
    std::snprintf(want, sizeof want, "(%zu bytes)", size);
    const std::string got = vkqc_last_error();
    CHECK(got.find(want) != std::string::npos, "thread's last error is not its own: '%s' (expected %s)", got.c_str(),
          want);
    sync.arrive_and_wait();
  };
  std::thread t0(worker, 3), t1(worker, 5);
  t0.join();
  t1.join();
  std::printf("ok   vkqc_last_error is per thread\n");
}

// 3: one context and one model, used by two threads in turn (the callers serialize).
void SerializedContextAcrossThreads(const Bytes& a, int rounds) {
  LogSink sink;
  vkqc_context ctx = NewContext(&sink);
  if (!ctx) return;
  const std::vector<Outputs> want = LoadAndRun(ctx, a, rounds);
  std::mutex mu;
  vkqc_model m = nullptr;
  void* mapped = nullptr;
  size_t mapped_size = 0;
  {
    std::thread loader([&] {
      std::lock_guard<std::mutex> lock(mu);
      CHECK(vkqc_model_load(ctx, a.data(), a.size(), nullptr, &m) == VKQC_OK, "load: %s", vkqc_last_error());
      vkqc_tensor_info info;
      if (m && vkqc_model_map_input(m, 0, 0, &mapped) == VKQC_OK && vkqc_model_input_info(m, 0, 0, &info) == VKQC_OK)
        mapped_size = info.size_bytes;
    });
    loader.join();
  }
  if (!m) {
    vkqc_context_destroy(ctx);
    return;
  }
  // Round r: thread r % 2 writes the inputs and submits; the other thread waits for the GPU and
  // reads the outputs. Every fourth round the inputs are written again through the pointer the
  // loading thread mapped.
  std::vector<Outputs> got(static_cast<size_t>(rounds));
  std::condition_variable cv;
  int r = 0;
  bool submitted = false;
  auto worker = [&](int t) {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return r >= rounds || (submitted ? (r + 1) % 2 == t : r % 2 == t); });
      if (r >= rounds) return;
      if (!submitted) {
        WriteInputs(m, r);
        if (r % 4 == 3 && mapped) {
          Bytes copy(mapped_size);
          std::memcpy(copy.data(), mapped, mapped_size);
          std::memcpy(mapped, copy.data(), mapped_size);
        }
        CHECK(vkqc_model_submit(m, 0) == VKQC_OK, "submit: %s", vkqc_last_error());
        submitted = true;
      } else {
        CHECK(vkqc_model_wait(m, UINT64_MAX) == VKQC_OK, "wait: %s", vkqc_last_error());
        got[size_t(r)] = ReadOutputs(m);
        submitted = false;
        ++r;
      }
      cv.notify_all();
    }
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  CHECK(got == want, "outputs of the model used by two threads in turn differ from single-threaded runs");
  vkqc_model_destroy(m);
  vkqc_context_destroy(ctx);
  std::printf("ok   one context used by two threads in turn\n");
}

// 4: context-free functions from several threads at once.
void ContextFreeFunctions(const Bytes& a) {
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        CHECK(vkqc_verify_bundle(a.data(), a.size()) == VKQC_OK, "verify: %s", vkqc_last_error());
        CHECK(std::strcmp(vkqc_status_string(VKQC_ERROR_TIMEOUT), "") != 0, "status string");
        CHECK(vkqc_version()[0] != '\0', "version");
      }
    });
  for (auto& t : ts) t.join();
  std::printf("ok   vkqc_verify_bundle, vkqc_status_string, vkqc_version from 4 threads\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s BUNDLE_A BUNDLE_B [ROUNDS]\n", argv[0]);
    return 2;
  }
  const Bytes a = ReadFile(argv[1]), b = ReadFile(argv[2]);
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 8;
  if (a.empty() || b.empty()) {
    std::fprintf(stderr, "cannot read the bundles\n");
    return 2;
  }
  TwoContextsTwoThreads(a, b, rounds);
  LastErrorPerThread();
  SerializedContextAcrossThreads(a, rounds);
  ContextFreeFunctions(a);
  CHECK(g_validation_messages == 0, "%d validation-layer messages", g_validation_messages.load());
  std::printf("%s: %d failure(s)\n", g_failures ? "FAIL" : "PASS", g_failures.load());
  return g_failures ? 1 : 0;
}
