#!/usr/bin/env bash
# One device call (issue 15 part 3): the int4 GEMV with software-pipelined weight loads (the
# first batch issued before the prologue) against the previous binary (.dev/x/vkqc_old), same
# machine: the decoder's small layers alone and the 1b decode step; the decode attention's
# time per position (one chunk at position < 64, more above).
# usage (on the device, repo root): bash bench/device_pipeline.sh   (writes to $OUT)
set -u
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
t "GPU tests (validation on)"
VKQC_TEST_PROFILE=$P timeout 300 .dev/x/vkqc_gpu_tests --gtest_filter="${FILTER:-*Int4Combos*:Int4.*:Decoder.*:RowFusion.*}" > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED)|tests ran|Failure' $OUT/tests.log | head -12
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for b in vkqc_old vkqc; do
  V=$PWD/.dev/x/$b
  t "$b: GEMVs alone (i8) and with dq8ca, 128x4x1"
  for shape in 2048x2048 2048x512 2048x8192 8192x2048; do
    IFS=x read -r K N <<< "$shape"
    for act in i8 dq8ca; do timeout 120 bash bench/gemv_sweep.sh $V nvidia-hopper $K $N $act:q4gsw 128x4x1 2>&1 | sed "s/^/[$b $act] /"; done
  done
  t "$b: 1b decode"
  timeout 120 $V compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1 -o /tmp/1b_$b.vkqb | tail -1
  timeout 150 $V run /tmp/1b_$b.vkqb --tokens 1 --reference /tmp/1b/graph.json | tail -1
  timeout 60 $V bench /tmp/1b_$b.vkqb --tokens 1 --min-ms 3000 > /dev/null 2>&1
  for pos in 128 2040; do
    timeout 60 $V bench /tmp/1b_$b.vkqb --tokens 1 --position $pos --roofline "$S" > $OUT/bench_${b}_p$pos.txt 2>&1
    echo "$b position $pos: $(grep whole $OUT/bench_${b}_p$pos.txt)"
    awk '$1 ~ /^layers\.3\.(o_proj|down_proj|q_proj|gate_proj)$/ {print "   " $1, $2, $3}' $OUT/bench_${b}_p$pos.txt
  done
done
t "decode attention per position (vkqc)"
for pos in 0 40 63 64 127 128 200 512 1024 2040; do
  timeout 60 .dev/x/vkqc bench /tmp/1b_vkqc.vkqb --tokens 1 --position $pos --min-ms 300 > /tmp/a.txt 2>&1
  echo "position $pos: $(grep whole /tmp/a.txt | sed 's/whole program without per-layer timestamps: //'); attention layer 3: $(awk '$1 == "layers.3.attention" {print $3}' /tmp/a.txt) us"
done
t done
