// `vkqc tune`: sweeps the linear kernels' per-profile parameters on the local device (GEMV
// workgroup size, channels per workgroup, units in flight; the GEMM tile; the GEMV/GEMM
// threshold) over synthetic layers, timed with GPU timestamps, and writes the winners into a
// profile sidecar that `vkqc compile --target` then uses.
#pragma once
#include <string>

#include "compiler/common/result.h"

namespace vkqc {

struct TuneOptions {
  std::string out;          // sidecar to write or update (.vkqc.json); empty: print only
  int device = -1;          // device index; -1: the first
  double min_ms = 20;       // measured GPU time per candidate (>= 10 runs)
  bool quick = false;       // a reduced sweep on small layers (CPU devices always get it)
  bool validation = false;  // Khronos validation; any message fails the command
};

Status RunTune(const TuneOptions& options);

}  // namespace vkqc
