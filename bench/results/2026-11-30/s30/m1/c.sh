#!/usr/bin/env bash
# Prepared in session 30 for the next: at 4096 x 14336, m = 1, the range sweep's winner (swapab bn 8, csplit 1: 64
# CTAs, evict 1, l2pre 4) raced 29.7 us in the sweep and was scanned at 33.0 and 35.3 us (sessions 30's calls 1
# and 6; the vendor 32.3 and 33.2), a hole 11-19% behind its own race. Is it the scan (two slots: the answer and
# cuBLASLt) or the size? A sweep of that config alone over m = 1..2 at k = 14336 and 4096, then
# three scans of the same spec: the winner (that one config: bn 8, csplit 1, l2pre 4), its race time in the sweep,
# its three scan times, cuBLASLt's.
# Predicted (if the scan's two-slot race is the cause): the scans 10-20% above the sweep's race at k = 14336 and
# m = 1 only, within 2% at m = 2 and at k = 4096. Run from the tree's root, carry ["build/aitune"]; about 1 minute.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
N=bench/results/2026-11-30/s30/m1
python3 bench/narrow.py $OUT/h swapab $N/sa.lua > /dev/null || exit 1
export AITUNE_HOME=$OUT/h
timeout 120 build/aitune sweep $N/w.yaml --db $OUT/w.db --vendor time --quiet > $OUT/w.txt 2> $OUT/w.err
echo "sweep exit $?"; tail -3 $OUT/w.txt | cut -c1-250
for i in 1 2 3; do
  timeout 60 build/aitune scan $N/w.yaml --db $OUT/w.db --quiet > $OUT/scan$i.txt 2>&1; echo "scan $i exit $?"
  grep -E "^(scan|HOLE)" $OUT/scan$i.txt | cut -c1-200
done
python3 - $OUT/w.db <<'PY' | tee $OUT/table.txt
import sqlite3, sys, json
db = sqlite3.connect(sys.argv[1])
print("measurements at each size (us), best first:")
rows = {}
for sh, us, c in db.execute("select shape, median_us, config from measurements where status = 'ok'"):
    s = json.loads(sh); c = json.loads(c)
    rows.setdefault((s["k"], s["m"]), []).append((us, "bn%d cs%d l%d" % (c["bn"], c["csplit"], c["l2pre"])))
for key in sorted(rows): print(key, sorted(rows[key])[:4])
PY
cd $OUT && tar czf all.tgz w.db w.txt w.err scan*.txt table.txt && rm -rf h w.db* scan*.txt; ls
