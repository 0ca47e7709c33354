#!/usr/bin/env python3
"""NVIDIA Megatron-Bridge's 25.11 pre-training throughput table as dnnsim scenarios.

  bridge_table.py write [--heldout=R,...]     writes one scenario per row of data/megatron-bridge/performance-25.11.csv
                                              (DGX-H100, DGX-B200, DGX-GB200, DGX-GB300) next to this file; with
                                              --heldout, one per expressible row of the held-out releases R (default
                                              all; their DGX-B300 rows too) into ../megatron-bridge-heldout/, and the rows it cannot express
                                              with why (not-run.md)
  bridge_table.py report [--heldout=R,...] [--record] OUT_DIR
                                              reads OUT_DIR/runs/<name>/summary.json (`dnnsim regress --out` runs) and
                                              prints, per row, published vs simulated tokens/s/GPU and model TFLOP/s/GPU
                                              (--heldout: those releases' rows and the error by release; --record
                                              keeps their simulated values in ../megatron-bridge-heldout/measured.csv)
  bridge_table.py residual [--heldout=R,...] OUT_DIR
                                              per mixture-of-experts row, the measured step minus the simulated one
                                              per MoE layer and micro-batch (ms, and µs per token of the micro-batch),
                                              beside the recipe's token dispatcher: what an unmodelled per-layer cost
                                              would have to be (docs/megatron-bridge.md, "The MoE rows' residual")

The held-out releases (data/megatron-bridge/README.md) are run with everything frozen as it was fitted and chosen on
25.11: the same calibration, hardware and rules. The settings their tables omit are borrowed from the 25.11 recipe
of the same system, model and precision, else of the same system and model, else of the same model
(`borrowed_recipe`); a table's bare "FP8" is taken as FP8 with current scaling, the recipe the 25.11 table names
for the same rows; a DeepSeek-V3 layout is the 25.11 one with as many virtual stages (`deepseek_layout`).

Each row is run as the table prints it (GPUs, TP, PP, CP, VP, EP, FSDP, GBS, MBS, sequence, precision) with
the settings the table leaves out from the Megatron-Bridge recipe that produced it
(data/megatron-bridge/recipes-25.11.csv: recomputation modules, TP-communication and EP all-to-all overlap,
precision-aware optimizer, pipeline layout, MTP), on DGX systems as docs/research/llm-hardware.md describes
them, with the one calibration per GPU type fitted on measured kernel tables only (data/calibration/llm/,
fit_calibration.py). Nothing here is fitted to the table, and there is no per-row constant; the only
number a row takes from its measurement is the expectation it is checked against.

Assumptions (docs/megatron-bridge.md): a GB200/GB300 job's NVLink domain is its share of NVL72 racks,
the largest multiple of 4 GPUs up to 72 that divides its GPU count (256 GPUs: 4 racks of 64); layouts that
no public recipe gives follow Megatron's account-for-embedding-and-loss split (Qwen3-235B, Llama 3.1 405B)
or the pattern of the recipe's DeepSeek-V3 layouts; activations offloaded to the CPU (Llama 3 70B on
GB200/GB300) leave the GPU's memory and their copies run over NVLink-C2C as Transformer Engine issues them.
"""
import csv
import json
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
DATA = HERE.parents[2] / "data" / "megatron-bridge"
HELDOUT = HERE.parent / "megatron-bridge-heldout"
HELDOUT_RELEASES = ("25.09", "26.02", "26.02.01", "26.04", "26.04.01", "26.06", "26.06.01", "26.08")
TOLERANCE = 0.25  # the bound on any row (mean |error| target 10%)

# DGX systems (docs/research/llm-hardware.md): GPU, GPUs per node (compute tray), NIC per GPU.
SYSTEMS = {
    "DGX-H100": ("H100-SXM", 8, "IB-NDR"),
    "DGX-B200": ("B200", 8, "IB-NDR"),
    "DGX-B300": ("B300", 8, "IB-XDR"),
    "DGX-GB200": ("GB200", 4, "IB-NDR"),
    "DGX-GB300": ("GB300", 4, "IB-XDR"),
}
# MoE layers (recipes-25.11.csv, moe_layer_freq): DeepSeek-V3's first 3 blocks are dense, the others all MoE.
MOE_LAYERS = {"deepseek-v3": 58, "qwen3-30b-a3b": 48, "qwen3-235b-a22b": 94, "gpt-oss-120b": 36}
BLOCKS = {"llama3-8b": 32, "llama3-70b": 80, "llama3.1-405b": 126, "deepseek-v3": 61, "qwen3-30b-a3b": 48,
          "qwen3-235b-a22b": 94, "gpt-oss-120b": 36}
