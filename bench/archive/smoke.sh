#!/usr/bin/env bash
# First contact with a GPU machine: devices, a small sweep, the registry.
# Usage: bench/archive/smoke.sh OUTDIR
set -u
out=${1:-/tmp/aitune-smoke}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv 2>&1 | tee "$out/nvidia-smi.txt"
build/aitune devices 2>&1 | tee "$out/devices.txt"
build/aitune sweep bench/archive/smoke.yaml --db "$out/smoke.db" 2>&1 | tee "$out/sweep.txt"
echo "sweep exit: ${PIPESTATUS[0]}"
build/aitune show --db "$out/smoke.db" 2>&1 | tee "$out/show.txt"
sqlite3 "$out/smoke.db" "select status, count(*) from measurements group by status" 2>/dev/null
