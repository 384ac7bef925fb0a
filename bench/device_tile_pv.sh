#!/usr/bin/env bash
# Device call of 2026-12-07: the stem's rows gathered once per workgroup (VKQC_GATHER_TILE), the
# depthwise phase of the depthwise + pointwise kernel in constant rounds, and the decode
# attention's PV step by key slices (VKQC_PV_SLICES), against the previous main's binary
# (vkqc_old) on the same machine. Carry .gl and .dev (.dev/bin.tar.xz: vkqc_old, vkqc,
# vkqc_gpu_tests). First the GPU tests that run both with the probed profile and validation on,
# then each program checked against the CPU reference, then two alternating rounds of timings.
# usage (on the device, repo root): bash bench/device_tile_pv.sh   (writes to $OUT)
set -u
export OUT
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
t "GPU tests (probed profile, validation on)"
VKQC_TEST_PROFILE=$P timeout 300 .dev/x/vkqc_gpu_tests \
  --gtest_filter='Conv2d.RowsKernelMatchesReference:Conv2d.DepthwiseComputedByThePointwiseConvolution:Decoder.*DecodeAttention*' > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED|SKIPPED)|Failure' $OUT/tests.log | head
python3 examples/mobilenetv2/make_example.py /tmp/cnn > /dev/null || exit 1
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for b in vkqc_old vkqc; do
  .dev/x/$b compile /tmp/cnn/graph.json --target nvidia-hopper -o /tmp/cnn_$b.vkqb > /dev/null || exit 1
  .dev/x/$b compile /tmp/cnn/graph.json --target nvidia-hopper --keep-intermediates -o /tmp/cnnk_$b.vkqb > /dev/null || exit 1
  .dev/x/$b compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,4 -o /tmp/1b_$b.vkqb > /dev/null || exit 1
  echo "$b cnn per op: $(timeout 120 .dev/x/$b run /tmp/cnnk_$b.vkqb --reference /tmp/cnn/graph.json --per-op 2>&1 | grep -E 'failed|PASS|FAIL' | tr '\n' ' ')"
  echo "$b cnn: $(timeout 120 .dev/x/$b run /tmp/cnn_$b.vkqb --reference /tmp/cnn/graph.json 2>&1 | grep -E 'PASS|FAIL' | tr '\n' ' ')"
  [ $b = vkqc ] && echo "$b 1b one token: $(timeout 200 .dev/x/$b run /tmp/1b_$b.vkqb --tokens 1 --reference /tmp/1b/graph.json 2>&1 | grep -E 'output|PASS|FAIL' | tr '\n' ' ')"
done
t "timings"
for round in 1 2; do
  for b in vkqc_old vkqc; do whole $b /tmp/cnn_$b.vkqb "r$round $b cnn" --min-ms 1000; done
  for pos in 128 512 2032; do
    for b in vkqc_old vkqc; do whole $b /tmp/1b_$b.vkqb "r$round $b 1b position $pos" --tokens 1 --position $pos --min-ms 300; done
  done
  for b in vkqc_old vkqc; do whole $b /tmp/1b_$b.vkqb "r$round $b 1b 4 tokens at 128" --tokens 4 --position 128 --min-ms 300; done
done
t "per layer (timestamps)"
for b in vkqc_old vkqc; do
  timeout 60 .dev/x/$b bench /tmp/cnn_$b.vkqb --min-ms 1000 > $OUT/cnn_layers_$b.txt 2>&1
  timeout 60 .dev/x/$b bench /tmp/1b_$b.vkqb --tokens 1 --position 128 --min-ms 300 > $OUT/1b_layers_$b.txt 2>&1
  grep -E "layers.3.attention " $OUT/1b_layers_$b.txt | sed "s/^/$b /"
done
echo "CNN per layer (µs with timestamps): layer old new"
join <(awk '$1 ~ /^(conv|pool|fc|classifier)/ {print $1, $3}' $OUT/cnn_layers_vkqc_old.txt | LC_ALL=C sort -k1,1) \
     <(awk '$1 ~ /^(conv|pool|fc|classifier)/ {print $1, $3}' $OUT/cnn_layers_vkqc.txt | LC_ALL=C sort -k1,1) | sort -V | awk '$2 > 0 || $3 > 0' | tr '\n' ';'
echo
t done
