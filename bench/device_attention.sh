#!/usr/bin/env bash
# One device call (issue 15 part 4, issue 13 part 6), carried in .dev/ as xz archives (the tree's
# 64 MiB limit): vkqc + vkqc_gpu_tests (static but for libc) and the libFuzzer targets
# (build-fuzz, debug info stripped, with this machine's libstdc++).
# 1. in the background, on the CPU cores: the fuzz long run, every target to 10^6 executions
#    (tests/fuzz/long_run_parallel.sh, workers per target by its speed);
# 2. on the GPU: decoder and row-fusion GPU tests with validation (the tiled attention cases), the
#    1b example compiled with the default attention (tiled for prefill) and with
#    --force-attention rows, its 16-token program checked against the CPU reference, and both
#    timed (vkqc bench) at 512 and 128 prompt tokens, and decode at context 128.
# usage (on the device, repo root): bash bench/device_attention.sh   (writes to $OUT)
set -u
source bench/device_env.sh
mkdir -p .dev/x && for a in .dev/*.tar.xz; do tar xJf "$a" -C .dev/x; done
V=$PWD/.dev/x/vkqc
T0=$(date +%s); t() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nproc; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ -d .dev/x/fz ]; then
  mkdir -p build-fuzz/tests/fuzz && cp .dev/x/fz/*_fuzz build-fuzz/tests/fuzz/
  (LD_LIBRARY_PATH=$PWD/.dev/x/fz MAX_SECONDS=${FUZZ_SECONDS:-450} nice -n 5 bash tests/fuzz/long_run_parallel.sh 1000000 build-fuzz/tests/fuzz \
     "${FUZZ_WORKERS:-gguf=7 tokenizer=3 profile=2 vkqb=2}" > $OUT/fuzz_long.md 2>&1) &
  FUZZ=$!
fi
$V probe -o /tmp/h.json > /dev/null || exit 1
t roofline; timeout 120 $V roofline --min-ms 50 -o /tmp/s.vkqc.json 2>&1 | tail -3
t "decoder GPU tests (validation on)"
VKQC_TEST_PROFILE=/tmp/h.json timeout 150 .dev/x/vkqc_gpu_tests --gtest_filter='Decoder.*:RowFusion.*' 2>&1 |
  grep -E '^\[  (PASSED|FAILED)|Failure|Expected|Which|hq '
t "1b example"
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for att in auto rows; do
  opt=(); [ $att = rows ] && opt=(--force-attention rows)
  timeout 150 $V compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,16,128,512 "${opt[@]}" -o /tmp/1b-$att.vkqb | tail -1
  $V inspect /tmp/1b-$att.vkqb | grep -A1 "layers.3.attention attention" | head -8
done
# Every op on the GPU's own inputs (a random-weight 16-layer network amplifies fp32 rounding
# differences; the whole model's argmax is checked too, as information).
t "1b 16 tokens against the CPU reference"
timeout 150 $V compile /tmp/1b/graph.json --target nvidia-hopper --tokens 16,40 --keep-intermediates -o /tmp/1b-keep.vkqb | tail -1
for tk in 16 40; do
  timeout 200 $V run /tmp/1b-keep.vkqb --tokens $tk --reference /tmp/1b/graph.json --per-op > /tmp/perop$tk.txt 2>&1
  echo "tokens $tk rc=$?"; grep -E "FAIL|per-op|output next" /tmp/perop$tk.txt | head -8
done
for att in auto rows; do
  timeout 200 $V run /tmp/1b-$att.vkqb --tokens 16 --reference /tmp/1b/graph.json > /tmp/ref.txt 2>&1
  echo "$att whole model rc=$?: $(grep -E 'output next' /tmp/ref.txt | tr '\n' ' ')"
done
timeout 60 $V bench /tmp/1b-auto.vkqb --tokens 512 --min-ms 3000 > /dev/null 2>&1  # clocks up
for att in auto rows; do
  for spec in "512 0" "128 0" "1 128"; do
    set -- $spec
    f=$OUT/bench_${att}_t$1_p$2.txt
    timeout 60 $V bench /tmp/1b-$att.vkqb --tokens $1 --position $2 --roofline /tmp/s.vkqc.json > $f 2>&1
    echo "$att tokens=$1 position=$2: $(grep whole $f)"; grep "layers.3.attention" $f
  done
done
t "GPU done"
if [ -n "${FUZZ:-}" ]; then
  wait $FUZZ; echo "fuzz rc=$?"; cat $OUT/fuzz_long.md
  cp -r build-fuzz/plong/artifacts $OUT/ 2>/dev/null
fi
t done
