#!/usr/bin/env bash
# One device call (issue 15 part 4): code size in the decode step's one-pass kernels. Binaries:
# vkqc_old (main before), vkqc_attn (decode attention: f16 cache words by unpackHalf2x16, the
# integer decode only for blocks holding a subnormal half; values' rows padded), vkqc (also
# dq8ca_params' three divisions as a loop). GPU tests with validation (vkqc's), each binary's 1b
# decode checked against the CPU reference, then timed at positions 0, 128, 2040; the dq8ca GEMV
# with its quantizing prologue and the dq8ca x q4gsw layers with a quantize dispatch.
# usage (on the device, repo root): bash bench/device_icache.sh   (writes to $OUT)
set -u
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
t "GPU tests (validation on)"
VKQC_TEST_PROFILE=$P timeout 300 .dev/x/vkqc_gpu_tests --gtest_filter="${FILTER:-Decoder.*:RowFusion.*:*Int4Combos*:*Dq8ca*:*Quantiz*}" > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED)|tests ran|Failure' $OUT/tests.log | head -12
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for b in ${BINS:-vkqc_old vkqc_attn vkqc vkqc_old}; do
  V=$PWD/.dev/x/$b
  timeout 120 $V compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1 -o /tmp/1b_$b.vkqb > /dev/null || exit 1
  echo "$b: $(timeout 150 $V run /tmp/1b_$b.vkqb --tokens 1 --reference /tmp/1b/graph.json | tail -1)"
  timeout 60 $V bench /tmp/1b_$b.vkqb --tokens 1 --min-ms 1500 > /dev/null 2>&1
  for pos in 0 128 2040; do
    timeout 60 $V bench /tmp/1b_$b.vkqb --tokens 1 --position $pos --min-ms 500 --roofline "$S" > $OUT/bench_${b}_p$pos.txt 2>&1
    echo "$b position $pos: $(grep whole $OUT/bench_${b}_p$pos.txt | sed 's/whole program without per-layer timestamps: //'); per-layer sums: attention $(awk '$1 ~ /attention$/ {s+=$3} END {print s}' $OUT/bench_${b}_p$pos.txt), o_proj $(awk '$1 ~ /o_proj$/ {s+=$3} END {print s}' $OUT/bench_${b}_p$pos.txt), norms $(awk '$1 ~ /layernorm$/ {s+=$3} END {print s}' $OUT/bench_${b}_p$pos.txt), silu*mul $(awk '$1 ~ /gated$/ {s+=$3} END {print s}' $OUT/bench_${b}_p$pos.txt)"
  done
  for shape in 2048x2048 2048x8192; do
    IFS=x read -r K N <<< "$shape"
    timeout 120 bash bench/gemv_sweep.sh $V nvidia-hopper $K $N dq8ca:q4gsw 128x4x1 2>&1 | sed "s/^/[$b] /"
  done
done
t done
