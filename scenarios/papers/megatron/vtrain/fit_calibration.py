#!/usr/bin/env python3
"""Fits dnnsim's A100 calibration for Megatron-style training on measured data, and writes it as a
calibration table (docs/calibration.md; the Megatron scenarios select it):

  fit_calibration.py DNNSIM [--csv FILE] [--nccl-data DIR] [--every N] [--jobs N] [--out DIR]
                     [--host-overheads US,US,… [--gpu-overheads US,US,…] [--multi-every N]]
                     [--compute-share F] [--write data/calibration/megatron/A100-80GB-SXM.yaml]

1. Collectives: α (latency per NCCL call) and η (fraction of the NVSwitch port bandwidth reached) by
   nccl_table.fit(), least squares on vTrain's nccl-tests all-reduce tables (2, 4, 8 GPUs, 1 MiB … 1 GiB).
2. Compute: the fixed-overhead model of the shipped tables, t(s) = t0 + s / (e_max · peak) for a
   kernel of s FLOPs (and t0 + bytes / (0.88 · bandwidth) for a memory-bound one: the memory e_max
   stays the shipped table's), with e_max (fp16/bf16 GEMM) and t0 (per zoo task: one sub-layer —
   Megatron launches several kernels for one, plus its Python) fitted to the FIT half of vTrain's
   single-node runs (even CSV row index; --every N takes every N-th of those), collectives as fitted
   in 1. Each fit row is simulated at three probe points (e, t0) = (0.8, 8 µs), (0.8, 40 µs),
   (0.5, 8 µs); with one t0 for GEMM and memory-bound kernels a task's time is t0 + max(GEMM part,
   memory part), so the iteration time is close to linear in (1/e, t0): T ≈ A + B/e + C·t0, whose A,
   B, C per row the three runs give. The weighted least squares of Σ ((T − measured)/measured)² over
   the fit rows is then a 2 × 2 solve in (1/e, t0). The surrogate's own error is checked by real
   runs: vtrain_table.py --half held-out simulates the held-out rows with the written table.
   That was the fit of the sum model (t0 added to every task). With --host-overheads it fits the
   launch queue instead (3.): pass `--host-overheads 0` for no launch section on the same grid.
3. Kernel launches (docs/calibration.md, "Kernel launches"): with a host overhead h per zoo task the
   table gains a `launch` section, t0 becomes the GPU's own cost per task, and a task's time is no
   longer a sum: the host issues tasks h apart while the GPU runs earlier ones, so T is not linear in
   (t0, h): the queue's max() switches between host- and GPU-bound. (t0, h) are searched on a grid
   (--gpu-overheads × --host-overheads, µs; h = 0 is no launch section, the sum model with that t0),
   and at each grid point two runs per row at e = 0.6 and 0.9 give T ≈ A + B/e (the GEMMs' GPU time
   scales with 1/e; where the host is the bottleneck B is small), whose weighted least squares in 1/e
   is closed-form. The grid point with the least weighted squared relative error is kept, and its
   (e_max, t0, h) run for real on the same rows: that in-sample error is what the header reports.
   --multi-every N adds every N-th run of the FIT half of vTrain's multi-node runs (64-512 GPUs,
   hidden 3,072-12,288: the large kernels the single-node runs do not reach), each table weighing the
   same in the objective; the shipped table was written with `--every 8 --multi-every 1
   --host-overheads 160,170,180 --gpu-overheads 40,60,80,100,120` (docs/megatron.md).
4. --compute-share F writes the collectives' compute_share (docs/calibration.md) into every probe and
   the table, not fitted: the fit then runs with overlapped communication taking F of the GPU from
   the computation beside it. The shipped table has none (a refit with arXiv:2507.03114's 0.159 was
   not kept by the held-out rule: docs/megatron.md, "Refitted with the communication's compute share").

Nothing here looks at Megatron SC'21 Table 1.
"""
import argparse
import datetime
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import nccl_table  # noqa: E402
import vtrain_table  # noqa: E402

PEAK_FP16 = 312e12  # A100 dense fp16/bf16 tensor-core peak, catalog (NVIDIA A100 datasheet)
MEMORY_BANDWIDTH = 2.039e12  # A100 80 GB SXM, catalog
MEMORY_E_MAX = 0.88  # the shipped table's (fridayswithfaraday.com, 2020); not refitted here
PROBES = [(0.8, 8e-6), (0.8, 40e-6), (0.5, 8e-6)]


