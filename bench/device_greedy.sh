#!/usr/bin/env bash
# One device call (issue 15, fixed costs): greedy decoding with the token fed back on the GPU
# (vkqc_model_decode_greedy, `generate --queue-depth 1-4`) against the run-and-read loop
# (`--queue-depth 0`), the 1b example, a 128-token prompt and 256 decode steps, four rounds; the
# whole-program time of the one-token step (`bench`) for reference; then the greedy, decoder and
# async GPU tests with validation on the probed profile. Pack stripped vkqc and vkqc_gpu_tests into
# .dev/bin.tar.xz; carry .gl and .dev.
export OUT
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
.dev/x/vkqc compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,16 -o /tmp/1b.vkqb > /dev/null || exit 1
t compiled
PROMPT=$(seq -s, 100 227)
timeout 60 .dev/x/vkqc bench /tmp/1b.vkqb --tokens 1 --position 200 --min-ms 1000 > /tmp/b.txt 2>&1
echo "bench tokens 1 position 200: $(grep 'whole program' /tmp/b.txt | head -1)"
# Each generation after 500 ms of decode runs (`--warmup-ms`): an H200 left idle runs its first
# ~0.2-0.3 s of work about 4x slower (this session's diagnostics), which otherwise lands in the
# decode of whichever process it meets. Four rounds, the depths interleaved.
for round in 1 2 3 4; do for d in 0 1 2 3 4; do
  timeout 120 .dev/x/vkqc generate /tmp/1b.vkqb --prompt-ids "$PROMPT" --max-new-tokens 257 --queue-depth $d --warmup-ms 500 > /tmp/g.txt 2>&1
  echo "r$round depth $d: $(grep '^decode:' /tmp/g.txt | cut -d';' -f1) tokens md5 $(grep '^tokens:' /tmp/g.txt | md5sum | cut -c1-8)"
done; done
t "greedy / decoder / async tests"
VKQC_TEST_PROFILE=$P timeout 300 .dev/x/vkqc_gpu_tests --gtest_filter='GreedyDecode.*:Decoder.*:Async*' > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED)|Failure' $OUT/tests.log | head -10
t done
