// The vkqc tool's progress line for long work (packing weights, compiling shaders, converting a
// checkpoint, tuning): one line on stderr, redrawn in place ('\r') at most ~10 times a second
// and erased when its stage ends. Drawn only when stderr is a terminal and the log level shows
// info messages (SetUpLogging decides); otherwise every call returns at once and nothing is
// written, so redirected output and -q stay clean. Thread-safe.
#pragma once
#include <cstdint>
#include <string>

#include "compiler/common/progress.h"

namespace vkqc::progress {

void Enable(bool on);
bool Enabled();

// "vkqc: STAGE  DONE/TOTAL (PCT%)"; done >= total ends the stage and erases the line.
void Update(const std::string& stage, uint64_t done, uint64_t total);

// Erases the line if one is shown: before anything else is written to the terminal (log
// messages, an error, a command's results).
void ClearLine();

// A compiler ProgressFn that draws through Update; empty (no calls at all) when disabled.
ProgressFn Callback();

}  // namespace vkqc::progress
