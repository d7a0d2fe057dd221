#!/usr/bin/env bash
# Call 5 (s14): swapab's first mid-size kernel over a narrowed space (bm 64-256, bn 96-256, stages 4/6,
# csplit 1/2/4) at 4 weights x m = 65..255: the landscape mid_cost's default is checked against.
set -u
unset AITUNE_HOME
python3 bench/narrow.py $OUT/nt swapab .gpu/s14/spacem.lua || exit 1
mkdir -p $OUT/nt/build && cp build/aitune $OUT/nt/build/
timeout 500 $OUT/nt/build/aitune sweep .gpu/s14/probem.yaml --db $OUT/m.db --vendor time --quiet > $OUT/m.txt 2> $OUT/m.err
echo "exit $?"; tail -3 $OUT/m.err
rm -rf $OUT/nt
