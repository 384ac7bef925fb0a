#!/usr/bin/env bash
# Arm64: the runtime and the C example (examples/c-app) cross-built with Debian's aarch64 cross
# compiler (cmake/aarch64-linux-gnu.cmake), run under qemu-user on Debian's arm64 Vulkan loader and
# arm64 lavapipe, on bundles compiled on x86_64 by build/vkqc; every output byte is compared with
# the same app's x86_64 run on the same bundle.
#
#   bash scripts/arm64.sh [BUILD_DIR]       (default build-arm64; needs build/vkqc: scripts/setup.sh)
#
# Installs what is missing (as root or through sudo): crossbuild-essential-arm64, qemu-user, and,
# after `dpkg --add-architecture arm64`, libvulkan1:arm64 and mesa-vulkan-drivers:arm64. Exits 77
# (skipped) where they cannot be installed or the host is not x86_64. Prints one "ok"/"FAIL" line
# per check and "N passed, M failed".
#
# The bundles: the MLP example for android-baseline-2022 (no subgroup-size requirement: the same
# bundle runs at any vector width), and the MLP on the int8 dot path and the tiny Llama decoder for
# the profile of llvmpipe at 128 bits, which is what lavapipe is on arm64 (NEON: subgroup size 4;
# 8 with AVX2 on x86_64). That profile is probed on x86_64 with LP_NATIVE_VECTOR_WIDTH=128, and its
# x86_64 runs use the same setting, so both sides run the same kernels with the same subgroup size.
# The runtime is cross-built with its dependencies' headers taken from a copy
# (VKQC_DEPS_INCLUDE_DIR, as an Android NDK build must), and the compiler's dependency files are
# checked to show that no volk, Vulkan or flatbuffers header came from the host's /usr/include.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
B=${1:-build-arm64}
mkdir -p "$B" && B=$(cd "$B" && pwd)
JOBS=${VKQC_JOBS:-2}
T0=$(date +%s)

skip() {
  echo "arm64: skipped: $*"
  exit 77
}
[ "$(uname -m)" = x86_64 ] || skip "the host is $(uname -m); this script cross-builds from x86_64"

# ---- packages ---------------------------------------------------------------------------------
PKGS="crossbuild-essential-arm64 qemu-user libvulkan1:arm64 mesa-vulkan-drivers:arm64"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "arm64: installing$missing"
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo > /dev/null; then SUDO="sudo"; else
    skip "need root (or sudo) to install:$missing"
  fi
  dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64 ||
    skip "dpkg --add-architecture arm64 failed"
  $SUDO apt-get update -qq > "$B/apt.log" 2>&1 || skip "apt-get update failed: $(tail -3 "$B/apt.log")"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >> "$B/apt.log" 2>&1 ||
    skip "apt-get install$missing failed: $(tail -3 "$B/apt.log")"
fi
ICD_ARM64=/usr/share/vulkan/icd.d/lvp_icd.aarch64.json
ICD_X86=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
[ -f "$ICD_ARM64" ] || skip "$ICD_ARM64 missing (mesa-vulkan-drivers:arm64)"
[ -x build/vkqc ] || bash scripts/setup.sh > "$B/setup.log" 2>&1 || skip "build/vkqc could not be built (scripts/setup.sh: $B/setup.log)"
[ -f build/libvkqc.so ] || cmake --build build -j"$JOBS" --target vkqc_shared > "$B/shared.log" 2>&1
T_SETUP=$(($(date +%s) - T0))

# ok/fail/finish and WORK (= $B/scratch, emptied) from the end-to-end tests' helpers.
source "$ROOT/tests/e2e/common.bash" "$ROOT/build/vkqc" "$ROOT" "$B"
unset VK_DRIVER_FILES
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3  # Debian's, with python3-numpy

# ---- cross build: runtime-only package, then the C app against it ----------------------------
DEPS="$B/deps"  # the runtime's dependency headers, copied (an NDK build points at such a copy)
rm -rf "$DEPS" && mkdir -p "$DEPS"
cp -r /usr/include/volk.h /usr/include/volk.c /usr/include/vulkan /usr/include/flatbuffers "$DEPS/"
[ -d /usr/include/vk_video ] && cp -r /usr/include/vk_video "$DEPS/"
PREFIX="$B/prefix"
rm -rf "$PREFIX"
t=$(date +%s)
if cmake -S "$ROOT" -B "$B/rt" -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/aarch64-linux-gnu.cmake" -DVKQC_BUILD_COMPILER=OFF \
     -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" -DVKQC_DEPS_INCLUDE_DIR="$DEPS" > "$B/configure.log" 2>&1 &&
   cmake --build "$B/rt" -j"$JOBS" > "$B/build.log" 2>&1 && cmake --install "$B/rt" --strip > "$B/install.log" 2>&1; then
  ok "runtime-only package cross-built for aarch64 and installed ($(($(date +%s) - t)) s)"
