#!/usr/bin/env bash
# The fuzz long run on a many-core machine: every target at once, each with W libFuzzer workers
# (`-jobs=W -workers=W`, every worker running RUNS / W executions from the same seed corpus and a
# shared output corpus, so the target's executions add up to RUNS). Same table as long_run.sh,
# summed over the workers; exit 1 if any target found something.
# usage: bash tests/fuzz/long_run_parallel.sh RUNS DIR "target=W ..."   (targets not named: 1 worker)
#   MAX_SECONDS=S: each worker also stops after S seconds (the table then shows fewer executions);
#   FUZZ_TARGETS="a b": only these targets
#   DIR holds the fuzz binaries (build-fuzz/tests/fuzz/T_fuzz); results in build-fuzz/plong/
set -uo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-1000000} BIN=${2:-build-fuzz/tests/fuzz} SPEC=${3:-}
ROOT=$PWD OUTD=$PWD/build-fuzz/plong
mkdir -p "$OUTD/artifacts"
export TMPDIR=${TMPDIR:-/dev/shm} UBSAN_OPTIONS=print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1
workers_of() {
  local w
  for w in $SPEC; do [ "${w%%=*}" = "$1" ] && { echo "${w#*=}"; return; }; done
  echo 1
}
TARGETS=${FUZZ_TARGETS:-$(ls tests/fuzz/corpus)}
start=$(date +%s)
for t in $TARGETS; do
  w=$(workers_of "$t")
  mkdir -p "$OUTD/$t/corpus" "$OUTD/$t/logs"
  dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="$ROOT/tests/fuzz/$t.dict")
  # -jobs writes fuzz-N.log into the working directory.
  (cd "$OUTD/$t/logs" && "$ROOT/$BIN/${t}_fuzz" -jobs="$w" -workers="$w" -runs=$(( (RUNS + w - 1) / w )) -max_total_time="${MAX_SECONDS:-0}" -timeout=20 \
     -rss_limit_mb=2560 -print_final_stats=1 "${dict[@]}" -artifact_prefix="$OUTD/artifacts/$t-" \
     "$OUTD/$t/corpus" "$ROOT/tests/fuzz/corpus/$t" > "$OUTD/$t/main.log" 2>&1; echo $? > "$OUTD/$t/rc"; date +%s > "$OUTD/$t/end") &
done
wait
echo "| target | workers | executions | time (s) | corpus | findings |"
echo "| --- | ---: | ---: | ---: | ---: | --- |"
bad=0
for t in $TARGETS; do
  execs=0
  for l in "$OUTD/$t"/logs/fuzz-*.log; do
    n=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$l" | grep -o '[0-9]*$' | tail -1)
    execs=$(( execs + ${n:-0} ))
  done
  found=$(ls "$OUTD/artifacts" | grep -c "^$t-" || true)
  rc=$(cat "$OUTD/$t/rc")
  what="none"
  if [ "$found" -gt 0 ] || [ "$rc" -ne 0 ]; then
    what="exit $rc, $found reproducer(s): $(cat "$OUTD/$t"/logs/fuzz-*.log | grep -m1 -oE 'ERROR: [A-Za-z]+: [a-z-]+|runtime error: .{0,60}|fuzz property violated: .*|internal error on fuzz input' | head -1)"
    bad=1
  fi
  echo "| $t | $(workers_of "$t") | $execs | $(( $(cat "$OUTD/$t/end") - start )) | $(ls "$OUTD/$t/corpus" | wc -l) | $what |"
done
exit $bad
