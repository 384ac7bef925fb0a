#!/usr/bin/env bash
# Installs what vkqc needs from Debian (when missing) and builds it into build/.
# Sourced or run by run-example.sh and run-tests.sh; safe to run again (incremental).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

VKQC_PACKAGES="cmake g++ make python3 python3-numpy libflatbuffers-dev flatbuffers-compiler libvulkan-dev
  libvulkan-volk-dev libshaderc-dev glslang-dev spirv-tools glslc libspirv-cross-c-shared-dev
  spirv-cross nlohmann-json3-dev libspdlog-dev libgtest-dev mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
  python3-onnx libonnx-testdata openssl"

missing=""
for p in $VKQC_PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "vkqc setup: installing$missing"
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "vkqc setup: need root (or sudo) to install:$missing" >&2; exit 1
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
# VKQC_FAIL_ON_WARNINGS=1 (.ci/run: a fresh clone, so every file is compiled): any compiler
# warning fails the build, from the output it printed anyway.
if [ "${VKQC_FAIL_ON_WARNINGS:-0}" = 1 ]; then
  cmake --build build -j"${VKQC_JOBS:-2}" 2>&1 | tee build/build.log
  if grep -q "warning:" build/build.log; then
    echo "vkqc setup: the build printed compiler warnings (VKQC_FAIL_ON_WARNINGS=1):" >&2
    grep "warning:" build/build.log >&2
    exit 1
  fi
else
  cmake --build build -j"${VKQC_JOBS:-2}"
fi
