// vkqc command-line tool: import, compile, inspect, run, bench, profiles, probe.
// Errors go to stderr as "vkqc <command>: <message>" with a non-zero exit; no crash on bad input.
// Logs (-v, -q, --log-level) and the progress line: tools/vkqc/logging.h, tools/vkqc/progress.h.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "compiler/common/half.h"
#include "compiler/graph/vkqg_io.h"
#include "compiler/kernels/linear/linear.h"
#include "compiler/profile/profile.h"
#include "reference/reference.h"
#include "tools/vkqc/attribute.h"
#include "tools/vkqc/cli.h"
#include "tools/vkqc/compile_cli.h"
#include "tools/vkqc/sign_cli.h"
#include "tools/vkqc/generate.h"
#include "tools/vkqc/model_cli.h"
#include "tools/vkqc/npy.h"
#include "tools/vkqc/progress.h"
#include "tools/vkqc/probe.h"
#include "tools/vkqc/roofline.h"
#include "tools/vkqc/tune.h"
#include "vkqc/vkqc.h"

namespace vkqc {
namespace {

constexpr const char* kUsage = R"(usage: vkqc <command> [options]

commands:
  import  GRAPH.json -o MODEL.vkqg           JSON graph + safetensors weights -> .vkqg
  import  MODEL.gguf -o MODEL.vkqg [--max-context N] [--quantize q8|8da4w] [--requantize q8csw|q4gsw]
                                             a GGUF checkpoint (llama, qwen2) with its tokenizer;
                                             --quantize: float weights; --requantize: types without
                                             an exact scheme (error printed per tensor)
  compile MODEL.vkqg|GRAPH.json|MODEL.gguf --target NAME|PROFILE.json -o OUT.vkqb
          [--tokens N[,N...]] [--force-kernel gemm|gemv|rows] [--force-accum dot|dequant|cm]
          [--no-coopmat] [--allow-fp16] [--coopmat-nv] [--coopmat-tile WMxWNxTMxTN[xBKW[xSTAGES]]] [--coopmat-split N] [--gemm-shape RMxBK4]
          [--gemv-max-m N] [--prologue-max-bytes B] [--prefetch-max-bytes B] [--norm-tail] [--force-conv im2col|direct] [--force-attention rows|tiled]
          [--decode-attention-rows N] [--keep-intermediates] [--sign-key KEY]
          cm: the cooperative-matrix GEMM (int8 operands for quantized activations, fp16 for
          float ones); --no-coopmat: never chosen on its own; --allow-fp16: float layers may use
          it with fp16 operands; --coopmat-nv: VK_NV_cooperative_matrix even where the target
          has VK_KHR_cooperative_matrix; --coopmat-tile: subgroups and matrix tiles per workgroup;
          --gemm-shape: the tiled GEMM's rows per thread (4, 8) and K words per step (8, 16, ...)
          --coopmat-split: K slices of the cooperative matrix (int8 path with grouped weights, or fp16
          operands; 1: none)
          --prologue-max-bytes: one-row GEMVs compute their input row (quantization, rms_norm,
          residual add) in every workgroup's prologue while those reads stay within B bytes
          --norm-tail: a one-row rms_norm (and its residual add) reading a one-row GEMV's output
          is computed by that GEMV's last workgroup (no dispatch of its own; slower on the H200)
          --prefetch-max-bytes: programs of up to 16 rows load up to B bytes of the weights each
          barrier interval reads into the cache during the interval before it (0: none)
          --sign-key: sign the bundle (Ed25519 private key: `vkqc keygen`, or OpenSSL's PEM)
  inspect OUT.vkqb [--trusted-key PUB]...    per layer: variant and why, tiles, bytes; memory plan;
                                             the signer (verified with --trusted-key)
  inspect MODEL.vkqg|GRAPH.json|MODEL.gguf [--target T [--tokens N,...] [--force-...]]
                                             the model (description, tokenizer, tensor formats); with
                                             --target also the plan, compiled in memory
  run     OUT.vkqb [--tokens N] [--input NAME=FILE.npy]... [--output-dir DIR]
          [--reference MODEL.vkqg|GRAPH.json [--per-op]] [--tolerance REL] [--seed S]
          [--device I] [--validation] [--robust-access] [--validate-spirv] [--max-weight-buffer-bytes B]
          --per-op (bundle compiled with --keep-intermediates): checks every op on the GPU's
          own inputs: int8 outputs within 1, float outputs within the tolerance;
          --robust-access: the device's robustBufferAccess (for bundles from untrusted sources);
          --validate-spirv: SPIRV-Tools validates every shader module before the driver sees it;
          --trusted-key PUB (repeatable; also for bench and generate): load only bundles signed by
          one of these Ed25519 public keys and unchanged since;
          --max-weight-buffer-bytes B (also for bench and generate): hold the weights in buffers of
          at most B bytes, as on a device whose maxMemoryAllocationSize is B
  generate OUT.vkqb (--prompt TEXT [--chat] [--ignore-eos] | --prompt-ids ID[,ID...]) [--max-new-tokens 32] [--temperature 0] [--top-k K]
          [--top-p P] [--seed S] [--eos ID] [--device I] [--validation]
                                             token generation with a decoder bundle (KV cache):
                                             prefill in chunks of the compiled token counts, then one
                                             tokens=1 run per token; greedy unless --temperature > 0;
                                             prints the generated ids and prefill/decode speeds
  bench   OUT.vkqb [--tokens N] [--min-ms 100] [--roofline PROFILE] [--peak-gbps G] [--peak-tops T]
          [--position P] [--device I] [--validation] [--robust-access] [--validate-spirv] [--pipeline-stats]
          [--attribute]
          --position (decoder bundles): time the program with P cached positions before its rows
          --attribute: after the table, what each group of layers (names with digits as #) costs
          inside the program: the whole program against it with the group's dispatches left out
          --pipeline-stats: after the table, each layer's pipelines as the driver describes them
          (VK_KHR_pipeline_executable_properties: registers, code size, ...); refused where the
          device lacks the extension
          --roofline (a built-in name, PROFILE.json or PROFILE.vkqc.json with a measured roofline):
          per layer and total, % of the read-bandwidth and compute rooflines and the larger
          ("roofline"); --peak-gbps / --peak-tops override its numbers
  keygen  -o NAME                            a new Ed25519 key pair: NAME.key (private, PEM, mode
                                             0600) and NAME.pub (public, PEM); never overwrites
  sign    BUNDLE.vkqb --sign-key KEY [-o OUT.vkqb]
                                             sign a compiled bundle (in place by default)
  profiles                                   list built-in target profiles
  probe   -o PROFILE.json [--device I]       write the local device as a target profile
  roofline [-o PROFILE.vkqc.json] [--device I] [--min-ms 100] [--bytes N] [--validation]
                                             measure the local device's roofline (read GB/s,
                                             int8 dot TOPS, fp32/fp16 FMA TFLOPS); -o adds it
                                             to a sidecar (created, or merged into an existing one)
  tune    [-o PROFILE.vkqc.json] [--device I] [--min-ms 20] [--quick] [--validation]
                                             sweep the linear kernels' parameters (GEMV threads,
                                             channels, units in flight; GEMM tile; GEMV/GEMM
                                             threshold) on the local device; -o writes the winners
                                             into a sidecar that `compile --target` uses

global options (every command, before or after its name):
  -v                                         debug logs: per-layer kernel choices and why, packed
                                             sizes, shader modules, memory plans
  -q                                         errors only
  --log-level trace|debug|info|warn|error|off
                                             logs go to stderr (default: info); a progress line is
                                             shown there during long work when it is a terminal
)";

size_t ElemBytes(vkqc_dtype d) { return d == VKQC_F32 || d == VKQC_I32 ? 4 : d == VKQC_F16 ? 2 : 1; }
const char* NpyDescr(vkqc_dtype d) {
  switch (d) {
    case VKQC_F16: return "<f2";
    case VKQC_I8: return "|i1";
    case VKQC_U8: return "|u1";
    case VKQC_I32: return "<i4";
    default: return "<f4";
  }
}
const char* DTypeLabel(vkqc_dtype d) {
  switch (d) {
    case VKQC_F16: return "f16";
    case VKQC_I8: return "i8";
    case VKQC_U8: return "u8";
    case VKQC_I32: return "i32";
    default: return "f32";
  }
}

std::vector<float> RandomInput(size_t n, uint32_t seed);

// Random input bytes of a dtype: normal floats (f32, f16), uniform codes (i8, u8), int32 codes
// spread over +-2^20.
std::vector<uint8_t> RandomBytes(size_t n, vkqc_dtype d, uint32_t seed) {
  std::vector<float> v = RandomInput(n, seed);
  std::vector<uint8_t> b(n * ElemBytes(d));
  for (size_t i = 0; i < n; ++i) {
    if (d == VKQC_F32) {
      std::memcpy(b.data() + 4 * i, &v[i], 4);
    } else if (d == VKQC_F16) {
      const uint16_t h = FloatToHalf(v[i]);
      std::memcpy(b.data() + 2 * i, &h, 2);
    } else if (d == VKQC_I32) {
      const int32_t x = int32_t(std::lround(v[i] * 300000.0f));
      std::memcpy(b.data() + 4 * i, &x, 4);
    } else {
      b[i] = uint8_t(int(std::lround(v[i] * 40.0f)) & 0xFF);
    }
  }
  return b;
}

std::vector<float> RandomInput(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// The GPU's value of tensor t after a run: graph inputs as given, outputs and (with a bundle
// compiled --keep-intermediates) arena tensors read back; int8 tensors as their integer values.
Result<std::vector<float>> GpuValue(Runtime& rt, uint32_t prog, const ir::Graph& g, int t, int64_t tokens,
                                    const std::map<std::string, std::vector<float>>& inputs) {
  const ir::Tensor& ten = g.tensors[t];
  auto in = inputs.find(ten.name);
  if (in != inputs.end()) return in->second;
  const int64_t elems = ten.NumElements(tokens);
  const bool i8 = ten.dtype == ir::DType::I8;
  const size_t eb = size_t(ir::DTypeBits(ten.dtype) / 8);
  auto decode = [&](const uint8_t* p) -> float {
    if (i8) return float(int8_t(*p));
    if (ten.dtype == ir::DType::F16) return HalfToFloat(uint16_t(p[0] | (p[1] << 8)));
    if (ten.dtype == ir::DType::I32) {
      int32_t x;
      std::memcpy(&x, p, 4);
      return float(x);
    }
    float f;
    std::memcpy(&f, p, 4);
    return f;
  };
  for (size_t o = 0; o < g.outputs.size(); ++o)
    if (g.outputs[o] == t) {
      std::vector<uint8_t> bytes(size_t(elems) * eb);
      if (vkqc_model_read_output(rt.model, prog, uint32_t(o), bytes.data(), bytes.size()) != VKQC_OK)
        return UserError(vkqc_last_error());
      std::vector<float> v(static_cast<size_t>(elems));
      for (int64_t j = 0; j < elems; ++j) v[j] = decode(bytes.data() + eb * j);
      return v;
    }
  // Arena tensors: int8 as packed rows; others dense (f16 rounded up to whole words).
  const int64_t last = i8 ? ten.shape.back() : elems, rows = elems / last;
  const size_t row_bytes = i8 ? size_t(linear::PackedK4(last)) * 4 : (size_t(last) * eb + 3) / 4 * 4;
  std::vector<uint8_t> bytes(size_t(rows) * row_bytes);
  if (vkqc_model_read_intermediate(rt.model, prog, ten.name.c_str(), bytes.data(), bytes.size()) != VKQC_OK)
    return UserError(std::string(vkqc_last_error()) + " (compile with --keep-intermediates for --per-op)");
  std::vector<float> v(static_cast<size_t>(elems));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < last; ++c) v[r * last + c] = decode(bytes.data() + r * row_bytes + eb * c);
  return v;
}

// Checks every op on the GPU's own inputs (so rounding differences do not accumulate along
// the graph): int8 outputs within 1, float outputs within `tol` of the output's max |ref|.
Status CheckPerOp(Runtime& rt, uint32_t prog, const ir::Graph& g, const std::map<std::string, std::vector<float>>& inputs,
                  const ref::RunOptions& ro, double tol, bool* pass) {
  const int64_t tokens = vkqc_model_program_tokens(rt.model, prog);
  int checked = 0, failed = 0, skipped = 0, folded = 0;
  std::vector<std::string> variant_of(g.ops.size());
  for (uint32_t l = 0; l < vkqc_model_layer_count(rt.model, prog); ++l) {
    vkqc_layer_info li;
    (void)vkqc_model_layer_info(rt.model, prog, l, &li);
    if (li.op_index >= 0 && size_t(li.op_index) < g.ops.size()) variant_of[size_t(li.op_index)] = li.variant;
  }
  bool any_folded = false;
  for (const auto& v : variant_of) any_folded |= v == "folded";
  int worst_lsb = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const ir::Op& op = g.ops[i];
    bool per_token = false;
    for (int t : op.inputs)
      if (g.tensors[t].quant && g.tensors[t].quant->scheme == ir::Scheme::DQ8CA && g.tensors[t].dtype == ir::DType::I8)
        per_token = true;
    if (per_token) {  // its row parameters are not part of the tensor's value
      ++skipped;
      continue;
    }
    if (variant_of[i] == "folded") {  // compiled to nothing: its tensors may not exist
      ++folded;
      continue;
    }
    ir::Graph sub = g;
    sub.ops = {op};
    sub.inputs.clear();
    std::map<std::string, std::vector<float>> sub_in;
    bool missing = false;
    for (int t : op.inputs) {
      if (g.tensors[t].is_constant() || g.tensors[t].state) continue;  // state: fresh on both sides
      sub.inputs.push_back(t);
      auto v = GpuValue(rt, prog, g, t, tokens, inputs);
      if (!v.ok() && any_folded) {  // a float tensor the fold pass removed
        missing = true;
        break;
      }
      VKQC_ASSIGN_OR_RETURN(sub_in[g.tensors[t].name], std::move(v));
    }
    if (!missing && any_folded && !GpuValue(rt, prog, g, op.outputs[0], tokens, inputs).ok()) missing = true;
    if (missing) {
      ++folded;
      continue;
    }
    sub.outputs = op.outputs;
    ref::RunOptions sro;
    sro.tokens = ro.tokens;
    sro.integer_path = {ro.integer_path.empty() ? true : bool(ro.integer_path[i])};
    VKQC_ASSIGN_OR_RETURN(ref::GraphResult want, ref::RunGraphDetailed(sub, sub_in, sro));
    const int t = op.outputs[0];
    VKQC_ASSIGN_OR_RETURN(std::vector<float> got, GpuValue(rt, prog, g, t, tokens, inputs));
    const auto& w = want.outputs.at(g.tensors[t].name);
    double max_diff = 0, max_ref = 0;
    for (size_t j = 0; j < w.size(); ++j) {
      max_diff = std::max(max_diff, std::fabs(double(got[j]) - w[j]));
      max_ref = std::max(max_ref, std::fabs(double(w[j])));
    }
    const bool i8 = g.tensors[t].dtype == ir::DType::I8;
    const bool ok = i8 ? max_diff <= 1.0 : max_diff <= tol * std::max(max_ref, 1e-30);
    if (i8) worst_lsb = std::max(worst_lsb, int(max_diff));
    ++checked;
    if (!ok) {
      ++failed;
      std::printf("  op %zu '%s' (%s): max difference %.4g%s FAIL\n", i, op.name.c_str(), ir::OpTypeName(op.type),
                  max_diff, i8 ? " LSB" : "");
    }
  }
  std::printf("per-op check on the GPU's own inputs: %d ops, %d failed, %d skipped (per-token int8 inputs), "
              "%d folded by the compiler; int8 outputs at most %d LSB from the reference\n", checked, failed, skipped,
              folded, worst_lsb);
  *pass = *pass && failed == 0;
  return {};
}

