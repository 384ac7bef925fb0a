#!/usr/bin/env bash
# One device call (issue 15): the gate/up pair and the cooperative-matrix grid order. GPU tests of
# the linear, fusion and decoder kernels with the probed profile (validation on); the 1b example's
# decode step (context 128) and prefill of 512 tokens with each binary of BINS (default
# "old pairs new": .dev/x/vkqc_NAME, "new" = .dev/x/vkqc), two rounds, the decode program checked
# against the CPU reference first; then the int4 prefill shapes of issue 15 (dq8ca x q4gsw, M 512,
# groups of 32 and 128, the compiler's own choice), each binary's kernel checked against the CPU
# reference on a ragged layer of the same scheme first. Writes to $OUT.
# usage (on the device, repo root): bash bench/device_pairs.sh
set -u
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
BINS=${BINS:-old pairs new}
bin() { [ "$1" = new ] && echo $PWD/.dev/x/vkqc || echo $PWD/.dev/x/vkqc_$1; }
t "GPU tests (validation on)"
VKQC_TEST_PROFILE=$P timeout 300 .dev/x/vkqc_gpu_tests --gtest_filter="${FILTER:-*CoopMat*:*Int4*:*LinearVariants*:RowFusion*:Decoder*}" > $OUT/tests.log 2>&1
grep -E '^\[  (PASSED|FAILED)|tests ran|Failure' $OUT/tests.log | head -12
t "1b example"
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
for b in $BINS; do
  timeout 200 $(bin $b) compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,512 -o /tmp/$b.vkqb | tail -1
  echo "$b: $(timeout 150 $(bin $b) run /tmp/$b.vkqb --tokens 1 --reference /tmp/1b/graph.json 2>&1 | grep -E 'PASS|FAIL|error' | tr '\n' ' ')"
done
timeout 60 $(bin new) bench /tmp/new.vkqb --tokens 1 --min-ms 3000 > /dev/null 2>&1
for round in 1 2; do
  for b in $BINS; do
    timeout 60 $(bin $b) bench /tmp/$b.vkqb --tokens 1 --position 128 --roofline "$S" > $OUT/decode_${b}_$round.txt 2>&1
    timeout 60 $(bin $b) bench /tmp/$b.vkqb --tokens 512 --roofline "$S" > $OUT/prefill_${b}_$round.txt 2>&1
    echo "round $round $b: decode $(grep whole $OUT/decode_${b}_$round.txt | grep -oE '[0-9.]+ us') prefill 512 $(grep whole $OUT/prefill_${b}_$round.txt | grep -oE '[0-9.]+ us')"
  done
done
for b in $BINS; do
  echo "== $b prefill layer 3 (round 2, µs)"
  grep -E "^layers\.3\." $OUT/prefill_${b}_2.txt | awk '$2 != "fused" && $2 != "folded" {print "  " $1, $2, $3}'
done
t "int4 prefill shapes"
W=/tmp/lin; mkdir -p $W
for g in 32 128; do
  python3 bench/gen_linear.py $W/s$g 1024 203 dq8ca q4gsw $g > /dev/null
  for shape in 4096x14336 8192x28672; do
    K=${shape%x*} N=${shape#*x}
    python3 bench/gen_linear.py $W/g${g}_$shape $K $N dq8ca q4gsw $g > /dev/null
    for b in $BINS; do
      [ $b = pairs ] && continue
      V=$(bin $b)
      $V compile $W/s$g/graph.json --target nvidia-hopper --tokens 129 -o $W/s.vkqb > /dev/null 2>&1
      ref=$($V run $W/s.vkqb --reference $W/s$g/graph.json 2>&1 | grep -oE 'PASS|FAIL' | head -1)
      $V compile $W/g${g}_$shape/graph.json --target nvidia-hopper --tokens 512 -o $W/b.vkqb > /dev/null 2>&1
      $V bench $W/b.vkqb --tokens 512 --roofline "$S" > $W/b.out 2>&1
      echo "g$g $shape M=512 $b (ragged reference $ref): $(awk '$1 ~ /^linear/ {print $3 " us, " $5 " GOP/s"}' $W/b.out)"
    done
  done
done
t done
