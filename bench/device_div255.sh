#!/usr/bin/env bash
# Device call of 2026-12-02 (session 15): dq8ca's scale by div255_rn (an integer division of the
# significand by the constant 255) instead of div_rn, against the previous kernels (`vkqc_old`:
# the session's diagnostic binary with its hooks off, i.e. 0b14d20's kernels), 1b decode step;
# reference checks; the dq8ca / decoder / row-fusion GPU tests with validation on the probed profile.
export OUT
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
.dev/x/vkqc_old compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1 --no-producer-extrema -o /tmp/1b_old.vkqb > /dev/null || exit 1
.dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1 -o /tmp/1b_new.vkqb > /dev/null || exit 1
t compiled
b() { timeout 60 .dev/x/vkqc bench /tmp/1b_$2.vkqb --tokens 1 --position $1 --min-ms 300 > /tmp/b.txt 2>&1
  echo "$3 position $1 $2: $(grep 'whole program' /tmp/b.txt | head -1 | sed 's/whole program without per-layer timestamps//')"; }
for round in 1 2; do for pos in 128 2032; do for v in old new; do b $pos $v r$round; done; done; done
for v in old new; do
  timeout 60 .dev/x/vkqc bench /tmp/1b_$v.vkqb --tokens 1 --position 128 --min-ms 100 > /tmp/l.txt 2>&1
  echo "$v per layer:"; grep -E "layers\.3\.(o_proj|down_proj|input_layernorm|post_attention_layernorm)" /tmp/l.txt | head -4
done
for v in old new; do
  echo "$v: $(timeout 200 .dev/x/vkqc run /tmp/1b_$v.vkqb --tokens 1 --reference /tmp/1b/graph.json 2>&1 | grep -E 'output' | tr '\n' ' ')"
done
t "GPU tests"
VKQC_TEST_PROFILE=$P timeout 200 .dev/x/vkqc_gpu_tests --gtest_filter='Int4.*:Quantize*:Dynamic*:RowFusion.*:Decoder.*:GreedyDecode*' > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED|SKIPPED)|Failure' $OUT/tests.log | head
t done
