#!/usr/bin/env bash
# `vkqc tune` on lavapipe with the validation layer (any message fails it): the quick sweep runs,
# writes valid tuning members merged into a probed profile's sidecar, `compile --target` uses
# them (inspect names the tuned GEMV parameters), the tuned bundle runs and matches the
# reference; bad input refused with a clear message and nothing overwritten. No timing asserted.
#
# usage: bash tune.sh <path-to-vkqc> <source-dir> <work-dir>
source "$(dirname "$0")/common.bash" "$@"

expect_ok() {
  local name=$1
  shift
  vk "$@"
  if [ "$RC" -eq 0 ] && ! crashed; then ok "$name"; else fail "$name" "$(last_run_report)"; fi
}

MINE=$WORK/mine.json
SIDE=$WORK/mine.vkqc.json
expect_writes "probe -o mine.json" "$MINE" probe -o "$MINE"
expect_ok "tune --quick -o mine.vkqc.json" tune --quick --min-ms 1 --validation -o "$SIDE"
if out_has "GEMV" && out_has "tiled GEMM" && out_has "int4 tiled GEMM rows per thread" && out_has "GEMV vs tiled GEMM" &&
   out_has "no int8 cooperative-matrix GEMM on this device" && out_has "wrote the tuning" && ! err_has "validation"; then
  ok "tune prints the three sweeps and writes the sidecar, no validation message"
else
  fail "tune prints the three sweeps and writes the sidecar, no validation message" "$(last_run_report)"
fi
why=$(python3 - "$SIDE" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ok = (d.get("profile") and "quirks" in d and d.get("gemv_max_m", 0) >= 1
      and d.get("gemv_threads") in (0, 32, 128) and d.get("gemv_channels") in (0, 2, 4) and d.get("gemv_unroll") in (0, 1, 2)
      and d.get("gemm_tile") in (0, 32, 64) and d.get("gemm_rows_int4") in (0, 8) and d.get("gemm_rows_int8") in (0, 8)
      and d.get("coopmat_gemv_max_m") == 0)  # lavapipe has no cooperative matrix
sys.exit(0 if ok else "unexpected tuning members: %r" % d)
PY
)
if [ $? -eq 0 ]; then ok "the sidecar holds tuning members from the sweep and kept the probe's"; else fail "sidecar members" "$why"; fi

B=$WORK/tuned.vkqb
expect_writes "compile --target mine.json (tuned sidecar)" "$B" compile "$SRC/examples/mlp/graph.json" --target "$MINE" \
  --tokens 1,64 -o "$B"
expect_ok "inspect the tuned bundle" inspect "$B"
# The sweep's winner may be the default GEMV (tune then writes 0s, and inspect says nothing): the
# expectation follows what the sidecar holds.
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if any(d.get(k) for k in ("gemv_threads","gemv_channels","gemv_unroll")) else 1)' "$SIDE"; then
  if out_has "(tuned)"; then ok "inspect names the tuned GEMV parameters"; else fail "inspect names the tuned GEMV parameters" "$(last_run_report)"; fi
else
  if ! out_has "(tuned)"; then ok "inspect: default GEMV parameters won the sweep, none named tuned"; else fail "inspect names untuned GEMV parameters" "$(last_run_report)"; fi
fi
for t in 1 64; do
  expect_ok "run --tokens $t --reference (tuned bundle)" run "$B" --tokens "$t" --validation --reference "$SRC/examples/mlp/graph.json"
  if out_has "PASS"; then ok "tuned bundle tokens $t matches the reference"; else fail "tuned bundle tokens $t matches the reference" "$(last_run_report)"; fi
done

echo "== bad input"
expect_error "tune: unknown option" "unknown option --frob" -- tune --frob
expect_error "tune: positional argument" "usage: vkqc tune" -- tune extra
expect_error "tune: -o without .vkqc.json" ".vkqc.json" -- tune --quick -o "$WORK/x.json"
expect_error "tune: --min-ms negative" "--min-ms must be between" -- tune --quick --min-ms -1
expect_error "tune: --device out of range" "--device 99" -- tune --quick --device 99
cp "$MINE" "$WORK/profile-copy.vkqc.json"
expect_error "tune: -o names a Profiles document" "Vulkan Profiles document" -- tune --quick -o "$WORK/profile-copy.vkqc.json"
if cmp -s "$MINE" "$WORK/profile-copy.vkqc.json"; then ok "a refused -o file is left as it was"; else fail "a refused -o file is left as it was" "changed"; fi
echo '{"gemv_threads": 96}' > "$WORK/bad.vkqc.json"
cp "$MINE" "$WORK/bad.json"
expect_error "compile: a sidecar with a bad gemv_threads" "gemv_threads" "power of two" -- \
  compile "$SRC/examples/mlp/graph.json" --target "$WORK/bad.json" --tokens 1 -o "$WORK/bad.vkqb"

finish
