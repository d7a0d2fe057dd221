#!/usr/bin/env bash
# Session 16, call 5: 14336 x 4096 over m 1..256 with --vendor win: the vendor holds the parts where no template beats it.
set -u
d=$OUT/r5
RANGE_EXACT=1 bench/range_scan.sh $d 14336x4096 1:256 8 100s win > $OUT/r5.log 2>&1
sqlite3 $d/range.db "select bucket, template, round(median_us,2) from winners order by json_extract(shape,'\$.m')" > $OUT/r5_winners.txt 2>&1 || python3 -c "
import sqlite3,json,sys; db=sqlite3.connect('$d/range.db')
for b,t,u,s in db.execute('select bucket, template, median_us, shape from winners'): print(json.loads(s)['m'], b, t, round(u,2))" > $OUT/r5_winners.txt
rm -f $d/range.db; tar czf $OUT/r5.tgz -C $OUT r5 && rm -rf $d
nvidia-smi --query-gpu=name --format=csv,noheader; tail -4 $OUT/r5.log; cat $OUT/r5_winners.txt | head -60
