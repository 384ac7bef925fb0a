#!/usr/bin/env bash
# GEMV vs GEMM per token count for one linear layer on the local device: compiles the layer with
# --force-kernel gemv and with --force-kernel gemm (which is the cooperative-matrix GEMM where
# the target selects it) for every token count and prints the median layer times side by side.
# Used to place the GEMV/GEMM thresholds of a profile (bench/RESULTS.md).
# usage: bench/crossover.sh VKQC PROFILE K N ACT:WEIGHTS [TOKENS...]   (GROUP=G: int4 group size, default 32)
set -u
VKQC=$1 PROFILE=$2 K=$3 N=$4 SCHEME=$5
shift 5
TOKENS=${*:-"1 2 4 8 16 32 64"}
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
IFS=: read -r act wq <<< "$SCHEME"
python3 "$HERE/gen_linear.py" "$W/g" "$K" "$N" "$act" "$wq" ${GROUP:-} || exit 1
list=$(echo $TOKENS | tr ' ' ,)
for kern in gemv gemm; do
  "$VKQC" compile "$W/g/graph.json" --target "$PROFILE" --tokens "$list" --force-kernel $kern -o "$W/$kern.vkqb" > /dev/null || exit 1
done
printf '%s x %s %s\n%6s %12s %12s  %s\n' "$K" "$N" "$SCHEME" M "GEMV us" "GEMM us" "GEMM variant"
for t in $TOKENS; do
  row=""
  for kern in gemv gemm; do
    "$VKQC" bench "$W/$kern.vkqb" --tokens "$t" --min-ms 30 > "$W/b.out" 2>&1 || { cat "$W/b.out"; exit 1; }
    row="$row $(awk '$1 ~ /^linear/ {print $3; exit}' "$W/b.out")"
    [ $kern = gemm ] && v=$(awk '$1 ~ /^linear/ {print $2; exit}' "$W/b.out")
  done
  printf '%6s %12s %12s  %s\n' "$t" $row "$v"
done
