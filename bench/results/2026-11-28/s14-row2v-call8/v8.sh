#!/usr/bin/env bash
# Call 8 (s14): issue 33's second row with vendor parts: call 6's registry (own kernels, m 256..8192 at
# 4096^2 and 14336 x 4096) swept again with --vendor win (the vendor raced at each bucket and part and
# holding those it beats), then the same scan (every 61st m against cuBLASLt).
set -u
mkdir -p $OUT/row2v && cp .gpu/s14/row2.db $OUT/row2v/range.db
SCAN_ARGS="--step 61" RANGE_EXACT=1 timeout 560 bench/range_scan.sh $OUT/row2v 4096x4096,14336x4096 256:8192 8 150s win > $OUT/row2v.log 2>&1
echo "rc $?"
cut -c1-200 $OUT/row2v.log | head -3; grep -E '^(sweep|hold|vendor):' $OUT/row2v/sweep.err
head -5 $OUT/row2v/range_table.txt
rm -f $OUT/row2v/range.db