# The recipes' DeepSeek-V3 layouts (recipes-25.11.csv); GB200 MXFP8's PP 8 x VP 4 has none public, so it
# follows their pattern (the embedding's stage one block short, the loss's two).
DEEPSEEK_LAYOUTS = {
    ("DGX-GB300", "bf16"): "Et*3|(t*4|)*14ttL",
    ("DGX-GB300", "mxfp8"): "Et*3|(t*4|)*14ttL",
    ("DGX-GB200", "bf16"): "Et*3|(t*4|)*14ttL",
    ("DGX-GB200", "mxfp8"): "Et|(tt|)*30L",
    ("DGX-B200", "mxfp8"): "Et*4|(t*4|)*14tmL",
}
# The same layouts by (virtual stages, MTP depth), for held-out rows: the first with that shape above.
DEEPSEEK_BY_SHAPE = {(16, 0): DEEPSEEK_LAYOUTS[("DGX-GB300", "bf16")], (16, 1): DEEPSEEK_LAYOUTS[("DGX-B200", "mxfp8")],
                     (32, 0): DEEPSEEK_LAYOUTS[("DGX-GB200", "mxfp8")]}
# What the alltoall rows' gaps say about their dispatcher (docs/megatron-bridge.md, "The MoE rows' residual" and
# "The dispatcher pair on 16 H100").
ALLTOALL_GAP = ("with the recipe's alltoall dispatcher (dropless: a device-to-host copy of the token counts and a stream "
                "synchronisation per MoE layer, Megatron-Core token_dispatcher.py; no public measurement prices the host time "
                "it exposes; one x86 DGX-H100 recipe measured with both dispatchers takes 2.05-2.27x as long per step with "
                "alltoall as with HybridEP: scenarios/papers/megatron-bridge-ab)")
