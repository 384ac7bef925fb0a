#!/usr/bin/env bash
# One device call (issue 15 part 4, the MobileNetV2-shaped CNN): per-layer timestamps of the
# example with the built-in nvidia-hopper profile and the probed one, each program first checked
# against the CPU reference (per op on a bundle with kept intermediates, end to end on the benched
# bundle, which is compiled without them); variants by compile options in $VARIANTS
# ("name:options;...", options may include NAME=value environment settings for the compiles), on
# $TARGETS (default: the nvidia-hopper built-in and the probed profile); with vkqc_old in the tarball also the previous main's binary, same machine.
# usage (on the device, repo root): bash bench/device_cnn.sh   (writes to $OUT)
set -u
source bench/device_env.sh
PROBE=1 device_setup .dev/x/vkqc
python3 examples/mobilenetv2/make_example.py /tmp/cnn > /dev/null || exit 1
G=/tmp/cnn/graph.json
bins="vkqc"; [ -x .dev/x/vkqc_old ] && bins="vkqc_old vkqc"
bins=${BINS:-$bins}  # or the binaries named in $BINS
IFS=';' read -ra vs <<< "${VARIANTS:-default:}"
for b in $bins; do
  V=$PWD/.dev/x/$b
  for v in "${vs[@]}"; do
    name=${v%%:*} opts=${v#*:}
    envs=$(printf '%s\n' $opts | grep -E '^[A-Z_0-9]+=' | tr '\n' ' ')  # NAME=value words: for the compiles
    opts=$(printf '%s\n' $opts | grep -vE '^[A-Z_0-9]+=' | tr '\n' ' ')
    [ "$b" = vkqc_old ] && [ "$v" != "${vs[0]}" ] && continue  # the previous main: the first variant only
    for tgt in ${TARGETS:-nvidia-hopper $P}; do
      tn=$([ "$tgt" = "$P" ] && echo probed || echo hopper)
      B=/tmp/cnn_${b}_${name}_$tn.vkqb
      timeout 120 env $envs $V compile $G --target "$tgt" --keep-intermediates $opts -o $B.keep > /dev/null 2>$OUT/compile_${b}_${name}_$tn.err || { echo "$b $name $tn: compile failed"; continue; }
      timeout 120 env $envs $V compile $G --target "$tgt" $opts -o $B > /dev/null 2>>$OUT/compile_${b}_${name}_$tn.err || { echo "$b $name $tn: compile failed"; continue; }
      chk=$(timeout 120 $V run $B.keep --reference $G --per-op 2>&1 | grep -E "failed|PASS|FAIL" | tr '\n' ' ')
      chk="$chk| benched bundle: $(timeout 120 $V run $B --reference $G 2>&1 | grep -E "PASS|FAIL" | tr '\n' ' ')"
      timeout 60 $V bench $B --min-ms 1500 --roofline "$S" > $OUT/bench_${b}_${name}_$tn.txt 2>&1
      timeout 60 $V inspect $B > $OUT/inspect_${b}_${name}_$tn.txt 2>&1
      echo "$b $name $tn: $(grep whole $OUT/bench_${b}_${name}_$tn.txt | sed 's/whole program without per-layer timestamps: //') | $chk"
    done
  done
done
t done
