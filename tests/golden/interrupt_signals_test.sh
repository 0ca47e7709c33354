#!/usr/bin/env bash
# How SIGTERM ends a run that ends no operation for a long time (docs/reports.md, "Progress and
# interruption"): a latency of 10^24 s holds every transfer while SimGrid works through a link's
# bandwidth events.
# SIGNALS=1: the link is preempted; the first SIGTERM ends its preemption process, so SimGrid reaches
#   the transfers' end and the run stops at that operation: exit 130, reports marked "interrupted".
# SIGNALS=2: the link follows a periodic schedule, whose events the signal does not end, so the first
#   SIGTERM leaves the run going and the second, with the default action, kills it: exit 143
#   (128 + SIGTERM), no reports.
# usage: interrupt_signals_test.sh DNNSIM WORKDIR SIGNALS SCENARIO [RUN OPTIONS...]
. "$(dirname "$0")/background_run.sh"
dnnsim=$1 work=$2 signals=$3
shift 3
start_run "$dnnsim" "$work" "$@"
# Past its start (it prints nothing: progress comes with the operations that end), in its simulation.
sleep 3
kill -0 $pid 2>/dev/null || { cat "$work/stderr" >&2; fail "the run ended by itself"; }
kill -TERM $pid
if [ "$signals" -eq 1 ]; then
  for _ in $(seq 100); do
    kill -0 $pid 2>/dev/null || break
    sleep 0.2
  done
  kill -0 $pid 2>/dev/null && { kill -KILL $pid; fail "the first SIGTERM did not end the run within 20 s"; }
  wait $pid
  code=$?
  [ "$code" -eq 130 ] || { cat "$work/stderr" >&2; fail "exit code $code, expected 130"; }
  grep -q '"status": "interrupted"' "$work/out/summary.json" || fail "summary.json is not marked interrupted"
  echo "ok"
  exit 0
fi
sleep 2
kill -0 $pid 2>/dev/null || fail "the first SIGTERM already ended the run: this scenario no longer tests the second"
kill -TERM $pid
wait $pid
code=$?
[ "$code" -eq 143 ] || { cat "$work/stderr" >&2; fail "exit code $code, expected 143"; }
[ ! -e "$work/out/summary.json" ] || fail "reports were written"
echo "ok"
