#!/usr/bin/env bash
# Device calls of 2026-12-02 (session 16): the dq8ca parameters' divisions from the device's
# quotients corrected with the exact integer remainder, against c79ed84's kernels (`vkqc_old`), 1b
# decode step (one token at positions 128 and 2032, four tokens at 128); per layer; reference
# checks; the dq8ca / decoder / row-fusion GPU tests with validation (calls 1-2: TESTS="Int4.*:Quantize*:
# Dynamic*:RowFusion.*:Decoder.*:GreedyDecode*"; call 3 the default, fewer). Call 1 (VARIANTS="old a b"):
# `a` one branch to div_rn per division, `b` that and every invocation deriving the parameters;
# call 2 (VARIANTS="old c d"): `c` one branch for the three divisions, `d` plain divisions (a probe,
# inexact); call 3 (the default): `e` div_rn with one reciprocal of the scale's significand for the
# three (div_rn_rcp).
export OUT
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc_e
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for v in ${VARIANTS:-old e}; do
  .dev/x/vkqc_$v compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,4 -o /tmp/1b_$v.vkqb > /dev/null || exit 1
done
t compiled
b() { timeout 60 .dev/x/vkqc_e bench /tmp/1b_$2.vkqb --tokens $4 --position $1 --min-ms 300 > /tmp/b.txt 2>&1
  echo "$3 tokens $4 position $1 $2: $(grep 'whole program' /tmp/b.txt | head -1 | sed 's/whole program without per-layer timestamps//')"; }
for round in 1 2; do for pos in 128 2032; do for v in ${VARIANTS:-old e}; do b $pos $v r$round 1; done; done; done
for v in ${VARIANTS:-old e}; do b 128 $v r1 4; done
for v in ${VARIANTS:-old e}; do
  timeout 60 .dev/x/vkqc_e bench /tmp/1b_$v.vkqb --tokens 1 --position 128 --min-ms 100 > /tmp/l.txt 2>&1
  echo "$v per layer:"; grep -E "layers\.3\.(o_proj|down_proj|input_layernorm|post_attention_layernorm|q_proj)" /tmp/l.txt | head -5
done
for v in ${VARIANTS:-old e}; do
  echo "$v: $(timeout 200 .dev/x/vkqc_e run /tmp/1b_$v.vkqb --tokens 1 --reference /tmp/1b/graph.json 2>&1 | grep -E 'output' | tr '\n' ' ')"
done
t "GPU tests"
VKQC_TEST_PROFILE=$P timeout 240 .dev/x/vkqc_gpu_tests --gtest_filter="${TESTS:-Int4.Dq8ca*:RowFusion.SwigluInGemvPrologues:RowFusion.NormInGemvPrologues:Decoder.RmsNormMatchesReference:GreedyDecode*}" > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED|SKIPPED)|Failure' $OUT/tests.log | head
t done