# Simulated tokens/s/GPU measured with these scenarios on 2026-12-04 (the Blackwell attention measurement; the MXFP8 rows on
# 2026-12-07, MXFP8's GEMM kernels measured) (docs/megatron-bridge.md has the command)
# and what the run shows about why; written into the known_gap of a row outside the tolerance so that the gap
# is on record, never used to tune.
MEASURED = {
    'gb300-llama3-8b-fp8-cs': (36081, "compute-bound (100% compute, 0.1% exposed communication): the kernels run slower than measured (GB300's catalog peaks and GEMM calibration are GB200's): the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf); GB300 has GB200's catalog peaks and GEMM calibration (clocks and power not in the catalog) and its own attention measurement"),
    'gb300-llama3-8b-mxfp8': (35529, "compute-bound (100% compute, 0.1% exposed communication): the kernels run slower than measured (GB300's catalog peaks and GEMM calibration are GB200's): the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf); GB300 has GB200's catalog peaks and GEMM calibration (clocks and power not in the catalog) and its own attention measurement"),
    'gb300-llama3-70b-fp8-cs': (4970, "fits in memory (239.8 of 277.5 GiB per GPU: the recipe's 20 blocks offloaded to the host, their copies over NVLink-C2C hidden under the compute at its 450 GB/s, and FP8 saved inputs); compute-bound (100% compute, 0.1% exposed communication): the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf)"),
    'gb300-llama3p1-405b-fp8-cs': (797, "compute-bound (98% compute, 0.1% exposed communication): the kernels run slower than measured (GB300's catalog peaks and GEMM calibration are GB200's): the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf); GB300 has GB200's catalog peaks and GEMM calibration (clocks and power not in the catalog) and its own attention measurement"),
    'gb300-deepseek-v3-bf16': (3376, "82% compute, 18% exposed communication (EP all-to-alls): the routed experts run as one GEMM per expert at its shape's efficiency on the dense grid, the token permutation as memory traffic only, routing perfectly balanced, and no host time is modelled; the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf); the measured step exceeds the simulated one by -2.57 ms per MoE layer and micro-batch (-0.63 us per token and layer, bridge_table.py residual) with the recipe's flex dispatcher"),
    'gb300-deepseek-v3-mxfp8': (4289, "76% compute, 23% exposed communication (EP all-to-alls): the routed experts run as one GEMM per expert at its shape's efficiency on the dense grid, the token permutation as memory traffic only, routing perfectly balanced, and no host time is modelled; the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf); the measured step exceeds the simulated one by -0.26 ms per MoE layer and micro-batch (-0.06 us per token and layer, bridge_table.py residual) with the recipe's flex dispatcher"),
    'gb300-gpt-oss-120b-bf16': (23619, "84% compute, 16% exposed communication (EP all-to-alls): the routed experts run as one GEMM per expert at its shape's efficiency on the dense grid, the token permutation as memory traffic only, routing perfectly balanced, and no host time is modelled; the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf); the measured step exceeds the simulated one by +5.54 ms per MoE layer and micro-batch (+0.34 us per token and layer, bridge_table.py residual) " + ALLTOALL_GAP + "; GPT-OSS's own eager passes in Megatron-Core 0.15 (unfused YaRN RoPE, the activation's clamp, fc2's bias added per expert, the attention output's bias add: zoo_llm.hpp) are priced by their bytes"),
    'gb300-qwen3-30b-a3b-mxfp8': (29130, "68% compute, 32% exposed communication (EP all-to-alls): the routed experts run as one GEMM per expert at its shape's efficiency on the dense grid, the token permutation as memory traffic only, routing perfectly balanced, and no host time is modelled; the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf); the measured step exceeds the simulated one by +0.08 ms per MoE layer and micro-batch (+0.00 us per token and layer, bridge_table.py residual) with the recipe's flex dispatcher"),
    'gb300-qwen3-235b-a22b-bf16': (5186, "73% compute, 25% exposed communication (EP all-to-alls): the routed experts run as one GEMM per expert at its shape's efficiency on the dense grid, the token permutation as memory traffic only, routing perfectly balanced, and no host time is modelled; the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf); the measured step exceeds the simulated one by -2.59 ms per MoE layer and micro-batch (-0.32 us per token and layer, bridge_table.py residual) with the recipe's flex dispatcher"),
    'gb200-llama3-8b-fp8-cs': (35179, "compute-bound (100% compute, 0.1% exposed communication): the kernels run faster than measured: the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf)"),
    'gb200-llama3-8b-mxfp8': (34654, "compute-bound (100% compute, 0.1% exposed communication): the kernels run faster than measured: the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf)"),
    'gb200-llama3-70b-fp8-cs': (4884, "fits in memory (167.2 of 185.0 GiB per GPU: the recipe's 40 blocks offloaded to the host, their copies over NVLink-C2C hidden under the compute at its 450 GB/s, and FP8 saved inputs); compute-bound (100% compute, 0.1% exposed communication): the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf)"),
    'gb200-llama3p1-405b-fp8-cs': (842, "fits in memory (168.1 of 185.0 GiB per GPU with FP8 saved inputs); compute-bound (98% compute, 0.3% exposed communication): the kernels run faster than measured, as the other dense rows"),
    'gb200-deepseek-v3-bf16': (3189, "fits in memory (159.9 of 185.0 GiB per GPU: mla_up_proj frees the core's Q, K, V; the experts' optimizer state is not sharded at EP 64); 78% compute, 18% exposed communication (EP all-to-alls); the MoE mechanisms of the other MoE rows; the measured step exceeds the simulated one by +0.35 ms per MoE layer and micro-batch (+0.09 us per token and layer, bridge_table.py residual) with the recipe's flex dispatcher"),
    'gb200-deepseek-v3-mxfp8': (3968, "74% compute, 21% exposed communication (EP all-to-alls): the routed experts run as one GEMM per expert at its shape's efficiency on the dense grid, the token permutation as memory traffic only, routing perfectly balanced, and no host time is modelled; the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf); the measured step exceeds the simulated one by -0.22 ms per MoE layer and micro-batch (-0.05 us per token and layer, bridge_table.py residual) with the recipe's flex dispatcher"),
    'gb200-gpt-oss-120b-bf16': (22728, "84% compute, 16% exposed communication (EP all-to-alls): the routed experts run as one GEMM per expert at its shape's efficiency on the dense grid, the token permutation as memory traffic only, routing perfectly balanced, and no host time is modelled; the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf); the measured step exceeds the simulated one by +4.32 ms per MoE layer and micro-batch (+0.53 us per token and layer, bridge_table.py residual) with the recipe's flex dispatcher; GPT-OSS's own eager passes in Megatron-Core 0.15 (unfused YaRN RoPE, the activation's clamp, fc2's bias added per expert, the attention output's bias add: zoo_llm.hpp) are priced by their bytes"),
    'gb200-qwen3-30b-a3b-mxfp8': (28196, "69% compute, 31% exposed communication (EP all-to-alls): the routed experts run as one GEMM per expert at its shape's efficiency on the dense grid, the token permutation as memory traffic only, routing perfectly balanced, and no host time is modelled; the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf); the measured step exceeds the simulated one by +2.26 ms per MoE layer and micro-batch (+0.14 us per token and layer, bridge_table.py residual) with the recipe's flex dispatcher"),
    'gb200-qwen3-235b-a22b-bf16': (4814, "71% compute, 24% exposed communication (EP all-to-alls): the routed experts run as one GEMM per expert at its shape's efficiency on the dense grid, the token permutation as memory traffic only, routing perfectly balanced, and no host time is modelled; the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf); the measured step exceeds the simulated one by -0.19 ms per MoE layer and micro-batch (-0.05 us per token and layer, bridge_table.py residual) with the recipe's flex dispatcher"),
    'b200-llama3-8b-fp8-cs': (31965, "compute-bound (100% compute, 0.1% exposed communication): the kernels run faster than measured: the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf)"),
    'b200-llama3-8b-mxfp8': (31461, "compute-bound (100% compute, 0.1% exposed communication): the kernels run faster than measured: the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf)"),
    'b200-llama3p1-405b-fp8-cs': (634, "compute-bound (93% compute, 2.7% exposed communication): the kernels run faster than measured: the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf)"),
    'b200-llama3p1-405b-mxfp8': (616, "compute-bound (93% compute, 2.7% exposed communication): the kernels run faster than measured: the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf)"),
    'b200-deepseek-v3-mxfp8': (2787, "71% compute, 18% exposed communication (EP all-to-alls): the routed experts run as one GEMM per expert at its shape's efficiency on the dense grid, the token permutation as memory traffic only, routing perfectly balanced, and no host time is modelled; the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf); the measured step exceeds the simulated one by +7.55 ms per MoE layer and micro-batch (+1.84 us per token and layer, bridge_table.py residual) " + ALLTOALL_GAP),
    'b200-gpt-oss-120b-bf16': (12782, "53% compute, 47% exposed communication (EP all-to-alls): the routed experts run as one GEMM per expert at its shape's efficiency on the dense grid, the token permutation as memory traffic only, routing perfectly balanced, and no host time is modelled; the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf); the measured step exceeds the simulated one by +19.81 ms per MoE layer and micro-batch (+1.21 us per token and layer, bridge_table.py residual) " + ALLTOALL_GAP + "; GPT-OSS's own eager passes in Megatron-Core 0.15 (unfused YaRN RoPE, the activation's clamp, fc2's bias added per expert, the attention output's bias add: zoo_llm.hpp) are priced by their bytes"),
    'b200-qwen3-30b-a3b-mxfp8': (21872, "74% compute, 26% exposed communication (EP all-to-alls); MBS 1 (GA 64) where GB200 and GB300 run MBS 4 and measure 2.6 and 3.1 times as much; a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) only took it to 23963 (+158%, measured before sustained_compute), so host issue alone does not explain it; the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf); the measured step exceeds the simulated one by +5.28 ms per MoE layer and micro-batch (+1.29 us per token and layer, bridge_table.py residual) " + ALLTOALL_GAP + "; NVIDIA records this measurement as a regression: Megatron-Bridge issue #1998 (2026-01-20) reports Qwen3 30B on H100 and B200 2x slower with the dropless schedule than with the token-drop one, 25.11 2x slower than 25.09 (whose rows, labelled tokendrop, measure 1.94x and 1.99x as much on these layouts), and PR #2499 (2026-02-23) moved the B200 recipe to the flex (HybridEP) dispatcher at MBS 4 (about 555 TFLOP/s/GPU in MXFP8 on 8 B200, 2.6x this row's 214)"),
    'b200-qwen3-235b-a22b-mxfp8': (4914, "70% compute, 23% exposed communication (EP all-to-alls): the routed experts run as one GEMM per expert at its shape's efficiency on the dense grid, the token permutation as memory traffic only, routing perfectly balanced, and no host time is modelled; the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf); the measured step exceeds the simulated one by +4.46 ms per MoE layer and micro-batch (+1.09 us per token and layer, bridge_table.py residual) " + ALLTOALL_GAP + "; this row's 20.1 s step is the starting point of Megatron-Bridge PR #1760 (2025-12-17), which calls it a regression from 25.09 and measures 16.9 s with moe_a2a_overlap off (\"CPU overhead\") and VP off (3,878 tokens/s/GPU)"),
    'h100-llama3-8b-fp8-cs': (15791, "compute-bound (100% compute, 0.0% exposed communication): the kernels run faster than measured: the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf)"),
    'h100-llama3-70b-fp8-cs': (1660, "compute-bound (86% compute, 1.4% exposed communication): the kernels run faster than measured: the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf)"),
    'h100-llama3p1-405b-fp8-cs': (332, "compute-bound (96% compute, 1.2% exposed communication): the kernels run faster than measured: the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf)"),
    'h100-gpt-oss-120b-bf16': (7150, "out of memory at the table's MBS 4 (needs 101.2 GiB, has 80 GiB, with the recompute modules' freed tensors subtracted and the experts' optimizer state over the 2 expert data-parallel ranks); the release recipe's MBS 1 (the table's GA 2 fits neither) needs 47.9 GiB and runs 7502 tokens/s/GPU; 54% compute, 12% exposed communication (EP all-to-alls) and 34% idle (the PP 4 bubble); the MoE mechanisms of the other MoE rows; the measured step exceeds the simulated one by +17.18 ms per MoE layer and micro-batch (+1.05 us per token and layer, bridge_table.py residual) " + ALLTOALL_GAP + "; GPT-OSS's own eager passes in Megatron-Core 0.15 (unfused YaRN RoPE, the activation's clamp, fc2's bias added per expert, the attention output's bias add: zoo_llm.hpp) are priced by their bytes"),
    'h100-qwen3-30b-a3b-fp8-cs': (17604, "94% compute, 1.3% exposed communication; PP 2 x VP 24 puts one block in each of 48 virtual stages: per-step pipeline overheads (P2P launches and synchronisation) are not modelled, and a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) only took it to 17181 (+226%, measured before sustained_compute), and the measured 121 TFLOP/s/GPU is 12% of the BF16 peak; the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf); the measured step exceeds the simulated one by +22.66 ms per MoE layer and micro-batch (+2.77 us per token and layer, bridge_table.py residual) " + ALLTOALL_GAP + "; NVIDIA records this measurement as a regression: Megatron-Bridge issue #1998 (2026-01-20) reports Qwen3 30B on H100 and B200 2x slower with the dropless schedule than with the token-drop one, 25.11 2x slower than 25.09 (whose rows, labelled tokendrop, measure 1.94x and 1.99x as much on these layouts); the same H100 layout (PP 2 x VP 12, EP 8, MBS 1, GBS 1,024) measures 5,113 tokens/s/GPU in 26.02 and 9,058 in 26.02.01 (held out: read, nothing chosen)"),
    'h100-qwen3-235b-a22b-fp8-cs': (2334, "63% compute, 33% exposed communication (EP all-to-alls): the routed experts run as one GEMM per expert at its shape's efficiency on the dense grid, the token permutation as memory traffic only, routing perfectly balanced, and no host time is modelled; the calibration's GEMM grids are XLA's cuBLAS measurements, the attention core runs at cuDNN's fused-attention rate per head and sequence, measured on H100 (FlashAttention-3 paper) and on B200 and GB300 (cuDNN 9.13, data/gpu-perf/cudnn-sdpa); a host launch cost of 160 us per sub-layer (the A100 Megatron-DeepSpeed fit) moves the H100 Llama 3 8B row by < 0.1% (measured), and the GEMM and attention rates are those a power-limited GPU sustains (sustained_compute, MSMF / MAMF of data/gpu-perf/mamf); the measured step exceeds the simulated one by +4.50 ms per MoE layer and micro-batch (+2.20 us per token and layer, bridge_table.py residual) " + ALLTOALL_GAP),
}


