set -u
# One device call (bench/RESULTS.md, "GGUF session", call 3): GPU suites incl. q4gmw with the probed
# profile, the four GGUF types on nvidia-hopper against the numpy decoder, the 1b decoder and q4gmw benches.
source bench/device_env.sh
V=.dev/vkqc; P=/tmp/h100.json
$V probe -o $P > /dev/null
VKQC_TEST_PROFILE=$P timeout 300 .dev/vkqc_gpu_tests --gtest_filter='CoopMat*:All/Int4Combos.*q4gmw*:Decoder.*:RowFusion.*:Ops/Combinations.*' > $OUT/gpu_tests.log 2>&1
echo "gpu tests rc=$?"; grep -E '^\[  (PASSED|FAILED)|Failure' $OUT/gpu_tests.log | head
for ty in q4_0 q8_0 q4_1 q4_k; do python3 examples/llama/make_gguf.py /tmp/g-$ty --type $ty > /dev/null; $V compile /tmp/g-$ty/model.gguf --target nvidia-hopper --tokens 1,4 -o /tmp/g-$ty.vkqb > /dev/null; got=$($V generate /tmp/g-$ty.vkqb --prompt "The capital of France is" --max-new-tokens 32 --ignore-eos --validation 2>&1); ids=$(echo "$got" | grep '^prompt ids:' | sed 's/prompt ids: //'); want=$(python3 tests/e2e/llama_reference.py /tmp/g-$ty/ref --prompt-ids "$ids" --max-new-tokens 32 --chunks 4,1 | grep '^tokens:'); [ "$(echo "$got" | grep '^tokens:')" = "$want" ] && echo "$ty: = numpy" || { echo "$ty MISMATCH"; echo "$got" | tail -3; }; done
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
$V compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,512 -o /tmp/1b.vkqb | tail -1
timeout 60 $V bench /tmp/1b.vkqb --tokens 512 --min-ms 2000 > /dev/null 2>&1
for spec in "1 128" "512 0"; do set -- $spec; timeout 60 $V bench /tmp/1b.vkqb --tokens $1 --position $2 --roofline nvidia-hopper > /tmp/b.txt 2>&1; echo "1b tokens=$1 position=$2: $(grep whole /tmp/b.txt)"; done
for w in q4gsw q4gmw; do python3 bench/gen_linear.py /tmp/l-$w 4096 14336 dq8ca $w 32; $V compile /tmp/l-$w/graph.json --target nvidia-hopper --tokens 1,512 -o /tmp/l.vkqb > /dev/null; $V run /tmp/l.vkqb --tokens 512 --reference /tmp/l-$w/graph.json | grep -E "PASS|FAIL"; for m in 1 512; do timeout 60 $V bench /tmp/l.vkqb --tokens $m --min-ms 200 --roofline nvidia-hopper 2>&1 | grep -E '^linear' | sed "s/^/$w M=$m /"; done; done
