#!/usr/bin/env bash
# Session 20, call 4: tests/gpu/gemm_launch.sh with a swapped run-time-width winner: aitune_launch, the emitted .cu and the reference agree at five widths
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for l in libaitune.so libaitune.so.0; do [ -e build/$l ] || ln -sf libaitune.so.0.1.0 build/$l; done
t0=$(date +%s)
timeout 270 tests/gpu/gemm_launch.sh $OUT/gl > $OUT/gl.txt 2>&1
echo "gemm_launch exit $? in $(( $(date +%s) - t0 )) s"
tar czf $OUT/gl.tgz -C $OUT gl --exclude='*.db*' --exclude='*.check' 2>/dev/null; rm -rf $OUT/gl
grep -v "^PASS" $OUT/gl.txt | tail -15; grep -c "^PASS" $OUT/gl.txt; grep "4096x512" $OUT/gl.txt
