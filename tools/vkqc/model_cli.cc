#include "tools/vkqc/model_cli.h"

#include <cstdio>
#include <map>

#include "compiler/graph/import_gguf.h"
#include "compiler/graph/import_json.h"
#include "compiler/graph/import_onnx.h"
#include "compiler/graph/vkqg_io.h"
#include "compiler/tokenizer/tokenizer.h"
#include "tools/vkqc/progress.h"

namespace vkqc {
namespace {

Result<GgufImportOptions> GgufOptions(const Args* a) {
  GgufImportOptions o;
  o.log = [](const std::string& line) {  // the recipe: part of the command's result
    progress::ClearLine();
    std::printf("import: %s\n", line.c_str());
  };
  o.progress = progress::Callback();
  if (!a) return o;
  if (a->Has("--max-context")) {
    VKQC_ASSIGN_OR_RETURN(o.max_context, ParseInt(a->Get("--max-context"), "--max-context"));
    if (o.max_context < 1 || o.max_context > (1 << 20)) return UserError("--max-context must be in 1..1048576");
  }
  o.quantize = a->Get("--quantize");
  o.requantize = a->Get("--requantize");
  return o;
}

Result<OnnxImportOptions> OnnxOptions(const Args* a) {
  OnnxImportOptions o;
  if (!a) return o;
  for (const char* k : {"--input-layout", "--output-layout"}) {
    if (!a->Has(k)) continue;
    const std::string v = a->Get(k);
    if (v != "nhwc" && v != "nchw") return UserError(std::string(k) + " must be nhwc or nchw, not '" + v + "'");
    (std::string(k) == "--input-layout" ? o.nhwc_inputs : o.nhwc_outputs) = v == "nhwc";
  }
  auto range = a->opt.equal_range("--input-shape");
  for (auto it = range.first; it != range.second; ++it) {
    const std::string& v = it->second;
    const size_t eq = v.find('=');
    if (eq == std::string::npos || eq == 0)
      return UserError("--input-shape takes NAME=D0,D1,... (e.g. input=1,3,224,224), not '" + v + "'");
    std::vector<int64_t> dims;
    size_t p = eq + 1;
    while (p <= v.size()) {
      size_t c = v.find(',', p);
      if (c == std::string::npos) c = v.size();
      VKQC_ASSIGN_OR_RETURN(int64_t d, ParseInt(v.substr(p, c - p), "--input-shape"));
      if (d < 1 || d > (int64_t(1) << 31)) return UserError("--input-shape dimensions must be >= 1");
      dims.push_back(d);
      p = c + 1;
    }
    o.input_shapes[v.substr(0, eq)] = dims;
  }
  return o;
}

}  // namespace

Result<ir::Graph> LoadGraph(const std::string& path, uint64_t* hash, const Args* a) {
  const bool gguf = EndsWith(path, ".gguf");
  if (!gguf && a)
    for (const char* k : {"--max-context", "--quantize", "--requantize"})
      if (a->Has(k)) return UserError(std::string(k) + " applies to GGUF files (MODEL.gguf)");
  const bool onnx = EndsWith(path, ".onnx");
  if (!onnx && a)
    for (const char* k : {"--input-layout", "--output-layout", "--input-shape"})
      if (a->Has(k)) return UserError(std::string(k) + " applies to ONNX files (MODEL.onnx)");
  if (gguf || onnx || EndsWith(path, ".json")) {
    ir::Graph g;
    if (onnx) {
      VKQC_ASSIGN_OR_RETURN(OnnxImportOptions o, OnnxOptions(a));
      VKQC_ASSIGN_OR_RETURN(g, ImportOnnx(path, o));
    } else if (gguf) {
      VKQC_ASSIGN_OR_RETURN(GgufImportOptions o, GgufOptions(a));
      VKQC_ASSIGN_OR_RETURN(g, ImportGguf(path, o));
    } else {
      VKQC_ASSIGN_OR_RETURN(g, ImportJsonGraph(path));
    }
    if (hash) {
      VKQC_ASSIGN_OR_RETURN(auto bytes, SerializeGraph(g));
      *hash = Fnv1a64(bytes.data(), bytes.size());
    }
    return g;
  }
  VKQC_ASSIGN_OR_RETURN(auto bytes, ReadFileBytes(path));
  if (hash) *hash = Fnv1a64(bytes->data(), bytes->size());
  return ReadGraphBytes(bytes, path);
}

void PrintGraphSummary(const ir::Graph& g) {
  auto desc = g.metadata.find(kMetaDescription);
  if (desc != g.metadata.end())
    std::printf("model: %s\n", std::string(desc->second.begin(), desc->second.end()).c_str());
  auto tk = g.metadata.find(kMetaTokenizer);
  if (tk != g.metadata.end()) {
    auto d = tok::Deserialize(tk->second.data(), tk->second.size());
    if (d.ok())
      std::printf("tokenizer: %s%s, %zu tokens, bos %d, eos %d%s%s\n", d->model.c_str(),
                  d->pre.empty() ? "" : (" (pre " + d->pre + ")").c_str(), d->tokens.size(), d->bos, d->eos,
                  d->merges.empty() ? "" : (", " + std::to_string(d->merges.size()) + " merges").c_str(),
                  d->chat_template.empty() ? "" : ", chat template");
    else
      std::printf("tokenizer: unreadable (%s)\n", d.error().message.c_str());
  } else {
    std::printf("tokenizer: none (generate needs --prompt-ids)\n");
  }
  std::printf("graph: %zu tensors, %zu ops, inputs", g.tensors.size(), g.ops.size());
  for (int i : g.inputs) std::printf(" %s", g.tensors[size_t(i)].name.c_str());
  std::printf(", outputs");
  for (int i : g.outputs) std::printf(" %s", g.tensors[size_t(i)].name.c_str());
  std::printf("\nconstants (name, shape, dtype, scheme):\n");
  std::map<std::string, int> formats;
  for (const ir::Tensor& t : g.tensors) {
    if (!t.is_constant()) continue;
    std::string shape;
    for (int64_t d : t.shape) {
      if (!shape.empty()) shape += 'x';
      shape += std::to_string(d);
    }
    std::string scheme = t.quant ? ir::SchemeName(t.quant->scheme) : "";
    if (t.quant && t.quant->group_size) scheme += " g" + std::to_string(t.quant->group_size);
    std::printf("  %-40s %-14s %-4s %s\n", t.name.c_str(), shape.c_str(), ir::DTypeName(t.dtype), scheme.c_str());
    ++formats[std::string(ir::DTypeName(t.dtype)) + (scheme.empty() ? "" : " " + scheme)];
  }
  std::printf("formats:");
  for (const auto& [f, n] : formats) std::printf(" %d x %s;", n, f.c_str());
  std::printf("\n");
}

Status CmdImport(const Args& a) {
  VKQC_TRY(CheckKnown(a, {"-o", "--max-context", "--quantize", "--requantize", "--input-layout", "--output-layout",
                          "--input-shape"}));
  if (a.pos.size() != 1 || !a.Has("-o"))
    return UserError("usage: vkqc import GRAPH.json|MODEL.gguf|MODEL.onnx -o MODEL.vkqg [--max-context N] "
                     "[--quantize q8|8da4w] [--requantize q8csw|q4gsw] [--input-layout nhwc|nchw] "
                     "[--output-layout nhwc|nchw] [--input-shape NAME=D0,D1,...]");
  if (EndsWith(a.pos[0], ".vkqg")) return UserError(a.pos[0] + " is already a .vkqg graph");
  VKQC_ASSIGN_OR_RETURN(ir::Graph g, LoadGraph(a.pos[0], nullptr, &a));
  VKQC_TRY(WriteGraphFile(g, a.Get("-o")));
  std::printf("wrote %s (%zu tensors, %zu ops)\n", a.Get("-o").c_str(), g.tensors.size(), g.ops.size());
  return {};
}

}  // namespace vkqc
