// Command-line plumbing shared by the vkqc commands: argument parsing and the runtime handles.
#pragma once
#include <cstdio>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/common/result.h"
#include "runtime/src/bundle_sign.h"
#include "tools/vkqc/logging.h"
#include "tools/vkqc/validation_waiver.h"
#include "vkqc/vkqc.h"

namespace vkqc {

struct Args {
  std::vector<std::string> pos;
  std::multimap<std::string, std::string> opt;
  bool Has(const std::string& k) const { return opt.count(k) > 0; }
  std::string Get(const std::string& k, const std::string& def = "") const {
    auto it = opt.find(k);
    return it == opt.end() ? def : it->second;
  }
};

// The public keys of every --trusted-key (sign_cli.cc; none: empty).
Result<std::vector<Ed25519Key>> TrustedKeys(const Args& a);

// Flags without a value, and options that take one; anything else is unknown. The global flags
// (-v, -q, --log-level: logging.h) are among them.
inline bool IsSwitch(const std::string& k) {
  return k == "--validation" || k == "--robust-access" || k == "--validate-spirv" || k == "--help" || k == "-h" || k == "--keep-intermediates" || k == "--norm-tail" || k == "--per-op" ||
         k == "--quick" || k == "--no-coopmat" || k == "--allow-fp16" || k == "--coopmat-nv" || k == "--chat" ||
         k == "--ignore-eos" || k == "--pipeline-stats" || k == "--attribute" || k == "-v" || k == "-q";
}
inline bool TakesValue(const std::string& k) {
  static const char* kValued[] = {"-o", "--target", "--tokens", "--force-kernel", "--force-accum", "--gemv-max-m", "--prologue-max-bytes", "--prefetch-max-bytes", "--coopmat-split", "--force-conv", "--force-attention", "--decode-attention-rows",
                                  "--coopmat-tile", "--gemm-shape",
                                  "--input", "--output-dir", "--reference", "--tolerance", "--seed", "--device",
                                  "--min-ms", "--peak-gbps", "--peak-tops", "--bytes", "--roofline",
                                  "--prompt-ids", "--max-new-tokens", "--position", "--temperature", "--top-k", "--top-p", "--eos", "--queue-depth", "--warmup-ms",
                                  "--prompt", "--max-context", "--quantize", "--requantize", "--input-layout", "--output-layout",
                                  "--input-shape", "--log-level", "--sign-key", "--trusted-key", "--max-weight-buffer-bytes"};
  for (const char* v : kValued)
    if (k == v) return true;
  return false;
}

inline Result<Args> ParseArgs(int argc, char** argv, int start) {
  Args a;
  for (int i = start; i < argc; ++i) {
    std::string s = argv[i];
    if (s.size() > 1 && s[0] == '-') {
      if (IsSwitch(s)) {
        a.opt.emplace(s, "1");
        continue;
      }
      auto eq = s.find('=');
      if (s.rfind("--", 0) == 0 && eq != std::string::npos) {
        if (!TakesValue(s.substr(0, eq))) return UserError("unknown option " + s.substr(0, eq));
        a.opt.emplace(s.substr(0, eq), s.substr(eq + 1));
        continue;
      }
      if (!TakesValue(s)) return UserError("unknown option " + s);
      if (i + 1 >= argc) return UserError("option " + s + " needs a value");
      a.opt.emplace(s, argv[++i]);
    } else {
      a.pos.push_back(s);
    }
  }
  return a;
}

inline Status CheckKnown(const Args& a, std::initializer_list<const char*> known) {
  for (const auto& [k, v] : a.opt) {
    bool ok = IsGlobalFlag(k);  // every command takes them
    for (const char* x : known) ok |= k == x;
    if (!ok) return UserError("unknown option " + k);
  }
  return {};
}

inline Result<int64_t> ParseInt(const std::string& s, const std::string& what) {
  try {
    size_t pos = 0;
    long long v = std::stoll(s, &pos);
    if (pos != s.size()) throw std::invalid_argument(s);
    return int64_t(v);
  } catch (const std::exception&) {
    return UserError(what + ": '" + s + "' is not an integer");
  }
}

// --device I: an index into the device list (absent: -1, the first device).
inline Result<int> DeviceIndex(const Args& a) {
  if (!a.Has("--device")) return -1;
  VKQC_ASSIGN_OR_RETURN(int64_t d, ParseInt(a.Get("--device"), "--device"));
  if (d < 0 || d > 1024) return UserError("--device " + std::to_string(d) + " is out of range (0..1024)");
  return int(d);
}

inline Result<double> ParseDouble(const std::string& s, const std::string& what) {
  try {
    size_t pos = 0;
    double v = std::stod(s, &pos);
    if (pos != s.size()) throw std::invalid_argument(s);
    return v;
  } catch (const std::exception&) {
    return UserError(what + ": '" + s + "' is not a number");
  }
}

inline bool EndsWith(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

// RAII for the runtime handles in the CLI.
struct Runtime {
  vkqc_context ctx = nullptr;
  vkqc_model model = nullptr;
  ValidationLog vlog;  // destroyed after ~Runtime released the model and the context
  ~Runtime() {
    vkqc_model_destroy(model);
    vkqc_context_destroy(ctx);
  }
  std::vector<Ed25519Key> trusted_keys;  // --trusted-key
  Status Open(const Args& a, const std::string& bundle, bool poison) {
    vkqc_context_options co;
    vkqc_context_options_init(&co);
    co.enable_validation = a.Has("--validation");
    co.robust_buffer_access = a.Has("--robust-access");
    co.validate_spirv = a.Has("--validate-spirv");
    co.capture_pipeline_statistics = a.Has("--pipeline-stats");
    VKQC_ASSIGN_OR_RETURN(trusted_keys, TrustedKeys(a));
    co.trusted_keys = trusted_keys.data();
    co.trusted_key_count = uint32_t(trusted_keys.size());
    co.log = &ValidationLog::Callback;
    co.log_user_data = &vlog;
    VKQC_ASSIGN_OR_RETURN(co.device_index, DeviceIndex(a));
    if (vkqc_context_create(&co, &ctx) != VKQC_OK) return UserError(vkqc_last_error());
    vkqc_model_options mo;
    vkqc_model_options_init(&mo);
    mo.poison_memory = poison;
    if (a.Has("--max-weight-buffer-bytes")) {  // run, bench, generate: as a device with smaller allocations
      VKQC_ASSIGN_OR_RETURN(int64_t b, ParseInt(a.Get("--max-weight-buffer-bytes"), "--max-weight-buffer-bytes"));
      if (b < 1) return UserError("--max-weight-buffer-bytes must be at least 1");
      mo.max_weight_buffer_bytes = uint64_t(b);
    }
    if (vkqc_model_load_file(ctx, bundle.c_str(), &mo, &model) != VKQC_OK) return UserError(vkqc_last_error());
    return {};
  }
  Result<uint32_t> Program(const Args& a) {
    int64_t tokens = 0;
    if (a.Has("--tokens")) {
      VKQC_ASSIGN_OR_RETURN(tokens, ParseInt(a.Get("--tokens"), "--tokens"));
      if (tokens < 1 || tokens > 0xFFFFFFFFll)
        return UserError("--tokens " + std::to_string(tokens) + " is out of range (1..4294967295)");
    }
    uint32_t p = 0;
    if (tokens == 0 && vkqc_model_program_count(model) > 1) {
      std::string have;
      for (uint32_t i = 0; i < vkqc_model_program_count(model); ++i) {
        if (i) have += ',';
        have += std::to_string(vkqc_model_program_tokens(model, i));
      }
      return UserError("the bundle has several programs: pick one with --tokens (" + have + ")");
    }
    if (vkqc_model_find_program(model, uint32_t(tokens), &p) != VKQC_OK) return UserError(vkqc_last_error());
    return p;
  }
};

}  // namespace vkqc
