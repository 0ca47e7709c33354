#!/usr/bin/env bash
# End-to-end tests of `dnnsim regress` (docs/regress.md) on the tiny scenarios of tests/golden/regress/
# (milliseconds of simulation per run; each run is still a process of its own).
#   usage: regress_test.sh DNNSIM WORK_DIR
# Cases: pass_and_gap/ + with_miss/ give 4 pass, 1 known gap, 1 MISS and exit 3, with the same rows in the
# table, regress.csv and regress.md; one_gpu.yaml, asked for by a scenario file and by a comparison,
# runs once; the same inputs with another --jobs give the same bytes; pass_and_gap/ alone (pass + known
# gap) exits 0; runs over the time limit make "error" rows and exit 1; a broken comparison file is
# reported at its lines and nothing runs (exit 2).
set -u
dnnsim=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)/regress
rm -rf "$work" && mkdir -p "$work"
. "$(dirname "$0")/checks.sh"

# ---- 1. one pass, one known gap, one miss: exit 3 ---------------------------------------------------------
"$dnnsim" regress "$here/pass_and_gap" "$here/with_miss" --out "$work/all" --jobs 2 -v >"$work/all.out" 2>"$work/all.err"
code=$?
[ $code -eq 3 ] || fail "all: exit code $code, expected 3: $(cat "$work/all.err")"
csv="$work/all/regress.csv"
# The rows in file order (flops_scaling.yaml < one_gpu.yaml < two_gpus.yaml, then with_miss/), expectations
# in file order; the simulated column is left out where it is a float of the cost model (its value is the
# simulator's business; the verdict is what is checked).
[ "$(head -1 "$csv")" = "scenario,metric,compare,paper_value,tolerance,source,simulated,verdict,note" ] ||
  fail "csv header: $(head -1 "$csv")"
[ "$(sed -n 2p "$csv")" = 'forward time scales with FLOPs,forward time 20 GFlop / 10 GFlop,approx,2,1%,"roofline, compute-bound",2,pass,' ] ||
  fail "csv row 2: $(sed -n 2p "$csv")"
[ "$(sed -n 3p "$csv")" = 'forward time scales with FLOPs,double:iterations,approx,1,0,run.iterations,1,pass,' ] ||
  fail "csv row 3: $(sed -n 3p "$csv")"
[ "$(sed -n 4p "$csv")" = 'regress-one-gpu,simulation.unfinished_tasks,approx,0,0,no failures configured,0,pass,' ] ||
  fail "csv row 4: $(sed -n 4p "$csv")"
[ "$(sed -n 5p "$csv")" = 'regress-one-gpu,devices.node0/gpu0.communication_s,approx,0,0,a single GPU,0,pass,' ] ||
  fail "csv row 5: $(sed -n 5p "$csv")"
sed -n 6p "$csv" | grep -q '^regress-two-gpus,mean.exposed_communication_s,at_most,0,0,perfect-overlap assumption,[0-9.e-]*,known gap,known gap: one layer: nothing left to overlap the all-reduce with$' ||
  fail "csv row 6: $(sed -n 6p "$csv")"
sed -n 7p "$csv" | grep -q '^linear scaling from one to two GPUs,"iteration time, two GPUs / one GPU",approx,0.5,1%,linear scaling,0\.5[0-9]*,MISS,$' ||
  fail "csv row 7: $(sed -n 7p "$csv")"
[ "$(wc -l <"$csv" | tr -d ' ')" = 7 ] || fail "csv: expected 7 lines: $(cat "$csv")"
# The table on stdout: the same verdicts, the known gap's measured value and reason, the counts.
grep -q '^regress-two-gpus  *mean.exposed_communication_s  *≤ 0 + 0 (perfect-overlap assumption)  *3.57[0-9e-]*  *known gap$' "$work/all.out" ||
  fail "table: known gap row: $(cat "$work/all.out")"
grep -q '^    ↳ known gap: one layer: nothing left to overlap the all-reduce with$' "$work/all.out" || fail "table: no known-gap reason"
grep -q '^linear scaling from one to two GPUs  *iteration time, two GPUs / one GPU  *≈ 0.5 ± 1% (linear scaling)  *0.5[0-9]*  *MISS$' "$work/all.out" ||
  fail "table: MISS row: $(cat "$work/all.out")"
