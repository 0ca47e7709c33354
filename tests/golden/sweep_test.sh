#!/usr/bin/env bash
# End-to-end tests of `dnnsim sweep` (docs/sweeps.md) on the tiny scenario of tests/golden/sweep/
# (a few milliseconds of simulation per point; each point is still a process of its own).
#   usage: sweep_test.sh DNNSIM WORK_DIR
# Cases: a 4-point grid completes with 4 rows; a failing point is recorded and the sweep completes;
# a per-point time limit gives "timeout" rows; a sweep killed with SIGINT and rerun loses no finished
# row and repeats none; slices 0/2 and 1/2 merge into every point; a merge with a slice missing lists
# the missing ids and exits 1; an invalid axis is reported at its line and column before anything runs.
set -u
dnnsim=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)/sweep
rm -rf "$work" && mkdir -p "$work"
. "$(dirname "$0")/checks.sh"
# The point ids of a results CSV (first column, header skipped), one per line.
ids() { tail -n +2 "$1" | cut -d, -f1; }
rows() { tail -n +2 "$1" | wc -l | tr -d ' '; }
# Polls every 10 ms, 1,000 times at most, until the results CSV $1 exists with at least $2 rows.
wait_for_rows() {
  for _ in $(seq 1 1000); do
    [ -f "$1" ] && [ "$(rows "$1")" -ge "$2" ] && return
    sleep 0.01
  done
}

# ---- 1. a 4-point grid completes with 4 rows -------------------------------------------------------
"$dnnsim" sweep "$here/grid.yaml" --out "$work/grid" --jobs 2 >"$work/grid.out" 2>"$work/grid.err"
code=$?
[ $code -eq 0 ] || fail "grid: exit code $code: $(cat "$work/grid.err")"
[ "$(rows "$work/grid/results.csv")" = 4 ] || fail "grid: expected 4 rows, got: $(cat "$work/grid/results.csv")"
[ "$(head -1 "$work/grid/results.csv")" = \
  "point,workload.bucket_size,workload.global_batch,status,error,mean.iteration_time_s,iterations,summary.status" ] ||
  fail "grid: header $(head -1 "$work/grid/results.csv")"
# Product order, last key fastest; rows sorted by point once the sweep is complete.
[ "$(tail -n +2 "$work/grid/results.csv" | cut -d, -f1-4 | tr '\n' ' ')" = \
  "p0000,5MB,2,ok p0001,5MB,4,ok p0002,25MB,2,ok p0003,25MB,4,ok " ] ||
  fail "grid: rows $(cat "$work/grid/results.csv")"
[ -f "$work/grid/points/p0003/summary.json" ] || fail "grid: no points/p0003/summary.json"
grep -q '"points": 4' "$work/grid/sweep.json" || fail "grid: sweep.json $(cat "$work/grid/sweep.json")"
grep -q '^\[4/4\] 0 failed, elapsed .*, ETA ' "$work/grid.err" || fail "grid: progress $(cat "$work/grid.err")"
# Same sweep again elsewhere: the same bytes (no wall time in the CSV).
"$dnnsim" sweep "$here/grid.yaml" --out "$work/grid-again" --jobs 1 >/dev/null 2>&1
cmp -s "$work/grid/results.csv" "$work/grid-again/results.csv" || fail "grid: a second run gives another CSV"
# Rerun into the same directory: everything is there already, nothing runs.
"$dnnsim" sweep "$here/grid.yaml" --out "$work/grid" >/dev/null 2>"$work/grid-rerun.err" || fail "grid: rerun failed"
grep -q "(4 already in results.csv), 0 to run" "$work/grid-rerun.err" || fail "grid: rerun $(cat "$work/grid-rerun.err")"
[ "$(rows "$work/grid/results.csv")" = 4 ] || fail "grid: rerun changed the rows"

# ---- 2. a point that fails at run time is recorded; the others complete -----------------------------
"$dnnsim" sweep "$here/failing.yaml" --out "$work/failing" --jobs 2 >/dev/null 2>"$work/failing.err"
code=$?
[ $code -eq 0 ] || fail "failing: exit code $code: $(cat "$work/failing.err")"
[ "$(rows "$work/failing/results.csv")" = 3 ] || fail "failing: expected 3 rows: $(cat "$work/failing/results.csv")"
[ "$(grep -c ',ok,' "$work/failing/results.csv")" = 2 ] || fail "failing: expected 2 ok rows"
grep -q '^p0002,.*,failed,.*does-not-exist.json: error: cannot open file' "$work/failing/results.csv" ||
  fail "failing: p0002 not recorded as failed: $(cat "$work/failing/results.csv")"
grep -q 'cannot open file' "$work/failing/points/p0002/stderr.txt" || fail "failing: no stderr.txt for p0002"
grep -q '1 failed' "$work/failing.err" || fail "failing: progress does not count the failure"

# ---- 3. the time limit --------------------------------------------------------------------------------
"$dnnsim" sweep "$here/grid.yaml" --out "$work/timeout" --jobs 2 --timeout 1ms >/dev/null 2>&1 ||
  fail "timeout: non-zero exit"
[ "$(grep -c ',timeout,exceeded the time limit' "$work/timeout/results.csv")" = 4 ] ||
  fail "timeout: $(cat "$work/timeout/results.csv")"

