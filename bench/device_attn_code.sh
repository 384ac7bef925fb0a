#!/usr/bin/env bash
# Device call of 2026-11-29 (session 12): the decode attention's code. A diagnostic binary (not in
# main) whose VKQC_DIAG_DEFS adds defines to every shader: DIAG_ATT_NOSUB (probe, inexact: no
# subnormal check or integer decode), DIAG_ATT_SUBFIX (exact: blocks holding a subnormal half by
# half2_unpack_exact instead of the integer decode), DIAG_ATT_SUBFIX_ALL (exact: every word by
# half2_unpack_exact, no check), DIAG_ATT_COMBINE_LOOP (the combine without its preload),
# DIAG_ATT_SOFTMAX_SG (scores' sum and online softmax per query in one subgroup of 32, one barrier).
# 1b one-token program at positions 128 and 2032, two rounds; the attention's binary size and
# registers; references; the one-row decode-attention test with each exact variant (validation on).
export OUT
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
V="base NOSUB SUBFIX SUBFIX_ALL COMBINE_LOOP SOFTMAX_SG SUBFIX_ALL+SOFTMAX_SG"
defs() { [ "$1" = base ] && return; echo "$1" | sed 's/^/DIAG_ATT_/; s/+/,DIAG_ATT_/g'; }
for v in $V; do
  VKQC_DIAG_DEFS=$(defs $v) .dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1 -o /tmp/1b_$v.vkqb > /dev/null || exit 1
done
t compiled
for v in $V; do
  timeout 60 .dev/x/vkqc bench /tmp/1b_$v.vkqb --tokens 1 --position 128 --min-ms 50 --pipeline-stats > /tmp/s.txt 2>&1
  echo "$v: $(sed -n '/pipeline statistics/,$p' /tmp/s.txt | grep -oE "\[attention[^]]*\] #[0-9]: Register Count=[0-9]+ Binary Size=[0-9]+" | sort -u | tr '\n' ' ')"
done
for round in 1 2; do for pos in 128 2032; do for v in $V; do
  timeout 60 .dev/x/vkqc bench /tmp/1b_$v.vkqb --tokens 1 --position $pos --min-ms 300 > /tmp/b.txt 2>&1
  echo "r$round position $pos $v: $(grep 'whole program' /tmp/b.txt | head -1)"
done; done; done
t "references"
for v in SUBFIX SUBFIX_ALL SOFTMAX_SG; do
  echo "$v: $(timeout 200 .dev/x/vkqc run /tmp/1b_$v.vkqb --tokens 1 --reference /tmp/1b/graph.json 2>&1 | grep -E 'output' | tr '\n' ' ')"
done
t "decode attention test per variant"
for v in base SUBFIX SUBFIX_ALL SOFTMAX_SG; do
  VKQC_DIAG_DEFS=$(defs $v) VKQC_TEST_PROFILE=$P timeout 120 .dev/x/vkqc_gpu_tests --gtest_filter='Decoder.DecodeAttentionMatchesReference' > /tmp/t.txt 2>&1
  echo "$v rc=$? $(grep -E '^\[  (PASSED|FAILED)' /tmp/t.txt | tr '\n' ' ')"; grep -m3 Failure -A3 /tmp/t.txt
done
t done
