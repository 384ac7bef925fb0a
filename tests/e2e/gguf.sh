# GGUF import end to end on lavapipe: a tiny Llama GGUF written by examples/llama/make_gguf.py
# (Q4_0 projections with llama.cpp's Q/K row permutation, Q8_0 output, F32 norms, a
# SentencePiece-style tokenizer) is imported, compiled and generates from a text prompt; the
# prompt's token ids must equal an independent Python SentencePiece-BPE encoder's, and the 32
# generated tokens the numpy decoder's (tests/e2e/llama_reference.py) on the same model written as
# safetensors. Float weights need --quantize, and every documented bad file is refused clearly.
source "$(dirname "$0")/common.bash"

PY=""
for p in /usr/bin/python3 python3; do
  if "$p" -c "import numpy" 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || { echo "FAIL numpy is missing (scripts/setup.sh installs python3-numpy)"; exit 1; }
PROMPT="The capital of France is"
M="$WORK/tiny"
"$PY" "$SRC/examples/llama/make_gguf.py" "$M" >/dev/null || { fail "make_gguf.py"; finish; }

expect_writes "import model.gguf" "$WORK/tiny.vkqg" import "$M/model.gguf" -o "$WORK/tiny.vkqg"
vk inspect "$WORK/tiny.vkqg"
if [ "$RC" -eq 0 ] && out_has "model: llama: 2 layers" && out_has "tokenizer: llama, 512 tokens" &&
   out_has "14 x Q4_0 -> q4gsw g32 (exact)" && out_has "1 x Q8_0 -> q8csw (exact)" &&
   out_has "blk.0.attn_q.weight" && out_has "q4gsw g32"; then
  ok "inspect shows the architecture, the tokenizer and the tensor formats"
else
  fail "inspect model.vkqg" "$(last_run_report)"
fi

# The integer path (int8 dot) as the numpy decoder computes it; compiled from the .gguf directly.
B="$WORK/tiny.vkqb"
expect_writes "compile model.gguf directly" "$B" compile "$M/model.gguf" --target lavapipe --tokens 1,4 --force-accum dot -o "$B"
vk generate "$B" --prompt "$PROMPT" --max-new-tokens 32 --ignore-eos --validation
ids=$(grep '^prompt ids:' "$OUT_FILE" | sed 's/^prompt ids: //')
got=$(grep '^tokens:' "$OUT_FILE")
if [ "$RC" -eq 0 ] && ! crashed && [ -n "$ids" ] && out_has "text: " && out_has "decode: 31 steps"; then
  ok "generate --prompt prints the prompt ids, the text and the speeds"
else
  fail "generate --prompt" "$(last_run_report)"
fi

# An independent SentencePiece-BPE encoder over the same vocabulary (highest-score merge first,
# leftmost on ties; characters outside the vocabulary as <0xXX> byte tokens; BOS first).
want_ids=$("$PY" - "$M/vocab.json" "$PROMPT" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
pieces, scores, types = v["pieces"], v["scores"], v["types"]
normal = {p: i for i, p in enumerate(pieces) if types[i] == 1}
syms = list("\u2581" + sys.argv[2].replace(" ", "\u2581"))
while True:
    best = None
    for i in range(len(syms) - 1):
        c = syms[i] + syms[i + 1]
        if c in normal and (best is None or scores[normal[c]] > scores[normal[best[1]]]):
            best = (i, c)
    if best is None:
        break
    syms[best[0]:best[0] + 2] = [best[1]]
ids = [1]
for s in syms:
    if s in normal:
        ids.append(normal[s])
    else:
        ids += [pieces.index("<0x%02X>" % b) for b in s.encode("utf-8")]
print(",".join(map(str, ids)))
PY
)
if [ -n "$ids" ] && [ "$ids" = "$want_ids" ]; then
  ok "prompt ids = an independent SentencePiece-BPE encoder's ($ids)"
else
  fail "prompt ids" "vkqc:   $ids" "python: $want_ids"
fi

