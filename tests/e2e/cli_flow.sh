#!/usr/bin/env bash
# End-to-end flow of the vkqc CLI on examples/mlp: import, profiles, compile for every built-in
# target, inspect (kernel variants, reasons, memory plan), run on lavapipe against the CPU
# reference (default, forced accumulation, forced kernels, a probed profile), .npy input/output,
# refusal of a bundle the device cannot run, and the docs/graph-json.md example.
#
# usage: bash cli_flow.sh <path-to-vkqc> <source-dir> <work-dir>
source "$(dirname "$0")/common.bash" "$@"

BUILTIN_PROFILES="lavapipe android-baseline-2022 android-16 adreno-7xx mali-valhall nvidia-hopper nvidia-ada amd-rdna3 intel-arc apple-moltenvk"
EXAMPLE=$SRC/examples/mlp/graph.json
MODEL=$WORK/mlp.vkqg
B=$WORK/bundles
mkdir -p "$B"

# variant_at INSPECT_OUTPUT TOKENS LAYER: the kernel variant `vkqc inspect` shows for LAYER in
# the program for TOKENS.
variant_at() {
  awk -v t="$2" -v l="$3" '
    /^program / { cur = ""; if (match($0, /\(tokens [0-9]+\)/)) cur = substr($0, RSTART + 8, RLENGTH - 9) }
    $1 == "layer" && $2 == l && cur == t { print $3 }' "$1"
}

# expect_variant NAME INSPECT_OUTPUT TOKENS LAYER WANT
expect_variant() {
  local got
  got=$(variant_at "$2" "$3" "$4")
  if [ "$got" = "$5" ]; then
    ok "$1"
  else
    fail "$1" "layer $4 at tokens $3: expected '$5', inspect shows '$got'" "$(grep -E '^(program|  layer)' "$2" | sed 's/^/  | /')"
  fi
}

# inspect_bundle NAME BUNDLE: runs `vkqc inspect`, checks every layer has a "why:" line and every
# program a memory plan; leaves the output in $OUT_FILE.
inspect_bundle() {
  local name=$1
  vk inspect "$2"
  if [ "$RC" -ne 0 ] || crashed; then
    fail "$name" "$(last_run_report)"
    return
  fi
  local programs layers whys plans
  programs=$(grep -c '^program ' "$OUT_FILE")
  layers=$(grep -c '^  layer ' "$OUT_FILE")
  whys=$(grep -c '^ *why: .' "$OUT_FILE")
  plans=$(grep -c '^  memory plan (arena ' "$OUT_FILE")
  if [ "$programs" -eq 2 ] && [ "$layers" -eq 6 ] && [ "$whys" -eq "$layers" ] && [ "$plans" -eq "$programs" ]; then
    ok "$name"
  else
    fail "$name" "expected 2 programs, 6 layers each with a why: line, a memory plan per program;" \
      "got $programs programs, $layers layers, $whys why: lines, $plans memory plans" "$(last_run_report)"
  fi
}

# run_ref NAME BUNDLE TOKENS [ARGS...]: on lavapipe with validation, against the CPU reference.
run_ref() {
  local name=$1 bundle=$2 tokens=$3
  shift 3
  expect_pass "$name" run "$bundle" --validation --reference "$MODEL" --tokens "$tokens" "$@"
}

# compile_all NAME GRAPH OUTPREFIX: compile GRAPH for every built-in profile with --tokens 1,64.
compile_all() {
  local p
  for p in $BUILTIN_PROFILES; do
    expect_writes "$1: compile for $p" "$3.$p.vkqb" compile "$2" --target "$p" --tokens 1,64 -o "$3.$p.vkqb"
  done
}

echo "== import"
expect_writes "import examples/mlp" "$MODEL" import "$EXAMPLE" -o "$MODEL"

