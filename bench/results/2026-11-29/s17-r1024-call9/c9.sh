#!/usr/bin/env bash
# Session 17, call 9: issue 33's first row at 1024 x 4096 alone with the
# final tree (the first mid-size kernel's nvar, stages 5, warm part searches).
set -u
d=$OUT/r9
t0=$(date +%s)
RANGE_EXACT=1 timeout 170 bench/range_scan.sh $d 1024x4096 1:256 8 90s time > $OUT/r9.log 2>&1
echo "scan exit $? in $(( $(date +%s) - t0 )) s"
gzip -c $d/range.db > $OUT/r9.db.gz; rm -f $d/range.db $d/range.db.lock
tar czf $OUT/r9.tgz -C $OUT r9 && rm -rf $d
grep -A2 "^weight" $OUT/r9.log
