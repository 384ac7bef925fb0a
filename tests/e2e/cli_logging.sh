#!/usr/bin/env bash
# The CLI's logging and output files: -q silences the info logs, -v shows debug logs (kernel
# choices and why, packing, shaders, memory plans), --log-level takes a level or refuses with the
# list, the global flags work before or after the command; the progress line appears only on a
# terminal (script(1), when present, provides one) and never in redirected output; -o writes are
# atomic (a failed or interrupted write leaves the previous file intact and no temporary file).
#
# usage: bash cli_logging.sh <path-to-vkqc> <source-dir> <work-dir>
source "$(dirname "$0")/common.bash" "$@"

MODEL=$WORK/mlp.vkqg
OUTB=$WORK/mlp.vkqb
expect_writes "import the example" "$MODEL" import "$SRC/examples/mlp/graph.json" -o "$MODEL"
COMPILE=(compile "$MODEL" --target lavapipe --tokens 1,64)

# -- levels ----------------------------------------------------------------------------------
vk "${COMPILE[@]}" -o "$OUTB"
if [ "$RC" -eq 0 ] && out_has "wrote $OUTB" && err_has "vkqc: compiled for target 'lavapipe'" && ! err_has "debug:"; then
  ok "default level: the info summary on stderr, the result on stdout, no debug"
else
  fail "default level" "$(last_run_report)"
fi
if ! grep -q $'\r' "$ERR_FILE" && ! err_has "packing weights" && ! err_has "compiling shaders"; then
  ok "no progress line when stderr is not a terminal"
else
  fail "no progress line when stderr is not a terminal" "$(last_run_report)"
fi

vk "${COMPILE[@]}" -o "$OUTB" -q
if [ "$RC" -eq 0 ] && out_has "wrote $OUTB" && [ ! -s "$ERR_FILE" ]; then
  ok "-q: nothing on stderr, the result still on stdout"
else
  fail "-q silences info logs" "$(last_run_report)"
fi

for v in "-v" "--log-level debug" "--log-level=trace"; do
  # shellcheck disable=SC2086
  vk "${COMPILE[@]}" -o "$OUTB" $v
  if [ "$RC" -eq 0 ] && out_has "wrote $OUTB" &&
     err_has "vkqc: debug: tokens=1: layer 'fc1' (linear): linear_" && err_has "; why: " &&
     err_has "vkqc: debug: packed op 0 ('fc1')" && err_has "vkqc: debug: compiled shader " &&
     err_has "tokens=64: memory plan: " && err_has "vkqc: compiled for target"; then
    ok "$v: kernel choices with their reasons, packing, shaders, memory plans"
  else
    fail "$v shows debug logs" "$(last_run_report)"
  fi
done
if grep -q "vkqc: trace: tokens=1: layer 'fc1'" "$ERR_FILE"; then ok "--log-level=trace: layer details"; else fail "trace level" "$(last_run_report)"; fi

vk -v "${COMPILE[@]}" -o "$OUTB"
if [ "$RC" -eq 0 ] && err_has "vkqc: debug: tokens=64: layer 'fc2'"; then
  ok "global flags before the command (vkqc -v compile ...)"
else
  fail "global flags before the command" "$(last_run_report)"
fi

for lv in warn off; do
  vk "${COMPILE[@]}" -o "$OUTB" --log-level "$lv"
  if [ "$RC" -eq 0 ] && out_has "wrote" && [ ! -s "$ERR_FILE" ]; then ok "--log-level $lv: no info"; else fail "--log-level $lv" "$(last_run_report)"; fi
done

vk profiles -q
if [ "$RC" -eq 0 ] && out_has "lavapipe"; then ok "every command takes the global flags (profiles -q)"; else fail "profiles -q" "$(last_run_report)"; fi

expect_error "--log-level with a bad value" "--log-level must be trace, debug, info, warn, error or off, not 'loud'" -- \
  "${COMPILE[@]}" -o "$OUTB" --log-level loud
expect_error "-v with -q" "give one of them" -- "${COMPILE[@]}" -o "$OUTB" -v -q
expect_error "--log-level without a value" "--log-level needs a value" -- profiles --log-level
# The error that ends a command is its result: printed at every level.
expect_error "-q still prints the error" "vkqc compile: --target NAME|PROFILE.json is required" -- compile "$MODEL" -o "$OUTB" -q
expect_error "--log-level off still prints the error" "vkqc compile: --target" -- compile "$MODEL" -o "$OUTB" --log-level off

