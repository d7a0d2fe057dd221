#!/usr/bin/env bash
# Variants of one family's template against each other at one spec, in one
# GPU call: each variant is a copy of templates/ (bench/narrow.py, the
# family's space narrowed to SPACE) with a sed script applied to the
# family's file (it must change it), swept by bench/gemm.sh with cuBLAS in
# the same call. "base" (no edit) runs first when named with an empty script.
# Writes OUTDIR/variants-summary.txt (each variant's per-knob bests and
# ratio table) and OUTDIR/variant-NAME.tsv (every candidate).
#   bench/variants.sh OUTDIR FAMILY SPEC SPACE NAME=SED [NAME=SED ...]
set -u
[ $# -ge 5 ] || { echo "usage: bench/variants.sh OUTDIR FAMILY SPEC SPACE NAME=SED [NAME=SED ...]" >&2; exit 2; }
keep=$1 family=$2 spec=$3 space=$4
shift 4
mkdir -p "$keep"
w=$(mktemp -d /tmp/aitune-variants.XXXX)
: > "$keep/variants-summary.txt"
for v in "$@"; do
    name=${v%%=*} script=${v#*=}
    python3 bench/narrow.py "$w/$name" "$family" "$space"
    f=$w/$name/templates/lib/$family.lua
    if [ -n "$script" ]; then
        cp "$f" "$w/orig.lua"
        sed -i "$script" "$f"
        if cmp -s "$f" "$w/orig.lua"; then echo "variant $name: the sed script changed nothing" | tee -a "$keep/variants-summary.txt"; continue; fi
    fi
    AITUNE_HOME=$w/$name bench/gemm.sh "$w/out-$name" "$spec" > "$w/gemm-$name.txt" 2>&1
    cp "$w/out-$name/gemm-measurements.tsv" "$keep/variant-$name.tsv"
    grep -h "bucket.*best\|^gemm_\|failed" "$w/out-$name/gemm-stats.txt" "$w/out-$name/gemm-table.txt" |
        sed "s/^/$name: /" >> "$keep/variants-summary.txt"
done
cat "$keep/variants-summary.txt"
