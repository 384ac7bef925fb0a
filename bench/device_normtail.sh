#!/usr/bin/env bash
# One device call (issue 15, fixed costs): the norm tail (compiler/kernels/norm/tail.h) in the 1b
# example's decode step: vkqc_old (the previous main: a row kernel per norm) against vkqc (the
# o_proj and down_proj GEMVs compute the norms in their last workgroup), whole one-token program
# at positions 128 and 2032, rounds interleaved; greedy generation (tokens of both, wall time per
# token); both one-token programs against the CPU reference; then the row-fusion, decoder and
# greedy GPU tests with validation on the probed profile. Pack stripped vkqc, vkqc_old and
# vkqc_gpu_tests into .dev/bin.tar.xz; carry .gl and .dev.
export OUT
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for v in old new; do
  B=.dev/x/vkqc; [ $v = old ] && B=.dev/x/vkqc_old
  $B compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1 -o /tmp/1b_$v.vkqb > /dev/null || exit 1
  $B inspect /tmp/1b_$v.vkqb | grep "^program"
done
t compiled
for round in 1 2; do for v in old new; do for pos in 128 2032; do
  B=.dev/x/vkqc; [ $v = old ] && B=.dev/x/vkqc_old
  timeout 60 $B bench /tmp/1b_$v.vkqb --tokens 1 --position $pos --min-ms 1500 > /tmp/b.txt 2>&1
  echo "r$round $v position $pos: $(grep 'whole program' /tmp/b.txt | head -1)"
  [ $round = 1 ] && [ $pos = 128 ] && cp /tmp/b.txt $OUT/bench_$v.txt
done; done; done
PROMPT=$(seq -s, 100 227)
for round in 1 2; do for v in old new; do
  B=.dev/x/vkqc; [ $v = old ] && B=.dev/x/vkqc_old
  timeout 120 $B generate /tmp/1b_$v.vkqb --prompt-ids "$PROMPT" --max-new-tokens 129 --warmup-ms 500 > /tmp/g.txt 2>&1
  echo "r$round $v generate: $(grep '^decode:' /tmp/g.txt | cut -d';' -f1) tokens md5 $(grep '^tokens:' /tmp/g.txt | md5sum | cut -c1-8)"
  [ $round = 1 ] && grep '^tokens:' /tmp/g.txt | cut -c1-200
done; done
t "references"
for v in old new; do
  B=.dev/x/vkqc; [ $v = old ] && B=.dev/x/vkqc_old
  echo "$v: $(timeout 200 $B run /tmp/1b_$v.vkqb --tokens 1 --reference /tmp/1b/graph.json 2>&1 | grep -E 'output' | tr '\n' ' ')"
done
t "row fusion / decoder / greedy tests"
VKQC_TEST_PROFILE=$P timeout 300 .dev/x/vkqc_gpu_tests --gtest_filter='RowFusion.*:Decoder.*:GreedyDecode.*' > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED)|Failure' $OUT/tests.log | head -10
t done
