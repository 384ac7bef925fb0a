#!/usr/bin/env bash
# Cooperative-matrix tile sweep on the local device: for one linear shape, each --coopmat-tile
# (subgroups WM x WN, matrix tiles per subgroup TM x TN, K words per step BKW) is compiled with the
# cooperative matrix forced and benched at the given tokens; prints one line per tile. Used to
# choose PlanCoopMat's defaults (bench/RESULTS.md). Each tile is also checked against the CPU
# reference on a small ragged layer (K 1024, N 203, tokens 129) compiled with the same tile.
# usage: bench/coopmat_sweep.sh VKQC PROFILE ROOFLINE K N ACT:WEIGHTS TOKENS [TILE...]
#   ACT:WEIGHTS  q8ta:q8csw (int8 operands) or f16:q4gsw (fp16 operands, --allow-fp16) etc.
#   GROUP=G      int4 group size (default 32)
#   MODE=gemm    sweep the tiled int-dot / dequant GEMM instead (--no-coopmat --force-kernel gemm
#                --gemm-shape TILE, TILE = RMxBK4: rows per thread x K words per step)
set -u
VKQC=$1 PROFILE=$2 ROOF=$3 K=$4 N=$5 SCHEME=$6 T=$7
shift 7
DEFAULT_TILES="2x4x4x2x16 2x4x4x2x32 2x2x4x4x16 2x2x4x4x32 4x4x2x2x16 2x4x4x4x16 4x2x4x4x16 4x4x2x4x16 4x2x4x2x32"
TILE_OPT="--force-accum cm --coopmat-tile"
if [ "${MODE:-}" = gemm ]; then
  DEFAULT_TILES="4x8 8x8 4x16 8x16 8x32"
  TILE_OPT="--no-coopmat --force-kernel gemm --gemm-shape"
fi
TILES=${*:-$DEFAULT_TILES}
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
IFS=: read -r act wq <<< "$SCHEME"
flags=""
[ "$act" = f16 ] && { act=float; flags="--allow-fp16"; }
python3 "$HERE/gen_linear.py" "$W/g" "$K" "$N" "$act" "$wq" ${GROUP:-} || exit 1
python3 "$HERE/gen_linear.py" "$W/s" 1024 203 "$act" "$wq" ${GROUP:-} || exit 1
tol=1e-4
[ -n "$flags" ] && tol=2e-3
fail=0
for tile in $TILES; do
  if ! "$VKQC" compile "$W/s/graph.json" --target "$PROFILE" --tokens 129 $flags $TILE_OPT "$tile" \
      -o "$W/s.vkqb" > "$W/c.out" 2>&1; then
    echo "$tile: $(tail -1 "$W/c.out")"; continue
  fi
  if ! "$VKQC" run "$W/s.vkqb" --reference "$W/s/graph.json" --tolerance $tol > "$W/r.out" 2>&1 || ! grep -q PASS "$W/r.out"; then
    echo "$tile: REFERENCE CHECK FAILED"; cat "$W/r.out"; fail=1; continue
  fi
  if ! "$VKQC" compile "$W/g/graph.json" --target "$PROFILE" --tokens "$T" $flags $TILE_OPT "$tile" \
      -o "$W/b.vkqb" > "$W/c.out" 2>&1; then
    echo "$tile: $(tail -1 "$W/c.out")"; continue
  fi
  if "$VKQC" bench "$W/b.vkqb" --tokens "$T" --roofline "$ROOF" > "$W/b.out" 2>&1; then
    echo "$K x $N $SCHEME M=$T tile $tile (reference ok): $(awk '$1 ~ /^linear/ {print $3 " us, " $5 " GOP/s, " $7 " of the compute peak"}' "$W/b.out")"
  else
    echo "$tile: bench failed"; cat "$W/b.out"; fail=1
  fi
done
exit $fail
