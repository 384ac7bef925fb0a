#!/usr/bin/env bash
# Third device call of session 20 (2026-12-07): the landing candidate (vkqc: the several-row
# epilogue for the shared-memory tree too, compiled only into several-row GEMVs, the one-row
# path as before; nvidia-hopper's coopmat_gemv_max_m 3 -> 8) against vkqc_d (the same kernels,
# the threshold 3) on the 1b's 1/4/8-token steps, two rounds; then the several-row GEMV GPU tests
# with validation on the probed profile and on hopper-tree (tuned_subgroup_size 0).
# Everything printed also goes to $OUT/log.txt. usage: bash bench/device_rows_tree3.sh
set -u
export OUT
exec > >(tee $OUT/log.txt) 2>&1
source bench/device_env.sh
device_setup .dev/x/vkqc
.dev/x/vkqc probe -o $P > /dev/null || exit 1
hopper_tree
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for b in vkqc_d vkqc; do
  .dev/x/$b compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,4,8 -o /tmp/1b_$b.vkqb > /dev/null || exit 1
  echo "$b lm_head: $(.dev/x/$b inspect /tmp/1b_$b.vkqb | grep -oE 'M=[48] [<>]=? GEMV threshold [0-9]+ \(the int8 cooperative-matrix' | sort | uniq -c | tr '\n' ' ')"
done
t "compiled"
for round in 1 2; do
  for n in 1 4 8; do
    for b in vkqc_d vkqc; do whole $b /tmp/1b_$b.vkqb "r$round $b 1b $n token(s) at 128" --tokens $n --position 128 --min-ms 300; done
  done
done
F='Int4.SeveralRowsPerWorkgroupOnGpuProfiles:Int4.Int8InputsAndOutputs:Int4.TunedGemvParameters:Int4.OutputStrideWhenNMod8Is4:RowFusion.*:All/LinearVariants.*gemv*'
for prof in $P $TREE; do
  t "GPU tests, $prof (validation on)"
  VKQC_TEST_PROFILE=$prof timeout 100 .dev/x/vkqc_gpu_tests --gtest_filter="$F" > $OUT/tests_$(basename $prof .json).log 2>&1
  echo "rc=$?"; grep -E '^\[  (PASSED|FAILED|SKIPPED)|tests ran|Failure' $OUT/tests_$(basename $prof .json).log | head -12
done
t done
