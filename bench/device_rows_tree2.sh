#!/usr/bin/env bash
# Second device call of session 20 (2026-12-07). The first (bench/device_rows_tree.sh) found the
# 1b one-token step on "hopper-tree" (nvidia-hopper with tuned_subgroup_size 0: every GEMV on
# the shared-memory tree) 935 -> 941 us with the tree's all-rows epilogue compiled into one-row
# GEMVs too (dead there). Binaries (.dev/bin.tar.xz): vkqc_old (0ddfdbc), vkqc_new (that call's),
# vkqc (VKQC_ROWS: epilogue_rows compiled only into several-row GEMVs), vkqc_d (vkqc with the
# one-row path's stores written out as before the store helpers). Then the end-to-end 8-token
# reference of old and new, int8-weight (q8csw) decode shapes on the selection against the GEMV
# at M = 1/4/8, and the linear and decoder GPU tests with validation on the probed profile and
# on hopper-tree. Everything printed also goes to $OUT/log.txt.
# usage (on the device, repo root): bash bench/device_rows_tree2.sh
set -u
export OUT
exec > >(tee $OUT/log.txt) 2>&1
source bench/device_env.sh
device_setup .dev/x/vkqc
.dev/x/vkqc probe -o $P > /dev/null || exit 1
hopper_tree
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
BINS="vkqc_old vkqc_new vkqc vkqc_d"
for b in $BINS; do
  .dev/x/$b compile /tmp/1b/graph.json --target $TREE --tokens 1,8 -o /tmp/1bt_$b.vkqb > /dev/null || exit 1
done
for b in vkqc_old vkqc; do
  .dev/x/$b compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,8 -o /tmp/1b_$b.vkqb > /dev/null || exit 1
done
t "compiled"
for round in 1 2; do
  for n in 1 8; do
    for b in $BINS; do whole $b /tmp/1bt_$b.vkqb "r$round $b tree 1b $n token(s) at 128" --tokens $n --position 128 --min-ms 300; done
    for b in vkqc_old vkqc; do whole $b /tmp/1b_$b.vkqb "r$round $b hopper 1b $n token(s) at 128" --tokens $n --position 128 --min-ms 300; done
  done
done
t "end to end, 8 tokens"
for b in vkqc_old vkqc; do
  echo "$b hopper: $(timeout 60 .dev/x/$b run /tmp/1b_$b.vkqb --tokens 8 --reference /tmp/1b/graph.json 2>&1 | grep -E 'PASS|FAIL' | tr '\n' ' ')"
done
t "q8csw decode shapes: selection against the GEMV"
MODES="sel:;gemv:--force-kernel gemv" BINS="vkqc" TOKENS="1 4 8" \
  LAYERS="2048 8192 dq8ca q8csw;8192 2048 dq8ca q8csw;4096 14336 dq8ca q8csw;14336 4096 dq8ca q8csw" timeout 100 bash bench/device_smallm2.sh
F='All/LinearVariants*:All/Int4Combos*:Int4.*:RowFusion.*:Decoder.*'
t "GPU tests, probed profile (validation on)"
VKQC_TEST_PROFILE=$P timeout 150 .dev/x/vkqc_gpu_tests --gtest_filter="$F" > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED|SKIPPED)|tests ran|Failure' $OUT/tests.log | head -12
t "GPU tests, hopper-tree (validation on)"
VKQC_TEST_PROFILE=$TREE timeout 150 .dev/x/vkqc_gpu_tests --gtest_filter="$F" > $OUT/tests_tree.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED|SKIPPED)|tests ran|Failure' $OUT/tests_tree.log | head -12
t done