else
  fail "aarch64 cross build" "$(tail -n 20 "$B/configure.log" "$B/build.log" "$B/install.log")"
  finish
fi
LIB=$(ls "$PREFIX"/lib*/libvkqc.so.0.* 2> /dev/null | head -1)
if [ -n "$LIB" ] && aarch64-linux-gnu-readelf -h "$LIB" | grep -q "Machine: *AArch64"; then
  size=$(stat -c %s "$LIB")
  bad=$(aarch64-linux-gnu-nm -D --defined-only "$LIB" | awk '{print $3}' | grep -v '^vkqc_' | grep -v '^$' || true)
  needed=$(aarch64-linux-gnu-readelf -d "$LIB" | grep NEEDED | sed 's/.*\[\(.*\)\]/\1/' | tr '\n' ' ')
  if [ -z "$bad" ] && [ "$size" -le 307200 ] && ! echo "$needed" | grep -q 'libstdc++'; then
    ok "arm64 libvkqc.so: $size bytes stripped, exports only vkqc_*, needs $needed"
  else
    fail "arm64 libvkqc.so" "size $size, needs $needed" "non-vkqc exports: $(echo "$bad" | head -5)"
  fi
else
  fail "arm64 libvkqc.so" "$(ls -l "$PREFIX"/lib* 2>&1)"
fi
host_hdr=$(find "$B/rt" -name '*.o.d' -exec cat {} + | tr ' \\' '\n\n' |
  grep -E '^/usr/include/(volk\.|vulkan/|vk_video/|flatbuffers/)' | sort -u | head -5)
copied=$(find "$B/rt" -name '*.o.d' -exec cat {} + | tr ' \\' '\n\n' | grep -cE "^$DEPS/(volk\.|vulkan/|flatbuffers/)")
if [ -z "$host_hdr" ] && [ "$copied" -gt 0 ]; then
  ok "volk, Vulkan and flatbuffers headers all came from VKQC_DEPS_INCLUDE_DIR (none from the host's /usr/include)"
else
  fail "dependency headers from VKQC_DEPS_INCLUDE_DIR" "from the host: $host_hdr" "from the copy: $copied"
fi
if cmake -S "$ROOT/examples/c-app" -B "$B/app" -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/aarch64-linux-gnu.cmake" \
     -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" > "$B/app.log" 2>&1 &&
   cmake --build "$B/app" >> "$B/app.log" 2>&1 &&
   aarch64-linux-gnu-readelf -h "$B/app/vkqc-c-app" | grep -q "Machine: *AArch64"; then
  ok "examples/c-app cross-built against the installed arm64 package (find_package(vkqc))"
else
  fail "arm64 c-app" "$(tail -n 20 "$B/app.log")"
  finish
fi
# The x86_64 side: the same app on the full build's libvkqc.so (the same target, built natively).
if cc -std=c99 -Wall -Wextra -Werror -o "$WORK/app-x86_64" "$ROOT/examples/c-app/main.c" -I"$ROOT/runtime/include" \
     -L"$ROOT/build" -lvkqc -Wl,-rpath,"$ROOT/build" > "$WORK/app-x86.log" 2>&1; then
  ok "examples/c-app built for x86_64 on build/libvkqc.so"
else
  fail "x86_64 c-app" "$(cat "$WORK/app-x86.log")"
  finish
fi

# ---- bundles, compiled on x86_64 -------------------------------------------------------------
LP128="$WORK/llvmpipe-128.json"
export LP_NATIVE_VECTOR_WIDTH=128 VK_DRIVER_FILES=$ICD_X86
vk probe -o "$LP128"
unset LP_NATIVE_VECTOR_WIDTH VK_DRIVER_FILES
if [ "$RC" -eq 0 ] && grep -q "128 bits" "$OUT_FILE"; then ok "probed llvmpipe at 128 bits on x86_64: $(head -1 "$OUT_FILE")"; else
  fail "probe at 128 bits" "$(last_run_report)"; fi
$PY "$ROOT/examples/llama/make_gguf.py" "$WORK/tiny" > "$WORK/gguf.log" 2>&1 || fail "make_gguf.py" "$(tail -5 "$WORK/gguf.log")"
expect_writes "compile the MLP for android-baseline-2022" "$WORK/mlp-android.vkqb" \
  compile "$ROOT/examples/mlp/graph.json" --target android-baseline-2022 --tokens 1,8 -o "$WORK/mlp-android.vkqb"
expect_writes "compile the MLP for llvmpipe-128 on the int8 dot path" "$WORK/mlp-dot.vkqb" \
  compile "$ROOT/examples/mlp/graph.json" --target "$LP128" --tokens 1,8 --force-accum dot -o "$WORK/mlp-dot.vkqb"
