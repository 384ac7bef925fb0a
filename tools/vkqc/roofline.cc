#include "tools/vkqc/roofline.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include "compiler/graph/vkqg_io.h"
#include "tools/vkqc/probe.h"
#include "tools/vkqc/roofline_bundles.h"
#include "tools/vkqc/timing.h"
#include "vkqc/vkqc.h"

namespace vkqc {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint32_t kMaxGroups = 65535;  // maxComputeWorkGroupCount[0] is at least this on every device

// Four significant digits: what a roofline can honestly claim.
double Round4(double v) {
  if (!(v > 0) || !std::isfinite(v)) return 0;
  const double scale = std::pow(10.0, 3 - std::floor(std::log10(v)));
  return std::round(v * scale) / scale;
}

void Row(const char* what, const std::string& rate, const Timing& t, const std::string& work) {
  std::printf("%-34s %-18s %10.3f %6zu  %s\n", what, rate.c_str(), t.median_ns / 1e6, t.runs, work.c_str());
  std::fflush(stdout);
}

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// Compute kernels: grows the per-invocation iterations until a run takes about target_ms
// (a few rounds: the first estimate can be skewed by fixed per-dispatch costs), then measures.
Result<Timing> MeasureCompute(Session& s, RooflineBundleParams params, double target_ms, double min_ms,
                              double* ops) {
  RooflineBundle b;
  Model m;
  uint32_t& iters = params.iters;
  for (int round = 0;; ++round) {
    VKQC_ASSIGN_OR_RETURN(b, BuildRooflineBundle(params));
    VKQC_ASSIGN_OR_RETURN(m, Load(s, b.bytes));
    VKQC_TRY(TimeOnce(m.get(), b.measured_layer));
    VKQC_ASSIGN_OR_RETURN(double ns, TimeOnce(m.get(), b.measured_layer));
    const double ms = ns / 1e6;
    constexpr uint32_t kMaxIters = 1u << 24;
    if (ms >= 0.5 * target_ms || iters >= kMaxIters || round >= 5) break;
    const double scale = ms > 0 ? std::min(target_ms / ms, 64.0) : 64.0;
    iters = uint32_t(std::min<double>(kMaxIters, std::ceil(iters * scale)));
  }
  *ops = b.work;
  return Measure(m.get(), b.measured_layer, min_ms);
}

// The sync kernels at `steps` steps: the whole program's time, each result word checked (every
// step read what the one before wrote). `resident` false: a GridBarrier spin gave up (the grid was
// not all resident at once), nothing measured.
struct SyncRun {
  Timing t;
  bool resident = true;
};
Result<SyncRun> RunSync(Session& s, RooflineKernel kernel, uint32_t groups, uint32_t steps, double min_ms) {
  VKQC_ASSIGN_OR_RETURN(RooflineBundle b, BuildRooflineBundle({kernel, groups, 0, steps}));
  VKQC_ASSIGN_OR_RETURN(Model m, Load(s, b.bytes));
  SyncRun run;
  auto check = [&]() -> Status {
    if (!b.flag_tensor.empty()) {
      uint32_t sync[2] = {0, 0};
      if (vkqc_model_read_intermediate(m.get(), 0, b.flag_tensor.c_str(), sync, sizeof sync) != VKQC_OK)
        return UserError(vkqc_last_error());
      if (sync[1] != 0) {
        run.resident = false;
        return {};
      }
    }
    std::vector<uint32_t> words(b.out_offset + groups);
    if (vkqc_model_read_intermediate(m.get(), 0, b.out_tensor.c_str(), words.data(), words.size() * 4) != VKQC_OK)
      return UserError(vkqc_last_error());
    for (uint32_t g = 0; g < groups; ++g)
      if (words[b.out_offset + g] != steps)
        return UserError(std::string(kernel == RooflineKernel::GridBarrier ? "grid barrier" : "dispatch chain") +
                         " check failed: workgroup " + std::to_string(g) + "'s word is " +
                         std::to_string(words[b.out_offset + g]) + " after " + std::to_string(steps) +
                         " steps (a step did not see the one before it)");
    return {};
  };
  static_assert(kRooflineWholeProgram == kWholeProgram);
  VKQC_TRY(TimeOnce(m.get(), b.measured_layer));  // one run first: a grid that gives up is not timed
  VKQC_TRY(check());
  if (!run.resident) return run;
  VKQC_ASSIGN_OR_RETURN(run.t, Measure(m.get(), b.measured_layer, min_ms));
  VKQC_TRY(check());
  return run;
}

// What one dependent step costs: dispatches with a barrier between each, and rounds of one
// dispatch with an in-kernel grid barrier; the slope between 16 and 272 steps.
Status MeasureSync(Session& s, bool cpu, double min_ms) {
  constexpr uint32_t kFew = 16, kMany = 272;
  struct Case {
    RooflineKernel kernel;
    uint32_t groups;
  };
  std::vector<Case> cases;
  for (uint32_t g : cpu ? std::vector<uint32_t>{1, 16} : std::vector<uint32_t>{1, 1024})
    cases.push_back({RooflineKernel::DispatchChain, g});
  for (uint32_t g : cpu ? std::vector<uint32_t>{1, 2, 4} : std::vector<uint32_t>{1, 32, 256, 1024})
    cases.push_back({RooflineKernel::GridBarrier, g});
  for (const Case& c : cases) {
    const bool grid = c.kernel == RooflineKernel::GridBarrier;
    const std::string label = std::string(grid ? "grid barrier (" : "dependent dispatch (") +
                              std::to_string(c.groups) + " wg of " + std::to_string(kRooflineSyncWorkgroupSize) + ")";
    VKQC_ASSIGN_OR_RETURN(SyncRun few, RunSync(s, c.kernel, c.groups, kFew, min_ms));
    SyncRun many;
    if (few.resident) {
      VKQC_ASSIGN_OR_RETURN(many, RunSync(s, c.kernel, c.groups, kMany, min_ms));
    }
    if (!few.resident || !many.resident) {
      std::printf("%-34s not measured: the %u workgroups were not all resident at once (a spin gave up)\n",
                  label.c_str(), c.groups);
      continue;
    }
    const double per_step_us = (many.t.median_ns - few.t.median_ns) / (kMany - kFew) / 1e3;
    Row(label.c_str(), Fmt("%.3g us/step", per_step_us), many.t,
        std::to_string(kMany) + (grid ? " rounds" : " dispatches") + " vs " + std::to_string(kFew) + ", result ok");
  }
  return {};
}

}  // namespace

