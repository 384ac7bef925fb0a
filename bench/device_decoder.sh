#!/usr/bin/env bash
# One device call for the decoder work (bench/RESULTS.md, "decoder"): carried binaries in .dev/
# (vkqc, vkqc_gpu_tests; static but for libc), the Vulkan loader and validation layer in .gl/.
# Probes the device, measures its roofline, runs the decoder GPU tests with validation, checks the
# tiny example against the numpy decoder on this GPU, then compiles the 1b example for the
# built-in nvidia-hopper profile, checks it against the CPU reference and times generation at
# contexts 128, 512 and 2048 and per layer (vkqc bench).
# usage (on the device, repo root): bash bench/device_decoder.sh   (writes to $OUT)
set -u
for f in .gl/lib*.deb; do dpkg -x "$f" /; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers*.deb /tmp/vl
export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d
export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
V=$PWD/.dev/vkqc
P=/tmp/h100.json S=/tmp/h100.vkqc.json
T0=$(date +%s); t() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
$V probe -o "$P" > /dev/null || exit 1
t roofline; timeout 120 $V roofline --min-ms 50 -o "$S" 2>&1 | tail -6
if [ -n "${QUICK:-}" ]; then  # kernel experiments: decoder tests, the 1b example's benches only
  VKQC_TEST_PROFILE=$P timeout 120 .dev/vkqc_gpu_tests --gtest_filter='Decoder.*:RowFusion.*' 2>&1 | grep -E '^\[  (PASSED|FAILED)|Failure'
  python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
  $V compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,16,128,512 -o /tmp/1b.vkqb | tail -1
  $V inspect /tmp/1b.vkqb | grep -A1 "layers.3.attention attention" | head -8
  timeout 150 $V run /tmp/1b.vkqb --tokens 16 --reference /tmp/1b/graph.json | tail -2
  timeout 60 $V bench /tmp/1b.vkqb --tokens 512 --min-ms 3000 > /dev/null 2>&1
  for spec in "1 128" "1 2040" "512 0"; do
    set -- $spec
    timeout 60 $V bench /tmp/1b.vkqb --tokens $1 --position $2 --roofline "$S" > $OUT/bench_t$1_p$2.txt 2>&1
    echo "tokens=$1 position=$2: $(grep whole $OUT/bench_t$1_p$2.txt)"; grep "layers.3.attention" $OUT/bench_t$1_p$2.txt
  done
  exit 0
fi
t "decoder GPU tests (validation on)"
VKQC_TEST_PROFILE=$P timeout 120 .dev/vkqc_gpu_tests --gtest_filter="${DEC_FILTER:-Decoder.*}" > /tmp/decoder_tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED)|tests ran|Failure' /tmp/decoder_tests.log | head -12
t "tiny on this GPU vs the numpy decoder"
python3 examples/llama/make_example.py /tmp/tiny --config tiny > /dev/null
$V compile /tmp/tiny/graph.json --target nvidia-hopper --tokens 1,16 -o /tmp/tiny.vkqb | tail -1
for pr in 1,5,9,200,33 3,14,15,92,65,35,89,79,32,38,46,26,43,38,32,79,50,28,84,19; do
  want=$(python3 tests/e2e/llama_reference.py /tmp/tiny --prompt-ids $pr --max-new-tokens 32 | grep '^tokens:')
  got=$($V generate /tmp/tiny.vkqb --prompt-ids $pr --max-new-tokens 32 --validation 2>&1 | grep '^tokens:')
  [ "$want" = "$got" ] && echo "tiny greedy 32 = numpy (prompt $pr)" || echo "tiny DIFFERS (prompt $pr): numpy $want / vkqc $got"
done
python3 tests/e2e/llama_per_op.py $V /tmp/tiny 3,14,15,92,65,35,89,79,32,38,46,26,43,38,32,79 /tmp/perop 2>&1 | sed 's/lavapipe/nvidia-hopper/' | head -3
$V run /tmp/tiny.vkqb --tokens 16 --reference /tmp/tiny/graph.json --validation | tail -2
t "1b example"
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
timeout 120 $V compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,16,128,512 -o /tmp/1b.vkqb | tail -1
$V inspect /tmp/1b.vkqb > /tmp/inspect_1b.txt
t "1b tokens=1 against the CPU reference"; timeout 150 $V run /tmp/1b.vkqb --tokens 1 --reference /tmp/1b/graph.json | tail -3
# The GPU clocks up under sustained load: warm it before timing (the first session's decode
# timings varied 2.4x with the clock state).
t "warm-up"; timeout 60 $V bench /tmp/1b.vkqb --tokens 512 --min-ms 3000 > /dev/null 2>&1
ids() { python3 -c "import random; r=random.Random($2); print(','.join(str(r.randrange(128256)) for _ in range($1)))"; }
for ctx in 128 512 1984; do
  t "1b generate: prompt $ctx + 64 tokens"
  timeout 120 $V generate /tmp/1b.vkqb --prompt-ids $(ids $ctx $ctx) --max-new-tokens 64 | grep -v '^tokens' 
done
t "1b bench"
for spec in "1 128" "1 512" "1 2040" "16 0" "128 0" "512 0"; do
  set -- $spec
  echo "== bench tokens=$1 position=$2"
  timeout 60 $V bench /tmp/1b.vkqb --tokens $1 --position $2 --roofline "$S" --min-ms 100 > $OUT/bench_t$1_p$2.txt 2>&1
  tail -4 $OUT/bench_t$1_p$2.txt
done
t "whole GPU suite (validation on)"
VKQC_TEST_PROFILE=$P timeout 200 .dev/vkqc_gpu_tests > /tmp/gpu_tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED)|tests ran|^\[  SKIPPED' /tmp/gpu_tests.log | tail -8
t done
