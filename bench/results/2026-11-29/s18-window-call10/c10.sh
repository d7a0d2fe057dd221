#!/usr/bin/env bash
# Session 18, call 10: the registry of call 6, then (parts racing their neighbours' winners) `aitune window` (its holes first) over the two weights
# with ties (1024 x 4096, 4096 x 14336), then `aitune scan` of those two again.
set -u
d=$OUT/r10; mkdir -p $d
gunzip -c .gpu/s18/r6.db.gz > $d/range.db
t0=$(date +%s)
timeout 300 build/aitune window .gpu/s18/w2.yaml --budget 150s --db $d/range.db > $d/window.txt 2> $d/window.err
echo "window exit $? in $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout 200 build/aitune scan .gpu/s18/w2.yaml --db $d/range.db > $d/scan.txt 2> $d/scan.err
echo "scan exit $? in $(( $(date +%s) - t0 )) s"; grep '^scan:' $d/scan.err
sed -n "/^python3 - \"\$db\" > \"\$out\/range_table.txt\" <<'PY'$/,/^PY$/p" bench/range_scan.sh | sed '1d;$d' > $d/table.py
python3 $d/table.py $d/range.db > $d/range_table.txt
gzip -c $d/range.db > $OUT/r10.db.gz; rm -f $d/range.db $d/range.db.lock
tar czf $OUT/r10.tgz -C $OUT r10 && rm -rf $d
grep -E "^(window|holes|hold|split)" $OUT/r10/window.err 2>/dev/null | head -5
tar xzf $OUT/r10.tgz -C /tmp && head -8 /tmp/r10/range_table.txt && grep -E "^(hold|split) " /tmp/r10/window.txt | head -30; tail -5 /tmp/r10/window.err