BenchTable::BenchTable(const RooflinePeaks& peaks)
    : peaks_(peaks), any_(peaks.read_gbps > 0 || peaks.int_tops > 0 || peaks.float_tflops > 0) {
  std::printf("%-16s %-32s %10s %10s %10s%s\n", "layer", "variant", "median us", "GB/s", "GOP/s",
              any_ ? "   %read-bw   %compute  %roofline" : "");
}

void BenchTable::Layer(const char* name, const char* variant, double ns, uint64_t bytes, uint64_t ops,
                       bool integer_path) {
  const std::string v = variant;
  const bool cm = v.find("_cm_") != std::string::npos || v.find("_cmnv_") != std::string::npos ||
                  v.find("_cmf16") != std::string::npos;
  const double peak = cm ? (v.find("_cmf16") != std::string::npos ? peaks_.cm_fp16_tflops : peaks_.cm_int_tops)
                         : integer_path ? peaks_.int_tops : peaks_.float_tflops;
  const double bw_s = peaks_.read_gbps > 0 ? double(bytes) / (peaks_.read_gbps * 1e9) : 0;
  const double compute_s = peak > 0 ? double(ops) / (peak * 1e12) : 0;
  Row(name, variant, ns, bytes, ops, bw_s, compute_s, std::max(bw_s, compute_s), peak > 0);
  bytes_ += bytes;
  ops_ += ops;
  bw_s_ += bw_s;
  compute_s_ += compute_s;
  bound_s_ += std::max(bw_s, compute_s);
  compute_known_ = compute_known_ && (peak > 0 || ops == 0);
}

void BenchTable::Total(double ns) {
  Row("total", "", ns, bytes_, ops_, bw_s_, compute_s_, bound_s_, compute_known_);
}

void BenchTable::Row(const char* name, const char* variant, double ns, uint64_t bytes, uint64_t ops, double bw_s,
                     double compute_s, double bound_s, bool compute_known) const {
  if (ns > 0) std::printf("%-16s %-32s %10.2f %10.1f %10.1f", name, variant, ns / 1e3, double(bytes) / ns, double(ops) / ns);
  else std::printf("%-16s %-32s %10.2f %10s %10s", name, variant, 0.0, "-", "-");  // no dispatch (fused, folded)
  auto pct = [&](double s, bool known) {
    if (known && ns > 0) std::printf("  %8.1f%%", 100 * s / (ns * 1e-9));
    else std::printf("  %9s", "-");
  };
  if (any_) {
    pct(bw_s, peaks_.read_gbps > 0);
    pct(compute_s, compute_known);
    pct(bound_s, peaks_.read_gbps > 0 || compute_known);
  }
  std::printf("\n");
}

