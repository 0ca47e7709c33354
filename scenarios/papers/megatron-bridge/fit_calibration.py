#!/usr/bin/env python3
"""Calibration tables for H100, H200, B200, B300, GB200 and GB300 fitted on measured kernel tables only (XLA's, FA3's, cuDNN's, MSMF/MAMF).

    fit_calibration.py check   prints the held-out checks (GEMM shapes, collectives) and exits 1 if a table
                               on disk differs from what `write` would write
    fit_calibration.py write   writes data/calibration/llm/{H100-SXM,H200,B200,B300,GB200,GB300}.yaml

Data (data/gpu-perf/xla/README.md): XLA's default_matmul_perf_table (tensorflow/tensorflow 3ddd179,
Apache-2.0), measured GEMM throughput of b independent (m x k)(k x n) products, b in {1, 2, 4}, m, n, k in
{256, ..., 4096}, on H100 (sm_90) and B200 (sm_100); and the transcribed part of its collective table.

GEMMs (docs/calibration.md, "GEMM shape grids"). The efficiency of a GEMM is its measured FLOP/s over the
GPU's dense peak. A batched product of b GEMMs of m rows has the tiles, the parallelism and the work of one
GEMM of b*m rows (what a GPU's efficiency depends on beyond a wave of tiles), so the b = 2 and b = 4 entries
at m = 4,096 extend the m axis to 8,192 and 16,384: the grid is m in {256 ... 16,384} x n, k in
{256 ... 4,096}, constant above its ends and below them the power law of its first cell (an MoE expert's
GEMM has fewer rows than 256; calibration.cpp), checked on the table itself by `below_grid`. FIT: every other axis point, m in {256, 1024, 4096, 16384} and
n, k in {256, 1024, 4096}; HELD OUT: every shape with a dimension in {512, 2048, 8192}, predicted by the
grid's multilinear interpolation in log m, log n, log k (compute_cost.hpp) from the fit points alone. The
tables ship the fit grid.

  - H100 FP8: 29 of the sm_90 FP8 entries exceed the H100's dense FP8 peak (the table's README), so they
    are not used. The H100 FP8 grid is the H100 BF16 grid times B200's FP8/BF16 efficiency ratio at the
    same shape (the same table's measurements of the same kernels one generation on): an assumption.
  - H200 (not in the table): H100's grids against its own (equal) peaks and its 4.8 TB/s HBM, the same
    GH100 die and 700 W limit: an assumption.
  - B300, GB200 and GB300 (not in the table): B200's grids, read against their own datasheet peaks (the
    same Blackwell kernels; GB200's 1,200 W and GB300's 1,400 W hold higher clocks, which their peaks carry;
    B300's dense BF16/FP8 peaks are B200's): an assumption.

MXFP8 (Blackwell only): the block-scaled GEMM kernels run on the FP8 tensor cores, but not at the per-tensor FP8
kernels' speed. Transformer Engine's GEMM profiling tutorial (data/gpu-perf/te-gemm/) times a layer's twelve GEMMs
(15,872 tokens, hidden 4,096, intermediate 16,384) on B300 with the operands quantized before the timed loop: FP8
current scaling 6.812 ms, MXFP8 7.162 ms (forward 2.158 / 2.365, data gradient 2.329 / 2.397, weight gradient
2.325 / 2.400). The Blackwell tables' mxfp8 grid and curve are their fp8 ones times that layer's ratio, 0.9511
(one ratio for the three passes: the grids are per shape, not per pass); the quantization kernels are priced apart
(models/dnn/precision_recipe.hpp). Measured on B300 and read by B200, GB200 and GB300 too: an assumption.

A GEMM that is not one product of known shape (the attention core's two) reads a FLOPs curve: the median
efficiency of the measured entries within a quarter decade of each size (5 points per decade).

The attention core (FlashAttention; the XLA tables have no attention kernel): Transformer Engine runs it as
cuDNN's fused attention. An `attention` curve for every task (causal), a `mask: none` one for forward work over
keys seen whole (a CP ring's off-diagonal steps, all_gather's earlier key chunks) and a `pass: backward` one,
each point one head over one sequence (the benchmark's FLOPs over its heads x batch: a fused attention's rate
follows the keys each tile sweeps, not how many heads share the launch; docs/calibration.md, "Attention") at its
measured fraction of the BF16 peak, held at the running maximum.
  - H100 and H200: cuDNN on H100 as the FlashAttention-3 paper reports it (data/gpu-perf/flash-attention/,
    arXiv:2407.08608 Fig. 5 forward with and without the causal mask, Fig. 6 backward without it).
  - Blackwell: cuDNN 9.13 (the 25.11 container's cuDNN is 9.13.1) measured on B200 (read by B200 and GB200, the
    same die) and on GB300 (read by GB300 and B300, the same Blackwell Ultra die), causal forward and backward
    (data/gpu-perf/cudnn-sdpa/). That harness times each call with the host's dispatch in it (0.10-0.16 ms at
    512 tokens), so it is read from SDPA_FROM = 4,096 tokens on (at most 16% of a call); below, the H100
    measurement's fall-off from there, and without the mask the causal curve times H100's unmasked / causal
    ratio at the same length: assumptions.
Head dims other than 128 (GPT-OSS 64, DeepSeek-V3's MLA 192/128) read the same curves at their own FLOPs.

Sustained compute (docs/calibration.md, `sustained_compute`): XLA's entries are burst measurements (its best
H100 BF16, B200 BF16 and B200 FP8 rates are 96-101% of the same GPUs' MAMF in data/gpu-perf/mamf/, 107-118% of
their MSMF), while a training step runs its GEMMs back to back at the GPU's power limit. Each table's math rates
are scaled by MSMF / MAMF measured on the same GPU in the same run (the mean of its BF16 and FP8 ratios, which
differ by < 0.5%): H100 from H200's (the same GH100 die, SM count, clocks and 700 W limit; H100 has no MSMF
measurement: an assumption), H200 from H200's, B200 from B200's, B300 from B300's (the file's "earlier
benchmark version", measured without busy siblings), GB200 and GB300 from B200's (the same Blackwell die; no
MSMF measurement of them: an assumption).

Memory-bound kernels: no measurement in the XLA tables. t = 5 us + bytes / (0.88 x HBM bandwidth), the
fraction measured on V100 and A100 (data/calibration/V100-*.yaml, A100-*.yaml): an assumption.

Collectives inside a node (docs/calibration.md, "Collectives"): XLA's throughput is the collective's
buffer (the larger of its operand and result: the all-gather's output, the reduce-scatter's input)
over its time; ring time T = alpha + rounds * lambda + factor * S / (eta * B), factor 2(p-1)/p
(all-reduce) or (p-1)/p (all-gather, reduce-scatter), B the GPU's NVLink bandwidth per direction,
lambda two ports' link latency (1.2 us). (alpha, eta): weighted least squares of the relative error on
the entries of 8-GPU groups' sections that were transcribed (sm_100 for B200; the file's last, 8-device
section, presumed sm_90, for H100), every group size; fit on even entries, checked on odd ones.

Communication beside computation (docs/calibration.md, `compute_share`): the tables above time each kernel
alone, but an NCCL kernel holds SMs while it runs, and a GEMM beside it on another stream runs on the rest.
Kumar et al. (arXiv:2507.03114, "Characterizing Compute-Communication Overlap in GPU-Accelerated Distributed
Deep Learning") measured computation overlapped with communication on A100, H100, MI250 and MI210 (GPT and
Llama training on 4 GPUs) OVERLAP_SLOWDOWN = 18.9% slower on average than the same computation alone (40.0% at
most). A share f of the GPU taken for the communication's duration slows what runs beside it by 1/(1 - f), so
f = 1 - 1/1.189 = 0.159 in every table: measured on H100 (and H200, the same die); an assumption for Blackwell,
which the paper did not measure. Nothing here looks at Megatron-Bridge's throughput rows.
"""
import csv
import math
import pathlib
import statistics
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
XLA = ROOT / "data" / "gpu-perf" / "xla"
FLASH = ROOT / "data" / "gpu-perf" / "flash-attention"
MAMF = ROOT / "data" / "gpu-perf" / "mamf"
TE_GEMM = ROOT / "data" / "gpu-perf" / "te-gemm"
OUT = ROOT / "data" / "calibration" / "llm"

