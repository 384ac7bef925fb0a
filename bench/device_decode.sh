#!/usr/bin/env bash
# One device call (issue 15 part 4): the one-dispatch decode attention (attention_decode.comp) on
# the H100. Decoder GPU tests with validation; the tiny example against the numpy decoder with a
# prompt that makes decode use several chunks; the 1b example at contexts 128 and 2040, whole
# program and per layer, with the decode kernel (default) and with the per-row kernels
# (--force-attention rows: the baseline, same binaries, same machine).
# usage (on the device, repo root): bash bench/device_decode.sh   (writes to $OUT)
set -u
source bench/device_env.sh
mkdir -p .dev/x && tar xJf .dev/bin.tar.xz -C .dev/x
V=$PWD/.dev/x/vkqc
P=/tmp/h100.json S=/tmp/h100.vkqc.json
T0=$(date +%s); t() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
$V probe -o "$P" > /dev/null || exit 1
t roofline; timeout 120 $V roofline --min-ms 50 -o "$S" 2>&1 | tail -2
t "decoder GPU tests (validation on)"
VKQC_TEST_PROFILE=$P timeout 200 .dev/x/vkqc_gpu_tests --gtest_filter="${DEC_FILTER:-Decoder.*:RowFusion.*}" > $OUT/tests.log 2>&1
echo "rc=$?"; grep -E '^\[  (PASSED|FAILED)|tests ran|Failure' $OUT/tests.log | head -12
[ -n "${QUICK:-}" ] && echo "QUICK: no tiny check, no per-row baseline, no per-op run"
[ -z "${QUICK:-}" ] && {
t "tiny on this GPU vs the numpy decoder"
python3 examples/llama/make_example.py /tmp/tiny --config tiny > /dev/null
$V compile /tmp/tiny/graph.json --target nvidia-hopper --tokens 1,16 -o /tmp/tiny.vkqb | tail -1
$V inspect /tmp/tiny.vkqb | grep -m1 -A1 "attention_decode"
for pr in 1,5,9,200,33 3,14,15,92,65,35,89,79,32,38,46,26,43,38,32,79,50,28,84,19; do
  want=$(python3 tests/e2e/llama_reference.py /tmp/tiny --prompt-ids $pr --max-new-tokens 60 | grep '^tokens:')
  got=$($V generate /tmp/tiny.vkqb --prompt-ids $pr --max-new-tokens 60 --validation 2>&1 | grep '^tokens:')
  [ "$want" = "$got" ] && echo "tiny greedy 60 = numpy (prompt of $(echo $pr | tr ',' '\n' | wc -l))" || echo "tiny DIFFERS (prompt $pr): numpy $want / vkqc $got"
done
}
t "1b example"
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
timeout 120 $V compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1,16,128,512 -o /tmp/1b.vkqb | tail -1
[ -z "${QUICK:-}" ] && timeout 120 $V compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1 --force-attention rows -o /tmp/1b_rows.vkqb | tail -1
$V inspect /tmp/1b.vkqb | grep -E "^program|attention_decode" | head -3
timeout 150 $V run /tmp/1b.vkqb --tokens 1 --reference /tmp/1b/graph.json | tail -2
[ -z "${QUICK:-}" ] && timeout 120 $V compile /tmp/1b/graph.json --target nvidia-hopper --tokens 1 --keep-intermediates -o /tmp/1b_k.vkqb | tail -1
[ -z "${QUICK:-}" ] && timeout 150 $V run /tmp/1b_k.vkqb --tokens 1 --reference /tmp/1b/graph.json --per-op 2>&1 | tail -3
t "warm-up"; timeout 60 $V bench /tmp/1b.vkqb --tokens 512 --min-ms 3000 > /dev/null 2>&1
for b in 1b ${QUICK:-1b_rows}; do
  [ "$b" = 1 ] && continue
  for pos in 128 2040; do
    timeout 60 $V bench /tmp/$b.vkqb --tokens 1 --position $pos --roofline "$S" > $OUT/bench_${b}_p$pos.txt 2>&1
    echo "$b decode position $pos: $(grep whole $OUT/bench_${b}_p$pos.txt)"; grep "layers.3.attention" $OUT/bench_${b}_p$pos.txt
  done
done
ids() { python3 -c "import random; r=random.Random($2); print(','.join(str(r.randrange(128256)) for _ in range($1)))"; }
t "1b generate: prompt 128 + 64 tokens"
timeout 120 $V generate /tmp/1b.vkqb --prompt-ids $(ids 128 128) --max-new-tokens 64 | grep -v '^tokens'
t done
# The cost of independent dispatches (no barriers between them: bench/dispatch_chain.py FANOUT=1),
# against the dependent chain measured in bench/RESULTS.md (2.07 us per dispatch + barrier).
if [ -n "${FANOUT:-}" ]; then
  for n in 1 16 64; do
    FANOUT=1 python3 bench/dispatch_chain.py /tmp/f$n $n
    $V compile /tmp/f$n/graph.json --target nvidia-hopper --tokens 1 -o /tmp/f$n.vkqb > /dev/null || exit 1
    $V run /tmp/f$n.vkqb --reference /tmp/f$n/graph.json | grep -cE "PASS" | sed "s/^/fanout N=$n outputs passing: /"
    $V bench /tmp/f$n.vkqb --min-ms 300 2>&1 | grep whole | sed "s/^/fanout N=$n /"
  done
fi
