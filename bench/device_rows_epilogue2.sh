#!/usr/bin/env bash
# Second device call of 2026-12-07 (session 19), the first's stdout having been lost to its time
# limit: the several-row GEMV's epilogue (vkqc) against the previous main's binary (vkqc_old) on
# the same machine: the 1b example's 8-token program per op against the CPU reference, two
# alternating rounds of its 1/2/4/8-token steps at position 128, then single decode shapes at
# M = 1/2/4/8 (the selection's kernel) while time remains. Everything printed also goes to
# $OUT/log.txt. Carry .gl and .dev (.dev/bin.tar.xz: vkqc_old, vkqc).
# usage (on the device, repo root): bash bench/device_rows_epilogue2.sh
set -u
export OUT
exec > >(tee $OUT/log.txt) 2>&1
source bench/device_env.sh
device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for b in vkqc_old vkqc; do
  .dev/x/$b compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,2,4,8 -o /tmp/1b_$b.vkqb > /dev/null || exit 1
done
t "compiled"
for round in 1 2; do
  for n in 1 2 4 8; do
    for b in vkqc_old vkqc; do whole $b /tmp/1b_$b.vkqb "r$round $b 1b $n token(s) at 128" --tokens $n --position 128 --min-ms 300; done
  done
done
t "reference"
.dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 8 --keep-intermediates -o /tmp/1b_k.vkqb > /dev/null || exit 1
echo "1b 8 tokens per op: $(timeout 120 .dev/x/vkqc run /tmp/1b_k.vkqb --tokens 8 --reference /tmp/1b/graph.json --per-op 2>&1 | grep -E 'failed|PASS|FAIL' | tr '\n' ' ')"
t "lm_head alone (2048x128256 q8csw): the selection (cooperative matrix from M = 4) against the GEMV"
MODES="sel:;gemv:--force-kernel gemv" BINS="vkqc" TOKENS="1 4 8" LAYERS="2048 128256 dq8ca q8csw" timeout 120 bash bench/device_smallm2.sh
t "single layers"
MODES="sel:" BINS="vkqc_old vkqc" TOKENS="1 2 4 8" LAYERS="8192 2048 dq8ca q4gsw;4096 14336 dq8ca q4gsw;14336 4096 dq8ca q4gsw" \
  timeout 200 bash bench/device_smallm2.sh
t done
