#!/usr/bin/env bash
# On the device machine: GPU tests for the device's own probed profile (validation on), then
# the Llama-3.2-1B MLP example benched at decode and prefill. Expects /tmp/dev (see
# device_suite.sh) and $OUT.
set -u
D=/tmp/dev
sed "s|\"library_path\": \"[^\"]*\"|\"library_path\": \"$D/layers/libVkLayer_khronos_validation.so\"|" \
  $D/layers/VkLayer_khronos_validation.json > $D/layers/v.json && rm -f $D/layers/VkLayer_khronos_validation.json
export VK_LAYER_PATH=$D/layers
$D/vkqc probe -o $OUT/dev.json || exit 1
VKQC_TEST_PROFILE=$OUT/dev.json $D/vkqc_gpu_tests > $OUT/gpu_tests.log 2>&1
grep -E '^\[  (PASSED|FAILED)|^\[  FAILED|tests ran' $OUT/gpu_tests.log
python3 examples/llama-mlp/make_example.py /tmp/mlp >/dev/null
$D/vkqc compile /tmp/mlp/graph.json --target $OUT/dev.json --tokens 1,8,128,512 -o /tmp/mlp.vkqb
for t in 1 128; do $D/vkqc run /tmp/mlp.vkqb --tokens $t --validation --reference /tmp/mlp/graph.json | tail -2; done
for t in 1 8 128 512; do $D/vkqc bench /tmp/mlp.vkqb --tokens $t --peak-gbps 3180 --peak-tops 104; done 2>&1 | tee $OUT/bench_mlp.log
