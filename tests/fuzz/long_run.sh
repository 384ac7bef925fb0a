#!/usr/bin/env bash
# The documented long run of the fuzz targets (README "Fuzzing and sanitizers"): each target in
# turn, on one core, until RUNS executions (default 10^6) or a finding, from its seed corpus plus
# what earlier long runs found (build-fuzz/long/<target>/). Prints one table row per target:
# executions, seconds, corpus size, findings (reproducers in build-fuzz/long/artifacts/).
# usage: bash tests/fuzz/long_run.sh [RUNS] [TARGET...]     (after scripts/sanitize.sh fuzz built them)
set -uo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-1000000}
shift || true
TARGETS=${*:-$(ls tests/fuzz/corpus)}
mkdir -p build-fuzz/long/artifacts
export TMPDIR=${TMPDIR:-/dev/shm} UBSAN_OPTIONS=print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1
echo "| target | executions | time (s) | exec/s | corpus | findings |"
echo "| --- | ---: | ---: | ---: | ---: | --- |"
for t in $TARGETS; do
  mkdir -p "build-fuzz/long/$t"
  dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  log=build-fuzz/long/$t.log
  start=$(date +%s)
  "build-fuzz/tests/fuzz/${t}_fuzz" -runs="$RUNS" -timeout=20 -rss_limit_mb=2560 -print_final_stats=1 "${dict[@]}" \
    -artifact_prefix="build-fuzz/long/artifacts/$t-" "build-fuzz/long/$t" "tests/fuzz/corpus/$t" > "$log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  corpus=$(ls "build-fuzz/long/$t" | wc -l)
  if [ "$rc" -eq 0 ]; then what="none"; else
    what="exit $rc: $(grep -m1 -oE 'ERROR: [A-Za-z]+: [a-z-]+|runtime error: .{0,60}|fuzz property violated: .*|internal error on fuzz input' "$log" | head -1)"
  fi
  echo "| $t | ${execs:-?} | $secs | ${rate:-?} | $corpus | $what |"
done
