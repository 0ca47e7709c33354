# Sourced by the end-to-end scripts that check many things in one run (regress_test.sh,
# sweep_test.sh): a failed check is counted, not fatal, so one run lists every broken expectation;
# `finish WHAT` then exits 1 if any failed.
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

finish() {
  if [ $failures -gt 0 ]; then
    echo "$failures check(s) failed" >&2
    exit 1
  fi
  echo "all $1 checks passed"
}
