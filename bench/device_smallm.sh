set -u
# One device call (issue 15 part 2, small-batch decode): per layer and M = 1, 2, 4, 8, 16 the
# median layer time of the GEMV, the GEMM the selection would take above the GEMV threshold
# (tiled, or the cooperative matrix where chosen) and the int8 cooperative matrix forced
# (--force-accum cm, any group size), to place the GEMV/GEMM threshold per scheme by measurement.
source bench/device_env.sh
W=/tmp/sm; mkdir -p $W
for cfg in "4096 14336 dq8ca q4gsw" "4096 14336 dq8ca q8csw" "4096 14336 float q8csw" "4096 14336 float q4gsw" "2048 8192 dq8ca q4gsw" "8192 2048 dq8ca q4gsw" "4096 14336 dq8ca q4gsw 128"; do
  set -- $cfg
  python3 bench/gen_linear.py $W/g $1 $2 $3 $4 ${5:-} > /dev/null
  line="$1x$2 $3:$4${5:+ g$5}"
  for mode in "gemv:--force-kernel gemv" "gemm:--force-kernel gemm" "cm:--force-kernel gemm --force-accum cm" "fp16cm:--force-kernel gemm --allow-fp16"; do
    name=${mode%%:*}; flags=${mode#*:}
    [ $name = cm ] && [ $3 = float ] && continue
    [ $name = fp16cm ] && [ $3 != float ] && continue
    .dev/vkqc compile $W/g/graph.json --target nvidia-hopper --tokens 1,2,4,8,16 $flags -o $W/m.vkqb > $W/c.out 2>&1 || { echo "$line $name: $(tail -1 $W/c.out)"; continue; }
    row=""
    for t in 1 2 4 8 16; do
      .dev/vkqc bench $W/m.vkqb --tokens $t --min-ms 30 > $W/b.out 2>&1
      row="$row $(awk '$1 ~ /^linear/ {print $3; exit}' $W/b.out)"
    done
    echo "$line $name M=1,2,4,8,16:$row  ($(awk '$1 ~ /^linear/ {print $2; exit}' $W/b.out))"
  done
done