BF16, FP8 = "bf16xbf16->bf16", "f8e4m3fnxf8e4m3fn->bf16"
AXIS = [256, 512, 1024, 2048, 4096]
M_AXIS = AXIS + [8192, 16384]
FIT_M, FIT_NK = [256, 1024, 4096, 16384], [256, 1024, 4096]
LINK_LATENCY = 1.2e-6  # two NVSwitch ports' hop latency (catalog NVLink 0.6 us each)

# Catalog figures (models/hardware/catalog.cpp): dense peaks, HBM bandwidth, NVLink per direction.
GPUS = {
# `sustained`: the accelerator of data/gpu-perf/mamf/mamf-msmf.csv whose MSMF / MAMF the table takes.
    "H100-SXM": dict(arch="sm_90", bf16=989.5e12, fp8=1979e12, hbm=3.35e12, nvlink=450e9, mxfp8=None,
                     sustained="NVIDIA H200 SXM"),
    "H200": dict(arch="sm_90", bf16=989.5e12, fp8=1979e12, hbm=4.8e12, nvlink=450e9, mxfp8=None,
                 sustained="NVIDIA H200 SXM"),
    "B200": dict(arch="sm_100_B200", bf16=2250e12, fp8=4500e12, hbm=7.7e12, nvlink=900e9, mxfp8=4500e12,
                 sustained="NVIDIA B200 SXM"),
    "B300": dict(arch="sm_100_B200", bf16=2250e12, fp8=4500e12, hbm=8e12, nvlink=900e9, mxfp8=4500e12,
                 sustained="NVIDIA B300 SXM"),
    "GB200": dict(arch="sm_100_B200", bf16=2500e12, fp8=5000e12, hbm=8e12, nvlink=900e9, mxfp8=5000e12,
                  sustained="NVIDIA B200 SXM"),
    "GB300": dict(arch="sm_100_B200", bf16=2500e12, fp8=5000e12, hbm=8e12, nvlink=900e9, mxfp8=5000e12,
                  sustained="NVIDIA B200 SXM"),
}
PEAK = {("sm_90", BF16): 989.5e12, ("sm_90", FP8): 1979e12, ("sm_100_B200", BF16): 2250e12, ("sm_100_B200", FP8): 4500e12}


