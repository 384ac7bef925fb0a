#!/usr/bin/env bash
# Session 24's verification call: the landed rule (8 rows as two row blocks of 4, select.cc
# TwoRowBlocks) in the binary that lands it, against main before it. .dev/bin.tar.xz: vkqc_old
# (6439ea2), vkqc (87acc24), vkqc_gpu_tests (87acc24). In order of importance (a call cut at its
# limit keeps the most):
#   1. the 1b example at position 128, nvidia-hopper: 8 and 1 tokens old / new, two rounds;
#   2. GPU tests with the probed profile, validation on (the row-block, pipelined, several-row and
#      pair tests);
#   3. hopper-tree (the phones' reduction): the 8-token step old / new; 2 and 4 tokens on nvidia-hopper;
#   4. single layers at M = 8 (the rule's kernels), each reference-checked at M = 5.
# Carry .gl and .dev. Output also in $OUT/log.txt.
set -u
export OUT
exec > >(tee $OUT/log.txt) 2>&1
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
hopper_tree
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for b in old new; do
  bin=$([ $b = old ] && echo vkqc_old || echo vkqc)
  .dev/x/$bin compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,2,4,8 -o /tmp/1b_$b.vkqb > /dev/null || exit 1
done
t "1b steps"
for r in 1 2; do
  for n in 8 1; do
    for b in old new; do
      whole $([ $b = old ] && echo vkqc_old || echo vkqc) /tmp/1b_$b.vkqb "r$r $b 1b $n tokens at 128" --tokens $n --position 128 --min-ms 300
    done
  done
done
t "GPU tests (probed profile, validation on)"
VKQC_TEST_PROFILE=$P timeout 120 .dev/x/vkqc_gpu_tests --gtest_filter="Int4.TwoRowBlocks*:Int4.Pipelined*:Int4.RowsOneAfterAnother*:Int4.SeveralRows*:RowFusion.GateUpPairs*" > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED)|tests ran|Failure' $OUT/tests.log | head -12
t "tree 8 tokens; 2 and 4 tokens"
for b in old new; do
  $([ $b = old ] && echo .dev/x/vkqc_old || echo .dev/x/vkqc) compile /tmp/1b/graph.json --target $TREE --tokens 8 -o /tmp/1b_tree_$b.vkqb > /dev/null || exit 1
done
for b in old new; do whole $([ $b = old ] && echo vkqc_old || echo vkqc) /tmp/1b_tree_$b.vkqb "tree $b 1b 8 tokens at 128" --tokens 8 --position 128 --min-ms 300; done
for n in 4 2; do
  for b in old new; do whole $([ $b = old ] && echo vkqc_old || echo vkqc) /tmp/1b_$b.vkqb "$b 1b $n tokens at 128" --tokens $n --position 128 --min-ms 300; done
done
t "single layers at M = 8"
BINS="vkqc_old vkqc" MODES="sel:" TOKENS="8" \
  LAYERS="14336 4096 dq8ca q4gsw;4096 14336 dq8ca q4gsw;8192 2048 dq8ca q4gsw;2048 8192 dq8ca q4gsw;8192 28672 dq8ca q4gsw" timeout 150 bash bench/device_smallm2.sh
t done
