#!/usr/bin/env bash
# One device call (issue 15, fixed costs): the norms of the 1b example's decode step, vkqc_old (the
# previous main) against vkqc (the norm's row kernel loading its weights with the row) and vkqc
# with `--norm-tail` (o_proj and down_proj compute the norms in their last workgroup); whole
# one-token program at positions 128 and 2032, rounds interleaved; per-layer timestamps of each
# (files); both new programs against the CPU reference; then the row-fusion, decoder and greedy GPU
# tests with validation on the probed profile. Pack stripped vkqc, vkqc_old and vkqc_gpu_tests
# into .dev/bin.tar.xz; carry .gl and .dev.
export OUT
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
.dev/x/vkqc_old compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1 -o /tmp/1b_old.vkqb > /dev/null || exit 1
.dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1 -o /tmp/1b_new.vkqb > /dev/null || exit 1
.dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1 --norm-tail -o /tmp/1b_tail.vkqb > /dev/null || exit 1
for v in old new tail; do .dev/x/vkqc inspect /tmp/1b_$v.vkqb | grep "^program" | sed "s/^/$v: /"; done
t compiled
for round in 1 2; do for v in old new tail; do for pos in 128 2032; do
  B=.dev/x/vkqc; [ $v = old ] && B=.dev/x/vkqc_old
  timeout 60 $B bench /tmp/1b_$v.vkqb --tokens 1 --position $pos --min-ms 1500 > /tmp/b.txt 2>&1
  echo "r$round $v position $pos: $(grep 'whole program' /tmp/b.txt | head -1)"
  [ $round = 1 ] && [ $pos = 128 ] && cp /tmp/b.txt $OUT/bench_$v.txt
done; done; done
t "references"
for v in new tail; do
  echo "$v: $(timeout 200 .dev/x/vkqc run /tmp/1b_$v.vkqb --tokens 1 --reference /tmp/1b/graph.json 2>&1 | grep -E 'output' | tr '\n' ' ')"
done
t "row fusion / decoder / greedy tests"
VKQC_TEST_PROFILE=$P timeout 300 .dev/x/vkqc_gpu_tests --gtest_filter='RowFusion.*:Decoder.*:GreedyDecode.*' > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED)|Failure' $OUT/tests.log | head -10
t done
