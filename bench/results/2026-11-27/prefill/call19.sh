#!/usr/bin/env bash
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
timeout 100 python3 bench/prefill_gemms.py --registry .gpu/llama14.db > $OUT/pg14.txt 2>&1; echo "flush-timed registry: exit $?"; sed -n '/^prefill GEMMs/,$p' $OUT/pg14.txt; tail -3 $OUT/pg14.txt
timeout 100 python3 bench/prefill_gemms.py --registry .gpu/st.db > $OUT/pgst.txt 2>&1; echo "stream-timed registry: exit $?"; sed -n '/^prefill GEMMs/,$p' $OUT/pgst.txt
