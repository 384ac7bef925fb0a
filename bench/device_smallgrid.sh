#!/usr/bin/env bash
# One device call (issue 15 part 4): the small-grid block rule (64x64 cooperative-matrix blocks
# for grouped weights where 128x128 gives < 128 workgroups) on the H100: cooperative-matrix and
# decoder GPU tests with validation, the 1b example (prefill 512 / 128, decode at context 128,
# per-layer table), and the default vs 128x128 vs 64x64 blocks on the 8B shapes at M=128
# and 512 (each tile reference-checked on a ragged layer by bench/coopmat_sweep.sh).
# usage (on the device, repo root): bash bench/device_smallgrid.sh   (writes to $OUT)
set -u
source bench/device_env.sh
mkdir -p .dev/x && tar xJf .dev/bin.tar.xz -C .dev/x
V=$PWD/.dev/x/vkqc
T0=$(date +%s); t() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
$V probe -o /tmp/h.json > /dev/null || exit 1
timeout 120 $V roofline --min-ms 30 -o /tmp/s.vkqc.json > /dev/null 2>&1
t "GPU tests (validation on)"
VKQC_TEST_PROFILE=/tmp/h.json timeout 200 .dev/x/vkqc_gpu_tests --gtest_filter='CoopMat*:Int4*:Decoder.*:LinearVariants*' 2>&1 |
  grep -E '^\[  (PASSED|FAILED)|Failure|tests ran'
t "1b example"
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
timeout 150 $V compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,128,512 -o /tmp/1b.vkqb | tail -1
$V inspect /tmp/1b.vkqb | grep -A1 "layers.3.k_proj\|layers.3.down_proj" | grep -o "block [0-9x]*" | sort | uniq -c
timeout 60 $V bench /tmp/1b.vkqb --tokens 512 --min-ms 3000 > /dev/null 2>&1  # clocks up
for spec in "512 0" "128 0" "1 128"; do
  set -- $spec
  f=$OUT/bench_t$1_p$2.txt
  timeout 60 $V bench /tmp/1b.vkqb --tokens $1 --position $2 --roofline /tmp/s.vkqc.json > $f 2>&1
  echo "tokens=$1 position=$2: $(grep whole $f)"
done
t "8B shapes"
for shape in "4096 14336" "14336 4096"; do
  for T in 128 512; do
    set -- $shape
    GROUP=32 timeout 100 bash bench/coopmat_sweep.sh $V nvidia-hopper /tmp/s.vkqc.json $1 $2 dq8ca:q4gsw $T 4x4x2x2x32 4x4x1x1x32
  done
done
t done
