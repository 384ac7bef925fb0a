set -u
# One device call (GGUF session, calls 4-5): the async tests and generate/bench on the H100.
source bench/device_env.sh
V=.dev/vkqc; P=/tmp/h100.json
$V probe -o $P > /dev/null
VKQC_TEST_PROFILE=$P timeout 300 .dev/vkqc_gpu_tests --gtest_filter='Async.*:Decoder.*:Chain.*:Convert.*:Ops/Combinations.*' > /tmp/t.log 2>&1
echo "gpu tests rc=$?"; grep -E '^\[  (PASSED|FAILED)|Failure|OK \] Async' /tmp/t.log | head
python3 examples/llama/make_gguf.py /tmp/g > /dev/null; $V compile /tmp/g/model.gguf --target nvidia-hopper --tokens 1,4 -o /tmp/g.vkqb > /dev/null
$V generate /tmp/g.vkqb --prompt "The capital of France is" --max-new-tokens 8 --validation 2>&1 | tail -3
python3 examples/llama/make_example.py /tmp/1b --config 1b > /dev/null; $V compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,512 -o /tmp/1b.vkqb > /dev/null
timeout 60 $V bench /tmp/1b.vkqb --tokens 512 --min-ms 2000 > /dev/null 2>&1
timeout 60 $V bench /tmp/1b.vkqb --tokens 1 --position 128 > /tmp/b.txt 2>&1; grep whole /tmp/b.txt
$V generate /tmp/1b.vkqb --prompt-ids 1,5,9,200,33 --max-new-tokens 64 2>&1 | grep decode
