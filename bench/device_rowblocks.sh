#!/usr/bin/env bash
# Session 24 device call (issue 15, the small-batch cliff at M = 8): two ways to give the several-row
# int4 GEMV more parallel work per weight read, compiled under measurement switches of this tree's
# vkqc (select.cc): VKQC_ROW_BLOCKS=R splits the rows into R blocks of ceil(M / R) rows whose
# workgroups over the same channels are launched side by side (the row block is the fastest
# workgroup index, so the second block's weights come from the L2); VKQC_SG_CHANNELS=S makes
# workgroups of S subgroups, each with its own 2 channels over the whole K (the subgroups read the
# same activations); VKQC_ROWS_PIPELINE=0/1 forces the next-batch prefetch off/on.
# The switches existed only in that measurement build (never on main; 87acc24 landed the rule without
# them): with main's binary every switched mode compiles the selection's kernels, so this script
# records session 24's measurement and is not a re-runnable comparison; bench/device_rowblocks_verify.sh is.
# .dev/bin.tar.xz: vkqc_old (main 6439ea2), vkqc (the measurement build). In order of importance:
#   1. single layers (the five decode shapes, dq8ca x q4gsw g32) at M = 1 / 2 / 4 / 8 per mode,
#      each program reference-checked at M = 5;
#   2. the 1b example's 1/2/4/8-token steps at position 128: old, new default, the variants;
#   3. M = 3 / 5 / 6 / 7 on two shapes.
# PART=1: (1) only; PART=2: (2) and (3) (two calls of under 10 minutes); unset: all.
# Carry .gl and .dev. Output also in $OUT/log.txt.
set -u
export OUT
exec > >(tee $OUT/log.txt) 2>&1
source bench/device_env.sh
device_setup .dev/x/vkqc
if [ "${PART:-1}" = 1 ]; then
t "single layers"
L5="14336 4096 dq8ca q4gsw;4096 14336 dq8ca q4gsw;8192 2048 dq8ca q4gsw;8192 28672 dq8ca q4gsw;2048 8192 dq8ca q4gsw"
BINS=vkqc_old MODES="sel:" TOKENS="1 2 4 8" LAYERS="$L5" timeout 100 bash bench/device_smallm2.sh
BINS=vkqc MODES="sel:;rb2:VKQC_ROW_BLOCKS=2;rb2p0:VKQC_ROW_BLOCKS=2 VKQC_ROWS_PIPELINE=0;rb4:VKQC_ROW_BLOCKS=4;rb8:VKQC_ROW_BLOCKS=8;sg2:VKQC_SG_CHANNELS=2;sg4:VKQC_SG_CHANNELS=4;sg2rb2:VKQC_SG_CHANNELS=2 VKQC_ROW_BLOCKS=2" \
  TOKENS="2 4 8" LAYERS="$L5" timeout 420 bash bench/device_smallm2.sh
fi
[ "${PART:-}" = 1 ] && { t done; exit 0; }
t "1b steps"
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
.dev/x/vkqc_old compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,8 -o /tmp/1b_old.vkqb > /dev/null || exit 1
for v in "new:" "rb2:VKQC_ROW_BLOCKS=2" "rb2p0:VKQC_ROW_BLOCKS=2 VKQC_ROWS_PIPELINE=0"; do
  env ${v#*:} .dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,8 -o /tmp/1b_${v%%:*}.vkqb > /dev/null || exit 1
done
for r in 1 2; do
  for n in 8 1; do
    for v in old new rb2 rb2p0; do
      b=$([ $v = old ] && echo vkqc_old || echo vkqc)
      whole $b /tmp/1b_$v.vkqb "r$r $v 1b $n tokens at 128" --tokens $n --position 128 --min-ms 300
    done
  done
done
t "the GEMV forced at M = 8 where the cooperative matrix is selected"
BINS=vkqc MODES="gemv:--force-kernel gemv;gemvrb2:VKQC_ROW_BLOCKS=2 --force-kernel gemv;gemvrb2p0:VKQC_ROW_BLOCKS=2 VKQC_ROWS_PIPELINE=0 --force-kernel gemv" TOKENS="8" \
  LAYERS="4096 14336 dq8ca q4gsw;2048 8192 dq8ca q4gsw" timeout 100 bash bench/device_smallm2.sh
t "M = 5 / 6 / 7"
BINS=vkqc MODES="sel:;rb2:VKQC_ROW_BLOCKS=2;rb2p0:VKQC_ROW_BLOCKS=2 VKQC_ROWS_PIPELINE=0" TOKENS="5 6 7" \
  LAYERS="14336 4096 dq8ca q4gsw;8192 2048 dq8ca q4gsw" timeout 120 bash bench/device_smallm2.sh
t done
