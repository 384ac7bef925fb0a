#!/usr/bin/env bash
# Device call of 2026-11-29 (session 12): the decode attention's subgroup softmax and combine for
# programs of 2-8 rows too (batched / speculative decoding). vkqc_old: 7a430f9 (one row only);
# vkqc_new: every row count. 1b programs of 2, 4 and 8 tokens at positions 128 and 2032; the
# decode-attention GPU tests with validation on the probed profile (vkqc_new's).
export OUT
source bench/device_env.sh
device_setup .dev/x/vkqc_new
.dev/x/vkqc_new probe -o "$P" > /dev/null || exit 1
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for v in old new; do
  .dev/x/vkqc_$v compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,2,4,8 -o /tmp/1b_$v.vkqb > /dev/null || exit 1
done
t compiled
for round in 1 2; do for pos in 128 2032; do for n in 2 4 8; do for v in old new; do
  timeout 60 .dev/x/vkqc_$v bench /tmp/1b_$v.vkqb --tokens $n --position $pos --min-ms 150 > /tmp/b.txt 2>&1
  echo "r$round position $pos tokens $n $v: $(grep 'whole program' /tmp/b.txt | head -1)"
done; done; done; done
t "GPU tests"
VKQC_TEST_PROFILE=$P timeout 200 .dev/x/vkqc_gpu_tests --gtest_filter='Decoder.*DecodeAttention*' 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED)|OK \]|Failure' | head
t done
