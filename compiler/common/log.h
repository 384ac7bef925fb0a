// Logging of the compiler and the vkqc tool: messages go to spdlog's default logger (DESIGN 8:
// spdlog stays in the compiler and the tools; the runtime logs through its callback). Whoever
// owns the process decides the sink and the level: the vkqc CLI writes to stderr at the level
// of -v / -q / --log-level (tools/vkqc/logging.h); a program that sets nothing gets spdlog's
// default (stdout, info and above). The compiler logs at debug and trace only, so tests and
// embedding programs see nothing unless they ask for it.
//
// Only this header's functions are seen by callers: spdlog (with fmt, header-only as Debian
// ships them as shared libraries only, which the statically linked tool should not depend on)
// is compiled in log.cc alone, as it costs ~10 s of compile time per translation unit.
// Thread-safe (spdlog's default logger is).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vkqc::log {

enum class Level : int { Trace = 0, Debug = 1, Info = 2, Warn = 3, Error = 4, Off = 6 };

// Whether a message at `level` would be written: guard messages that are costly to build.
bool Enabled(Level level);
void Write(Level level, std::string_view message);

inline void Trace(std::string_view m) { Write(Level::Trace, m); }
inline void Debug(std::string_view m) { Write(Level::Debug, m); }
inline void Info(std::string_view m) { Write(Level::Info, m); }
inline void Warn(std::string_view m) { Write(Level::Warn, m); }
inline void Error(std::string_view m) { Write(Level::Error, m); }

// The default logger's level.
void SetLevel(Level level);
Level GetLevel();

// "trace", "debug", "info", "warn" (or "warning"), "error", "off"; nullopt otherwise.
std::optional<Level> ParseLevel(std::string_view name);
const char* LevelName(Level level);

// Byte counts for messages: "512 B", "3.0 KiB", "1.25 MiB".
std::string Bytes(uint64_t bytes);

}  // namespace vkqc::log
