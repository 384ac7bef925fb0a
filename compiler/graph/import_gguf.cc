// The graph is the one examples/llama/make_example.py writes (docs/graph-json.md, "Transformer
// decoders"): embedding, per layer rms_norm -> q/k/v linear -> rope -> attention over f16 KV
// caches -> o_proj -> residual add -> rms_norm -> gate/up linear -> silu * up -> down -> residual
// add, final rms_norm, lm_head, argmax; every linear with dq8ca activations.
//
// RoPE: llama.cpp's converter stores a `llama` model's Q and K rows permuted per head so that its
// rotation pairs adjacent rows (2i, 2i+1) where the original model paired (i, i + D/2). Rotating
// the stored rows with the interleaved layout is the original rotation of the same rows in a
// different order, applied to q and k alike, so q.k (and the model's function) is unchanged: the
// importer keeps the stored order and uses the interleaved layout. `qwen2` files are not permuted
// and use the half layout.
#include "compiler/graph/import_gguf.h"

#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>

#include "compiler/graph/gguf.h"
#include "compiler/graph/gguf_tensors.h"
#include "compiler/graph/verify.h"
#include "compiler/tokenizer/tokenizer.h"

namespace vkqc {
namespace {

using gguf::TensorInfo;

ir::ConstData Own(std::vector<uint8_t> bytes) {
  auto owner = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  return ir::ConstData{owner, 0, owner->size()};
}

template <typename T>
std::vector<uint8_t> AsBytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::string Dims(const std::vector<uint64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

struct Hyper {
  std::string arch;
  int64_t layers = 0, hidden = 0, ffn = 0, heads = 0, kv_heads = 0, head_dim = 0, vocab = 0, context = 0;
  double theta = 10000, eps = 1e-5;
  bool interleaved = true, qkv_bias = false;
};

class Importer {
 public:
  Importer(const gguf::File& f, const GgufImportOptions& o) : f_(f), o_(o) {}

  Result<ir::Graph> Run() {
    VKQC_TRY(ReadHyper());
    VKQC_TRY(Build());
    VKQC_TRY(AttachTokenizer());
    std::ostringstream d;
    d << h_.arch << ": " << h_.layers << " layers, hidden " << h_.hidden << ", ffn " << h_.ffn << ", heads "
      << h_.heads << "/" << h_.kv_heads << " x " << h_.head_dim << ", vocab " << h_.vocab << ", context "
      << max_context_ << " (model " << h_.context << "); rope " << (h_.interleaved ? "interleaved" : "half")
      << " theta " << h_.theta << (llama3_ ? " llama3-scaled" : "") << "; weights:";
    for (const auto& [what, n] : recipe_) d << " " << n << " x " << what << ";";
    std::string desc = d.str();
    g_.metadata[kMetaDescription] = std::vector<uint8_t>(desc.begin(), desc.end());
    VKQC_TRY(VerifyGraph(g_, f_.path()));
    return std::move(g_);
  }

 private:
  Error Fail(const std::string& m) const { return UserError(f_.path() + ": " + m); }
  void Log(const std::string& m) const {
    if (o_.log) o_.log(m);
  }

  Status ReadHyper() {
    VKQC_ASSIGN_OR_RETURN(h_.arch, f_.String("general.architecture"));
    if (h_.arch != "llama" && h_.arch != "qwen2")
      return Fail("architecture '" + h_.arch + "' is not supported (supported: " + GgufArchitectures() + ")");
    const std::string a = h_.arch + ".";
    VKQC_ASSIGN_OR_RETURN(h_.layers, f_.Int(a + "block_count"));
    VKQC_ASSIGN_OR_RETURN(h_.hidden, f_.Int(a + "embedding_length"));
    VKQC_ASSIGN_OR_RETURN(h_.ffn, f_.Int(a + "feed_forward_length"));
    VKQC_ASSIGN_OR_RETURN(h_.heads, f_.Int(a + "attention.head_count"));
    h_.kv_heads = f_.IntOr(a + "attention.head_count_kv", h_.heads);
    VKQC_ASSIGN_OR_RETURN(h_.context, f_.Int(a + "context_length"));
    VKQC_ASSIGN_OR_RETURN(h_.eps, f_.Float(a + "attention.layer_norm_rms_epsilon"));
    h_.theta = f_.FloatOr(a + "rope.freq_base", 10000.0);
    if (h_.heads < 1 || h_.hidden < 1 || h_.layers < 1 || h_.ffn < 1 || h_.kv_heads < 1 || h_.context < 1 ||
        h_.layers > 1024 || h_.heads > 1024 || h_.hidden > (1 << 20) || h_.ffn > (1 << 22))
      return Fail("hyperparameters out of range (block_count " + std::to_string(h_.layers) + ", embedding_length " +
                  std::to_string(h_.hidden) + ", feed_forward_length " + std::to_string(h_.ffn) + ", head_count " +
                  std::to_string(h_.heads) + "/" + std::to_string(h_.kv_heads) + ", context_length " +
                  std::to_string(h_.context) + ")");
    h_.head_dim = f_.IntOr(a + "rope.dimension_count", h_.hidden / h_.heads);
    if (h_.heads % h_.kv_heads != 0)
      return Fail(a + "attention.head_count " + std::to_string(h_.heads) + " is not a multiple of head_count_kv " +
                  std::to_string(h_.kv_heads));
    if (h_.head_dim * h_.heads != h_.hidden && f_.Find(a + "rope.dimension_count") == nullptr)
      return Fail("embedding_length " + std::to_string(h_.hidden) + " is not head_count x head_dim");
    if (!(h_.eps > 0) || !(h_.theta > 1)) return Fail("layer_norm_rms_epsilon must be > 0 and rope.freq_base > 1");
    const std::string scaling = f_.StringOr(a + "rope.scaling.type", "none");
    if (scaling != "none" && !(scaling == "linear" && f_.FloatOr(a + "rope.scaling.factor", 1.0) == 1.0))
      return Fail("rope scaling '" + scaling + "' is not supported (none, or Llama 3's rope_freqs.weight)");
    if (h_.arch == "llama" && f_.Find("llama.attention.sliding_window"))
      return Fail("sliding-window attention (llama.attention.sliding_window) is not supported");
    h_.interleaved = h_.arch == "llama";
    h_.qkv_bias = h_.arch == "qwen2";
    const TensorInfo* emb = f_.FindTensor("token_embd.weight");
    if (!emb) return Fail("tensor 'token_embd.weight' is missing");
    if (emb->dims.size() != 2 || int64_t(emb->dims[0]) != h_.hidden)
      return Fail("tensor 'token_embd.weight' has shape " + Dims(emb->dims) + "; expected [" +
                  std::to_string(h_.hidden) + ", vocab]");
    h_.vocab = int64_t(emb->dims[1]);
    max_context_ = o_.max_context > 0 ? o_.max_context : std::min<int64_t>(h_.context, 4096);
    if (max_context_ > (1 << 20)) return Fail("--max-context " + std::to_string(max_context_) + " is too large");
    return {};
  }

  // The tensor `name` with GGUF dims `dims` (innermost first), or an error naming both shapes.
  Result<const TensorInfo*> Need(const std::string& name, std::vector<uint64_t> dims) const {
    const TensorInfo* t = f_.FindTensor(name);
    if (!t) return Fail("tensor '" + name + "' is missing");
    if (t->dims != dims)
      return Fail("tensor '" + name + "' has shape " + Dims(t->dims) + " but the metadata says " + Dims(dims) +
                  " (GGUF order, innermost first)");
    return t;
  }

  int Add(const std::string& name, std::vector<int64_t> shape, ir::DType dt = ir::DType::F32) {
    ir::Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.dtype = dt;
    g_.tensors.push_back(std::move(t));
    return int(g_.tensors.size() - 1);
  }

  int AddWeight(const std::string& name, int64_t n, int64_t k, gguf::ConvertedWeight w) {
    const bool q4 = w.scheme == "q4gsw", q4m = w.scheme == "q4gmw";
    const int t = Add(name, {n, k}, q4 ? ir::DType::I4 : q4m ? ir::DType::U4 : ir::DType::I8);
    ir::Quant q;
    q.scheme = q4 ? ir::Scheme::Q4GSW : q4m ? ir::Scheme::Q4GMW : w.scheme == "q8gsw" ? ir::Scheme::Q8GSW : ir::Scheme::Q8CSW;
    q.mins = std::move(w.mins);
    q.group_size = w.group_size;
    q.scales = std::move(w.scales);
    g_.tensors[size_t(t)].quant = std::move(q);
    g_.tensors[size_t(t)].data = Own(std::move(w.data));
    return t;
  }

  // A 1-D f32 constant (norm weights, biases).
  Result<int> Vector(const std::string& name, int64_t n) {
    VKQC_ASSIGN_OR_RETURN(const TensorInfo* t, Need(name, {uint64_t(n)}));
    VKQC_ASSIGN_OR_RETURN(std::vector<float> v, gguf::Dequantize(f_, *t));
    const int id = Add(name, {n});
    g_.tensors[size_t(id)].data = Own(AsBytes(v));
    ++recipe_[std::string(gguf::TypeName(t->type)) + " -> f32"];
    return id;
  }

  // A linear weight [n][k]: exact, or quantized/re-quantized when the options say so.
  Result<int> Linear(const std::string& name, int64_t n, int64_t k) {
    VKQC_ASSIGN_OR_RETURN(const TensorInfo* t, Need(name, {uint64_t(k), uint64_t(n)}));
    return LinearFrom(*t, name, n, k);
  }

  Result<int> LinearFrom(const TensorInfo& t, const std::string& name, int64_t n, int64_t k) {
    std::string why;
    gguf::ConvertedWeight w = gguf::ConvertExact(f_, t, &why);
    if (!w.scheme.empty()) {
      ++recipe_[std::string(gguf::TypeName(t.type)) + " -> " + w.scheme + (w.group_size ? " g32" : "") + " (exact)"];
      return AddWeight(name, n, k, std::move(w));
    }
    const bool is_float = t.type == gguf::Type::F32 || t.type == gguf::Type::F16 || t.type == gguf::Type::BF16;
    std::string scheme;
    if (is_float) {
      if (o_.quantize.empty())
        return Fail("tensor '" + name + "' is " + gguf::TypeName(t.type) + " (float); vkqc's linear kernels take "
                    "int8 or int4 weights: pass --quantize q8 (int8 per output channel) or --quantize 8da4w (int4 "
                    "groups of 32), each with dynamic int8 activations; the error of each tensor is printed");
      scheme = o_.quantize == "q8" ? "q8csw" : "q4gsw";
    } else {
      if (o_.requantize.empty())
        return Fail("tensor '" + name + "' is " + gguf::TypeName(t.type) + ": " + why + ". Supported exactly: Q4_0, "
                    "Q8_0, Q4_1, Q4_K, F32/F16/BF16 with --quantize; pass --requantize q8csw or --requantize "
                    "q4gsw to convert " + gguf::TypeName(t.type) + " (readable: " + gguf::DequantizableTypes() +
                    ") with the error printed per tensor");
      scheme = o_.requantize;
    }
    if (scheme == "q4gsw" && k % 32 != 0) scheme = "q8csw";
    VKQC_ASSIGN_OR_RETURN(std::vector<float> v, gguf::Dequantize(f_, t));
    double err = 0, rms = 0;
    auto q = gguf::QuantizeFloat(v, n, k, scheme, 32, &err, &rms);
    if (!q.ok()) return Fail("tensor '" + name + "': " + q.error().message);
    w = std::move(*q);
    std::ostringstream line;
    line << name << ": " << gguf::TypeName(t.type) << " -> " << scheme << (scheme == "q4gsw" ? " g32" : "")
         << (is_float ? " (quantized)" : " (re-quantized)") << ", max |error| " << err << " (" << (rms > 0 ? err / rms : 0)
         << " of the weights' RMS " << rms << ")";
    Log(line.str());
    ++recipe_[std::string(gguf::TypeName(t.type)) + " -> " + scheme + (is_float ? " (quantized)" : " (re-quantized)")];
    return AddWeight(name, n, k, std::move(w));
  }

  // token_embd: q4gsw / q8csw when exact, else f32 exactly as ggml dequantizes it.
  Result<int> Embedding(const TensorInfo& t) {
    std::string why;
    gguf::ConvertedWeight w = gguf::ConvertExact(f_, t, &why);
    if (!w.scheme.empty() && w.scheme != "q4gmw") {  // embedding tables: f32, q8csw, q8gsw, q4gsw
      ++recipe_[std::string(gguf::TypeName(t.type)) + " -> " + w.scheme + " embedding (exact)"];
      return AddWeight(t.name, h_.vocab, h_.hidden, std::move(w));
    }
    VKQC_ASSIGN_OR_RETURN(std::vector<float> v, gguf::Dequantize(f_, t));
    const int id = Add(t.name, {h_.vocab, h_.hidden});
    g_.tensors[size_t(id)].data = Own(AsBytes(v));
    ++recipe_[std::string(gguf::TypeName(t.type)) + " -> f32 embedding (exact, widened)"];
    return id;
  }

  int Act(const std::string& name, int64_t width) { return Add(name, {ir::kSymbolicDim, width}); }

  ir::Op& Op(const std::string& name, ir::OpType type, std::vector<int> in, std::vector<int> out) {
    ir::Op op;
    op.name = name;
    op.type = type;
    op.inputs = std::move(in);
    op.outputs = std::move(out);
    g_.ops.push_back(std::move(op));
    return g_.ops.back();
  }

  void LinearOp(const std::string& name, int x, int w, int y, int bias = -1) {
    std::vector<int> in{x, w};
    if (bias >= 0) in.push_back(bias);
    Op(name, ir::OpType::Linear, in, {y}).linear.input_quant.scheme = ir::Scheme::DQ8CA;
  }

  // Llama 3's rope_freqs.weight: per-frequency divisors; accepted when they are Meta's scaling
  // with the parameters of Llama 3.1 / 3.2 (low 1, high 4, original context 8192).
  Status RopeScaling() {
    const TensorInfo* t = f_.FindTensor("rope_freqs.weight");
    if (!t) return {};
    const int64_t half = h_.head_dim / 2;
    if (t->dims != std::vector<uint64_t>{uint64_t(half)})
      return Fail("tensor 'rope_freqs.weight' has shape " + Dims(t->dims) + "; expected [" + std::to_string(half) + "]");
    VKQC_ASSIGN_OR_RETURN(std::vector<float> fac, gguf::Dequantize(f_, *t));
    double factor = 1;
    for (float v : fac) factor = std::max(factor, double(v));
    const double lo = f_.FloatOr(h_.arch + ".rope.scaling.low_freq_factor", 1.0);
    const double hi = f_.FloatOr(h_.arch + ".rope.scaling.high_freq_factor", 4.0);
    const double orig = f_.FloatOr(h_.arch + ".rope.scaling.original_context_length", 8192.0);
    for (int64_t i = 0; i < half; ++i) {
      const double freq = std::pow(h_.theta, -2.0 * double(i) / double(h_.head_dim));
      const double wavelen = 2 * M_PI / freq;
      double want;
      if (wavelen < orig / hi) want = 1;
      else if (wavelen > orig / lo) want = factor;
      else {
        const double smooth = (orig / wavelen - lo) / (hi - lo);
        want = 1.0 / ((1 - smooth) / factor + smooth);
      }
      if (std::fabs(fac[size_t(i)] - want) > 1e-3 * want)
        return Fail("rope_freqs.weight[" + std::to_string(i) + "] = " + std::to_string(fac[size_t(i)]) +
                    " is not Llama 3's frequency scaling (factor " + std::to_string(factor) + ", low " +
                    std::to_string(lo) + ", high " + std::to_string(hi) + ", original context " +
                    std::to_string(orig) + " give " + std::to_string(want) + "); other per-frequency factors are not "
                    "supported");
    }
    llama3_ = true;
    scale_ = {factor, lo, hi, orig};
    return {};
  }

  Status Build() {
    const int64_t C = h_.hidden, F = h_.ffn, Hq = h_.heads, Hkv = h_.kv_heads, D = h_.head_dim, V = h_.vocab;
    VKQC_TRY(RopeScaling());
    const int ids = Add("ids", {ir::kSymbolicDim}, ir::DType::I32);
    const int pos = Add("pos", {1}, ir::DType::I32);
    g_.inputs = {ids, pos};
    const TensorInfo* embt = f_.FindTensor("token_embd.weight");
    VKQC_ASSIGN_OR_RETURN(const int emb, Embedding(*embt));
    int x = Act("x0", C);
    Op("embed_tokens", ir::OpType::Embedding, {ids, emb}, {x});
    ir::RopeAttrs rope;
    rope.head_dim = int32_t(D);
    rope.theta = float(h_.theta);
    rope.interleaved = h_.interleaved;
    rope.max_positions = int32_t(max_context_);
    if (llama3_) {
      rope.llama3 = true;
      rope.factor = float(scale_[0]);
      rope.low_freq_factor = float(scale_[1]);
      rope.high_freq_factor = float(scale_[2]);
      rope.original_max_position = int32_t(scale_[3]);
    }
    for (int64_t l = 0; l < h_.layers; ++l) {
      ReportProgress(o_.progress, "converting weights", uint64_t(l), uint64_t(h_.layers) + 1);  // + the head
      const std::string p = "blk." + std::to_string(l) + ".";
      VKQC_ASSIGN_OR_RETURN(const int attn_norm, Vector(p + "attn_norm.weight", C));
      VKQC_ASSIGN_OR_RETURN(const int wq, Linear(p + "attn_q.weight", Hq * D, C));
      VKQC_ASSIGN_OR_RETURN(const int wk, Linear(p + "attn_k.weight", Hkv * D, C));
      VKQC_ASSIGN_OR_RETURN(const int wv, Linear(p + "attn_v.weight", Hkv * D, C));
      VKQC_ASSIGN_OR_RETURN(const int wo, Linear(p + "attn_output.weight", C, Hq * D));
      VKQC_ASSIGN_OR_RETURN(const int ffn_norm, Vector(p + "ffn_norm.weight", C));
      VKQC_ASSIGN_OR_RETURN(const int wg, Linear(p + "ffn_gate.weight", F, C));
      VKQC_ASSIGN_OR_RETURN(const int wu, Linear(p + "ffn_up.weight", F, C));
      VKQC_ASSIGN_OR_RETURN(const int wd, Linear(p + "ffn_down.weight", C, F));
      int bq = -1, bk = -1, bv = -1;
      if (h_.qkv_bias) {
        VKQC_ASSIGN_OR_RETURN(bq, Vector(p + "attn_q.bias", Hq * D));
        VKQC_ASSIGN_OR_RETURN(bk, Vector(p + "attn_k.bias", Hkv * D));
        VKQC_ASSIGN_OR_RETURN(bv, Vector(p + "attn_v.bias", Hkv * D));
      }
      const int kc = Add(p + "k_cache", {Hkv, max_context_, D}, ir::DType::F16);
      const int vc = Add(p + "v_cache", {Hkv, max_context_, D}, ir::DType::F16);
      g_.tensors[size_t(kc)].state = g_.tensors[size_t(vc)].state = true;
      const int h = Act(p + "attn_in", C);
      Op(p + "attn_norm", ir::OpType::RmsNorm, {x, attn_norm}, {h}).norm.eps = float(h_.eps);
      const int q = Act(p + "q", Hq * D), k = Act(p + "k", Hkv * D), v = Act(p + "v", Hkv * D);
      LinearOp(p + "attn_q", h, wq, q, bq);
      LinearOp(p + "attn_k", h, wk, k, bk);
      LinearOp(p + "attn_v", h, wv, v, bv);
      const int qr = Act(p + "q_rot", Hq * D), kr = Act(p + "k_rot", Hkv * D);
      Op(p + "rope_q", ir::OpType::Rope, {q, pos}, {qr}).rope = rope;
      Op(p + "rope_k", ir::OpType::Rope, {k, pos}, {kr}).rope = rope;
      const int at = Act(p + "attn", Hq * D);
      Op(p + "attention", ir::OpType::Attention, {qr, kr, v, kc, vc, pos}, {at}).attention = {
          int32_t(Hq), int32_t(Hkv), int32_t(D), 0.0f};
      const int o = Act(p + "o", C);
      LinearOp(p + "attn_output", at, wo, o);
      const int x1 = Act(p + "x_attn", C);
      Op(p + "attn_residual", ir::OpType::Add, {x, o}, {x1});
      const int h2 = Act(p + "ffn_in", C);
      Op(p + "ffn_norm", ir::OpType::RmsNorm, {x1, ffn_norm}, {h2}).norm.eps = float(h_.eps);
      const int gt = Act(p + "gate", F), up = Act(p + "up", F);
      LinearOp(p + "ffn_gate", h2, wg, gt);
      LinearOp(p + "ffn_up", h2, wu, up);
      const int sg = Act(p + "act", F), m = Act(p + "gated", F);
      Op(p + "silu", ir::OpType::Silu, {gt}, {sg});
      Op(p + "gated", ir::OpType::Mul, {sg, up}, {m});
      const int dn = Act(p + "down", C);
      LinearOp(p + "ffn_down", m, wd, dn);
      x = Act("x" + std::to_string(l + 1), C);
      Op(p + "ffn_residual", ir::OpType::Add, {x1, dn}, {x});
    }
    ReportProgress(o_.progress, "converting weights", uint64_t(h_.layers), uint64_t(h_.layers) + 1);
    VKQC_ASSIGN_OR_RETURN(const int out_norm, Vector("output_norm.weight", C));
    int head = -1;
    if (f_.FindTensor("output.weight")) {
      VKQC_ASSIGN_OR_RETURN(head, Linear("output.weight", V, C));
    } else if (g_.tensors[size_t(emb)].quant) {
      head = emb;  // tied: the lm_head reads the (int8/int4) embedding table itself
      ++recipe_["tied output (the embedding table)"];
    } else {  // tied to an f32 table: the lm_head gets its own copy in a linear weight scheme
      VKQC_ASSIGN_OR_RETURN(head, LinearFrom(*embt, "output.weight", V, C));
    }
    const int xf = Act("final_norm", C);
    Op("output_norm", ir::OpType::RmsNorm, {x, out_norm}, {xf}).norm.eps = float(h_.eps);
    const int logits = Act("logits", V);
    LinearOp("output", xf, head, logits);
    ReportProgress(o_.progress, "converting weights", uint64_t(h_.layers) + 1, uint64_t(h_.layers) + 1);
    const int next = Add("next", {ir::kSymbolicDim}, ir::DType::I32);
    Op("argmax", ir::OpType::Argmax, {logits}, {next});
    g_.outputs = {logits, next};
    return {};
  }

  Status AttachTokenizer() {
    tok::TokenizerData d;
    if (!f_.Find("tokenizer.ggml.model")) {
      Log("no tokenizer in the file (tokenizer.ggml.model is missing): generate will need --prompt-ids");
      return {};
    }
    VKQC_ASSIGN_OR_RETURN(d.model, f_.String("tokenizer.ggml.model"));
    d.pre = f_.StringOr("tokenizer.ggml.pre", "");
    const gguf::Value* toks = f_.Find("tokenizer.ggml.tokens");
    if (!toks || !toks->is_array() || toks->elem != gguf::ValueType::STRING)
      return Fail("tokenizer.ggml.tokens is missing or not an array of strings");
    d.tokens = toks->strings;
    if (const gguf::Value* s = f_.Find("tokenizer.ggml.scores"))
      for (double v : s->floats) d.scores.push_back(float(v));
    if (const gguf::Value* t = f_.Find("tokenizer.ggml.token_type"))
      for (int64_t v : t->ints) d.token_types.push_back(int32_t(v));
    if (const gguf::Value* m = f_.Find("tokenizer.ggml.merges")) d.merges = m->strings;
    d.bos = int32_t(f_.IntOr("tokenizer.ggml.bos_token_id", -1));
    d.eos = int32_t(f_.IntOr("tokenizer.ggml.eos_token_id", -1));
    d.unk = int32_t(f_.IntOr("tokenizer.ggml.unknown_token_id", -1));
    d.pad = int32_t(f_.IntOr("tokenizer.ggml.padding_token_id", -1));
    d.add_bos = f_.IntOr("tokenizer.ggml.add_bos_token", d.model == "llama" ? 1 : 0) != 0;
    d.add_eos = f_.IntOr("tokenizer.ggml.add_eos_token", 0) != 0;
    d.add_space_prefix = f_.IntOr("tokenizer.ggml.add_space_prefix", d.model == "llama" ? 1 : 0) != 0;
    d.chat_template = f_.StringOr("tokenizer.chat_template", "");
    auto t = tok::Tokenizer::Create(d);
    if (!t.ok()) return Fail("tokenizer: " + t.error().message);
    if (int64_t(d.tokens.size()) > h_.vocab)
      return Fail("the tokenizer has " + std::to_string(d.tokens.size()) + " tokens but token_embd.weight only " +
                  std::to_string(h_.vocab) + " rows");
    g_.metadata[kMetaTokenizer] = tok::Serialize(d);
    Log("tokenizer: " + d.model + (d.pre.empty() ? "" : " (" + d.pre + ")") + ", " + std::to_string(d.tokens.size()) +
        " tokens" + (d.chat_template.empty() ? "" : ", chat template"));
    return {};
  }

  const gguf::File& f_;
  const GgufImportOptions& o_;
  Hyper h_;
  int64_t max_context_ = 0;
  bool llama3_ = false;
  std::array<double, 4> scale_{1, 1, 4, 8192};
  std::map<std::string, int> recipe_;
  ir::Graph g_;
};

}  // namespace

const char* GgufArchitectures() { return "llama (Llama 2/3, TinyLlama, SmolLM, Mistral without sliding window), qwen2"; }

Result<ir::Graph> ImportGguf(const std::string& path, const GgufImportOptions& options) {
  if (!options.quantize.empty() && options.quantize != "q8" && options.quantize != "8da4w")
    return UserError("--quantize must be q8 or 8da4w, not '" + options.quantize + "'");
  if (!options.requantize.empty() && options.requantize != "q8csw" && options.requantize != "q4gsw")
    return UserError("--requantize must be q8csw or q4gsw, not '" + options.requantize + "'");
  VKQC_ASSIGN_OR_RETURN(std::unique_ptr<gguf::File> f, gguf::File::Open(path));
  Importer im(*f, options);
  return im.Run();
}

}  // namespace vkqc
