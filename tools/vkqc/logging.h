// The vkqc tool's logging: spdlog's default logger writes to stderr at the level the global
// flags give, which every command accepts (before or after the command's name):
//   -v (debug), -q (errors only), --log-level trace|debug|info|warn|error|off; info otherwise.
// Lines read "vkqc: MESSAGE" (info), "vkqc: warning: ...", "vkqc: error: ...", "vkqc: debug: ...".
// A command's results stay on stdout, and the error that ends a command is printed whatever
// the level. The progress line (progress.h) is on at info and more verbose levels, on a terminal.
#pragma once
#include <string>
#include <vector>

#include "compiler/common/log.h"
#include "compiler/common/result.h"
#include "tools/vkqc/validation_waiver.h"
#include "vkqc/vkqc.h"

namespace vkqc {

struct Args;

// -v, -q, --log-level.
inline bool IsGlobalFlag(const std::string& k) { return k == "-v" || k == "-q" || k == "--log-level"; }

// argv with the global flags given before the command moved after it (`vkqc -v compile ...` is
// `vkqc compile ... -v`; with no command, argv[0] alone); the pointers are argv's.
std::vector<char*> GlobalFlagsAfterCommand(int argc, char** argv);

// The level the global flags ask for; one of them at most.
Result<log::Level> LogLevelFromArgs(const Args& a);

// Points the default logger at stderr with `level`, and turns the progress line on where it
// belongs (stderr a terminal that is not TERM=dumb, level info or more verbose).
void SetUpLogging(log::Level level);

// A message of the runtime's log callback: its warnings and errors as such, its info and debug
// messages as debug and trace (detail for a command-line user).
void LogRuntimeMessage(vkqc_log_level level, const char* message);

// The runtime log callback of the CLI's contexts (vkqc_context_options::log, its user data this
// object): validation messages the waiver knows (the Debian layer's VK_KHR_cooperative_matrix
// ones) are counted and dropped, the others kept in `messages` (they fail the command) and logged
// as errors; every other message goes to LogRuntimeMessage. Destroyed after its context, it
// reports how many messages were waived.
struct ValidationLog {
  std::vector<std::string> messages;
  validation::Waiver waiver;
  ~ValidationLog();
  static void Callback(void* user, vkqc_log_level level, const char* message);
  // The command's error when any message was kept ("N validation message(s) (see above)" and
  // `suffix`), else OK.
  Status Verdict(const std::string& suffix = "") const { return VerdictOf(messages.size(), suffix); }
  // The same for `kept` messages gathered across several contexts' logs (tune's candidates).
  static Status VerdictOf(size_t kept, const std::string& suffix = "");
};

}  // namespace vkqc
