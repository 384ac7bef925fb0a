#!/usr/bin/env bash
# First device call of session 20 (2026-12-07): the several-row GEMV's epilogue, old (0ddfdbc:
# one row after another) against this tree (every row at once; with subgroups as in main, and
# now the shared-memory tree too), same machine:
#   1. the 1b example's 1/2/4/8-token steps at position 128 on the built-in nvidia-hopper
#      profile (subgroup reduction), two alternating rounds, and the 8-token program per op;
#   2. the same on "hopper-tree": nvidia-hopper with tuned_subgroup_size 0, so every GEMV takes
#      the shared-memory tree (the phone built-ins' path), 8- and 1-token steps, per op;
#   3. single decode shapes at M = 1/2/4/8 (the selection's kernel), both profiles;
#   4. lm_head alone (2048x128256 q8csw): the selection against the GEMV at M = 1/4/8.
# Everything printed also goes to $OUT/log.txt. Carry .gl and .dev (.dev/bin.tar.xz: vkqc_old,
# vkqc). usage (on the device, repo root): bash bench/device_rows_tree.sh
set -u
export OUT
exec > >(tee $OUT/log.txt) 2>&1
source bench/device_env.sh
device_setup .dev/x/vkqc
hopper_tree
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for b in vkqc_old vkqc; do
  .dev/x/$b compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,2,4,8 -o /tmp/1b_$b.vkqb > /dev/null || exit 1
  .dev/x/$b compile /tmp/1b/graph.json --target $TREE --tokens 1,8 -o /tmp/1bt_$b.vkqb > /dev/null || exit 1
done
.dev/x/vkqc inspect /tmp/1bt_vkqc.vkqb 2>&1 | grep -m2 -oE "shared-memory tree reduction|subgroupAdd reduction[^;]*"
t "compiled"
for round in 1 2; do
  for n in 1 2 4 8; do
    for b in vkqc_old vkqc; do whole $b /tmp/1b_$b.vkqb "r$round $b 1b $n token(s) at 128" --tokens $n --position 128 --min-ms 300; done
  done
done
t "tree profile"
for round in 1 2; do
  for n in 8 1; do
    for b in vkqc_old vkqc; do whole $b /tmp/1bt_$b.vkqb "r$round $b tree 1b $n token(s) at 128" --tokens $n --position 128 --min-ms 300; done
  done
done
t "reference"
.dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 8 --keep-intermediates -o /tmp/1b_k.vkqb > /dev/null || exit 1
echo "1b 8 tokens per op: $(timeout 120 .dev/x/vkqc run /tmp/1b_k.vkqb --tokens 8 --reference /tmp/1b/graph.json --per-op 2>&1 | grep -E 'failed|PASS|FAIL' | tr '\n' ' ')"
.dev/x/vkqc compile /tmp/1b/graph.json --target $TREE --tokens 8 --keep-intermediates -o /tmp/1bt_k.vkqb > /dev/null || exit 1
echo "1b tree 8 tokens per op: $(timeout 120 .dev/x/vkqc run /tmp/1bt_k.vkqb --tokens 8 --reference /tmp/1b/graph.json --per-op 2>&1 | grep -E 'failed|PASS|FAIL' | tr '\n' ' ')"
t "single layers"
MODES="sel:" BINS="vkqc_old vkqc" TOKENS="1 2 4 8" LAYERS="8192 2048 dq8ca q4gsw;2048 8192 dq8ca q4gsw;4096 14336 dq8ca q4gsw;14336 4096 dq8ca q4gsw" \
  timeout 200 bash bench/device_smallm2.sh
t "single layers, tree profile"
TARGET=$TREE MODES="sel:" BINS="vkqc_old vkqc" TOKENS="1 2 4 8" LAYERS="2048 8192 dq8ca q4gsw;8192 2048 dq8ca q4gsw" \
  timeout 80 bash bench/device_smallm2.sh
t "lm_head alone (2048x128256 q8csw): the selection (cooperative matrix from M = 4) against the GEMV"
MODES="sel:;gemv:--force-kernel gemv" BINS="vkqc" TOKENS="1 4 8" LAYERS="2048 128256 dq8ca q8csw" timeout 100 bash bench/device_smallm2.sh
t done
