#!/usr/bin/env bash
# `vkqc roofline` on lavapipe with the validation layer (any message fails it): every measurement
# printed (the dependency-latency rows included, their results checked by the command); a fresh sidecar
# and one merged into `vkqc probe`'s, with positive finite rates; `vkqc compile --target` and
# `vkqc bench --roofline` reading them back (percentage columns per layer and total); bad input
# refused with a clear message and nothing overwritten. No timing is asserted beyond "positive".
#
# usage: bash roofline.sh <path-to-vkqc> <source-dir> <work-dir>
source "$(dirname "$0")/common.bash" "$@"

# check_rates NAME FILE: FILE's "roofline" has a device and four positive finite rates (lavapipe
# supports int8 dot and fp16, so all four are measured).
check_rates() {
  local why
  why=$(python3 - "$2" <<'EOF'
import json, math, sys
try:
    r = json.load(open(sys.argv[1]))["roofline"]
except Exception as e:
    sys.exit("cannot read the roofline: %r" % e)
bad = [k for k in ("read_gbps", "int8_dot_tops", "fp32_tflops", "fp16_tflops")
       if not isinstance(r.get(k), (int, float)) or not math.isfinite(r[k]) or r[k] <= 0]
if bad or not r.get("device") or not r.get("date"):
    sys.exit("not positive and finite: %s; roofline = %s" % (bad, r))
EOF
)
  if [ $? -eq 0 ]; then ok "$1"; else fail "$1" "$why" "$(cat "$2" 2>/dev/null | head -30)"; fi
}

# expect_ok NAME ARGS...: exit 0, no crash.
expect_ok() {
  local name=$1
  shift
  vk "$@"
  if [ "$RC" -eq 0 ] && ! crashed; then ok "$name"; else fail "$name" "$(last_run_report)"; fi
}

# bench_has_percentages NAME: the last bench printed the three roofline columns, and every layer
# row and the total row carry three percentages.
bench_has_percentages() {
  local rows bad
  rows=$(awk 'p && NF > 0 { print } /%roofline/ { p = 1 }' "$OUT_FILE")
  bad=$(echo "$rows" | awk '{ n = 0; for (i = 1; i <= NF; ++i) if ($i ~ /^[0-9.]+%$/) ++n; if (n != 3) print }')
  if grep -q '%read-bw' "$OUT_FILE" && [ -n "$rows" ] && echo "$rows" | grep -q '^total ' && [ -z "$bad" ]; then
    ok "$1"
  else
    fail "$1" "expected %read-bw/%compute/%roofline columns with 3 percentages per row" "rows without: $bad" \
      "$(last_run_report)"
  fi
}

echo "== roofline into a new sidecar"
FRESH=$WORK/fresh.vkqc.json
expect_writes "roofline --min-ms 5 --validation -o fresh.vkqc.json" "$FRESH" roofline --min-ms 5 --validation -o "$FRESH"
if out_has "checksum ok" && out_has "int8 dot" && out_has "fp32 FMA" && out_has "fp16 FMA" &&
  out_has "dependent dispatch (1 wg of 64)" && out_has "grid barrier (1 wg of 64)" && ! err_has "validation"; then
  ok "roofline prints every measurement, the read checksum, no validation message"
else
  fail "roofline prints every measurement, the read checksum, no validation message" "$(last_run_report)"
fi
check_rates "fresh.vkqc.json has positive finite rates" "$FRESH"

echo "== roofline merged into a probed profile's sidecar"
MINE=$WORK/mine.json
SIDE=$WORK/mine.vkqc.json
expect_writes "probe -o mine.json" "$MINE" probe -o "$MINE"
expect_ok "roofline -o mine.vkqc.json (merge)" roofline --min-ms 5 --validation -o "$SIDE"
check_rates "mine.vkqc.json has positive finite rates" "$SIDE"
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d.get("profile") and d.get("name") and "quirks" in d else 1)' "$SIDE"; then
  ok "the merge kept the probe's sidecar members"
else
  fail "the merge kept the probe's sidecar members" "$(cat "$SIDE")"
fi

echo "== compile and bench read it back"
B=$WORK/mlp.vkqb
expect_writes "compile --target mine.json (sidecar with a roofline)" "$B" compile "$SRC/examples/mlp/graph.json" \
  --target "$MINE" --tokens 1,64 -o "$B"
for t in 1 64; do
  expect_ok "bench --tokens $t --roofline mine.vkqc.json" bench "$B" --tokens "$t" --min-ms 5 --validation --roofline "$SIDE"
  bench_has_percentages "bench --tokens $t: roofline percentages per layer and total"
done
expect_ok "bench --roofline mine.json (profile with its sidecar)" bench "$B" --tokens 1 --min-ms 5 --roofline "$MINE"
bench_has_percentages "bench --roofline mine.json: percentages"
expect_ok "bench --roofline fresh.vkqc.json" bench "$B" --tokens 1 --min-ms 5 --roofline "$FRESH"
bench_has_percentages "bench --roofline fresh.vkqc.json: percentages"
expect_ok "bench --roofline nvidia-hopper (built-in)" bench "$B" --tokens 1 --min-ms 5 --roofline nvidia-hopper
bench_has_percentages "bench --roofline nvidia-hopper: percentages"
expect_ok "bench without a roofline" bench "$B" --tokens 1 --min-ms 5
if ! out_has "%"; then ok "bench without a roofline prints no percentages"; else fail "bench without a roofline prints no percentages" "$(last_run_report)"; fi

