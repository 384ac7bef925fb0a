#!/usr/bin/env bash
# One device call (issue 15 part 4): cooperative-matrix tiles for the 1b example's int4 linear
# shapes (dq8ca x q4gsw, groups of 32) at 128 and 512 tokens: the default 128x128 block leaves
# most of the H100's 132 multiprocessors idle on 512- and 2048-wide layers (4-64 workgroups).
# Each tile reference-checked on a ragged layer first (bench/coopmat_sweep.sh).
# usage (on the device, repo root): bash bench/device_tiles1b.sh
set -u
source bench/device_env.sh
mkdir -p .dev/x && for a in .dev/bin.tar.xz; do tar xJf "$a" -C .dev/x; done
V=$PWD/.dev/x/vkqc
$V probe -o /tmp/h.json > /dev/null || exit 1
timeout 120 $V roofline --min-ms 30 -o /tmp/s.vkqc.json > /dev/null 2>&1
TILES=${TILES:-"4x4x2x2x32 2x4x2x2x32 4x2x2x2x32 2x2x2x2x32 4x4x1x2x32 4x4x1x1x32 2x2x1x2x32"}
for shape in "2048 2048" "2048 512" "2048 8192" "8192 2048"; do
  for T in 128 512; do
    set -- $shape
    GROUP=32 timeout 200 bash bench/coopmat_sweep.sh $V nvidia-hopper /tmp/s.vkqc.json $1 $2 dq8ca:q4gsw $T $TILES
  done
done