echo "== profiles"
vk profiles
listed=$(awk '{print $1}' "$OUT_FILE" | sort | tr '\n' ' ')
want=$(echo $BUILTIN_PROFILES | tr ' ' '\n' | sort | tr '\n' ' ')
if [ "$RC" -eq 0 ] && [ "$listed" = "$want" ]; then
  ok "profiles lists the 10 built-ins"
else
  fail "profiles lists the 10 built-ins" "expected: $want" "listed:   $listed" "$(last_run_report)"
fi

echo "== compile for every built-in profile"
compile_all "mlp" "$MODEL" "$B/mlp"

echo "== inspect"
for p in nvidia-hopper android-baseline-2022 lavapipe; do
  inspect_bundle "inspect $p: why: lines and memory plans" "$B/mlp.$p.vkqb"
  cp "$OUT_FILE" "$WORK/inspect.$p.txt"
done
expect_variant "nvidia-hopper fc1 tokens 1: int8 dot GEMV" "$WORK/inspect.nvidia-hopper.txt" 1 fc1 linear_q8ta_q8csw_dot_gemv
expect_variant "nvidia-hopper fc1 tokens 64: int8 dot GEMV (tuned threshold 64)" "$WORK/inspect.nvidia-hopper.txt" 64 fc1 linear_q8ta_q8csw_dot_gemv
vk inspect "$MODEL" --target nvidia-hopper --tokens 64 --gemv-max-m 8; cp "$OUT_FILE" "$WORK/inspect.gemm.txt"
if grep -q "cooperative matrix on 'nvidia-hopper' (VK_KHR_cooperative_matrix, sint8 16x16x32 -> sint32)" "$WORK/inspect.gemm.txt"; then
  ok "inspect nvidia-hopper: int8 layers take the KHR cooperative matrix, and why"
else
  fail "inspect nvidia-hopper: int8 layers take the KHR cooperative matrix, and why" "$(cat "$WORK/inspect.gemm.txt")"
fi
expect_variant "nvidia-hopper fc1 tokens 64 (threshold 8): int8 cooperative-matrix GEMM" "$WORK/inspect.gemm.txt" 64 fc1 linear_q8ta_q8csw_cm_gemm
vk inspect "$MODEL" --target nvidia-hopper --tokens 64 --gemv-max-m 8 --coopmat-nv; cp "$OUT_FILE" "$WORK/inspect.nv.txt"
if grep -q "NVIDIA lists no int8 types for VK_NV_cooperative_matrix" "$WORK/inspect.nv.txt"; then
  ok "inspect --coopmat-nv: why no int8 NV cooperative matrix"
else
  fail "inspect --coopmat-nv: why no int8 NV cooperative matrix" "$(cat "$WORK/inspect.nv.txt")"
fi
vk inspect "$MODEL" --target nvidia-hopper --tokens 64 --gemv-max-m 8 --no-coopmat; cp "$OUT_FILE" "$WORK/inspect.nocm.txt"
expect_variant "--no-coopmat: fc1 tokens 64 is dot GEMM" "$WORK/inspect.nocm.txt" 64 fc1 linear_q8ta_q8csw_dot_gemm
vk inspect "$MODEL" --target nvidia-hopper --tokens 64 --gemv-max-m 8 --allow-fp16 --coopmat-tile 2x2x2x2; cp "$OUT_FILE" "$WORK/inspect.cm.txt"
expect_variant "--allow-fp16: fc3 (float activations) tokens 64 is fp16 cooperative-matrix GEMM" "$WORK/inspect.cm.txt" 64 fc3 linear_q8csw_cmf16_gemm
if grep -q "vulkanMemoryModel, cooperativeMatrix (KHR), 16x16x32 sint8 x sint8 -> sint32, 16x16x16 float16 x float16 -> float32" "$WORK/inspect.cm.txt" &&
   grep -q "VK_KHR_cooperative_matrix" "$WORK/inspect.cm.txt"; then
  ok "inspect --allow-fp16: the bundle requires the KHR cooperative matrix and its two shapes"
else
  fail "inspect --allow-fp16: the bundle requires the KHR cooperative matrix and its two shapes" "$(cat "$WORK/inspect.cm.txt")"
