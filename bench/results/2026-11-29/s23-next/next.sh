#!/usr/bin/env bash
# The next session's first device call (about 4 minutes): c10.sh (A's tail map against the tree, after
# compute-sanitizer), then c9.sh (the swapped 64 x 192 tile against the rows past m, and its profiles at 317 and
# 378). Run from the tree's root with carry ["build/aitune"]; each writes its tables to $OUT, and at the end
# everything but the three tables goes into all.tgz (the device tool brings back at most 8 files).
D=bench/results/2026-11-29/s23-next
bash $D/c10.sh; echo "== c9"; bash $D/c9.sh
cd $OUT && tar czf all.tgz $(ls | grep -v -e '^all.tgz$' -e '^tail.cmp$' -e '^tail_cfg.txt$' -e '^oob.txt$') && \
  rm -f $(ls | grep -v -e '^all.tgz$' -e '^tail.cmp$' -e '^tail_cfg.txt$' -e '^oob.txt$'); ls $OUT
