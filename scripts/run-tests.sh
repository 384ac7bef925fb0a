#!/usr/bin/env bash
# Builds vkqc and runs the whole test suite: unit tests, GPU tests on lavapipe with the Khronos
# validation layer (synchronization validation on; any message fails), and CLI end-to-end tests.
# VKQC_TEST_ICD=/path/icd.json runs the GPU tests on another driver.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export VK_DRIVER_FILES="${VKQC_TEST_ICD:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}"
ctest --test-dir build --output-on-failure -j"${VKQC_JOBS:-2}" "$@"
