#!/usr/bin/env bash
# Record measured landscapes for the search strategies (issue 12): an
# exhaustive sweep of SPEC on the GPU, then `aitune replay export` of each op
# into tests/sim/landscapes/NAME-OP.tsv (or OUTDIR). Needs a GPU and a built
# tree; the sweep resumes if interrupted (same --db).
#   bench/landscape.sh OUTDIR [SPEC] [--budget D]
set -eu
out=${1:?usage: bench/landscape.sh OUTDIR [SPEC] [--budget D]}
spec=${2:-bench/landscape/memory.yaml}
shift $(( $# >= 2 ? 2 : 1 ))
mkdir -p "$out"
db=$out/landscape.db
name=$(basename "$spec" .yaml)
start=$(date +%s)
build/aitune sweep "$spec" --db "$db" "$@" > "$out/sweep.txt" 2> "$out/sweep.err" || echo "sweep exit $?"
echo "sweep: $(( $(date +%s) - start )) s"
for op in $(sed -n 's/^  - op: *//p' "$spec" | sort -u); do
    build/aitune replay export --db "$db" --op "$op" -o "$out/$name-$op.tsv"
    echo "$op: $(grep -vc '^#' "$out/$name-$op.tsv") rows (with the header), $(grep -c '	ok	' "$out/$name-$op.tsv") ok"
done
