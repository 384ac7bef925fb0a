#!/usr/bin/env bash
# Fuzzing and sanitizers (README "Fuzzing and sanitizers"); CI runs it after run-tests.sh.
#   fuzz  libFuzzer targets of every reader (tests/fuzz, clang, ASan+UBSan) built in build-fuzz/,
#         each run for VKQC_FUZZ_SECONDS (default 20; seed VKQC_FUZZ_SEED, default 1) from its
#         checked-in seed corpus (which holds every reproducer found so far); any crash,
#         sanitizer report, leak, timeout or out-of-memory fails (the reproducer is left in
#         build-fuzz/artifacts/)
#   asan  AddressSanitizer + UndefinedBehaviorSanitizer build (clang, -fno-sanitize-recover=all;
#         the product at -O1, the test sources at -O0, which halves their compile time; clang
#         builds it in about half gcc's time) in build-asan/: the unit tests, the CLI end-to-end
#         tests and a GPU subset on lavapipe
#   tsan  ThreadSanitizer build of tests/threads in build-tsan/: two contexts in two threads and
#         what vkqc.h promises about threads, on lavapipe (bundles from build-asan's vkqc, or build's)
# usage: bash scripts/sanitize.sh [fuzz] [asan] [tsan]      (no argument: all three, in that order)
# VKQC_JOBS: build parallelism (2). VKQC_BUILD_LOCK=FILE: every build and test step under
# `flock FILE` (a machine shared with other builds). Suppressions and why: tests/sanitizers/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
JOBS=${VKQC_JOBS:-2}
STAGES=${*:-fuzz asan tsan}
SUPP=$ROOT/tests/sanitizers
export VK_DRIVER_FILES=${VKQC_LAVAPIPE_ICD:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}

locked() {
  if [ -n "${VKQC_BUILD_LOCK:-}" ]; then flock "$VKQC_BUILD_LOCK" "$@"; else "$@"; fi
}
stamp() { echo "sanitize: $(date +%H:%M:%S) $*"; }

# What the stages need beyond scripts/setup.sh: clang with its sanitizer/libFuzzer runtimes and
# llvm-symbolizer (readable stack traces).
need=""
command -v clang++ >/dev/null || need="$need clang"
dpkg-query -W -f='${Status}' libclang-rt-14-dev 2>/dev/null | grep -q "install ok installed" || need="$need libclang-rt-14-dev"
command -v llvm-symbolizer >/dev/null || need="$need llvm"
if [ -n "$need" ]; then
  stamp "installing$need"
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $need >/dev/null
fi
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer || true)}

SAN_FLAGS="-fno-omit-frame-pointer -g1"

