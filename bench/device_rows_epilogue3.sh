#!/usr/bin/env bash
# Third device call of 2026-12-07 (session 19), minimal for the device time left: the 1b
# example's 1- and 8-token steps at position 128, the several-row GEMV's epilogue (vkqc) against
# the previous main (vkqc_old), same machine, alternating. Log in $OUT/log.txt.
# usage (on the device, repo root): bash bench/device_rows_epilogue3.sh
set -u
export OUT
exec > >(tee $OUT/log.txt) 2>&1
source bench/device_env.sh
device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for b in vkqc_old vkqc; do
  .dev/x/$b compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,8 -o /tmp/1b_$b.vkqb > /dev/null || exit 1
done
t "compiled"
for round in 1 2; do
  for n in 1 8; do
    for b in vkqc_old vkqc; do whole $b /tmp/1b_$b.vkqb "r$round $b 1b $n token(s) at 128" --tokens $n --position 128 --min-ms 200; done
  done
done
t done
