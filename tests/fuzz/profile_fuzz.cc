// libFuzzer target: target profiles (compiler/profile/profile.cc): a Vulkan Profiles JSON document
// and its vkqc sidecar, as `vkqc compile --target FILE.json` reads them (FILE.vkqc.json beside it),
// and the sidecar updates `vkqc roofline` / `vkqc tune` write.
// Input: profile JSON [kSeparator sidecar JSON]. Properties: an accepted profile written back
// (WriteProfileJson, what `vkqc probe` writes) is accepted again; a sidecar that an update
// accepted is accepted again after the update.
#include <string>

#include "compiler/profile/profile.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vkqc;
  const fuzz::Split in = fuzz::SplitInput(data, size);
  const std::string json(in.first), side(in.second);
  auto p = ParseProfileJson(json, side, "fuzz.json");
  fuzz::NoInternalError(p, "ParseProfileJson");
  if (p.ok()) {
    const ProfileFiles files = WriteProfileJson(*p);
    auto back = ParseProfileJson(files.profile_json, files.sidecar_json, "round trip");
    if (!back.ok()) std::fprintf(stderr, "%s\n", back.error().message.c_str());
    fuzz::Require(back.ok(), "a profile written by WriteProfileJson reads back");
  }
  // The sidecar on its own: `vkqc bench --roofline X.vkqc.json` and the updates of roofline/tune.
  const std::string path = fuzz::WriteScratch("p.vkqc.json", side);
  fuzz::NoInternalError(LoadRoofline(path), "LoadRoofline");
  Roofline rl;
  rl.device = "fuzz";
  rl.read_gbps = 1.5;
  auto r = SetSidecarRoofline(side, "fuzz.vkqc.json", rl);
  fuzz::NoInternalError(r, "SetSidecarRoofline");
  if (r.ok()) fuzz::Require(SetSidecarRoofline(*r, "again", rl).ok(), "an updated sidecar is accepted again");
  TargetProfile tuned;
  tuned.gemv_threads = 64;
  auto t = SetSidecarTuning(side, "fuzz.vkqc.json", tuned);
  fuzz::NoInternalError(t, "SetSidecarTuning");
  if (t.ok()) fuzz::Require(SetSidecarTuning(*t, "again", tuned).ok(), "a tuned sidecar is accepted again");
  return 0;
}
