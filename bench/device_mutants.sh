set -u
# One device call (issue 13 part 5 on a real driver): resealed bundle mutants on the H100.
# 1. signed bundles on a context that trusts the signer: every mutant must be refused (VKQC_MUTANTS,
#    default 2000), forty contexts in one process, the validated bundle loads;
# 2. the unsigned sweep with the validation layer, SPIR-V validation and robust buffer access
#    (tests/gpu/mutant_test.cc): prints each mutant, so a crash names the last one; that mutant
#    and the original are written to $OUT for a look at what changed.
source bench/device_env.sh
N=${1:-2000}
.dev/vkqc probe -o /tmp/h.json > /dev/null
VKQC_TEST_PROFILE=/tmp/h.json VKQC_MUTANTS=$N timeout 300 .dev/vkqc_gpu_tests \
  --gtest_filter='Mutants.Signed*:Mutants.Forty*:Mutants.Validated*' > /tmp/s.log 2>&1
echo "signed rc=$?"; grep -E "resealed|OK \]|FAILED|Failure|context [0-9]" /tmp/s.log | head
VKQC_TEST_PROFILE=/tmp/h.json VKQC_MUTANTS=$N VKQC_MUTANTS_TRACE=${TRACE:--1} timeout 400 .dev/vkqc_gpu_tests \
  --gtest_filter='Mutants.Resealed*' > /tmp/m.log 2>&1
rc=$?
echo "unsigned rc=$rc"; grep -E "resealed|OK \]|FAILED|Failure" /tmp/m.log | head; grep "^mutant" /tmp/m.log | tail -2
if [ "$rc" -ne 0 ] && [ "${TRACE:--1}" = -1 ]; then
  last=$(grep -o "^mutant [0-9]*$" /tmp/m.log | tail -1 | awk '{print $2}')
  echo "last mutant started: $last; dumping it"
  VKQC_TEST_PROFILE=/tmp/h.json VKQC_MUTANTS=$((last + 1)) VKQC_MUTANTS_TRACE=$last timeout 200 .dev/vkqc_gpu_tests \
    --gtest_filter='Mutants.Resealed*' > /tmp/m2.log 2>&1
  echo "rerun rc=$?"; tail -2 /tmp/m2.log
  cp /tmp/mutant.vkqb /tmp/good.vkqb /tmp/h.json "$OUT"/ 2>/dev/null
fi