echo "== bench --pipeline-stats"
# The driver's statistics per dispatch where the device has VK_KHR_pipeline_executable_properties;
# a refusal naming the extension where it has not (lavapipe of Debian 12).
vk bench "$B" --tokens 1 --min-ms 5 --validation --pipeline-stats
if [ "$RC" -eq 0 ] && ! crashed && out_has "pipeline statistics (the driver's, per dispatch):" &&
   grep -qE '^  .+ \[.+\] #0: .+=' "$OUT_FILE"; then
  ok "bench --pipeline-stats: a line of statistics per dispatch"
elif [ "$RC" -eq 1 ] && ! crashed && err_has "lacks VK_KHR_pipeline_executable_properties"; then
  ok "bench --pipeline-stats: refused where the device lacks the extension"
else
  fail "bench --pipeline-stats" "expected statistics, or a refusal naming the extension" "$(last_run_report)"
fi

echo "== bench --attribute"
# Each group of layers (fc1..fc3 -> fc#) timed with its dispatches left out: a table after the layer
# table, a row for every layer at once and one per group, five numbers each; validation silent.
vk bench "$B" --tokens 1 --min-ms 5 --validation --attribute
rows=$(awk 'p && NF > 0 { print } /^group +layers/ { p = 1 }' "$OUT_FILE")
if [ "$RC" -eq 0 ] && ! crashed && out_has "cost inside the program" && echo "$rows" | grep -qE '^\(every layer\) +3 ' &&
   echo "$rows" | grep -qE '^fc# +3 +[0-9.]+ +[0-9.]+ +-?[0-9.]+ +-?[0-9.]+%$' && ! err_has "validation"; then
  ok "bench --attribute: a row for every layer at once and one per group"
else
  fail "bench --attribute" "expected '(every layer)' and 'fc#' rows" "$(last_run_report)"
fi

echo "== bad input"
expect_error "roofline: unknown option" "unknown option --frob" -- roofline --frob
expect_error "roofline: positional argument" "usage: vkqc roofline" -- roofline extra
expect_error "roofline: -o in a missing directory" "/nonexistent-dir" "does not exist" -- \
  roofline --min-ms 1 -o /nonexistent-dir/x.vkqc.json
echo "not a directory" > "$WORK/plain.txt"
expect_error "roofline: -o under a regular file" "plain.txt" "does not exist" -- \
  roofline --min-ms 1 -o "$WORK/plain.txt/x.vkqc.json"
expect_error "roofline: -o without .vkqc.json" ".vkqc.json" -- roofline --min-ms 1 -o "$WORK/x.json"
expect_error "roofline: --device out of range" "--device 99" "out of range" -- roofline --min-ms 1 --device 99
expect_error "roofline: --device negative" "--device -1 is out of range" -- roofline --min-ms 1 --device -1
expect_error "roofline: --device not a number" "--device" "not an integer" -- roofline --device first
expect_error "roofline: --min-ms not a number" "--min-ms" "not a number" -- roofline --min-ms soon
expect_error "roofline: --bytes too small" "--bytes 100 is too small" -- roofline --bytes 100
expect_error "roofline: --bytes above maxStorageBufferRange" "maxStorageBufferRange" -- roofline --bytes 1099511627776
cp "$MINE" "$WORK/profile-copy.vkqc.json"
expect_error "roofline: -o names a Profiles document" "Vulkan Profiles document" -- \
  roofline --min-ms 1 -o "$WORK/profile-copy.vkqc.json"
echo '{"tuned_subgroup_size": "x"}' > "$WORK/broken.vkqc.json"
expect_error "roofline: -o names a broken sidecar" "broken.vkqc.json" "tuned_subgroup_size" -- \
  roofline --min-ms 1 -o "$WORK/broken.vkqc.json"
if cmp -s "$MINE" "$WORK/profile-copy.vkqc.json" && grep -q '"x"' "$WORK/broken.vkqc.json"; then
  ok "refused -o files are left as they were"
else
  fail "refused -o files are left as they were" "profile-copy.vkqc.json or broken.vkqc.json changed"
fi
echo '{"roofline": {"read_gbps": -5}}' > "$WORK/negative.vkqc.json"
expect_error "bench: a negative rate in the roofline" "negative.vkqc.json" "roofline.read_gbps" -- \
  bench "$B" --tokens 1 --roofline "$WORK/negative.vkqc.json"
echo '{"name": "x"}' > "$WORK/empty.vkqc.json"
expect_error "bench: a sidecar without a roofline" "has no measured roofline" -- \
  bench "$B" --tokens 1 --roofline "$WORK/empty.vkqc.json"
expect_error "bench: a built-in without a roofline" "lavapipe has no measured roofline" -- \
  bench "$B" --tokens 1 --roofline lavapipe
expect_error "bench: --roofline file missing" "no such file" -- bench "$B" --tokens 1 --roofline "$WORK/none.vkqc.json"
expect_error "bench: --peak-gbps not positive" "--peak-gbps must be a positive number" -- \
  bench "$B" --tokens 1 --peak-gbps -3

finish
