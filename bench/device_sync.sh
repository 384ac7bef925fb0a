#!/usr/bin/env bash
# Device call of 2026-11-29 (session 11): what one dependent step costs on the GPU, as a dispatch
# behind a pipeline barrier and as a round behind an in-kernel grid barrier (`vkqc roofline`'s
# dependency rows, shaders/roofline_sync.comp): two rounds without and one with the validation
# layer; then the roofline GPU tests (the grid barrier's cross-workgroup results) on the probed
# profile. Carry [".gl", ".dev"]; .dev/bin.tar.xz holds stripped vkqc and vkqc_gpu_tests.
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
for round in 1 2; do
  t "roofline round $round"
  .dev/x/vkqc roofline --min-ms 100 2>&1 | tail -7
done
t "roofline with validation"
.dev/x/vkqc roofline --min-ms 20 --validation 2>&1 | tail -9
t "roofline GPU tests, validation on"
VKQC_TEST_PROFILE=$P timeout 300 .dev/x/vkqc_gpu_tests --gtest_filter='Roofline*' 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED)|OK \]|Failure' | head -20
t done
