#!/usr/bin/env bash
# Session 19, call 3: where stream-K 1's 15-18 us go. The pair at 256 x 4096 x 4096 (16 units in 4 pieces each): warp stalls and the SASS lines that take them, against stream-K 0
set -u
S="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters --section MemoryWorkloadAnalysis --import-source no"
for x in 0 1; do
  python3 bench/narrow.py /tmp/o$x wgmma .gpu/s19/one$x.lua || exit 1
  AITUNE_HOME=/tmp/o$x timeout 120 ncu --target-processes all -k regex:aitune_gemm -s 3 -c 1 $S -o $OUT/sk$x \
      build/aitune sweep .gpu/s19/one256.yaml --db /tmp/o$x.db --vendor off --timeout 60s --quiet > $OUT/sk$x.log 2>&1
  echo "sk$x exit $?"
  ncu --import $OUT/sk$x.ncu-rep --page details > $OUT/sk$x.txt 2>&1
  echo "== sk$x"
  grep -E "Duration|Stall|Warp Cycles Per Issued|Issued Warp|No Eligible|L2 Hit Rate|DRAM Throughput" $OUT/sk$x.txt | head -30
  ncu --import $OUT/sk$x.ncu-rep --page source --csv --print-source sass > $OUT/src$x.csv 2> $OUT/src$x.err
  echo "source page exit $? $(wc -l < $OUT/src$x.csv) lines"; head -c 600 $OUT/src$x.err
done
python3 - $OUT/src1.csv <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
if not rows: sys.exit("empty")
hdr = rows[0]; print(hdr[:12])
col = [i for i, h in enumerate(hdr) if "Warp Stall Sampling (All" in h]
if not col: sys.exit("no stall column")
c = col[0]
data = []
for r in rows[1:]:
    try: data.append((float(r[c] or 0), r))
    except: pass
tot = sum(d[0] for d in data) or 1
for v, r in sorted(data, key=lambda d: -d[0])[:30]:
    print("%5.1f%% %s" % (100 * v / tot, " | ".join(x for x in r[:3])))
PY
tar czf $OUT/reps.tgz -C $OUT sk0.txt sk1.txt src0.csv src1.csv && rm -f $OUT/*.ncu-rep $OUT/sk*.txt $OUT/src*
