#!/usr/bin/env bash
# s15 call 1: the decode spec before (points) and after (range [1, 64]).
set -u
unset AITUNE_HOME
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
bench/decode_scan.sh $OUT/dec 12 200s
rm -f $OUT/dec/*.db-wal $OUT/dec/*.db-shm
