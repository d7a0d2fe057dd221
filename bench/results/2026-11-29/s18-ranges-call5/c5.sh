#!/usr/bin/env bash
# Session 18, call 5: issue 33's first row (bench/run ranges' command) with parts behind the vendor
# searched at any margin; then every rmsnorm config at 4096 x 128256 and 131064 (vocab's one miss).
set -u
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/gpu.txt
d=$OUT/r5
t0=$(date +%s)
RANGE_EXACT=1 timeout 450 bench/range_scan.sh $d 4096x4096,1024x4096,14336x4096,4096x14336 1:256 8 400s time > $OUT/r5.log 2>&1
echo "ranges exit $? in $(( $(date +%s) - t0 )) s"
gzip -c $d/range.db > $OUT/r5.db.gz; rm -f $d/range.db $d/range.db.lock
tar czf $OUT/r5.tgz -C $OUT r5 && rm -rf $d
t0=$(date +%s)
timeout 100 build/aitune sweep .gpu/s18/rms.yaml --db $OUT/rms.db --quiet > $OUT/rms.txt 2> $OUT/rms.err
echo "rms probe exit $? in $(( $(date +%s) - t0 )) s"
python3 - $OUT/rms.db > $OUT/rms_probe.txt <<'PY'
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
rows = {}
for sh, st, us, c, t in con.execute("select shape, status, median_us, config, template from measurements where status='ok'"):
    rows.setdefault(json.loads(sh)["cols"], []).append((us, t, c))
for cols in sorted(rows):
    r = sorted(rows[cols]); by = 2 * 4096 * cols * 2 + 2 * cols
    print("cols=%d: %d ok" % (cols, len(r)))
    for x in r[:6]: print("   %.1f us %.0f GB/s %s %s" % (x[0], by / x[0] / 1e3, x[1], x[2]))
PY
gzip $OUT/rms.db; rm -f $OUT/rms.db.lock
cat $OUT/gpu.txt; tail -12 $OUT/r5.log; cat $OUT/rms_probe.txt