fi
vk inspect "$MODEL" --target nvidia-hopper --tokens 64 --gemv-max-m 8 --allow-fp16; cp "$OUT_FILE" "$WORK/inspect.f16.txt"
if grep -A3 "layer fc3 " "$WORK/inspect.f16.txt" | grep -q "2 shared operand buffers"; then
  ok "inspect --allow-fp16: the fp16 cooperative matrix's default has two shared operand buffers"
else
  fail "inspect --allow-fp16: the fp16 default's two shared operand buffers" "$(cat "$WORK/inspect.f16.txt")"
fi
expect_error "--coopmat-tile with 3 shared operand buffers is refused" "must be 1 or 2, not 3" -- \
  compile "$MODEL" --target nvidia-hopper --tokens 64 --coopmat-tile 2x2x2x2x16x3 -o "$B/cm3.vkqb"
expect_error "--coopmat-tile with 7 numbers is refused" "WMxWNxTMxTNxBKWxSTAGES" -- \
  compile "$MODEL" --target nvidia-hopper --tokens 64 --coopmat-tile 2x2x2x2x16x2x1 -o "$B/cm7.vkqb"
expect_error "--prologue-max-bytes 0 is refused" "--prologue-max-bytes out of range" -- \
  compile "$MODEL" --target nvidia-hopper --tokens 1 --prologue-max-bytes 0 -o "$B/pmb.vkqb"
expect_error "--prefetch-max-bytes -1 is refused" "--prefetch-max-bytes out of range" -- \
  compile "$MODEL" --target nvidia-hopper --tokens 1 --prefetch-max-bytes -1 -o "$B/pfb.vkqb"
expect_error "--force-accum cm --coopmat-nv on nvidia-hopper refuses the int8 layer" "nv_coopmat_int8" -- \
  compile "$MODEL" --target nvidia-hopper --tokens 64 --force-accum cm --coopmat-nv -o "$B/cm-int.vkqb"
expect_error "--force-accum cm on lavapipe is refused with the reason" "cooperative-matrix accumulation was forced" "VK_KHR_cooperative_matrix" -- \
  compile "$MODEL" --target lavapipe --tokens 64 --force-accum cm -o "$B/cm.vkqb"
for p in android-baseline-2022 lavapipe; do
  expect_variant "$p fc1 tokens 1: dequant GEMV" "$WORK/inspect.$p.txt" 1 fc1 linear_q8ta_q8csw_dequant_gemv
  expect_variant "$p fc1 tokens 64: dequant GEMM" "$WORK/inspect.$p.txt" 64 fc1 linear_q8ta_q8csw_dequant_gemm
done

echo "== run on lavapipe against the CPU reference"
LVP=$B/mlp.lavapipe.vkqb
run_ref "run lavapipe tokens 1" "$LVP" 1
run_ref "run lavapipe tokens 64" "$LVP" 64

expect_writes "compile lavapipe --force-accum dot" "$B/dot.vkqb" compile "$MODEL" --target lavapipe --tokens 1,64 --force-accum dot -o "$B/dot.vkqb"
vk inspect "$B/dot.vkqb"; cp "$OUT_FILE" "$WORK/inspect.dot.txt"
expect_variant "--force-accum dot: fc1 tokens 1 is dot GEMV" "$WORK/inspect.dot.txt" 1 fc1 linear_q8ta_q8csw_dot_gemv
expect_variant "--force-accum dot: fc1 tokens 64 is dot GEMM" "$WORK/inspect.dot.txt" 64 fc1 linear_q8ta_q8csw_dot_gemm
run_ref "run --force-accum dot tokens 1" "$B/dot.vkqb" 1
run_ref "run --force-accum dot tokens 64" "$B/dot.vkqb" 64
expect_error "inspect of a bundle refuses a compile option (--norm-tail)" "--norm-tail applies when inspecting a graph" -- \
  inspect "$B/dot.vkqb" --norm-tail
