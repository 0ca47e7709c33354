#!/usr/bin/env python3
"""How well any model could fit vTrain's single-node runs without pipelines, if a larger micro-batch
never takes less time: a floor under the error of dnnsim's (or any) cost model, from the data alone.

  monotone_floor.py [--csv FILE] [--by mix|mix-hidden] [--simulated DIR]

A run without a pipeline (PP 1) takes T = M·f(b) + c: M micro-batches of b sequences each, one after
the other, then the gradient all-reduce and the optimizer step once (c). Within a family of runs that
differ only in global batch and micro-batch size (same TP, DP, hidden size, layers, sequence length),
f and c are whatever the hardware and framework make them. Two fits per family, by least squares on the
relative error (the times span two decades):

  free       f(b) any positive value per micro-batch size b, c ≥ 0: what the runs' own scatter leaves
             (the form itself, one time per micro-batch, holds to this);
  monotone   the same with f non-decreasing in b (weighted pool-adjacent-violators for each c on a
             0.25 ms grid): the best a model can do in which more work per micro-batch never takes
             less time, whatever its constants.

Prints the mean and worst |error| of both, by parallelism mix (or mix and hidden size). Where the
monotone fit is much worse than the free one, the measured runs take less time for more work: no cost
model that adds up work (FLOPs, bytes, launches) can follow them there.

--simulated DIR (the --out folder of `vtrain_table.py --half all`, its rowNNNN/summary.json) fits the
free form to dnnsim's times of the same runs too and prints, per family, the measured and simulated
time per micro-batch f(b) and per step c side by side: which of the two parts of the model errs, and
at which micro-batch size.
"""
import argparse
import collections
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from vtrain_table import DEFAULT_CSV, mix_of, read_rows  # noqa: E402

C_STEP_S = 0.25e-3
C_MAX_S = 0.2


def isotonic(values, weights):
    """Weighted least-squares non-decreasing fit (pool adjacent violators)."""
    blocks = []  # [value, weight, count]
    for v, w in zip(values, weights):
        blocks.append([v, w, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            v2, w2, n2 = blocks.pop()
            v1, w1, n1 = blocks.pop()
            blocks.append([(v1 * w1 + v2 * w2) / (w1 + w2), w1 + w2, n1 + n2])
    fitted = []
    for v, _, n in blocks:
        fitted += [v] * n
    return fitted


def fit(runs, monotone):
    """(relative errors, c, {b: f(b)}) of the best T = M·f(b) + c over the family's runs [(M, b, T seconds)]."""
    sizes = sorted({b for _, b, _ in runs})
    best = None
    for step in range(int(C_MAX_S / C_STEP_S) + 1):
        c = step * C_STEP_S
        if c >= min(t for _, _, t in runs):
            break
        # For fixed c each f(b) is a weighted mean: minimise Σ (a·f − r)² with a = M/T, r = 1 − c/T.
        targets, weights = [], []
        for b in sizes:
            a_r = [(m / t, 1 - c / t) for m, bb, t in runs if bb == b]
            weight = sum(a * a for a, _ in a_r)
            targets.append(sum(a * r for a, r in a_r) / weight)
            weights.append(weight)
        f = isotonic(targets, weights) if monotone else targets
        of = dict(zip(sizes, f))
        errors = [(m * of[b] + c) / t - 1 for m, b, t in runs]
        score = sum(e * e for e in errors)
        if best is None or score < best[0]:
            best = (score, errors, c, of)
    return best[1:]


def print_parts(families, simulated):
    """Per family, measured vs simulated f(b) (ms per micro-batch) and c (ms per step), free fits."""
    print("| family | c measured / simulated | f(b) measured / simulated, ms per micro-batch |")
    print("|---|---|---|")
    for family in sorted(families):
        _, c_measured, f_measured = fit(families[family], monotone=False)
        _, c_simulated, f_simulated = fit(simulated[family], monotone=False)
        parts = ", ".join(f"b {b}: {1e3 * f_measured[b]:.1f} / {1e3 * f_simulated[b]:.1f} "
                          f"({100 * (f_simulated[b] / f_measured[b] - 1):+.0f}%)" for b in sorted(f_measured))
        mix, hidden, layers, seq = family
        print(f"| {mix} h{hidden} l{layers} s{seq} | {1e3 * c_measured:.1f} / {1e3 * c_simulated:.1f} | {parts} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--csv", default=str(DEFAULT_CSV))
    parser.add_argument("--by", choices=["mix", "mix-hidden"], default="mix")
    parser.add_argument("--simulated")
    args = parser.parse_args()
    families = collections.defaultdict(list)
    simulated = collections.defaultdict(list)
    for index, row in enumerate(read_rows(args.csv)):
        gpus, batch, micro, hidden, heads, layers, seq, tp, dp, pp = (int(row[k]) for k in range(10))
        if pp != 1:
            continue
        family = (mix_of(row), hidden, layers, seq)
        families[family].append((batch // (dp * micro), micro, float(row[10]) / 1e3))
        if args.simulated:
            summary = json.loads((pathlib.Path(args.simulated) / f"row{index:04d}" / "summary.json").read_text())
            simulated[family].append((batch // (dp * micro), micro, summary["mean"]["iteration_time_s"]))
    if args.simulated:
        print_parts(families, simulated)
        return
    groups = collections.defaultdict(lambda: ([], []))
    for (mix, hidden, _, _), runs in families.items():
        key = mix if args.by == "mix" else f"{mix} h{hidden}"
        groups[key][0].extend(fit(runs, monotone=False)[0])
        groups[key][1].extend(fit(runs, monotone=True)[0])
    def row(label, free, monotone):
        cells = " | ".join(f"{100 * sum(map(abs, e)) / len(e):.1f}% | {100 * max(map(abs, e)):.1f}%"
                           for e in (free, monotone))
        print(f"| {label} | {len(free)} | {cells} |")

    print("| group | runs | free fit: mean |error| | worst | monotone fit: mean |error| | worst |")
    print("|---|---:|---:|---:|---:|---:|")
    for key in sorted(groups):
        row(key, *groups[key])
    row("all PP 1", *(sum((groups[key][i] for key in groups), []) for i in (0, 1)))


if __name__ == "__main__":
    main()
