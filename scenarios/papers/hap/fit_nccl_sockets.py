#!/usr/bin/env python3
"""The per-step cost of NCCL's ring over the HAP testbed's 10.4 Gbps TCP network, fitted on HAP's own
profiled collective bandwidths (not on any iteration time of the paper).

  fit_nccl_sockets.py

Data: HAP's code (github ylxdzsw/hap, master.py from commit a72b045, 2023-05-24, unchanged through
7c73d02) passes the heterogeneous testbed's profile to its planner: all_gather_bandwidth 815,418,707,
all_reduce_bandwidth 476,774,816 and reduce_scatter_bandwidth 876,490,907 B/s. profiler.py
(BandwidthProfiler) measured each as the mean over S = 4, 16, 64 and 256 MiB of S / t(S), t the median
of 5 runs of torch.distributed's NCCL collective (PyTorch 1.13.1) with S the all-reduce buffer, the
all-gather output and the reduce-scatter input; its readme profiles them with `./run_all profiler.py 8`,
8 GPUs on each of the 8 machines: p = 64 ranks.

Model (docs/collectives.md, ring on uniform rounds; one ring over a shared NIC): all-gather and
reduce-scatter take (p − 1)(α + S/(p·B)), all-reduce 2(p − 1)(α + S/(p·B)), B the NIC's 10.4 Gbps
(iperf3 in the paper) and α the cost of one ring step. NCCL runs all-gather and reduce-scatter only as
rings; its all-reduce may take its tree at the smaller sizes, so α is fitted on all-gather and
reduce-scatter (least squares of the log ratio of the mean S/t) and the all-reduce is a check.
A bandwidth-only reading (α at the links' 23 µs, B fitted) fits the same two numbers; both are printed,
and the paper's 8-to-64-GPU scaling tells them apart (docs/spmd.md).

dnnsim's step on this testbed crosses PCIe (1 µs), the NIC, the switch (1 µs), the NIC and PCIe: the
NIC latency that gives α is (α − 3 µs) / 2.
"""
import math

SIZES = [s * 1024 * 1024 for s in (4, 16, 64, 256)]
LINE_RATE = 10.4e9 / 8  # B/s
RANKS = 64
PROFILE = {"all_gather": 815418707, "reduce_scatter": 876490907, "all_reduce": 476774816}
FIT_ON = ("all_gather", "reduce_scatter")
LINK_LATENCY = 23e-6  # the shipped route before the fit: 2 × 10 µs NIC + 2 × 1 µs PCIe + 1 µs switch


def rounds(kind, p=RANKS):
    return 2 * (p - 1) if kind == "all_reduce" else p - 1


def mean_bandwidth(kind, alpha, bandwidth, p=RANKS):
    r = rounds(kind, p)
    return sum(s / (r * (alpha + s / (p * bandwidth))) for s in SIZES) / len(SIZES)


def misfit(alpha, bandwidth):
    return sum(math.log(mean_bandwidth(k, alpha, bandwidth) / PROFILE[k]) ** 2 for k in FIT_ON)


def golden(f, lo, hi):
    """Minimum of a unimodal f on [lo, hi]."""
    g = (math.sqrt(5) - 1) / 2
    for _ in range(200):
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        lo, hi = (lo, b) if f(a) < f(b) else (a, hi)
    return (lo + hi) / 2


def main():
    alpha = golden(lambda a: misfit(a, LINE_RATE), 0.0, 1e-3)
    print(f"per-step cost α at {LINE_RATE * 8 / 1e9:.1f} Gbps: {alpha * 1e6:.1f} µs "
          f"(NIC latency {(alpha - 3e-6) / 2 * 1e6:.1f} µs)")
    for k in PROFILE:
        print(f"  {k}: model {mean_bandwidth(k, alpha, LINE_RATE) / 1e9:.3f} GB/s, profiled {PROFILE[k] / 1e9:.3f}")
    bandwidth = golden(lambda b: misfit(LINK_LATENCY, b), 1e8, LINE_RATE)
    print(f"bandwidth-only reading at α = {LINK_LATENCY * 1e6:.0f} µs: {bandwidth * 8 / 1e9:.2f} Gbps "
          f"({bandwidth / LINE_RATE:.2f} of the line rate)")
    for k in PROFILE:
        print(f"  {k}: model {mean_bandwidth(k, LINK_LATENCY, bandwidth) / 1e9:.3f} GB/s, profiled {PROFILE[k] / 1e9:.3f}")


if __name__ == "__main__":
    main()