# ---- 4. SIGINT after the first rows, then resume: no row lost, none repeated ---------------------------
csv="$work/resume/results.csv"
"$dnnsim" sweep "$here/many.yaml" --out "$work/resume" --jobs 2 >/dev/null 2>"$work/resume1.err" &
pid=$!
wait_for_rows "$csv" 3
kill -INT $pid
wait $pid
code=$?
[ $code -eq 130 ] || fail "resume: the interrupted sweep exited with $code, expected 130"
before=$(ids "$csv" | sort)
count_before=$(echo "$before" | grep -c .)
[ "$count_before" -ge 3 ] && [ "$count_before" -lt 24 ] ||
  fail "resume: $count_before rows after the interrupt (the test expects it mid-way)"
"$dnnsim" sweep "$here/many.yaml" --out "$work/resume" --jobs 2 >/dev/null 2>"$work/resume2.err" ||
  fail "resume: the second run failed: $(cat "$work/resume2.err")"
grep -q "($count_before already in results.csv)" "$work/resume2.err" || fail "resume: $(head -1 "$work/resume2.err")"
after=$(ids "$csv" | sort)
[ "$(echo "$after" | grep -c .)" = 24 ] || fail "resume: expected 24 rows, got $(echo "$after" | grep -c .)"
[ -z "$(echo "$after" | uniq -d)" ] || fail "resume: repeated rows: $(echo "$after" | uniq -d)"
[ -z "$(comm -23 <(echo "$before") <(echo "$after"))" ] || fail "resume: rows lost: $(comm -23 <(echo "$before") <(echo "$after"))"
[ "$(echo "$after" | tr '\n' ' ')" = "$(for i in $(seq 0 23); do printf 'p%04d ' "$i"; done)" ] ||
  fail "resume: ids $(echo "$after" | tr '\n' ' ')"

# ---- 4b. SIGKILL of the driver mid-sweep, then resume: finished rows kept, no half row, none repeated --
csv="$work/killed/results.csv"
"$dnnsim" sweep "$here/many.yaml" --out "$work/killed" --jobs 2 >/dev/null 2>&1 &
pid=$!
wait_for_rows "$csv" 3
kill -KILL $pid
wait $pid 2>/dev/null
# The driver's children die with it (PR_SET_PDEATHSIG): none is left writing a point's folder.
sleep 0.2
pgrep -f "$work/killed/points" >/dev/null && fail "killed: points still running after the driver was killed"
before=$(ids "$csv" | sort)
count_before=$(echo "$before" | grep -c .)
[ "$count_before" -ge 3 ] && [ "$count_before" -lt 24 ] ||
  fail "killed: $count_before rows after SIGKILL (the test expects it mid-way)"
# A row cut short by a kill mid-write is dropped on resume: simulate one.
printf 'p0023,25MB' >> "$csv"
"$dnnsim" sweep "$here/many.yaml" --out "$work/killed" --jobs 2 >/dev/null 2>"$work/killed2.err" ||
  fail "killed: the resumed run failed: $(cat "$work/killed2.err")"
after=$(ids "$csv" | sort)
[ "$(echo "$after" | grep -c .)" = 24 ] || fail "killed: expected 24 rows, got $(echo "$after" | grep -c .)"
[ -z "$(echo "$after" | uniq -d)" ] || fail "killed: repeated rows: $(echo "$after" | uniq -d)"
[ -z "$(comm -23 <(echo "$before") <(echo "$after"))" ] || fail "killed: rows lost"

# ---- 5. slices, then merge ----------------------------------------------------------------------------
"$dnnsim" sweep "$here/grid.yaml" --out "$work/slices" --slice 0/2 >/dev/null 2>&1 || fail "slices: 0/2 failed"
[ "$(ids "$work/slices/results-slice-0-of-2.csv" | tr '\n' ' ')" = "p0000 p0002 " ] || fail "slices: slice 0/2 has the wrong points"
"$dnnsim" sweep --merge "$work/slices" >/dev/null 2>"$work/merge-missing.err"
code=$?
[ $code -eq 1 ] || fail "merge: with slice 1/2 missing the exit code is $code, expected 1"
grep -q 'missing 2 of 4 points: p0001 p0003' "$work/merge-missing.err" || fail "merge: $(cat "$work/merge-missing.err")"
grep -q 'incomplete slices: 1/2 (2 missing)' "$work/merge-missing.err" || fail "merge: $(cat "$work/merge-missing.err")"
"$dnnsim" sweep "$here/grid.yaml" --out "$work/slices" --slice 1/2 >/dev/null 2>&1 || fail "slices: 1/2 failed"
"$dnnsim" sweep --merge "$work/slices" >"$work/merge.out" 2>&1 || fail "merge: $(cat "$work/merge.out")"
grep -q 'merged 4 of 4 points' "$work/merge.out" || fail "merge: $(cat "$work/merge.out")"
cmp -s "$work/slices/results.csv" "$work/grid/results.csv" || fail "merge: the merged CSV differs from the one-shot sweep"

# ---- 6. an invalid axis value is reported at its line and column, and nothing runs --------------------
"$dnnsim" sweep "$here/bad_axis.yaml" --out "$work/bad" >/dev/null 2>"$work/bad.err"
code=$?
[ $code -eq 2 ] || fail "bad axis: exit code $code, expected 2"
grep -q 'bad_axis.yaml:6:38: error: workload.bucket_size=lots: expected a size' "$work/bad.err" ||
  fail "bad axis: $(cat "$work/bad.err")"
[ ! -e "$work/bad" ] || fail "bad axis: the output directory was created"

finish sweep
