#!/usr/bin/env bash
# One device call (issue 15, the CNN): the pointwise convolution that reads a depthwise + pointwise
# layer's output computed by that layer's kernel (conv_rows_i8.comp VKQC_CHAIN), vkqc, against
# the previous main (vkqc_old), same machine (compile variants in $VARIANTS, as bench/device_cnn.sh): the conv GPU tests with the probed profile and
# validation on, then the MobileNetV2-shaped CNN (bench/device_cnn.sh: reference-checked per op and
# end to end, per-layer timestamps) in two alternating rounds, then whole-program times alternating.
# Carry .gl and .dev (.dev/bin.tar.xz: vkqc_old, vkqc, vkqc_gpu_tests). Output also in $OUT/log.txt.
# WHOLE_VARIANTS "name:ENV=value ...;...": vkqc's compile under those variables in the whole-program rounds too
# (session 22 measured VKQC_CHAIN_LANE_UNITS and VKQC_CHAIN_WORKGROUP this way: a8bca1b's binary; both
# removed since, with the cap they measured best in conv.h).
# usage (on the device, repo root): [SKIP_TESTS=1] [ROUNDS=n] bash bench/device_chain.sh
set -u
export OUT
exec > >(tee $OUT/log.txt) 2>&1
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
if [ -z "${SKIP_TESTS:-}" ]; then
  t "conv GPU tests (probed profile, validation on)"
  VKQC_TEST_PROFILE=$P timeout 200 .dev/x/vkqc_gpu_tests --gtest_filter="${TEST_FILTER:-Conv2d.*:Cnn*}" > $OUT/tests.log 2>&1
  echo "rc=$?"; grep -E '^\[  (PASSED|FAILED)|tests ran|Failure' $OUT/tests.log | head -12
fi
for round in $(seq ${ROUNDS:-2}); do
  t "round $round"
  VARIANTS="${VARIANTS:-default:}" BINS="vkqc_old vkqc" TARGETS=nvidia-hopper timeout 200 bash bench/device_cnn.sh 2>&1 | grep -v "^\["
  mkdir -p $OUT/r$round && mv $OUT/bench_* $OUT/inspect_* $OUT/r$round/ 2>/dev/null
done
python3 examples/mobilenetv2/make_example.py /tmp/cnn > /dev/null
for b in vkqc_old vkqc; do .dev/x/$b compile /tmp/cnn/graph.json --target nvidia-hopper -o /tmp/w_$b.vkqb > /dev/null; done
IFS=';' read -ra wv <<< "${WHOLE_VARIANTS:-}"  # "name:ENV=value ...;...": vkqc compiled with those as "vkqc:name"
for v in "${wv[@]}"; do
  env ${v#*:} .dev/x/vkqc compile /tmp/cnn/graph.json --target nvidia-hopper -o /tmp/w_v${v%%:*}.vkqb > /dev/null
  echo "vkqc:${v%%:*} ($(.dev/x/vkqc inspect /tmp/w_v${v%%:*}.vkqb | grep -m1 '^program'))"
done
for round in 1 2 3; do
  for b in vkqc_old vkqc; do whole $b /tmp/w_$b.vkqb "w$round $b CNN" --min-ms 1000; done
  for v in "${wv[@]}"; do whole vkqc /tmp/w_v${v%%:*}.vkqb "w$round vkqc:${v%%:*} CNN" --min-ms 1000; done
done
t done
