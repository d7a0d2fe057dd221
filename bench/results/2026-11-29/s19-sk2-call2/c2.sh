#!/usr/bin/env bash
# Session 19, call 2: where stream-K's time goes. The pair (128 x 256, 2x1) at 4096^2, stream-K 0/1/2 at m = 256, 512 (fewer units than workers), 1049, 2086; Nsight Compute (DRAM bytes, L2 hit rate) of each mode at m = 1049
set -u
python3 bench/narrow.py $OUT/nt wgmma .gpu/s19/sk2.lua || exit 1
AITUNE_HOME=$OUT/nt timeout 200 build/aitune sweep .gpu/s19/probe2.yaml --db $OUT/p.db --vendor time --quiet > $OUT/p.txt 2> $OUT/p.err
echo "probe exit $?"
python3 - $OUT/p.db <<'PY' | tee $OUT/probe.txt
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
ven = {json.loads(s)["m"]: us for s, us in con.execute("select shape, median_us from vendor_times where status='ok'")}
for sh, st, us, c in sorted(con.execute("select shape, status, median_us, config from measurements"), key=lambda r: (json.loads(r[0])["m"], json.loads(r[3])["streamk"])):
    m = json.loads(sh)["m"]; c = json.loads(c)
    print("m=%d sk%d %s %.1f us  cuBLASLt %.1f" % (m, c["streamk"], st, us or 0, ven.get(m, 0)))
PY
S="--section SpeedOfLight --section MemoryWorkloadAnalysis"
for x in 0 1 2; do
  python3 bench/narrow.py /tmp/o$x wgmma .gpu/s19/one$x.lua || exit 1
  AITUNE_HOME=/tmp/o$x timeout 100 ncu --target-processes all -k regex:aitune_gemm -s 3 -c 1 $S -o $OUT/sk$x \
      build/aitune sweep .gpu/s19/one.yaml --db /tmp/o$x.db --vendor off --timeout 60s --quiet > $OUT/sk$x.log 2>&1
  echo "sk$x exit $?"
  ncu --import $OUT/sk$x.ncu-rep --page details > $OUT/sk$x.txt 2>&1
  echo "== sk$x"
  grep -E "Duration|DRAM Throughput|Memory Throughput|L2 Hit Rate|Mem Busy|Max Bandwidth|L1/TEX Hit|Compute \(SM\)|L2 Compression" $OUT/sk$x.txt | head -12
done
ncu --import $OUT/sk2.ncu-rep --page raw 2>/dev/null | grep -E "dram__bytes_read.sum |lts__t_sectors_srcunit_tex_op_read.sum |dram__bytes_write.sum " | head
for x in 0 1; do ncu --import $OUT/sk$x.ncu-rep --page raw 2>/dev/null | grep -E "dram__bytes_read.sum |dram__bytes_write.sum " | head; done
tar czf $OUT/reps.tgz -C $OUT sk0.txt sk1.txt sk2.txt sk0.log && rm -f $OUT/*.ncu-rep $OUT/sk*.txt $OUT/sk*.log
rm -rf $OUT/nt; gzip $OUT/p.db; rm -f $OUT/p.db.lock $OUT/p.txt
