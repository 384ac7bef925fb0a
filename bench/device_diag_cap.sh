#!/usr/bin/env bash
# Device call of 2026-11-29 (session 11), a diagnostic binary (not in main): 5901965 with the decode
# kernel taking blocks of 32 keys first and a run-time cap on active chunks (MAX_ACTIVE, spec constant
# 8: past CHUNK x cap positions the chunks grow), both overridable by $VKQC_DIAG_DECODE_BK and
# $VKQC_DIAG_DECODE_CAP. Configurations A (64 keys, no cap: main), B (32, 16), C (32, 32), D (32, 8).
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
cfg() { case $1 in A) echo "64 0";; B) echo "32 16";; C) echo "32 32";; D) echo "32 8";; esac; }
for c in A B C D; do
  set -- $(cfg $c)
  VKQC_DIAG_DECODE_BK=$1 VKQC_DIAG_DECODE_CAP=$2 .dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,4 -o /tmp/1b_$c.vkqb > /dev/null || exit 1
done
.dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,4 -o /tmp/1b_default.vkqb > /dev/null || exit 1
cmp /tmp/1b_default.vkqb /tmp/1b_B.vkqb && echo "default == B"
.dev/x/vkqc inspect /tmp/1b_default.vkqb | grep -m1 -A3 "attention_decode" | cut -c1-400
t compiled
for round in 1 2; do for pos in 128 512 1024 2032; do for c in A B C D; do
  timeout 60 .dev/x/vkqc bench /tmp/1b_$c.vkqb --tokens 1 --position $pos --min-ms 250 > /tmp/b.txt 2>&1
  echo "r$round position $pos $c($(cfg $c)): $(grep 'whole program' /tmp/b.txt | head -1 | sed 's/whole program without per-layer timestamps: //')"
done; done; done
for c in A B; do
  timeout 60 .dev/x/vkqc bench /tmp/1b_$c.vkqb --tokens 4 --position 128 --min-ms 250 > /tmp/b.txt 2>&1
  echo "4 tokens position 128 $c: $(grep 'whole program' /tmp/b.txt | head -1)"
done
t "decode attention tests (the default rule)"
VKQC_TEST_PROFILE=$P timeout 300 .dev/x/vkqc_gpu_tests --gtest_filter='Decoder.DecodeAttentionMatchesReference:Decoder.MultiRowDecodeAttentionMatchesReference:GreedyDecode.*' 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED)|OK \]|Failure' | head
t done
