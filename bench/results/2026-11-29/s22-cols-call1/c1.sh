#!/usr/bin/env bash
# Session 22, call 1: the swapped kernel's 192-row tiles (two coop consumers splitting each tile by columns): compute-sanitizer on a ragged shape, then bm 128 / 192 / 256 over a narrowed space at row 2's sizes, x cuBLASLt
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 bench/narrow.py $OUT/ns wgmma .gpu/s22/k.lua wgmma_swap .gpu/s22/sr.lua wgmma_swap .gpu/s22/sw.lua || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/ns SANITIZE_SPEC=.gpu/s22/san.yaml SANITIZE_ARGS="--vendor off" timeout 75 tests/gpu/sanitize.sh $OUT/san > $OUT/san.txt 2>&1
echo "sanitize exit $? in $(( $(date +%s) - t0 )) s"; tail -3 $OUT/san.txt
python3 bench/narrow.py $OUT/nk wgmma .gpu/s22/k.lua wgmma_swap .gpu/s22/kr.lua wgmma_swap .gpu/s22/kw.lua || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/nk timeout 140 build/aitune sweep .gpu/s22/k.yaml --db $OUT/k.db --vendor time --quiet > $OUT/k.txt 2> $OUT/k.err
echo "probe exit $? in $(( $(date +%s) - t0 )) s"; tail -2 $OUT/k.err
python3 .gpu/s22/table.py $OUT/k.db > $OUT/ktable.txt
gzip $OUT/k.db; rm -rf $OUT/nk $OUT/ns $OUT/k.db.lock
tar czf $OUT/san.tgz -C $OUT san && rm -rf $OUT/san
tail -12 $OUT/ktable.txt | cut -c1-200
