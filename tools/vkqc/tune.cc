#include "tools/vkqc/tune.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "compiler/common/log.h"
#include "compiler/graph/synthetic.h"
#include "compiler/graph/vkqg_io.h"
#include "compiler/passes/pipeline.h"
#include "tools/vkqc/probe.h"
#include "tools/vkqc/progress.h"
#include "tools/vkqc/timing.h"

namespace vkqc {
namespace {

using linear::Algo;

struct Layer {
  int64_t k, n;
  ir::Scheme weights, act;
  const char* label;
  int64_t group = 32;  // int4 group size
};

std::string LayerName(const Layer& l, int64_t m) {
  return std::string(l.label) + " K=" + std::to_string(l.k) + " N=" + std::to_string(l.n) + " M=" + std::to_string(m);
}

// Each measurement gets a fresh runtime context: on the H100 driver, GPU times of a process
// that had loaded and destroyed many models drifted upwards (a candidate measured late ran up
// to 3x slower than the same kernel measured first), which would rank candidates by order.
class Tuner {
 public:
  Tuner(int device, bool validation, double min_ms) : device_(device), validation_(validation), min_ms_(min_ms) {}
  // Validation messages the candidates' contexts kept (each logged as it came).
  size_t validation_kept() const { return validation_kept_; }

  // Median GPU time of one layer (its quantize dispatch included) compiled for `p`.
  Result<double> Time(const TargetProfile& p, const Layer& l, int64_t m, Algo algo) {
    const std::string key = LayerName(l, m);
    auto it = graphs_.find(key);
    if (it == graphs_.end()) {
      testing_graphs::QLayerSpec spec;
      spec.m = m;
      spec.k = l.k;
      spec.n = l.n;
      spec.weights = l.weights;
      spec.act = l.act;
      spec.group_size = l.group;
      it = graphs_.emplace(key, testing_graphs::MakeQLayer(spec, 1234)).first;
    }
    CompileOptions co;
    co.select.force_algo = algo;
    VKQC_ASSIGN_OR_RETURN(std::vector<uint8_t> bundle, CompileGraph(it->second, p, co, 0));
    Session s;
    VKQC_TRY(s.Open(device_, validation_));
    Result<Timing> t = [&]() -> Result<Timing> {
      VKQC_ASSIGN_OR_RETURN(Model model, Load(s, bundle));
      return Measure(model.get(), kWholeProgram, min_ms_);
    }();
    validation_kept_ += s.vlog.messages.size();
    if (!t.ok()) return t.error();
    return t->median_ns;
  }

 private:
  int device_;
  bool validation_;
  double min_ms_;
  size_t validation_kept_ = 0;
  std::map<std::string, ir::Graph> graphs_;
};

struct Candidate {
  TargetProfile p;
  std::string label;
  double score = 0;  // sum over layers of time / the first candidate's time
  std::vector<double> ns;
};

// Times every candidate on every layer; the score is relative to the first candidate (the
// compiler's default), so each layer weighs the same whatever its size.
// `what` names the sweep on the progress line.
Status Sweep(Tuner& t, std::vector<Candidate>& cands, const std::vector<Layer>& layers, int64_t m, Algo algo,
             const std::string& what) {
  const std::string stage = "tuning " + what;
  const uint64_t total = cands.size() * layers.size();
  uint64_t done = 0;
  for (auto& c : cands) {
    for (size_t i = 0; i < layers.size(); ++i) {
      progress::Update(stage, done++, total);
      VKQC_ASSIGN_OR_RETURN(double ns, t.Time(c.p, layers[i], m, algo));
      c.ns.push_back(ns);
      c.score += ns / cands[0].ns[i];
      log::Debug(stage + ": " + c.label + " on " + LayerName(layers[i], m) + ": " + std::to_string(ns / 1e3) + " us");
    }
  }
  progress::Update(stage, total, total);
  return {};
}

void PrintRanking(const char* what, std::vector<Candidate>& cands, const std::vector<Layer>& layers, int64_t m) {
  std::printf("\n%s (M=%lld; us per layer; score = sum of time / default's, lower is better)\n", what, (long long)m);
  std::printf("%-34s %7s", "candidate", "score");
  for (const auto& l : layers) std::printf("  %18s", (std::to_string(l.k) + "x" + std::to_string(l.n)).c_str());
  std::printf("\n");
  std::vector<size_t> order(cands.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return cands[a].score < cands[b].score; });
  for (size_t r = 0; r < order.size(); ++r) {
    const Candidate& c = cands[order[r]];
    if (r >= 8 && order[r] != 0) continue;  // the best 8 and the default
    std::printf("%-34s %7.3f", c.label.c_str(), c.score);
    for (double ns : c.ns) std::printf("  %18.2f", ns / 1e3);
    std::printf("\n");
  }
}

const Candidate& Best(const std::vector<Candidate>& cands) {
  return *std::min_element(cands.begin(), cands.end(),
                           [](const Candidate& a, const Candidate& b) { return a.score < b.score; });
}

}  // namespace

