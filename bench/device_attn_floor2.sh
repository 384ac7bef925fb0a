#!/usr/bin/env bash
# Device experiment (issue 15 part 4): where the decode attention's fixed cost lies. Experiment
# binaries built from variants of attention_decode.comp (not in the tree): each returns early at
# a phase (their outputs are not attention; only position 0 is meaningful) or changes one thing.
# usage (on the device, repo root): B="vkqc_old vkqc_f1 ..." bash bench/device_attn_floor2.sh
set -u
source bench/device_env.sh
device_setup
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for spec in ${B:-vkqc_old:0}; do
  IFS=: read -r b poss <<< "$spec"
  V=$PWD/.dev/x/$b
  timeout 120 $V compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1 -o /tmp/1b_$b.vkqb > /dev/null
  [ -n "${REF:-}" ] && timeout 150 $V run /tmp/1b_$b.vkqb --tokens 1 --reference /tmp/1b/graph.json | tail -1
  timeout 60 $V bench /tmp/1b_$b.vkqb --tokens 1 --min-ms 1500 > /dev/null 2>&1
  for pos in ${poss//,/ }; do
    timeout 60 $V bench /tmp/1b_$b.vkqb --tokens 1 --position $pos --min-ms 500 > $OUT/bench_${b}_p$pos.txt 2>&1
    echo "$b position $pos: $(grep whole $OUT/bench_${b}_p$pos.txt | sed 's/whole program without per-layer timestamps: //'); attention sum $(awk '$1 ~ /attention$/ {s+=$3} END {print s}' $OUT/bench_${b}_p$pos.txt) us, layer 3 $(awk '$1 == "layers.3.attention" {print $3}' $OUT/bench_${b}_p$pos.txt)"
  done
done
