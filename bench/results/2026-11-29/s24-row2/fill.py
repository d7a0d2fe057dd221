"""fill.py REGISTRY RANGE_TABLE: for each size of a scan table (bench/range_scan.sh), the answering winner's rounds of
tiles (its persistent grid: min(UNITS, SLOTS) * PER; UNITS over SLOTS rounded up) and how full the last round is;
then x vendor by that fill, and the sizes below 0.90x with UNITS / ROUNDS * SLOTS. The registries came back with
the twenty-fourth session's calls 3 and 5 (3 MB each, not kept here); what this printed is callN/fill.txt:
  gunzip -c pr.db.gz > range.db; python3 fill.py range.db call3/range_table.txt > call3/fill.txt"""
import sqlite3, json, re, sys, math
db, table = sys.argv[1], sys.argv[2]
con = sqlite3.connect(db)
plans = {}
for b, launch in con.execute("select bucket, launch from winners"):
    plans[b] = json.loads(launch)
def cdiv(a, b): return -(-a // b)
def ev(e, env): return eval(e, {"__builtins__": {}, "cdiv": cdiv, "min": min, "max": max}, env)
rows = []
for l in open(table):
    m = re.match(r'(\d+)x(\d+) m=(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)(?: HOLE)?\s+(\S+)\s+(\S+)', l)
    if not m: continue
    n, k, mm, x, b = int(m.group(1)), int(m.group(2)), int(m.group(3)), float(m.group(6)), m.group(8)
    p = plans.get(b)
    if not p: continue
    g = p["grid"][0]
    mt = re.fullmatch(r"min\((.*), (\d+)\) \* (\d+)", g)
    if not mt: continue
    env = {"m": mm, "n": n, "k": k}
    units, slots = ev(mt.group(1), env), int(mt.group(2))
    waves = cdiv(units, slots)
    rows.append((mm, x, units, slots, waves, units / (waves * slots)))
# x vendor by fill of the last wave
import statistics
for lo, hi in ((0, 0.5), (0.5, 0.75), (0.75, 0.9), (0.9, 1.01)):
    xs = [r[1] for r in rows if lo <= r[5] < hi]
    if xs: print("fill %.2f-%.2f: %3d sizes, geomean x vendor %.3f, worst %.3f" % (lo, hi, len(xs), math.exp(sum(map(math.log, xs)) / len(xs)), min(xs)))
print("sizes below 0.90x:", sorted((r[0], r[1], "%d/%d" % (r[2], r[4] * r[3])) for r in rows if r[1] < 0.9))
