#include "tools/vkqc/logging.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "tools/vkqc/cli.h"
#include "tools/vkqc/progress.h"

namespace vkqc {
namespace {

// stderr, one line per message with the level named (info plain), after erasing the progress line.
class StderrSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    progress::ClearLine();
    std::string line = "vkqc: ";
    switch (msg.level) {
      case spdlog::level::trace: line += "trace: "; break;
      case spdlog::level::debug: line += "debug: "; break;
      case spdlog::level::warn: line += "warning: "; break;
      case spdlog::level::err:
      case spdlog::level::critical: line += "error: "; break;
      default: break;
    }
    line.append(msg.payload.data(), msg.payload.size());
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
  void flush_() override { std::fflush(stderr); }
};

}  // namespace

std::vector<char*> GlobalFlagsAfterCommand(int argc, char** argv) {
  std::vector<char*> out{argv[0]}, flags;
  int i = 1;
  while (i < argc) {
    const std::string s = argv[i];
    if (s == "-v" || s == "-q" || s.rfind("--log-level=", 0) == 0) {
      flags.push_back(argv[i++]);
    } else if (s == "--log-level" && i + 1 < argc) {
      flags.push_back(argv[i++]);
      flags.push_back(argv[i++]);
    } else {
      break;
    }
  }
  if (i == argc) return out;  // global flags and no command: the usage
  out.insert(out.end(), argv + i, argv + argc);
  out.insert(out.end(), flags.begin(), flags.end());
  return out;
}

Result<log::Level> LogLevelFromArgs(const Args& a) {
  if (int(a.Has("-v")) + int(a.Has("-q")) + int(a.Has("--log-level")) > 1)
    return UserError("-v, -q and --log-level each set the log level: give one of them");
  if (a.Has("-v")) return log::Level::Debug;
  if (a.Has("-q")) return log::Level::Error;
  if (!a.Has("--log-level")) return log::Level::Info;
  const std::string v = a.Get("--log-level");
  const auto level = log::ParseLevel(v);
  if (!level) return UserError("--log-level must be trace, debug, info, warn, error or off, not '" + v + "'");
  return *level;
}

void SetUpLogging(log::Level level) {
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("vkqc", std::make_shared<StderrSink>()));
  log::SetLevel(level);
  const char* term = std::getenv("TERM");
  progress::Enable(level <= log::Level::Info && isatty(STDERR_FILENO) && !(term && !std::strcmp(term, "dumb")));
}

ValidationLog::~ValidationLog() {
  if (waiver.waived())
    log::Info("validation: " + std::to_string(waiver.waived()) +
              " messages waived (this validation layer predates VK_KHR_cooperative_matrix)");
}

void ValidationLog::Callback(void* user, vkqc_log_level level, const char* message) {
  auto* self = static_cast<ValidationLog*>(user);
  if (level != VKQC_LOG_VALIDATION) return LogRuntimeMessage(level, message);
  if (self->waiver.Waive(message)) return;
  self->messages.push_back(message);
  log::Error(std::string("validation: ") + message);
}

Status ValidationLog::VerdictOf(size_t kept, const std::string& suffix) {
  if (kept == 0) return {};
  return UserError(std::to_string(kept) + " validation message(s) (see above)" + suffix);
}

void LogRuntimeMessage(vkqc_log_level level, const char* message) {
  switch (level) {
    case VKQC_LOG_DEBUG: log::Trace(message); break;
    case VKQC_LOG_INFO: log::Debug(message); break;
    case VKQC_LOG_WARNING: log::Warn(message); break;
    default: log::Error(message); break;
  }
}

}  // namespace vkqc
