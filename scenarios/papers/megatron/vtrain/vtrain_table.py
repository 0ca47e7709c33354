#!/usr/bin/env python3
"""vTrain's measured Megatron-DeepSpeed runs (Bang et al., MICRO'24, MIT) against dnnsim, as one
regression table: mean and worst |error| overall and by parallelism mix (TP×PP×DP) or by model.
`--table single`: the 1,440 single-node runs (data/megatron/vtrain/ground_truth_single.csv,
2–8 GPUs, hidden 1,024–2,048); `--table multi`: the 109 multi-node runs
(data/megatron/vtrain/ground_truth_multi.csv, 64–512 GPUs, hidden 3,072–12,288).

  vtrain_table.py DNNSIM [--table single|multi] [--csv FILE] [--half all|fit|held-out] [--every N]
                  [--calibration FILE|shipped] [--jobs N] [--out DIR] [--set KEY=VALUE …]
                  [--mix TP1×PP4×DP1 …] [--by mix|model|micro-batches|micro-batch-size|layers|hidden]

Every row becomes a scenario (template.yaml.in next to this file: DGX-A100-like nodes of 8 GPUs, or one
node with as many GPUs as a single-node run used; 800 Gb/s per node between nodes), run with
`DNNSIM run`. --half picks the rows of the deterministic split that
fit_calibration.py uses (fit: even row index of the CSV, held-out: odd); --every N then runs every N-th
row of those only (a quick check). --calibration is the A100 table the runs use: by default the one
fitted on these runs and vTrain's NCCL tables (data/calibration/megatron/A100-80GB-SXM.yaml),
`shipped` for the general one of data/calibration/. --mix runs only the rows of the named
parallelism mixes (before --every), --by groups the printed table otherwise than by mix (single) or
model (multi). Settings from vTrain's validation configs
(README of the data): activation recomputation (full), 1F1B, fp16 mixed precision. Vocabulary 51,200
(GPT-2's BPE padded, as in Megatron's GPT runs) is an assumption: the CSV does not give it. The
data-parallel all-reduce: after the backward pass for the multi-node runs (vTrain's configs: no
gradient buckets); bucketed and overlapped (the pipeline default) for the single-node runs, as the
Megatron table was fitted on them, although vTrain's configs say no buckets there too (a difference
left: docs/megatron.md). Progress goes to stderr.
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
DEFAULT_CSV = HERE.parents[3] / "data/megatron/vtrain/ground_truth_single.csv"
MULTI_CSV = HERE.parents[3] / "data/megatron/vtrain/ground_truth_multi.csv"
MEGATRON_CALIBRATION = HERE.parents[3] / "data/calibration/megatron/A100-80GB-SXM.yaml"
NODE_SIZE = 8  # GPUs per node in vTrain's multi-node configs
# The columns a row is read into, by the names of the CSV header (the multi-node table has a parameter
# count before them).
COLUMNS = ["# GPUs", "global batch", "micro batch", "hidden size", "attention heads", "# layers",
           "sequence length", "tensor parallelism", "data parallelism", "pipeline parallelism",
           "iteration time (ms)"]


def read_rows(path):
    """The CSV's data rows, in file order (the index the fit/held-out split uses), as COLUMNS."""
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        order = [header.index(column) for column in COLUMNS]
        return [[r[k] for k in order] for r in reader if r]


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


def model_of(row):
    return f"hidden {row[3]}, {row[5]} layers"


# What --by groups the table by (the column's heading, the group of a row). Micro-batches: M per
# replica, global batch / (DP x micro-batch size).
GROUPS = {
    "mix": ("mix", mix_of),
    "model": ("model", model_of),
    "micro-batches": ("micro-batches", lambda row: f"M = {int(row[1]) // (int(row[8]) * int(row[2])):>3}"),
    "micro-batch-size": ("micro-batch size", lambda row: f"{int(row[2]):>2}"),
    "layers": ("layers", lambda row: f"{int(row[5]):>3}"),
    "hidden": ("hidden", lambda row: f"{int(row[3]):>5}"),
}


