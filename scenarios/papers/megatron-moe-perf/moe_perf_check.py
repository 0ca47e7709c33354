#!/usr/bin/env python3
"""One MoE layer against Megatron-LM's moe_perf golden values (DGX-H100, EP 8, BF16, alltoall).

  moe_perf_check.py [--dnnsim PATH] [--max-error PERCENT]   (exit 1 when an error exceeds PERCENT)

The test (NVIDIA/Megatron-LM: Megatron-LM/tests/functional_tests/test_cases/common/moe_perf/, baseline.json) times
MoELayer's forward and its backward with CUDA events on rank 0: router, permutation, the EP all-to-alls,
the grouped expert GEMMs and the un-permutation; no norm, no attention, no gradient all-reduce.

dnnsim runs a whole model, whose stage forward is one task, so the layer is isolated by differences of
runs of this folder's scenarios, each a single stage with `moe.overlap` off (everything on rank 0's
compute stream in series):

  MoE layer = [block(L=2) - block(L=1)]  of the MoE model
            - [block(L=2) - block(L=1)]  of the same model with a dense MLP of width 1 in place of the MoE

where a run's forward (backward) is the sum of rank 0's forward (backward) compute tasks and its EP
all-to-alls. The first difference is one transformer block (attention + norm + MoE + residual), the
second one block without the MoE (attention + norm + two 1-wide GEMMs + residual): what is left is the
MoE's router, dispatch, experts, combine and its all-to-alls. Nothing is fitted: this is held-out data.
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))

# baseline.json of Megatron-LM's moe_perf (recorded 2025-12-17, commit cf39a4d; read at d98e8a64).
CASES = [
    ("mixtral-proxy-a2a-bf16.yaml", "mixtral_a2a_tp1ep8_bf16", 4.32688798904419, 7.684332823753357),
    ("deepseek-proxy-a2a-bf16.yaml", "deepseek_a2a_tp1ep8_bf16", 7.119169592857361, 10.482670497894286),
]

DENSE = ["~workload.model.llm.experts", "~workload.model.llm.top_k", "~workload.model.llm.expert_ffn",
         "workload.model.llm.ffn=1", "~workload.expert_parallel", "~workload.moe"]


def passes(dnnsim, scenario, overrides):
    """Rank 0's forward and backward time (s): compute tasks and EP all-to-alls of each phase."""
    with tempfile.TemporaryDirectory() as out:
        command = [dnnsim, "run", scenario, "--out", out]
        for o in overrides:
            command += ["--set", o]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        forward = backward = 0.0
        seen = set()  # an EP all-to-all is one task per source GPU, all started together
        with open(os.path.join(out, "tasks.csv"), newline="") as f:
            for row in csv.DictReader(f):
                label = row["label"]
                on_rank0 = row["devices"] == "node0/gpu0" and row["kind"] == "compute"
                all_to_all = row["kind"] == "all_to_all" and label.startswith("ep all-to-all")
                if not (on_rank0 or all_to_all):
                    continue
                if all_to_all:  # counted once: the parts run side by side, as long as each other
                    if (label, row["start_s"]) in seen:
                        continue
                    seen.add((label, row["start_s"]))
                if row["phase"] == "forward" or label.startswith("ep all-to-all fwd"):
                    forward += float(row["duration_s"])
                elif row["phase"] == "backward" or label.startswith("ep all-to-all bwd"):
                    backward += float(row["duration_s"])
        return forward, backward


def block(dnnsim, scenario, extra):
    one = passes(dnnsim, scenario, extra + ["workload.model.llm.layers=1"])
    two = passes(dnnsim, scenario, extra + ["workload.model.llm.layers=2"])
    return two[0] - one[0], two[1] - one[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dnnsim", default=os.path.join(ROOT, "build", "release", "sim", "dnnsim"))
    parser.add_argument("--max-error", type=float, default=None, help="fail beyond this error (%%)")
    args = parser.parse_args()
    worst = 0.0
    print(f"{'case':28} {'fwd ms':>8} {'golden':>8} {'error':>8}   {'bwd ms':>8} {'golden':>8} {'error':>8}")
    for name, case, golden_fwd, golden_bwd in CASES:
        print(f"{case} ...", end="\r", file=sys.stderr, flush=True)
        scenario = os.path.join(HERE, name)
        moe = block(args.dnnsim, scenario, [])
        dense = block(args.dnnsim, scenario, DENSE)
        fwd, bwd = (moe[0] - dense[0]) * 1e3, (moe[1] - dense[1]) * 1e3
        errors = (100 * (fwd / golden_fwd - 1), 100 * (bwd / golden_bwd - 1))
        worst = max(worst, *(abs(e) for e in errors))
        print(f"{case:28} {fwd:8.3f} {golden_fwd:8.3f} {errors[0]:+7.1f}%"
              f"   {bwd:8.3f} {golden_bwd:8.3f} {errors[1]:+7.1f}%")
    if args.max_error is not None and worst > args.max_error:
        sys.exit(f"largest error {worst:.1f}% exceeds {args.max_error}%")


if __name__ == "__main__":
    main()