Status RunRoofline(const RooflineOptions& o) {
  Session s;
  VKQC_ASSIGN_OR_RETURN(MeasureTarget target, OpenMeasurement(o.device, o.min_ms, o.out, o.validation, s));
  const TargetProfile& p = target.profile;
  const ProbedDeviceFacts& facts = target.facts;
  const std::string& existing = target.existing_sidecar;

  // Read buffer: big enough to stream from DRAM on a GPU, small on a CPU device.
  uint64_t bytes = o.bytes;
  const uint64_t range = p.max_storage_buffer_range / 256 * 256;
  if (bytes == 0) {
    bytes = facts.is_cpu ? 64 * kMiB : std::min<uint64_t>(1ull << 30, facts.device_local_heap_bytes / 4) / kMiB * kMiB;
    bytes = std::max<uint64_t>(std::min(bytes, range), 256);
  } else {
    if (bytes < kMiB) return UserError("--bytes " + std::to_string(bytes) + " is too small (at least 1 MiB = 1048576)");
    bytes = bytes / 256 * 256;
    if (bytes > range)
      return UserError("--bytes " + std::to_string(o.bytes) + " exceeds maxStorageBufferRange (" +
                       std::to_string(p.max_storage_buffer_range) + ") of " + facts.device_name);
  }

  std::printf("device: %s (%s)\ndriver: %s\n", facts.device_name.c_str(), facts.type.c_str(), facts.driver.c_str());
  if (facts.is_cpu) std::printf("note: a CPU device: these rates say nothing about any GPU\n");
  std::printf("%-34s %-18s %10s %6s  %s\n", "measurement", "rate", "median ms", "runs", "work per run");
  Roofline rl;
  rl.device = facts.device_name;
  rl.driver = facts.driver;
  rl.date = TodayUtc();

  {  // Stream read: one pass over `bytes`, then the checksum of what the pass read.
    const uint32_t groups = uint32_t(std::clamp<uint64_t>(bytes / 16 / (4 * kRooflineWorkgroupSize), 1,
                                                          facts.is_cpu ? 64 : kMaxGroups));
    VKQC_ASSIGN_OR_RETURN(RooflineBundle b, BuildRooflineBundle({RooflineKernel::Read, groups, bytes, 1}));
    VKQC_ASSIGN_OR_RETURN(Model m, Load(s, b.bytes));
    VKQC_ASSIGN_OR_RETURN(Timing t, Measure(m.get(), b.measured_layer, o.min_ms));
    std::vector<uint32_t> words(groups);
    if (vkqc_model_read_intermediate(m.get(), 0, b.out_tensor.c_str(), words.data(), words.size() * 4) != VKQC_OK)
      return UserError(vkqc_last_error());
    uint32_t got = 0;
    for (uint32_t w : words) got ^= w;
    const uint32_t want = RooflineExpectedXor(bytes / 16);
    if (got != want)
      return UserError("read check failed: the XOR of the words read is " + std::to_string(got) +
                       ", the buffer's is " + std::to_string(want) + " (the device did not read every byte exactly once)");
    rl.read_gbps = Round4(b.work / t.median_ns);
    Row("stream read (16-byte loads)", Fmt("%.4g GB/s", rl.read_gbps), t,
        Fmt("%.1f MiB, checksum ok", double(bytes) / kMiB));
  }

  // Compute: work per run sized by calibration; enough workgroups to fill any GPU.
  const double target_ms = std::clamp(o.min_ms / 10, 1.0, 20.0);
  const uint32_t groups = facts.is_cpu ? 16 : kMaxGroups;
  const uint32_t iters0 = facts.is_cpu ? 2 : 16;
  struct Kernel {
    RooflineKernel kernel;
    const char* label;
    const char* unit;
    double Roofline::*field;
    bool supported;
    const char* missing;
  };
  const Kernel kernels[] = {
      {RooflineKernel::IntDot, "int8 dot (OpSDot, packed 4x8)", "TOPS", &Roofline::int8_dot_tops,
       p.shader_integer_dot_product, "the device lacks shaderIntegerDotProduct"},
      {RooflineKernel::Fma32, "fp32 FMA (vec4)", "TFLOPS", &Roofline::fp32_tflops, true, ""},
      {RooflineKernel::Fma16, "fp16 FMA (f16vec4)", "TFLOPS", &Roofline::fp16_tflops, p.shader_float16,
       "the device lacks shaderFloat16"},
  };
  for (const Kernel& k : kernels) {
    if (!k.supported) {
      std::printf("%-34s not measured: %s\n", k.label, k.missing);
      continue;
    }
    double ops = 0;
    VKQC_ASSIGN_OR_RETURN(Timing t, MeasureCompute(s, {k.kernel, groups, 0, iters0}, target_ms, o.min_ms, &ops));
    rl.*k.field = Round4(ops / t.median_ns / 1e3);
    std::string work = Fmt("%.3g G ops", ops / 1e9);
    if (k.kernel == RooflineKernel::IntDot && !p.int_dot_4x8_packed_signed_accelerated)
      work += " (not accelerated: the driver emulates it)";
    Row(k.label, Fmt(("%.4g " + std::string(k.unit)).c_str(), rl.*k.field), t, work);
  }
  // Cooperative matrices (VK_KHR_cooperative_matrix, subgroup scope): the shapes the linear
  // kernels use (16 x 16 or 16 x 8 outputs; K 32 for int8, 16 for fp16).
  const uint32_t sg = p.tuned_subgroup_size ? p.tuned_subgroup_size : p.subgroup_size;
  const bool pin = p.subgroup_size_control && p.required_subgroup_size_compute && p.compute_full_subgroups;
  struct CmKernel {
    RooflineKernel kernel;
    const char* label;
    const char* unit;
    double Roofline::*field;
    const char* ab;
    const char* acc;
    uint32_t k;
  };
  const CmKernel cms[] = {
      {RooflineKernel::CoopMatInt8, "coopmat int8 (sint8 -> sint32)", "TOPS", &Roofline::coopmat_int8_tops, "sint8",
       "sint32", 32},
      {RooflineKernel::CoopMatFp16, "coopmat fp16 (float16 -> float32)", "TFLOPS", &Roofline::coopmat_fp16_tflops,
       "float16", "float32", 16},
  };
  for (const CmKernel& k : cms) {
    const CoopMatShape* shape = nullptr;
    for (uint32_t n : {16u, 8u})
      for (const CoopMatShape& cs : p.coopmat_shapes)
        if (!shape && cs.m == 16 && cs.n == n && cs.k == k.k && cs.a_type == k.ab && cs.b_type == k.ab &&
            cs.c_type == k.acc && cs.result_type == k.acc)
          shape = &cs;
    std::string why;
    if (!(p.cooperative_matrix && p.HasExtension("VK_KHR_cooperative_matrix"))) why = "the device lacks VK_KHR_cooperative_matrix";
    else if (!shape) why = std::string("the device lists no ") + k.ab + " 16x16x" + std::to_string(k.k) + " or 16x8x" +
                           std::to_string(k.k) + " shape";
    else if (sg == 0 || (!pin && p.subgroup_size != sg)) why = "the subgroup size cannot be pinned";
    if (!why.empty()) {
      std::printf("%-34s not measured: %s\n", k.label, why.c_str());
      continue;
    }
    RooflineBundleParams bp{k.kernel, groups, 0, iters0};
    bp.m = shape->m;
    bp.n = shape->n;
    bp.k = shape->k;
    bp.subgroup = sg;
    bp.pin_subgroup = pin;
    double ops = 0;
    VKQC_ASSIGN_OR_RETURN(Timing t, MeasureCompute(s, bp, target_ms, o.min_ms, &ops));
    rl.*k.field = Round4(ops / t.median_ns / 1e3);
    Row(k.label, Fmt(("%.4g " + std::string(k.unit)).c_str(), rl.*k.field), t,
        Fmt("%.3g G ops, ", ops / 1e9) + std::to_string(bp.m) + "x" + std::to_string(bp.n) + "x" + std::to_string(bp.k));
  }

  VKQC_TRY(MeasureSync(s, facts.is_cpu, o.min_ms));

  VKQC_TRY(s.vlog.Verdict("; nothing written"));
  if (!o.out.empty()) {
    VKQC_ASSIGN_OR_RETURN(std::string text, SetSidecarRoofline(existing, o.out, rl));
    VKQC_TRY(WriteFileBytes(o.out, text.data(), text.size()));
    std::printf("wrote the roofline to %s%s\n", o.out.c_str(), existing.empty() ? "" : " (merged into the sidecar)");
  }
  return {};
}

}  // namespace vkqc
