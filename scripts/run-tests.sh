#!/usr/bin/env bash
# Builds vkqc and runs the whole test suite: unit tests, GPU tests on lavapipe with the Khronos
# validation layer (synchronization validation on; any message fails), and CLI end-to-end tests.
# VKQC_TEST_ICD=/path/icd.json runs the GPU tests on another driver.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# ONNX Runtime (CPU), the peer the ONNX import tests compare with: npm's onnxruntime-node ships
# libonnxruntime.so for linux x64/arm64 (its install script only fetches optional GPU providers,
# so it is skipped). Installed once into VKQC_PEERS and reused; without network the tests skip
# the comparison and say so.
export VKQC_PEERS="${VKQC_PEERS:-$HOME/.cache/vkqc-peers}"
export VKQC_ORT_MODULES="$VKQC_PEERS/node_modules"
if [ ! -f "$VKQC_ORT_MODULES/onnxruntime-node/package.json" ]; then
  if ! command -v npm >/dev/null; then
    if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null || true
  fi
  if command -v npm >/dev/null; then
    mkdir -p "$VKQC_PEERS"
    npm install --prefix "$VKQC_PEERS" --ignore-scripts --no-audit --no-fund onnxruntime-node@1.30.0 >/dev/null 2>&1 ||
      echo "run-tests: npm install onnxruntime-node failed; the ONNX Runtime comparisons will be skipped"
  fi
fi
export VK_DRIVER_FILES="${VKQC_TEST_ICD:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}"
ctest --test-dir build --output-on-failure -j"${VKQC_JOBS:-2}" "$@"
