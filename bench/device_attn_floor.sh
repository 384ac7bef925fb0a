#!/usr/bin/env bash
# One device call (issue 15 part 4): the decode attention's fixed cost. Binaries: vkqc_old (main),
# vkqc (first block's K/V and the rope table loaded at the start, f16 pairs by unpackHalf2x16
# with the integer decode for subnormal halves), vkqc_floor (an experiment: returns after the
# queries' load; its numbers are the kernel's launch floor, its outputs are not attention).
# usage (on the device, repo root): bash bench/device_attn_floor.sh   (writes to $OUT)
set -u
source bench/device_env.sh
device_setup
.dev/x/vkqc probe -o "$P" > /dev/null || exit 1
t "GPU tests (validation on)"
VKQC_TEST_PROFILE=$P timeout 300 .dev/x/vkqc_gpu_tests --gtest_filter="${FILTER:-Decoder.*:RowFusion.*}" > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED)|tests ran|Failure' $OUT/tests.log | head -12
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for b in vkqc_old vkqc vkqc_floor; do
  V=$PWD/.dev/x/$b
  timeout 120 $V compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1 -o /tmp/1b_$b.vkqb | tail -1
  [ $b != vkqc_floor ] && timeout 150 $V run /tmp/1b_$b.vkqb --tokens 1 --reference /tmp/1b/graph.json | tail -1
  timeout 60 $V bench /tmp/1b_$b.vkqb --tokens 1 --min-ms 2000 > /dev/null 2>&1
  POS="0 128 2040"; [ $b = vkqc_floor ] && POS=0
  for pos in $POS; do
    timeout 60 $V bench /tmp/1b_$b.vkqb --tokens 1 --position $pos --min-ms 500 > $OUT/bench_${b}_p$pos.txt 2>&1
    echo "$b position $pos: $(grep whole $OUT/bench_${b}_p$pos.txt | sed 's/whole program without per-layer timestamps: //'); attention sum $(awk '$1 ~ /attention$/ {s+=$3} END {print s}' $OUT/bench_${b}_p$pos.txt) us, layer 3 $(awk '$1 == "layers.3.attention" {print $3}' $OUT/bench_${b}_p$pos.txt)"
  done
done
t done
