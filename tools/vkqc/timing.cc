#include "tools/vkqc/timing.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "compiler/graph/vkqg_io.h"
#include "compiler/profile/profile.h"

namespace vkqc {

void Session::Log(void* user, vkqc_log_level level, const char* msg) {
  auto* self = static_cast<Session*>(user);
  if (level == VKQC_LOG_VALIDATION) {
    self->validation.push_back(msg);
    std::fprintf(stderr, "validation: %s\n", msg);
  } else if (level >= VKQC_LOG_WARNING) {
    std::fprintf(stderr, "vkqc: %s\n", msg);
  }
}

Status Session::Open(int device, bool validation) {
  vkqc_context_options co;
  vkqc_context_options_init(&co);
  co.enable_validation = validation;
  co.device_index = device;
  co.log = &Session::Log;
  co.log_user_data = this;
  if (vkqc_context_create(&co, &ctx) != VKQC_OK) return UserError(vkqc_last_error());
  return {};
}

Result<Model> Load(Session& s, const std::vector<uint8_t>& bundle) {
  vkqc_model_options mo;
  vkqc_model_options_init(&mo);
  vkqc_model m = nullptr;
  if (vkqc_model_load(s.ctx, bundle.data(), bundle.size(), &mo, &m) != VKQC_OK) return UserError(vkqc_last_error());
  return Model(m);
}

Result<double> TimeOnce(vkqc_model m, uint32_t layer, uint32_t program) {
  std::vector<double> layer_ns(vkqc_model_layer_count(m, program));
  double total = 0;
  if (vkqc_model_run_timed(m, program, layer_ns.data(), &total) != VKQC_OK) return UserError(vkqc_last_error());
  if (layer == kWholeProgram) return total;
  if (layer >= layer_ns.size()) return InternalError("timing: no layer " + std::to_string(layer));
  return layer_ns[layer];
}

Result<Timing> Measure(vkqc_model m, uint32_t layer, double min_ms, uint32_t program) {
  for (int w = 0; w < 2; ++w) VKQC_TRY(TimeOnce(m, layer, program));
  std::vector<double> ns;
  double acc_ms = 0;
  while ((acc_ms < min_ms || ns.size() < 10) && ns.size() < 100000) {
    VKQC_ASSIGN_OR_RETURN(double t, TimeOnce(m, layer, program));
    ns.push_back(t);
    acc_ms += t / 1e6;
  }
  std::sort(ns.begin(), ns.end());
  if (!(ns[ns.size() / 2] > 0)) return UserError("the device's timestamps did not advance (median time 0)");
  return Timing{ns[ns.size() / 2], ns.size()};
}

Result<std::string> CheckSidecarOutput(const std::string& out) {
  const std::string suffix = ".vkqc.json";
  if (out.size() <= suffix.size() || out.compare(out.size() - suffix.size(), suffix.size(), suffix) != 0)
    return UserError("-o " + out + ": the result goes into a profile sidecar, whose name ends in .vkqc.json "
                     "(e.g. mine.vkqc.json beside mine.json from `vkqc probe -o mine.json`)");
  std::error_code ec;
  if (std::filesystem::exists(out, ec)) {
    VKQC_ASSIGN_OR_RETURN(auto bytes, ReadFileBytes(out));
    std::string text(bytes->begin(), bytes->end());
    VKQC_TRY(SetSidecarRoofline(text, out, Roofline{}));  // refuses what it would not merge into
    if (access(out.c_str(), W_OK) != 0) return UserError(out + ": the file is not writable");
    return text;
  }
  std::filesystem::path dir = std::filesystem::path(out).parent_path();
  if (dir.empty()) dir = ".";
  if (!std::filesystem::is_directory(dir, ec))
    return UserError("-o " + out + ": directory " + dir.string() + " does not exist");
  if (access(dir.c_str(), W_OK) != 0) return UserError("-o " + out + ": directory " + dir.string() + " is not writable");
  return std::string();
}

}  // namespace vkqc
