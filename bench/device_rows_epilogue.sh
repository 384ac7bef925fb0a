#!/usr/bin/env bash
# Device call of 2026-12-07 (session 19): the several-row GEMV's epilogue with every row's sums
# reduced at once and the rows finished side by side (shaders/linear_gemv.comp epilogue_rows),
# against the previous main's binary (vkqc_old) on the same machine. Carry .gl and .dev
# (.dev/bin.tar.xz: vkqc_old, vkqc, vkqc_gpu_tests). First the GPU tests of the GEMV with the
# probed profile and validation on; the 1b example's 8-token program per op against the CPU
# reference; then two alternating rounds of the 1b's 1/2/4/8-token steps at position 128 (and the
# 8-token step with the gate/up pair on the GEMV too: --gemv-max-m 8); per-layer timestamps of the
# 8-token step; the decode shapes alone at M = 1..16 (device_smallm2.sh, the selection's kernel).
# usage (on the device, repo root): bash bench/device_rows_epilogue.sh   (writes to $OUT, the log to $OUT/log.txt)
set -u
export OUT
exec > >(tee $OUT/log.txt) 2>&1  # a call killed at its limit keeps what was printed
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
t "GPU tests (probed profile, validation on)"
VKQC_TEST_PROFILE=$P timeout 300 .dev/x/vkqc_gpu_tests \
  --gtest_filter='All/LinearVariants*:All/Int4Combos*:Int4.*:RowFusion.*:Decoder.*' > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED|SKIPPED)|Failure' $OUT/tests.log | head
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for b in vkqc_old vkqc; do
  .dev/x/$b compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,2,4,8,16 -o /tmp/1b_$b.vkqb > /dev/null || exit 1
done
.dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 8 --gemv-max-m 8 -o /tmp/1b_g8.vkqb > /dev/null || exit 1
.dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 8 --keep-intermediates -o /tmp/1b_k.vkqb > /dev/null || exit 1
.dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 8 --gemv-max-m 8 --keep-intermediates -o /tmp/1b_g8k.vkqb > /dev/null || exit 1
t "reference"
for k in k g8k; do
  echo "1b 8 tokens ($k) per op: $(timeout 300 .dev/x/vkqc run /tmp/1b_$k.vkqb --tokens 8 --reference /tmp/1b/graph.json --per-op 2>&1 | grep -E 'failed|PASS|FAIL' | tr '\n' ' ')"
done
echo "1b one token: $(timeout 200 .dev/x/vkqc run /tmp/1b_vkqc.vkqb --tokens 1 --reference /tmp/1b/graph.json 2>&1 | grep -E 'output|PASS|FAIL' | tr '\n' ' ')"
t "timings"
for round in 1 2; do
  for n in 1 2 4 8 16; do
    for b in vkqc_old vkqc; do whole $b /tmp/1b_$b.vkqb "r$round $b 1b $n token(s) at 128" --tokens $n --position 128 --min-ms 300; done
  done
  whole vkqc /tmp/1b_g8.vkqb "r$round vkqc 1b 8 tokens at 128, --gemv-max-m 8" --tokens 8 --position 128 --min-ms 300
done
t "per layer (timestamps), 8 tokens"
timeout 60 .dev/x/vkqc_old bench /tmp/1b_vkqc_old.vkqb --tokens 8 --position 128 --min-ms 300 > $OUT/l8_old.txt 2>&1
timeout 60 .dev/x/vkqc bench /tmp/1b_vkqc.vkqb --tokens 8 --position 128 --min-ms 300 > $OUT/l8_new.txt 2>&1
timeout 60 .dev/x/vkqc bench /tmp/1b_g8.vkqb --tokens 8 --position 128 --min-ms 300 > $OUT/l8_g8.txt 2>&1
for f in old new g8; do
  echo "$f: $(awk '$1 ~ /^layers\./ {split($1, a, "."); s[a[3]] += $3} END {for (k in s) printf "%s %.1f; ", k, s[k]}' $OUT/l8_$f.txt)"
done
t "single layers"
MODES="sel:" BINS="vkqc_old vkqc" LAYERS="4096 14336 dq8ca q4gsw;2048 8192 dq8ca q4gsw;8192 2048 dq8ca q4gsw;14336 4096 dq8ca q4gsw;2048 2048 dq8ca q4gsw" \
  bash bench/device_smallm2.sh
t done
