#!/usr/bin/env bash
# One device call (issue 15 part 2, several rows per GEMV workgroup): the selection's kernel for
# int4 groups of 32 (dq8ca) and weight-only q8csw at M = 1..16 on the four decode shapes, with this
# tree's binary and, where the tarball has it, the previous main's (vkqc_old), same machine; each
# program reference-checked at M = 5 first. Prints the linear layer's median µs per M.
# usage (on the device, repo root): bash bench/device_smallm3.sh
set -u
source bench/device_env.sh
mkdir -p .dev/x && tar xJf .dev/bin.tar.xz -C .dev/x
W=/tmp/sm3; mkdir -p $W
bins="vkqc"; [ -x .dev/x/vkqc_old ] && bins="vkqc_old vkqc"
for cfg in "4096 14336 dq8ca q4gsw" "2048 8192 dq8ca q4gsw" "8192 2048 dq8ca q4gsw" "14336 4096 dq8ca q4gsw" \
           "4096 14336 float q8csw"; do
  set -- $cfg
  python3 bench/gen_linear.py $W/g $1 $2 $3 $4 32 > /dev/null
  for b in $bins; do
    V=$PWD/.dev/x/$b
    $V compile $W/g/graph.json --target nvidia-hopper --tokens 1,2,4,5,8,16 -o $W/m.vkqb > $W/c.out 2>&1 || { echo "$cfg $b: $(tail -1 $W/c.out)"; continue; }
    chk=$($V run $W/m.vkqb --tokens 5 --reference $W/g/graph.json 2>&1 | grep -oE "PASS|FAIL" | head -1)
    row=""
    for t in 1 2 4 8 16; do
      $V bench $W/m.vkqb --tokens $t --min-ms 30 > $W/b.out 2>&1
      row="$row $(awk '$1 ~ /^linear/ {print $3; exit}' $W/b.out)"
    done
    echo "$1x$2 $3:$4 $b (M=5 reference: $chk) M=1,2,4,8,16:$row"
  done
done
