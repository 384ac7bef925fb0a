#!/usr/bin/env bash
# One device call (issue 15 part 2 after the int4 cooperative-matrix fold): int4 groups of 32 at
# M = 1..16: the GEMV against the int8 cooperative matrix with 64-row x 128-column blocks (the
# default for M <= 32) and with 64x64 blocks (4x4x1x1), each program reference-checked at M = 5.
# usage (on the device, repo root): bash bench/device_smallm2.sh
set -u
source bench/device_env.sh
mkdir -p .dev/x && tar xJf .dev/bin.tar.xz -C .dev/x vkqc
V=$PWD/.dev/x/vkqc
W=/tmp/sm; mkdir -p $W
for cfg in "4096 14336" "2048 8192" "8192 2048" "14336 4096"; do
  set -- $cfg
  python3 bench/gen_linear.py $W/g $1 $2 dq8ca q4gsw 32 > /dev/null
  for mode in "gemv:--force-kernel gemv" "cm:--force-kernel gemm --force-accum cm" "cm64:--force-kernel gemm --force-accum cm --coopmat-tile 4x4x1x1x32"; do
    name=${mode%%:*}; flags=${mode#*:}
    $V compile $W/g/graph.json --target nvidia-hopper --tokens 1,2,4,5,8,16 $flags -o $W/m.vkqb > $W/c.out 2>&1 || { echo "$1x$2 $name: $(tail -1 $W/c.out)"; continue; }
    chk=$($V run $W/m.vkqb --tokens 5 --reference $W/g/graph.json 2>&1 | grep -oE "PASS|FAIL" | head -1)
    row=""
    for t in 1 2 4 8 16; do
      $V bench $W/m.vkqb --tokens $t --min-ms 30 > $W/b.out 2>&1
      row="$row $(awk '$1 ~ /^linear/ {print $3; exit}' $W/b.out)"
    done
    echo "$1x$2 $name (M=5 reference: $chk) M=1,2,4,8,16:$row"
  done
done
