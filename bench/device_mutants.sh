set -u
# One device call (issue 13 part 5 on a real driver): resealed bundle mutants on the H100 with the
# validation layer, SPIR-V validation and robust buffer access (tests/gpu/mutant_test.cc).
source bench/device_env.sh
.dev/vkqc probe -o /tmp/h.json > /dev/null
VKQC_TEST_PROFILE=/tmp/h.json VKQC_MUTANTS=${1:-1000} timeout 500 .dev/vkqc_gpu_tests --gtest_filter='Mutants.*' > /tmp/m.log 2>&1
echo "rc=$?"; grep -E "resealed|OK \]|FAILED|Failure" /tmp/m.log | head; tail -3 /tmp/m.log