def scenario(template, row, calibration, overlap):
    gpus, batch, micro, hidden, heads, layers, seq, tp, dp, pp = (int(row[k]) for k in range(10))
    micro_batches = batch // (dp * micro)
    nodes, gpus_per_node = (1, gpus) if gpus <= NODE_SIZE else (gpus // NODE_SIZE, NODE_SIZE)
    return template.format(nodes=nodes, gpus_per_node=gpus_per_node, batch=batch, micro_batches=micro_batches,
                           hidden=hidden, heads=heads, layers=layers, seq=seq, tp=tp, pp=pp,
                           calibration=calibration, overlap="true" if overlap else "false")


def calibration_value(calibration):
    """The template's `calibration:` value: `shipped`, or a file as an absolute, quoted path."""
    if calibration == "shipped":
        return "shipped"
    return json.dumps(str(pathlib.Path(calibration).resolve()))


def simulate(dnnsim, template, index, row, out, calibration, settings=(), overlap=True):
    """Simulated iteration time in seconds of CSV row `index`, or (None, why)."""
    path = out / f"row{index:04d}.yaml"
    path.write_text(scenario(template, row, calibration_value(calibration), overlap))
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


def run_rows(dnnsim, indexed_rows, out, calibration, jobs=1, settings=(), progress=True, overlap=True):
    """Simulates (index, row) pairs, `jobs` at a time; returns [(index, row, simulated s or None, why)].
    `overlap`: the data-parallel all-reduce bucketed and overlapped with the backward pass."""
    template = (HERE / "template.yaml.in").read_text()
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(simulate, dnnsim, template, i, row, out, calibration, settings, overlap)
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


def print_table(results, by="mix"):
    heading, group_of = GROUPS[by]
    by_mix = defaultdict(list)
    for _, row, simulated, _ in results:
        if simulated is not None:
            by_mix[group_of(row)].append(simulated / (float(row[10]) / 1000) - 1)
    everything = [e for errors in by_mix.values() for e in errors]
    print(f"| {heading} | runs | mean |error| | worst |error| | mean signed error |")
    print("|---|---:|---:|---:|---:|")
    for mix in sorted(by_mix):
        e = by_mix[mix]
        print(f"| {mix} | {len(e)} | {100 * sum(map(abs, e)) / len(e):.1f}% | {100 * max(map(abs, e)):.1f}% | "
              f"{100 * sum(e) / len(e):+.1f}% |")
    if everything:
        print(f"| all | {len(everything)} | {100 * sum(map(abs, everything)) / len(everything):.1f}% | "
              f"{100 * max(map(abs, everything)):.1f}% | {100 * sum(everything) / len(everything):+.1f}% |")
    if everything:  # to the digits the calibration's keeping rule compares (docs/megatron.md)
        print(f"\nmean |error| {100 * sum(map(abs, everything)) / len(everything):.3f}% over {len(everything)} runs")
    failed = [r for r in results if r[2] is None]
    if failed:
        print(f"\n{len(failed)} runs not simulated (first: row {failed[0][0]}: {failed[0][3]})")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dnnsim")
    parser.add_argument("--table", choices=["single", "multi"], default="single")
    parser.add_argument("--csv", help="default: the --table's CSV")
    parser.add_argument("--half", choices=["all", "fit", "held-out"], default="all")
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--calibration", default=str(MEGATRON_CALIBRATION))
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", default="out/vtrain")
    parser.add_argument("--set", action="append", default=[])
    parser.add_argument("--by", choices=sorted(GROUPS), help="group the table by (default: mix; model for --table multi)")
    parser.add_argument("--mix", action="append", default=[],
                        help="run only the rows of this parallelism mix, e.g. TP1×PP4×DP1 (repeatable)")
    args = parser.parse_args()
    multi = args.table == "multi"
    rows = half(read_rows(args.csv or (MULTI_CSV if multi else DEFAULT_CSV)), args.half)
    if args.mix:
        rows = [(i, row) for i, row in rows if mix_of(row) in args.mix]
    rows = rows[:: args.every]
    results = run_rows(args.dnnsim, rows, args.out, args.calibration, args.jobs, args.set, overlap=not multi)
    print_table(results, args.by or ("model" if multi else "mix"))


if __name__ == "__main__":
    main()