want=$("$PY" "$SRC/tests/e2e/llama_reference.py" "$M/ref" --prompt-ids "$want_ids" --max-new-tokens 32 --chunks 4,1)
if [ -n "$got" ] && [ "$got" = "$(echo "$want" | grep '^tokens:')" ]; then
  ok "32 greedy tokens from the GGUF = the numpy decoder's on the original weights ($(echo "$want" | grep margin))"
else
  fail "GGUF generation = numpy decoder" "vkqc:  $got" "numpy: $want"
fi

# The other exact formats, each the same function as the numpy decoder's weights: Q8_0 (a scale per
# block of 32: q8gsw weights and embedding), Q4_1 and Q4_K (a scale and a minimum per group of 32:
# q4gmw; their embedding tables become f32 holding ggml's dequantized values).
declare -A RECIPE=([q8_0]="14 x Q8_0 -> q8gsw g32 (exact)" [q4_1]="14 x Q4_1 -> q4gmw g32 (exact)"
                   [q4_k]="14 x Q4_K -> q4gmw g32 (exact)")
for ty in q8_0 q4_1 q4_k; do
  "$PY" "$SRC/examples/llama/make_gguf.py" "$WORK/$ty" --type "$ty" >/dev/null
  vk inspect "$WORK/$ty/model.gguf"
  if [ "$RC" -eq 0 ] && out_has "${RECIPE[$ty]}"; then
    ok "${ty^^} imports exactly: ${RECIPE[$ty]}"
  else
    fail "${ty^^} import" "$(last_run_report)"
  fi
  expect_writes "compile the ${ty^^} model" "$WORK/$ty.vkqb" compile "$WORK/$ty/model.gguf" --target lavapipe --tokens 1,4 --force-accum dot -o "$WORK/$ty.vkqb"
  vk generate "$WORK/$ty.vkqb" --prompt "$PROMPT" --max-new-tokens 32 --ignore-eos --validation
  wantt=$("$PY" "$SRC/tests/e2e/llama_reference.py" "$WORK/$ty/ref" --prompt-ids "$want_ids" --max-new-tokens 32 --chunks 4,1)
  if [ "$RC" -eq 0 ] && [ "$(grep '^tokens:' "$OUT_FILE")" = "$(echo "$wantt" | grep '^tokens:')" ]; then
    ok "32 greedy tokens from the ${ty^^} GGUF = the numpy decoder's"
  else
    fail "${ty^^} GGUF generation = numpy decoder" "numpy: $wantt" "$(last_run_report)"
  fi
done
vk inspect "$WORK/q8_0/model.gguf"
out_has "Q8_0 -> q8gsw embedding (exact)" && ok "a Q8_0 embedding table stays q8gsw" || fail "Q8_0 embedding" "$(last_run_report)"

