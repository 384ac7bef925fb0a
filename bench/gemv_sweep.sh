#!/usr/bin/env bash
# GEMV parameter sweep for one linear layer at M=$TOKENS (default 1) on the local device: for each
# THREADSxCHANNELSxUNROLL the profile's sidecar gets gemv_threads/gemv_channels/gemv_unroll,
# the layer is compiled (--force-kernel gemv), checked against the CPU reference on a small
# ragged layer of the same scheme, and benched; prints the layer's median µs and its fraction of
# the read roofline. ACT i8 (input already int8) times the GEMV alone, without a quantize pass.
# usage: bench/gemv_sweep.sh VKQC PROFILE K N ACT:WEIGHTS [TxCxU...]   (GROUP=G: int4 group size, default 32)
#   PROFILE: a built-in name or PROFILE.json (its sidecar PROFILE.vkqc.json is the base);
#   BENCH_OPTS replaces `--roofline PROFILE` (e.g. "--peak-gbps 50 --peak-tops 1" without a roofline)
set -u
VKQC=$1 PROFILE=$2 K=$3 N=$4 SCHEME=$5
shift 5
CONFIGS=${*:-"128x4x1 256x4x1 128x8x1 64x8x1 128x4x2 256x8x1 64x16x1 256x2x2"}
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
IFS=: read -r act wq <<< "$SCHEME"
python3 "$HERE/gen_linear.py" "$W/g" "$K" "$N" "$act" "$wq" ${GROUP:-} > /dev/null || exit 1
python3 "$HERE/gen_linear.py" "$W/s" 1024 203 "$act" "$wq" ${GROUP:-} > /dev/null || exit 1
if [ -f "$PROFILE" ]; then
  cp "$PROFILE" "$W/p.json"; side="${PROFILE%.json}.vkqc.json"
else
  "$VKQC" profiles > /dev/null
  cp "$HERE/../profiles/$PROFILE.json" "$W/p.json"; side="$HERE/../profiles/$PROFILE.vkqc.json"
fi
fail=0
for cfg in $CONFIGS; do
  IFS=x read -r th ch un <<< "$cfg"
  python3 - "$side" "$W/p.vkqc.json" "$th" "$ch" "$un" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1])) if sys.argv[1] else {}
d.update(gemv_threads=int(sys.argv[3]), gemv_channels=int(sys.argv[4]), gemv_unroll=int(sys.argv[5]))
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
  if ! "$VKQC" compile "$W/s/graph.json" --target "$W/p.json" --tokens ${TOKENS:-1} --force-kernel gemv -o "$W/s.vkqb" > "$W/c.out" 2>&1; then
    echo "$cfg: $(tail -1 "$W/c.out")"; continue
  fi
  if ! "$VKQC" run "$W/s.vkqb" --reference "$W/s/graph.json" > "$W/r.out" 2>&1 || ! grep -q PASS "$W/r.out"; then
    echo "$cfg: REFERENCE CHECK FAILED"; cat "$W/r.out"; fail=1; continue
  fi
  "$VKQC" compile "$W/g/graph.json" --target "$W/p.json" --tokens ${TOKENS:-1} --force-kernel gemv -o "$W/b.vkqb" > /dev/null 2>&1 || { echo "$cfg: compile failed"; continue; }
  if "$VKQC" bench "$W/b.vkqb" --tokens ${TOKENS:-1} ${BENCH_OPTS:---roofline "$W/p.json"} > "$W/b.out" 2>&1; then
    echo "$K x $N $SCHEME M=${TOKENS:-1} gemv $cfg (reference ok): $(awk '$1 ~ /^linear/ {print $3 " us, " $4 " GB/s, " $6 " of read BW"}' "$W/b.out")"
  else
    echo "$cfg: bench failed"; cat "$W/b.out"; fail=1
  fi
done
exit $fail
