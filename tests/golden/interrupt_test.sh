#!/usr/bin/env bash
# A single run stopped with SIGINT (docs/reports.md, "Progress and interruption"): it exits 130 and
# writes the reports of what it simulated, marked "interrupted", with what did not finish counted
# (UNFINISHED, a regular expression on summary.json); stderr shows progress while it runs (a line
# every 5 s when not a terminal), and the signal is sent once the first progress line is there, so
# that it reaches the simulation however long the scenario takes to read.
# usage: interrupt_test.sh DNNSIM WORKDIR UNFINISHED SCENARIO [RUN OPTIONS...]
. "$(dirname "$0")/background_run.sh"
dnnsim=$1 work=$2 unfinished=$3
shift 3
start_run "$dnnsim" "$work" "$@"
for _ in $(seq 600); do
  grep -Eq '^(simulating|cluster):' "$work/stderr" && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.2
done
kill -INT $pid
wait $pid
code=$?
[ "$code" -eq 130 ] || { cat "$work/stderr" >&2; fail "exit code $code, expected 130"; }
grep -q '"status": "interrupted"' "$work/out/summary.json" || fail "summary.json is not marked interrupted"
grep -Eq "$unfinished" "$work/out/summary.json" || fail "nothing unfinished counted ($unfinished)"
grep -q 'interrupted: the reports in' "$work/stderr" || fail "stderr does not say the run was interrupted"
echo "ok"