def table(release):
    return list(csv.DictReader(open(DATA / f"performance-{release}.csv", encoding="utf-8")))


def rows():
    recipes = list(csv.DictReader(open(DATA / "recipes-25.11.csv", encoding="utf-8")))
    for row, recipe in zip(table("25.11"), recipes):
        assert (row["system"], row["model"], row["precision"]) == (recipe["system"], recipe["model"], recipe["precision"])
        yield row, recipe


def borrowed_recipe(row, recipes):
    """The 25.11 recipe nearest a held-out row: same system, model and precision, else system and model, else model."""
    for key in (("system", "model", "precision"), ("system", "model"), ("model",)):
        found = [r for r in recipes if all(r[k] == row[k] for k in key)]
        if found:
            return found[0]
    return None


def unexpressible(row):
    """Why dnnsim cannot run a held-out row as published, or None."""
    if row["task"] != "pretrain":
        return f"{row['task']}: fine-tuning (packed sequences{', frozen weights and adapters' if row['task'] == 'lora' else ''}) is not modelled"
    if row["system"] not in SYSTEMS:
        return f"{row['system']}: the GPU is not in the hardware catalog"
    if row["model"] not in BLOCKS:
        return f"{row['model']}: not in the model zoo"
    if row["precision"] not in ("bf16", "fp8-cs", "mxfp8", "fp8"):
        return f"precision {row['precision']}: no such recipe in models/dnn/precision_recipe.hpp"
    if (integer(row["num_gpus"]) // integer(row["pp"])) % integer(row["ep"]):
        return (f"EP {row['ep']} does not divide a pipeline stage's {integer(row['num_gpus']) // integer(row['pp'])} GPUs, "
                "from which Megatron carves the expert groups (expert data parallel = GPUs / (EP · PP))")
    stages = integer(row["pp"]) * integer(row["vp"])
    if row["model"] in ("llama3.1-405b", "qwen3-235b-a22b") and stages > 1 and (BLOCKS[row["model"]] + 2) % stages:
        return f"{stages} virtual stages do not divide {row['model']}'s blocks with embedding and loss counted as one each"
    if row["model"] == "deepseek-v3" and (deepseek_shape(row) not in DEEPSEEK_BY_SHAPE):
        return f"DeepSeek-V3 on {deepseek_shape(row)[0]} virtual stages: no public layout of that shape"
    return None


def heldout_rows(releases=HELDOUT_RELEASES):
    """Every held-out row of `releases` as (row, borrowed 25.11 recipe or None, why it cannot be run or None)."""
    recipes = list(csv.DictReader(open(DATA / "recipes-25.11.csv", encoding="utf-8")))
    for release in releases:
        for row in table(release):
            row = dict(row, precision="fp8-cs" if row["precision"] == "fp8" else row["precision"],
                       published_precision=row["precision"])
            why = unexpressible(row)
            yield row, None if why else borrowed_recipe(row, recipes), why


def integer(text, default=1):
    return int(text) if text.strip().isdigit() else default


def name(row):
    stem = f"{row['gpu'].lower()}-{row['model']}-{row['precision']}".replace(".", "p")
    if row["release"] == "25.11":
        return stem
    # 26.06 has two DeepSeek-V3 GB300 MXFP8 rows, told apart by their global batch.
    return f"r{row['release'].replace('.', 'p')}-{stem}" + (f"-gbs{row['gbs']}" if row["gbs"] != "4096" and
                                                            row["model"] == "deepseek-v3" else "")


def nvlink_domain(gpus, per_node):
    """The job's share of NVL72 racks: the largest multiple of the tray that divides the GPUs, up to 72."""
    return max(d for d in range(per_node, 73, per_node) if gpus % d == 0)


def accounted_layout(blocks, stages):
    """Megatron's account_for_embedding/loss_in_pipeline_split: E and L count as one block each."""
    per = (blocks + 2) // stages
    assert per * stages == blocks + 2 and per >= 1, (blocks, stages)
    middle = f"({'t' * per}|)*{stages - 2}" if stages > 2 else ""
    return f"E{'t' * (per - 1)}|{middle}{'t' * (per - 1)}L"


def mtp(row):
    return 1 if "w/ MTP" in row["model_label"] else 0


def deepseek_shape(row):
    return integer(row["pp"]) * integer(row["vp"]), mtp(row)


def deepseek_layout(row):
    if row["release"] == "25.11":
        return DEEPSEEK_LAYOUTS[(row["system"], row["precision"])]
    return DEEPSEEK_BY_SHAPE[deepseek_shape(row)]


def layout(row):
    model, pp, vp = row["model"], integer(row["pp"]), integer(row["vp"])
    if model == "deepseek-v3":
        return deepseek_layout(row)
    if model in ("llama3.1-405b", "qwen3-235b-a22b") and pp > 1:
        return accounted_layout(BLOCKS[model], pp * vp)
    return None


def modules(recipe):
    """The selective recomputation modules the recipe runs with (none unless granularity is selective)."""
    if not recipe["recompute_granularity"].startswith("selective") or "only if" in recipe["recompute_granularity"]:
        return []
    found = re.search(r"\[([^\]]*)\]", recipe["recompute_modules"])
    return [m.strip(" '\"") for m in found.group(1).split(",") if m.strip(" '\"")] if found else []


def offloaded_layers(recipe):
    """cpu_offloading_num_layers of the recipe (Megatron-Core's activation offload to the host), 0 without."""
    found = re.match(r"\s*(\d+)", recipe["cpu_activation_offload_layers"])
    return int(found.group(1)) if found else 0


def expand(text):
    """Megatron's layout shorthand written out: (x)*n and x*n repeated (planners/parallel/pipeline_layout.hpp)."""
    while "(" in text:
        text = re.sub(r"\(([^()]*)\)\*(\d+)", lambda m: m.group(1) * int(m.group(2)), text)
    return re.sub(r"(.)\*(\d+)", lambda m: m.group(1) * int(m.group(2)), text)


def chunks(row):
    """Model chunks per stage: the table's VP, or what the recipe's layout implies (GB300 DeepSeek-V3)."""
    pp, vp = integer(row["pp"]), integer(row["vp"])
    if row["model"] == "deepseek-v3":
        return (expand(deepseek_layout(row)).count("|") + 1) // pp
    return vp


def scenario(row, recipe):
    gpu, per_node, nic = SYSTEMS[row["system"]]
    gpus, tp, pp, cp, ep = (integer(row[k]) for k in ("num_gpus", "tp", "pp", "cp", "ep"))
    gbs, mbs, seq, fsdp = integer(row["gbs"]), integer(row["mbs"]), integer(row["seq_len"]), integer(row["fsdp"], 0)
    dp = gpus // (tp * pp * cp)
    v = chunks(row)
    node = "dgx" if per_node == 8 else "tray"
    domain = f"\n      nvlink_domain: {nvlink_domain(gpus, per_node)}" if per_node == 4 else ""
    model = f"{{zoo: {row['model']}, seq: {seq}" + (f", mtp: {mtp(row)}" if row["model"] == "deepseek-v3" else "") + "}"
    # Megatron-Core overlaps the interleaved schedule's sends (overlap_p2p_comm, on with VP > 1 in every recipe).
    schedule = f"{{name: interleaved, chunks: {v}, overlap_p2p: true}}" if v > 1 else "1f1b"
    the_layout = layout(row)
    planner = f"{{name: uniform, stages: {pp}" + (f", layout: \"{the_layout}\"" if the_layout else "") + "}"
    keys = [f"tensor_parallel: {tp}"]
    if tp > 1:
        keys.append("sequence_parallel: true")
    if cp > 1:
        keys.append(f"context_parallel: {cp}")
    if ep > 1:
        keys.append(f"expert_parallel: {ep}")
    keys.append("fsdp: true" if fsdp else "distributed_optimizer: true")
    keys.append(f"precision_recipe: {row['precision']}")
    if recipe["precision_aware_optimizer"].startswith("True"):
        keys.append("precision_aware_optimizer: true")
    if recipe["tp_comm_overlap"].startswith("True") and tp > 1:
        keys.append("tensor_parallel_overlap: true")
    if modules(recipe):
        keys.append(f"recompute_modules: [{', '.join(modules(recipe))}]")
    if offloaded_layers(recipe) and pp == 1:  # Megatron-Core refuses CPU offloading with a pipeline
        keys.append(f"activation_offload_layers: {offloaded_layers(recipe)}")
    if ep > 1:
        keys.append(f"moe: {{overlap: {'true' if recipe['ep_a2a_overlap'].startswith('True') else 'false'}}}")
    layout_note = f"; pipeline layout {the_layout}" if the_layout else ""
    if row["release"] == "25.11":
        settings = f"{recipe['settings_from']} recipe ({recipe['layout_match_commit'][:12]}),\n# data/megatron-bridge/recipes-25.11.csv"
    else:
        settings = (f"HELD OUT (nothing fitted or chosen on it); the 25.11\n# recipe of {recipe['system']} {recipe['model']} "
                    f"{recipe['precision']} (data/megatron-bridge/recipes-25.11.csv)")
    return f"""# Megatron-Bridge {row['release']} (NVIDIA-NeMo/Megatron-Bridge/docs/performance-summary.md, archived;
# data/megatron-bridge/): {row['system']} {row['model_label']} {row['precision_label']}, {gpus} GPUs,
# TP {tp} x PP {pp} x CP {cp} x VP {row['vp']} x EP {ep}, DP {dp}, FSDP {fsdp}, GBS {gbs}, MBS {mbs}, sequence {seq}
# (GA {gbs // (mbs * dp)}{layout_note}). Published: {row['tokens_per_s_per_gpu']} tokens/s/GPU, {row['model_tflops_per_gpu']}
# model TFLOP/s/GPU. Settings the table omits: {settings}. Written by bridge_table.py.
name: megatron-bridge-{name(row)}
description: "Megatron-Bridge {row['release']}: {row['model_label']} {row['precision_label']} on {gpus} {gpu}"

cluster:
  node_types:
    {node}:
      gpu: {gpu}
      gpus_per_node: {per_node}
      fabric: nvswitch{domain}
      nic: {{link: {nic}, per_gpu: true}}
  nodes:
    - {{type: {node}, count: {gpus // per_node}}}
  interconnect: {{kind: switch, latency: "1us"}}

workload:
  kind: pipeline
  model: {model}
  global_batch: {gbs}
  micro_batch_size: {dp * mbs}
  dtype: bf16
  precision: mixed
  schedule: {schedule}
  planner: {planner}
  {chr(10).join('  ' + k for k in keys).strip()}
  # Megatron's DDP: 128 MiB gradient buckets overlapped with the backward (overlap_grad_reduce).
  bucket_size: 128MiB
  overlap: true
  tensor_parallel_fidelity: auto
  data_parallel_fidelity: auto

# One calibration per GPU type, fitted on measured kernel tables only: XLA's GEMM and collective tables, cuDNN's
# attention (FlashAttention-3 paper), sustained / burst matmul rates (MSMF / MAMF) (fit_calibration.py).
calibration: ../../../data/calibration/llm/{gpu}.yaml

run: {{iterations: 1, collective_fidelity: flow}}
outputs: {{trace: false, tasks_csv: false}}
""" + expect(row)


def expect(row):
    value = float(row["tokens_per_s_per_gpu"])
    text = f"""
expect:
  - metric: mean.tokens_per_s_per_gpu
    value: {value:g}
    tolerance: "{int(TOLERANCE * 100)}%"
    source: "Megatron-Bridge {row['release']} performance summary: {row['system']} {row['model_label']} {row['precision_label']}"
"""
    measured = MEASURED.get(name(row)) if row["release"] == "25.11" else heldout_measured().get(name(row))
    if measured is not None and abs(measured[0] / value - 1) > TOLERANCE:
        text += f"""    known_gap: >-
      measured {measured[0]:.0f} tokens/s/GPU ({100 * (measured[0] / value - 1):+.1f}%): {measured[1]}
"""
    return text


def heldout_measured():
    """Simulated tokens/s/GPU of the held-out rows as last recorded (`report --heldout --record`), for their known gaps."""
    path = HELDOUT / "measured.csv"
    if not path.exists():
        return {}
    return {r["scenario"]: (float(r["simulated"]), r["why"]) for r in csv.DictReader(open(path, encoding="utf-8"))}


def write(heldout):
    if heldout is None:
        for row, recipe in rows():
            (HERE / f"{name(row)}.yaml").write_text(scenario(row, recipe))
        return
    HELDOUT.mkdir(exist_ok=True)
    skipped = []
    for row, recipe, why in heldout_rows(heldout):
        if why:
            skipped.append(f"| {row['release']} | {row['task']} | {row['system']} | {row['model_label']} | "
                           f"{row['published_precision']} | {row['tokens_per_s_per_gpu']} | {why} |")
        else:
            (HELDOUT / f"{name(row)}.yaml").write_text(scenario(row, recipe))
    (HELDOUT / "not-run.md").write_text(
        "# Held-out Megatron-Bridge rows dnnsim cannot express\n\nWritten by `../megatron-bridge/bridge_table.py write "
        "--heldout`; docs/megatron-bridge.md has the held-out results.\n\n| release | task | system | model | precision | "
        "published tok/s/GPU | why not run |\n|---|---|---|---|---|---:|---|\n" + "\n".join(skipped) + "\n")


def simulated(out, row):
    """The run's mean section, or None when `dnnsim regress --out OUT` did not keep it (OUT/runs/<stem>/)."""
    path = pathlib.Path(out) / "runs" / name(row) / "summary.json"
    return json.loads(path.read_text())["mean"] if path.exists() else None


def report(out, heldout=None, record=False):
    chosen = [(row, None) for row, recipe, why in heldout_rows(heldout) if not why] if heldout else list(rows())
    errors, by_release, recorded = [], {}, []
    release_head = "release | " if heldout else ""
    print(f"| {release_head}system | model | precision | GPUs | TP×PP×CP×VP×EP | published tok/s/GPU | simulated | error | "
          "published TFLOP/s | simulated TFLOP/s |")
    print("|---|" + ("---|" if heldout else "") + "---|---|---:|---|---:|---:|---:|---:|---:|")
    for row, _ in chosen:
        layout_text = "×".join(row[k] for k in ("tp", "pp", "cp", "vp", "ep"))
        published = float(row["tokens_per_s_per_gpu"])
        release = f"{row['release']} | " if heldout else ""
        head = (f"| {release}{row['system']} | {row['model']} | {row['precision']} | {row['num_gpus']} | {layout_text} | "
                f"{published:g}")
        mean = simulated(out, row)
        if mean is None:
            print(f"{head} | not run | | {row['model_tflops_per_gpu']} | |")
            continue
        tokens = mean["tokens_per_s_per_gpu"]
        error = tokens / published - 1
        errors.append(abs(error))
        by_release.setdefault(row["release"], []).append(abs(error))
        recorded.append((name(row), tokens, error))
        print(f"{head} | {tokens:.0f} | {100 * error:+.1f}% | {row['model_tflops_per_gpu']} | "
              f"{mean.get('framework_model_tflops_per_gpu', 0):.0f} |")
    if errors:
        print(f"\nmean |error| {100 * sum(errors) / len(errors):.1f}%, max {100 * max(errors):.1f}% over {len(errors)} rows")
    if heldout:
        for release, found in by_release.items():
            print(f"{release}: mean |error| {100 * sum(found) / len(found):.1f}%, max {100 * max(found):.1f}% "
                  f"over {len(found)} rows")
    if record:
        with open(HELDOUT / "measured.csv", "w", encoding="utf-8", newline="") as file:
            writer = csv.writer(file, lineterminator="\n")
            writer.writerow(["scenario", "simulated", "why"])
            for stem, tokens, error in recorded:
                writer.writerow([stem, f"{tokens:.0f}", "held-out row, nothing fitted or chosen on it; the 25.11 rows' "
                                 "measured mechanisms (docs/megatron-bridge.md) are the record of why"])


def residual(out, heldout=None):
    """Measured minus simulated step of each MoE row, per MoE layer a GPU runs and per micro-batch: a cost paid once
    per layer and micro-batch (a host synchronisation, launches) would be this large; one per token, its µs column."""
    chosen = [(r, recipe) for r, recipe, why in heldout_rows(heldout) if not why] if heldout else list(rows())
    print("| row | dispatcher | MBS | micro-batches | MoE layers per GPU | measured step s | simulated step s | "
          "residual ms per MoE layer and micro-batch | µs per token and MoE layer |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for row, recipe in chosen:
        mean = simulated(out, row)
        if row["model"] not in MOE_LAYERS or mean is None:
            continue
        gpus, mbs, seq = int(row["num_gpus"]), int(row["mbs"]), int(row["seq_len"])
        tp, pp, cp = integer(row["tp"]), integer(row["pp"]), integer(row["cp"])
        micro_batches = int(row["gbs"]) // (mbs * gpus // (tp * pp * cp))
        layers = (MOE_LAYERS[row["model"]] + mtp(row)) / pp
        measured = int(row["gbs"]) * seq / gpus / float(row["tokens_per_s_per_gpu"])
        step = mean["iteration_time_s"]
        per_layer = (measured - step) / (micro_batches * layers)
        tokens = mbs * seq / (tp * cp)  # a GPU's tokens of one micro-batch (sequence parallel over TP)
        dispatcher = recipe["moe_token_dispatcher"] if recipe else "?"
        print(f"| {name(row)} | {dispatcher} | {mbs} | {micro_batches} | {layers:g} | {measured:.2f} | {step:.2f} | "
              f"{1e3 * per_layer:+.2f} | {1e6 * per_layer / tokens:+.2f} |")


def releases(flags):
    """--heldout (every held-out release) or --heldout=R,... (those), else None (the 25.11 table)."""
    for flag in flags:
        if flag == "--heldout":
            return HELDOUT_RELEASES
        if flag.startswith("--heldout="):
            chosen = tuple(flag.split("=", 1)[1].split(","))
            if not set(chosen) <= set(HELDOUT_RELEASES):
                sys.exit(f"unknown held-out release in {flag}; they are {', '.join(HELDOUT_RELEASES)}")
            return chosen
    return None


if __name__ == "__main__":
    flags = [a for a in sys.argv[2:] if a.startswith("--")]
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    known = all(f == "--record" or f.split("=")[0] == "--heldout" for f in flags)
    if args == ["write"] and known and "--record" not in flags:
        write(releases(flags))
    elif len(args) == 2 and args[0] == "report" and known:
        report(args[1], releases(flags), "--record" in flags)
    elif len(args) == 2 and args[0] == "residual" and known and "--record" not in flags:
        residual(args[1], releases(flags))
    else:
        sys.exit(__doc__)
