#!/usr/bin/env bash
# Session 21, call 6: the swapped family's default (ping-pong 128-row tiles where they cost least) against the old one (coop), default only at 11 shapes, x cuBLASLt; then tests/gpu/gemm_launch.sh (the swapped default through aitune_launch and the emitted .cu, bit for bit)
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for l in libaitune.so libaitune.so.0; do [ -e build/$l ] || ln -sf libaitune.so.0.1.0 build/$l; done
t0=$(date +%s)
AITUNE_HOME=.gpu/s21/old timeout 120 build/aitune sweep .gpu/s21/def.yaml --db $OUT/old.db --vendor time --quiet > $OUT/old.txt 2> $OUT/old.err
echo "old exit $? in $(( $(date +%s) - t0 )) s"; t0=$(date +%s)
timeout 120 build/aitune sweep .gpu/s21/def.yaml --db $OUT/new.db --vendor time --quiet > $OUT/new.txt 2> $OUT/new.err
echo "new exit $? in $(( $(date +%s) - t0 )) s"
python3 .gpu/s21/deftable.py $OUT/old.db $OUT/new.db > $OUT/deftable.txt
t0=$(date +%s)
timeout 240 tests/gpu/gemm_launch.sh $OUT/gl > $OUT/gl.txt 2>&1
echo "gemm_launch exit $? in $(( $(date +%s) - t0 )) s"
tar czf $OUT/res.tgz -C $OUT old.db new.db old.err new.err && rm -f $OUT/*.db $OUT/*.db.lock
rm -rf $OUT/gl
cat $OUT/deftable.txt
grep -v "^PASS" $OUT/gl.txt | tail -8; grep -c "^PASS" $OUT/gl.txt
