#!/usr/bin/env bash
# One device call (issue 15, branch attention-batched-loads): the per-row / split / tiled attention kernels' loads in batches of 8 and f16
# words by unpackHalf2x16 (vkqc, this branch) against main (vkqc_prev): the 1b 2/4/8-token programs, then
# the decoder GPU tests with validation.
export OUT
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for b in vkqc_prev vkqc; do
  .dev/x/$b compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,2,4,8 -o /tmp/1b_$b.vkqb > /dev/null 2>&1 || echo "$b compile failed"
done
timeout 30 .dev/x/vkqc bench /tmp/1b_vkqc.vkqb --tokens 8 --position 128 --min-ms 2000 > /dev/null 2>&1
for t in 2 4 8 1; do for b in vkqc_prev vkqc; do
  timeout 30 .dev/x/$b bench /tmp/1b_$b.vkqb --tokens $t --position 128 --min-ms 500 > /tmp/b.txt 2>&1
  echo "$b tokens $t: $(grep 'whole program' /tmp/b.txt | grep -oE '[0-9.]+ us') attention $(awk '$1 ~ /attention$/ {s+=$3} END {print s}' /tmp/b.txt)"
done; done
t "decoder tests"
VKQC_TEST_PROFILE=$P timeout 100 .dev/x/vkqc_gpu_tests --gtest_filter='Decoder.*' > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED)|Failure' $OUT/tests.log | head -6
t done
