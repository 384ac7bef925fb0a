#!/usr/bin/env bash
# Device call of 2026-12-02 (session 15): the row extrema (compiler/kernels/linear/extrema.h)
# against the GEMV prologues' own row reductions (--no-producer-extrema), 1b example, whole
# decode step; reference checks; the decoder / row-fusion GPU tests with validation on the probed
# profile.
export OUT
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
.dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,4 -o /tmp/1b_ext.vkqb > /dev/null || exit 1
.dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,4 --no-producer-extrema -o /tmp/1b_main.vkqb > /dev/null || exit 1
t compiled
b() { timeout 60 .dev/x/vkqc bench /tmp/1b_$2.vkqb --tokens ${4:-1} --position $1 --min-ms 300 > /tmp/b.txt 2>&1
  echo "$3 tokens ${4:-1} position $1 $2: $(grep 'whole program' /tmp/b.txt | head -1 | sed 's/whole program without per-layer timestamps//')"; }
for round in 1 2; do for pos in 128 2032; do for v in main ext; do b $pos $v r$round; done; done; done
for v in main ext; do b 512 $v r1; b 128 $v r1 4; done
for v in main ext; do
  timeout 60 .dev/x/vkqc bench /tmp/1b_$v.vkqb --tokens 1 --position 128 --min-ms 100 > /tmp/l.txt 2>&1
  echo "$v per layer:"; grep -E "layers\.3\.|row_extrema" /tmp/l.txt | head -14
done
for v in main ext; do
  echo "$v: $(timeout 200 .dev/x/vkqc run /tmp/1b_$v.vkqb --tokens 1 --reference /tmp/1b/graph.json 2>&1 | grep -E 'output' | tr '\n' ' ')"
done
for v in main ext; do
  echo "$v generate: $(timeout 100 .dev/x/vkqc generate /tmp/1b_$v.vkqb --prompt-ids 1,5,9,200,7,3 --max-new-tokens 48 2>&1 | grep -E 'tokens:|decode' | tr '\n' ' ')"
done
t "GPU tests"
VKQC_TEST_PROFILE=$P timeout 300 .dev/x/vkqc_gpu_tests --gtest_filter='Decoder.*:RowFusion.*:GreedyDecode*:Prefetch.*' > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED|SKIPPED)|Failure' $OUT/tests.log | head
t done
