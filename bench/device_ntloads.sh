#!/usr/bin/env bash
# Device call of 2026-11-29 (session 12): (1) the GEMV weight loads as non-temporal (SPIR-V
# Nontemporal memory operand, VKQC_NT_LOADS through a diagnostic VKQC_DIAG_DEFS hook): whether
# keeping the streamed weights from displacing the kernels' code and activations in L2 shortens
# the decode step; (2) the decode attention's first cache block and rope table loaded at its start
# (vkqc_new) against main's kernel (vkqc_old). 1b example, one-token program, positions 128 and
# 2032, two rounds; references; the decode-attention GPU tests with validation (vkqc_new's).
export OUT
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc_new
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
V="old old_nt new new_nt"
for v in $V; do
  b=${v%_nt}; defs=; [ "$v" != "$b" ] && defs=VKQC_NT_LOADS
  VKQC_DIAG_DEFS=$defs .dev/x/vkqc_$b compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1 -o /tmp/1b_$v.vkqb > /dev/null || exit 1
done
t compiled
for round in 1 2; do for pos in 128 2032; do for v in $V; do
  b=${v%_nt}
  timeout 60 .dev/x/vkqc_$b bench /tmp/1b_$v.vkqb --tokens 1 --position $pos --min-ms 300 > /tmp/b.txt 2>&1
  echo "r$round position $pos $v: $(grep 'whole program' /tmp/b.txt | head -1)"
done; done; done
t "attribute"
for v in old old_nt; do
  timeout 200 .dev/x/vkqc_old bench /tmp/1b_$v.vkqb --tokens 1 --position 128 --min-ms 200 --attribute > $OUT/attr_$v.txt 2>&1
  echo "$v rc=$?"; grep 'whole program' $OUT/attr_$v.txt; sed -n '/^cost inside/,$p' $OUT/attr_$v.txt | head -14
done
t "references"
for v in old_nt new new_nt; do
  b=${v%_nt}
  echo "$v: $(timeout 200 .dev/x/vkqc_$b run /tmp/1b_$v.vkqb --tokens 1 --reference /tmp/1b/graph.json 2>&1 | grep -E 'output' | tr '\n' ' ')"
done
t "decode attention tests"
VKQC_TEST_PROFILE=$P timeout 300 .dev/x/vkqc_gpu_tests --gtest_filter='Decoder.DecodeAttentionMatchesReference:Decoder.MultiRowDecodeAttentionMatchesReference:Decoder.*Rope*' 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED)|OK \]|Failure' | head -20
t done
