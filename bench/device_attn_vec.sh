#!/usr/bin/env bash
# Device call of 2026-11-29 (session 13), after bench/device_attn_diag.sh: the decode attention's
# vector loads and what else shortens its block. One binary with diagnostic hooks (not in main:
# VKQC_DIAG_VEC4 = the cache words as uvec4, VKQC_DIAG_QS4 = the queries read as vec4 in the score
# phase, VKQC_DIAG_ATTN=DIAG_PV_ROLL = the PV loop not unrolled, VKQC_DIAG_BK forces the block);
# without them its kernels are main's.
export OUT
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
declare -A ENV=([main]="" [v]="VKQC_DIAG_VEC4=1" [vq]="VKQC_DIAG_VEC4=1 VKQC_DIAG_QS4=1"
  [vr]="VKQC_DIAG_VEC4=1 VKQC_DIAG_ATTN=DIAG_PV_ROLL" [vqr]="VKQC_DIAG_VEC4=1 VKQC_DIAG_QS4=1 VKQC_DIAG_ATTN=DIAG_PV_ROLL"
  [v32]="VKQC_DIAG_VEC4=1 VKQC_DIAG_BK=32" [vq32]="VKQC_DIAG_VEC4=1 VKQC_DIAG_QS4=1 VKQC_DIAG_BK=32")
V="main v vq vr vqr v32 vq32"
for v in $V; do
  env ${ENV[$v]} .dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1 -o /tmp/1b_$v.vkqb > /dev/null || exit 1
done
t compiled
b() { timeout 60 .dev/x/vkqc bench /tmp/1b_$2.vkqb --tokens 1 --position $1 --min-ms 300 > /tmp/b.txt 2>&1
  echo "$3 position $1 $2: $(grep 'whole program' /tmp/b.txt | head -1 | sed 's/whole program without per-layer timestamps//')"; }
for round in 1 2; do for pos in 128 2032; do for v in $V; do b $pos $v r$round; done; done; done
for v in $V; do b 512 $v r1; done
t "references"
for v in vq vqr; do
  echo "$v: $(timeout 200 .dev/x/vkqc run /tmp/1b_$v.vkqb --tokens 1 --reference /tmp/1b/graph.json 2>&1 | grep -E 'output' | tr '\n' ' ')"
done
t "GPU tests (vec4, qs4, pv roll)"
VKQC_DIAG_VEC4=1 VKQC_DIAG_QS4=1 VKQC_DIAG_ATTN=DIAG_PV_ROLL VKQC_TEST_PROFILE=$P timeout 300 .dev/x/vkqc_gpu_tests --gtest_filter='Decoder.*DecodeAttention*' > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED|SKIPPED)|Failure' $OUT/tests.log | head
t done
