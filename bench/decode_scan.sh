#!/usr/bin/env bash
# bench/decode_scan.sh: issue 33's "the project's decode spec scanned before
# and after". The decode tasks of specs/gemm-decode.yaml (every task timed as
# a stream: gemm_nt bf16 at the 4096/8192 weights, gemm_nn bf16 and gemm_nt
# f16 at 4096^2, the 128256 x 4096 LM head) are swept twice, each into its
# own registry with the same evaluations and budget, the vendor timed but never
# a winner (--vendor time: aitune's own kernels against cuBLASLt):
#   before: m as the spec names it (values 1, 2, 4, ... 64; 1 and 16; 1):
#           each value its own log2 bucket, a size between two values
#           answered by the bucket below it;
#   after:  m: {range: [1, 64], align: [1]}, as its header says to tune it
#           to serve every batch size.
# Then both registries are scanned at every m of 1..64 of every task (the
# registry's answer against cuBLASLt in the same task) and a table gives,
# per task, the holes, geomean and worst x vendor before and after.
#   bench/decode_scan.sh OUTDIR [MAX_EVALS] [BUDGET]
#   MAX_EVALS per bucket and template (default 16; the spec's own is 48),
#   BUDGET each sweep's (default 180s). Needs a built tree (make) and a GPU.
# Everything (specs, registries, logs, decode_table.txt) stays in OUTDIR; the
# table is made from the scans' printed lines (bench/decode_table.py), so the
# two *-scan.txt files regenerate it without the registries.
set -u
out=${1:?OUTDIR}
evals=${2:-16}
budget=${3:-180s}
[[ $evals =~ ^[1-9][0-9]*$ ]] || { echo "bench/decode_scan.sh: MAX_EVALS must be a positive integer, not '$evals'" >&2; exit 2; }
mkdir -p "$out"

# The decode tasks: op dtype n k, and the m values the spec names.
tasks=(
    "gemm_nt bf16 4096 4096 1,2,4,8,16,32,64"
    "gemm_nt bf16 4096 8192 1,2,4,8,16,32,64"
    "gemm_nt bf16 8192 4096 1,2,4,8,16,32,64"
    "gemm_nt bf16 8192 8192 1,2,4,8,16,32,64"
    "gemm_nn bf16 4096 4096 1,16"
    "gemm_nt f16 4096 4096 1,16"
    "gemm_nt bf16 128256 4096 1"
)
spec() { # $1: before | after
    echo "name: decode-$1"
    echo "arch: sm_90a"
    echo "seed: 1"
    echo "search: model"
    echo "max_evals: $evals"
    echo "top_k: 4"
    echo "timing: stream"
    echo "tasks:"
    local t op dt n k ms
    for t in "${tasks[@]}"; do
        read -r op dt n k ms <<< "$t"
        echo "  - op: $op"
        echo "    dtypes: [$dt]"
        echo "    shapes:"
        if [ "$1" = before ]; then
            echo "      m: {values: [${ms//,/, }]}"
        else
            echo "      m: {range: [1, 64], align: [1]}"
        fi
        echo "      n: {values: [$n]}"
        echo "      k: {values: [$k]}"
    done
}
spec before > "$out/before.yaml"
spec after > "$out/after.yaml"

for side in before after; do
    t0=$(date +%s)
    build/aitune sweep "$out/$side.yaml" --db "$out/$side.db" --budget "$budget" --vendor time \
        > "$out/$side-sweep.txt" 2> "$out/$side-sweep.err"
    echo "$side sweep: exit $?, $(( $(date +%s) - t0 )) s; $(grep -E '^(sweep|hold|vendor):' "$out/$side-sweep.err" | tr '\n' ' ')"
    t1=$(date +%s)
    # Both registries answer the same sizes: every m of the range spec.
    build/aitune scan "$out/after.yaml" --db "$out/$side.db" > "$out/$side-scan.txt" 2> "$out/$side-scan.err"
    echo "$side scan: exit $?, $(( $(date +%s) - t1 )) s; $(grep '^scan:' "$out/$side-scan.err" | tr '\n' ' ')"
done

bench/decode_table.py "$out/before-scan.txt" "$out/after-scan.txt" > "$out/decode_table.txt"
head -12 "$out/decode_table.txt"
