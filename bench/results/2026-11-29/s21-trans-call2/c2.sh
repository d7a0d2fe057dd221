#!/usr/bin/env bash
# Session 21, call 2: the swapped kernel's "trans" epilogue (stmatrix-transposed tiles, 16-byte stores): compute-sanitizer on ragged shapes, then direct against trans over a narrowed space at k = 64, 512, 4096 and more sizes, x cuBLASLt
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 bench/narrow.py $OUT/ns wgmma .gpu/s21/san.lua wgmma_swap .gpu/s21/sanw.lua wgmma_swap .gpu/s21/kb.lua wgmma_swap .gpu/s21/et.lua || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/ns SANITIZE_SPEC=.gpu/s21/san.yaml SANITIZE_ARGS="--vendor off" timeout 150 tests/gpu/sanitize.sh $OUT/san > $OUT/san.txt 2>&1
echo "sanitize exit $? in $(( $(date +%s) - t0 )) s"; tail -4 $OUT/san.txt
python3 bench/narrow.py $OUT/nk wgmma .gpu/s21/k.lua wgmma_swap .gpu/s21/kw.lua wgmma_swap .gpu/s21/kb.lua || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/nk timeout 240 build/aitune sweep .gpu/s21/k2.yaml --db $OUT/k2.db --vendor time --quiet > $OUT/k2.txt 2> $OUT/k2.err
echo "probe exit $? in $(( $(date +%s) - t0 )) s"; tail -2 $OUT/k2.err
python3 .gpu/s21/table.py $OUT/k2.db > $OUT/k2table.txt
gzip $OUT/k2.db; rm -rf $OUT/nk $OUT/ns $OUT/k2.db.lock
tar czf $OUT/san.tgz -C $OUT san && rm -rf $OUT/san
cat $OUT/k2table.txt | cut -c1-160
