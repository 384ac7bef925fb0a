#!/usr/bin/env bash
# Second device call on the pipelined several-row int4 GEMV (session 23: run once with QUICK=1,
# bench/RESULTS.md session 23 call 2), after device_rows_pipeline.sh (1b 4-token step 1185 -> 1133 us; 2 rows and
# the long layers at 8 rows lose; landed: the variant at exactly 4 rows). .dev/bin.tar.xz as packed
# in session 23 (kept in /tmp/devstash/s23 while that machine lives): vkqc_old (2cb6b46), vkqc
# (3b2d41f: a provisional rule, 3-4 rows except long rows with N > 16384; VKQC_ROWS_PIPELINE=0/1 at
# compile time forces it off/on; and the several-row variants without the dead one-row loop after
# epilogue_rows, so old against rule at 2 and 8 tokens times that #else alone), vkqc_gpu_tests.
# In order of importance, so a call cut at its limit keeps the most:
#   1. the 1b example's 3/5/6/7-token steps, old against forced on; 1/2/4/8 old against the rule;
#   2. GPU tests (probed profile, validation on); the rule's 4-token program per op;
#   3. the long-K wide single layers at M = 3 / 5 / 6 / 7, forced off and on;
#   4. a second nvidia-hopper round and a hopper-tree round of (1);
#   5. per-layer timestamps of the 4- and 8-token steps, old against forced on, per layer kind.
# QUICK=1: nvidia-hopper only, (1) and (3) (no probe, tests, per-op check, second rounds, timestamps).
# Carry .gl and .dev. Output also in $OUT/log.txt.
set -u
export OUT
exec > >(tee $OUT/log.txt) 2>&1
source bench/device_env.sh
PROBE=$([ -n "${QUICK:-}" ] || echo 1) device_setup .dev/x/vkqc
hopper_tree
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
t "compiles"
for tgt in nvidia-hopper $([ -n "${QUICK:-}" ] || echo $TREE); do
  tn=$([ "$tgt" = "$TREE" ] && echo tree || echo hopper)
  tk=$([ $tn = tree ] && echo 3,5,6,7 || echo 1,2,3,4,5,6,7,8)
  .dev/x/vkqc_old compile /tmp/1b/graph.json --target $tgt --tokens $tk -o /tmp/1b_${tn}_old.vkqb > /dev/null || exit 1
  VKQC_ROWS_PIPELINE=1 .dev/x/vkqc compile /tmp/1b/graph.json --target $tgt --tokens $tk -o /tmp/1b_${tn}_pipe.vkqb > /dev/null || exit 1
done
.dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,2,4,8 -o /tmp/1b_hopper_rule.vkqb > /dev/null || exit 1
steps() {  # steps ROUND PROFILE "TOKENS" "VARIANTS"
  for n in $3; do
    for v in $4; do whole vkqc /tmp/1b_${2}_$v.vkqb "r$1 $2 $v 1b $n tokens at 128" --tokens $n --position 128 --min-ms 300; done
  done
}
t "whole programs"
steps 1 hopper "3 5 6 7" "old pipe"
steps 1 hopper "1 2 4 8" "old rule"
if [ -z "${QUICK:-}" ]; then
t "GPU tests (probed profile, validation on)"
VKQC_TEST_PROFILE=$P timeout 150 .dev/x/vkqc_gpu_tests --gtest_filter="Int4.Pipelined*:Int4.RowsOneAfterAnother*:Int4.SeveralRows*:RowFusion.*" > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED)|tests ran|Failure' $OUT/tests.log | head -12
t "the rule's 4-token program per op"
.dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 4 --keep-intermediates -o /tmp/1b_keep.vkqb > /dev/null
timeout 120 .dev/x/vkqc run /tmp/1b_keep.vkqb --tokens 4 --reference /tmp/1b/graph.json --per-op 2>&1 | grep -E "failed|PASS|FAIL" | head -3
fi
t "single layers"
BINS=vkqc MODES="off:VKQC_ROWS_PIPELINE=0;pipe:VKQC_ROWS_PIPELINE=1" TOKENS="3 5 6 7" \
  LAYERS="14336 4096 dq8ca q4gsw;8192 28672 dq8ca q4gsw" timeout 150 bash bench/device_smallm2.sh
[ -n "${QUICK:-}" ] && { t done; exit 0; }
t "more rounds"
steps 2 hopper "3 5 6 7" "old pipe"
steps 1 tree "3 5 6 7" "old pipe"
t "per layer (timestamps)"
for n in 4 8; do
  for v in old pipe; do
    timeout 60 .dev/x/vkqc bench /tmp/1b_hopper_$v.vkqb --tokens $n --position 128 --min-ms 300 > /tmp/l.txt 2>&1
    echo "hopper $v $n tokens: $(grep 'whole program' /tmp/l.txt | head -1 | sed 's/whole program//') | $(awk '$1 ~ /^layers\./ {split($1, a, "."); s[a[3]] += $3} END {for (k in s) printf "%s %.1f; ", k, s[k]}' /tmp/l.txt)"
  done
done
t done
