#!/usr/bin/env bash
# One device call (issue 15 part 2): a layer at M = 1..16 per kernel mode, each program
# reference-checked at M = 5 first; prints the linear layer's median µs per M.
#   MODES   "name:compile flags;..." (NAME=value words: environment of the compile; default: the GEMV, the int8 cooperative matrix with its
#           default blocks and with 64x64 blocks; "sel:" is the selection's kernel per M)
#   LAYERS  "K N ACT WEIGHTS [GROUP];..." (default: the four decode shapes, dq8ca x q4gsw g32)
#   BINS    binaries of .dev/bin.tar.xz to run (default vkqc; e.g. "vkqc_old vkqc": the previous
#           main's against this tree's, same machine)
#   TOKENS  the M values timed (default "1 2 4 8 16")
#   CHECK   extra flags of the reference check (e.g. "--tolerance 0.005" for fp16 operands)
#   TARGET  the profile compiled for (default the nvidia-hopper built-in)
# usage (on the device, repo root): bash bench/device_smallm2.sh
set -u
source bench/device_env.sh
mkdir -p .dev/x && tar xJf .dev/bin.tar.xz -C .dev/x
W=/tmp/sm; mkdir -p $W
TOKENS=${TOKENS:-1 2 4 8 16}
IFS=';' read -ra modes <<< "${MODES:-gemv:--force-kernel gemv;cm:--force-kernel gemm --force-accum cm;cm64:--force-kernel gemm --force-accum cm --coopmat-tile 4x4x1x1x32}"
IFS=';' read -ra layers <<< "${LAYERS:-4096 14336 dq8ca q4gsw;2048 8192 dq8ca q4gsw;8192 2048 dq8ca q4gsw;14336 4096 dq8ca q4gsw}"
for cfg in "${layers[@]}"; do
  set -- $cfg
  python3 bench/gen_linear.py $W/g $1 $2 $3 $4 ${5:-32} > /dev/null
  for b in ${BINS:-vkqc}; do
    V=$PWD/.dev/x/$b
    for mode in "${modes[@]}"; do
      name=${mode%%:*}; flags=${mode#*:}
      envs=$(printf '%s\n' $flags | grep -E '^[A-Z_0-9]+=' | tr '\n' ' ')  # NAME=value words: for the compile
      flags=$(printf '%s\n' $flags | grep -vE '^[A-Z_0-9]+=' | tr '\n' ' ')
      env $envs $V compile $W/g/graph.json --target ${TARGET:-nvidia-hopper} --tokens $(echo 5 $TOKENS | tr ' ' ,) $flags -o $W/m.vkqb > $W/c.out 2>&1 || { echo "$cfg $b $name: $(tail -1 $W/c.out)"; continue; }
      chk=$($V run $W/m.vkqb --tokens 5 --reference $W/g/graph.json ${CHECK:-} 2>&1 | grep -oE "PASS|FAIL" | head -1)
      row=""
      for t in $TOKENS; do
        $V bench $W/m.vkqb --tokens $t --min-ms 30 > $W/b.out 2>&1
        row="$row $(awk '$1 ~ /^linear/ {print $3; exit}' $W/b.out)"
      done
      echo "$1x$2 $3:$4${5:+ g$5} $b $name (M=5 reference: $chk) M=$(echo $TOKENS | tr ' ' ,):$row"
    done
  done
done