# ---- fuzz ---------------------------------------------------------------------------------------
fuzz_stage() {
  stamp "fuzz: build (clang, -fsanitize=fuzzer,address,undefined)"
  locked cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DVKQC_FUZZ=ON -DVKQC_BUILD_TESTS=OFF -DVKQC_STATIC_RUNTIME=OFF >/dev/null
  locked cmake --build build-fuzz -j"$JOBS" --target vkqc_fuzz_all
  local secs=${VKQC_FUZZ_SECONDS:-20} failed=""
  mkdir -p build-fuzz/artifacts
  for dir in tests/fuzz/corpus/*/; do
    local t
    t=$(basename "$dir")
    # New inputs go to a scratch corpus; the checked-in seeds are only read.
    rm -rf "build-fuzz/corpus/$t" && mkdir -p "build-fuzz/corpus/$t"
    local dict=()
    [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
    if locked env TMPDIR=/dev/shm ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "build-fuzz/tests/fuzz/${t}_fuzz" \
        -max_total_time="$secs" -seed="${VKQC_FUZZ_SEED:-1}" -timeout=20 -rss_limit_mb=2560 -print_final_stats=1 "${dict[@]}" \
        -artifact_prefix="build-fuzz/artifacts/$t-" "build-fuzz/corpus/$t" "$dir" \
        > "build-fuzz/$t.log" 2>&1; then
      stamp "fuzz: $t ok ($(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "build-fuzz/$t.log" | grep -o '[0-9]*$') executions in ${secs} s)"
    else
      stamp "fuzz: $t FAILED"
      grep -E -A30 "ERROR: |SUMMARY|fuzz property|internal error|Test unit written" "build-fuzz/$t.log" | head -60 || tail -40 "build-fuzz/$t.log"
      failed="$failed $t"
    fi
  done
  if [ -n "$failed" ]; then
    echo "sanitize: fuzz targets failed:$failed (reproduce: build-fuzz/tests/fuzz/T_fuzz build-fuzz/artifacts/T-crash-...)"
    return 1
  fi
}

# ---- asan ---------------------------------------------------------------------------------------
# End-to-end tests left out of the AddressSanitizer run: e2e.package builds and installs its own
# uninstrumented runtime (nothing of build-asan runs); e2e.llama_mlp, e2e.onnx_conformance and
# e2e.mobilenetv2 spend minutes in the instrumented CPU reference on large shapes, on 146 ONNX node
# tests and on six per-op checks of a 224x224 network, paths that e2e.llama, e2e.onnx (quantized
# CNNs), the GPU subset's convolution tests and the ONNX fuzz target cover in a fraction of the time.
ASAN_E2E_EXCLUDE=${VKQC_ASAN_E2E_EXCLUDE:-'^e2e\.(package|llama_mlp|onnx_conformance|mobilenetv2)$'}
asan_stage() {
  stamp "asan: build (clang -O1, tests -O0, -fsanitize=address,undefined)"
  local f="-fsanitize=address,undefined -fno-sanitize-recover=all $SAN_FLAGS"
  # A cache configured with another compiler (gcc before 2026-11-27) cannot switch: start over.
  if [ -f build-asan/CMakeCache.txt ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' build-asan/CMakeCache.txt; then
    rm -rf build-asan
  fi
  locked cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Release -DVKQC_STATIC_RUNTIME=OFF -DVKQC_TEST_COMPILE_OPTIONS=-O0 \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_C_FLAGS_RELEASE="-O1" -DCMAKE_CXX_FLAGS_RELEASE="-O1" \
    -DCMAKE_C_FLAGS="$f" -DCMAKE_CXX_FLAGS="$f" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
    >/dev/null
  locked cmake --build build-asan -j"$JOBS" --target vkqc vkqc_unit_tests vkqc_graph_tests vkqc_tokenizer_tests \
    vkqc_profile_tests vkqc_gpu_subset_tests vkqc_threads_test
  gcc -shared -fPIC -O2 -o build-asan/keep_modules.so tests/sanitizers/keep_modules.c
  # Leaks are checked, except inside the Vulkan loader, Mesa and the validation layer (lsan.supp),
  # which stay mapped (keep_modules.so) so their frames can be named. verify_asan_link_order=0: the
  # preloaded shim comes before libasan in the library list, which is harmless.
  export LD_PRELOAD="$ROOT/build-asan/keep_modules.so"
  export ASAN_OPTIONS="detect_leaks=1:verify_asan_link_order=0:strict_string_checks=1:check_initialization_order=1"
  export LSAN_OPTIONS="suppressions=$SUPP/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  stamp "asan: unit tests"
  locked ctest --test-dir build-asan --output-on-failure -j"$JOBS" -L unit
  stamp "asan: GPU subset on lavapipe (validation layer on), thread-safety test"
  locked build-asan/tests/vkqc_gpu_subset_tests --gtest_brief=1
  locked ctest --test-dir build-asan --output-on-failure -R '^gpu\.threads$'
  stamp "asan: CLI end-to-end tests (excluded: $ASAN_E2E_EXCLUDE)"
  locked ctest --test-dir build-asan --output-on-failure -j"$JOBS" -L e2e -E "$ASAN_E2E_EXCLUDE"
  unset LD_PRELOAD ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
}

# ---- tsan ---------------------------------------------------------------------------------------
tsan_stage() {
  stamp "tsan: build (gcc, -fsanitize=thread)"
  locked cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Release -DVKQC_STATIC_RUNTIME=OFF \
    -DCMAKE_C_FLAGS_RELEASE="-O2" -DCMAKE_CXX_FLAGS_RELEASE="-O2" \
    -DCMAKE_C_FLAGS="-fsanitize=thread $SAN_FLAGS" -DCMAKE_CXX_FLAGS="-fsanitize=thread $SAN_FLAGS" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" >/dev/null
  locked cmake --build build-tsan -j"$JOBS" --target vkqc_threads_test
  local vkqc=build-asan/vkqc
  [ -x "$vkqc" ] || vkqc=build/vkqc
  stamp "tsan: threads test on lavapipe (bundles from $vkqc)"
  # Races inside Mesa (lavapipe, llvmpipe, LLVM) and the Vulkan loader are not vkqc's: tsan.supp
  # names only those libraries.
  (
    unset ASAN_OPTIONS LSAN_OPTIONS
    export TSAN_OPTIONS="suppressions=$SUPP/tsan.supp:halt_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0"
    locked bash tests/threads/run.sh "$vkqc" build-tsan/tests/vkqc_threads_test build-tsan/threads "${VKQC_TSAN_ROUNDS:-6}"
  )
}

for s in $STAGES; do
  case $s in
    fuzz) fuzz_stage ;;
    asan) asan_stage ;;
    tsan) tsan_stage ;;
    *) echo "usage: $0 [fuzz] [asan] [tsan]" >&2; exit 2 ;;
  esac
done
stamp "done: $STAGES"
