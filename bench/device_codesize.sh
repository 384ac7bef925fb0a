#!/usr/bin/env bash
# One device call (issue 15, fixed costs): the driver's binary size per kernel (`bench
# --pipeline-stats`) and what it costs. Runs the GPU tests of the dynamic-quantization kernels with
# the probed profile and validation; then the 1b example's decode step at context 128 and its
# prefill of 512 tokens with this tree's binary (vkqc) against the previous one (vkqc_old in
# .dev/bin.tar.xz), same machine, two rounds, each program checked against the CPU reference
# first; the statistics of every kernel of the decode step, the prefill and the MobileNetV2-shaped
# CNN into $OUT. BINS: the binaries compared (default "old new"; NAME other than old / new runs
# .dev/x/vkqc_NAME, or vkqc where that is absent; "old" likewise with .dev/x/vkqc_old); FLAGS_NAME:
# compile flags of NAME's bundle (the same binary with and without a compile option);
# SUITE=1 runs the whole GPU suite instead of FILTER's tests; POSITIONS: the decode positions timed
# (default 128); NO_PREFILL=1, NO_CNN=1 skip those parts.
# usage (on the device, repo root): bash bench/device_codesize.sh   (writes to $OUT)
set -u
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
V=$PWD/.dev/x/vkqc O=$PWD/.dev/x/vkqc_old
BINS=${BINS:-old new}
[ -x "$O" ] || O=$V
bin() { case $1 in old) echo $O ;; new) echo $V ;; *) [ -x $PWD/.dev/x/vkqc_$1 ] && echo $PWD/.dev/x/vkqc_$1 || echo $V ;; esac; }
flags() { local v="FLAGS_$1"; echo "${!v:-}"; }
if [ -n "${SUITE:-}" ]; then
  device_suite
else
  t "GPU tests (validation on)"
  VKQC_TEST_PROFILE=$P timeout 300 .dev/x/vkqc_gpu_tests --gtest_filter="${FILTER:-PipelineStat*:Decoder*:RowFusion*:Quantize*:Int4*:LinearVariants*:Dynamic*}" > $OUT/tests.log 2>&1
  grep -E '^\[  (PASSED|FAILED)|tests ran|Failure' $OUT/tests.log | head -12
fi
t "1b example"
python3 examples/llama/make_example.py /tmp/1b --config 1b | tail -1
TOK=1,512; [ -n "${NO_PREFILL:-}" ] && TOK=1
for b in $BINS; do
  B=$(bin $b)
  timeout 200 $B compile /tmp/1b/graph.json --target nvidia-hopper --tokens $TOK $(flags $b) -o /tmp/$b.vkqb | tail -1
  echo "$b: $(timeout 150 $B run /tmp/$b.vkqb --tokens 1 --reference /tmp/1b/graph.json 2>&1 | grep -E 'PASS|FAIL|error' | tr '\n' ' ')"
done
t "warm-up"; timeout 60 $V bench /tmp/new.vkqb --tokens 1 --min-ms 3000 > /dev/null 2>&1
for round in 1 2; do
  for b in $BINS; do
    B=$(bin $b)
    for pos in ${POSITIONS:-128}; do
      f=$OUT/decode_${b}_$round.txt; [ $pos != 128 ] && f=/tmp/decode_${b}_${round}_$pos.txt
      timeout 60 $B bench /tmp/$b.vkqb --tokens 1 --position $pos --roofline "$S" --pipeline-stats > $f 2>&1
      echo "round $round $b decode at $pos: $(grep whole $f) attention layer 3: $(awk '$1 == "layers.3.attention" {print $3}' $f) us"
    done
  done
done
for b in $BINS; do
  [ -n "${NO_PREFILL:-}" ] && continue
  B=$(bin $b)
  timeout 60 $B bench /tmp/$b.vkqb --tokens 512 --roofline "$S" --pipeline-stats > $OUT/prefill_$b.txt 2>&1
  echo "$b prefill 512: $(grep whole $OUT/prefill_$b.txt)"
done
for b in $BINS; do
  echo "== $b: per-layer µs of layer 3 (decode, round 2) and the binary sizes of the decode step's kernels"
  grep -E "^layers\.3\." $OUT/decode_${b}_2.txt | awk '$2 != "fused" && $2 != "folded" {print "  " $1, $2, $3}'
  sed -n '/pipeline statistics/,$p' $OUT/decode_${b}_2.txt | grep -oE "\[[^]]+\] #[0-9]: Register Count=[0-9]+ Binary Size=[0-9]+" | sort -u
done
[ -z "${NO_PREFILL:-}" ] && echo "== prefill kernels (new)"
sed -n '/pipeline statistics/,$p' $OUT/prefill_new.txt | grep -oE "\[[^]]+\] #[0-9]: Register Count=[0-9]+ Binary Size=[0-9]+" | sort -u
[ -n "${NO_CNN:-}" ] && { t done; exit 0; }
t "CNN"
python3 examples/mobilenetv2/make_example.py /tmp/mn > /dev/null 2>&1 || python3 examples/mobilenetv2/make_example.py /tmp/mn | tail -2
timeout 200 $V compile /tmp/mn/graph.json --target nvidia-hopper -o /tmp/mn.vkqb | tail -1
timeout 60 $V bench /tmp/mn.vkqb --pipeline-stats > $OUT/cnn.txt 2>&1
grep whole $OUT/cnn.txt
sed -n '/pipeline statistics/,$p' $OUT/cnn.txt | grep -oE "\[[^]]+\] #[0-9]: Register Count=[0-9]+ Binary Size=[0-9]+" | sort -u | sort -t= -k3 -n | tail -8
t done
