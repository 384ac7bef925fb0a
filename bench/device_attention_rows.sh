#!/usr/bin/env bash
# One device call (issue 15): the decode attention for programs of 1-8 rows (vkqc, this tree)
# against a previous main (vkqc_prev): the 1b 1/2/4/8-token programs at context 128 and 2032, two
# rounds (whole program without timestamps, attention per-layer sums with timestamps); then the
# decoder / row-fusion GPU tests with validation on the probed profile. Pack stripped vkqc,
# vkqc_prev and vkqc_gpu_tests into .dev/bin.tar.xz; carry .gl and .dev.
export OUT
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for b in vkqc_prev vkqc; do
  .dev/x/$b compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,2,4,8 ${FLAGS:-} -o /tmp/1b_$b.vkqb > /dev/null 2>&1 || echo "$b compile failed"
done
t compiled
timeout 30 .dev/x/vkqc bench /tmp/1b_vkqc.vkqb --tokens 8 --position 128 --min-ms 2000 > /dev/null 2>&1
for round in 1 2; do for pos in 128 2032; do for tok in 1 2 4 8; do for b in vkqc_prev vkqc; do
  timeout 30 .dev/x/$b bench /tmp/1b_$b.vkqb --tokens $tok --position $pos --min-ms 400 > /tmp/b.txt 2>&1
  echo "r$round pos $pos tokens $tok $b: $(grep 'whole program' /tmp/b.txt | grep -oE '[0-9.]+ us' | head -1) attention $(awk '$1 ~ /attention$/ {s+=$3} END {print s}' /tmp/b.txt)"
done; done; done; done
t "decoder / row fusion tests"
VKQC_TEST_PROFILE=$P timeout 240 .dev/x/vkqc_gpu_tests --gtest_filter='Decoder.*:RowFusion.*' > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED)|Failure' $OUT/tests.log | head -10
t done
