#include "compiler/common/log.h"

#include <spdlog/spdlog.h>

#include <cstdio>

namespace vkqc::log {
namespace {

spdlog::level::level_enum ToSpd(Level l) { return static_cast<spdlog::level::level_enum>(int(l)); }

}  // namespace

bool Enabled(Level level) { return spdlog::default_logger_raw()->should_log(ToSpd(level)); }

void Write(Level level, std::string_view message) {
  if (level == Level::Off) return;
  spdlog::default_logger_raw()->log(ToSpd(level), message);
}

void SetLevel(Level level) { spdlog::set_level(ToSpd(level)); }

Level GetLevel() { return static_cast<Level>(int(spdlog::get_level())); }

std::optional<Level> ParseLevel(std::string_view name) {
  if (name == "trace") return Level::Trace;
  if (name == "debug") return Level::Debug;
  if (name == "info") return Level::Info;
  if (name == "warn" || name == "warning") return Level::Warn;
  if (name == "error") return Level::Error;
  if (name == "off") return Level::Off;
  return std::nullopt;
}

const char* LevelName(Level level) {
  switch (level) {
    case Level::Trace: return "trace";
    case Level::Debug: return "debug";
    case Level::Info: return "info";
    case Level::Warn: return "warning";
    case Level::Error: return "error";
    case Level::Off: return "off";
  }
  return "?";
}

std::string Bytes(uint64_t b) {
  char buf[64];
  if (b >= (1ull << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB", double(b) / (1 << 20));
  else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", double(b) / 1024);
  else std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  return buf;
}

}  // namespace vkqc::log
