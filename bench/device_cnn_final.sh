#!/usr/bin/env bash
# One device call closing the CNN session (issue 15 part 4): the whole GPU suite with the probed
# profile and validation on (vkqc_gpu_tests of this tree: the conv tests run the rows kernel, its
# lanes, the residual adds and the depthwise + pointwise kernel with the H100's own profile), then
# the MobileNetV2-shaped CNN against the previous main (bench/device_cnn.sh).
# usage (on the device, repo root): bash bench/device_cnn_final.sh   (writes to $OUT)
set -u
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
t "the whole GPU suite (validation on)"
VKQC_TEST_PROFILE=$P timeout 420 .dev/x/vkqc_gpu_tests > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED|SKIPPED)|tests ran|Failure' $OUT/tests.log | head -12
t "the CNN"
VARIANTS="default:" bash bench/device_cnn.sh
