set -u
# One device call (issue 15 part 1, int4 prefill on tensor cores): the GPU tests of the linear
# kernels with the nvidia-hopper built-in (validation on), then the int8 cooperative matrix for
# dq8ca x q4gsw/q4gaw at M = 512 per group size and tile (each tile reference-checked on a ragged
# layer first, bench/coopmat_sweep.sh).
# TILES / GSIZES / SHAPES override the sweep.
source bench/device_env.sh
R=${ROOF:-nvidia-hopper}
VKQC_TEST_PROFILE=nvidia-hopper timeout 300 .dev/vkqc_gpu_tests --gtest_filter="${FILTER:-*CoopMat*:*Int4*:*LinearVariants*}" > /tmp/gt.log 2>&1; grep -B3 -A12 "^\[  FAILED" /tmp/gt.log | head -60
grep -E '^\[  (PASSED|FAILED)|^\[  FAILED|tests ran' /tmp/gt.log | head -20
for shape in ${SHAPES:-4096x14336}; do
  K=${shape%x*} N=${shape#*x}
  for g in ${GSIZES:-32 128}; do
    GROUP=$g bash bench/coopmat_sweep.sh .dev/vkqc nvidia-hopper $R $K $N dq8ca:${WQ:-q4gsw} 512 ${TILES:-2x4x4x2x32 4x4x2x2x16 2x4x4x2x16 4x2x4x4x16 2x4x4x4x16} 2>&1 | sed "s/^/g$g /"
  done
done
