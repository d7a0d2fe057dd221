#!/usr/bin/env bash
# Call 2 (9th session): mid m (128, 192 at 4096^2): cuBLAS's kernels under ncu; wgmma and swapab narrowed spaces against cuBLASLt.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
o=$OUT/mid; mkdir -p $o
t0=$(date +%s)
timeout 120 ncu --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,launch__cluster_dim_x,launch__cluster_dim_y,sm__throughput.avg.pct_of_peak_sustained_elapsed \
   --csv python3 .gpu/s/mid/cublas_ncu.py > $o/ncu.csv 2> $o/ncu.err
echo "ncu exit $? at $(( $(date +%s) - t0 )) s"
python3 - $o/ncu.csv <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
h = rows[0]; ix = {n: i for i, n in enumerate(h)}
k = {}
for r in rows[1:]:
    key = (r[ix["ID"]], r[ix["Kernel Name"]][:110])
    k.setdefault(key, {})[r[ix["Metric Name"]]] = r[ix["Metric Value"]]
for (i, name), m in k.items():
    if int(i) % 2 == 0: continue
    print(i, name, "|", " ".join("%s=%s" % (a.split("__")[1][:14], b) for a, b in sorted(m.items())))
PY
python3 bench/narrow.py $o/home wgmma .gpu/s/mid/wgmma.lua swapab .gpu/s/mid/swapab.lua || exit 1
t1=$(date +%s)
AITUNE_HOME=$o/home timeout 300 build/aitune sweep .gpu/s/mid/probe.yaml --db $o/p.db --vendor time --timeout 5s --quiet > $o/sweep.txt 2> $o/sweep.err
echo "sweep exit $? at $(( $(date +%s) - t1 )) s"
tail -3 $o/sweep.err | cut -c1-300
sqlite3 -header -csv $o/p.db "select template, shape, status, median_us, registers, spills, config from measurements" > $o/meas.csv
sqlite3 $o/p.db "select shape, median_us, algo from vendor_times where status='ok'"
python3 - $o/meas.csv <<'PY'
import csv, json, sys
rs = list(csv.DictReader(open(sys.argv[1])))
for shape in sorted({r["shape"] for r in rs}):
    for t in ("gemm_nt/wgmma", "gemm_nt/swapab"):
        ok = sorted((float(r["median_us"]), r["config"]) for r in rs if r["shape"] == shape and r["template"] == t and r["status"] == "ok")
        bad = sum(1 for r in rs if r["shape"] == shape and r["template"] == t and r["status"] != "ok")
        print(shape, t, "ok", len(ok), "not ok", bad)
        for us, c in ok[:5]:
            print("   %7.2f  %s" % (us, c))
PY
rm -f $o/p.db-*; rm -rf $o/home
cd $OUT && tar czf mid.tgz mid && rm -rf mid
