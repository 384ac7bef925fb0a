#include "tools/vkqc/timing.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "compiler/graph/vkqg_io.h"
#include "compiler/profile/profile.h"
#include "tools/vkqc/logging.h"

namespace vkqc {

Session::~Session() { vkqc_context_destroy(ctx); }

Status Session::Open(int device, bool validation) {
  vkqc_context_options co;
  vkqc_context_options_init(&co);
  co.enable_validation = validation;
  co.device_index = device;
  co.log = &ValidationLog::Callback;
  co.log_user_data = &vlog;
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
  double total = 0;
  if (layer == kWholeProgram) {  // no timestamps between layers: they would serialize the GPU a little
    if (vkqc_model_run_timed(m, program, nullptr, &total) != VKQC_OK) return UserError(vkqc_last_error());
    return total;
  }
  std::vector<double> layer_ns(vkqc_model_layer_count(m, program));
  if (vkqc_model_run_timed(m, program, layer_ns.data(), &total) != VKQC_OK) return UserError(vkqc_last_error());
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

Result<MeasureTarget> OpenMeasurement(int device, double min_ms, const std::string& out, bool validation,
                                      Session& s) {
  if (!(min_ms >= 0) || min_ms > 60000) return UserError("--min-ms must be between 0 and 60000");
  MeasureTarget t;
  if (!out.empty()) {
    VKQC_ASSIGN_OR_RETURN(t.existing_sidecar, CheckSidecarOutput(out));
  }
  std::string device_list;
  auto probed = ProbeLocalDevice(device, &device_list, &t.facts);
  if (!probed.ok()) {
    std::string m = probed.error().message;
    while (!m.empty() && m.back() == '\n') m.pop_back();
    return UserError((device >= 0 ? "--device " + std::to_string(device) + ": " : std::string()) + m);
  }
  while (!device_list.empty() && device_list.back() == '\n') device_list.pop_back();
  t.profile = std::move(*probed);
  VKQC_TRY(s.Open(device, validation));
  const char* rt_name = "";
  vkqc_context_device_name(s.ctx, &rt_name);
  if (t.facts.device_name != rt_name)
    return UserError("device index " + std::to_string(device) + " is '" + t.facts.device_name +
                     "' among all devices but '" + rt_name + "' among devices with a compute queue; devices:\n" +
                     device_list);
  return t;
}

}  // namespace vkqc
