#!/usr/bin/env bash
# One device call (issue 15, fixed costs): sampled generation on the host (`generate --temperature`),
# the 1b example, a 128-token prompt, 64 new tokens after 500 ms of warm-up, two rounds each of
# top-k 40 + top-p 0.95 and of temperature alone, and greedy for reference; `generate` prints the
# host's time per token for reading the logits row and for the choice. fullsort_bench (optional, in
# the pack): the previous sampler's full sort of 128,256 logits on this host's CPU. Pack stripped
# vkqc (and fullsort_bench, vkqc_gpu_tests: the readback, greedy, decoder and async tests with
# validation on the probed profile) into .dev/bin.tar.xz; carry .gl and .dev.
export OUT
source bench/device_env.sh
device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
.dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,16 -o /tmp/1b.vkqb > /dev/null || exit 1
PROMPT=$(seq -s, 100 227)
for round in 1 2; do for args in "--temperature 0.8 --top-k 40 --top-p 0.95" "--temperature 0.8" "--temperature 0"; do
  timeout 120 .dev/x/vkqc generate /tmp/1b.vkqb --prompt-ids "$PROMPT" --max-new-tokens 65 --warmup-ms 500 --seed 3 $args > /tmp/g.txt 2>&1
  echo "r$round $args: $(grep '^decode:' /tmp/g.txt | cut -d';' -f1) | $(grep '^sampling' /tmp/g.txt)"
done; done
[ -x .dev/x/fullsort_bench ] && .dev/x/fullsort_bench
if [ -x .dev/x/vkqc_gpu_tests ]; then
  t "readback / greedy / decoder / async tests"
  .dev/x/vkqc probe -o /tmp/probed.json > /dev/null || exit 1
  VKQC_TEST_PROFILE=/tmp/probed.json timeout 300 .dev/x/vkqc_gpu_tests --gtest_filter='Readback.*:GreedyDecode.*:Decoder.*:Async*' > $OUT/tests.log 2>&1
  echo "rc=$?"; grep -E '^\[  (PASSED|FAILED)|Failure' $OUT/tests.log | head -10
fi
t done
