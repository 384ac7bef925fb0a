#!/usr/bin/env bash
# Device call of 2026-11-29 (session 11): the 1b example's decode step attributed to its layer
# groups without per-layer timestamps (`vkqc bench --attribute`: each group's dispatches left out,
# vkqc_model_time_without), one and four tokens at position 128, two rounds of the one-token
# program; then the TimeWithout / Roofline GPU tests with validation on the probed profile.
# Pack stripped vkqc and vkqc_gpu_tests into .dev/bin.tar.xz; carry .gl and .dev.
export OUT
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
.dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,4 -o /tmp/1b.vkqb > /dev/null || exit 1
t compiled
for round in 1 2; do
  timeout 200 .dev/x/vkqc bench /tmp/1b.vkqb --tokens 1 --position 128 --min-ms 300 --attribute > $OUT/attr1_r$round.txt 2>&1
  echo "round $round rc=$?"; grep 'whole program' $OUT/attr1_r$round.txt; sed -n '/^cost inside/,$p' $OUT/attr1_r$round.txt
done
t "4 tokens"
timeout 200 .dev/x/vkqc bench /tmp/1b.vkqb --tokens 4 --position 128 --min-ms 300 --attribute > $OUT/attr4.txt 2>&1
echo "rc=$?"; grep 'whole program' $OUT/attr4.txt; sed -n '/^cost inside/,$p' $OUT/attr4.txt
t "tests"
VKQC_TEST_PROFILE=$P timeout 300 .dev/x/vkqc_gpu_tests --gtest_filter='TimeWithout.*:Roofline.*' 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED)|OK \]|Failure' | head
t done
