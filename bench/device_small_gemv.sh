#!/usr/bin/env bash
# One device call (issue 15 part 3): where the 1b decode step's time goes now (per-layer
# timestamps at context 128) and the GEMV configuration sweep for the decoder's small layers
# (K = 2048 and 8192) with the input already int8 (the GEMV alone) and with dq8ca.
# usage (on the device, repo root): bash bench/device_small_gemv.sh   (writes to $OUT)
set -u
source bench/device_env.sh
V=$PWD/.dev/x/vkqc
PROBE=1 device_setup "$V"
t "1b example"
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
timeout 120 $V compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1 -o /tmp/1b.vkqb | tail -1
timeout 150 $V run /tmp/1b.vkqb --tokens 1 --reference /tmp/1b/graph.json | tail -1
timeout 60 $V bench /tmp/1b.vkqb --tokens 1 --min-ms 3000 > /dev/null 2>&1
timeout 60 $V bench /tmp/1b.vkqb --tokens 1 --position 128 --roofline "$S" > $OUT/bench_1b_p128.txt 2>&1
grep whole $OUT/bench_1b_p128.txt
awk '$1 ~ /^layers\.3\./ || $1 ~ /^lm_head|^argmax|^embed/' $OUT/bench_1b_p128.txt
t "GEMV sweeps (M = 1)"
for shape in ${SHAPES:-2048x2048 2048x512 2048x8192 8192x2048}; do
  IFS=x read -r K N <<< "$shape"
  if [ "$K" -le 2048 ]; then C=${C2K:-"128x4x1 64x4x1 64x8x1 32x8x1 32x16x1 64x16x1 128x8x1 256x8x1"}
  else C=${C8K:-"128x4x1 64x4x1 64x8x1 128x8x1 256x4x1 128x4x2 64x16x1 256x8x1"}; fi
  for act in ${ACTS:-i8 dq8ca}; do
    timeout 300 bash bench/gemv_sweep.sh $V nvidia-hopper $K $N $act:q4gsw $C 2>&1 | sed "s/^/[$act] /"
  done
done
t done