grep -q '^6 checks: 4 pass, 1 MISS, 1 known gap$' "$work/all.out" || fail "table: counts: $(cat "$work/all.out")"
# The Markdown table: the same rows with their sources and the known-gap reason.
md="$work/all/regress.md"
[ "$(grep -c '^| ' "$md")" = 7 ] || fail "md: expected a header and 6 rows: $(cat "$md")"
grep -q '^| regress-two-gpus | mean.exposed_communication_s | ≤ 0 + 0 | 3.57[0-9e-]* | known gap | perfect-overlap assumption | known gap: one layer: nothing left to overlap the all-reduce with |$' "$md" ||
  fail "md: known gap row: $(cat "$md")"
grep -q '^| linear scaling from one to two GPUs | iteration time, two GPUs / one GPU | ≈ 0.5 ± 1% | 0.5[0-9]* | MISS | linear scaling |  |$' "$md" ||
  fail "md: MISS row: $(cat "$md")"
# one_gpu.yaml is wanted by itself and as run `base` of flops_scaling.yaml, and by with_miss as run `one`,
# all without overrides: it runs once. Three runs in all.
[ "$(ls "$work/all/runs" | tr '\n' ' ')" = "flops_scaling.base flops_scaling.double two_gpus " ] ||
  fail "runs: $(ls "$work/all/runs" | tr '\n' ' ')"
grep -q '^skipped .*pass_and_gap/sweep.yaml: a sweep file$' "$work/all.err" || fail "verbose: $(cat "$work/all.err")"

# ---- 2. the same inputs, one run at a time: the same bytes --------------------------------------------------
"$dnnsim" regress "$here/pass_and_gap" "$here/with_miss" --out "$work/again" --jobs 1 >/dev/null 2>&1
cmp -s "$csv" "$work/again/regress.csv" || fail "determinism: regress.csv differs"
cmp -s "$md" "$work/again/regress.md" || fail "determinism: regress.md differs"

# ---- 3. pass + known gap only: exit 0 -------------------------------------------------------------------------
"$dnnsim" regress "$here/pass_and_gap" --out "$work/ok" >"$work/ok.out" 2>"$work/ok.err"
code=$?
[ $code -eq 0 ] || fail "pass + known gap: exit code $code, expected 0: $(cat "$work/ok.out" "$work/ok.err")"
grep -q '^5 checks: 4 pass, 1 known gap$' "$work/ok.out" || fail "pass + known gap: $(cat "$work/ok.out")"

# ---- 4. runs over the time limit: error rows with the reason, exit 1 ------------------------------------------
"$dnnsim" regress "$here/with_miss" --out "$work/timeout" --timeout 1ms >"$work/timeout.out" 2>&1
code=$?
[ $code -eq 1 ] || fail "timeout: exit code $code, expected 1"
grep -q ',error,run linear_scaling.two: exceeded the time limit of 1 ms$' "$work/timeout/regress.csv" ||
  fail "timeout: $(cat "$work/timeout/regress.csv")"

# ---- 5. bad input: every problem at its line and column, nothing run, exit 2 ----------------------------------
"$dnnsim" regress "$here/bad" --out "$work/bad" >/dev/null 2>"$work/bad.err"
code=$?
[ $code -eq 2 ] || fail "bad input: exit code $code, expected 2"
for expected in 'broken.yaml:4:56: error: run.iterations=0: expected an integer in \[1, 1000000\], got 0' \
                "broken.yaml:5:21: error: cannot open the scenario '.*missing.yaml'" \
                "broken.yaml:7:14: error: unknown run 'bsae'; did you mean 'base'?" \
                "broken.yaml:8:54: error: unknown key 'tolerence' in a comparison expectation; did you mean 'tolerance'?"; do
  grep -q "$expected" "$work/bad.err" || fail "bad input: no '$expected' in: $(cat "$work/bad.err")"
done
[ ! -e "$work/bad" ] || fail "bad input: the output directory was created"

finish regress