# qwen2: Q/K/V biases, rotation of halves, Q and K rows in their original order, a byte-level BPE
# tokenizer (pre-tokenizer qwen2). Zero biases: the numpy decoder's function (same tokens); random
# biases: the device against vkqc's CPU reference of the imported graph.
"$PY" "$SRC/examples/llama/make_gguf.py" "$WORK/qwen2" --arch qwen2 >/dev/null
expect_writes "compile the qwen2 GGUF" "$WORK/qwen2.vkqb" compile "$WORK/qwen2/model.gguf" --target lavapipe --tokens 1,4 --force-accum dot -o "$WORK/qwen2.vkqb"
vk generate "$WORK/qwen2.vkqb" --prompt "$PROMPT" --max-new-tokens 32 --ignore-eos --validation
qids=$(grep '^prompt ids:' "$OUT_FILE" | sed 's/^prompt ids: //')
qgot=$(grep '^tokens:' "$OUT_FILE")
# An independent byte-level BPE encoder: GPT-2's byte alphabet, words split as qwen2's pattern does for
# ASCII text (letters with one leading non-letter, single digits, other runs, spaces), merges by rank.
qwant_ids=$("$PY" - "$WORK/qwen2/vocab.json" "$PROMPT" <<'PY'
import json, re, sys
v = json.load(open(sys.argv[1]))
tokens, merges = v["pieces"], v["merges"]
rank = {tuple(m.split(" ")): i for i, m in enumerate(merges)}
keep = list(range(33, 127)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
b2u, extra = {}, 0
for b in range(256):
    if b in keep:
        b2u[b] = chr(b)
    else:
        b2u[b] = chr(256 + extra); extra += 1
ids = []
for word in re.findall(r"[^\r\nA-Za-z0-9]?[A-Za-z]+|[0-9]| ?[^\sA-Za-z0-9]+[\r\n]*|\s+", sys.argv[2]):
    syms = [b2u[b] for b in word.encode("utf-8")]
    while len(syms) > 1:
        best = min(range(len(syms) - 1), key=lambda i: rank.get((syms[i], syms[i + 1]), 1 << 30))
        if (syms[best], syms[best + 1]) not in rank:
            break
        syms[best:best + 2] = [syms[best] + syms[best + 1]]
    ids += [tokens.index(s) for s in syms]
print(",".join(map(str, ids)))
PY
)
if [ -n "$qids" ] && [ "$qids" = "$qwant_ids" ]; then
  ok "qwen2 prompt ids = an independent byte-level BPE encoder's ($qids)"
else
  fail "qwen2 prompt ids" "vkqc:   $qids" "python: $qwant_ids"
fi
qwant=$("$PY" "$SRC/tests/e2e/llama_reference.py" "$WORK/qwen2/ref" --prompt-ids "$qwant_ids" --max-new-tokens 32 --chunks 4,1)
if [ -n "$qgot" ] && [ "$qgot" = "$(echo "$qwant" | grep '^tokens:')" ]; then
  ok "32 greedy tokens from the qwen2 GGUF = the numpy decoder's"
else
  fail "qwen2 generation = numpy decoder" "vkqc:  $qgot" "numpy: $qwant"
fi
"$PY" "$SRC/examples/llama/make_gguf.py" "$WORK/qwen2b" --arch qwen2 --qkv-bias >/dev/null
expect_writes "compile the qwen2 GGUF with Q/K/V biases" "$WORK/qwen2b.vkqb" compile "$WORK/qwen2b/model.gguf" --target lavapipe --tokens 1,4 -o "$WORK/qwen2b.vkqb"
expect_pass "qwen2 with biases = the CPU reference (tokens 4)" run "$WORK/qwen2b.vkqb" --tokens 4 --validation --reference "$WORK/qwen2b/model.gguf"
vk generate "$WORK/qwen2b.vkqb" --prompt "Hello" --chat --max-new-tokens 4 --validation
if [ "$RC" -eq 0 ] && out_has "prompt ids: 447," && out_has ",448,"; then  # <|im_start|> / <|im_end|> parsed as their special tokens
  ok "qwen2 --chat: ChatML with its special tokens"
else
  fail "qwen2 --chat" "$(last_run_report)"
fi

# Phone-class targets (4 storage buffers per stage: the position is a uniform buffer, and the row
# fusions that need more bindings are left out): the bundles compile, and mali-valhall's (int8 dot)
# runs on lavapipe with the numpy decoder's tokens; android-baseline-2022's matches the reference.
for t in adreno-7xx mali-valhall android-baseline-2022; do
  expect_writes "compile the GGUF for $t" "$WORK/$t.vkqb" compile "$M/model.gguf" --target "$t" --tokens 1,4 -o "$WORK/$t.vkqb"
done
vk generate "$WORK/mali-valhall.vkqb" --prompt-ids "$want_ids" --max-new-tokens 32 --ignore-eos --validation
if [ "$RC" -eq 0 ] && [ "$(grep '^tokens:' "$OUT_FILE")" = "$got" ]; then
  ok "the mali-valhall bundle (4 storage buffers per stage) generates the same tokens on lavapipe"
else
  fail "mali-valhall bundle generation" "want $got" "$(last_run_report)"
fi
expect_pass "android-baseline-2022 bundle = reference (tokens 4)" run "$WORK/android-baseline-2022.vkqb" --tokens 4 --validation --reference "$M/model.gguf"

# The same prompt as ids gives the same tokens; the bundle's tokenizer still prints the text.
vk generate "$B" --prompt-ids "$want_ids" --max-new-tokens 32 --ignore-eos
if [ "$RC" -eq 0 ] && [ "$(grep '^tokens:' "$OUT_FILE")" = "$got" ] && out_has "text: "; then
  ok "--prompt-ids gives the same tokens"
else
  fail "--prompt-ids" "$(last_run_report)"
fi

# --chat applies the model's template (ChatML here); the default kernels (dequant) run too.
B2="$WORK/tiny-default.vkqb"
expect_writes "compile with lavapipe's default kernels" "$B2" compile "$WORK/tiny.vkqg" --target lavapipe --tokens 1,4 -o "$B2"
vk generate "$B2" --prompt "Hello" --chat --max-new-tokens 4 --validation
if [ "$RC" -eq 0 ] && ! crashed && out_has "prompt ids: 1," && out_has "tokens: "; then
  ok "generate --chat (ChatML template)"
else
  fail "generate --chat" "$(last_run_report)"
fi

# Float weights: refused without --quantize; with it, converted with the error printed per tensor.
"$PY" "$SRC/examples/llama/make_gguf.py" "$WORK/f16" --float-weights f16 >/dev/null
expect_error "F16 projections need --quantize" "is F16 (float)" "--quantize q8" -- import "$WORK/f16/model.gguf" -o "$WORK/f16.vkqg"
for q in q8 8da4w; do
  vk import "$WORK/f16/model.gguf" -o "$WORK/f16-$q.vkqg" --quantize "$q"
  if [ "$RC" -eq 0 ] && out_has "blk.0.attn_q.weight: F16 -> " && out_has "(quantized), max |error|"; then
    ok "--quantize $q converts float weights and prints each tensor's error"
  else
    fail "--quantize $q" "$(last_run_report)"
  fi
done
expect_writes "compile the --quantize q8 graph" "$WORK/f16.vkqb" compile "$WORK/f16-q8.vkqg" --target lavapipe --tokens 1 -o "$WORK/f16.vkqb"
vk generate "$WORK/f16.vkqb" --prompt "$PROMPT" --max-new-tokens 4 --validation
[ "$RC" -eq 0 ] && ! crashed && out_has "tokens: " && ok "the quantized float model generates" || fail "quantized float model generates" "$(last_run_report)"

# Bad files: one clear error each, never a crash.
declare -A WANT=([arch]="architecture 'gpt2' is not supported" [missing-key]="required metadata key 'llama.block_count' is missing"
                 [shape]="has shape [256, 64] but the metadata says [256, 32]" [no-merges]="has no merges"
                 [truncated]="runs past the end of the file")
for kind in arch missing-key shape no-merges truncated; do
  "$PY" "$SRC/examples/llama/make_gguf.py" "$WORK/bad-$kind" --broken "$kind" >/dev/null
  expect_error "bad GGUF refused: $kind" "${WANT[$kind]}" -- import "$WORK/bad-$kind/model.gguf" -o "$WORK/bad.vkqg"
done
head -c 4096 "$M/model.gguf" > "$WORK/head.gguf"
expect_error "a GGUF cut inside its metadata" "truncated or corrupt GGUF" -- import "$WORK/head.gguf" -o "$WORK/bad.vkqg"
expect_error "--quantize on a non-GGUF input" "--quantize applies to GGUF files" -- compile "$WORK/tiny.vkqg" --target lavapipe --tokens 1 --quantize q8 -o "$WORK/x.vkqb"
expect_writes "compile the safetensors form (no tokenizer)" "$WORK/st.vkqb" compile "$M/ref/graph.json" --target lavapipe --tokens 1 -o "$WORK/st.vkqb"
expect_error "generate --prompt without a tokenizer" "carries no tokenizer" -- generate "$WORK/st.vkqb" --prompt x
expect_error "--prompt and --prompt-ids together" "usage: vkqc generate" -- generate "$B" --prompt-ids 1 --prompt x
finish
