#!/usr/bin/env python3
"""vTrain's measured NCCL all-reduce times on one DGX A100 node (nccl-tests all_reduce_perf, 2–8 GPUs,
1 MiB … 1 GiB; data/megatron/vtrain/nccl-allreduce/a100/, MIT) beside dnnsim's collective model
(the default algorithm on the same node as vtrain_table.py's template, one all-reduce alone).

  nccl_table.py DNNSIM [--data DIR] [--out DIR] [--calibration FILE]
  nccl_table.py --fit [--data DIR]

Simulates the power-of-two sizes of each file (11 of its 1,024 rows), 2 to 8 GPUs, and prints measured
and simulated times (out-of-place column) at the powers of 4, and the mean |error| over the powers of
two per GPU count; the counts --fit does not use (3, 5, 6, 7) are a held-out check of the fitted α and
η, and their mean is printed apart. With --calibration the node's GPUs use that calibration table (its
`collectives` section).

--fit fits what dnnsim's ring all-reduce lacks to the same 33 points (2, 4, 8 GPUs × 1 MiB … 1 GiB),
by least squares on the relative error (the sizes span three decades; absolute residuals would let
1 GiB decide everything): a fixed latency α per call and the fraction η of the NVSwitch port bandwidth
B that the flows reach, in

  T(p, S) = α + 2(p − 1)·λ + 2(p − 1)/p · S / (η·B)

(docs/collectives.md, ring all-reduce on uniform links: 2(p − 1) steps, each crossing two NVSwitch ports
of λ/2 = 0.6 µs (catalog NVLink3 latency), the bytes S/p per step at η·B). T − 2(p − 1)λ is linear in
(α, 1/η), so the weighted least squares is a 2 × 2 solve. Prints α, η and every residual.
"""
import argparse
import csv
import json
import pathlib
import subprocess

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parents[3] / "data/megatron/vtrain/nccl-allreduce/a100"
NVSWITCH_PORT_BYTES_PER_S = 300e9  # catalog A100 NVLink bandwidth per direction (12 × NVLink3 at 25 GB/s)
STEP_LATENCY_S = 2 * 0.6e-6  # a ring step crosses two NVSwitch ports of the catalog NVLink3 latency
FIT_GPUS = (2, 4, 8)
ALL_GPUS = range(2, 9)  # the files of vTrain's table: one node, 2 to 8 GPUs

SCENARIO = """name: nccl-allreduce
cluster:
  node_types:
    dgx-a100: {{gpu: A100-80GB-SXM, gpus_per_node: {gpus}, fabric: nvswitch, nic: {{link: IB-HDR, per_gpu: true}}}}
  nodes: [{{type: dgx-a100, count: 1}}]
  interconnect: {{kind: switch, latency: "1us"}}
workload: {{kind: taskgraph, file: graph.json}}
outputs: {{trace: false, tasks_csv: false}}
"""


def measured_points(data, gpus):
    """(size bytes, out-of-place seconds) at the power-of-two sizes of allreduce-<gpus>gpu.csv."""
    with open(pathlib.Path(data) / f"allreduce-{gpus}gpu.csv", newline="") as f:
        rows = [r for r in csv.reader(f) if r and r[0].isdigit()]
    return [(int(r[0]), float(r[3]) * 1e-9) for r in rows if int(r[0]) & (int(r[0]) - 1) == 0]


def fit(data):
    """α (s) and η of the model in the docstring, and the residuals [(gpus, size, measured, model)]."""
    points = [(gpus, size, t) for gpus in FIT_GPUS for size, t in measured_points(data, gpus)]
    # Minimise Σ ((α + x/η − y) / T)² with y = T − 2(p−1)λ, x = 2(p−1)/p · S/B: normal equations in (α, 1/η).
    saa = sab = sbb = say = sby = 0.0
    for gpus, size, t in points:
        w = 1 / t ** 2
        x = 2 * (gpus - 1) / gpus * size / NVSWITCH_PORT_BYTES_PER_S
        y = t - 2 * (gpus - 1) * STEP_LATENCY_S
        saa, sab, sbb, say, sby = saa + w, sab + w * x, sbb + w * x * x, say + w * y, sby + w * x * y
    det = saa * sbb - sab * sab
    alpha = (say * sbb - sab * sby) / det
    inverse_eta = (saa * sby - sab * say) / det
    eta = 1 / inverse_eta
    residuals = [(gpus, size, t, alpha + 2 * (gpus - 1) * STEP_LATENCY_S +
                  2 * (gpus - 1) / gpus * size / (eta * NVSWITCH_PORT_BYTES_PER_S)) for gpus, size, t in points]
    return alpha, eta, residuals