def curve_points(e_max, t0, rate, sizes):
    """e(s) = e_max · s / (s + e_max · rate · t0): the efficiency that gives t0 + s / (e_max · rate)."""
    return [(s, e_max * s / (s + e_max * rate * t0)) for s in sizes]


def flop_text(flop):
    for factor, unit in ((1e12, "TFlop"), (1e9, "GFlop"), (1e6, "MFlop"), (1e3, "kFlop")):
        if flop >= factor:
            return f'"{flop / factor:.6g}{unit}"'
    return f'"{flop:.6g}Flop"'


def bytes_text(size):
    for factor, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if size >= factor:
            return f'"{size / factor:.6g}{unit}"'
    return f'"{size:.6g}B"'


def table_text(e_max, t0, alpha, eta, header, host=0.0,
               fitted_on="the fit half of vTrain's single-node Megatron-DeepSpeed runs", share=0.0):
    # Five points per decade of FLOPs (1 kFlop … 10 TFlop) and every power of two of bytes (1 KiB …
    # 4 GiB): the table interpolates linearly in log(size), so the knee of t0 + s/(e·peak) needs them.
    flops = [10 ** (3 + k / 5) for k in range(0, 46)]
    sizes = [2.0 ** k for k in range(10, 33)]
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    lines += ['device: "A100-80GB-SXM"',
              f'source: "Fitted by scenarios/papers/megatron/vtrain/fit_calibration.py: GEMM e_max {e_max:.4g} and '
              f'{t0 * 1e6:.4g} us per task{f" (GPU) with {host * 1e6:.4g} us of host time per task" if host > 0 else ""} '
              f'on {fitted_on}; collectives '
              f'{alpha * 1e6:.4g} us per call and link efficiency {eta:.4g} on vTrain\'s nccl-tests all-reduce tables. '
              f'Memory e_max 0.88 as the shipped table. Peaks: NVIDIA A100 datasheet (catalog)."',
              'peak: {fp16: "312TFlops", bf16: "312TFlops"}',
              'memory_bandwidth: "2.039TB/s"',
              "compute:"]
    for dtype in ("fp16", "bf16"):
        lines += ["  - kind: matmul", f"    dtype: {dtype}", "    curve:"]
        lines += [f"      - {{size: {flop_text(s)}, efficiency: {e:.6g}}}"
                  for s, e in curve_points(e_max, t0, PEAK_FP16, flops)]
    lines.append("memory:")
    lines += [f"  - {{size: {bytes_text(s)}, efficiency: {e:.6g}}}"
              for s, e in curve_points(MEMORY_E_MAX, t0, MEMORY_BANDWIDTH, sizes)]
    lines.append(f'collectives: {{latency: "{alpha * 1e6:.4g}us", link_efficiency: {eta:.4g}'
                 + (f", compute_share: {share:.4g}" if share > 0 else "") + "}")
    if host > 0:
        lines.append(f'launch: {{host_overhead: "{host * 1e6:.4g}us"}}')
    return "\n".join(lines) + "\n"


def solve_rows(probe_times):
    """Per row (A, B, C) of T = A + B/e + C·t0 from the three probe times."""
    (e0, ta), (_, tb), (e1, _) = PROBES
    coefficients = []
    for t1, t2, t3 in probe_times:
        c = (t2 - t1) / (tb - ta)
        b = (t3 - t1) / (1 / e1 - 1 / e0)
        coefficients.append((t1 - b / e0 - c * ta, b, c))
    return coefficients


def fit_compute(coefficients, measured):
    """(e_max, t0) minimising Σ ((A + B·u + C·t0 − M)/M)², u = 1/e_max; e_max ≤ 1, t0 ≥ 0."""
    suu = sut = stt = suy = sty = 0.0
    for (a, b, c), m in zip(coefficients, measured):
        w, y = 1 / m ** 2, m - a
        suu, sut, stt, suy, sty = suu + w * b * b, sut + w * b * c, stt + w * c * c, suy + w * b * y, sty + w * c * y
    det = suu * stt - sut * sut
    u = (suy * stt - sut * sty) / det
    t0 = (suu * sty - sut * suy) / det
    if u < 1:  # above the peak: hold e_max at 1 and refit t0 alone
        u, t0 = 1.0, (sty - sut) / stt
    return 1 / u, max(t0, 0.0)


