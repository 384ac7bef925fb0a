#!/usr/bin/env bash
# One device call (issue 15, small-batch cliff; written in session 22, not yet run): the several-row
# int4 GEMV with the next weight batch loaded before each batch's compute (linear_gemv.comp
# VKQC_ROWS_PIPELINE; select.cc takes it only under the environment VKQC_ROWS_PIPELINE=1) against
# main's kernels, same binary, same machine:
#   1. its GPU test with the probed profile and validation on;
#   2. the decode shapes at M = 1 / 2 / 4 / 8 (dq8ca x q4gsw g32), each program checked against the
#      reference at M = 5 (bench/device_smallm2.sh);
#   3. the 1b example's 2-, 4- and 8-token steps at position 128, nvidia-hopper and hopper-tree,
#      two alternating rounds.
# Hypothesis: at M = 8 a batch's compute (8 rows x 2 channels of dot products per unit) is long
# and the next batch's weights are only requested after it, so each of the ~7 batches per thread
# waits a full memory round trip; 14336x4096 at M = 8 (40.6 us, ~4x its weight stream) should gain
# most, M = 1 is unchanged (one-row GEMVs never take it: their pipelining lost, RESULTS 2026-11-26).
# Carry .gl and .dev (.dev/bin.tar.xz: vkqc, vkqc_gpu_tests). Output also in $OUT/log.txt.
# usage (on the device, repo root): [SKIP_TESTS=1] bash bench/device_rows_pipeline.sh
set -u
export OUT
exec > >(tee $OUT/log.txt) 2>&1
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
hopper_tree
if [ -z "${SKIP_TESTS:-}" ]; then
  t "GPU tests (probed profile, validation on)"
  VKQC_TEST_PROFILE=$P timeout 150 .dev/x/vkqc_gpu_tests --gtest_filter="Int4.PipelinedSeveralRowGemv:Int4.RowsOneAfterAnotherOnLongWideLayers" > $OUT/tests.log 2>&1
  echo "rc=$?"; grep -E '^\[  (PASSED|FAILED)|tests ran|Failure' $OUT/tests.log | head -12
fi
t "single layers"
BINS=vkqc MODES="sel:;pipe:VKQC_ROWS_PIPELINE=1" TOKENS="1 2 4 8" \
  LAYERS="14336 4096 dq8ca q4gsw;8192 28672 dq8ca q4gsw;4096 14336 dq8ca q4gsw;8192 2048 dq8ca q4gsw;2048 8192 dq8ca q4gsw" \
  timeout 200 bash bench/device_smallm2.sh
t "1b steps"
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for tgt in nvidia-hopper $TREE; do
  tn=$([ "$tgt" = "$TREE" ] && echo tree || echo hopper)
  .dev/x/vkqc compile /tmp/1b/graph.json --target $tgt --tokens 2,4,8 -o /tmp/1b_$tn.vkqb > /dev/null || exit 1
  VKQC_ROWS_PIPELINE=1 .dev/x/vkqc compile /tmp/1b/graph.json --target $tgt --tokens 2,4,8 -o /tmp/1b_${tn}_pipe.vkqb > /dev/null || exit 1
done
for round in 1 2; do
  for tn in hopper tree; do
    for n in 2 4 8; do
      for v in "" _pipe; do whole vkqc /tmp/1b_$tn$v.vkqb "r$round $tn$v 1b $n tokens at 128" --tokens $n --position 128 --min-ms 300; done
    done
  done
done
t "the 8-token program against the CPU reference (per op, kept intermediates)"
VKQC_ROWS_PIPELINE=1 .dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 8 --keep-intermediates -o /tmp/1b_keep.vkqb > /dev/null
timeout 120 .dev/x/vkqc run /tmp/1b_keep.vkqb --tokens 8 --reference /tmp/1b/graph.json --per-op 2>&1 | grep -E "failed|PASS|FAIL" | head -3
t done
