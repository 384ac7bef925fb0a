// `vkqc generate`: token generation with a stateful decoder bundle through the C API alone
// (reset, prefill in chunks of the compiled token counts, then one tokens=1 run per new token).
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "compiler/common/result.h"
#include "compiler/tokenizer/tokenizer.h"
#include "tools/vkqc/cli.h"
#include "vkqc/vkqc.h"

namespace vkqc {

struct GenerateOptions {
  std::vector<int32_t> prompt;
  int64_t max_new_tokens = 32;
  double temperature = 0;  // 0: greedy
  int64_t top_k = 0;       // 0: all
  double top_p = 1.0;
  uint64_t seed = 1;
  int64_t eos = -1;        // stop after generating this id (-1: never)
  bool quiet = false;      // only the token line
  // Greedy tokens from the argmax output: the runtime's device-side loop (vkqc_model_decode_greedy)
  // with this many runs queued at once; 0: a run, a 4-byte read and a write per token from here.
  uint32_t queue_depth = 2;
  // Runs the tokens=1 program for this long before generating (then resets the state), so that the
  // speeds printed are those of a GPU at its working clocks: an H200 left idle runs its first
  // ~0.2-0.3 s of work about 4x slower (bench/RESULTS.md 2026-11-28 session 8).
  int64_t warmup_ms = 0;
  const tok::Tokenizer* tokenizer = nullptr;  // prints the text as it is generated, and at the end
};

struct GenerateResult {
  std::vector<int32_t> tokens;  // generated ids (not the prompt)
  double prefill_gpu_ms = 0, prefill_wall_ms = 0;
  double decode_gpu_ms = 0, decode_wall_ms = 0;  // totals over the decode steps
  int64_t decode_steps = 0;
  double read_ms = 0, choose_ms = 0;  // sampling on the host: the logits row's read, the choice
  int64_t samples = 0;
};

// The next token from one row of logits: the first maximum where temperature <= 0, else a draw
// from softmax(logits / temperature) over the top_k largest (0: all), cut to the smallest prefix
// (by logit, then index) holding top_p of their mass. Orders only what top-k and top-p need
// (a full sort of 128k logits took ~10 ms).
int32_t SampleToken(const float* logits, int64_t vocab, double temperature, int64_t top_k, double top_p,
                    std::mt19937_64& rng);

// Runs the generation on a loaded model; prints progress and speeds unless quiet.
Result<GenerateResult> Generate(vkqc_model model, const GenerateOptions& o);

// The tokenizer the bundle carries (metadata "tokenizer", written by `vkqc import model.gguf`).
Result<tok::Tokenizer> BundleTokenizer(vkqc_model model);

// `vkqc generate OUT.vkqb (--prompt TEXT [--chat] | --prompt-ids ID,...) ...`
Status CmdGenerate(const Args& a);

}  // namespace vkqc
