#!/usr/bin/env bash
# One device call closing the CNN session (issue 15 part 4): the whole GPU suite with the probed
# profile and validation on (vkqc_gpu_tests of this tree: the conv tests run the rows kernel, its
# lanes, the residual adds and the depthwise + pointwise kernel with the H100's own profile), then
# the MobileNetV2-shaped CNN against the previous main (bench/device_cnn.sh).
# usage (on the device, repo root): bash bench/device_cnn_final.sh   (writes to $OUT)
set -u
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
device_suite
t "the CNN"
VARIANTS="default:" bash bench/device_cnn.sh