def print_fit(data):
    alpha, eta, residuals = fit(data)
    print(f"alpha = {alpha * 1e6:.2f} us per call, eta = {eta:.4f} "
          f"(bus bandwidth {eta * NVSWITCH_PORT_BYTES_PER_S / 1e9:.1f} GB/s of {NVSWITCH_PORT_BYTES_PER_S / 1e9:.0f})")
    print("| GPUs | size | measured µs | model µs | error |")
    print("|---:|---:|---:|---:|---:|")
    for gpus, size, t, model in residuals:
        print(f"| {gpus} | {size / 2**20:g} MiB | {t * 1e6:.0f} | {model * 1e6:.0f} | {100 * (model / t - 1):+.1f}% |")
    errors = [abs(model / t - 1) for _, _, t, model in residuals]
    print(f"\nmean |error| {100 * sum(errors) / len(errors):.1f}%, worst {100 * max(errors):.1f}% over {len(errors)} points")


def simulate(dnnsim, out, gpus, size, calibration=None):
    names = [f"node0/gpu{g}" for g in range(gpus)]
    graph = {"format": "dnnsim-taskgraph", "version": 1, "devices": names, "streams": ["comm"],
             "tasks": [{"id": 0, "kind": "collective", "collective": "all_reduce", "group": names,
                        "size_bytes": size, "stream": "comm", "deps": []}]}
    folder = out / f"{gpus}-{size}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "graph.json").write_text(json.dumps(graph))
    text = SCENARIO.format(gpus=gpus)
    if calibration:
        text += f"calibration: {json.dumps(str(pathlib.Path(calibration).resolve()))}\n"
    (folder / "scenario.yaml").write_text(text)
    subprocess.run([dnnsim, "run", str(folder / "scenario.yaml"), "--out", str(folder / "out")], check=True,
                   capture_output=True)
    return json.loads((folder / "out" / "summary.json").read_text())["makespan_s"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dnnsim", nargs="?")
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--out", default="out/nccl")
    parser.add_argument("--calibration")
    parser.add_argument("--fit", action="store_true")
    args = parser.parse_args()
    if args.fit:
        print_fit(args.data)
        return
    if not args.dnnsim:
        parser.error("DNNSIM is needed unless --fit")
    out = pathlib.Path(args.out)
    print("| GPUs | size | measured µs | simulated µs | error |")
    print("|---:|---:|---:|---:|---:|")
    summary = []
    for gpus in ALL_GPUS:
        errors = []
        for size, measured in measured_points(args.data, gpus):
            simulated = simulate(args.dnnsim, out, gpus, size, args.calibration)
            errors.append(simulated / measured - 1)
            if (size.bit_length() - 1) % 2 == 0:
                print(f"| {gpus} | {size / 2**20:g} MiB | {measured * 1e6:.0f} | {simulated * 1e6:.0f} | "
                      f"{100 * errors[-1]:+.0f}% |")
        summary.append((gpus, len(errors), sum(map(abs, errors)) / len(errors), max(map(abs, errors))))
    print()
    for gpus, count, mean, worst in summary:
        role = "fitted" if gpus in FIT_GPUS else "held out"
        print(f"{gpus} GPUs ({role}): {count} sizes, mean |error| {100 * mean:.1f}%, worst {100 * worst:.1f}%")
    for role, chosen in (("fitted", [s for s in summary if s[0] in FIT_GPUS]),
                         ("held out", [s for s in summary if s[0] not in FIT_GPUS])):
        mean = sum(s[1] * s[2] for s in chosen) / sum(s[1] for s in chosen)
        print(f"{role} GPU counts: mean |error| {100 * mean:.1f}% over {sum(s[1] for s in chosen)} points, "
              f"worst {100 * max(s[3] for s in chosen):.1f}%")


if __name__ == "__main__":
    main()
