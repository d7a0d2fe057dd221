# bench/suites/prefill-range.sh: issue 33's second row, every prefill size of a
# range: m from 256 to 8192 in steps of 61 at 4096 x 4096 and 14336 x 4096 (nt,
# bf16), a range sweep of aitune's own kernels (the vendor timed as hold's bar,
# --vendor time, never a winner), then `aitune scan` of each of the 132 sizes
# a weight against cuBLASLt raced in the same task. ARGS (`bench/run
# prefill-range -- WEIGHTS [RANGE [EVALS [BUDGET]]]`) take the place of the
# defaults, in that order: `-- 4096x4096` sweeps one weight with the whole
# 300 s (its buckets twice the share; the other weight's rows stay as they
# were). On an H200 (twentieth session, calls 2 and 3) both weights at 300 s
# left the large-m buckets' holds cut (4096^2's m = 2048..4095 a 15 s
# share), where 75 s a bucket let hold find a config that holds its range.
# One weight a call (twenty-first session, calls 4 and 5): 4096^2's sweep
# took 267 s, one bucket cut, geomean 0.945 and worst 0.795 (0.893 and 0.675
# with both weights); 14336 x 4096's buckets were all cut (its races cost
# 3.5 times as much), 0.946 and 0.743. Twenty-third session (calls 3 and 4,
# with lean swapped stores and PDL): 0.958 / 0.716 and 0.959 / 0.764; each
# call took 309 and 407 s of device time.
about="GEMM over prefill sizes (m 256..8192, step 61) at two weights, aitune's own kernels against cuBLASLt raced at each m"
spec="bench/range_scan.sh's (written into OUT/range.yaml): gemm_nt bf16, m {range: [256, 8192], align: [1]}, n and k exact, timing stream"
peers="cuBLASLt (the heuristic's first algorithm, 32 MiB workspace) raced by the worker at each m, interleaved with the registry's answer"
metric="per weight: holes, geomean x cuBLASLt over the 132 sizes, the worst"
bar="per weight: own kernels worst >= 0.97x"
gpus=1
# 300 s for the 34 buckets: on an H200 a 200 s sweep of one weight was cut in 3
# of its 17 buckets (nineteenth session, call 9); the scan takes about 155 s.
minutes=9
command="SCAN_ARGS=\"--step 61\" RANGE_EXACT=1 bench/range_scan.sh OUT 4096x4096,14336x4096 256:8192 8 300s time"
needs="bench/range_scan.sh"

measure() {
    local out=$1; shift
    SCAN_ARGS="--step 61" RANGE_EXACT=1 bench/range_scan.sh "$out" "${1:-4096x4096,14336x4096}" "${2:-256:8192}" "${3:-8}" "${4:-300s}" time
}

rows() {
    python3 - "$1/range_table.txt" <<'PY'
import re, sys
geo, summary = {}, []
for line in open(sys.argv[1]):
    m = re.match(r"geomean over every size scanned, (\S+): (\S+)", line)
    if m:
        geo[m.group(1)] = m.group(2)
        continue
    f = line.split()
    # the summary's rows (weight, LO-HI, ...), not each m's (weight, m=M, ...)
    if len(f) == 8 and f[0] != "weight" and "x" in f[0] and not f[1].startswith("m="):
        summary.append(f)
for w, ms, n, holes, _, _, worst, at in summary:
    print("\t".join(["gemm_nt bf16 %s, m %s step 61" % (w, ms), "%s holes of %s m; worst %sx at %s" % (holes, n, worst, at),
                     "cuBLASLt", "geomean %sx" % geo.get(w, "nan"), "own kernels worst >= 0.97x",
                     "yes" if float(worst) >= 0.97 else "no"]))
PY
}
