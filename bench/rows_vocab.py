#!/usr/bin/env python3
"""Rows at vocabulary width (issue 33): softmax and rmsnorm over 4096 rows of each
width in --cols, aitune's answer there (the registry's scans table: `aitune scan
bench/rows_vocab_scan.yaml` after a sweep of bench/rows_vocab.yaml, timed by the
worker: L2 flushed, one launch per sample) against PyTorch eager timed the same
way in this process (torch.softmax, F.rms_norm), bf16. GB/s counts the bytes that
must move (x read, y written, rmsnorm's weight read).

    python bench/rows_vocab.py REGISTRY [--cols 32000,32001,100352,128256,256000]

Bar: >= 2.7 TB/s and >= 1.3x PyTorch eager. Prints a table last.
"""

import argparse
import json
import sqlite3
import statistics


def eager_us(torch, fn, x, reps=30):
    """Median time of fn(x) with L2 flushed before each launch (CUDA events)."""
    flush = torch.empty(2 * 64 << 20, dtype=torch.uint8, device="cuda")
    fn(x)
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn(x)
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e) * 1e3)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("registry")
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", default="32000,32001,100352,128256,256000")
    a = ap.parse_args()
    import torch
    import torch.nn.functional as F
    db = sqlite3.connect(a.registry)
    print("| op | rows x cols | aitune us | GB/s | eager us | GB/s | x eager | template |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for op in ("softmax", "rmsnorm"):
        for cols in [int(c) for c in a.cols.split(",")]:
            x = torch.randn(a.rows, cols, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(cols, device="cuda", dtype=torch.bfloat16)
            if op == "softmax":
                fn, nbytes = (lambda t: torch.softmax(t, -1)), 2 * x.numel() * 2
            else:
                fn, nbytes = (lambda t: F.rms_norm(t, (cols,), w, 1e-6)), 2 * x.numel() * 2 + cols * 2
            eus = eager_us(torch, fn, x)
            row = None
            for shape, us, tmpl in db.execute("select shape, median_us, template from scans where op = ? and "
                                              "dtype = 'bf16' and status = 'ok'", (op,)):
                s = json.loads(shape)
                if s.get("rows") == a.rows and s.get("cols") == cols:
                    row = (us, tmpl)
            if row:
                print("| %s | %dx%d | %.1f | %.0f | %.1f | %.0f | %.2fx | %s |" % (
                    op, a.rows, cols, row[0], nbytes / row[0] / 1e3, eus, nbytes / eus / 1e3, eus / row[0], row[1]))
            else:
                print("| %s | %dx%d | - | - | %.1f | %.0f | - | not tuned |" % (op, a.rows, cols, eus, nbytes / eus / 1e3))


if __name__ == "__main__":
    main()
