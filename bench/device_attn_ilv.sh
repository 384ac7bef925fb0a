#!/usr/bin/env bash
# Device call of 2026-11-29 (session 13), after bench/device_attn_vec.sh: the 16-byte cache loads
# (main after this session) against the same loads with a key's TPK invocations taking turns by
# vectors (DIAG_ILV: each load's lane pairs then read one 32-byte sector instead of two). One
# binary with the diagnostic hook VKQC_DIAG_ATTN (not in main: adds defines to
# attention_decode.comp); without it its kernels are main's.
export OUT
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
declare -A ENV=([vec]="" [ilv]="VKQC_DIAG_ATTN=DIAG_ILV")
V="vec ilv"
for v in $V; do
  env ${ENV[$v]} .dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,4 -o /tmp/1b_$v.vkqb > /dev/null || exit 1
done
t compiled
b() { timeout 60 .dev/x/vkqc bench /tmp/1b_$2.vkqb --tokens ${4:-1} --position $1 --min-ms 300 > /tmp/b.txt 2>&1
  echo "$3 position $1 $2: $(grep 'whole program' /tmp/b.txt | head -1 | sed 's/whole program without per-layer timestamps//')"; }
for round in 1 2; do for pos in 128 2032; do for v in $V; do b $pos $v r$round; done; done; done
for v in $V; do b 512 $v r1; done
for v in $V; do b 128 $v "4 tokens" 4; done
t "GPU tests (main, then DIAG_ILV)"
VKQC_TEST_PROFILE=$P timeout 200 .dev/x/vkqc_gpu_tests --gtest_filter='Decoder.*DecodeAttention*' > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED|SKIPPED)|Failure' $OUT/tests.log | head -5
VKQC_DIAG_ATTN=DIAG_ILV VKQC_TEST_PROFILE=$P timeout 200 .dev/x/vkqc_gpu_tests --gtest_filter='Decoder.*DecodeAttention*' > $OUT/tests_ilv.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED|SKIPPED)|Failure' $OUT/tests_ilv.log | head -5
t done
