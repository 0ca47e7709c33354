#!/usr/bin/env python3
"""Normalize Megatron-Bridge's published pre-training throughput tables into CSV.

Reads the Markdown pages shipped beside this script (copied verbatim from
NVIDIA-NeMo/Megatron-Bridge, see README.md) and writes one CSV per release:

    performance-25.11.csv                  <- performance-summary-25.11.md (the visible target set)
    performance-<release>.csv              <- performance-summary-archive.md and performance-summary.md
                                              (every other release: the held-out set)

Standard library only. Run from anywhere:

    python3 normalize_tables.py            # rewrites the CSVs next to this file
    python3 normalize_tables.py --check    # exits 1 if a CSV on disk differs from what it would write

Column meanings and the parsing rules are documented in README.md. In short:
- one row per (release, task, system, model, precision) measurement;
- a cell "a (b)" means two measurements: the value outside the parentheses belongs to the first
  variant, the value inside to the second; a cell without parentheses applies to both variants;
- published numbers are copied as text, never recomputed; "n/a" stays "n/a"; a column that the
  release's table does not have is left empty;
- dp, ga_derived and ga_check are derived here (dp = num_gpus / (tp * pp * cp),
  ga_derived = gbs / (mbs * dp)).
"""

import csv
import io
import os
import re
import sys
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))

COLUMNS = [
    # the normalized format (order fixed)
    "system", "gpu", "num_gpus", "model", "precision", "gbs", "mbs", "seq_len", "fsdp",
    "tp", "pp", "cp", "vp", "ep", "ga", "tokens_per_s_per_gpu", "model_tflops_per_gpu",
    # provenance and derived checks
    "release", "task", "model_label", "precision_label", "variant", "dp", "ga_derived", "ga_check",
    "footnote",
]

HEADER_MAP = {
    "System": "system", "Model": "model_label", "#-GPUs": "num_gpus", "Precision": "precision_label",
    "GBS": "gbs", "MBS": "mbs", "Sequence Length": "seq_len", "FSDP": "fsdp", "TP": "tp", "PP": "pp",
    "CP": "cp", "VP": "vp", "EP": "ep", "GA": "ga", "Tokens / sec / GPU": "tokens_per_s_per_gpu",
    "Model TFLOP / sec / GPU": "model_tflops_per_gpu",
}

GPU_OF_SYSTEM = {"DGX-H100": "H100", "DGX-B200": "B200", "DGX-B300": "B300", "DGX-GB200": "GB200",
                 "DGX-GB300": "GB300"}

MODEL_IDS = [
    (r"^LLAMA3_8B", "llama3-8b"),
    (r"^LLAMA3_70B", "llama3-70b"),
    (r"^LLAMA3\.1_405B", "llama3.1-405b"),
    (r"^DeepSeekV3", "deepseek-v3"),
    (r"^DeepSeekV4 Flash", "deepseek-v4-flash"),
    (r"^GPT OSS 120B", "gpt-oss-120b"),
    (r"^Qwen3_30B_a3B", "qwen3-30b-a3b"),
    (r"^Qwen3_235B_a22B", "qwen3-235b-a22b"),
    (r"^Kimi_K2", "kimi-k2"),
    (r"^Nemotron_3_Nano", "nemotron-3-nano"),
    (r"^Nemotron_3_Super", "nemotron-3-super"),
    (r"^Nemotron_3_Ultra", "nemotron-3-ultra"),
    (r"^Nemotron_3_5_Lightning", "nemotron-3.5-lightning"),
]

PRECISION_IDS = {"BF16": "bf16", "FP8-CS": "fp8-cs", "FP8-MX": "mxfp8", "MXFP8": "mxfp8",
                 "NVFP4": "nvfp4", "FP8": "fp8"}

PAREN = re.compile(r"^(.*?)\s*\((.*)\)\s*$")
FOOTNOTE = re.compile(r"\[\^([^\]]+)\]")


def model_id(label):
    for pat, mid in MODEL_IDS:
        if re.search(pat, label.strip()):
            return mid
    raise ValueError("unknown model label %r" % label)


def split_cell(text):
    """Return (first, second, footnotes) for a table cell; second is None without parentheses."""
    notes = FOOTNOTE.findall(text)
    text = FOOTNOTE.sub("", text).strip()
    m = PAREN.match(text)
    if m and m.group(1).strip() and re.fullmatch(r"[0-9A-Za-z.\-]+", m.group(2).strip()):
        return m.group(1).strip(), m.group(2).strip(), notes
    return text, None, notes