def measured_gemms():
    """{(arch, dtype): {(b, m, n, k): efficiency}} from matmul.csv."""
    table = {}
    for row in csv.DictReader(open(XLA / "matmul.csv", encoding="utf-8")):
        key = (row["arch"], row["dtype_combo"])
        if key not in PEAK:
            continue
        shape = (int(row["b"]), int(row["m"]), int(row["n"]), int(row["k"]))
        table.setdefault(key, {})[shape] = float(row["flops_per_s"]) / PEAK[key]
    return table


def sustained_ratio(accelerator):
    """MSMF / MAMF of `accelerator`, the mean over its dtypes, and the per-dtype ratios."""
    ratios = {row["dtype"]: float(row["msmf_tflops"]) / float(row["mamf_tflops"])
              for row in csv.DictReader(open(MAMF / "mamf-msmf.csv", encoding="utf-8"))
              if row["accelerator"] == accelerator and row["msmf_tflops"]}
    return statistics.mean(ratios.values()), ratios


def mxfp8_kernel_ratio():
    """FP8 current scaling's over MXFP8's pre-quantized GEMM time of B300's layer, the three passes summed."""
    rows = [row for row in csv.DictReader(open(TE_GEMM / "te-gemm-profiling.csv", encoding="utf-8"))
            if row["gpu"].startswith("NVIDIA B300") and row["mode"] == "prequantized" and row["op"] == "layer"]
    assert {row["pass"] for row in rows} == {"fprop", "dgrad", "wgrad"}
    return sum(float(r["fp8_current_ms"]) for r in rows) / sum(float(r["mxfp8_ms"]) for r in rows)


def grid(entries):
    """{(m, n, k): efficiency} on M_AXIS x AXIS x AXIS (b*m rows for the batched entries)."""
    points = {}
    for (b, m, n, k), e in entries.items():
        rows = b * m
        if b == 1 or (m == 4096 and rows in (8192, 16384)):
            points[(rows, n, k)] = e
    return points


def h100_fp8(table):
    """H100 FP8 = H100 BF16 x B200's FP8/BF16 ratio at the same shape (the sm_90 FP8 entries are suspect)."""
    h_bf16, b_bf16, b_fp8 = (grid(table[(a, d)]) for a, d in
                             (("sm_90", BF16), ("sm_100_B200", BF16), ("sm_100_B200", FP8)))
    return {s: min(1.0, h_bf16[s] * b_fp8[s] / b_bf16[s]) for s in h_bf16}


