#!/usr/bin/env bash
# aitune scan (src/sweep_scan.h): every size of a spec's ranges, the
# registry's answer there timed against the vendor (the fake worker plays the
# GPU and cuBLASLt: FAKE_VENDOR_US), the holes flagged and kept in the
# registry; --plan and the sampling need no GPU.
. "$(dirname "$0")/lib.sh"

spec g.yaml <<'YAML'
name: g
search: random
max_evals: 2
top_k: 2
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [mma]
    shapes:
      m: {range: [1, 6], align: [1]}
      n: {values: [64]}
      k: {values: [64]}
YAML

# --plan: the sizes, no GPU, no registry.
run "$AITUNE" scan "$T/g.yaml" --plan
expect_eq "scan --plan exits 0 without a GPU or a registry" "$RC" 0 || show_last
expect_stdout "^gemm_nt bf16 \(line 6\): 6 shapes x 1 dtype; m: 6 sizes \(1 2 3 4 5 6\); n: 1 size \(64\); k: 1 size \(64\)$" \
    "it lists every size of the range"
spec wide.yaml <<'YAML'
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    shapes:
      m: {range: [256, 8192]}
      n: {values: [4096]}
      k: {values: [4096]}
YAML
run "$AITUNE" scan "$T/wide.yaml" --plan --step 61
expect_stdout "m: 132 sizes \(256 317 378 439 500 561 622 683 ... 8064 8125 8186 8192\)" \
    "--step 61 over [256, 8192]: 256, 317, ..., 8186 and 8192"
run "$AITUNE" scan "$T/wide.yaml" --plan --sample 4
expect_stdout "m: 18 sizes \(256 504 511 512 1016 1023 1024 2040 ... 5547 8184 8191 8192\)" \
    "--sample 4: the ends, each log2 bucket's first and last sizes, the sizes tuned, 4 spread"
for bad in "--sample 1" "--sample x" "--step 0" "--sample 4 --step 2" "--vendor on"; do
    # shellcheck disable=SC2086
    run "$AITUNE" scan "$T/g.yaml" $bad --plan
    expect_eq "scan $bad is a usage error (exit 2)" "$RC" 2
done
run "$AITUNE" scan --db "$T/none.db" "$T/g.yaml"
expect_eq "scan with no registry exits 3" "$RC" 3
expect_stderr "no registry at" "and says so"

DB=$T/g.db
fake_sweep ok "$DB" "$T/g.yaml" --vendor time
expect_eq "the range sweep exits 0" "$RC" 0 || show_last
# The vendor: 1000 us below m = 5, 5 us from 5 on (FAKE_VENDOR_US on dim 0).
run env AITUNE_WORKER="$FAKE" FAKE_MODE=ok FAKE_STATE="$T/fake-state" FAKE_VENDOR_US="1000,5@5" \
    "$AITUNE" scan "$T/g.yaml" --db "$DB" --quiet
expect_eq "scan exits 0, holes or not" "$RC" 0 || show_last
expect_eq "a row per size" "$(sql "$DB" "select count(*) from scans")" 6
expect_eq "holes where the vendor is faster: m = 5 and 6" \
    "$(sql "$DB" "select group_concat(json_extract(shape, '$.m')) from scans where hole = 1 order by 1")" "5,6"
expect_eq "each row has the answer, its time and the vendor's" \
    "$(sql "$DB" "select count(*) from scans where level = 'exact' and template = 'gemm_nt/mma' and median_us > 0 and vendor_us > 0")" 6
expect_stdout "^HOLE  gemm_nt bf16 m=5,n=64,k=64: exact m=2\^2:align1,n=2\^6,k=2\^6 gemm_nt/mma .* vendor +5\.00 us +0\.[0-9]+x" \
    "a hole's line names the size, the bucket that answered and x vendor"
expect_stderr "^scan: gemm_nt bf16: 6 sizes, 2 holes; x vendor: geomean [0-9.]+, worst 0\.[0-9]+ at m=5,n=64,k=64$" \
    "the summary counts the holes and gives the worst x vendor"
# report plots x vendor over the dim the scan varied, holes marked.
run "$AITUNE" report --db "$DB" -o "$T/report.html"
expect_eq "report of a scanned registry exits 0" "$RC" 0 || show_last
expect_true "it has the scan plot over m, with x vendor" grep -q '<svg class="scan".*x vendor.*m (1 .. 6)' "$T/report.html"
expect_eq "and marks the two holes" "$(grep -o '<circle class="hole"' "$T/report.html" | wc -l | tr -d ' ')" 2
# window puts the bucket with holes first, and a sweep races its finalists
# at the holes' sizes: m = 6 (class 2) is no size the range bucket [4, 8) of
# class 1 is raced at otherwise (5 is its largest odd m in [1, 6]).
run env AITUNE_WORKER="$FAKE" FAKE_MODE=ok "$AITUNE" window "$T/g.yaml" --db "$DB" --budget 1m --plan
expect_eq "window --plan exits 0" "$RC" 0 || show_last
expect_stdout "^  1  holes +gemm_nt +bf16 +m=2\^2:align1,n=2\^6,k=2\^6 .*2 holes scanned" "the bucket with 2 holes comes first"
fake_sweep ok "$DB" "$T/g.yaml" --vendor off
expect_eq "a sweep after the scan exits 0" "$RC" 0 || show_last
expect_true "it races the bucket's finalists at the hole m = 6" grep -q " time .*task=6,64,64/" "$T/fake-state.log"
# Scanned again with the vendor slower everywhere: the rows are replaced.
run env AITUNE_WORKER="$FAKE" FAKE_MODE=ok FAKE_STATE="$T/fake-state" "$AITUNE" scan "$T/g.yaml" --db "$DB" --quiet
expect_eq "a second scan replaces the rows: no hole left" "$(sql "$DB" "select count(*) || ' ' || sum(hole) from scans")" "6 0"
# Progress (a line per size with AITUNE_PROGRESS_INTERVAL=0): scan's own
# words and counts, sizes out of every size of the spec, the size in hand.
run env AITUNE_WORKER="$FAKE" FAKE_MODE=ok FAKE_STATE="$T/fake-state" AITUNE_PROGRESS_INTERVAL=0 \
    "$AITUNE" scan "$T/g.yaml" --db "$DB"
expect_eq "scan with progress exits 0" "$RC" 0 || show_last
expect_stderr "^scan \(sizes\): 4/6, .* elapsed, ETA [^;]*; gemm_nt bf16 m=4,n=64,k=64" \
    "its progress counts sizes of the 6 and names the size in hand"
expect_true "no sweep progress line (buckets and candidates) in a scan" sh -c "! grep -q '^sweep: bucket' \"$T/err\""
# --vendor off: the answers timed alone.
run env AITUNE_WORKER="$FAKE" FAKE_MODE=ok FAKE_STATE="$T/fake-state" "$AITUNE" scan "$T/g.yaml" --db "$DB" --quiet --vendor off
expect_eq "--vendor off: no vendor time stored" "$(sql "$DB" "select count(*) from scans where vendor_us is null")" 6
# No GPU: one line, exit 1, nothing half-written.
run env AITUNE_WORKER="$FAKE" FAKE_MODE=nogpu "$AITUNE" scan "$T/g.yaml" --db "$DB" --quiet
expect_eq "scan without a GPU exits 1" "$RC" 1
expect_stderr "needs a GPU" "and says so"
done_testing