def weighted_error(coefficients, measured, e_max, t0):
    """Σ ((A + B/e + C·t0 − M)/M)²: the surrogate's objective at (e_max, t0)."""
    return sum(((a + b / e_max + c * t0) / m - 1) ** 2 for (a, b, c), m in zip(coefficients, measured))


def summary(errors):
    return (f"mean |error| {100 * sum(map(abs, errors)) / len(errors):.1f}% "
            f"(signed {100 * sum(errors) / len(errors):+.1f}%, worst {100 * max(map(abs, errors)):.1f}%)")


def fit_sum_model(args, rows, alpha, eta, out):
    """2.: three probes per row, the surrogate linear in (1/e, t0), no launch section."""
    runs = []
    for k, (e, t0) in enumerate(PROBES):
        probe = out / f"probe{k}.yaml"
        probe.write_text(table_text(e, t0, alpha, eta, f"probe {k}: e_max {e}, t0 {t0 * 1e6:g} us",
                                    share=args.compute_share))
        print(f"probe {k}: e_max {e}, t0 {t0 * 1e6:g} us on {len(rows)} fit rows", file=sys.stderr)
        runs.append(vtrain_table.run_rows(args.dnnsim, rows, out / f"probe{k}", str(probe), args.jobs, progress=False))
    kept = [n for n in range(len(rows)) if all(run[n][2] is not None for run in runs)]
    measured = [float(rows[n][1][10]) / 1000 for n in kept]
    coefficients = solve_rows([tuple(run[n][2] for run in runs) for n in kept])
    e_max, t0 = fit_compute(coefficients, measured)
    errors = [(a + b / e_max + c * t0) / m - 1 for (a, b, c), m in zip(coefficients, measured)]
    print(f"sum model: e_max {e_max:.4f}, t0 {t0 * 1e6:.2f} us; {len(kept)} rows, surrogate {summary(errors)}")
    text = (f"    through a surrogate linear in (1/e_max, t0) from three dnnsim runs per row; surrogate "
            f"{summary(errors)}.")
    return 0.0, e_max, t0, kept, measured, errors, text


E_PROBES = (0.6, 0.9)


def run_fit_rows(args, single, multi, out, table):
    """Simulates the single-node rows, then the multi-node ones (their data-parallel all-reduce after
    the backward pass, as vtrain_table.py runs them), under `table`; results in that order."""
    results = vtrain_table.run_rows(args.dnnsim, single, out / "single", str(table), args.jobs, progress=False)
    if multi:
        results += vtrain_table.run_rows(args.dnnsim, multi, out / "multi", str(table), args.jobs, progress=False,
                                         overlap=False)
    return results


