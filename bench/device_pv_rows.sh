#!/usr/bin/env bash
# Device call of 2026-12-07 (second): the decode attention's PV key slices for up to 8 queries a
# workgroup (the 1b example's 8-token program: groups of 2 rows x 4 heads), against the previous
# main's binary (vkqc_old) on the same machine: the decode-attention GPU tests with the probed
# profile and validation on, then the 1b example's 1-, 2-, 4- and 8-token steps at position 128,
# two alternating rounds. Carry .gl and .dev (.dev/bin.tar.xz: vkqc_old, vkqc, vkqc_gpu_tests).
# usage (on the device, repo root): bash bench/device_pv_rows.sh   (writes to $OUT)
set -u
export OUT
source bench/device_env.sh
device_setup .dev/x/vkqc
.dev/x/vkqc probe -o "$P" > /dev/null || exit 1
t "GPU tests (probed profile, validation on)"
VKQC_TEST_PROFILE=$P timeout 200 .dev/x/vkqc_gpu_tests --gtest_filter='Decoder.*DecodeAttention*' > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED|SKIPPED)|Failure' $OUT/tests.log | head
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for b in vkqc_old vkqc; do
  .dev/x/$b compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,2,4,8 -o /tmp/1b_$b.vkqb > /dev/null || exit 1
done
.dev/x/vkqc inspect /tmp/1b_vkqc.vkqb | grep -o "PV by [0-9]* key slices" | sort | uniq -c
t "timings"
for round in 1 2; do
  for n in 1 2 4 8; do
    for b in vkqc_old vkqc; do whole $b /tmp/1b_$b.vkqb "r$round $b 1b $n token(s) at 128" --tokens $n --position 128 --min-ms 300; done
  done
done
t done
