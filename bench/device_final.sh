#!/usr/bin/env bash
# One device call (issue 15, closing a session): the whole GPU suite with the probed profile and
# validation on (vkqc_gpu_tests of this tree), then the 1b example with this tree's vkqc and with
# the previous main's (vkqc_old, same machine): decode at contexts 128 and 2040, prefill 512.
# usage (on the device, repo root): bash bench/device_final.sh   (writes to $OUT)
set -u
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
device_suite
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for b in vkqc_old vkqc; do
  V=$PWD/.dev/x/$b
  timeout 150 $V compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,512 -o /tmp/1b_$b.vkqb > /dev/null || exit 1
  echo "$b: $(timeout 150 $V run /tmp/1b_$b.vkqb --tokens 1 --reference /tmp/1b/graph.json | tail -1)"
  timeout 60 $V bench /tmp/1b_$b.vkqb --tokens 512 --min-ms 3000 > /dev/null 2>&1
  for pos in 128 2040; do
    timeout 60 $V bench /tmp/1b_$b.vkqb --tokens 1 --position $pos --min-ms 500 --roofline "$S" > $OUT/bench_${b}_p$pos.txt 2>&1
    echo "$b decode at $pos: $(grep whole $OUT/bench_${b}_p$pos.txt | sed 's/whole program without per-layer timestamps: //'); attention per-layer sum $(awk '$1 ~ /attention$/ {s+=$3} END {print s}' $OUT/bench_${b}_p$pos.txt) us"
  done
  timeout 60 $V bench /tmp/1b_$b.vkqb --tokens 512 --min-ms 500 > $OUT/bench_${b}_t512.txt 2>&1
  echo "$b prefill 512: $(grep whole $OUT/bench_${b}_t512.txt | sed 's/whole program without per-layer timestamps: //')"
done
t done
