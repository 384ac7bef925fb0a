set -u
# Device call (issue 15 target 1c, the fp16 cooperative matrix at M = 512): float x q4gsw g32
# with --allow-fp16 per --coopmat-tile WMxWNxTMxTNxBKWxSTAGES, each tile reference-checked on a
# ragged layer first (bench/coopmat_sweep.sh), then the driver's registers per invocation for each
# tile (bench --pipeline-stats). SHAPES (K x N), TILES override; BIN the binary (default .dev/x/vkqc).
# Session 17 (bench/RESULTS.md): call 1 as it stands, call 2 with TILES="4x4x2x2x16x2 4x4x2x2x8x2
# 4x4x2x2x32x1 4x2x2x2x16x2 2x4x2x2x16x2 8x2x2x2x16x2 2x8x2x2x16x2 4x4x1x2x16x2 4x4x2x1x16x2".
source bench/device_env.sh
device_setup .dev/x/vkqc
BIN=${BIN:-.dev/x/vkqc}
TILES=${TILES:-4x4x2x2x16x2 2x2x4x4x8x2 2x2x4x4x16x2 2x2x4x4x16x1 2x2x4x4x32x1 2x4x4x4x8x2 2x4x4x4x16x1 4x2x4x4x8x2 2x4x4x2x16x2 4x2x2x4x16x2 2x2x2x4x16x2 4x4x2x4x8x2}
for shape in ${SHAPES:-4096x14336 8192x28672}; do
  K=${shape%x*} N=${shape#*x}
  t "$shape"
  GROUP=32 timeout 400 bash bench/coopmat_sweep.sh $BIN nvidia-hopper nvidia-hopper $K $N f16:q4gsw 512 $TILES 2>&1
done
t "registers per tile (4096x14336)"
W=$(mktemp -d)
python3 bench/gen_linear.py $W/g 4096 14336 float q4gsw 32 > /dev/null
for tile in $TILES; do
  $BIN compile $W/g/graph.json --target nvidia-hopper --tokens 512 --allow-fp16 --force-accum cm --coopmat-tile $tile -o $W/b.vkqb > /dev/null 2>&1 || { echo "$tile: compile failed"; continue; }
  echo "$tile: $($BIN bench $W/b.vkqb --tokens 512 --min-ms 20 --pipeline-stats 2>&1 | grep -E '^  linear' | grep -oE '(Register Count|Shared Memory Size|Binary Size)[^=]*=[0-9]+' | tr '\n' ' ')"
done
t done
