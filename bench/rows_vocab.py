#!/usr/bin/env python3
"""Rows at vocabulary width (issue 33): softmax and rmsnorm over 4096 rows of each
width in --cols, aitune's answer there (the registry's scans table: `aitune scan
bench/rows_vocab_scan.yaml` after a sweep of bench/rows_vocab.yaml, timed by the
worker: L2 flushed, one launch per sample) against PyTorch eager timed the same
way in this process (torch.softmax, F.rms_norm), bf16. GB/s counts the bytes that
must move (x read, y written, rmsnorm's weight read).

    python bench/rows_vocab.py REGISTRY [--cols 32000,32001,...] [--verify REGISTRY2] [--rpb REGISTRY3] [--no-eager]

Before the table: each template's fastest candidate at each width the sweep tuned
(which family holds which widths, and by how much), and with --verify, the
candidates of a verification sweep (bench/rows_vocab_odd.yaml) by status: any
`wrong` is a peeled kernel that computed a wrong row; with --rpb, rmsnorm's tma
family with rows per block against one row a block (bench/rows_vocab_rpb.yaml). Bar: >= 2.7 TB/s and >= 1.3x
PyTorch eager. Prints the table last.
"""

import argparse
import json
import sqlite3
import statistics
import sys


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


def families(db, rows):
    """Each template's fastest verified candidate at each shape the sweep measured."""
    best = {}
    for op, tmpl, shape, us, cfg in db.execute(
            "select op, template, shape, median_us, config from measurements where dtype = 'bf16' and "
            "status = 'ok' and median_us > 0"):
        s = json.loads(shape)
        if s.get("rows") != rows:
            continue
        k = (op, s.get("cols"), tmpl)
        if k not in best or us < best[k][0]:
            best[k] = (us, cfg)
    print("Fastest candidate of each template at each width the sweep tuned (bf16, %d rows):" % rows)
    print("| op | cols | template | us | GB/s | config |")
    print("| --- | --- | --- | --- | --- | --- |")
    for (op, cols, tmpl), (us, cfg) in sorted(best.items()):
        nbytes = 2 * rows * cols * 2 + (cols * 2 if op == "rmsnorm" else 0)
        print("| %s | %d | %s | %.1f | %.0f | %s |" % (op, cols, tmpl, us, nbytes / us / 1e3, cfg))
    print()


def verified(path):
    """The verification sweep's candidates by op, template and status; 1 if any is wrong."""
    db = sqlite3.connect(path)
    print("Verification sweep (bench/rows_vocab_odd.yaml): candidates by status")
    print("| op | template | dtype | ok | wrong | other |")
    print("| --- | --- | --- | --- | --- | --- |")
    bad = 0
    rows = db.execute("select op, template, dtype, sum(status = 'ok'), sum(status = 'wrong'), "
                      "sum(status not in ('ok', 'wrong')) from measurements group by op, template, dtype "
                      "order by op, template, dtype").fetchall()
    for op, tmpl, dt, ok, wrong, other in rows:
        bad += wrong
        print("| %s | %s | %s | %d | %d | %d |" % (op, tmpl, dt, ok, wrong, other))
    print("verification: %d candidates, %d wrong%s" % (sum(r[3] + r[4] + r[5] for r in rows), bad,
                                                        "" if rows else " (no measurements: did the sweep run?)"))
    print()
    return 1 if bad or not rows else 0


def rpb(path, rows):
    """The fastest tma candidate with one row a block and with several (rpb > 1), per width."""
    db = sqlite3.connect(path)
    best = {}
    for op, shape, us, cfg in db.execute("select op, shape, median_us, config from measurements where "
                                         "template like '%/tma' and status = 'ok' and median_us > 0"):
        s, c = json.loads(shape), json.loads(cfg)
        k = (op, s.get("cols"), c.get("rpb", 1) > 1)
        if s.get("rows") == rows and (k not in best or us < best[k][0]):
            best[k] = (us, cfg)
    print("Rows per block (bench/rows_vocab_rpb.yaml): the weights staged once for rpb rows, against one row a block")
    print("| op | cols | rpb 1 us | GB/s | rpb > 1 us | GB/s | x | rpb > 1 config |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for op, cols in sorted({(k[0], k[1]) for k in best}):
        one, many = best.get((op, cols, False)), best.get((op, cols, True))
        nbytes = 2 * rows * cols * 2 + cols * 2
        f = lambda b: ("%.1f | %.0f" % (b[0], nbytes / b[0] / 1e3)) if b else "- | -"
        print("| %s | %d | %s | %s | %s | %s |" % (op, cols, f(one), f(many),
                                                  "%.2fx" % (one[0] / many[0]) if one and many else "-",
                                                  many[1] if many else "-"))
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("registry")
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", default="32000,32001,50257,100352,100353,128256,128257,255999,256000")
    ap.add_argument("--verify", help="a verification sweep's registry (bench/rows_vocab_odd.yaml)")
    ap.add_argument("--rpb", help="a sweep's registry of bench/rows_vocab_rpb.yaml")
    ap.add_argument("--no-eager", action="store_true", help="the registry's side only (no PyTorch, no GPU)")
    a = ap.parse_args()
    db = sqlite3.connect(a.registry)
    rc = verified(a.verify) if a.verify else 0
    if a.rpb:
        rpb(a.rpb, a.rows)
    families(db, a.rows)
    if not a.no_eager:
        import torch
        import torch.nn.functional as F
    print("| op | rows x cols | aitune us | GB/s | eager us | GB/s | x eager | template |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for op in ("softmax", "rmsnorm"):
        for cols in [int(c) for c in a.cols.split(",")]:
            nbytes = 2 * a.rows * cols * 2 + (cols * 2 if op == "rmsnorm" else 0)
            eus = None
            if not a.no_eager:
                x = torch.randn(a.rows, cols, device="cuda", dtype=torch.bfloat16)
                w = torch.randn(cols, device="cuda", dtype=torch.bfloat16)
                if op == "softmax":
                    fn = lambda t: torch.softmax(t, -1)
                else:
                    fn = lambda t: F.rms_norm(t, (cols,), w, 1e-6)
                eus = eager_us(torch, fn, x)
            row = None
            for shape, us, tmpl in db.execute("select shape, median_us, template from scans where op = ? and "
                                              "dtype = 'bf16' and status = 'ok'", (op,)):
                s = json.loads(shape)
                if s.get("rows") == a.rows and s.get("cols") == cols:
                    row = (us, tmpl)
            ecol = "%.1f | %.0f" % (eus, nbytes / eus / 1e3) if eus else "- | -"
            if row:
                print("| %s | %dx%d | %.1f | %.0f | %s | %s | %s |" % (
                    op, a.rows, cols, row[0], nbytes / row[0] / 1e3, ecol, "%.2fx" % (eus / row[0]) if eus else "-", row[1]))
            else:
                print("| %s | %dx%d | - | - | %s | - | not tuned |" % (op, a.rows, cols, ecol))
    return rc


if __name__ == "__main__":
    sys.exit(main())
