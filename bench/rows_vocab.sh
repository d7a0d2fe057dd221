#!/usr/bin/env bash
# bench/rows_vocab.sh OUTDIR: the vocab suite's measurement (one device call,
# about 3 minutes on an H100 with build/ carried): sweep bench/rows_vocab.yaml
# (softmax and rmsnorm, 4096 rows, every width 32000..256000 as a range),
# scan the five widths of bench/rows_vocab_scan.yaml, and compare each with
# PyTorch eager (bench/rows_vocab.py): OUTDIR/rows_table.txt.
set -u
out=${1:?OUTDIR}
mkdir -p "$out"
build/aitune sweep bench/rows_vocab.yaml --db "$out/rows.db" --budget "${2:-100s}" --quiet > "$out/rows_sweep.txt" 2> "$out/rows_sweep.err"
echo "sweep exit $?; $(grep -E '^(sweep|hold):' "$out/rows_sweep.err" | tr '\n' ' ')"
build/aitune scan bench/rows_vocab_scan.yaml --db "$out/rows.db" --quiet > "$out/rows_scan.txt" 2>&1
python3 bench/rows_vocab.py "$out/rows.db" | tee "$out/rows_table.txt"
