# Shared helpers of the vkqc end-to-end tests; sourced by tests/e2e/*.sh (this file is not a test).
#
# A test script is run as: bash SCRIPT <path-to-vkqc> <source-dir> <work-dir>
# After `source common.bash "$@"` these are set:
#   VKQC      absolute path of the vkqc binary
#   SRC       absolute path of the source tree
#   WORK      <work-dir>/scratch, emptied at the start (so no stale output can pass a check);
#             every output goes here
#   FIXTURES  python3 fixtures.py command line (see tests/e2e/fixtures.py)
# Each check reports one line, "ok   NAME" or "FAIL NAME" followed by the evidence; `finish`
# prints "N passed, M failed" and exits non-zero when M > 0.
set -u

if [ $# -ne 3 ]; then
  echo "usage: bash $0 <path-to-vkqc> <source-dir> <work-dir>" >&2
  exit 2
fi
VKQC=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
mkdir -p "$3" || { echo "cannot create work dir $3" >&2; exit 2; }
WORK=$(cd "$3" && pwd)/scratch
rm -rf "$WORK" && mkdir -p "$WORK" || { echo "cannot create $WORK" >&2; exit 2; }
FIXTURES="python3 $SRC/tests/e2e/fixtures.py"
[ -x "$VKQC" ] || { echo "vkqc binary not found or not executable: $VKQC" >&2; exit 2; }

# All device work on lavapipe (the CPU Vulkan driver), whatever GPUs the machine has: the tests
# check lavapipe-specific behaviour. VKQC_LAVAPIPE_ICD overrides the ICD manifest's path.
export VK_DRIVER_FILES=${VKQC_LAVAPIPE_ICD:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
[ -f "$VK_DRIVER_FILES" ] || { echo "lavapipe ICD manifest not found: $VK_DRIVER_FILES" >&2; exit 2; }

PASSED=0
FAILED=0
CMD_TIMEOUT=${VKQC_E2E_TIMEOUT:-300}
_n=0

ok() {
  PASSED=$((PASSED + 1))
  echo "ok   $1"
}

# fail NAME WHY...: one FAIL line, then the evidence indented.
fail() {
  local name=$1
  shift
  FAILED=$((FAILED + 1))
  echo "FAIL $name"
  local line
  for line in "$@"; do printf '%s\n' "$line" | sed 's/^/       /'; done
}

# vk ARGS...: runs vkqc; sets RC, OUT_FILE, ERR_FILE, LAST_CMD. Never aborts the script.
vk() {
  _n=$((_n + 1))
  OUT_FILE=$WORK/log/$_n.out
  ERR_FILE=$WORK/log/$_n.err
  mkdir -p "$WORK/log"
  LAST_CMD="vkqc $*"
  timeout "$CMD_TIMEOUT" "$VKQC" "$@" >"$OUT_FILE" 2>"$ERR_FILE"
  RC=$?
  return 0
}

last_run_report() {
  echo "command: $LAST_CMD"
  echo "exit code: $RC"
  echo "stdout (last 15 lines):"
  tail -n 15 "$OUT_FILE" | sed 's/^/  | /'
  echo "stderr (last 15 lines):"
  tail -n 15 "$ERR_FILE" | sed 's/^/  | /'
}

# The last run ended by a signal, a timeout, an abort or an uncaught exception?
# A crash, a timeout, or an internal error (a vkqc bug message): every check fails on them.
crashed() {
  [ "$RC" -ge 124 ] && return 0
  grep -qE 'Segmentation|terminate called|Aborted|core dumped|AddressSanitizer|runtime error:|Assertion .* failed|internal error \(a bug in vkqc' \
    "$OUT_FILE" "$ERR_FILE"
}

out_has() { grep -qF -- "$1" "$OUT_FILE"; }
err_has() { grep -qF -- "$1" "$ERR_FILE"; }

# expect_writes NAME FILE ARGS...: vkqc ARGS must exit 0 without crash markers and write FILE
# (non-empty; any old FILE is removed first).
expect_writes() {
  local name=$1 file=$2
  shift 2
  rm -f "$file"
  vk "$@"
  if [ "$RC" -eq 0 ] && ! crashed && [ -s "$file" ]; then
    ok "$name"
  else
    fail "$name" "expected exit 0 and a non-empty $file" "$(last_run_report)"
  fi
}

# expect_pass NAME ARGS...: a `vkqc run --reference` that must exit 0 and print PASS (and no FAIL).
expect_pass() {
  local name=$1
  shift
  vk "$@"
  if [ "$RC" -eq 0 ] && ! crashed && out_has " PASS" && ! out_has " FAIL"; then
    ok "$name"
  else
    fail "$name" "expected exit 0 and PASS" "$(last_run_report)"
  fi
}

# expect_error NAME PATTERN... -- ARGS...: vkqc ARGS must fail cleanly (exit 1 or 2, no crash),
# and stderr must contain every PATTERN (fixed strings).
expect_error() {
  local name=$1
  shift
  local patterns=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    patterns+=("$1")
    shift
  done
  shift  # the --
  vk "$@"
  local why=()
  if crashed; then
    why+=("crashed, timed out or hit an internal error (exit code $RC)")
  elif [ "$RC" -ne 1 ] && [ "$RC" -ne 2 ]; then
    why+=("expected exit code 1 or 2, got $RC")
  fi
  local p
  for p in "${patterns[@]}"; do
    err_has "$p" || why+=("stderr does not mention: $p")
  done
  if [ ${#why[@]} -eq 0 ]; then ok "$name"; else fail "$name" "${why[@]}" "$(last_run_report)"; fi
}

# finish: the summary line and the exit code.
finish() {
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
  exit $?
}
