// Shared by `vkqc roofline` and `vkqc tune`: a runtime context that collects validation messages,
// loading an in-memory bundle, GPU-timestamp medians, and the checks of a sidecar to be written.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/common/result.h"
#include "compiler/profile/profile.h"
#include "tools/vkqc/logging.h"
#include "tools/vkqc/probe.h"
#include "vkqc/vkqc.h"

namespace vkqc {

// One runtime context; validation messages are collected and fail the command at the end.
struct Session {
  vkqc_context ctx = nullptr;
  ValidationLog vlog;  // as the CLI's (logging.h)
  ~Session();
  // Creates the context on `device` (-1: the first), validation layer on when asked.
  Status Open(int device, bool validation);
};

struct ModelDeleter {
  void operator()(vkqc_model_t* m) const { vkqc_model_destroy(m); }
};
using Model = std::unique_ptr<vkqc_model_t, ModelDeleter>;

Result<Model> Load(Session& s, const std::vector<uint8_t>& bundle);

// Layer index meaning "the whole program".
inline constexpr uint32_t kWholeProgram = UINT32_MAX;

// GPU nanoseconds of `layer` in one timed run of `program` (timestamps around every layer), or of the
// whole program (kWholeProgram: timestamps at its start and end only).
Result<double> TimeOnce(vkqc_model m, uint32_t layer, uint32_t program = 0);

struct Timing {
  double median_ns = 0;
  size_t runs = 0;
};

// Two warm-up runs, then runs until they cover min_ms of measured time and number at least 10.
Result<Timing> Measure(vkqc_model m, uint32_t layer, double min_ms, uint32_t program = 0);

// Checks an -o path before anything is measured: the name ends in .vkqc.json, an existing file is
// a sidecar this command may update, a new one can be created. Returns the existing text ("" if none).
Result<std::string> CheckSidecarOutput(const std::string& out);

// What `vkqc roofline` and `vkqc tune` start from.
struct MeasureTarget {
  TargetProfile profile;         // the probed device
  ProbedDeviceFacts facts;
  std::string existing_sidecar;  // the -o file's text, "" when new or no -o
};

// The start both commands share, all before anything is measured: checks min_ms and the -o
// sidecar, probes `device`, opens `s` on it (validation as asked) and checks that the runtime
// picked the same device as the probe (errors list the devices).
Result<MeasureTarget> OpenMeasurement(int device, double min_ms, const std::string& out, bool validation,
                                      Session& s);

}  // namespace vkqc
