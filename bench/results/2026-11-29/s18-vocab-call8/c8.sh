#!/usr/bin/env bash
# Session 18, call 8: the vocab suite's measurement with a 200 s sweep budget (the 100 s of the
# fourteenth session cut hold/split in 8 buckets; rmsnorm at 128256 was 3.4% slower than its best config)
set -u
t0=$(date +%s)
timeout 540 bench/rows_vocab.sh $OUT/vocab 200s > $OUT/vocab.log 2>&1
rc=$?
echo "vocab exit $rc in $(( $(date +%s) - t0 )) s"
printf 'suite=vocab\ngpu=%s\ndate=%s\ncommand=bench/rows_vocab.sh OUT 200s (eighteenth session, call 8; bench/results/2026-11-29/s18-vocab-call8)\nrc=%s\n' \
    "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" "$(date +%F)" "$rc" > $OUT/vocab/bench-run.txt
rm -f $OUT/vocab/*.db $OUT/vocab/*.db.lock
tar czf $OUT/vocab.tgz -C $OUT vocab && rm -rf $OUT/vocab
head -6 $OUT/vocab.log; tail -24 $OUT/vocab.log
