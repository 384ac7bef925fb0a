#!/usr/bin/env bash
# Compiles two bundles of examples/mlp for lavapipe (different kernels and token counts) and runs
# the thread-safety test on them (tests/threads/threads_test.cc). ctest runs it as gpu.threads;
# scripts/sanitize.sh runs it with a ThreadSanitizer build of the test.
# usage: bash run.sh <path-to-vkqc> <path-to-vkqc_threads_test> <work-dir> [ROUNDS]
set -euo pipefail
VKQC=$1 TEST=$2 WORK=$3 ROUNDS=${4:-8}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
mkdir -p "$WORK"
"$VKQC" import "$SRC/examples/mlp/graph.json" -o "$WORK/mlp.vkqg" >/dev/null
"$VKQC" compile "$WORK/mlp.vkqg" --target lavapipe --tokens 1 --force-kernel gemv -o "$WORK/a.vkqb" >/dev/null
"$VKQC" compile "$WORK/mlp.vkqg" --target lavapipe --tokens 8 --force-kernel gemm -o "$WORK/b.vkqb" >/dev/null
"$TEST" "$WORK/a.vkqb" "$WORK/b.vkqb" "$ROUNDS"
