#!/usr/bin/env bash
# Call 40: rmsnorm's tma family over its whole space at three odd vocabulary widths and one
# aligned (131064): does the space hold a config at the copy ceiling, which the range
# sweep's 12 evals per bucket missed, or is it the kernel?
set -u
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
timeout 200 build/aitune sweep .gpu/s/rmsodd.yaml --db $OUT/odd.db --budget 170s --vendor off --quiet > $OUT/sweep.txt 2> $OUT/sweep.err
echo "sweep exit $? in $(( $(date +%s) - t0 )) s"
cut -c1-230 $OUT/sweep.txt | grep -E "^rmsnorm"
grep -E "^sweep:" $OUT/sweep.err
for c in 100353 128257 255999 131064; do
  echo "== $c"; build/aitune why rmsnorm --dtype bf16 --shape 4096x$c --db $OUT/odd.db 2>&1 | sed -n "/^fastest correct/,/more (--all/p" | head -7 | cut -c1-200
done
build/aitune export --db $OUT/odd.db --format csv > $OUT/odd.csv 2>/dev/null; rm -f $OUT/odd.db*
