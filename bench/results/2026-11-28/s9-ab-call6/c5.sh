#!/usr/bin/env bash
# Call 5 (9th session): what rows of A past m cost swapab's first mid-size kernel (mc 0: one box of bn rows,
# zero-filled past m) against the second (mc 1: boxes over m only), bn 192 at m = 100, 154, 190; then issue 33's
# m 65..256 at 4096^2 and 1024x4096 twice: swapab's mid default mc 0 (the tree) and mc 1 (a copy), same machine.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
python3 bench/narrow.py $OUT/zhome swapab .gpu/s/zf/swapab.lua || exit 1
AITUNE_HOME=$OUT/zhome timeout 60 build/aitune sweep .gpu/s/zf/zf.yaml --db $OUT/zf.db --vendor time --quiet > $OUT/zf.txt 2> $OUT/zf.err
echo "zf exit $? at $(( $(date +%s) - t0 )) s"
python3 - $OUT/zf.db <<'PY'
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
for sh, st, us, c in con.execute("select shape, status, median_us, config from measurements order by shape, config"):
    c = json.loads(c); print("zf", sh, st, "%.2f" % (us or 0), "mc", c["mc"], "pdl", c["pdl"])
for sh, us in con.execute("select shape, median_us from vendor_times where status = 'ok'"): print("zf vendor", sh, "%.2f" % us)
PY
rm -rf $OUT/zhome $OUT/zf.db-*
mkdir -p $OUT/h1 && cp -r templates search $OUT/h1/ && sed -i 's/bm = pr.bm, bn = bn, csplit = pr.cs, mc = 0,/bm = pr.bm, bn = bn, csplit = pr.cs, mc = 1,/' $OUT/h1/templates/lib/swapab.lua
grep -c "csplit = pr.cs, mc = 1," $OUT/h1/templates/lib/swapab.lua
timeout 200 bench/range_scan.sh $OUT/mc0 4096x4096,1024x4096 65:256 8 150s off > $OUT/mc0.log 2>&1
echo "mc0 exit $? at $(( $(date +%s) - t0 )) s"; head -3 $OUT/mc0/range_table.txt
AITUNE_HOME=$OUT/h1 timeout 200 bench/range_scan.sh $OUT/mc1 4096x4096,1024x4096 65:256 8 150s off > $OUT/mc1.log 2>&1
echo "mc1 exit $? at $(( $(date +%s) - t0 )) s"; head -3 $OUT/mc1/range_table.txt
rm -rf $OUT/h1
cd $OUT && for d in mc0 mc1; do rm -f $d/range.db*; done && tar czf ab.tgz mc0 mc1 && rm -rf mc0 mc1
