#include "tools/vkqc/generate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>

namespace vkqc {
namespace {

// What generation needs of a program: its token-id input, and its greedy-token and logits outputs.
struct ProgramIo {
  uint32_t program = 0, tokens = 0;
  int32_t ids = -1;      // input index: i32 [tokens]
  int32_t next = -1;     // output index: i32 [tokens] (argmax)
  int32_t logits = -1;   // output index: f32 [tokens, vocab]
  int64_t vocab = 0;
};

Result<ProgramIo> Describe(vkqc_model m, uint32_t p) {
  ProgramIo io;
  io.program = p;
  io.tokens = vkqc_model_program_tokens(m, p);
  const int32_t pos = vkqc_model_position_input(m, p);
  for (uint32_t i = 0; i < vkqc_model_input_count(m, p); ++i) {
    vkqc_tensor_info t;
    (void)vkqc_model_input_info(m, p, i, &t);
    if (int32_t(i) == pos) continue;
    if (t.dtype != VKQC_I32 || t.rank != 1 || io.ids >= 0)
      return UserError(std::string("program tokens=") + std::to_string(io.tokens) + ": input '" + t.name +
                       "' is not the one i32 [tokens] token-id input generation feeds (a decoder bundle takes the "
                       "token ids and the runtime-owned position)");
    io.ids = int32_t(i);
  }
  for (uint32_t i = 0; i < vkqc_model_output_count(m, p); ++i) {
    vkqc_tensor_info t;
    (void)vkqc_model_output_info(m, p, i, &t);
    if (t.dtype == VKQC_I32 && t.rank == 1 && io.next < 0) io.next = int32_t(i);
    if (t.dtype == VKQC_F32 && t.rank == 2 && io.logits < 0) {
      io.logits = int32_t(i);
      io.vocab = t.shape[1];
    }
  }
  if (io.ids < 0) return UserError("the bundle has no i32 [tokens] token-id input");
  if (io.next < 0 && io.logits < 0)
    return UserError("the bundle has neither an i32 [tokens] next-token output (argmax) nor f32 [tokens, vocab] logits");
  return io;
}

vkqc_status Run(vkqc_model m, uint32_t p, double* gpu_ns) {
  // Timed runs do not advance the position: advance it here.
  const uint32_t at = vkqc_model_position(m);
  vkqc_status st = vkqc_model_run_timed(m, p, nullptr, gpu_ns);  // whole-buffer timestamps only
  if (st == VKQC_ERROR_UNSUPPORTED_DEVICE) {  // no timestamps on this queue: plain runs
    *gpu_ns = 0;
    return vkqc_model_run(m, p);
  }
  if (st != VKQC_OK) return st;
  return vkqc_model_set_position(m, at + std::max<uint32_t>(vkqc_model_program_tokens(m, p), 1));
}

}  // namespace

int32_t SampleToken(const float* logits, int64_t vocab, double temperature, int64_t top_k, double top_p,
                    std::mt19937_64& rng) {
  if (temperature <= 0) return int32_t(std::max_element(logits, logits + vocab) - logits);
  if ((top_k <= 0 || top_k >= vocab) && top_p >= 1.0) {
    // Nothing to order: one pass of float exponentials into a cumulative sum, one draw (7x faster
    // than the ordered path's double exponentials and std::discrete_distribution over 128k logits).
    const float top = *std::max_element(logits, logits + vocab), inv = float(1.0 / temperature);
    std::vector<double> cum(static_cast<size_t>(vocab));
    double sum = 0;
    for (int64_t i = 0; i < vocab; ++i) cum[size_t(i)] = sum += double(std::exp((logits[i] - top) * inv));
    const double u = std::uniform_real_distribution<double>(0.0, sum)(rng);
    return int32_t(std::upper_bound(cum.begin(), cum.end(), u) - cum.begin());
  }
  auto before = [logits](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
  std::vector<int32_t> c;
  if (top_k > 0 && top_k < vocab) {  // the k largest, then in order
    // One pass keeping the k best in a heap whose top is the worst of them: a later logit enters
    // only when larger (an equal one has a larger index); most are rejected by one comparison.
    c.assign(size_t(top_k), 0);
    std::iota(c.begin(), c.end(), 0);
    std::make_heap(c.begin(), c.end(), before);
    for (int32_t i = int32_t(top_k); i < int32_t(vocab); ++i)
      if (logits[i] > logits[c.front()]) {
        std::pop_heap(c.begin(), c.end(), before);
        c.back() = i;
        std::push_heap(c.begin(), c.end(), before);
      }
    std::sort(c.begin(), c.end(), before);
  } else {
    c.resize(static_cast<size_t>(vocab));
    std::iota(c.begin(), c.end(), 0);
  }
  const float top = logits[*std::min_element(c.begin(), c.end(), before)];
  std::vector<double> p(c.size());
  double sum = 0;
  for (size_t i = 0; i < c.size(); ++i) sum += p[i] = std::exp((double(logits[c[i]]) - top) / temperature);
  size_t keep = c.size();
  if (top_p < 1.0) {
    // The smallest prefix in order holding top_p of the mass: order grows until it holds it.
    const bool sorted = top_k > 0 && top_k < vocab;
    size_t done = sorted ? c.size() : 0, n = 0;
    double acc = 0;
    while (n < c.size() && acc < top_p * sum) {
      if (n == done) {
        const size_t more = std::min(c.size(), std::max<size_t>(256, 4 * done));
        std::partial_sort(c.begin() + long(done), c.begin() + long(more), c.end(), before);
        for (size_t i = done; i < more; ++i) p[i] = std::exp((double(logits[c[i]]) - top) / temperature);
        done = more;
      }
      acc += p[n++];
    }
    keep = std::max<size_t>(n, 1);
    p.resize(keep);
  }
  std::discrete_distribution<size_t> d(p.begin(), p.end());
  return c[d(rng)];
}

Result<GenerateResult> Generate(vkqc_model m, const GenerateOptions& o) {
  if (vkqc_model_max_context(m) == 0)
    return UserError("the bundle has no KV cache: compile a decoder graph (attention ops with state caches)");
  std::vector<ProgramIo> progs;
  for (uint32_t p = 0; p < vkqc_model_program_count(m); ++p) {
    VKQC_ASSIGN_OR_RETURN(progs.emplace_back(), Describe(m, p));
  }
  std::sort(progs.begin(), progs.end(), [](auto& a, auto& b) { return a.tokens > b.tokens; });
  const ProgramIo& step = progs.back();
  if (step.tokens != 1) return UserError("the bundle has no tokens=1 program for decoding: compile with --tokens 1,...");
  if (o.prompt.empty()) return UserError("the prompt is empty: give at least one token id");
  if (o.max_new_tokens < 0) return UserError("--max-new-tokens must be >= 0");
  if (o.temperature > 0 && step.logits < 0)
    return UserError("sampling needs the logits output; this bundle only has the argmax token (use --temperature 0)");
  const int64_t vocab = step.vocab;
  for (int32_t id : o.prompt)
    if (id < 0 || (vocab > 0 && id >= vocab))
      return UserError("prompt token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                       std::to_string(vocab) + ")");
  const uint64_t need = o.prompt.size() + uint64_t(o.max_new_tokens);
  if (need > vkqc_model_max_context(m) + 1ull)  // the last generated token is never fed back
    return UserError("the prompt (" + std::to_string(o.prompt.size()) + " tokens) and --max-new-tokens " +
                     std::to_string(o.max_new_tokens) + " need a context of " + std::to_string(need - 1) +
                     ", the bundle holds " + std::to_string(vkqc_model_max_context(m)));
  if (o.warmup_ms > 0) {
    const int32_t zero = 0;
    if (vkqc_model_write_input(m, step.program, uint32_t(step.ids), &zero, 4) != VKQC_OK)
      return UserError(vkqc_last_error());
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(o.warmup_ms);
    while (std::chrono::steady_clock::now() < until)
      if (vkqc_model_set_position(m, 0) != VKQC_OK || vkqc_model_run(m, step.program) != VKQC_OK)
        return UserError(vkqc_last_error());
  }
  if (vkqc_model_reset_state(m) != VKQC_OK) return UserError(vkqc_last_error());

  GenerateResult r;
  std::mt19937_64 rng(o.seed);
  std::vector<float> row;
  // The next token from the last run's last row.
  auto next_token = [&](const ProgramIo& io) -> Result<int32_t> {
    if (o.temperature <= 0 && io.next >= 0) {
      std::vector<int32_t> ids(io.tokens);
      if (vkqc_model_read_output(m, io.program, uint32_t(io.next), ids.data(), ids.size() * 4) != VKQC_OK)
        return UserError(vkqc_last_error());
      return ids.back();
    }
    // The last row only (a prefill's logits are tokens x vocab floats), through cached host memory.
    const auto t0 = std::chrono::steady_clock::now();
    row.resize(size_t(io.vocab));
    if (vkqc_model_read_output_range(m, io.program, uint32_t(io.logits), uint64_t(io.tokens - 1) * row.size() * 4,
                                     row.data(), row.size() * 4) != VKQC_OK)
      return UserError(vkqc_last_error());
    const auto t1 = std::chrono::steady_clock::now();
    const int32_t t = SampleToken(row.data(), io.vocab, o.temperature, o.top_k, o.top_p, rng);
    r.read_ms += std::chrono::duration<double, std::milli>(t1 - t0).count();
    r.choose_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
    ++r.samples;
    return t;
  };
  using Clock = std::chrono::steady_clock;
  // Prefill in chunks: the largest compiled size that fits what is left.
  size_t done = 0;
  int32_t next = 0;
  std::string chunks;
  const auto t0 = Clock::now();
  while (done < o.prompt.size()) {
    const size_t left = o.prompt.size() - done;
    const ProgramIo* io = nullptr;
    for (const ProgramIo& p : progs)
      if (p.tokens <= left) {
        io = &p;
        break;
      }
    if (vkqc_model_write_input(m, io->program, uint32_t(io->ids), o.prompt.data() + done, io->tokens * 4) != VKQC_OK)
      return UserError(vkqc_last_error());
    double ns = 0;
    if (Run(m, io->program, &ns) != VKQC_OK) return UserError(vkqc_last_error());
    r.prefill_gpu_ms += ns / 1e6;
    if (!chunks.empty()) chunks += '+';
    chunks += std::to_string(io->tokens);
    done += io->tokens;
    if (done == o.prompt.size()) {
    VKQC_ASSIGN_OR_RETURN(next, next_token(*io));
  }
  }
  r.prefill_wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  const auto t1 = Clock::now();
  const bool on_device = o.queue_depth > 0 && o.temperature <= 0 && step.next >= 0;
  if (on_device && o.max_new_tokens > 0) {
    // The first new token came from the prefill; the decode runs make the rest, each feeding its
    // argmax to the next on the GPU.
    r.tokens.push_back(next);
    if (next != o.eos && o.max_new_tokens > 1) {
      vkqc_greedy_options go;
      vkqc_greedy_options_init(&go);
      go.program = step.program;
      go.token_input = uint32_t(step.ids);
      go.token_output = uint32_t(step.next);
      go.depth = o.queue_depth;
      go.stop_token = o.eos >= 0 && o.eos <= INT32_MAX ? int32_t(o.eos) : -1;
      std::vector<int32_t> got(size_t(o.max_new_tokens - 1));
      uint32_t n = 0;
      double ns = 0;
      if (vkqc_model_decode_greedy(m, &go, next, uint32_t(got.size()), got.data(), &n, &ns) != VKQC_OK)
        return UserError(vkqc_last_error());
      r.tokens.insert(r.tokens.end(), got.begin(), got.begin() + n);
      r.decode_steps = n;
      r.decode_gpu_ms = ns / 1e6;
    }
  }
  while (!on_device && int64_t(r.tokens.size()) < o.max_new_tokens) {
    r.tokens.push_back(next);
    if (next == o.eos || int64_t(r.tokens.size()) == o.max_new_tokens) break;
    if (vkqc_model_write_input(m, step.program, uint32_t(step.ids), &next, 4) != VKQC_OK)
      return UserError(vkqc_last_error());
    double ns = 0;
    if (Run(m, step.program, &ns) != VKQC_OK) return UserError(vkqc_last_error());
    r.decode_gpu_ms += ns / 1e6;
    ++r.decode_steps;
    VKQC_ASSIGN_OR_RETURN(next, next_token(step));
  }
  r.decode_wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
  if (!o.quiet) {
    std::printf("prompt: %zu tokens, prefill in chunks %s\n", o.prompt.size(), chunks.c_str());
    std::printf("prefill: %.3f ms GPU (%.1f tokens/s), %.3f ms wall (%.1f tokens/s)\n", r.prefill_gpu_ms,
                r.prefill_gpu_ms > 0 ? 1e3 * double(o.prompt.size()) / r.prefill_gpu_ms : 0.0, r.prefill_wall_ms,
                1e3 * double(o.prompt.size()) / r.prefill_wall_ms);
    if (r.decode_steps > 0)
      std::printf("decode: %lld steps, %.3f ms GPU per token (%.1f tokens/s), %.3f ms wall per token (%.1f tokens/s); %s\n",
                  (long long)r.decode_steps, r.decode_gpu_ms / double(r.decode_steps),
                  r.decode_gpu_ms > 0 ? 1e3 * double(r.decode_steps) / r.decode_gpu_ms : 0.0,
                  r.decode_wall_ms / double(r.decode_steps), 1e3 * double(r.decode_steps) / r.decode_wall_ms,
                  on_device ? ("tokens fed back on the GPU, " + std::to_string(o.queue_depth) + " runs queued").c_str()
                            : "a run and a read per token");
  }
  if (!o.quiet && r.samples > 0)
    std::printf("sampling on the host: %.3f ms per token reading the logits row, %.3f ms choosing\n",
                r.read_ms / double(r.samples), r.choose_ms / double(r.samples));
  std::string line;
  for (int32_t t : r.tokens) line += (line.empty() ? "" : ",") + std::to_string(t);
  std::printf("tokens: %s\n", line.c_str());
  if (o.tokenizer) std::printf("text: %s\n", o.tokenizer->Decode(r.tokens).c_str());
  return r;
}

Result<tok::Tokenizer> BundleTokenizer(vkqc_model m) {
  const void* p = nullptr;
  size_t n = 0;
  if (vkqc_model_metadata(m, "tokenizer", &p, &n) != VKQC_OK)
    return UserError("the bundle carries no tokenizer (bundles compiled from a GGUF file with tokenizer metadata "
                     "do); give the prompt as token ids with --prompt-ids");
  VKQC_ASSIGN_OR_RETURN(tok::TokenizerData d, tok::Deserialize(static_cast<const uint8_t*>(p), n));
  return tok::Tokenizer::Create(std::move(d));
}

Status CmdGenerate(const Args& a) {
  VKQC_TRY(CheckKnown(a, {"--prompt-ids", "--prompt", "--chat", "--ignore-eos", "--max-new-tokens", "--position",
                          "--temperature", "--top-k", "--top-p", "--seed", "--eos", "--queue-depth", "--warmup-ms", "--device", "--validation",
                          "--trusted-key", "--max-weight-buffer-bytes"}));
  if (a.pos.size() != 1 || a.Has("--prompt-ids") == a.Has("--prompt"))
    return UserError("usage: vkqc generate OUT.vkqb (--prompt TEXT [--chat] | --prompt-ids ID[,ID...]) "
                     "[--max-new-tokens N]");
  if (a.Has("--chat") && !a.Has("--prompt")) return UserError("--chat applies to --prompt TEXT");
  GenerateOptions o;
  if (a.Has("--prompt-ids")) {
    const std::string ids = a.Get("--prompt-ids");
    size_t start = 0;
    while (start <= ids.size()) {
      const size_t comma = std::min(ids.find(',', start), ids.size());
      VKQC_ASSIGN_OR_RETURN(int64_t id, ParseInt(ids.substr(start, comma - start), "--prompt-ids"));
      if (id < 0 || id > INT32_MAX) return UserError("--prompt-ids: token id " + std::to_string(id) + " is out of range");
      o.prompt.push_back(int32_t(id));
      start = comma + 1;
    }
  }
  if (a.Has("--max-new-tokens")) {
    VKQC_ASSIGN_OR_RETURN(o.max_new_tokens, ParseInt(a.Get("--max-new-tokens"), "--max-new-tokens"));
  }
  if (a.Has("--temperature")) {
    VKQC_ASSIGN_OR_RETURN(o.temperature, ParseDouble(a.Get("--temperature"), "--temperature"));
  }
  if (a.Has("--top-k")) {
    VKQC_ASSIGN_OR_RETURN(o.top_k, ParseInt(a.Get("--top-k"), "--top-k"));
  }
  if (a.Has("--top-p")) {
    VKQC_ASSIGN_OR_RETURN(o.top_p, ParseDouble(a.Get("--top-p"), "--top-p"));
  }
  if (a.Has("--eos")) {
    VKQC_ASSIGN_OR_RETURN(o.eos, ParseInt(a.Get("--eos"), "--eos"));
  }
  if (a.Has("--queue-depth")) {
    VKQC_ASSIGN_OR_RETURN(int64_t d, ParseInt(a.Get("--queue-depth"), "--queue-depth"));
    if (d < 0 || d > 4)
      return UserError("--queue-depth must be 0 (a run and a read per token) or 1-4 (runs queued with the token fed back on the GPU)");
    o.queue_depth = uint32_t(d);
  }
  if (a.Has("--warmup-ms")) {
    VKQC_ASSIGN_OR_RETURN(o.warmup_ms, ParseInt(a.Get("--warmup-ms"), "--warmup-ms"));
    if (o.warmup_ms < 0 || o.warmup_ms > 60000) return UserError("--warmup-ms must be in 0..60000");
  }
  if (a.Has("--seed")) {
    VKQC_ASSIGN_OR_RETURN(int64_t s, ParseInt(a.Get("--seed"), "--seed"));
    o.seed = uint64_t(s);
  }
  if (o.temperature < 0 || !std::isfinite(o.temperature)) return UserError("--temperature must be >= 0");
  if (o.top_k < 0) return UserError("--top-k must be >= 0 (0: all tokens)");
  if (!(o.top_p > 0 && o.top_p <= 1)) return UserError("--top-p must be in (0, 1]");
  Runtime rt;
  VKQC_TRY(rt.Open(a, a.pos[0], false));
  std::optional<tok::Tokenizer> tokenizer;
  if (a.Has("--prompt")) {
    VKQC_ASSIGN_OR_RETURN(tokenizer, BundleTokenizer(rt.model));
    std::string text = a.Get("--prompt");
    if (a.Has("--chat")) {
      VKQC_ASSIGN_OR_RETURN(text, tok::ApplyChatTemplate(tokenizer->data(), {{"user", text}}, true));
    }
    o.prompt = tokenizer->Encode(text, true, a.Has("--chat"));
    std::string ids;
    for (int32_t t : o.prompt) ids += (ids.empty() ? "" : ",") + std::to_string(t);
    std::printf("prompt ids: %s\n", ids.c_str());
    o.tokenizer = &*tokenizer;
    if (!a.Has("--eos") && !a.Has("--ignore-eos")) o.eos = tokenizer->data().eos;
  } else if (auto t = BundleTokenizer(rt.model); t.ok()) {  // ids given: still print the text
    tokenizer = std::move(*t);
    o.tokenizer = &*tokenizer;
  }
  VKQC_ASSIGN_OR_RETURN(GenerateResult r, Generate(rt.model, o));
  (void)r;
  VKQC_TRY(rt.vlog.Verdict());
  return {};
}

}  // namespace vkqc
