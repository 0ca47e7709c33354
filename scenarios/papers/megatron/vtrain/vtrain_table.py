#!/usr/bin/env python3
"""The 1,440 measured single-node Megatron-DeepSpeed runs of vTrain (Bang et al., MICRO'24;
/work/shared/data/megatron/vtrain/ground_truth_single.csv, MIT) against dnnsim, as one regression
table: mean and worst |error| overall and by parallelism mix (TP×PP×DP).

  vtrain_table.py DNNSIM [--csv FILE] [--every N] [--out DIR] [--set KEY=VALUE …]

Every row becomes a scenario (template.yaml.in next to this file: one DGX-A100-like node with as many
GPUs as the run used), run with `DNNSIM run`; --every N runs every N-th row only (a quick check).
Settings from vTrain's validation configs (README of the data): activation recomputation (full),
1F1B, fp16 mixed precision. Vocabulary 51,200 (GPT-2's BPE padded, as in Megatron's GPT runs) is
an assumption: the CSV does not give it. Progress goes to stderr.
"""
import argparse
import csv
import json
import os
import pathlib
import subprocess
import sys
from collections import defaultdict

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_CSV = HERE.parents[3].parent / "shared/data/megatron/vtrain/ground_truth_single.csv"  # ../shared beside the repo


def scenario(template, row):
    gpus, batch, micro, hidden, heads, layers, seq, tp, dp, pp = (int(row[k]) for k in range(10))
    micro_batches = batch // (dp * micro)
    return template.format(gpus=gpus, batch=batch, micro_batches=micro_batches, hidden=hidden, heads=heads,
                           layers=layers, seq=seq, tp=tp, pp=pp)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dnnsim")
    parser.add_argument("--csv", default=str(DEFAULT_CSV))
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--out", default="out/vtrain")
    parser.add_argument("--set", action="append", default=[])
    args = parser.parse_args()
    template = (HERE / "template.yaml.in").read_text()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(args.csv, newline="") as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
    rows = rows[:: args.every]
    by_mix = defaultdict(list)
    results = []
    for i, row in enumerate(rows):
        path = out / f"row{i:04d}.yaml"
        path.write_text(scenario(template, row))
        run_out = out / f"row{i:04d}"
        command = [args.dnnsim, "run", str(path), "--out", str(run_out)]
        for s in args.set:
            command += ["--set", s]
        done = subprocess.run(command, capture_output=True, text=True)
        measured = float(row[10]) / 1000
        gpus, batch, micro, hidden, heads, layers, seq, tp, dp, pp = (int(row[k]) for k in range(10))
        mix = f"TP{tp}×PP{pp}×DP{dp}"
        if done.returncode != 0:
            results.append((row, None, done.stderr.strip().splitlines()[-1:] or ["?"]))
            print(f"[{i + 1}/{len(rows)}] {mix}: failed: {done.stderr.strip()[-200:]}", file=sys.stderr)
            continue
        summary = json.loads((run_out / "summary.json").read_text())
        simulated = summary["mean"]["iteration_time_s"] if summary.get("status") == "ok" else None
        if simulated is None:
            results.append((row, None, [summary.get("status", "?")]))
            print(f"[{i + 1}/{len(rows)}] {mix}: {summary.get('status')}", file=sys.stderr)
            continue
        error = simulated / measured - 1
        by_mix[mix].append(error)
        results.append((row, simulated, []))
        print(f"[{i + 1}/{len(rows)}] {mix} h{hidden} l{layers} s{seq} B{batch} m{micro}: measured {measured:.3f} s, "
              f"simulated {simulated:.3f} s ({100 * error:+.1f}%)", file=sys.stderr)
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
    failed = [r for r in results if r[1] is None]
    if failed:
        print(f"\n{len(failed)} runs not simulated (first: {failed[0][0]}: {failed[0][2]})")


if __name__ == "__main__":
    main()
