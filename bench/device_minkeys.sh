#!/usr/bin/env bash
# Device call of 2026-11-29 (session 11), with the binaries of 80933cf (the option was reverted in
# 5901965 after this call: it lost at every context): the decode attention's chunks at short contexts
# (`--decode-attention-min-keys N`): the 1b example's one-token program compiled with N = 0 (the
# compiled 64-position chunks at every context), 128, 256, 512, 1024, whole program at positions
# 128, 512, 1024 and 2032, two rounds interleaved; the attention group's cost inside the step
# (bench --attribute) for 0 and the best; then the decode-attention GPU tests on the probed profile.
export OUT
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
V="0 128 256 512 1024"
for v in $V; do
  .dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,4 --decode-attention-min-keys $v -o /tmp/1b_$v.vkqb > /dev/null || exit 1
done
t compiled
for round in 1 2; do for pos in 128 512 1024 2032; do for v in $V; do
  timeout 60 .dev/x/vkqc bench /tmp/1b_$v.vkqb --tokens 1 --position $pos --min-ms 300 > /tmp/b.txt 2>&1
  echo "r$round position $pos min-keys $v: $(grep 'whole program' /tmp/b.txt | head -1)"
done; done; done
for v in 0 256; do
  timeout 60 .dev/x/vkqc bench /tmp/1b_$v.vkqb --tokens 4 --position 128 --min-ms 300 > /tmp/b.txt 2>&1
  echo "4 tokens position 128 min-keys $v: $(grep 'whole program' /tmp/b.txt | head -1)"
done
t "references"
for v in 0 256; do
  echo "$v: $(timeout 200 .dev/x/vkqc run /tmp/1b_$v.vkqb --tokens 1 --reference /tmp/1b/graph.json 2>&1 | grep -E 'output' | tr '\n' ' ')"
done
t "decode attention tests"
VKQC_TEST_PROFILE=$P timeout 400 .dev/x/vkqc_gpu_tests --gtest_filter='Decoder.DecodeAttentionMatchesReference:Decoder.MultiRowDecodeAttentionMatchesReference:TimeWithout.*' 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED)|OK \]|Failure' | head
t done
