#!/usr/bin/env bash
# One device call for the GGUF / q8gsw work (bench/RESULTS.md, "GGUF session"): carried binaries
# in .dev/ (vkqc, vkqc_gpu_tests), the Vulkan loader and validation layer in .gl/.
# 1. GPU tests with the H100's probed profile and validation: the cooperative-matrix suites
#    (q8gsw int8 and fp16 included), the q8gsw GEMV/GEMM combos, the combinations table.
# 2. Tiny GGUF models (Q4_0, Q8_0) compiled for nvidia-hopper: generation = the numpy decoder.
# 3. q8gsw against q8csw and q4gsw layers at decode and prefill sizes (vkqc bench, read roofline).
# usage (on the device, repo root): bash bench/device_gguf.sh   (writes to $OUT)
set -u
source bench/device_env.sh
V=$PWD/.dev/vkqc
P=/tmp/h100.json S=nvidia-hopper
T0=$(date +%s); t() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
$V probe -o "$P" > /dev/null || exit 1
t "GPU tests (validation on)"
VKQC_TEST_PROFILE=$P timeout 300 .dev/vkqc_gpu_tests --gtest_filter='CoopMat*:All/Int4Combos.*q8gsw*:Ops/Combinations.*:Combinations.*' > $OUT/gpu_tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED)|tests ran|Failure|SKIPPED' $OUT/gpu_tests.log | head -20
t "GGUF tiny models vs the numpy decoder"
for ty in q4_0 q8_0; do
  python3 examples/llama/make_gguf.py /tmp/g-$ty --type $ty > /dev/null
  $V compile /tmp/g-$ty/model.gguf --target nvidia-hopper --tokens 1,4 -o /tmp/g-$ty.vkqb | tail -1
  got=$($V generate /tmp/g-$ty.vkqb --prompt "The capital of France is" --max-new-tokens 32 --ignore-eos --validation)
  ids=$(echo "$got" | grep '^prompt ids:' | sed 's/prompt ids: //')
  want=$(python3 tests/e2e/llama_reference.py /tmp/g-$ty/ref --prompt-ids "$ids" --max-new-tokens 32 --chunks 4,1 | grep '^tokens:')
  [ "$(echo "$got" | grep '^tokens:')" = "$want" ] && echo "$ty: generation = numpy decoder" || { echo "$ty: MISMATCH"; echo "$got"; echo "numpy $want"; }
done
t "q8gsw vs q8csw vs q4gsw layers"
for sh in "4096 14336" "14336 4096" "2048 8192" "8192 2048"; do
  set -- $sh
  for w in q8csw q8gsw q4gsw; do
    python3 bench/gen_linear.py /tmp/l-$w-$1-$2 $1 $2 dq8ca $w 32
    $V compile /tmp/l-$w-$1-$2/graph.json --target nvidia-hopper --tokens 1,8,512 -o /tmp/l.vkqb > /dev/null || { echo "compile $w $1x$2 failed"; continue; }
    $V run /tmp/l.vkqb --tokens 8 --reference /tmp/l-$w-$1-$2/graph.json | grep -E "PASS|FAIL" | head -1
    for m in 1 8 512; do
      timeout 60 $V bench /tmp/l.vkqb --tokens $m --min-ms 200 --roofline "$S" > /tmp/b.txt 2>&1
      echo "K=$1 N=$2 $w M=$m:"; grep -E '^(linear|quantize|total)' /tmp/b.txt
    done
  done
done
t done
