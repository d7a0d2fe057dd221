#!/usr/bin/env bash
# Call 25 (fifth session): the Python layer's GPU tests with the C hot path (default) and
# with the Python runners (AITUNE_HOT=0), on e2e8.db: Linear's first and warm calls against
# F.linear, threads, streams.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so AITUNE_GPU_DB=$PWD/.gpu/e2e8.db PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
for h in 1 0; do
  echo "== AITUNE_HOT=$h"
  AITUNE_HOT=$h timeout 200 python3 python/tests/test_gpu.py 2>&1 | grep -E "^(ok|FAIL|skip)|Error|error" | head -30
done