def interpolate(points, ms, ns, ks, m, n, k):
    """compute_cost.hpp's multilinear interpolation in log size, constant beyond the axes' last points and,
    below their first, the power law of the first cell (e ~ size^alpha, alpha in [0, 1]; calibration.cpp)."""
    def bracket(axis, x):
        x = min(max(x, axis[0]), axis[-1])
        for i in range(len(axis) - 1):
            if axis[i] <= x <= axis[i + 1]:
                return i, (math.log(x) - math.log(axis[i])) / (math.log(axis[i + 1]) - math.log(axis[i]))
        return len(axis) - 1, 0.0

    def inside(m, n, k):
        (i, ti), (j, tj), (l, tl) = bracket(ms, m), bracket(ns, n), bracket(ks, k)
        total = 0.0
        for di, wi in ((0, 1 - ti), (1, ti)):
            for dj, wj in ((0, 1 - tj), (1, tj)):
                for dl, wl in ((0, 1 - tl), (1, tl)):
                    if wi * wj * wl == 0:
                        continue
                    total += wi * wj * wl * points[(ms[min(i + di, len(ms) - 1)], ns[min(j + dj, len(ns) - 1)],
                                                    ks[min(l + dl, len(ks) - 1)])]
        return total
    at = (max(m, ms[0]), max(n, ns[0]), max(k, ks[0]))
    edge = inside(*at)
    result = edge
    for axis, (values, size) in enumerate(((ms, m), (ns, n), (ks, k))):
        if size < values[0] and len(values) > 1 and edge > 0:
            nxt = list(at)
            nxt[axis] = values[1]
            slope = math.log(inside(*nxt) / edge) / math.log(values[1] / values[0])
            result *= (size / values[0]) ** min(1.0, max(0.0, slope))
    return result


def below_grid(points, peak, hbm, fp8):
    """The extrapolation below a grid's first point, checked on the table itself: on each axis, the grid cut
    to sizes >= 512 (>= 1024) predicts the measured shapes at 256 (256 and 512) of that axis, the other two
    axes whole; the time is the roofline's max(math, 5 us + bytes / (0.88 x HBM)), bytes the two operands
    and the bf16 result. Returns {rule: (mean |time error|, mean signed, count)} for the power law (`power`)
    and the efficiency held at the first point's (`flat`, before 2026-12-01)."""
    errors = {"power": [], "flat": []}
    for axis in range(3):
        for low in (512, 1024):
            axes = [AXIS, AXIS, AXIS]
            axes[axis] = [a for a in AXIS if a >= low]
            kept = {s: e for s, e in points.items() if all(s[d] in axes[d] for d in range(3))}
            for (m, n, k), e in points.items():
                if (m, n, k)[axis] >= low or m > 4096:
                    continue
                flops = 2.0 * m * n * k
                memory = 5e-6 + ((1 if fp8 else 2) * (m * k + k * n) + 2 * m * n) / (0.88 * hbm)
                measured = flops / (e * peak)
                clamp = list((m, n, k))
                clamp[axis] = low
                for rule, eff in (("power", interpolate(kept, *axes, m, n, k)),
                                  ("flat", interpolate(kept, *axes, *clamp))):
                    errors[rule].append(max(flops / (eff * peak), memory) / measured - 1)
    return {r: (statistics.mean(abs(x) for x in v), statistics.mean(v), len(v)) for r, v in errors.items()}


def held_out(points, smallest=0):
    """The fit grid, and the mean and worst error of its time on the held-out shapes whose every dimension
    is at least `smallest` (predicted / measured time - 1 = measured / predicted efficiency - 1), and their count."""
    fit = {s: e for s, e in points.items() if s[0] in FIT_M and s[1] in FIT_NK and s[2] in FIT_NK}
    errors = []
    for (m, n, k), e in points.items():
        if (m, n, k) in fit or min(m, n, k) < smallest:
            continue
        errors.append(e / interpolate(fit, FIT_M, FIT_NK, FIT_NK, m, n, k) - 1)
    return fit, statistics.mean(abs(x) for x in errors), max(errors, key=abs), len(errors)


def flops_curve(entries, peak_ratio=1.0):
    """(FLOPs, efficiency): the median of the measured entries within a quarter decade, 5 points per decade."""
    samples = [(2.0 * b * m * n * k, min(1.0, e * peak_ratio)) for (b, m, n, k), e in entries.items()]
    lo = math.floor(math.log10(min(f for f, _ in samples)) * 5) / 5
    hi = math.ceil(math.log10(max(f for f, _ in samples)) * 5) / 5
    curve, x = [], lo
    while x <= hi + 1e-9:
        near = [e for f, e in samples if abs(math.log10(f) - x) <= 0.25]
        if near:
            curve.append((10 ** x, statistics.median(near)))
        x += 0.2
    # an efficiency curve must not fall as kernels grow (a median of other shapes may): keep its running max
    best = 0.0
    return [(f, (best := max(best, e))) for f, e in curve]


