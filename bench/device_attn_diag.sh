#!/usr/bin/env bash
# Device call of 2026-11-29 (session 13): where the decode attention's time goes. One binary with
# diagnostic hooks (not in main: VKQC_DIAG_ATTN adds defines to attention_decode.comp,
# VKQC_DIAG_BK forces its block); without them its kernels are main's. Variants (results wrong
# but for main, vec4, bk32): EMPTY returns at once; NOROPE skips the rope; NOBLOCK skips the
# block loop; NOLOADS computes the cache words instead of loading them; NOCOMBINE: the last split
# does not combine; NOSYNC: every split writes its unnormalized output (no partials, no counter);
# VKQC_VEC4: the cache words loaded as uvec4 (a candidate); bk32: blocks of 32 keys.
export OUT
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
declare -A DEFS=([main]="" [noblock]=DIAG_NOBLOCK [nocombine]=DIAG_NOCOMBINE
  [nosync]=DIAG_NOSYNC [vec4]="" [bk32]="" [bk32c64]=VKQC_CMB=64u [bk64c32]=VKQC_CMB=32u [bk32vc64]=VKQC_CMB=64u)
declare -A BK=([bk32]=32 [bk32c64]=32 [bk32vc64]=32)
declare -A VEC=([vec4]=1 [bk32vc64]=1)
V="main noblock nocombine nosync vec4 bk32 bk32c64 bk64c32 bk32vc64"
C="main vec4 bk32 bk32c64 bk64c32 bk32vc64"
for v in $V; do
  env ${BK[$v]:+VKQC_DIAG_BK=${BK[$v]}} ${VEC[$v]:+VKQC_DIAG_VEC4=1} VKQC_DIAG_ATTN="${DEFS[$v]}" \
    .dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1 -o /tmp/1b_$v.vkqb > /dev/null || exit 1
done
t compiled
b() { timeout 60 .dev/x/vkqc bench /tmp/1b_$2.vkqb --tokens 1 --position $1 --min-ms 300 > /tmp/b.txt 2>&1
  echo "$3 position $1 $2: $(grep 'whole program' /tmp/b.txt | head -1 | sed 's/whole program without per-layer timestamps//')"; }
for round in 1 2; do for pos in 128 2032; do for v in $C; do b $pos $v r$round; done; done; done
for v in $C; do b 512 $v r1; done
for pos in 128 2032; do for v in main noblock nocombine nosync; do b $pos $v diag; done; done
for v in main bk32; do
  timeout 60 .dev/x/vkqc bench /tmp/1b_$v.vkqb --tokens 1 --position 128 --min-ms 50 --pipeline-stats > /tmp/ps.txt 2>&1
  echo "$v stats:"; grep -iE "attention" /tmp/ps.txt | head -4
done
t "references"
for v in vec4 bk32vc64; do
  echo "$v: $(timeout 200 .dev/x/vkqc run /tmp/1b_$v.vkqb --tokens 1 --reference /tmp/1b/graph.json 2>&1 | grep -E 'output' | tr '\n' ' ')"
done
t "GPU tests (vec4, 64 partials in flight)"
VKQC_DIAG_VEC4=1 VKQC_DIAG_ATTN=VKQC_CMB=64u VKQC_TEST_PROFILE=$P timeout 300 .dev/x/vkqc_gpu_tests --gtest_filter='Decoder.*DecodeAttention*' > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED|SKIPPED)|Failure' $OUT/tests.log | head
t done
