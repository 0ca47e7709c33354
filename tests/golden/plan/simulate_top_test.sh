#!/bin/bash
# `dnnsim plan --simulate-top 3` on tests/golden/plan/tiny_megatron.yaml: it lists three candidates,
# fastest first, and each one's simulated time is what `dnnsim plan --candidate K --simulate` prints
# for it in a process of its own (the same command the children run), so the two paths agree.
# Usage: simulate_top_test.sh DNNSIM SCENARIO WORKDIR
set -euo pipefail
dnnsim=$1 scenario=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
"$dnnsim" plan "$scenario" --simulate-top 3 --jobs 2 --out "$work/top" > "$work/top.txt"
grep -E '^  candidate +[0-9]+: simulated' "$work/top.txt" > "$work/listed.txt"
[ "$(wc -l < "$work/listed.txt")" -eq 3 ] || { echo "expected 3 simulated candidates"; cat "$work/top.txt"; exit 1; }
previous=0
while read -r _ rank simulated_word value unit _; do
  rank=${rank%:}
  alone=$("$dnnsim" plan "$scenario" --candidate "$rank" --simulate | sed -n 's/^simulated iteration *\([^ ]* [^ ]*\) .*/\1/p')
  [ "$alone" = "$value ${unit%,}" ] || { echo "candidate $rank: listed $value ${unit%,}, alone $alone"; exit 1; }
  seconds=$(python3 -c "import json; print(json.load(open('$work/top/candidate-$rank/summary.json'))['mean']['iteration_time_s'])")
  python3 -c "import sys; sys.exit(0 if $seconds >= $previous else 1)" || { echo "not fastest first at candidate $rank"; exit 1; }
  previous=$seconds
done < "$work/listed.txt"
echo "3 candidates, fastest first, each equal to its own --candidate run"