HEAD_DIM = 128  # both benchmarks' head dim
# The cuDNN fused attention measured on the GPU itself (data/gpu-perf/cudnn-sdpa/), where one was: the
# B200 run for B200 and GB200 (the same die), the GB300 run for GB300 and B300 (the same Blackwell Ultra
# die); H100 and H200 read the FlashAttention-3 paper's H100 measurement.
SDPA_RUN = {"B200": "B200", "GB200": "B200", "GB300": "GB300", "B300": "GB300"}
# The smallest sequence read from that run: its times include the host's dispatch of each call while the
# GPU waits (0.10-0.16 ms at 512 tokens), at most 16% of a call from 4,096 tokens on; below, the H100
# measurement's fall-off.
SDPA_FROM = 4096


def fa3_h100():
    """{(pass, mask): {seqlen: efficiency}}: cuDNN's fused attention on H100 (FlashAttention-3 paper) against its BF16 peak."""
    points = {}
    for row in csv.DictReader(open(FLASH / "fa3-h100-cudnn.csv", encoding="utf-8")):
        points.setdefault((row["pass"], row["mask"]), {})[int(row["seqlen"])] = \
            float(row["tflops_per_s"]) * 1e12 / PEAK[("sm_90", BF16)]
    return points


def cudnn_sdpa(run, peak):
    """{(pass, "causal"): {seqlen: efficiency}}: the cuDNN rows of the cuDNN-frontend run on `run` against `peak`."""
    points = {}
    path = ROOT / "data" / "gpu-perf" / "cudnn-sdpa" / f"sdpa_bf16_benchmark_results_NVIDIA_{run}.csv"
    for row in csv.DictReader(open(path, encoding="utf-8")):
        if row["backend"] != "pyt_cudnn":
            continue
        seq = int(row["q_seqlen"])
        points.setdefault(("forward", "causal"), {})[seq] = float(row["fwd_tflops_per_sec"]) * 1e12 / peak
        points.setdefault(("backward", "causal"), {})[seq] = float(row["bwd_tflops_per_sec"]) * 1e12 / peak
    return points


def per_head_flops(seq, pass_, mask):
    """One head over one sequence, as both benchmarks count it: forward 4 s^2 d, halved under the causal mask;
    backward 2.5 x its forward."""
    forward = 4.0 * seq * seq * HEAD_DIM * (0.5 if mask == "causal" else 1.0)
    return forward if pass_ == "forward" else 2.5 * forward


def attention_curves(name):
    """{"all": [(FLOPs, e)], "unmasked": [...], "backward": [...]}, each keyed by the FLOPs of one head over one
    sequence ("all": forward with the causal mask, "unmasked": forward without it), e against this GPU's BF16 peak
    (a measurement's fraction of its own GPU's peak, for a GPU that reads another's)."""
    h100 = fa3_h100()
    if name in SDPA_RUN:
        own = cudnn_sdpa(SDPA_RUN[name], GPUS[SDPA_RUN[name]]["bf16"])

        def measured_from(key, h100_key):
            """The run's measurement from SDPA_FROM on; below it, H100's fall-off (its shape) from there."""
            measured, ref = own[key], h100[h100_key]
            below = {q: measured[SDPA_FROM] * ref[q] / ref[SDPA_FROM] for q in ref if q < SDPA_FROM}
            return {**below, **{q: e for q, e in measured.items() if q >= SDPA_FROM}}
        causal = measured_from(("forward", "causal"), ("forward", "causal"))
        # No Blackwell measurement without the mask: the causal curve times H100's unmasked / causal ratio at the
        # same length (its last ratio beyond H100's longest).
        ratio = {q: h100[("forward", "none")][q] / e for q, e in h100[("forward", "causal")].items()}
        last = ratio[max(ratio)]
        sources = {"all": (("forward", "causal"), causal),
                   "unmasked": (("forward", "none"), {q: e * ratio.get(q, last) for q, e in causal.items()}),
                   # H100's backward was measured without the mask, Blackwell's with it: its shape below SDPA_FROM.
                   "backward": (("backward", "causal"), measured_from(("backward", "causal"), ("backward", "none")))}
    else:
        sources = {"all": (("forward", "causal"), h100[("forward", "causal")]),
                   "unmasked": (("forward", "none"), h100[("forward", "none")]),
                   "backward": (("backward", "none"), h100[("backward", "none")])}
    curves = {}
    for key, ((pass_, mask), by_seq) in sources.items():
        best, points = 0.0, []
        for seq in sorted(by_seq):  # an efficiency curve must not fall as calls grow: its running max
            best = max(best, min(1.0, by_seq[seq]))
            points.append((per_head_flops(seq, pass_, mask), best))
        curves[key] = points
    return curves