# -- the progress line on a terminal ----------------------------------------------------------
if command -v script > /dev/null; then
  # script(1) runs the command on a pseudo-terminal and copies what it wrote; TERM set so a
  # "dumb" terminal of the test environment does not turn the line off.
  TTY_OUT=$WORK/tty.out
  TERM=xterm timeout 300 script -qec "'$VKQC' ${COMPILE[*]} -o '$WORK/tty.vkqb'" /dev/null > "$TTY_OUT" 2>&1
  if grep -q "vkqc: packing weights" "$TTY_OUT" && grep -q "vkqc: compiling shaders (tokens=64)" "$TTY_OUT" &&
     grep -q $'\r' "$TTY_OUT" && grep -q "wrote $WORK/tty.vkqb" "$TTY_OUT"; then
    ok "progress line on a terminal (packing weights, compiling shaders)"
  else
    fail "progress line on a terminal" "$(cat -v "$TTY_OUT" | tail -n 20)"
  fi
  TERM=xterm timeout 300 script -qec "'$VKQC' ${COMPILE[*]} -o '$WORK/tty.vkqb' -q" /dev/null > "$TTY_OUT" 2>&1
  if ! grep -q "packing weights" "$TTY_OUT" && grep -q "wrote $WORK/tty.vkqb" "$TTY_OUT"; then
    ok "-q: no progress line on a terminal either"
  else
    fail "-q: no progress line on a terminal" "$(cat -v "$TTY_OUT" | tail -n 20)"
  fi
else
  echo "skip progress on a terminal: script(1) is not installed"
fi

# -- atomic -o --------------------------------------------------------------------------------
no_temp_files() { ! ls -a "$WORK" | grep -q '\.tmp\.'; }
sum_before=$(cksum < "$OUTB")
expect_error "a failed compile" "lavapipe-nope" -- compile "$MODEL" --target lavapipe-nope --tokens 1 -o "$OUTB"
if [ "$(cksum < "$OUTB")" = "$sum_before" ] && no_temp_files; then
  ok "a failed compile leaves the previous bundle and no temporary file"
else
  fail "a failed compile leaves the previous bundle" "$(ls -la "$WORK")"
fi

mkdir -p "$WORK/a_directory.vkqb"
expect_error "-o naming a directory" "a_directory.vkqb: cannot replace" -- "${COMPILE[@]}" -o "$WORK/a_directory.vkqb"
if [ -d "$WORK/a_directory.vkqb" ] && no_temp_files; then
  ok "a failed rename removes the temporary file"
else
  fail "a failed rename removes the temporary file" "$(ls -la "$WORK")"
fi

expect_error "-o in a missing directory" "no_such_dir/x.vkqb: cannot create" -- "${COMPILE[@]}" -o "$WORK/no_such_dir/x.vkqb"

# A write cut short by the file size limit: with SIGXFSZ ignored the write fails (EFBIG) and
# vkqc cleans up; with its default action the process dies in the middle of writing. Either way
# the previous bundle stays whole.
size=$(stat -c %s "$OUTB")
if [ "$size" -gt 8192 ]; then
  (ulimit -f 4; trap '' XFSZ; exec "$VKQC" "${COMPILE[@]}" -o "$OUTB") > "$WORK/xfsz.out" 2> "$WORK/xfsz.err"
  rc=$?
  if [ "$rc" -eq 1 ] && grep -q "write failed: File too large" "$WORK/xfsz.err" &&
     [ "$(cksum < "$OUTB")" = "$sum_before" ] && no_temp_files; then
    ok "a write that fails midway (file size limit) keeps the previous bundle, removes the temporary file"
  else
    fail "a write that fails midway" "exit $rc" "$(cat "$WORK/xfsz.err")" "$(ls -la "$WORK")"
  fi
  { (ulimit -f 4; exec "$VKQC" "${COMPILE[@]}" -o "$OUTB") > /dev/null; } 2> /dev/null  # (and bash's own report)
  rc=$?
  if [ "$rc" -gt 128 ] && [ "$(cksum < "$OUTB")" = "$sum_before" ]; then
    ok "a compile killed while writing (SIGXFSZ) leaves the previous bundle whole"
  else
    fail "a compile killed while writing" "exit $rc (expected death by signal)" "$(ls -la "$WORK")"
  fi
  rm -f "$WORK"/*.tmp.*
else
  fail "the bundle is large enough for the size-limit checks" "$size bytes"
fi

finish
