#!/usr/bin/env python3
"""Extract XLA's default GEMM performance table into CSV (standard library only).

Reads default_matmul_perf_table.txtpb (text-format protobuf xla.GemmPerfTable, copied from
tensorflow/tensorflow third_party/xla/xla/service/gpu/model/default_matmul_perf_table.txtpb;
see README.md) and writes matmul.csv with the columns

    arch, b, m, n, k, dtype_combo, flops_per_s

one row per (architecture, GEMM shape, dtype combination), in file order. flops_per_s is the
integer exactly as written in the file. Usage:

    python3 extract_matmul.py [input.txtpb] [output.csv]
    python3 extract_matmul.py --check     # exit 1 if matmul.csv differs from a fresh extraction
"""

import csv
import io
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

ARCH = re.compile(r'^  key: "([^"]+)"$')
FIELD = re.compile(r'^      ([bmnk]): (\d+)$')
FLOPS = re.compile(r'^      flops \{ key: "([^"]+)" value: (\d+) \}$')
OPEN_ENTRY = re.compile(r'^    entries \{$')
CLOSE_ENTRY = re.compile(r'^    \}$')


def extract(text):
    rows = []
    arch = None
    shape = None
    for n, line in enumerate(text.splitlines(), 1):
        line = line.rstrip()
        if not line or line.lstrip().startswith("#"):
            continue
        m = ARCH.match(line)
        if m:
            arch = m.group(1)
            continue
        if OPEN_ENTRY.match(line):
            shape = {}
            continue
        m = FIELD.match(line)
        if m and shape is not None:
            shape[m.group(1)] = int(m.group(2))
            continue
        m = FLOPS.match(line)
        if m:
            if shape is None or set(shape) != set("bmnk") or arch is None:
                raise ValueError("line %d: flops outside a complete GEMM entry" % n)
            rows.append((arch, shape["b"], shape["m"], shape["n"], shape["k"], m.group(1), int(m.group(2))))
            continue
        if CLOSE_ENTRY.match(line):
            shape = None
            continue
        if line.strip() in ("entries {", "value {", "}"):
            continue
        raise ValueError("line %d: unexpected text: %r" % (n, line))
    return rows


def render(rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["arch", "b", "m", "n", "k", "dtype_combo", "flops_per_s"])
    w.writerows(rows)
    return buf.getvalue()


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    src = args[0] if args else os.path.join(HERE, "default_matmul_perf_table.txtpb")
    dst = args[1] if len(args) > 1 else os.path.join(HERE, "matmul.csv")
    with open(src, encoding="ascii") as f:
        rows = extract(f.read())
    text = render(rows)
    if check:
        with open(dst, encoding="ascii") as f:
            if f.read() != text:
                print("differs:", dst)
                return 1
        print("ok: %d rows" % len(rows))
        return 0
    with open(dst, "w", encoding="ascii") as f:
        f.write(text)
    print("wrote %s: %d rows" % (dst, len(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