Status CmdRun(const Args& a) {
  VKQC_TRY(CheckKnown(a, {"--tokens", "--input", "--output-dir", "--reference", "--tolerance", "--seed", "--device",
                          "--validation", "--per-op", "--robust-access", "--validate-spirv", "--trusted-key",
                          "--max-weight-buffer-bytes"}));
  if (a.Has("--per-op") && !a.Has("--reference")) return UserError("--per-op needs --reference GRAPH");
  if (a.pos.size() != 1) return UserError("usage: vkqc run OUT.vkqb [--input NAME=FILE.npy]...");
  // Check everything the user gave before touching the GPU.
  double tol = 1e-4;  // of max |ref|; see the integer-path note below
  if (a.Has("--tolerance")) {
    VKQC_ASSIGN_OR_RETURN(tol, ParseDouble(a.Get("--tolerance"), "--tolerance"));
  }
  const std::string outdir = a.Get("--output-dir");
  if (!outdir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(outdir, ec);
    if (ec) return UserError(outdir + ": cannot create the output directory: " + ec.message());
  }
  std::optional<ir::Graph> ref_graph;
  if (a.Has("--reference")) {
    VKQC_ASSIGN_OR_RETURN(ref_graph, LoadGraph(a.Get("--reference"), nullptr));
  }
  Runtime rt;
  VKQC_TRY(rt.Open(a, a.pos[0], true));
  VKQC_ASSIGN_OR_RETURN(uint32_t prog, rt.Program(a));
  const char* dev = "";
  vkqc_context_device_name(rt.ctx, &dev);
  uint32_t seed = 1;
  if (a.Has("--seed")) {
    VKQC_ASSIGN_OR_RETURN(int64_t s, ParseInt(a.Get("--seed"), "--seed"));
    seed = uint32_t(s);
  }
  std::map<std::string, std::string> files;
  for (auto [it, end] = a.opt.equal_range("--input"); it != end; ++it) {
    auto eq = it->second.find('=');
    if (eq == std::string::npos) return UserError("--input takes NAME=FILE.npy, got '" + it->second + "'");
    files[it->second.substr(0, eq)] = it->second.substr(eq + 1);
  }
  std::map<std::string, std::vector<float>> inputs;
  std::map<std::string, std::vector<int32_t>> int32_inputs;
  const uint32_t nin = vkqc_model_input_count(rt.model, prog);
  for (uint32_t i = 0; i < nin; ++i) {
    vkqc_tensor_info info;
    (void)vkqc_model_input_info(rt.model, prog, i, &info);
    const size_t elems = info.size_bytes / ElemBytes(info.dtype);
    std::vector<uint8_t> bytes;
    std::vector<float> v;
    auto f = files.find(info.name);
    if (f != files.end()) {
      VKQC_ASSIGN_OR_RETURN(NpyArray arr, ReadNpy(f->second));
      if (uint64_t(arr.NumElements()) != elems)
        return UserError(f->second + ": input '" + info.name + "' needs " + std::to_string(elems) +
                         " elements, the file has " + std::to_string(arr.NumElements()));
      if (arr.descr != NpyDescr(info.dtype))
        return UserError(f->second + ": input '" + info.name + "' is " + DTypeLabel(info.dtype) + " (npy '" +
                         NpyDescr(info.dtype) + "'), the file holds '" + arr.descr + "'");
      bytes = arr.data;
      files.erase(f);
    } else if (int32_t(i) == vkqc_model_position_input(rt.model, prog)) {
      bytes.assign(4, 0);  // a fresh state: the run starts at position 0
      std::printf("input %s: position 0 (the KV cache is fresh)\n", info.name);
    } else {
      bytes = RandomBytes(elems, info.dtype, seed + i);
      if (info.dtype == VKQC_I32 && vkqc_model_max_context(rt.model) > 0)  // token ids of a decoder
        for (size_t e = 0; e < elems; ++e) {
          int32_t v;
          std::memcpy(&v, bytes.data() + 4 * e, 4);
          v = int32_t(uint32_t(v) % 256u);
          std::memcpy(bytes.data() + 4 * e, &v, 4);
        }
      std::printf("input %s: random %s values (seed %u%s)\n", info.name, DTypeLabel(info.dtype), seed + i,
                  info.dtype == VKQC_I32 && vkqc_model_max_context(rt.model) > 0 ? ", token ids in [0, 256)" : "");
    }
    NpyArray view;
    view.descr = NpyDescr(info.dtype);
    view.shape = {int64_t(elems)};
    view.data = bytes;
    v = NpyToFloats(view);
    if (info.dtype == VKQC_I32) {
      std::vector<int32_t> iv(elems);
      std::memcpy(iv.data(), bytes.data(), elems * 4);
      int32_inputs[info.name] = std::move(iv);
    }
    if (vkqc_model_write_input(rt.model, prog, i, bytes.data(), bytes.size()) != VKQC_OK) return UserError(vkqc_last_error());
    inputs[info.name] = std::move(v);
  }
  if (!files.empty()) return UserError("--input names no input of the model: '" + files.begin()->first + "'");

  const uint32_t position = vkqc_model_position(rt.model);
  const auto t0 = std::chrono::steady_clock::now();
  if (vkqc_model_run(rt.model, prog) != VKQC_OK) return UserError(vkqc_last_error());
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const uint32_t nl = vkqc_model_layer_count(rt.model, prog);
  std::vector<double> layer_ns(nl);
  double gpu_ns = 0;
  // A stateful program is timed at the same position again (it rewrites the same cache rows).
  const uint32_t after = vkqc_model_position(rt.model);
  if (vkqc_model_max_context(rt.model) > 0) (void)vkqc_model_set_position(rt.model, position);
  const bool timed = vkqc_model_run_timed(rt.model, prog, layer_ns.data(), &gpu_ns) == VKQC_OK;
  if (vkqc_model_max_context(rt.model) > 0) (void)vkqc_model_set_position(rt.model, after);
  std::printf("ran program %u (tokens %u) on %s: %.3f ms wall", prog, vkqc_model_program_tokens(rt.model, prog), dev,
              wall_ms);
  if (timed) std::printf(", %.3f ms GPU (timestamps)", gpu_ns / 1e6);
  std::printf("\n");

  std::map<std::string, std::vector<float>> outputs;
  std::map<std::string, std::vector<int32_t>> int32_outputs;
  std::map<std::string, std::vector<int64_t>> shapes;
  for (uint32_t i = 0; i < vkqc_model_output_count(rt.model, prog); ++i) {
    vkqc_tensor_info info;
    (void)vkqc_model_output_info(rt.model, prog, i, &info);
    NpyArray arr;
    arr.descr = NpyDescr(info.dtype);
    arr.shape.assign(info.shape, info.shape + info.rank);
    arr.data.resize(info.size_bytes);
    if (vkqc_model_read_output(rt.model, prog, i, arr.data.data(), arr.data.size()) != VKQC_OK)
      return UserError(vkqc_last_error());
    if (!outdir.empty()) {
      const std::string path = outdir + "/" + info.name + ".npy";
      VKQC_TRY(WriteNpy(path, arr));
      std::printf("output %s -> %s\n", info.name, path.c_str());
    }
    if (info.dtype == VKQC_I32) {
      std::vector<int32_t> iv(arr.data.size() / 4);
      std::memcpy(iv.data(), arr.data.data(), arr.data.size());
      int32_outputs[info.name] = std::move(iv);
    }
    outputs[info.name] = NpyToFloats(arr);
    shapes[info.name] = arr.shape;
  }
  VKQC_TRY(rt.vlog.Verdict());

  if (ref_graph) {
    const ir::Graph& g = *ref_graph;
    ref::RunOptions ro;
    ro.tokens = vkqc_model_program_tokens(rt.model, prog);
    uint32_t op_layers = 0;
    for (uint32_t i = 0; i < nl; ++i) {
      vkqc_layer_info li;
      (void)vkqc_model_layer_info(rt.model, prog, i, &li);
      op_layers += li.op_index >= 0;
    }
    if (op_layers != g.ops.size())
      return UserError(a.Get("--reference") + ": graph has " + std::to_string(g.ops.size()) + " ops, the bundle " +
                       std::to_string(op_layers) + " layers: not the graph this bundle was compiled from");
    ro.integer_path.assign(g.ops.size(), false);
    // An integer-path layer that quantizes an activation computed on the GPU can see a value
    // one rounding step away from the reference's and pick the neighbouring int8 code: allow
    // for that unless the user set a tolerance.
    bool requantizes_computed = false;
    for (uint32_t i = 0; i < nl; ++i) {
      vkqc_layer_info li;
      (void)vkqc_model_layer_info(rt.model, prog, i, &li);
      if (li.op_index < 0 || size_t(li.op_index) >= g.ops.size()) continue;
      ro.integer_path[li.op_index] = li.integer_path;
      const ir::Op& op = g.ops[li.op_index];
      if (!li.integer_path || op.type != ir::OpType::Linear) continue;
      for (const ir::Op& other : g.ops)
        for (int t : other.outputs)
          if (t == op.inputs[0] && g.tensors[t].dtype != ir::DType::I8) requantizes_computed = true;
    }
    if (!a.Has("--tolerance") && requantizes_computed) {
      tol = 2e-3;
      std::printf("tolerance 2e-3: integer-path layers quantize activations computed on the GPU\n");
    }
    ro.int32_inputs = int32_inputs;
    VKQC_ASSIGN_OR_RETURN(ref::GraphResult expect_all, ref::RunGraphDetailed(g, inputs, ro));
    const auto& expect = expect_all.outputs;
    bool pass = true;
    const bool per_op = a.Has("--per-op");
    if (per_op) {
      VKQC_TRY(CheckPerOp(rt, prog, g, inputs, ro, a.Has("--tolerance") ? tol : 1e-4, &pass));
      // Each op was checked on its own inputs above; end to end, one-LSB differences propagate
      // through every requantization, so the whole-graph comparison is looser and also asks
      // for the same top-1 class in every row.
      if (!a.Has("--tolerance")) {
        tol = 5e-2;
        std::printf("end to end: tolerance 5e-2 of max |ref| and identical top-1 per row\n");
      }
    }
    for (const auto& [name, want] : expect) {
      auto it = outputs.find(name);
      if (it == outputs.end() || it->second.size() != want.size())
        return UserError("reference output '" + name + "' does not match the bundle's outputs");
      double max_abs = 0, max_ref = 0;
      bool finite = true;
      for (size_t i = 0; i < want.size(); ++i) {
        finite &= std::isfinite(it->second[i]);
        max_abs = std::max(max_abs, std::fabs(double(it->second[i]) - want[i]));
        max_ref = std::max(max_ref, std::fabs(double(want[i])));
      }
      const double rel = max_ref > 0 ? max_abs / max_ref : max_abs;
      bool ok = finite && rel <= tol;
      if (auto iw = expect_all.int32_outputs.find(name); iw != expect_all.int32_outputs.end()) {
        int64_t worst = 0;  // int32 outputs: the integer codes, exactly
        const auto& got = int32_outputs[name];
        for (size_t i = 0; i < iw->second.size() && i < got.size(); ++i)
          worst = std::max<int64_t>(worst, std::abs(int64_t(got[i]) - iw->second[i]));
        ok = got.size() == iw->second.size() && worst <= 1;
        std::printf("output %s: int32 codes at most %lld from the reference\n", name.c_str(), (long long)worst);
      }
      if (per_op && shapes[name].size() >= 1) {
        const size_t cls = size_t(shapes[name].back()), rows = want.size() / std::max<size_t>(cls, 1);
        size_t same = 0;
        for (size_t r = 0; r < rows; ++r) {
          auto arg = [&](const float* v) { return std::max_element(v, v + cls) - v; };
          same += arg(it->second.data() + r * cls) == arg(want.data() + r * cls);
        }
        std::printf("output %s: top-1 identical in %zu of %zu rows\n", name.c_str(), same, rows);
        ok = ok && same == rows;
      }
      pass &= ok;
      std::printf("output %s: max abs error %.3g, max error / max |ref| %.3g (tolerance %.1g) %s\n", name.c_str(),
                  max_abs, rel, tol, ok ? "PASS" : (finite ? "FAIL" : "FAIL (non-finite values)"));
    }
    if (!pass) return UserError("outputs differ from the CPU reference");
  }
  return {};
}