def precision_of(release, system, label, variant):
    """Map the published precision label to a normalized id."""
    if label:
        return PRECISION_IDS[label]
    # 25.09 has no Precision column: the page's footnote says the parenthesised numbers use a
    # different quantization granularity: MXFP8 (32-element blocks) on GB200/B200, and
    # 128x128-weight / 1x128-activation blockwise FP8 on H100. The unparenthesised numbers are
    # FP8 without a named recipe.
    assert release == "25.09", release
    if variant == 1:
        return "fp8"
    return "fp8-blockwise" if system == "DGX-H100" else "mxfp8"


def parse_tables(text, only_release=None):
    rows = []
    release = task = system = model_hdr = None
    header = None
    for raw in text.splitlines():
        line = raw.strip()
        m = re.match(r"^## (\S+) NeMo Container", line)
        if m:
            release, task, system, model_hdr, header = m.group(1), None, None, None, None
            continue
        if line.startswith("## "):
            release = None
            continue
        m = re.match(r"^### (.*) Performance$", line)
        if m:
            task = {"Pre-Training": "pretrain", "SFT": "sft", "LoRA": "lora"}[m.group(1)]
            header = None
            continue
        m = re.match(r"^#### System: (\S+)", line)
        if m:
            system, model_hdr, header = m.group(1), None, None
            continue
        m = re.match(r"^#### Model: (.*)$", line)
        if m:
            model_hdr, system, header = m.group(1).strip(), None, None
            continue
        if release is None or (only_release and release != only_release):
            continue
        if not line.startswith("|"):
            if not line:
                continue
            header = None if not line.startswith("-") else header
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            header = [HEADER_MAP[c] for c in cells]
            continue
        if set("".join(cells)) <= set("-: "):
            continue
        rec = dict(zip(header, cells))
        if "system" not in rec:
            rec["system"] = system
        if "model_label" not in rec:
            rec["model_label"] = model_hdr
        split = {k: split_cell(v) for k, v in rec.items() if k not in ("system", "model_label")}
        two = any(s[1] is not None for s in split.values())
        notes = sorted({n for s in split.values() for n in s[2]})
        for variant in ((1, 2) if two else (1,)):
            out = {c: "" for c in COLUMNS}
            out["release"], out["task"] = release, task
            out["system"] = rec["system"]
            out["gpu"] = GPU_OF_SYSTEM[rec["system"]]
            out["model_label"] = rec["model_label"].strip()
            out["model"] = model_id(rec["model_label"])
            for k, (a, b, _) in split.items():
                out[k] = b if (variant == 2 and b is not None) else a
            plabel = out["precision_label"]
            out["precision"] = precision_of(release, rec["system"], plabel, variant)
            out["variant"] = "" if not two else ("outside-parentheses" if variant == 1 else "in-parentheses")
            out["footnote"] = ";".join(notes)
            derive(out)
            rows.append(out)
    return rows


def derive(out):
    try:
        n, tp, pp, cp = (int(out[k]) for k in ("num_gpus", "tp", "pp", "cp"))
        gbs, mbs = int(out["gbs"]), int(out["mbs"])
    except ValueError:
        out["ga_check"] = "not-derivable"
        return
    dp = Fraction(n, tp * pp * cp)
    out["dp"] = str(dp) if dp.denominator == 1 else "%s (not integer)" % dp
    gad = Fraction(gbs, 1) / (mbs * dp)
    out["ga_derived"] = str(gad) if gad.denominator == 1 else "%s (not integer)" % gad
    if out["ga"] in ("", "n/a"):
        out["ga_check"] = "no-ga-published"
    else:
        out["ga_check"] = "ok" if Fraction(out["ga"]) == gad else "MISMATCH"


def render(rows):
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow(r)
    return buf.getvalue()


def main():
    check = "--check" in sys.argv[1:]
    outputs = {}
    with open(os.path.join(HERE, "performance-summary-25.11.md"), encoding="utf-8") as f:
        outputs["25.11"] = parse_tables(f.read(), only_release="25.11")
    for page in ("performance-summary-archive.md", "performance-summary.md"):
        with open(os.path.join(HERE, page), encoding="utf-8") as f:
            for r in parse_tables(f.read()):
                if r["release"] == "25.11":
                    continue  # identical to performance-summary-25.11.md (checked in README)
                outputs.setdefault(r["release"], []).append(r)
    bad = 0
    for release, rows in sorted(outputs.items()):
        path = os.path.join(HERE, "performance-%s.csv" % release)
        text = render(rows)
        if check:
            with open(path, encoding="utf-8") as f:
                if f.read() != text:
                    print("differs:", path)
                    bad = 1
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print("wrote %s (%d rows)" % (os.path.basename(path), len(rows)))
    return bad


if __name__ == "__main__":
    sys.exit(main())
