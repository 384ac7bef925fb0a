// `vkqc compile` and `vkqc inspect`: compile options from the command line, compiling with a
// progress line and a summary log, and the report of a bundle's contents.
#include "tools/vkqc/compile_cli.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "compiler/common/log.h"
#include "compiler/graph/vkqg_io.h"
#include "compiler/kernels/attention/lower.h"
#include "compiler/passes/pipeline.h"
#include "compiler/profile/profile.h"
#include "runtime/src/coopmat_khr.h"
#include "schema/bundle_generated.h"
#include "tools/vkqc/model_cli.h"
#include "tools/vkqc/progress.h"
#include "tools/vkqc/sign_cli.h"
#include "vkqc/vkqc.h"

namespace vkqc {
namespace {

using log::Bytes;

Result<CompileOptions> CompileOptionsFrom(const Args& a) {
  CompileOptions o;
  if (a.Has("--tokens")) {
    std::string s = a.Get("--tokens");
    size_t start = 0;
    while (start <= s.size()) {
      size_t end = s.find(',', start);
      if (end == std::string::npos) end = s.size();
      VKQC_ASSIGN_OR_RETURN(int64_t t, ParseInt(s.substr(start, end - start), "--tokens"));
      o.tokens.push_back(t);
      start = end + 1;
    }
  }
  if (a.Has("--force-kernel")) {
    const std::string k = a.Get("--force-kernel");
    if (k == "gemm") o.select.force_algo = linear::Algo::Gemm;
    else if (k == "gemv") o.select.force_algo = linear::Algo::Gemv;
    else if (k == "rows") o.conv.rows = true;
    else return UserError("--force-kernel must be gemm, gemv or rows, not '" + k + "'");
  }
  if (a.Has("--force-accum")) {
    const std::string k = a.Get("--force-accum");
    if (k == "dot") o.select.force_accum = linear::Accum::IntDot;
    else if (k == "dequant") o.select.force_accum = linear::Accum::Dequant;
    else if (k == "cm") o.select.force_accum = linear::Accum::CoopMat;
    else return UserError("--force-accum must be dot, dequant or cm, not '" + k + "'");
  }
  o.select.no_coopmat = a.Has("--no-coopmat");
  o.select.allow_fp16 = a.Has("--allow-fp16");
  o.select.cm_nv = a.Has("--coopmat-nv");
  if (a.Has("--coopmat-tile")) {
    const std::string t = a.Get("--coopmat-tile");
    std::vector<uint32_t> v;
    size_t start = 0;
    while (start <= t.size()) {
      size_t end = t.find('x', start);
      if (end == std::string::npos) end = t.size();
      VKQC_ASSIGN_OR_RETURN(int64_t x, ParseInt(t.substr(start, end - start), "--coopmat-tile"));
      if (x < 1 || x > 64) return UserError("--coopmat-tile: each number must be in 1..64");
      v.push_back(uint32_t(x));
      start = end + 1;
    }
    if (v.size() < 4 || v.size() > 6)
      return UserError("--coopmat-tile must be WMxWNxTMxTN, WMxWNxTMxTNxBKW or WMxWNxTMxTNxBKWxSTAGES (e.g. "
                       "2x4x4x2x16x2), not '" + t + "'");
    o.select.cm_wm = v[0];
    o.select.cm_wn = v[1];
    o.select.cm_tm = v[2];
    o.select.cm_tn = v[3];
    if (v.size() >= 5) o.select.cm_bkw = v[4];
    if (v.size() == 6 && v[5] != 1 && v[5] != 2)
      return UserError("--coopmat-tile: the sixth number (shared operand buffers) must be 1 or 2, not " +
                       std::to_string(v[5]));
    if (v.size() == 6) o.select.cm_stages = v[5];
  }
  if (a.Has("--gemm-shape")) {  // RMxBK4: rows per thread x K words per step of the tiled GEMM
    const std::string t = a.Get("--gemm-shape");
    const size_t x = t.find('x');
    if (x == std::string::npos) return UserError("--gemm-shape must be RMxBK4 (e.g. 8x16), not '" + t + "'");
    VKQC_ASSIGN_OR_RETURN(int64_t rm, ParseInt(t.substr(0, x), "--gemm-shape"));
    VKQC_ASSIGN_OR_RETURN(int64_t bk, ParseInt(t.substr(x + 1), "--gemm-shape"));
    if (rm < 1 || rm > 64 || bk < 1 || bk > 64) return UserError("--gemm-shape: numbers in 1..64");
    o.select.gemm_rm = uint32_t(rm);
    o.select.gemm_bk4 = uint32_t(bk);
  }
  if (a.Has("--force-conv")) {
    const std::string k = a.Get("--force-conv");
    if (k == "im2col") o.conv.force = conv::ConvAlgo::Im2col;
    else if (k == "direct") o.conv.force = conv::ConvAlgo::Direct;
    else return UserError("--force-conv must be im2col or direct, not '" + k + "'");
  }
  if (a.Has("--force-attention")) {
    const std::string k = a.Get("--force-attention");
    if (k == "rows") o.attention = CompileOptions::AttentionKernel::Rows;
    else if (k == "tiled") o.attention = CompileOptions::AttentionKernel::Tiled;
    else return UserError("--force-attention must be rows or tiled, not '" + k + "'");
  }
  if (a.Has("--decode-attention-rows")) {
    VKQC_ASSIGN_OR_RETURN(int64_t v, ParseInt(a.Get("--decode-attention-rows"), "--decode-attention-rows"));
    if (v < 1 || v > attention::kDecodeMaxRows)
      return UserError("--decode-attention-rows out of range (1.." + std::to_string(attention::kDecodeMaxRows) + ")");
    o.decode_attention_rows = uint32_t(v);
  }
  o.keep_intermediates = a.Has("--keep-intermediates");
  o.norm_tail = a.Has("--norm-tail");
  if (a.Has("--gemv-max-m")) {
    VKQC_ASSIGN_OR_RETURN(int64_t v, ParseInt(a.Get("--gemv-max-m"), "--gemv-max-m"));
    if (v < 0 || v > 4096) return UserError("--gemv-max-m out of range");
    o.select.gemv_max_m = uint32_t(v);
  }
  if (a.Has("--coopmat-split")) {
    VKQC_ASSIGN_OR_RETURN(int64_t v, ParseInt(a.Get("--coopmat-split"), "--coopmat-split"));
    if (v < 1 || v > 64) return UserError("--coopmat-split out of range (1..64)");
    o.select.cm_ksplit = uint32_t(v);
  }
  if (a.Has("--prologue-max-bytes")) {
    VKQC_ASSIGN_OR_RETURN(int64_t v, ParseInt(a.Get("--prologue-max-bytes"), "--prologue-max-bytes"));
    if (v < 1 || v > (int64_t(1) << 40)) return UserError("--prologue-max-bytes out of range (1..2^40)");
    o.select.prologue_max_bytes = uint64_t(v);
  }
  if (a.Has("--prefetch-max-bytes")) {
    VKQC_ASSIGN_OR_RETURN(int64_t v, ParseInt(a.Get("--prefetch-max-bytes"), "--prefetch-max-bytes"));
    if (v < 0 || v > (int64_t(1) << 40)) return UserError("--prefetch-max-bytes out of range (0..2^40)");
    o.prefetch_max_bytes = uint64_t(v);
  }
  return o;
}

Result<std::vector<uint8_t>> CompileFromArgs(const Args& a, const std::string& graph_path) {
  if (!a.Has("--target")) return UserError("--target NAME|PROFILE.json is required (see `vkqc profiles`)");
  uint64_t hash = 0;
  VKQC_ASSIGN_OR_RETURN(ir::Graph g, LoadGraph(graph_path, &hash, &a));
  VKQC_ASSIGN_OR_RETURN(TargetProfile p, LoadProfile(a.Get("--target")));
  VKQC_ASSIGN_OR_RETURN(CompileOptions o, CompileOptionsFrom(a));
  o.progress = progress::Callback();
  log::Debug("graph " + graph_path + ": " + std::to_string(g.tensors.size()) + " tensors, " +
             std::to_string(g.ops.size()) + " ops; target '" + p.name + "' (" + p.label + ")");
  const auto t0 = std::chrono::steady_clock::now();
  auto r = CompileGraph(g, p, o, hash);
  if (!r.ok()) return Error{r.error().kind, graph_path + ": " + r.error().message};
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto* b = fb::bundle::GetBundle(r->data() + 4);  // written by CompileGraph just now
  char line[256];
  std::snprintf(line, sizeof line, "compiled for target '%s' in %.2f s: %u program(s), %u shader module(s), "
                "%u pipeline(s), weights %s", p.name.c_str(), s, b->programs() ? b->programs()->size() : 0,
                b->modules() ? b->modules()->size() : 0, b->pipelines() ? b->pipelines()->size() : 0,
                Bytes(b->weight_segment_size()).c_str());
  log::Info(line);
  return r;
}

void PrintBundle(const fb::bundle::Bundle* b, uint64_t file_size) {
  namespace fbb = fb::bundle;
  std::printf("bundle: %s, target '%s', graph hash %016llx, %s (weights %s)\n",
              b->compiler_version() ? b->compiler_version()->c_str() : "?",
              b->target_profile() ? b->target_profile()->c_str() : "?", (unsigned long long)b->graph_hash(),
              Bytes(file_size).c_str(), Bytes(b->weight_segment_size()).c_str());
  const auto* r = b->requirements();
  std::printf("requires: Vulkan %u.%u", r->api_version() >> 22, (r->api_version() >> 12) & 0x3FF);
  if (r->shader_integer_dot_product()) std::printf(", shaderIntegerDotProduct");
  if (r->shader_float16()) std::printf(", shaderFloat16");
  if (r->shader_int8()) std::printf(", shaderInt8");
  if (r->storage_buffer_8bit_access()) std::printf(", storageBuffer8BitAccess");
  if (r->vulkan_memory_model()) std::printf(", vulkanMemoryModel");
  if (r->cooperative_matrix_nv()) std::printf(", cooperativeMatrix (NV)");
  if (r->cooperative_matrix_khr()) std::printf(", cooperativeMatrix (KHR)");
  auto CmName = [](uint32_t t) { return khr::ComponentTypeName(t) ? khr::ComponentTypeName(t) : "?"; };
  if (r->cooperative_matrix_shapes())
    for (const auto* cs : *r->cooperative_matrix_shapes())
      std::printf(", %ux%ux%u %s x %s -> %s", cs->m(), cs->n(), cs->k(), CmName(cs->a()),
                  CmName(cs->b()), CmName(cs->result()));
  if (r->extensions())
    for (const auto* e : *r->extensions()) std::printf(", %s", e->c_str());
  if (r->subgroup_arithmetic()) std::printf(", subgroup arithmetic");
  if (r->required_subgroup_size()) std::printf(", subgroup size %u", r->required_subgroup_size());
  std::printf("\n          shared memory %u B, %u invocations, storage range %s, %u storage buffers/stage, "
              "offset alignment %u, push constants %u B\n",
              r->max_compute_shared_memory_size(), r->max_compute_work_group_invocations(),
              Bytes(r->max_storage_buffer_range()).c_str(), r->max_per_stage_descriptor_storage_buffers(),
              r->min_storage_buffer_offset_alignment(), r->max_push_constants_size());
  std::printf("shaders: %u modules, %u pipelines\n", b->modules() ? b->modules()->size() : 0,
              b->pipelines() ? b->pipelines()->size() : 0);
  if (b->states() && b->states()->size()) {  // KV caches, then the compiler's own (vkqc.sync)
    if (b->max_context()) std::printf("state (context %u):", b->max_context());
    else std::printf("state:");
    for (uint32_t i = 0; i < b->states()->size(); ++i) {
      const auto* st = b->states()->Get(i);
      std::printf("%s %s %s", i ? "," : "", st->name() ? st->name()->c_str() : "?", Bytes(st->size()).c_str());
    }
    std::printf("\n");
  }
  for (const auto* pr : *b->programs()) {
    uint32_t dispatches = 0, barriers = 0;
    for (uint32_t i = 0; i < pr->commands_type()->size(); ++i)
      (fbb::Command(pr->commands_type()->Get(i)) == fbb::Command::Dispatch ? dispatches : barriers)++;
    std::printf("\nprogram '%s' (tokens %u): %u dispatches, %u barriers, arena %s\n", pr->name()->c_str(), pr->tokens(),
                dispatches, barriers, Bytes(pr->arena_size()).c_str());
    auto io = [](const char* what, const flatbuffers::Vector<flatbuffers::Offset<fbb::IoTensor>>* v) {
      if (!v) return;
      for (const auto* t : *v) {
        std::printf("  %s %s [", what, t->name()->c_str());
        for (uint32_t i = 0; i < t->shape()->size(); ++i) std::printf("%s%lld", i ? "," : "", (long long)t->shape()->Get(i));
        std::printf("] %s\n", Bytes(t->size()).c_str());
      }
    };
    io("input ", pr->inputs());
    io("output", pr->outputs());
    if (pr->layers())
      for (const auto* l : *pr->layers()) {
        std::printf("  layer %-16s %-30s weights %s\n", l->name()->c_str(), l->variant()->c_str(),
                    Bytes(l->weight_bytes()).c_str());
        std::printf("        why: %s\n", l->reason()->c_str());
        std::printf("        %s\n", l->detail()->c_str());
      }
    // Every dispatch that converts a tensor's representation (float <-> int8, int8 rescaling,
    // dense <-> packed int8 layout at the graph boundary), and what the fold pass removed.
    if (pr->layers()) {
      std::vector<std::string> lines, folded;
      for (const auto* l : *pr->layers()) {
        const std::string op = l->op()->str(), variant = l->variant()->str(), reason = l->reason()->str();
        if (variant == "folded") {
          folded.push_back(l->name()->str() + " (" + op + "): " + reason);
        } else if (op == "quantize" || op == "dequantize" || op == "repack" || variant.rfind("requantize", 0) == 0) {
          const size_t at = reason.find("remains: ");
          const std::string why = op == "repack" ? "graph I/O is dense int8 bytes; kernels read packed rows"
                                  : at == std::string::npos ? reason : reason.substr(at + 9);
          lines.push_back(l->name()->str() + " " + variant + ": " + why);
        }
      }
      std::printf("  conversions remaining: %zu%s\n", lines.size(),
                  lines.empty() ? " (int8 activations stay packed int8 between ops)" : "");
      for (const auto& s : lines) std::printf("    %s\n", s.c_str());
      if (!folded.empty()) std::printf("  folded by the compiler: %zu\n", folded.size());
      for (const auto& s : folded) std::printf("    %s\n", s.c_str());
    }
    if (pr->arena_tensors() && pr->arena_tensors()->size()) {
      std::printf("  memory plan (arena %s):\n", Bytes(pr->arena_size()).c_str());
      for (const auto* t : *pr->arena_tensors())
        std::printf("    %-24s offset %-10llu size %-12s commands %u..%u\n", t->name()->c_str(),
                    (unsigned long long)t->offset(), Bytes(t->size()).c_str(), t->first_command(), t->last_command());
    }
  }
}

}  // namespace

Status CmdCompile(const Args& a) {
  VKQC_TRY(CheckKnown(a, {"-o", "--target", "--tokens", "--input-layout", "--output-layout", "--input-shape", "--force-kernel", "--force-accum", "--gemv-max-m", "--prologue-max-bytes", "--prefetch-max-bytes", "--norm-tail", "--force-conv", "--force-attention", "--decode-attention-rows",
                          "--keep-intermediates", "--no-coopmat", "--allow-fp16", "--coopmat-nv", "--coopmat-tile", "--coopmat-split", "--gemm-shape",
                          "--max-context", "--quantize", "--requantize", "--sign-key"}));
  if (a.pos.size() != 1 || !a.Has("-o"))
    return UserError("usage: vkqc compile MODEL.vkqg --target NAME -o OUT.vkqb");
  if (a.Has("--sign-key")) {  // the key is read (and refused) before minutes of compiling
    VKQC_TRY(CheckSignKey(a));
  }
  VKQC_ASSIGN_OR_RETURN(auto bytes, CompileFromArgs(a, a.pos[0]));
  VKQC_TRY(SignWithKeyFile(a, &bytes));
  VKQC_TRY(WriteFileBytes(a.Get("-o"), bytes.data(), bytes.size()));
  std::printf("wrote %s (%zu bytes) for target %s%s\n", a.Get("-o").c_str(), bytes.size(), a.Get("--target").c_str(),
              a.Has("--sign-key") ? ", signed" : "");
  return {};
}

Status CmdInspect(const Args& a) {
  VKQC_TRY(CheckKnown(a, {"--target", "--tokens", "--input-layout", "--output-layout", "--input-shape", "--force-kernel", "--force-accum", "--gemv-max-m", "--prologue-max-bytes", "--prefetch-max-bytes", "--norm-tail", "--force-conv", "--force-attention", "--decode-attention-rows",
                          "--no-coopmat", "--allow-fp16", "--coopmat-nv", "--coopmat-tile", "--coopmat-split", "--gemm-shape",
                          "--max-context", "--quantize", "--requantize", "--trusted-key"}));
  if (a.pos.size() != 1) return UserError("usage: vkqc inspect OUT.vkqb | MODEL [--target T]");
  if (!EndsWith(a.pos[0], ".vkqb")) {  // a model: its summary, then (with --target) the compiled plan
    VKQC_ASSIGN_OR_RETURN(ir::Graph g, LoadGraph(a.pos[0], nullptr, &a));
    PrintGraphSummary(g);
    if (!a.Has("--target")) return {};
  }
  std::vector<uint8_t> bytes;
  if (EndsWith(a.pos[0], ".vkqb")) {
    for (const char* o : {"--target", "--tokens", "--force-kernel", "--force-accum", "--gemv-max-m", "--prologue-max-bytes", "--prefetch-max-bytes", "--norm-tail", "--force-conv", "--force-attention", "--decode-attention-rows",
                          "--no-coopmat", "--allow-fp16", "--coopmat-nv", "--coopmat-tile", "--coopmat-split"})
      if (a.Has(o)) return UserError(std::string(o) + " applies when inspecting a graph, not a compiled bundle");
    VKQC_ASSIGN_OR_RETURN(auto b, ReadFileBytes(a.pos[0]));
    bytes = *b;
  } else {
    VKQC_ASSIGN_OR_RETURN(bytes, CompileFromArgs(a, a.pos[0]));
  }
  // The runtime's full verifier (every index, offset, size and checksum), no device needed.
  if (vkqc_verify_bundle(bytes.data(), bytes.size()) != VKQC_OK)
    return UserError(a.pos[0] + ": " + vkqc_last_error());
  const auto* b = fb::bundle::GetBundle(bytes.data() + 4);
  PrintBundle(b, bytes.size());
  VKQC_TRY(PrintSignature(a, bytes));
  return {};
}

}  // namespace vkqc
