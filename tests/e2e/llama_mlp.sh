#!/usr/bin/env bash
# The Llama-3.2-1B MLP example: one bundle with decode (1) and prefill (128) programs sharing
# one copy of the weights; both match the CPU reference on lavapipe with validation on, with
# the default kernel choices and with the int-dot path forced.
set -u
VKQC=$1 SRC=$2 WORK=$3
source "$SRC/tests/e2e/common.bash"
python3 "$SRC/examples/llama-mlp/make_example.py" "$WORK/mlp" || { echo "generator failed"; exit 1; }
G="$WORK/mlp/graph.json"
for mode in default dot; do
  extra=()
  [ "$mode" = dot ] && extra=(--force-accum dot)
  B="$WORK/mlp-$mode.vkqb"
  expect_writes "compile ($mode)" "$B" compile "$G" --target lavapipe --tokens 1,128 "${extra[@]}" -o "$B"
  # The weights are stored once: the bundle is within 1% of its weight segment.
  python3 - "$B" <<'PY' && ok "bundle within 1% of its weights ($mode)" || fail "bundle within 1% of its weights ($mode)"
import struct, sys
b = open(sys.argv[1], "rb").read()
fb = struct.unpack_from("<I", b)[0]
seg = (fb + 4 + 63) // 64 * 64
weights = len(b) - seg
print(f"bundle {len(b)} bytes, weight segment {weights} bytes, overhead {100 * (len(b) - weights) / weights:.3f}%")
sys.exit(0 if len(b) <= 1.01 * weights else 1)
PY
  for t in 1 128; do
    expect_pass "run tokens=$t ($mode)" run "$B" --tokens "$t" --validation --reference "$G"
  done
  vk run "$B" --tokens 8
  if [ "$RC" -ne 0 ] && err_has "1, 128"; then ok "tokens=8 refused with the compiled sizes ($mode)"; else fail "tokens=8 refused ($mode)" "$(last_run_report)"; fi
done
vk inspect "$WORK/mlp-dot.vkqb"
if grep -q "linear_dq8ca_q4gsw_dot_gemv" "$OUT_FILE" && grep -q "linear_dq8ca_q4gaw_dot_gemm" "$OUT_FILE" && grep -q "reuses the quantized input" "$OUT_FILE"; then
  ok "inspect shows the int4 dq8ca variants and the shared quantization"
else
  fail "inspect shows the int4 dq8ca variants" "$(last_run_report)"
fi
finish
