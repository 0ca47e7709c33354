#!/usr/bin/env bash
# A sweep as a real Slurm job array on a private one-node cluster (scripts/slurm-local):
#   start the cluster in a temporary folder → dnnsim sweep slurm/sweep.yaml --slurm --array-size 2
#   → wait for both array tasks (bounded) → dnnsim sweep --merge → 4 rows, all "ok" → stop the cluster.
# Usage: slurm_test.sh DNNSIM PROJECT_SOURCE_DIR      (ctest: slurm.job_array, label "slurm")
# Exit 77 (ctest: skipped) with "SKIPPED: <reason>" when Slurm cannot run here: not root, packages
# slurm-wlm/munge missing, or the cluster does not start. Any other failure exits 1 and keeps the
# temporary folder (cluster logs, task logs) for a look.
set -uo pipefail

dnnsim=${1:?usage: slurm_test.sh DNNSIM PROJECT_SOURCE_DIR}
source_dir=${2:?usage: slurm_test.sh DNNSIM PROJECT_SOURCE_DIR}
slurm_local=$source_dir/scripts/slurm-local
sweep=$source_dir/tests/golden/slurm/sweep.yaml
wait_s=120 # for the array to finish; the points take milliseconds, the tasks well under 1 s

skip() {
  echo "SKIPPED: $*"
  exit 77
}
fail() {
  echo "FAILED: $*" >&2
  keep=1
  exit 1
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
seconds() { printf '%d.%03d s' $(($1 / 1000)) $(($1 % 1000)); }

[ "$(id -u)" -eq 0 ] || skip "not root (the local cluster runs munged as the munge user and slurmd as root)"
PATH=$PATH:/usr/sbin:/sbin
for tool in sbatch squeue slurmctld slurmd munged; do
  command -v "$tool" >/dev/null 2>&1 || skip "'$tool' not found: install the packages slurm-wlm munge (scripts/install-deps)"
done

work=$(mktemp -d /tmp/dnnsim-slurm-test.XXXXXX)
chmod 0755 "$work" # munged, running as the munge user, opens its socket and log under it
keep=0
started=0
cleanup() {
  if [ "$started" -eq 1 ]; then "$slurm_local" stop "$work/cluster" >/dev/null || echo "could not stop the cluster in $work/cluster" >&2; fi
  if [ "$keep" -eq 1 ]; then
    echo "kept $work (cluster logs in cluster/log/, task logs in out/slurm/)" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM # run the EXIT trap (stop the daemons) on interruption too

# A port of its own, so that a cluster already on the default 6817 (a developer's) is left alone.
export SLURM_LOCAL_PORT=$((20000 + ($$ % 5000) * 2))
t0=$(now_ms)
started=1 # from here on `stop` runs at exit: it ends whatever `start` managed to launch
if ! start_output=$("$slurm_local" start "$work/cluster" 2>"$work/start.log"); then
  cat "$work/start.log" >&2
  skip "the local Slurm cluster did not start: $(grep -m1 '^slurm-local:' "$work/start.log" || tail -n1 "$work/start.log")"
fi
eval "$start_output" # export SLURM_CONF=…
[ -n "${SLURM_CONF:-}" ] || fail "slurm-local printed no SLURM_CONF"
echo "cluster ready in $(seconds $(($(now_ms) - t0)))"

# Submit: 4 points in 2 array tasks; the partition is named to exercise --partition.
t1=$(now_ms)
submit_output=$("$dnnsim" sweep "$sweep" --slurm --array-size 2 --partition debug --out "$work/out") ||
  fail "dnnsim sweep --slurm failed: $submit_output"
echo "$submit_output"
job=$(sed -n 's/^submitted job array \([0-9][0-9]*\).*/\1/p' <<<"$submit_output")
[ -n "$job" ] || fail "no job id in the output of dnnsim sweep --slurm"
grep -qx '#SBATCH --array=0-1' "$work/out/sweep.sbatch" || fail "sweep.sbatch has no '#SBATCH --array=0-1'"

# Wait until no task of the array is queued or running. Without accounting (no sacct) finished
# tasks stay visible to `squeue -t all` for MinJobAge (300 s), long enough to read their state.
active=pending,running,configuring,completing,suspended,requeued,resizing
deadline=$(($(now_ms) + wait_s * 1000))
while :; do
  queued=$(squeue -h -j "$job" -t "$active" -o %i 2>"$work/squeue.err") || fail "squeue failed: $(cat "$work/squeue.err")"
  [ -z "$queued" ] && break
  [ "$(now_ms)" -lt "$deadline" ] || {
    squeue -j "$job" -t all >&2
    fail "the array was not done after ${wait_s} s"
  }
  sleep 0.1
done
echo "array $job finished in $(seconds $(($(now_ms) - t1))) (submission to last task done)"
states=$(squeue -h -j "$job" -t all -o '%i %T' | sort)
echo "$states"
if [ "$(grep -c ' COMPLETED$' <<<"$states")" -ne 2 ]; then
  for log in "$work"/out/slurm/*.out; do echo "--- $log" >&2 && cat "$log" >&2; done
  fail "expected 2 COMPLETED tasks"
fi

"$dnnsim" sweep --merge "$work/out" || fail "dnnsim sweep --merge found missing points"
csv=$work/out/results.csv
rows=$(($(wc -l <"$csv") - 1))
[ "$rows" -eq 4 ] || fail "expected 4 rows in results.csv, found $rows"
status_column=$(head -n1 "$csv" | tr ',' '\n' | grep -nx status | cut -d: -f1)
not_ok=$(tail -n +2 "$csv" | cut -d, -f"$status_column" | grep -cvx ok)
[ "$not_ok" -eq 0 ] || fail "$not_ok of the 4 points are not ok: $(cat "$csv")"
echo "PASSED: 4 points through a 2-task Slurm job array, merged"