def fit_launch_queue(args, single, multi, alpha, eta, out):
    """3.: a (t0, h) grid, two e probes per point and row, closed-form weighted least squares in 1/e.
    With multi-node rows each table weighs the same in the objective (a row 1/its table's row count):
    the 90 single-node rows would otherwise outweigh the large-kernel regime the multi-node rows bring."""
    rows = single + multi
    weight_of = [1.0] * len(rows) if not multi else [1 / len(single)] * len(single) + [1 / len(multi)] * len(multi)
    hosts = [float(h) * 1e-6 for h in args.host_overheads.split(",")]
    gpu_t0s = [float(t) * 1e-6 for t in args.gpu_overheads.split(",")]
    points = []  # (objective, h, t0, e_max, errors, kept, measured)
    for host in hosts:
        for t0 in gpu_t0s:
            runs = []
            for e in E_PROBES:
                name = f"h{host * 1e6:g}-t{t0 * 1e6:g}-e{e:g}"
                probe = out / f"{name}.yaml"
                probe.write_text(table_text(e, t0, alpha, eta, f"probe {name}", host, share=args.compute_share))
                runs.append(run_fit_rows(args, single, multi, out / name, probe))
            kept = [n for n in range(len(rows)) if all(run[n][2] is not None for run in runs)]
            measured = [float(rows[n][1][10]) / 1000 for n in kept]
            weights = [weight_of[n] for n in kept]
            (u0, u1) = (1 / E_PROBES[0], 1 / E_PROBES[1])
            lines = []  # T = A + B·u per row
            for n in kept:
                t_0, t_1 = runs[0][n][2], runs[1][n][2]
                b = (t_0 - t_1) / (u0 - u1)
                lines.append((t_0 - b * u0, b))
            # min Σ w ((A + B·u − M)/M)² over u ≥ 1 (e_max ≤ 1)
            num = sum(w * b * (m - a) / m ** 2 for (a, b), m, w in zip(lines, measured, weights))
            den = sum(w * b * b / m ** 2 for (a, b), m, w in zip(lines, measured, weights))
            u = max(1.0, num / den) if den > 0 else 1.0
            errors = [(a + b * u) / m - 1 for (a, b), m in zip(lines, measured)]
            objective = sum(w * e * e for e, w in zip(errors, weights))
            print(f"h {host * 1e6:5g} us, t0 {t0 * 1e6:5g} us: e_max {1 / u:.4f}, {summary(errors)}, "
                  f"objective {objective:.4f}", flush=True)
            points.append((objective, host, t0, 1 / u, errors, kept, measured))
    objective, host, t0, e_max, errors, kept, measured = min(points, key=lambda p: p[0])
    best_per_host = []
    for h in hosts:
        best = min((p for p in points if p[1] == h), key=lambda p: p[0])
        best_per_host.append(f"    h {h * 1e6:g} us: best t0 {best[2] * 1e6:g} us, e_max {best[3]:.3f}, "
                             f"surrogate mean |error| {100 * sum(map(abs, best[4])) / len(best[4]):.1f}%")
    text = (f"    on a grid of t0 ({args.gpu_overheads} us) x h ({args.host_overheads} us; 0 = no launch section),\n"
            f"    e_max in closed form from two runs per row and point (e = 0.6, 0.9), T ~ A + B/e; best per h:\n"
            + "\n".join(best_per_host))
    return host, e_max, t0, kept, measured, errors, text


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dnnsim")
    parser.add_argument("--csv", default=str(vtrain_table.DEFAULT_CSV))
    parser.add_argument("--nccl-data", default=str(nccl_table.DEFAULT_DATA))
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", default="out/vtrain-fit")
    parser.add_argument("--host-overheads", default=None,
                        help="grid of host overheads per zoo task, µs (0 = no launch section): fit the launch queue")
    parser.add_argument("--gpu-overheads", default="10,30,50,70,90,110,130",
                        help="grid of GPU t0 per zoo task, µs, with --host-overheads")
    parser.add_argument("--multi-every", type=int, default=0,
                        help="also fit on every N-th row of the FIT half of vTrain's multi-node runs "
                             "(ground_truth_multi.csv), with --host-overheads; 0: single-node rows only")
    parser.add_argument("--compute-share", type=float, default=0.0,
                        help="the collectives' compute_share the probes and the written table carry (docs/calibration.md); "
                             "not fitted: 0.159 is arXiv:2507.03114's mean slowdown of overlapped computation")
    parser.add_argument("--write", default=str(vtrain_table.MEGATRON_CALIBRATION))
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    alpha, eta, residuals = nccl_table.fit(args.nccl_data)
    nccl_errors = [model / t - 1 for _, _, t, model in residuals]
    print(f"collectives: alpha {alpha * 1e6:.2f} us, eta {eta:.4f}; residuals mean |error| "
          f"{100 * sum(map(abs, nccl_errors)) / len(nccl_errors):.1f}%, worst {100 * max(map(abs, nccl_errors)):.1f}%")

    rows = vtrain_table.half(vtrain_table.read_rows(args.csv), "fit")[:: args.every]
    multi = (vtrain_table.half(vtrain_table.read_rows(vtrain_table.MULTI_CSV), "fit")[:: args.multi_every]
             if args.multi_every > 0 else [])
    if args.host_overheads is None:
        if multi:
            parser.error("--multi-every needs --host-overheads (the launch-queue fit)")
        host, e_max, t0, kept, measured, errors, surrogate_text = fit_sum_model(args, rows, alpha, eta, out)
    else:
        host, e_max, t0, kept, measured, errors, surrogate_text = fit_launch_queue(args, rows, multi, alpha, eta, out)
    # The kept point run for real on the same rows.
    check = out / "fitted.yaml"
    check.write_text(table_text(e_max, t0, alpha, eta, "fitted point, in-sample check", host, share=args.compute_share))
    checked = run_fit_rows(args, [rows[n] for n in kept if n < len(rows)],
                           [multi[n - len(rows)] for n in kept if n >= len(rows)], out / "fitted", check)
    real = [r[2] / m - 1 for r, m in zip(checked, measured) if r[2] is not None]
    real_single = real[:sum(1 for n in kept if n < len(rows))]
    real_multi = real[len(real_single):]
    print(f"kept h {host * 1e6:g} us, e_max {e_max:.4f}, t0 {t0 * 1e6:.2f} us: real in-sample {summary(real_single)}"
          + (f"; multi-node {summary(real_multi)}" if real_multi else ""))

    multi_text = (f"\n    and {len(real_multi)} of the FIT half (one in {args.multi_every}) of its ground_truth_multi.csv "
                  f"(64-512 A100),\n    each table weighing the same" if real_multi else "")
    real_multi_text = f"; multi-node {summary(real_multi)}" if real_multi else ""
    share_text = (f"""
  Communication beside computation: compute_share {args.compute_share:g} while an NCCL kernel runs, not fitted: the
  mean slowdown of computation overlapped with communication measured by Kumar et al., arXiv:2507.03114.""" if
                  args.compute_share > 0 else "")
    worst = max(((g, t, model, size) for g, size, t, model in residuals), key=lambda r: abs(r[2] / r[1] - 1))
    header = f"""dnnsim calibration table (format: docs/calibration.md): A100 for Megatron-style training.
Generated by scenarios/papers/megatron/vtrain/fit_calibration.py on {datetime.date.today().isoformat()}; do not edit by hand.
Kernel model: GPU time t(s) = t0 + s / (e_max * peak), one t0 per zoo task (a sub-layer: Megatron runs
several kernels for one), sampled 5 points per decade (1 kFlop ... 10 TFlop; 1 KiB ... 4 GiB); with a
launch section the host issues the tasks h apart meanwhile (a launch queue), else t0 is the whole cost.
  e_max (fp16/bf16 GEMM) = {e_max:.4f}, t0 = {t0 * 1e6:.2f} us, host overhead h = {host * 1e6:g} us per task
    ({"no launch section" if host == 0 else "launch section"}): weighted least squares of the relative error
    over {len(real_single)} runs of the FIT half (even CSV row index; one in {args.every} of those) of vTrain's
    ground_truth_single.csv (Bang et al., MICRO'24; 2-8 A100 in one node),{multi_text}
{surrogate_text}
    The kept point run for real on those rows: {summary(real_single)}{real_multi_text}.
    Held-out error (odd rows, real dnnsim runs): docs/megatron.md.
  memory e_max 0.88: the shipped table's (fridayswithfaraday.com, 2020), not refitted.
  fp32/tf32: no curve (Megatron's GEMMs run in fp16 here); bf16 = fp16 (same tensor-core peak), assumed.
Collectives (NCCL inside a node): latency {alpha * 1e6:.2f} us per call, link efficiency {eta:.4f} of the
  NVSwitch port: least squares of the relative error on vTrain's nccl-tests all-reduce tables (2, 4, 8 GPUs,
  11 sizes 1 MiB ... 1 GiB); residual mean |error| {100 * sum(map(abs, nccl_errors)) / len(nccl_errors):.1f}%,
  worst {100 * abs(worst[2] / worst[1] - 1):.1f}% ({worst[0]} GPUs, {worst[3] / 2**20:g} MiB).{share_text}
Data: data/megatron/vtrain (VIA-Research/vTrain f8dda84, MIT)."""
    path = pathlib.Path(args.write)
    path.parent.mkdir(parents=True, exist_ok=True)
    fitted_on = ("the fit halves of vTrain's single- and multi-node Megatron-DeepSpeed runs" if real_multi
                 else "the fit half of vTrain's single-node Megatron-DeepSpeed runs")
    path.write_text(table_text(e_max, t0, alpha, eta, header, host, fitted_on, args.compute_share))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
