#!/usr/bin/env bash
# Ran in session 22 (bench/RESULTS.md 2026-12-07 session 22; written in session 20): the landed
# several-row rules as a whole binary (vkqc, main's head) against vkqc_main (session 20 archived it as 5140308: session 19's
# epilogue side by side everywhere; its inspect shows threshold 8) on the same machine:
#   1. the 1b example's 1/2/4/8-token steps at position 128, nvidia-hopper and hopper-tree, two rounds;
#   2. the long-K wide int4 layers (14336x4096, 8192x28672 dq8ca x q4gsw g32) at M = 1..8;
#   3. the driver's pipeline statistics (registers) of 14336x4096's GEMV at M = 8 in both binaries:
#      is the side-by-side form's loss there (43.2 against 39.9-41.0 us) a register count?
#   4. (session 22) the 8-token step with the gate/up pair on the several-row GEMV (--gemv-max-m 8:
#      silu * mul in its epilogue, then a quantize dispatch for down_proj: the same 181 dispatches
#      and 148 barriers) against the cooperative matrix + the silu * mul row kernel (the default at
#      M = 8 for that 2048x16384 layer);
#   5. the wide short-K int4 layers (4096x14336, 2048x8192, 2048x16384) at M = 1 / 4 / 8, the
#      selection (the cooperative matrix at M = 8) against the several-row GEMV;
#   6. with vkqc_chunk in the archive (main + bench/patches/row-chunk.patch: that GEMV side by side
#      again, but its reductions 4 rows per barrier), the same long layers and statistics for it.
# Carry .gl and .dev (.dev/bin.tar.xz: vkqc_main, vkqc[, vkqc_chunk]). Output also in $OUT/log.txt.
# usage (on the device, repo root): bash bench/device_rows_verify.sh
set -u
export OUT
exec > >(tee $OUT/log.txt) 2>&1
source bench/device_env.sh
device_setup .dev/x/vkqc
hopper_tree
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for b in vkqc_main vkqc; do
  .dev/x/$b compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,2,4,8 -o /tmp/1b_$b.vkqb > /dev/null || exit 1
  .dev/x/$b compile /tmp/1b/graph.json --target $TREE --tokens 1,8 -o /tmp/1bt_$b.vkqb > /dev/null || exit 1
done
.dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 8 --gemv-max-m 8 -o /tmp/1b_g8.vkqb > /dev/null || exit 1
t "compiled"
for round in 1 2; do
  for n in 1 2 4 8; do
    for b in vkqc_main vkqc; do whole $b /tmp/1b_$b.vkqb "r$round $b 1b $n token(s) at 128" --tokens $n --position 128 --min-ms 300; done
  done
  whole vkqc /tmp/1b_g8.vkqb "r$round vkqc --gemv-max-m 8: 1b 8 token(s) at 128" --tokens 8 --position 128 --min-ms 300
  for n in 1 8; do
    for b in vkqc_main vkqc; do whole $b /tmp/1bt_$b.vkqb "r$round $b tree 1b $n token(s) at 128" --tokens $n --position 128 --min-ms 300; done
  done
done
LB="vkqc_main vkqc"
[ -x .dev/x/vkqc_chunk ] && LB="$LB vkqc_chunk"
t "long-K wide int4 layers"
BINS="$LB" MODES="sel:" TOKENS="1 2 4 5 6 8" LAYERS="14336 4096 dq8ca q4gsw;8192 28672 dq8ca q4gsw" \
  timeout 150 bash bench/device_smallm2.sh
t "wide short-K int4 layers at M = 8: the selection (cooperative matrix) against the several-row GEMV"
BINS=vkqc MODES="sel:;gemv:--force-kernel gemv" TOKENS="1 4 8" LAYERS="4096 14336 dq8ca q4gsw;2048 8192 dq8ca q4gsw;2048 16384 dq8ca q4gsw" \
  timeout 120 bash bench/device_smallm2.sh
t "pipeline statistics, 14336x4096 at M = 8"
python3 bench/gen_linear.py /tmp/lg 14336 4096 dq8ca q4gsw 32 > /dev/null
for b in $LB; do
  .dev/x/$b compile /tmp/lg/graph.json --target nvidia-hopper --tokens 8 -o /tmp/lg_$b.vkqb > /dev/null || continue
  echo "== $b"; timeout 60 .dev/x/$b bench /tmp/lg_$b.vkqb --tokens 8 --min-ms 20 --pipeline-stats 2>&1 | tail -8
done
t done
