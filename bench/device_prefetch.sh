#!/usr/bin/env bash
# One device call (issue 15, fixed costs): weight prefetch in the 1b example's decode step
# (`--prefetch-max-bytes`, compiler/passes/prefetch.h): the same binary compiling the one-token
# program without prefetch and with budgets of 8, 24 and 64 MiB per interval; whole program at
# positions 128 and 2032, rounds interleaved; per-layer timestamps of each (files); the prefetching
# programs against the CPU reference; then the prefetch, row-fusion and greedy GPU tests with
# validation on the probed profile. Pack stripped vkqc and vkqc_gpu_tests into .dev/bin.tar.xz;
# carry .gl and .dev.
export OUT
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
V="0 8 24 64"
for v in $V; do
  .dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,4 --prefetch-max-bytes $((v << 20)) -o /tmp/1b_$v.vkqb > /dev/null || exit 1
  echo "$v MiB: $(.dev/x/vkqc inspect /tmp/1b_$v.vkqb | grep -c 'then prefetches') layers prefetch; $(.dev/x/vkqc inspect /tmp/1b_$v.vkqb | grep '^program' | tr '\n' ' ')"
done
.dev/x/vkqc inspect /tmp/1b_64.vkqb > $OUT/inspect_64.txt
t compiled
for round in 1 2; do for v in $V; do for pos in 128 2032; do
  timeout 60 .dev/x/vkqc bench /tmp/1b_$v.vkqb --tokens 1 --position $pos --min-ms 1500 > /tmp/b.txt 2>&1
  echo "r$round ${v} MiB position $pos: $(grep 'whole program' /tmp/b.txt | head -1)"
  [ $round = 1 ] && [ $pos = 128 ] && cp /tmp/b.txt $OUT/bench_$v.txt
done; done; done
for v in 0 64; do
  timeout 60 .dev/x/vkqc bench /tmp/1b_$v.vkqb --tokens 4 --position 128 --min-ms 1500 > /tmp/b.txt 2>&1
  echo "4 tokens ${v} MiB position 128: $(grep 'whole program' /tmp/b.txt | head -1)"
done
t "references"
for v in 24 64; do
  echo "$v: $(timeout 200 .dev/x/vkqc run /tmp/1b_$v.vkqb --tokens 1 --reference /tmp/1b/graph.json 2>&1 | grep -E 'output' | tr '\n' ' ')"
done
t "prefetch / row fusion / greedy tests"
VKQC_TEST_PROFILE=$P timeout 300 .dev/x/vkqc_gpu_tests --gtest_filter='Prefetch.*:RowFusion.*:GreedyDecode.*' > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED)|Failure' $OUT/tests.log | head -10
t done