expect_writes "compile the tiny Llama decoder for llvmpipe-128" "$WORK/tiny.vkqb" \
  compile "$WORK/tiny/model.gguf" --target "$LP128" --tokens 1,4 -o "$WORK/tiny.vkqb"
# The x86_64 runs are right (the CPU reference), so equal arm64 runs are right too.
export LP_NATIVE_VECTOR_WIDTH=128 VK_DRIVER_FILES=$ICD_X86
expect_pass "x86_64 llvmpipe-128: the int8-dot MLP matches the reference" run "$WORK/mlp-dot.vkqb" --tokens 8 \
  --reference "$ROOT/examples/mlp/graph.json"
expect_pass "x86_64 llvmpipe-128: the decoder matches the reference" run "$WORK/tiny.vkqb" --tokens 4 \
  --reference "$WORK/tiny/model.gguf"
unset LP_NATIVE_VECTOR_WIDTH VK_DRIVER_FILES

# ---- runs: x86_64 natively, arm64 under qemu-user; outputs compared byte for byte ---------------
# Mesa's shader cache off: every run JIT-compiles its kernels (on arm64: LLVM's AArch64 back end
# under emulation), as on a fresh machine.
export MESA_SHADER_CACHE_DISABLE=true
# run_app NAME BUNDLE ARCH: the app's outputs into $WORK/NAME.ARCH.bin, its stdout into .txt.
run_app() {
  local name=$1 bundle=$2 arch=$3 rc
  local t=$(date +%s.%N)
  case $arch in
    arm64) VK_DRIVER_FILES=$ICD_ARM64 LD_LIBRARY_PATH=$(dirname "$LIB") timeout 600 \
             qemu-aarch64 "$B/app/vkqc-c-app" "$bundle" "$WORK/$name.$arch.bin" > "$WORK/$name.$arch.txt" 2>&1 ;;
    x86_64-128) LP_NATIVE_VECTOR_WIDTH=128 VK_DRIVER_FILES=$ICD_X86 timeout 300 \
             "$WORK/app-x86_64" "$bundle" "$WORK/$name.$arch.bin" > "$WORK/$name.$arch.txt" 2>&1 ;;
    x86_64) VK_DRIVER_FILES=$ICD_X86 timeout 300 \
             "$WORK/app-x86_64" "$bundle" "$WORK/$name.$arch.bin" > "$WORK/$name.$arch.txt" 2>&1 ;;
  esac
  rc=$?
  SECS=$(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  if [ $rc -eq 0 ] && [ -s "$WORK/$name.$arch.bin" ]; then return 0; fi
  fail "$name on $arch" "exit $rc" "$(tail -15 "$WORK/$name.$arch.txt")"
  return 1
}
# same NAME A B: the two runs' output bytes are identical.
same() {
  local name=$1 a=$2 b=$3
  local fa="$WORK/$name.$a.bin" fb="$WORK/$name.$b.bin"
  local dev_a dev_b
  dev_a=$(sed -n 's/^device: //p' "$WORK/$name.$a.txt") dev_b=$(sed -n 's/^device: //p' "$WORK/$name.$b.txt")
  if cmp -s "$fa" "$fb"; then
    ok "$name: $a ($dev_a) and $b ($dev_b) outputs bit-identical ($(stat -c %s "$fa") bytes)"
  else
    fail "$name: $a and $b outputs differ" "$(cmp -l "$fa" "$fb" 2> /dev/null | wc -l) of $(stat -c %s "$fa") bytes differ" \
      "$a: $(grep checksum "$WORK/$name.$a.txt" | head -4)" "$b: $(grep checksum "$WORK/$name.$b.txt" | head -4)"
  fi
}
for name in mlp-android mlp-dot tiny; do
  run_app "$name" "$WORK/$name.vkqb" arm64 || continue
  echo "     ($name under qemu-aarch64: $SECS s)"
  run_app "$name" "$WORK/$name.vkqb" x86_64-128 && same "$name" arm64 x86_64-128
done
# The decoder's greedy tokens (vkqc_model_decode_greedy, printed by the app) agree too.
ga=$(grep '^greedy:' "$WORK/tiny.arm64.txt" 2>/dev/null) gx=$(grep '^greedy:' "$WORK/tiny.x86_64-128.txt" 2>/dev/null)
if [ -n "$ga" ] && [ "$ga" = "$gx" ]; then ok "tiny: arm64 and x86_64-128 greedy tokens on the device loop agree ($ga)"
else fail "tiny greedy tokens differ or are missing" "arm64: $ga" "x86_64-128: $gx"; fi
# The portable bundle also at x86_64's own width (AVX2, subgroup size 8).
run_app mlp-android "$WORK/mlp-android.vkqb" x86_64 && same mlp-android arm64 x86_64
echo "arm64: $(($(date +%s) - T0)) s in all (installs and build/vkqc: $T_SETUP s)"
finish
