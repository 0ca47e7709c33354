#!/usr/bin/env python3
"""vTrain's measured NCCL all-reduce times on one DGX A100 node (nccl-tests all_reduce_perf, 2–8 GPUs,
1 MiB … 1 GiB; shared/data/megatron/vtrain/nccl-allreduce/a100/, MIT) beside dnnsim's collective model
(the default algorithm on the same node as vtrain_table.py's template, one all-reduce alone).

  nccl_table.py DNNSIM [--data DIR] [--out DIR]

Simulates the power-of-two sizes of each file (11 of its 1,024 rows) and prints measured and simulated
times (out-of-place column) at the powers of 4, and the mean |error| over the powers of two.
"""
import argparse
import csv
import json
import pathlib
import subprocess

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parents[3].parent / "shared/data/megatron/vtrain/nccl-allreduce/a100"  # ../shared beside the repo

SCENARIO = """name: nccl-allreduce
cluster:
  node_types:
    dgx-a100: {{gpu: A100-80GB-SXM, gpus_per_node: {gpus}, fabric: nvswitch, nic: {{link: IB-HDR, per_gpu: true}}}}
  nodes: [{{type: dgx-a100, count: 1}}]
  interconnect: {{kind: switch, latency: "1us"}}
workload: {{kind: taskgraph, file: graph.json}}
outputs: {{trace: false, tasks_csv: false}}
"""


def simulate(dnnsim, out, gpus, size):
    names = [f"node0/gpu{g}" for g in range(gpus)]
    graph = {"format": "dnnsim-taskgraph", "version": 1, "devices": names, "streams": ["comm"],
             "tasks": [{"id": 0, "kind": "collective", "collective": "all_reduce", "group": names,
                        "size_bytes": size, "stream": "comm", "deps": []}]}
    folder = out / f"{gpus}-{size}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "graph.json").write_text(json.dumps(graph))
    (folder / "scenario.yaml").write_text(SCENARIO.format(gpus=gpus))
    subprocess.run([dnnsim, "run", str(folder / "scenario.yaml"), "--out", str(folder / "out")], check=True,
                   capture_output=True)
    return json.loads((folder / "out" / "summary.json").read_text())["makespan_s"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dnnsim")
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--out", default="out/nccl")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    print("| GPUs | size | measured µs | simulated µs | error |")
    print("|---:|---:|---:|---:|---:|")
    summary = []
    for gpus in (2, 4, 8):
        with open(pathlib.Path(args.data) / f"allreduce-{gpus}gpu.csv", newline="") as f:
            rows = [r for r in csv.reader(f) if r and r[0].isdigit()]
        errors = []
        for row in rows:
            size, measured = int(row[0]), float(row[3]) * 1e-9
            if size & (size - 1) != 0:
                continue
            simulated = simulate(args.dnnsim, out, gpus, size)
            errors.append(simulated / measured - 1)
            if size & (size - 1) == 0 and (size.bit_length() - 1) % 2 == 0:
                print(f"| {gpus} | {size / 2**20:g} MiB | {measured * 1e6:.0f} | {simulated * 1e6:.0f} | "
                      f"{100 * errors[-1]:+.0f}% |")
        summary.append((gpus, len(errors), sum(map(abs, errors)) / len(errors), max(map(abs, errors))))
    print()
    for gpus, count, mean, worst in summary:
        print(f"{gpus} GPUs: {count} sizes, mean |error| {100 * mean:.1f}%, worst {100 * worst:.1f}%")


if __name__ == "__main__":
    main()
