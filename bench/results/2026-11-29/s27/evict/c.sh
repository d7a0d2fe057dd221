#!/usr/bin/env bash
# Session 27: swapab's weight loads evict-first in L2 (evict 1) against normal (0), the rest of each config equal,
# pdl on. In s27/sk the stream-K kernel's code run with one worker a unit (streamk 2, evict-first) ran 1.5-3 us
# faster than the plain kernel at 14336 x 4096, m = 136..192. Predicted: evict 1 1.03-1.07x faster at m = 136..248
# (mid-size kernel, one tile of rows), little change in the decode kernel (m = 16, 48: A is small). Exhaustive,
# x cuBLASLt; table: each shape's best at evict 0 and 1. Run from the tree's root, carry ["build/aitune"]; ~1 min.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
N=bench/results/2026-11-29/s27/evict
for s in mid dec; do
  python3 bench/narrow.py $OUT/h$s swapab $N/$s.lua > /dev/null || exit 1
  t0=$(date +%s)
  AITUNE_HOME=$OUT/h$s timeout 200 build/aitune sweep $N/$s.yaml --db $OUT/$s.db --vendor time --quiet > $OUT/$s.txt 2> $OUT/$s.err
  echo "sweep $s exit $? in $(( $(date +%s) - t0 )) s"; tail -2 $OUT/$s.err
done
python3 - $OUT/mid.db $OUT/dec.db <<'PY' | tee $OUT/table.txt
import sqlite3, sys, json
print("%-22s %8s %18s %18s %7s" % ("shape m,n,k", "cuBLAS", "evict 0", "evict 1", "1 vs 0"))
for f in sys.argv[1:]:
    db = sqlite3.connect(f); v = {}
    for sh, us in db.execute("select shape, median_us from vendor_times"): v[sh] = us
    best = {}
    for sh, us, c in db.execute("select shape, median_us, config from measurements where status = 'ok'"):
        c = json.loads(c); key = (sh, c["evict"])
        if us < best.get(key, (1e9,))[0]: best[key] = (us, c["bn"])
    for sh in sorted({k[0] for k in best}, key=lambda s: (json.loads(s)["n"], json.loads(s)["k"], json.loads(s)["m"])):
        d = json.loads(sh); e0, e1 = best.get((sh, 0)), best.get((sh, 1))
        cell = lambda e: "%7.2f %5.3f b%3d" % (e[0], v.get(sh, 0) / e[0], e[1]) if e else "%18s" % "-"
        print("%-22s %8.2f %s %s %7.3f" % ("%d,%d,%d" % (d["m"], d["n"], d["k"]), v.get(sh, 0), cell(e0), cell(e1),
              e0[0] / e1[0] if e0 and e1 else 0))
PY
cd $OUT && tar czf all.tgz mid.db dec.db mid.txt dec.txt mid.err dec.err table.txt && rm -rf hmid hdec *.db*; ls
