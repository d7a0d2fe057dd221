#!/usr/bin/env python3
"""bench/decode_table.py BEFORE_SCAN AFTER_SCAN: bench/decode_scan.sh's table.

Reads the lines `aitune scan` prints, one a size ("scan  OP DTYPE m=..,n=..,k=..:
LEVEL BUCKET TEMPLATE  US us  vendor  VUS us  X.XXx", or "HOLE" in place of "scan"),
of two registries scanned at the same sizes, and prints per task (op, dtype, n x k)
the holes, the geomean and the worst x vendor of each, then every size."""
import math
import re
import sys

LINE = re.compile(r"^(scan|HOLE)\s+(\S+) (\S+) m=(\d+),n=(\d+),k=(\d+): (\S+) (\S+) (\S+)\s+([\d.]+) us"
                  r"(?:\s+vendor\s+([\d.]+) us)?")
SIZE = re.compile(r"^(scan|HOLE)\s+(\S+) (\S+) m=(\d+),n=(\d+),k=(\d+):")


def load(path):
    """{(op, dtype, n, k): {m: (us, vendor_us, hole, template, bucket)}}; a size
    without a time has us None."""
    rows = {}
    with open(path) as f:
        for line in f:
            g = LINE.match(line)
            if g:
                tag, op, dt, m, n, k, _, bucket, tmpl, us, vus = g.groups()
                rows.setdefault((op, dt, int(n), int(k)), {})[int(m)] = (
                    float(us), float(vus) if vus else None, tag == "HOLE", tmpl, bucket)
                continue
            g = SIZE.match(line)
            if g:
                tag, op, dt, m, n, k = g.groups()
                rows.setdefault((op, dt, int(n), int(k)), {})[int(m)] = (None, None, tag == "HOLE", "", "")
    return rows


def summary(rs):
    xs = [(v / u, m) for m, (u, v, h, t, b) in rs.items() if u and v]
    if not xs:
        return "%5s %5d %7s %7s %6s" % ("-", len(rs), "-", "-", "-")
    geo = math.exp(sum(math.log(x) for x, _ in xs) / len(xs))
    w = min(xs)
    return "%5d %5d %7.3f %7.3f %6s" % (sum(r[2] for r in rs.values()), len(rs), geo, w[0], "m=%d" % w[1])


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: bench/decode_table.py BEFORE_SCAN AFTER_SCAN")
    before, after = load(sys.argv[1]), load(sys.argv[2])
    keys = sorted(set(before) | set(after))
    print("x cuBLASLt at every size scanned (holes: below 1.00x vendor, over 5% behind the best measured, or no time)")
    print("%-26s | %5s %5s %7s %7s %6s | %5s %5s %7s %7s %6s" % (
        "task", "holes", "sizes", "geomean", "worst", "at", "holes", "sizes", "geomean", "worst", "at"))
    print("%-26s | %-36s | %-36s" % ("", "before (points)", "after (range [1, 64])"))
    for key in keys:
        op, dt, n, k = key
        print("%-26s | %s | %s" % ("%s %s %dx%d" % key, summary(before.get(key, {})), summary(after.get(key, {}))))
    print()
    print("every m (before us, after us, vendor us in after's race, x vendor before / after, each in its own race;")
    print("after's template and bucket):")
    for key in keys:
        b, a = before.get(key, {}), after.get(key, {})
        for m in sorted(set(b) | set(a)):
            bu, bv = b[m][:2] if m in b else (None, None)
            au, av, _, at, ab = a[m] if m in a else (None, None, 0, "", "")
            x = lambda u, v: (v / u) if u and v else 0
            print("%s %s %dx%d m=%-3d %8.2f %8.2f %8.2f  %5.3f / %5.3f  %s  %s" % (
                key + (m, bu or 0, au or 0, av or bv or 0, x(bu, bv), x(au, av), at, ab)))


main()