Status RunTune(const TuneOptions& o) {
  // `s` stays open while each measurement opens its own context (see Tuner): on NVIDIA's
  // driver, creating an instance after the process's last one was destroyed fails
  // (VK_ERROR_INCOMPATIBLE_DRIVER), so one context keeps the driver loaded.
  Session s;
  VKQC_ASSIGN_OR_RETURN(MeasureTarget target, OpenMeasurement(o.device, o.min_ms, o.out, o.validation, s));
  const ProbedDeviceFacts& facts = target.facts;
  const std::string& existing = target.existing_sidecar;
  TargetProfile base = target.profile;
  base.gemv_threads = base.gemv_channels = base.gemv_unroll = base.gemm_tile = base.gemv_max_m = 0;
  base.gemm_rows_int4 = base.gemm_rows_int8 = base.coopmat_gemv_max_m = 0;
  const bool quick = o.quick || facts.is_cpu;
  std::printf("device: %s (%s), driver %s%s\n", facts.device_name.c_str(), facts.type.c_str(), facts.driver.c_str(),
              quick ? "; quick sweep on small layers" : "");

  const ir::Scheme q4 = ir::Scheme::Q4GSW, q8 = ir::Scheme::Q8CSW, dq = ir::Scheme::DQ8CA, ta = ir::Scheme::Q8TA;
  // Decode layers: the Llama-3-8B / 3.2-1B MLP and attention shapes (DESIGN 7); small ones on a CPU.
  const std::vector<Layer> decode =
      quick ? std::vector<Layer>{{512, 256, q4, dq, "dq8ca x q4gsw"}, {256, 512, q8, ta, "q8ta x q8csw"}}
            : std::vector<Layer>{{4096, 14336, q4, dq, "dq8ca x q4gsw"},
                                 {14336, 4096, q4, dq, "dq8ca x q4gsw"},
                                 {2048, 8192, q4, dq, "dq8ca x q4gsw"},
                                 {4096, 4096, q8, ta, "q8ta x q8csw"}};
  const std::vector<Layer> prefill =
      quick ? std::vector<Layer>{{256, 256, q8, ta, "q8ta x q8csw"}, {256, 256, q4, dq, "dq8ca x q4gsw g128", 128}}
            : std::vector<Layer>{{4096, 4096, q8, ta, "q8ta x q8csw"}, {4096, 14336, q4, dq, "dq8ca x q4gsw g128", 128}};
  Tuner tuner(o.device, o.validation, o.min_ms);

  // 1. GEMV parameters at M = 1. The default first (scores are relative to it).
  std::vector<Candidate> gemv;
  gemv.push_back({base, "default", 0, {}});
  const uint32_t max_inv = std::min(base.max_compute_work_group_invocations, base.max_compute_work_group_size[0]);
  const std::vector<uint32_t> threads = quick ? std::vector<uint32_t>{32, 128} : std::vector<uint32_t>{64, 128, 256};
  const std::vector<uint32_t> channels = quick ? std::vector<uint32_t>{2, 4} : std::vector<uint32_t>{2, 4, 8};
  const std::vector<uint32_t> unrolls = quick ? std::vector<uint32_t>{1, 2} : std::vector<uint32_t>{1, 2, 4};
  for (uint32_t th : threads)
    for (uint32_t ch : channels)
      for (uint32_t un : unrolls) {
        if (th > max_inv) continue;
        Candidate c{base, "", 0, {}};
        c.p.gemv_threads = th;
        c.p.gemv_channels = ch;
        c.p.gemv_unroll = un;
        c.label = std::to_string(th) + " threads, " + std::to_string(ch) + " ch, unroll " + std::to_string(un);
        gemv.push_back(std::move(c));
      }
  // One row on the int-dot path of a GPU takes the compiler's own shape (linear select.cc: the
  // profile's values measured on single layers, whose weights stay in the L2 cache, lost inside a
  // model), so there the sweep times the GEMVs the values still serve: weight-only layers.
  std::vector<Layer> gemv_layers = decode;
  bool weight_only = false;
  for (Layer& l : gemv_layers) {
    linear::LinearShape shape;
    shape.m = 1;
    shape.k = l.k;
    shape.n = l.n;
    shape.weights = l.weights;
    shape.act = l.act;
    shape.group_size = l.weights == q8 ? 0 : l.group;
    auto c = linear::SelectLinear(shape, base, linear::SelectOptions{});
    if (c.ok() && linear::OneRowIntDotOnGpu(shape, base, *c)) {
      l.act = ir::Scheme::Float;
      l.label = l.weights == q8 ? "float x q8csw" : "float x q4gsw";
      weight_only = true;
    }
  }
  if (weight_only)
    std::printf("GEMV sweep on weight-only layers: one-row int-dot GEMVs take the compiler's shape on this device\n");
  VKQC_TRY(Sweep(tuner, gemv, gemv_layers, 1, Algo::Gemv, "GEMV"));
  PrintRanking("GEMV", gemv, gemv_layers, 1);
  TargetProfile tuned = Best(gemv).p;
  if (Best(gemv).label == "default") {  // keep explicit values: what the default resolved to is shape-dependent
    tuned.gemv_threads = tuned.gemv_channels = tuned.gemv_unroll = 0;
  }

  // The GEMM the compiler would choose for a layer at M = m under profile `p`.
  auto gemm_choice = [&](const Layer& l, int64_t m, const TargetProfile& p) {
    linear::LinearShape shape;
    shape.m = m;
    shape.k = l.k;
    shape.n = l.n;
    shape.weights = l.weights;
    shape.act = l.act;
    shape.group_size = l.weights == q8 ? 0 : l.group;
    linear::SelectOptions so;
    so.force_algo = Algo::Gemm;
    return linear::SelectLinear(shape, p, so);
  };
  // Whether the GEMM of a layer is the int8 cooperative matrix on this device.
  auto coopmat_gemm = [&](const Layer& l, int64_t m) {
    auto c = gemm_choice(l, m, tuned);
    return c.ok() && c->accum == linear::Accum::CoopMat;
  };

  // 2. GEMM tile at prefill sizes, on the layers whose GEMM is the tiled one.
  std::vector<Candidate> gemm;
  gemm.push_back({tuned, "default (automatic)", 0, {}});
  for (uint32_t tile : {32u, 64u}) {
    Candidate c{tuned, std::to_string(tile) + "x" + std::to_string(tile) + " tiles", 0, {}};
    c.p.gemm_tile = tile;
    gemm.push_back(std::move(c));
  }
  const int64_t m_prefill = quick ? 64 : 512;
  std::vector<Layer> prefill_tiled;
  for (const Layer& l : prefill)
    if (!coopmat_gemm(l, m_prefill)) prefill_tiled.push_back(l);
  VKQC_TRY(Sweep(tuner, gemm, prefill_tiled, m_prefill, Algo::Gemm, "GEMM tile"));
  PrintRanking("tiled GEMM", gemm, prefill_tiled, m_prefill);
  tuned.gemm_tile = Best(gemm).p.gemm_tile;

  // 2b. Rows per thread of the tiled GEMM (4 or 8), for int4 and for int8 weights, each on its
  // prefill layers (the tiled ones: the int8 cooperative matrix takes others).
  for (const bool int4 : {true, false}) {
    uint32_t TargetProfile::*const field = int4 ? &TargetProfile::gemm_rows_int4 : &TargetProfile::gemm_rows_int8;
    const char* const what = int4 ? "int4" : "int8";
    std::vector<Candidate> rows;
    rows.push_back({tuned, "4 rows per thread (default)", 0, {}});
    rows.push_back({tuned, "8 rows per thread", 0, {}});
    rows[1].p.*field = 8;
    // Only layers where the compiler would take the taller tiles (the int-dot path, enough
    // workgroups, long enough int4 groups): elsewhere both candidates are the same kernel.
    std::vector<Layer> layers;
    for (const Layer& l : prefill_tiled) {
      if ((l.weights == q4) != int4) continue;
      auto tall = gemm_choice(l, m_prefill, rows[1].p);
      if (tall.ok() && tall->rm == 8) layers.push_back(l);
    }
    if (layers.empty()) {  // keep what the sidecar had (0: not measured)
      tuned.*field = target.profile.*field;
      std::printf("\n%s tiled GEMM rows per thread: not swept (none of the %s prefill layers on the tiled GEMM "
                  "at M=%lld would take 8 rows on this device); kept %u\n",
                  what, what, static_cast<long long>(m_prefill), tuned.*field);
      continue;
    }
    VKQC_TRY(Sweep(tuner, rows, layers, m_prefill, Algo::Gemm, std::string(what) + " GEMM rows"));
    PrintRanking((std::string(what) + " tiled GEMM rows per thread").c_str(), rows, layers, m_prefill);
    tuned.*field = Best(rows).p.*field;
  }

  // 3. GEMV/GEMM thresholds: the largest M up to which the GEMV is at least as fast at every
  // measured size, summed over the layers: the tiled GEMM (decode layers whose GEMM is not the
  // int8 cooperative matrix), and the int8 cooperative matrix (those whose GEMM is).
  auto threshold = [&](const char* what, const std::vector<Layer>& layers, const std::vector<int64_t>& ms)
      -> Result<uint32_t> {
    std::printf("\nGEMV vs %s (us, summed over %zu decode layer(s))\n%6s %12s %12s\n", what, layers.size(), "M",
                "GEMV", "GEMM");
    uint32_t t = 1;
    bool gemv_still_wins = true;
    const std::string stage = std::string("tuning GEMV vs ") + what;
    uint64_t done = 0;
    for (int64_t m : ms) {
      double tv = 0, tg = 0;
      for (const Layer& l : layers) {
        progress::Update(stage, done++, ms.size() * layers.size());
        VKQC_ASSIGN_OR_RETURN(double a, tuner.Time(tuned, l, m, Algo::Gemv));
        VKQC_ASSIGN_OR_RETURN(double b, tuner.Time(tuned, l, m, Algo::Gemm));
        tv += a;
        tg += b;
      }
      progress::ClearLine();
      std::printf("%6lld %12.2f %12.2f%s\n", (long long)m, tv / 1e3, tg / 1e3, tv <= tg ? "  GEMV" : "  GEMM");
      if (gemv_still_wins && tv <= tg) t = uint32_t(m);
      else gemv_still_wins = false;
    }
    progress::Update(stage, done, done);
    return t;
  };
  std::vector<Layer> tiled, coop;
  for (const Layer& l : decode) (coopmat_gemm(l, 64) ? coop : tiled).push_back(l);
  if (!tiled.empty()) {
    VKQC_ASSIGN_OR_RETURN(tuned.gemv_max_m,
                          threshold("tiled GEMM", tiled,
                                    quick ? std::vector<int64_t>{2, 8, 32} : std::vector<int64_t>{2, 4, 8, 16, 32, 64}));
  }
  // The cooperative-matrix threshold on wide int8 layers (the selection scales it for narrow ones).
  const std::vector<Layer> wide8 = {{4096, 14336, q8, ta, "q8ta x q8csw"}};
  if (!quick && coopmat_gemm(wide8[0], 64)) {
    VKQC_ASSIGN_OR_RETURN(tuned.coopmat_gemv_max_m,
                          threshold("the int8 cooperative matrix", wide8, std::vector<int64_t>{2, 3, 4, 6, 8, 16}));
  } else {
    std::printf("\nno int8 cooperative-matrix GEMM on this device%s: coopmat_gemv_max_m 0\n", quick ? " (or a quick sweep)" : "");
  }

  // Drift check: the default GEMV measured again at the end.
  double again = 0;
  for (const Layer& l : gemv_layers) {
    VKQC_ASSIGN_OR_RETURN(double ns, tuner.Time(base, l, 1, Algo::Gemv));
    again += ns;
  }
  double first = 0;
  for (double ns : gemv[0].ns) first += ns;
  std::printf("\ndrift check: the default GEMV took %.2f us (sum over the GEMV sweep's layers) first, %.2f us last\n",
              first / 1e3, again / 1e3);
  std::printf("\ntuned: gemv_threads %u, gemv_channels %u, gemv_unroll %u (0 = the compiler's default), gemm_tile %u "
              "(0 = automatic), gemm_rows_int4 %u, gemm_rows_int8 %u, gemv_max_m %u, coopmat_gemv_max_m %u\n",
              tuned.gemv_threads, tuned.gemv_channels, tuned.gemv_unroll, tuned.gemm_tile, tuned.gemm_rows_int4, tuned.gemm_rows_int8,
              tuned.gemv_max_m, tuned.coopmat_gemv_max_m);
  VKQC_TRY(ValidationLog::VerdictOf(s.vlog.messages.size() + tuner.validation_kept(), "; nothing written"));
  if (!o.out.empty()) {
    VKQC_ASSIGN_OR_RETURN(std::string text, SetSidecarTuning(existing, o.out, tuned));
    VKQC_TRY(WriteFileBytes(o.out, text.data(), text.size()));
    std::printf("wrote the tuning to %s%s\n", o.out.c_str(), existing.empty() ? "" : " (merged into the sidecar)");
  }
  return {};
}

}  // namespace vkqc
