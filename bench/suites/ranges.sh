# bench/suites/ranges.sh: every size an application runs, not only the sizes
# tuned (issue 33): a range sweep of m in [1, 256] at the four weights of
# Llama-3-8B's layers (aitune's own kernels: the vendor holds no bucket; it is
# timed, --vendor time, so hold splits and searches where a winner is slower
# than cuBLASLt), then `aitune scan` of every m against cuBLASLt raced in the
# same task.
about="GEMM over every m of a range (1..256) at four weights, against cuBLASLt raced at each m"
spec="bench/range_scan.sh's (written into OUT/range.yaml): gemm_nt bf16, m {range: [1, 256], align: [1]}, n and k exact, timing stream"
peers="cuBLASLt (the heuristic's first algorithm, 32 MiB workspace) raced by the worker at each m, interleaved with the registry's answer"
metric="per weight: holes, geomean x cuBLAS over m <= 64 and over 65..256, the worst x cuBLAS"
bar="per weight: worst >= 1.00x; geomean >= 1.25x over m <= 64 and >= 1.10x over 65..256"
gpus=1
# 400 s for the 36 buckets: issue 33 allows one sweep of these ranges 15
# minutes; at 200 s hold and split were cut in 7 buckets, and 4096^2's
# [128, 256) bucket raced none of its sizes (bench/RESULTS.md, ninth session).
# n and k exact (RANGE_EXACT=1), as `python -m aitune tune` writes a model's
# weights: each weight its own bucket, tuned at itself, not at the upper edge of
# a power-of-two bucket of n and k (a 1024-wide weight tuned at n = 2047,
# k = 8191). On an H200 that moved 1024x4096's geomean over m <= 64 from 1.167
# to 1.342 (bench/RESULTS.md, tenth session, call 6). --vendor time, not off:
# hold takes cuBLASLt as a bar beside the finalists; on an H200 the worst of
# 1024x4096, 4096^2 and 4096x14336 rose from 0.93-0.96x to 1.02-1.03x
# (sixteenth session, call 3).
minutes=9
command="RANGE_EXACT=1 bench/range_scan.sh OUT 4096x4096,1024x4096,14336x4096,4096x14336 1:256 8 400s time"
needs="bench/range_scan.sh"

measure() { local out=$1; shift; RANGE_EXACT=1 bench/range_scan.sh "$out" "${1:-4096x4096,1024x4096,14336x4096,4096x14336}" "${2:-1:256}" "${3:-8}" "${4:-400s}" time; }

rows() {
    python3 - "$1/range_table.txt" <<'PY'
import sys
for line in open(sys.argv[1]):
    f = line.split()
    # the summary's rows (weight, LO-HI, ...), not each m's (weight, m=M, ...)
    if len(f) != 8 or f[0] == "weight" or "x" not in f[0] or f[1].startswith("m="):
        continue
    w, ms, n, holes, lo, hi, worst, at = f
    ok = float(worst) >= 1.0 and float(lo) >= 1.25 and (hi == "nan" or float(hi) >= 1.10)
    print("\t".join(["gemm_nt bf16 %s, m %s" % (w, ms), "%s holes of %s m; worst %sx at %s" % (holes, n, worst, at),
                     "cuBLASLt", "geomean %sx (m <= 64), %sx (65..256)" % (lo, hi),
                     "worst >= 1.00x; geomean >= 1.25x, >= 1.10x", "yes" if ok else "no"]))
PY
}
