#!/usr/bin/env bash
# Device call of 2026-11-29 (session 12): the one-row decode attention with subgroup reductions.
# vkqc_old: main (15a99e0); vkqc_sg1: the combine without its preload and the block's online
# softmax per query in one subgroup (one barrier instead of five); vkqc_sg2: also the combine's
# maxima / weights / sum per query in one subgroup (one barrier instead of four). 1b one-token
# program at positions 128, 512 and 2032, two rounds; references; the decode step attributed
# (vkqc_sg2); the decoder / row-fusion GPU tests with validation on the probed profile (vkqc_sg2's).
export OUT
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc_sg2
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
V="old sg1 sg2"
for v in $V; do
  .dev/x/vkqc_$v compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,4 -o /tmp/1b_$v.vkqb > /dev/null || exit 1
done
t compiled
for round in 1 2; do for pos in 128 512 2032; do for v in $V; do
  timeout 60 .dev/x/vkqc_$v bench /tmp/1b_$v.vkqb --tokens 1 --position $pos --min-ms 300 > /tmp/b.txt 2>&1
  echo "r$round position $pos $v: $(grep 'whole program' /tmp/b.txt | head -1)"
done; done; done
for v in old sg2; do
  timeout 60 .dev/x/vkqc_$v bench /tmp/1b_$v.vkqb --tokens 4 --position 128 --min-ms 300 > /tmp/b.txt 2>&1
  echo "4 tokens position 128 $v: $(grep 'whole program' /tmp/b.txt | head -1)"
done
t "references"
for v in sg1 sg2; do
  echo "$v: $(timeout 200 .dev/x/vkqc_$v run /tmp/1b_$v.vkqb --tokens 1 --reference /tmp/1b/graph.json 2>&1 | grep -E 'output' | tr '\n' ' ')"
done
t "attribute"
timeout 200 .dev/x/vkqc_sg2 bench /tmp/1b_sg2.vkqb --tokens 1 --position 128 --min-ms 200 --attribute > $OUT/attr_sg2.txt 2>&1
echo "rc=$?"; grep 'whole program' $OUT/attr_sg2.txt; sed -n '/^cost inside/,$p' $OUT/attr_sg2.txt | grep -E "attention|control|o_proj"
t "GPU tests"
VKQC_TEST_PROFILE=$P timeout 300 .dev/x/vkqc_gpu_tests --gtest_filter='Decoder.*:RowFusion.*:GreedyDecode*' > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED|SKIPPED)|Failure' $OUT/tests.log | head
t done
