#!/usr/bin/env bash
# One device session (see bench/RESULTS.md): carried binaries in .dev/ (vkqc, vkqc_gpu_tests
# built on Debian 12, static but for libc), the Vulkan loader and the validation layer as
# Debian packages in .gl/. Probes the device, measures its roofline, tunes the linear kernels
# into the probed profile's sidecar, runs the benchmark suite (each layer also checked against
# the reference), then the GPU tests of the linear kernels with validation on.
# usage (on the device, repo root): bash bench/device_perf.sh [GTEST_FILTER]   (writes to $OUT)
set -u
for f in .gl/lib*.deb; do dpkg -x "$f" /; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers*.deb /tmp/vl
export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d
export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
V=$PWD/.dev/vkqc
P=$OUT/h100.json S=$OUT/h100.vkqc.json
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
$V probe -o "$P" || exit 1
$V roofline ${ROOF_ARGS:-} -o "$S" 2>&1 | tee $OUT/roofline.log
echo "== GPU tests of the cooperative-matrix GEMM (validation on)"
VKQC_TEST_PROFILE=$P timeout 100 .dev/vkqc_gpu_tests --gtest_filter='*CoopMat*' > $OUT/coopmat_tests.log 2>&1
echo "coopmat tests rc=$?"; grep -E '^\[  (PASSED|FAILED)|tests ran|^\[  SKIPPED' $OUT/coopmat_tests.log | tail -8
echo "== tune"; timeout 150 $V tune -o "$S" > $OUT/tune.log 2>&1; echo "tune rc=$?"; tail -3 $OUT/tune.log
echo "== suite"; timeout 260 bash bench/suite.sh "$V" "$P" "$S" $OUT/suite ${SUITE_QUICK:-}; echo "suite rc=$?"
echo "== GPU tests (validation on)"
VKQC_TEST_PROFILE=$P timeout 50 .dev/vkqc_gpu_tests --gtest_filter="${1:-Int4*:Linear*:Roofline*}" > $OUT/gpu_tests.log 2>&1
echo "gpu tests rc=$?"; grep -E '^\[  (PASSED|FAILED)|tests ran|^\[  SKIPPED' $OUT/gpu_tests.log | tail -8
