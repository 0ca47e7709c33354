#!/usr/bin/env python3
"""The 1,440 measured single-node Megatron-DeepSpeed runs of vTrain (Bang et al., MICRO'24;
/work/shared/data/megatron/vtrain/ground_truth_single.csv, MIT) against dnnsim, as one regression
table: mean and worst |error| overall and by parallelism mix (TP×PP×DP).

  vtrain_table.py DNNSIM [--csv FILE] [--half all|fit|held-out] [--every N] [--calibration FILE|shipped]
                  [--jobs N] [--out DIR] [--set KEY=VALUE …]

Every row becomes a scenario (template.yaml.in next to this file: one DGX-A100-like node with as many
GPUs as the run used), run with `DNNSIM run`. --half picks the rows of the deterministic split that
fit_calibration.py uses (fit: even row index of the CSV, held-out: odd); --every N then runs every N-th
row of those only (a quick check). --calibration is the A100 table the runs use: by default the one
fitted on these runs and vTrain's NCCL tables (data/calibration/megatron/A100-80GB-SXM.yaml),
`shipped` for the general one of data/calibration/. Settings from vTrain's validation configs
(README of the data): activation recomputation (full), 1F1B, fp16 mixed precision. Vocabulary 51,200
(GPT-2's BPE padded, as in Megatron's GPT runs) is an assumption: the CSV does not give it. Progress
goes to stderr.
"""
import argparse
import concurrent.futures
import csv
import json
import pathlib
import subprocess
import sys
from collections import defaultdict

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_CSV = HERE.parents[3].parent / "shared/data/megatron/vtrain/ground_truth_single.csv"  # ../shared beside the repo
MEGATRON_CALIBRATION = HERE.parents[3] / "data/calibration/megatron/A100-80GB-SXM.yaml"


def read_rows(path):
    """The CSV's data rows, in file order (the index the fit/held-out split uses)."""
    with open(path, newline="") as f:
        return [r for r in csv.reader(f) if r and not r[0].startswith("#")]


def half(rows, which):
    """Deterministic split: fit = even indices, held-out = odd, all = every row; (index, row) pairs."""
    indexed = list(enumerate(rows))
    if which == "fit":
        return indexed[0::2]
    if which == "held-out":
        return indexed[1::2]
    return indexed


def mix_of(row):
    tp, dp, pp = int(row[7]), int(row[8]), int(row[9])
    return f"TP{tp}×PP{pp}×DP{dp}"


def scenario(template, row, calibration):
    gpus, batch, micro, hidden, heads, layers, seq, tp, dp, pp = (int(row[k]) for k in range(10))
    micro_batches = batch // (dp * micro)
    return template.format(gpus=gpus, batch=batch, micro_batches=micro_batches, hidden=hidden, heads=heads,
                           layers=layers, seq=seq, tp=tp, pp=pp, calibration=calibration)


def calibration_value(calibration):
    """The template's `calibration:` value: `shipped`, or a file as an absolute, quoted path."""
    if calibration == "shipped":
        return "shipped"
    return json.dumps(str(pathlib.Path(calibration).resolve()))


def simulate(dnnsim, template, index, row, out, calibration, settings=()):
    """Simulated iteration time in seconds of CSV row `index`, or (None, why)."""
    path = out / f"row{index:04d}.yaml"
    path.write_text(scenario(template, row, calibration_value(calibration)))
    run_out = out / f"row{index:04d}"
    command = [dnnsim, "run", str(path), "--out", str(run_out)]
    for s in settings:
        command += ["--set", s]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        return None, (done.stderr.strip().splitlines()[-1:] or ["?"])[0]
    summary = json.loads((run_out / "summary.json").read_text())
    if summary.get("status") != "ok":
        return None, summary.get("status", "?")
    return summary["mean"]["iteration_time_s"], ""


def run_rows(dnnsim, indexed_rows, out, calibration, jobs=1, settings=(), progress=True):
    """Simulates (index, row) pairs, `jobs` at a time; returns [(index, row, simulated s or None, why)]."""
    template = (HERE / "template.yaml.in").read_text()
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(simulate, dnnsim, template, i, row, out, calibration, settings)
                   for i, row in indexed_rows]
        for n, ((i, row), future) in enumerate(zip(indexed_rows, futures)):
            simulated, why = future.result()
            results.append((i, row, simulated, why))
            if progress:
                measured = float(row[10]) / 1000
                text = (f"simulated {simulated:.3f} s ({100 * (simulated / measured - 1):+.1f}%)" if simulated
                        else f"not simulated: {why[-200:]}")
                print(f"[{n + 1}/{len(indexed_rows)}] row {i} {mix_of(row)} h{row[3]} l{row[5]} s{row[6]} "
                      f"B{row[1]} m{row[2]}: measured {measured:.3f} s, {text}", file=sys.stderr)
    return results


def print_table(results):
    by_mix = defaultdict(list)
    for _, row, simulated, _ in results:
        if simulated is not None:
            by_mix[mix_of(row)].append(simulated / (float(row[10]) / 1000) - 1)
    everything = [e for errors in by_mix.values() for e in errors]
    print("| mix | runs | mean |error| | worst |error| | mean signed error |")
    print("|---|---:|---:|---:|---:|")
    for mix in sorted(by_mix):
        e = by_mix[mix]
        print(f"| {mix} | {len(e)} | {100 * sum(map(abs, e)) / len(e):.1f}% | {100 * max(map(abs, e)):.1f}% | "
              f"{100 * sum(e) / len(e):+.1f}% |")
    if everything:
        print(f"| all | {len(everything)} | {100 * sum(map(abs, everything)) / len(everything):.1f}% | "
              f"{100 * max(map(abs, everything)):.1f}% | {100 * sum(everything) / len(everything):+.1f}% |")
    failed = [r for r in results if r[2] is None]
    if failed:
        print(f"\n{len(failed)} runs not simulated (first: row {failed[0][0]}: {failed[0][3]})")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dnnsim")
    parser.add_argument("--csv", default=str(DEFAULT_CSV))
    parser.add_argument("--half", choices=["all", "fit", "held-out"], default="all")
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--calibration", default=str(MEGATRON_CALIBRATION))
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", default="out/vtrain")
    parser.add_argument("--set", action="append", default=[])
    args = parser.parse_args()
    rows = half(read_rows(args.csv), args.half)[:: args.every]
    print_table(run_rows(args.dnnsim, rows, args.out, args.calibration, args.jobs, args.set))


if __name__ == "__main__":
    main()