// `bench --pipeline-stats`: one line per dispatch of each layer, the driver's statistics as it
// names them (their set differs between drivers).
Status PrintPipelineStatistics(vkqc_model m, uint32_t prog) {
  std::printf("\npipeline statistics (the driver's, per dispatch):\n");
  for (uint32_t i = 0; i < vkqc_model_layer_count(m, prog); ++i) {
    vkqc_layer_info li;
    (void)vkqc_model_layer_info(m, prog, i, &li);
    uint32_t n = 0;
    if (vkqc_model_layer_statistics(m, prog, i, nullptr, &n) != VKQC_OK) return UserError(vkqc_last_error());
    if (n == 0) continue;  // a layer without a dispatch of its own
    std::vector<vkqc_pipeline_statistic> st(n);
    if (vkqc_model_layer_statistics(m, prog, i, st.data(), &n) != VKQC_OK) return UserError(vkqc_last_error());
    std::string line;
    for (uint32_t j = 0; j < n; ++j) {
      if (j == 0 || st[j].dispatch != st[j - 1].dispatch) {
        if (!line.empty()) std::printf("%s\n", line.c_str());
        line = std::string("  ") + li.name + " [" + li.variant + "] #" + std::to_string(st[j].dispatch) + ":";
      }
      char v[32];
      std::snprintf(v, sizeof(v), "%.15g", st[j].value);
      line += std::string(" ") + st[j].name + "=" + v;
    }
    if (!line.empty()) std::printf("%s\n", line.c_str());
  }
  return {};
}

