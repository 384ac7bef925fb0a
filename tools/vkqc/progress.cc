#include "tools/vkqc/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>

namespace vkqc::progress {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<bool> g_enabled{false};
std::mutex g_mu;
bool g_shown = false;   // a line is on the terminal (guarded by g_mu)
std::string g_stage;    // the stage it shows
Clock::time_point g_last;

void EraseLocked() {
  if (!g_shown) return;
  std::fputs("\r\x1b[K", stderr);  // carriage return, erase to the end of the line
  std::fflush(stderr);
  g_shown = false;
}

// Columns of the terminal on stderr (80 when unknown): the line must not wrap, or '\r' would
// redraw only its last row.
size_t Columns() {
  winsize ws{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

}  // namespace

void Enable(bool on) { g_enabled = on; }
bool Enabled() { return g_enabled; }

void Update(const std::string& stage, uint64_t done, uint64_t total) {
  if (!g_enabled) return;
  std::lock_guard<std::mutex> lock(g_mu);
  if (done >= total) {  // the stage ended
    EraseLocked();
    g_stage.clear();
    return;
  }
  const Clock::time_point now = Clock::now();
  // A new stage is drawn at once; the same stage again after 100 ms.
  if (g_shown && stage == g_stage && now - g_last < std::chrono::milliseconds(100)) return;
  char counts[64];
  std::snprintf(counts, sizeof counts, "  %llu/%llu (%d%%)", static_cast<unsigned long long>(done),
                static_cast<unsigned long long>(total), int(100 * done / total));
  std::string line = "vkqc: ";
  line += stage;
  line += counts;
  const size_t cols = Columns();
  if (line.size() >= cols) line.resize(cols - 1);
  std::fprintf(stderr, "\r%s\x1b[K", line.c_str());
  std::fflush(stderr);
  g_shown = true;
  g_stage = stage;
  g_last = now;
}

void ClearLine() {
  if (!g_enabled) return;
  std::lock_guard<std::mutex> lock(g_mu);
  EraseLocked();
}

ProgressFn Callback() {
  if (!g_enabled) return {};
  return [](const std::string& stage, uint64_t done, uint64_t total) { Update(stage, done, total); };
}

}  // namespace vkqc::progress
