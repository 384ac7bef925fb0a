set -u
# One device call (issue 15 part 1, the fp16 cooperative matrix): the cooperative-matrix GPU tests
# with the nvidia-hopper built-in (validation on), then float x WEIGHTS with --allow-fp16 at M = 512
# per tile for the new binary (.dev/x/vkqc) and the previous main's default tile (.dev/x/vkqc_old),
# each tile reference-checked on a ragged layer first (bench/coopmat_sweep.sh).
# SHAPES, WQS, TILES, OLD_TILE override the sweep; FILTER the tests (none: NO_TESTS=1).
source bench/device_env.sh
device_setup .dev/x/vkqc
if [ -z "${NO_TESTS:-}" ]; then
  VKQC_TEST_PROFILE=nvidia-hopper timeout 300 .dev/x/vkqc_gpu_tests --gtest_filter="${FILTER:-*CoopMat*}" > $OUT/tests.log 2>&1
  grep -B3 -A12 "^\[  FAILED" $OUT/tests.log | head -40
  grep -E '^\[  (PASSED|FAILED)|^\[  FAILED|tests ran' $OUT/tests.log | head -12
fi
for shape in ${SHAPES:-4096x14336}; do
  K=${shape%x*} N=${shape#*x}
  for wq in ${WQS:-q4gsw}; do
    t "$shape $wq"
    GROUP=32 timeout 120 bash bench/coopmat_sweep.sh .dev/x/vkqc_old nvidia-hopper nvidia-hopper $K $N f16:$wq 512 ${OLD_TILE:-4x4x2x2x16x2} 2>&1 | sed "s/^/old $wq /"
    GROUP=32 timeout 400 bash bench/coopmat_sweep.sh .dev/x/vkqc nvidia-hopper nvidia-hopper $K $N f16:$wq 512 ${TILES:-4x4x2x2x16x2} 2>&1 | sed "s/^/new $wq /"
  done
done
