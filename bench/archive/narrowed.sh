# Sourced by the bench scripts that race families in narrowed spaces
# (bench/archive/swapab.sh, bench/archive/gemv_seg.sh): compute-sanitizer over a spec, and a
# stream-timed sweep against cuBLAS, each summed up in a few lines.

# sanitize_into OUTDIR SPEC [HOME]: tests/gpu/sanitize.sh over SPEC (with
# AITUNE_HOME=HOME when given); keeps OUTDIR/sanitize-result.txt, prints
# the verdict. Nothing when SKIP_SANITIZE is set.
sanitize_into() {
    [ -z "${SKIP_SANITIZE:-}" ] || return 0
    local out=$1 spec=$2 home=${3:-}
    if [ -n "$home" ]; then
        AITUNE_HOME=$home SANITIZE_SPEC=$spec tests/gpu/sanitize.sh "$out/sanitize" > /dev/null 2>&1
    else
        SANITIZE_SPEC=$spec tests/gpu/sanitize.sh "$out/sanitize" > /dev/null 2>&1
    fi
    cp "$out/sanitize/sanitize-result.txt" "$out/" 2>/dev/null
    grep -h "ERROR SUMMARY\|PASS\|FAIL\|bad:" "$out/sanitize/sanitize.txt" "$out/sanitize-result.txt" | tail -8
    rm -rf "$out/sanitize"
}

# sweep_into OUTDIR SPEC HOME: bench/gemm.sh --stream over SPEC with
# AITUNE_HOME=HOME; keeps gemm-table.txt, gemm-stats.txt and
# gemm-measurements.tsv, prints each bucket's best, the statuses and the
# table.
sweep_into() {
    local out=$1 spec=$2 home=$3
    AITUNE_HOME=$home bench/gemm.sh "$out" "$spec" --stream > "$out/gemm-run.txt" 2>&1
    rm -f "$out/gemm-winners.json" "$out/gemm-show.txt" "$out/gemm-sweep.txt"
    grep -h "template\|status\|failed" "$out/gemm-stats.txt"
    cat "$out/gemm-table.txt"
}
