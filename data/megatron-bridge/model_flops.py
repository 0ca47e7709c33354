#!/usr/bin/env python3
"""Reference re-implementation of Megatron-Bridge's "Model TFLOP/s/GPU" FLOP count (stdlib only).

Megatron-Bridge computes the column with `num_floating_point_operations(cfg, batch_size)` in
src/megatron/bridge/training/utils/flop_utils.py (NVIDIA-NeMo/Megatron-Bridge tag v0.2.1,
commit 1c43b39285a4605799ca0ab5a69fe2f254802e18, the 25.11 release branch) and reports
    TFLOP/s/GPU = flops(GBS sequences) / step_time / world_size / 1e12
(src/megatron/bridge/training/utils/train_utils.py). Tokens/s/GPU = GBS * seq / step_time / world_size,
so TFLOP/s/GPU / (tokens/s/GPU) = flops per sequence / seq = FLOPs per token (x 1e-12).

This file transcribes the `transformer_flops()` branch of that function (the one every 25.11 model
takes) with the architectures that the 25.11 recipes instantiate (see docs/research/llm-models.md),
and compares it with performance-25.11.csv. Run:

    python3 model_flops.py            # prints one line per 25.11 row and the worst ratio
"""

import csv
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Architectures as instantiated by the 25.11 recipes (Megatron-Bridge model providers at v0.2.1).
# swiglu: the formula multiplies the MLP by 3/2 only when gated_linear_unit is True AND
# activation_func is torch.nn.functional.silu. GPT-OSS uses quick_gelu, so it gets 1.0.
MODELS = {
    "llama3-8b": dict(L=32, h=4096, heads=32, groups=8, kv=128, ffn=14336, swiglu=True, V=128256, div=128),
    "llama3-70b": dict(L=80, h=8192, heads=64, groups=8, kv=128, ffn=28672, swiglu=True, V=128256, div=128),
    "llama3.1-405b": dict(L=126, h=16384, heads=128, groups=8, kv=128, ffn=53248, swiglu=True, V=128256, div=128),
    "deepseek-v3": dict(L=61, h=7168, heads=128, mla=True, q_lora=1536, kv_lora=512, qk=128, qk_pos=64, v=128,
                        ffn=18432, moe_ffn=2048, shared=2048, topk=8, moe_pattern=[0] * 3 + [1] * 58,
                        swiglu=True, V=129280, div=1280),
    "qwen3-30b-a3b": dict(L=48, h=2048, heads=32, groups=4, kv=128, ffn=6144, moe_ffn=768, shared=0, topk=8,
                          moe_pattern=[1] * 48, swiglu=True, V=151936, div=128),
    "qwen3-235b-a22b": dict(L=94, h=4096, heads=64, groups=4, kv=128, ffn=12288, moe_ffn=1536, shared=0, topk=8,
                            moe_pattern=[1] * 94, swiglu=True, V=151936, div=128),
    "gpt-oss-120b": dict(L=36, h=2880, heads=64, groups=8, kv=64, ffn=2880, moe_ffn=2880, shared=0, topk=4,
                         moe_pattern=[1] * 36, swiglu=False, V=201088, div=128),
}


def padded_vocab(V, divisible_by, tp):
    m = divisible_by * tp
    return int(math.ceil(V / m) * m)


def flops_per_sequence(model, seq, tp=1, mtp_layers=0):
    """FLOPs (forward + backward, 3x forward GEMMs) for one sequence of `seq` tokens; also the terms."""
    m = MODELS[model]
    L, h = m["L"], m["h"]
    pattern = m.get("moe_pattern")
    if pattern is None:
        n_moe, n_dense, k, last_is_moe = 0, L, 0, 0
    else:
        n_moe, k, last_is_moe = sum(pattern), m["topk"], pattern[-1]
        n_dense = L - n_moe
    # MTP layers count as extra decoder layers of the last layer's kind
    n_moe += last_is_moe * mtp_layers
    n_dense += (1 - last_is_moe) * mtp_layers
    nl = L + mtp_layers
    moe_ffn = m.get("moe_ffn") or m["ffn"]
    shared = m.get("shared", 0) or 0
    g = 1.5 if m["swiglu"] else 1.0
    ef = 3 * 2 * 2  # fwd+wgrad+dgrad, two GEMMs per block, 2 FLOPs per MAC
    if m.get("mla"):
        q_term = m["q_lora"] * (h + m["heads"] * (m["qk"] + m["qk_pos"]) + 1)
        attn = 3 * 2 * nl * (
            q_term
            + m["kv_lora"] * (h + m["heads"] * (m["qk"] + m["v"]) + 1)
            + h * m["qk_pos"]
            + m["heads"] * m["v"] * h
            + seq * (m["heads"] * (m["qk"] + m["qk_pos"])) / 2
            + seq * m["heads"] * m["v"] / 2
        )
    else:
        ratio = m["kv"] * m["heads"] / h
        attn = ef * nl * h * h * ((1 + m["groups"] / m["heads"] + seq / h / 2) * ratio)
    mlp = ef * nl * h * (m["ffn"] * g * (n_dense / nl) + moe_ffn * k * g * (n_moe / nl) + shared * g * (n_moe / nl))
    mtp = 3 * 2 * mtp_layers * (3 * h + 2 * h * h)
    logits = 3 * 2 * h * padded_vocab(m["V"], m["div"], tp) * (mtp_layers + 1)
    terms = dict(mlp=seq * mlp, attn=seq * attn, mtp=seq * mtp, logits=seq * logits)
    return sum(terms.values()), terms


def main():
    rows = list(csv.DictReader(open(os.path.join(HERE, "performance-25.11.csv"), encoding="utf-8")))
    worst = 0.0
    print("%-10s %-16s %-7s %12s %12s %8s" % ("system", "model", "prec", "formula GF/tok", "table GF/tok", "ratio"))
    for r in rows:
        mtp = 1 if "w/ MTP" in r["model_label"] else 0
        seq, tp = int(r["seq_len"]), int(r["tp"])
        f, _ = flops_per_sequence(r["model"], seq, tp=tp, mtp_layers=mtp)
        per_tok = f / seq
        table = float(r["model_tflops_per_gpu"]) * 1e12 / float(r["tokens_per_s_per_gpu"])
        ratio = table / per_tok
        worst = max(worst, abs(ratio - 1))
        print("%-10s %-16s %-7s %12.3f %12.3f %8.4f" % (r["gpu"], r["model"], r["precision"], per_tok / 1e9, table / 1e9, ratio))
    print("max |ratio - 1| = %.4f" % worst)
    return 0 if worst < 0.02 else 1


if __name__ == "__main__":
    sys.exit(main())