def memory_curve(bandwidth):
    sizes = [2.0 ** p for p in range(16, 33, 2)]
    return [(s, s / (5e-6 * 0.88 * bandwidth + s) * 0.88) for s in sizes]


def collectives(arch_section):
    """Entries (opcode, group size p, bytes S, time T) of a section of collectives.csv."""
    out = []
    for row in csv.DictReader(open(XLA / "collectives.csv", encoding="utf-8")):
        if not row["section_note"].startswith(arch_section) or row["opcode"] not in ("all-reduce", "all-gather",
                                                                                      "reduce-scatter"):
            continue
        p = int(row["group_size"])
        size = int(row["message_bytes"]) * (p if row["opcode"] == "reduce-scatter" else 1)  # the operand
        out.append((row["opcode"], p, size, size / float(row["network_throughput_bytes_per_sec"])))
    return out


def ring_terms(op, p, size, bandwidth):
    """T = alpha + rounds * lambda + factor * S / (eta * B): (rounds * lambda, factor * S / B)."""
    rounds = 2 * (p - 1) if op == "all-reduce" else p - 1
    factor = 2 * (p - 1) / p if op == "all-reduce" else (p - 1) / p
    return rounds * LINK_LATENCY, factor * size / bandwidth


def fit_collectives(entries, bandwidth):
    """(alpha, eta): T = alpha + L + W / eta, linear in (alpha, 1/eta); weighted LS of the relative error."""
    a11 = a12 = a22 = b1 = b2 = 0.0
    for op, p, size, t in entries:
        latency, wire = ring_terms(op, p, size, bandwidth)
        x1, x2, y = 1 / t, wire / t, (t - latency) / t
        a11, a12, a22, b1, b2 = a11 + x1 * x1, a12 + x1 * x2, a22 + x2 * x2, b1 + x1 * y, b2 + x2 * y
    det = a11 * a22 - a12 * a12
    alpha, inv_eta = (b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det
    return alpha, 1 / inv_eta


def collective_error(entries, alpha, eta, bandwidth):
    errors = []
    for op, p, size, t in entries:
        latency, wire = ring_terms(op, p, size, bandwidth)
        errors.append((alpha + latency + wire / eta) / t - 1)
    return statistics.mean(abs(e) for e in errors), max(errors, key=abs), len(errors)


def number(x):
    return f"{x:.6g}"


def flop(x):
    for unit, scale in (("TFlop", 1e12), ("GFlop", 1e9), ("MFlop", 1e6), ("kFlop", 1e3)):
        if x >= scale:
            return f"{x / scale:.6g}{unit}"
    return f"{x:.6g}Flop"


def size(x):
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if x >= scale:
            return f"{x / scale:.6g}{unit}"
    return f"{x:.6g}B"


# arXiv:2507.03114's mean slowdown of computation overlapped with communication (see the docstring).
OVERLAP_SLOWDOWN = 0.189


def compute_share():
    """The share of a GPU an NCCL kernel takes from the computation beside it: 1 - 1/(1 + slowdown)."""
    return 1 - 1 / (1 + OVERLAP_SLOWDOWN)


def table_text(name, spec, grids, curves, checks, coll):
    alpha, eta, coll_fit, coll_held = coll
    lines = [
        f"# dnnsim calibration table (format: docs/calibration.md): {name} for LLM training (Megatron-Bridge).",
        "# Generated by scenarios/papers/megatron-bridge/fit_calibration.py from measured kernel tables only",
        "# (data/gpu-perf/xla, flash-attention, cudnn-sdpa, mamf); do not edit by hand. Method: that script's docstring and docs/megatron-bridge.md.",
    ]
    for dtype, (check, large, note, below) in checks.items():
        lines.append(f"#   {dtype} GEMM grid: {note}; held-out shapes ({check[2]}): mean |time error| "
                     f"{100 * check[0]:.1f}%, worst {100 * check[1]:+.1f}%; those with m, n, k >= 1024 ({large[2]}): "
                     f"{100 * large[0]:.1f}%, worst {100 * large[1]:+.1f}%; below the grid (shapes at 256 and 512 "
                     f"predicted from a grid cut above them, {below['power'][2]}): {100 * below['power'][0]:.1f}% "
                     f"({100 * below['power'][1]:+.1f}% signed; {100 * below['flat'][0]:.1f}% and "
                     f"{100 * below['flat'][1]:+.1f}% with the efficiency held constant)")
    lines.append(f"#   collectives: alpha {alpha * 1e6:.1f} us per call, eta {eta:.3f} of NVLink {spec['nvlink'] / 1e9:.0f} "
                 f"GB/s; fit entries mean |error| {100 * coll_fit[0]:.1f}% ({coll_fit[2]}), held-out "
                 f"{100 * coll_held[0]:.1f}% (worst {100 * coll_held[1]:+.1f}%, {coll_held[2]})")
    if name in SDPA_RUN:
        lines.append(f"#   attention core: cuDNN 9.13 fused attention measured on {SDPA_RUN[name]} (cuDNN-frontend benchmark, "
                     f"data/gpu-perf/cudnn-sdpa), causal forward and backward from {SDPA_FROM} tokens, per head and sequence; "
                     "below, and without the mask, H100's shape (FlashAttention-3 paper): an assumption")
    else:
        lines.append("#   attention core: cuDNN fused attention measured on H100 (FlashAttention-3 paper, "
                     "data/gpu-perf/flash-attention), per head and sequence")
    sustained, ratios = sustained_ratio(spec["sustained"])
    lines.append(f"#   sustained compute: {number(sustained)} of the burst rates above, MSMF / MAMF of {spec['sustained']} ("
                 + ", ".join(f"{d} {r:.4f}" for d, r in sorted(ratios.items())) + "; data/gpu-perf/mamf)"
                 + ("" if spec["sustained"].split()[1] == name.split("-")[0] else ": an assumption"))
    if "mxfp8" in grids:
        lines.append(f"#   mxfp8 GEMM grid and curve: fp8's x {number(mxfp8_kernel_ratio())}, FP8 current scaling's over MXFP8's "
                     "pre-quantized GEMM time of a layer measured on B300 (Transformer Engine's GEMM profiling tutorial, "
                     "data/gpu-perf/te-gemm)" + ("" if name == "B300" else ": an assumption"))
    lines.append("#   memory-bound kernels: 5 us + bytes / (0.88 x HBM): an assumption (no measurement in the tables)")
    lines.append(f"#   communication beside computation: compute_share {number(compute_share())} = 1 - 1/(1 + "
                 f"{OVERLAP_SLOWDOWN}), the mean slowdown of overlapped computation measured by arXiv:2507.03114 "
                 "(A100, H100, MI250, MI210)" + ("" if name.startswith("H") else ": an assumption for Blackwell"))
    peaks = [f'bf16: "{spec["bf16"] / 1e12:g}TFlops"', f'fp8: "{spec["fp8"] / 1e12:g}TFlops"']
    if spec["mxfp8"]:
        peaks.append(f'mxfp8: "{spec["mxfp8"] / 1e12:g}TFlops"')
    lines += [
        f'device: "{name}"',
        f'source: "Fitted by scenarios/papers/megatron-bridge/fit_calibration.py on XLA default_matmul_perf_table and '
        f'default_collective_perf_table (tensorflow/tensorflow, Apache-2.0): GEMM shape grids, FLOPs curves, NCCL '
        f'alpha {alpha * 1e6:.1f} us and link efficiency {eta:.3f}; attention curves from cuDNN measured on '
        + (f'{SDPA_RUN[name]} (NVIDIA/cudnn-frontend SDPA benchmark, Apache-2.0) and on H100 (FlashAttention-3 paper, '
           'arXiv:2407.08608)' if name in SDPA_RUN else 'H100 (FlashAttention-3 paper, arXiv:2407.08608)')
        + '; sustained_compute from MSMF / MAMF (stas00/ml-engineering, CC BY-SA 4.0)'
        + '; compute_share from the mean slowdown of overlapped computation of arXiv:2507.03114'
        + ('; MXFP8 over FP8 GEMM time from Transformer Engine\'s GEMM profiling tutorial on B300 (NVIDIA/TransformerEngine, '
           'Apache-2.0)' if "mxfp8" in grids else '') + '. Peaks: catalog."',
        "peak: {" + ", ".join(peaks) + "}",
        f'memory_bandwidth: "{spec["hbm"] / 1e12:g}TB/s"',
        f"sustained_compute: {number(sustained)}",
        "compute:",
    ]
    for dtype in grids:
        lines += ["  - kind: matmul", f"    dtype: {dtype}", "    curve:"]
        lines += [f'      - {{size: "{flop(f)}", efficiency: {number(e)}}}' for f, e in curves[dtype]]
    for pass_, points in attention_curves(name).items():
        lines += ["  - kind: attention", "    dtype: bf16"] + {"all": [], "unmasked": ["    mask: none"],
                                                          "backward": ["    pass: backward"]}[pass_]
        lines += ["    curve:"] + [f'      - {{size: "{flop(f)}", efficiency: {number(e)}}}' for f, e in points]
    lines.append("gemm:")
    for dtype in grids:
        lines += [f"  - dtype: {dtype}", "    points:"]
        lines += [f"      - {{m: {m}, n: {n}, k: {k}, efficiency: {number(e)}}}"
                  for (m, n, k), e in sorted(grids[dtype].items())]
    lines.append("memory:")
    lines += [f'  - {{size: "{size(s)}", efficiency: {number(e)}}}' for s, e in memory_curve(spec["hbm"])]
    lines += ["collectives:", f'  latency: "{alpha * 1e6:.2f}us"', f"  link_efficiency: {number(eta)}",
              f"  compute_share: {number(compute_share())}"]
    return "\n".join(lines) + "\n"


def build():
    table = measured_gemms()
    texts, report = {}, []
    coll = {}
    for arch, section, bandwidth in (("sm_100_B200", 'key "sm_100_B200"', 900e9), ("sm_90", "last section", 450e9)):
        entries = collectives(section)
        fit = [e for i, e in enumerate(entries) if i % 2 == 0]
        held = [e for i, e in enumerate(entries) if i % 2 == 1]
        alpha, eta = fit_collectives(fit, bandwidth)
        coll[arch] = (alpha, eta, collective_error(fit, alpha, eta, bandwidth), collective_error(held, alpha, eta, bandwidth))
        report.append(f"collectives {arch}: alpha {alpha * 1e6:.1f} us, eta {eta:.3f}; fit {coll[arch][2]}, held out {coll[arch][3]}")
    for name, spec in GPUS.items():
        arch = spec["arch"]
        bf16 = grid(table[(arch, BF16)])
        fp8 = h100_fp8(table) if arch == "sm_90" else grid(table[(arch, FP8)])
        grids, checks, curves = {}, {}, {}
        for dtype, points, note in (("bf16", bf16, f"XLA {arch} BF16"),
                                    ("fp8", fp8, "H100 BF16 x B200 FP8/BF16" if arch == "sm_90" else f"XLA {arch} FP8")):
            fit, mean, worst, count = held_out(points)
            large = held_out(points, 1024)[1:]
            # the kernels were measured on `arch` (H200 reads H100's; B300, GB200 and GB300 B200's): its peak and HBM
            measured_on = GPUS["H100-SXM" if arch == "sm_90" else "B200"]
            below = below_grid(points, measured_on[dtype], measured_on["hbm"], dtype == "fp8")
            grids[dtype], checks[dtype] = fit, ((mean, worst, count), large, note, below)
            report.append(f"{name} {dtype}: held-out GEMM shapes {count}: mean |error| {100 * mean:.1f}%, worst "
                          f"{100 * worst:+.1f}%; m, n, k >= 1024 ({large[2]}): {100 * large[0]:.1f}%, worst {100 * large[1]:+.1f}%; "
                          f"below a cut grid ({below['power'][2]}): power law {100 * below['power'][0]:.1f}% "
                          f"({100 * below['power'][1]:+.1f}% signed), flat efficiency {100 * below['flat'][0]:.1f}% "
                          f"({100 * below['flat'][1]:+.1f}%)")
        curves["bf16"] = flops_curve(table[(arch, BF16)])
        if arch == "sm_90":
            ratio = {s: table[("sm_100_B200", FP8)][s] / table[("sm_100_B200", BF16)][s] for s in table[(arch, BF16)]}
            curves["fp8"] = flops_curve({s: e * ratio[s] for s, e in table[(arch, BF16)].items()})
        else:
            curves["fp8"] = flops_curve(table[(arch, FP8)])
        if spec["mxfp8"]:
            ratio = mxfp8_kernel_ratio()
            grids["mxfp8"] = {shape: e * ratio for shape, e in grids["fp8"].items()}
            curves["mxfp8"] = [(f, e * ratio) for f, e in curves["fp8"]]
        texts[name] = table_text(name, spec, grids, curves, checks, coll[arch])
    return texts, report


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("check", "write"):
        sys.exit(__doc__)
    texts, report = build()
    print("\n".join(report))
    if sys.argv[1] == "write":
        OUT.mkdir(parents=True, exist_ok=True)
        for name, text in texts.items():
            (OUT / f"{name}.yaml").write_text(text)
        return 0
    stale = [n for n, t in texts.items() if not (OUT / f"{n}.yaml").exists() or (OUT / f"{n}.yaml").read_text() != t]
    if stale:
        print("stale or missing:", ", ".join(stale))
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
