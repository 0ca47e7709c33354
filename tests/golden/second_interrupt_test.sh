#!/usr/bin/env bash
# A second SIGTERM ends a run at once (docs/reports.md, "Progress and interruption"). The first asks
# the simulation to stop at its next operation; SCENARIO is a run that ends none for a long time (a
# latency of 10^24 s holds every transfer while SimGrid works through the preempted link's bandwidth
# events), so the first leaves it running and the second, with the default action, kills it: exit
# 143 (128 + SIGTERM), no reports.
# usage: second_interrupt_test.sh DNNSIM WORKDIR SCENARIO [RUN OPTIONS...]
set -u
dnnsim=$1 work=$2
shift 2
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$dnnsim" run "$@" --out "$work/out" >"$work/stdout" 2>"$work/stderr" &
pid=$!
# Past its start (it prints nothing: progress comes with the operations that end), in its simulation.
sleep 3
kill -0 $pid 2>/dev/null || { cat "$work/stderr" >&2; fail "the run ended by itself"; }
kill -TERM $pid
sleep 2
kill -0 $pid 2>/dev/null || fail "the first SIGTERM already ended the run: this scenario no longer tests the second"
kill -TERM $pid
wait $pid
code=$?
[ "$code" -eq 143 ] || { cat "$work/stderr" >&2; fail "exit code $code, expected 143"; }
[ ! -e "$work/out/summary.json" ] || fail "reports were written"
echo "ok"
