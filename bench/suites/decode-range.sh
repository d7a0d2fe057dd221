# bench/suites/decode-range.sh: the decode spec's decode tasks (specs/gemm-decode.yaml,
# timing: stream) asked at every batch size 1..64 (issue 33): swept with m as the
# spec names it (points 1, 2, 4, ... 64) and with m as a range [1, 64], each into
# its own registry, the vendor timed but never a winner; then both scanned at
# every m against cuBLASLt raced in the same task.
about="the decode spec's GEMMs at every m of 1..64: tuned at points (before) against tuned as a range (after), x cuBLASLt"
spec="bench/decode_scan.sh's (OUT/before.yaml, OUT/after.yaml): the stream-timed tasks of specs/gemm-decode.yaml, m points or {range: [1, 64], align: [1]}"
peers="cuBLASLt (the heuristic's first algorithm, 32 MiB workspace) raced by the worker at each m, interleaved with the registry's answer"
metric="per task: holes, geomean and worst x cuBLASLt over m = 1..64, before and after"
bar="after: worst >= 1.00x (no m slower than cuBLASLt)"
gpus=1
# 12 evaluations a bucket and 200 s a sweep: on an H200 the points took 106 s,
# the range 202 s (two of its 49 buckets cut at their share).
minutes=7
command="bench/decode_scan.sh OUT 12 200s"
needs="bench/decode_scan.sh bench/decode_table.py"

measure() { local out=$1; shift; bench/decode_scan.sh "$out" "${1:-12}" "${2:-200s}"; }

rows() {
    python3 - "$1/decode_table.txt" <<'PY'
import sys
for line in open(sys.argv[1]):
    if "|" not in line:
        continue
    task, before, after = (c.split() for c in line.split("|"))
    if len(before) != 5 or len(after) != 5 or before[0] == "holes":
        continue
    bh, bn, bg, bw, bat = before
    ah, an, ag, aw, aat = after
    ok = aw != "-" and float(aw) >= 1.0
    print("\t".join(["%s, m 1-64" % " ".join(task), "after: %s holes of %s m; worst %sx at %s" % (ah, an, aw, aat),
                     "cuBLASLt", "geomean %sx after, %sx before (worst %sx at %s)" % (ag, bg, bw, bat),
                     "worst >= 1.00x", "yes" if ok else "no"]))
PY
}