Status CmdBench(const Args& a) {
  VKQC_TRY(CheckKnown(a, {"--tokens", "--min-ms", "--roofline", "--peak-gbps", "--peak-tops", "--device",
                          "--validation", "--robust-access", "--validate-spirv", "--position", "--trusted-key", "--max-weight-buffer-bytes",
                          "--pipeline-stats", "--attribute"}));
  if (a.pos.size() != 1) return UserError("usage: vkqc bench OUT.vkqb [--tokens N]");
  int64_t position = 0;
  if (a.Has("--position")) {
    VKQC_ASSIGN_OR_RETURN(position, ParseInt(a.Get("--position"), "--position"));
  }
  double min_ms = 100;
  if (a.Has("--min-ms")) {
    VKQC_ASSIGN_OR_RETURN(min_ms, ParseDouble(a.Get("--min-ms"), "--min-ms"));
  }
  RooflinePeaks peaks;
  if (a.Has("--roofline")) {
    VKQC_ASSIGN_OR_RETURN(Roofline r, LoadRoofline(a.Get("--roofline")));
    if (!r.Known())
      return UserError(a.Get("--roofline") + " has no measured roofline (write one with `vkqc roofline -o NAME.vkqc.json`)");
    peaks = {r.read_gbps, r.int8_dot_tops, r.fp32_tflops, r.coopmat_int8_tops, r.coopmat_fp16_tflops};
  }
  for (const char* o : {"--peak-gbps", "--peak-tops"}) {
    if (!a.Has(o)) continue;
    VKQC_ASSIGN_OR_RETURN(double v, ParseDouble(a.Get(o), o));
    if (!(v > 0) || !std::isfinite(v)) return UserError(std::string(o) + " must be a positive number");
    if (std::string(o) == "--peak-gbps") peaks.read_gbps = v;
    else peaks.int_tops = peaks.float_tflops = peaks.cm_int_tops = peaks.cm_fp16_tflops = v;
  }
  Runtime rt;
  VKQC_TRY(rt.Open(a, a.pos[0], false));
  VKQC_ASSIGN_OR_RETURN(uint32_t prog, rt.Program(a));
  for (uint32_t i = 0; i < vkqc_model_input_count(rt.model, prog); ++i) {
    vkqc_tensor_info info;
    (void)vkqc_model_input_info(rt.model, prog, i, &info);
    if (int32_t(i) == vkqc_model_position_input(rt.model, prog)) continue;
    auto v = RandomInput(info.size_bytes / 4, 7 + i);
    if (info.dtype == VKQC_I32)  // token ids: inside any vocabulary
      for (size_t e = 0; e < v.size(); ++e) {
        const int32_t id = int32_t(e % 251);
        std::memcpy(&v[e], &id, 4);
      }
    (void)vkqc_model_write_input(rt.model, prog, i, v.data(), info.size_bytes);
  }
  if (a.Has("--position")) {  // a stateful program timed with `position` cache rows before its own
    if (position < 0 || position > UINT32_MAX || vkqc_model_set_position(rt.model, uint32_t(position)) != VKQC_OK)
      return UserError("--position " + std::to_string(position) + ": " + vkqc_last_error());
    if (position + std::max<uint32_t>(vkqc_model_program_tokens(rt.model, prog), 1) > vkqc_model_max_context(rt.model))
      return UserError("--position " + std::to_string(position) + " + the program's tokens exceed the max context " +
                       std::to_string(vkqc_model_max_context(rt.model)));
  }
  const uint32_t nl = vkqc_model_layer_count(rt.model, prog);
  std::vector<std::vector<double>> samples(nl);
  std::vector<double> totals;
  std::vector<double> layer_ns(nl);
  double total_ns = 0, acc_ms = 0;
  // Warm-up: at least 3 runs and 500 ms of GPU work, so the clocks have risen (an H100 timed from
  // idle ran the same decode program up to 2.4x slower).
  for (double warm_ms = 0; warm_ms < 500.0;) {
    for (int w = 0; w < 3; ++w) {
      if (vkqc_model_run_timed(rt.model, prog, nullptr, &total_ns) != VKQC_OK) return UserError(vkqc_last_error());
      warm_ms += total_ns / 1e6;
    }
  }
  while (acc_ms < min_ms || totals.size() < 10) {
    if (vkqc_model_run_timed(rt.model, prog, layer_ns.data(), &total_ns) != VKQC_OK) return UserError(vkqc_last_error());
    for (uint32_t i = 0; i < nl; ++i) samples[i].push_back(layer_ns[i]);
    totals.push_back(total_ns);
    acc_ms += total_ns / 1e6;
    if (totals.size() > 100000) break;
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  // The program's own cost: whole-buffer timestamps only (per-layer ones serialize the GPU a little).
  std::vector<double> whole;
  for (double acc = 0; acc < min_ms || whole.size() < 10;) {
    double ns = 0;
    if (vkqc_model_run_timed(rt.model, prog, nullptr, &ns) != VKQC_OK) return UserError(vkqc_last_error());
    whole.push_back(ns);
    acc += ns / 1e6;
    if (whole.size() > 100000) break;
  }
  const char* dev = "";
  vkqc_context_device_name(rt.ctx, &dev);
  std::printf("device %s, program tokens %u, %zu timed runs\n", dev, vkqc_model_program_tokens(rt.model, prog), totals.size());
  std::printf("whole program without per-layer timestamps: %.2f us (median of %zu runs)\n", median(whole) / 1e3,
              whole.size());

  BenchTable table(peaks);
  for (uint32_t i = 0; i < nl; ++i) {
    vkqc_layer_info li;
    (void)vkqc_model_layer_info(rt.model, prog, i, &li);
    table.Layer(li.name, li.variant, median(samples[i]), li.weight_bytes, li.flops, li.integer_path);
  }
  table.Total(median(totals));
  if (a.Has("--pipeline-stats")) VKQC_TRY(PrintPipelineStatistics(rt.model, prog));
  if (a.Has("--attribute")) {  // last: the model's results are not meaningful after it
    VKQC_ASSIGN_OR_RETURN(AttributionTable table, AttributeLayers(rt.model, prog, min_ms));
    PrintAttribution(table);
  }
  VKQC_TRY(rt.vlog.Verdict());
  return {};
}

Status CmdProfiles(const Args& a) {
  VKQC_TRY(CheckKnown(a, {}));
  for (const auto& p : ListBuiltinProfiles()) std::printf("%-24s %s\n", p.name.c_str(), p.summary.c_str());
  return {};
}

Status CmdProbe(const Args& a) {
  VKQC_TRY(CheckKnown(a, {"-o", "--device"}));
  if (!a.Has("-o")) return UserError("usage: vkqc probe -o PROFILE.json [--device I]");
  VKQC_ASSIGN_OR_RETURN(int d, DeviceIndex(a));
  VKQC_ASSIGN_OR_RETURN(TargetProfile p, ProbeLocalDevice(d));
  ProfileFiles files = WriteProfileJson(p);
  std::string out = a.Get("-o");
  VKQC_TRY(WriteFileBytes(out, files.profile_json.data(), files.profile_json.size()));
  std::string side = EndsWith(out, ".json") ? out.substr(0, out.size() - 5) + ".vkqc.json" : out + ".vkqc.json";
  VKQC_TRY(WriteFileBytes(side, files.sidecar_json.data(), files.sidecar_json.size()));
  std::printf("wrote %s and %s for '%s' (%s)\n", out.c_str(), side.c_str(), p.name.c_str(), p.label.c_str());
  return {};
}

Status CmdRoofline(const Args& a) {
  VKQC_TRY(CheckKnown(a, {"-o", "--device", "--min-ms", "--bytes", "--validation"}));
  if (!a.pos.empty()) return UserError("usage: vkqc roofline [-o PROFILE.vkqc.json] (no positional arguments)");
  RooflineOptions o;
  o.out = a.Get("-o");
  o.validation = a.Has("--validation");
  VKQC_ASSIGN_OR_RETURN(o.device, DeviceIndex(a));
  if (a.Has("--min-ms")) {
    VKQC_ASSIGN_OR_RETURN(o.min_ms, ParseDouble(a.Get("--min-ms"), "--min-ms"));
  }
  if (a.Has("--bytes")) {
    VKQC_ASSIGN_OR_RETURN(int64_t b, ParseInt(a.Get("--bytes"), "--bytes"));
    if (b <= 0) return UserError("--bytes must be positive");
    o.bytes = uint64_t(b);
  }
  return RunRoofline(o);
}

Status CmdTune(const Args& a) {
  VKQC_TRY(CheckKnown(a, {"-o", "--device", "--min-ms", "--quick", "--validation"}));
  if (!a.pos.empty()) return UserError("usage: vkqc tune [-o PROFILE.vkqc.json] (no positional arguments)");
  TuneOptions o;
  o.out = a.Get("-o");
  o.validation = a.Has("--validation");
  o.quick = a.Has("--quick");
  VKQC_ASSIGN_OR_RETURN(o.device, DeviceIndex(a));
  if (a.Has("--min-ms")) {
    VKQC_ASSIGN_OR_RETURN(o.min_ms, ParseDouble(a.Get("--min-ms"), "--min-ms"));
  }
  return RunTune(o);
}

int Main(int argc, char** argv) {
  std::vector<char*> av = GlobalFlagsAfterCommand(argc, argv);
  argc = int(av.size());
  argv = av.data();
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  auto args = ParseArgs(argc, argv, 2);
  Status st;
  Result<log::Level> level = args.ok() ? LogLevelFromArgs(*args) : log::Level::Info;
  SetUpLogging(level.ok() ? *level : log::Level::Info);
  if (!args.ok()) {
    st = args.error();
  } else if (!level.ok()) {
    st = level.error();
  } else if (args->Has("--help") || args->Has("-h")) {
    std::fputs(kUsage, stdout);
    return 0;
  } else if (cmd == "import") st = CmdImport(*args);
  else if (cmd == "compile") st = CmdCompile(*args);
  else if (cmd == "inspect") st = CmdInspect(*args);
  else if (cmd == "run") st = CmdRun(*args);
  else if (cmd == "bench") st = CmdBench(*args);
  else if (cmd == "generate") st = CmdGenerate(*args);
  else if (cmd == "profiles") st = CmdProfiles(*args);
  else if (cmd == "probe") st = CmdProbe(*args);
  else if (cmd == "roofline") st = CmdRoofline(*args);
  else if (cmd == "tune") st = CmdTune(*args);
  else if (cmd == "keygen") st = CmdKeygen(*args);
  else if (cmd == "sign") st = CmdSign(*args);
  else {
    std::fprintf(stderr, "vkqc: unknown command '%s'\n%s", cmd.c_str(), kUsage);
    return 2;
  }
  if (!st.ok()) {  // printed whatever the log level: it is the command's result
    progress::ClearLine();
    std::fprintf(stderr, "vkqc %s: %s%s\n", cmd.c_str(),
                 st.error().kind == ErrorKind::Internal ? "internal error (a bug in vkqc, please report): " : "",
                 st.error().message.c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace vkqc

int main(int argc, char** argv) { return vkqc::Main(argc, argv); }
