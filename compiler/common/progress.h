// Progress of long compiler work (packing weights, compiling shaders, converting a checkpoint),
// reported through a callback the caller installs: the compiler never writes to the terminal
// itself (the vkqc CLI draws a progress line on stderr, tools/vkqc/progress.h).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace vkqc {

// Called on the compiling thread with `done` in [0, total]; a stage starts with done == 0 and
// ends with done == total (the last call for that `stage`). `stage` names the work in a few
// words ("packing weights", "compiling shaders (tokens=64)").
using ProgressFn = std::function<void(const std::string& stage, uint64_t done, uint64_t total)>;

inline void ReportProgress(const ProgressFn& fn, const std::string& stage, uint64_t done, uint64_t total) {
  if (fn) fn(stage, done, total);
}

}  // namespace vkqc
