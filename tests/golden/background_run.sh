# Sourced by the interrupt tests (interrupt_test.sh, interrupt_signals_test.sh): `start_run DNNSIM WORK
# SCENARIO [RUN OPTIONS...]` empties WORK and starts `dnnsim run` in the background with its reports in
# WORK/out and its stdout and stderr in WORK, its process id in `pid`; a failed check ends the test.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }

start_run() {
  local dnnsim=$1 work=$2
  shift 2
  rm -rf "$work" && mkdir -p "$work"
  "$dnnsim" run "$@" --out "$work/out" >"$work/stdout" 2>"$work/stderr" &
  pid=$!
}
