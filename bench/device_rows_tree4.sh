#!/usr/bin/env bash
# Fourth device call of session 20 (2026-12-07): call 1 timed 14336x4096 dq8ca x q4gsw at M = 8
# (the GEMV with 32 threads x 2 channels x 8 rows: one subgroup per workgroup) 41.41 us with
# 0ddfdbc and 53.98 with a tree whose several-row epilogue read the zero point as zx[i / NR] (a
# dynamic index). Binaries (.dev/bin.tar.xz): vkqc_old (0ddfdbc), vkqc_main (5140308: session
# 19's epilogue, act_zero_point(m)), vkqc_d (zx[i / NR], the store helpers), vkqc (the landing
# candidate: main's epilogue on subgroups). Two rounds. Output also in $OUT/log.txt.
set -u
export OUT
exec > >(tee $OUT/log.txt) 2>&1
for round in 1 2; do
  BINS="vkqc_old vkqc_main vkqc_d vkqc" MODES="sel:" TOKENS="4 8" LAYERS="14336 4096 dq8ca q4gsw;8192 2048 dq8ca q4gsw" \
    timeout 110 bash bench/device_smallm2.sh
done
