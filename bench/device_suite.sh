#!/usr/bin/env bash
# Runs on the device machine (see bench/RESULTS.md for how): GPU tests with validation on the
# real GPU, then `vkqc bench` over the DESIGN 7 linear shapes. Expects /tmp/dev from dev.tar.xz
# (vkqc, vkqc_gpu_tests, a Debian 12 glibc/libstdc++ and the validation layer) and $OUT.
set -u
D=/tmp/dev
# The device has glibc 2.39 (>= the 2.36 these binaries need): run them directly.
RUN=""
sed "s|\"library_path\": \"[^\"]*\"|\"library_path\": \"$D/layers/libVkLayer_khronos_validation.so\"|" \
  $D/layers/VkLayer_khronos_validation.json > $D/layers/v.json && rm $D/layers/VkLayer_khronos_validation.json
export VK_LAYER_PATH=$D/layers
$RUN $D/vkqc probe -o $OUT/h100.json || exit 1
cat $OUT/h100.json | head -c 0
$RUN $D/vkqc profiles >/dev/null
echo "== GPU tests on the device (validation on) =="
VKQC_GPU_FILTER=${VKQC_GPU_FILTER:-*}
VKQC_TEST_PROFILE=$OUT/h100.json $RUN $D/vkqc_gpu_tests --gtest_filter="$VKQC_GPU_FILTER" 2>&1 | tee $OUT/gpu_tests.log | grep -E '^\[  (PASSED|FAILED)|^\[  FAILED|tests ran'
echo "== bench =="
W=/tmp/benchw
for shape in 2048x2048 2048x512 2048x8192 8192x2048 4096x4096 4096x1024 4096x14336 14336x4096; do
  K=${shape%x*}; N=${shape#*x}
  for act in q8ta float; do
    python3 bench/gen_linear.py $W/$shape-$act $K $N $act
    $RUN $D/vkqc compile $W/$shape-$act/graph.json --target $OUT/h100.json --tokens 1,8,128,512 -o $W/b.vkqb >/dev/null || continue
    for t in 1 8 128 512; do
      $RUN $D/vkqc bench $W/b.vkqb --tokens $t --peak-gbps 3180 --peak-tops 104 | grep -E '^linear_' | sed "s/^/K=$K N=$N M=$t $act /"
    done
  done
done 2>&1 | tee $OUT/bench.log