expect_error "inspect of a bundle refuses a compile option (--prefetch-max-bytes)" "--prefetch-max-bytes applies when inspecting a graph" -- \
  inspect "$B/dot.vkqb" --prefetch-max-bytes 1024

expect_writes "compile lavapipe --force-kernel gemv" "$B/gemv.vkqb" compile "$MODEL" --target lavapipe --tokens 1,64 --force-kernel gemv -o "$B/gemv.vkqb"
vk inspect "$B/gemv.vkqb"; cp "$OUT_FILE" "$WORK/inspect.gemv.txt"
expect_variant "--force-kernel gemv: fc1 tokens 64 is GEMV" "$WORK/inspect.gemv.txt" 64 fc1 linear_q8ta_q8csw_dequant_gemv
run_ref "run --force-kernel gemv tokens 64" "$B/gemv.vkqb" 64

expect_writes "compile lavapipe --force-kernel gemm" "$B/gemm.vkqb" compile "$MODEL" --target lavapipe --tokens 1,64 --force-kernel gemm -o "$B/gemm.vkqb"
vk inspect "$B/gemm.vkqb"; cp "$OUT_FILE" "$WORK/inspect.gemm.txt"
expect_variant "--force-kernel gemm: fc1 tokens 1 is GEMM" "$WORK/inspect.gemm.txt" 1 fc1 linear_q8ta_q8csw_dequant_gemm
run_ref "run --force-kernel gemm tokens 1" "$B/gemm.vkqb" 1

echo "== probe the local device and compile for it"
PROBED=$WORK/probed.json
expect_writes "probe -o probed.json" "$PROBED" probe -o "$PROBED"
expect_writes "compile --target probed.json" "$B/probed.vkqb" compile "$MODEL" --target "$PROBED" --tokens 1,64 -o "$B/probed.vkqb"
run_ref "run the probed-profile bundle tokens 1" "$B/probed.vkqb" 1
run_ref "run the probed-profile bundle tokens 64" "$B/probed.vkqb" 64

echo "== .npy input and output"
XNPY=$WORK/x.npy
OUTDIR=$WORK/outputs
mkdir -p "$OUTDIR"
$FIXTURES npy "$XNPY" 1,256 || fail "write x.npy" "fixtures.py npy failed"
run_ref "run --input x=x.npy --output-dir" "$LVP" 1 --input "x=$XNPY" --output-dir "$OUTDIR"
shape=$($FIXTURES npy-shape "$OUTDIR/y.npy" 2>&1)
if [ "$shape" = "(1, 128)" ]; then ok "outputs/y.npy is a valid float32 .npy of shape (1, 128)"; else fail "outputs/y.npy is a valid float32 .npy of shape (1, 128)" "got: $shape"; fi

echo "== a bundle the device cannot run"
expect_error "nvidia-hopper bundle refused on lavapipe" "subgroup size 32" "missing" "mlp.nvidia-hopper.vkqb" -- \
  run "$B/mlp.nvidia-hopper.vkqb" --tokens 1

echo "== the complete example of docs/graph-json.md"
DOC=$WORK/doc-example
if $FIXTURES doc-example "$SRC/docs/graph-json.md" "$DOC"; then
  ok "write the doc example (model.json + mlp.safetensors)"
else
  fail "write the doc example (model.json + mlp.safetensors)" "fixtures.py doc-example failed"
fi
expect_writes "import the doc example" "$DOC/model.vkqg" import "$DOC/model.json" -o "$DOC/model.vkqg"
compile_all "doc example" "$DOC/model.vkqg" "$DOC/model"
expect_pass "run the doc example on lavapipe tokens 1" run "$DOC/model.lavapipe.vkqb" --validation --reference "$DOC/model.vkqg" --tokens 1
expect_pass "run the doc example on lavapipe tokens 64" run "$DOC/model.lavapipe.vkqb" --validation --reference "$DOC/model.json" --tokens 64

finish
