set -u
# One device call (issue 15 part 1/2 follow-up): the default selection of the nvidia-hopper built-in
# for grouped int8-path layers at prefill and small M (each program reference-checked on a ragged
# layer of the same scheme first), the GEMV forced at the same M, and the GPU tests of the linear
# kernels with validation on.
source bench/device_env.sh
W=/tmp/sel; mkdir -p $W
VKQC_TEST_PROFILE=nvidia-hopper timeout 300 .dev/vkqc_gpu_tests --gtest_filter="${FILTER:-*CoopMat*:*Int4*:*LinearVariants*:*Chain*:*Program*}" > /tmp/gt.log 2>&1
grep -E '^\[  (PASSED|FAILED)|^\[  FAILED|tests ran' /tmp/gt.log | head -20
for cfg in ${CFGS:-"4096 14336 q4gsw 32" "4096 14336 q4gsw 128" "4096 14336 q4gaw 128" "4096 14336 q8gsw 32" "8192 28672 q4gsw 32" "8192 28672 q4gsw 128" "14336 4096 q4gsw 32" "2048 8192 q4gsw 32" "8192 2048 q4gsw 32"}; do
  set -- $cfg
  python3 bench/gen_linear.py $W/g $1 $2 dq8ca $3 $4 > /dev/null
  python3 bench/gen_linear.py $W/s 1024 203 dq8ca $3 $4 > /dev/null
  .dev/vkqc compile $W/s/graph.json --target nvidia-hopper --tokens 1,5,129 -o $W/s.vkqb > /dev/null 2>&1
  ref=""
  for t in 1 5 129; do .dev/vkqc run $W/s.vkqb --tokens $t --reference $W/s/graph.json --tolerance 1e-4 | grep -q PASS && ref="$ref ok" || ref="$ref FAIL"; done
  for mode in "default:" "gemv:--force-kernel gemv"; do
    name=${mode%%:*}; flags=${mode#*:}
    Ms=${MS:-1 2 4 8 16 32 128 512}
    [ $name = gemv ] && Ms="4 8 16 32"
    .dev/vkqc compile $W/g/graph.json --target nvidia-hopper --tokens $(echo $Ms | tr ' ' ,) $flags -o $W/m.vkqb > $W/c.out 2>&1 || { echo "$cfg $name: $(tail -1 $W/c.out)"; continue; }
    row=""
    for t in $Ms; do
      .dev/vkqc bench $W/m.vkqb --tokens $t --min-ms 30 > $W/b.out 2>&1
      row="$row M$t=$(awk '$1 ~ /^linear/ {print $3 "(" $2 ")"; exit}' $W/b.out)"
    done
    echo "$1x$2 $3 g$4 $name [ref$ref]:$row"
  done
done
