#!/usr/bin/env bash
# The benchmark suite of DESIGN 7 on the local Vulkan device: every linear layer shape of
# Llama-3.2-1B and Llama-3-8B plus the 8192x28672 decode shape whose weights exceed a 50 MB L2,
# at tokens 1, 8, 128, 512, for int4 dq8ca x q4gsw, int8 q8ta x q8csw and float x q4gsw /
# q8csw (weight-only); then the Llama-3.2-1B MLP block and the MobileNetV2-shaped CNN example.
# Each layer is compiled for the given target profile, checked against the CPU reference once
# (`vkqc run --reference`, tokens 8), and benched with `vkqc bench --roofline`.
#
# usage: bench/suite.sh VKQC PROFILE.json ROOFLINE OUT_DIR [quick]
#   PROFILE.json  the device's profile (`vkqc probe`, tuned by `vkqc tune -o PROFILE.vkqc.json`)
#   ROOFLINE      a sidecar or profile with a measured roofline (`vkqc roofline -o ...`)
#   quick         only the smallest shapes (for CPU devices such as lavapipe)
# Output: OUT_DIR/bench.log (every bench table) and OUT_DIR/summary.tsv (one row per layer run).
set -u
VKQC=$1 PROFILE=$2 ROOF=$3 OUT=$4 QUICK=${5:-}
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$OUT"
LOG=$OUT/bench.log SUM=$OUT/summary.tsv
: > "$LOG"
printf 'shape\tscheme\ttokens\tlayer\tvariant\tmedian_us\tGB/s\tGOP/s\tpct_bw\tpct_compute\tpct_roofline\n' > "$SUM"
if [ -n "$QUICK" ]; then
  SHAPES="2048x512"
  TOKENS="1 8"
else
  SHAPES=${SHAPES:-"2048x2048 2048x512 2048x8192 8192x2048 4096x4096 4096x1024 4096x14336 14336x4096 8192x28672"}
  TOKENS="1 8 128 512"
fi
fail=0
# bench_rows TAG: the layer and total rows of the last bench table, tab-separated, prefixed by TAG.
bench_rows() {
  awk -v tag="$1" 'p && NF >= 5 { gsub(/%/, ""); row = tag; for (i = 1; i <= NF; ++i) row = row "\t" $i;
                   if ($1 == "total") row = tag "\ttotal\t-" substr(row, length(tag) + 7); print row }
                   /%roofline/ { p = 1 }' "$W/bench.out"
}
for shape in $SHAPES; do
  K=${shape%x*} N=${shape#*x}
  for scheme in ${SCHEMES:-dq8ca:q4gsw q8ta:q8csw float:q4gsw float:q8csw f16:q4gsw q8ta:q8csw:nocm}; do
    # ACT:WEIGHTS[:nocm]; f16 = float activations with --allow-fp16 (the fp16 cooperative-matrix
    # GEMM where the target has one); nocm = --no-coopmat (the tiled int-dot GEMM phones run).
    IFS=: read -r act wq opt <<< "$scheme"
    flags="" tol=1e-4
    [ "$act" = f16 ] && { act=float; flags="--allow-fp16"; tol=2e-3; }
    [ "$opt" = nocm ] && flags="$flags --no-coopmat"
    # The extra variants only on the two shapes the targets name.
    if [ -n "$flags" ] && [ "$shape" != 4096x14336 ] && [ "$shape" != 8192x28672 ] && [ -z "$QUICK" ]; then continue; fi
    python3 "$HERE/gen_linear.py" "$W/g" "$K" "$N" "$act" "$wq" || { fail=1; continue; }
    if ! "$VKQC" compile "$W/g/graph.json" --target "$PROFILE" --tokens "$(echo $TOKENS | tr ' ' ,)" $flags -o "$W/b.vkqb" > "$W/compile.out" 2>&1; then
      cat "$W/compile.out"; fail=1; continue
    fi
    # Reference checks: the decode program always, a prefill program where the CPU reference is quick.
    checks=1
    [ $((K * N)) -le 33554432 ] && checks="1 $(echo $TOKENS | awk '{print ($NF >= 128 ? 128 : $NF)}')"
    for t in $checks; do
      if ! "$VKQC" run "$W/b.vkqb" --tokens $t --reference "$W/g/graph.json" --tolerance $tol > "$W/run.out" 2>&1 || ! grep -q PASS "$W/run.out"; then
        echo "REFERENCE CHECK FAILED: $shape $scheme tokens $t"; cat "$W/run.out"; fail=1
      fi
    done
    for t in $TOKENS; do
      echo "== $shape $scheme tokens $t" >> "$LOG"
      "$VKQC" bench "$W/b.vkqb" --tokens "$t" --roofline "$ROOF" > "$W/bench.out" 2>&1 || fail=1
      cat "$W/bench.out" >> "$LOG"
      bench_rows "$shape	$scheme	$t" >> "$SUM"
    done
  done
done
# Whole models: the Llama-3.2-1B MLP block and the MobileNetV2-shaped CNN.
python3 "$HERE/../examples/llama-mlp/make_example.py" "$W/mlp" > /dev/null
python3 "$HERE/../examples/mobilenetv2/make_example.py" "$W/cnn" > /dev/null
"$VKQC" compile "$W/mlp/graph.json" --target "$PROFILE" --tokens "$(echo $TOKENS | tr ' ' ,)" -o "$W/mlp.vkqb" > /dev/null || fail=1
"$VKQC" compile "$W/cnn/graph.json" --target "$PROFILE" --keep-intermediates -o "$W/cnn-check.vkqb" > /dev/null || fail=1
"$VKQC" compile "$W/cnn/graph.json" --target "$PROFILE" -o "$W/cnn.vkqb" > /dev/null || fail=1
for t in $TOKENS; do
  "$VKQC" run "$W/mlp.vkqb" --tokens "$t" --reference "$W/mlp/graph.json" 2>&1 | grep -q PASS || { echo "MLP tokens $t: reference check failed"; fail=1; }
  echo "== llama-mlp tokens $t" >> "$LOG"
  "$VKQC" bench "$W/mlp.vkqb" --tokens "$t" --roofline "$ROOF" > "$W/bench.out" 2>&1 || fail=1
  cat "$W/bench.out" >> "$LOG"
  bench_rows "llama-mlp	mixed	$t" >> "$SUM"
done
"$VKQC" run "$W/cnn-check.vkqb" --reference "$W/cnn/graph.json" --per-op 2>&1 | grep -q PASS || { echo "CNN: reference check failed"; fail=1; }
echo "== mobilenetv2" >> "$LOG"
"$VKQC" bench "$W/cnn.vkqb" --roofline "$ROOF" > "$W/bench.out" 2>&1 || fail=1
cat "$W/bench.out" >> "$LOG"
bench_rows "mobilenetv2	q8	1" >> "$SUM"
echo "suite: $(($(wc -l < "$SUM") - 1)) rows in $SUM; full tables in $LOG"
exit $fail
