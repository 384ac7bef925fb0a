#!/usr/bin/env bash
# One device call (issue 15, fixed costs): the rms_norm (and the residual add) in the GEMV
# prologues of the linears reading it, against the previous main (vkqc_old in .dev/bin.tar.xz),
# same machine. Decoder / row-fusion / cooperative-matrix GPU tests with the probed profile and
# validation; the 1b example's decode step at context 128 per --prologue-max-bytes value in
# $LIMITS (each program checked against the CPU reference first) and its prefill of 512 tokens.
# NO_TESTS=1 skips the GPU tests, NO_PREFILL=1 the prefill (and compiles decode programs only).
# usage (on the device, repo root): bash bench/device_prologue.sh   (writes to $OUT)
set -u
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
V=$PWD/.dev/x/vkqc O=$PWD/.dev/x/vkqc_old
[ -z "${NO_TESTS:-}" ] && t "GPU tests (validation on)" &&
VKQC_TEST_PROFILE=$P timeout 300 .dev/x/vkqc_gpu_tests --gtest_filter="${FILTER:-Decoder.*:RowFusion.*:CoopMat*}" > $OUT/tests.log 2>&1
[ -z "${NO_TESTS:-}" ] && grep -E '^\[  (PASSED|FAILED)|tests ran|Failure' $OUT/tests.log | head -12
t "1b example"
TOK=1,512; [ -n "${NO_PREFILL:-}" ] && TOK=1
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
timeout 200 $O compile /tmp/1b/graph.json --target nvidia-hopper --tokens $TOK -o /tmp/old.vkqb | tail -1
timeout 200 $V compile /tmp/1b/graph.json --target nvidia-hopper --tokens $TOK -o /tmp/new.vkqb | tail -1
for l in ${LIMITS:-16777216 67108864}; do
  timeout 200 $V compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1 --prologue-max-bytes $l -o /tmp/new_$l.vkqb | tail -1
  $V inspect /tmp/new_$l.vkqb | grep -E "^program" | head -2
  echo "limit $l: $(timeout 150 $V run /tmp/new_$l.vkqb --tokens 1 --reference /tmp/1b/graph.json 2>&1 | grep -E 'PASS|FAIL|error' | head -2)"
done
echo "new default: $(timeout 150 $V run /tmp/new.vkqb --tokens 1 --reference /tmp/1b/graph.json 2>&1 | grep -E 'PASS|FAIL|error' | head -2)"
t "warm-up"; timeout 60 $V bench /tmp/new.vkqb --tokens 1 --min-ms 3000 > /dev/null 2>&1
for round in 1 2; do
  for b in old new $(for l in ${LIMITS:-16777216 67108864}; do echo new_$l; done); do
    B=$([ $b = old ] && echo $O || echo $V)
    timeout 60 $B bench /tmp/$b.vkqb --tokens 1 --position 128 --roofline "$S" > $OUT/bench_${b}_$round.txt 2>&1
    echo "round $round $b decode at 128: $(grep whole $OUT/bench_${b}_$round.txt)"
  done
  for b in old new; do
    [ -n "${NO_PREFILL:-}" ] && continue
    B=$([ $b = old ] && echo $O || echo $V)
    timeout 60 $B bench /tmp/$b.vkqb --tokens 512 --roofline "$S" > $OUT/prefill_${b}_$round.txt 2>&1
    echo "round $round $b prefill 512: $(grep whole $OUT/prefill_${b}_$round.txt)"
  done
done
t done
