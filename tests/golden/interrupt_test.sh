#!/usr/bin/env bash
# A single run stopped with SIGINT (docs/reports.md, "Progress and interruption"): it exits 130 and
# writes the reports of what it simulated, marked "interrupted", with the unfinished tasks counted;
# stderr shows progress while it runs (a line every 5 s when not a terminal).
# usage: interrupt_test.sh DNNSIM SCENARIO WORKDIR
set -u
dnnsim=$1 scenario=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

# 256 single-GPU nodes at step fidelity: 24 ring all-reduces of 2 × 255 × 256 steps, about 16 s
# in the release build (docs/performance.md, "Scale") and far longer under the sanitizers.
"$dnnsim" run "$scenario" --out "$work/out" --set cluster.nodes.0.count=256 --set workload.global_batch=256 \
  --set run.collective_fidelity=step --set outputs.trace=false >"$work/stdout" 2>"$work/stderr" &
pid=$!
sleep 3
kill -INT $pid
wait $pid
code=$?
[ "$code" -eq 130 ] || { cat "$work/stderr" >&2; fail "exit code $code, expected 130"; }
grep -q '"status": "interrupted"' "$work/out/summary.json" || fail "summary.json is not marked interrupted"
grep -Eq '"unfinished_tasks": [1-9]' "$work/out/summary.json" || fail "no unfinished task counted"
grep -q 'interrupted: the reports in' "$work/stderr" || fail "stderr does not say the run was interrupted"
echo "ok"
