#!/usr/bin/env bash
# bench/range_scan.sh: issue 33's yardstick, every size of a range against the
# vendor. One device call: a range sweep of gemm_nt bf16 (F.linear's layout,
# timed as a stream, the vendor raced at each bucket and part), then `aitune
# scan` of every size of the range (the registry's answer against cuBLASLt,
# in the same task), then a table per weight: sizes, holes, geomean and worst
# x vendor over m <= 64 and over 65..256.
#   bench/range_scan.sh OUTDIR [WEIGHTS] [LO:HI] [MAX_EVALS] [BUDGET] [VENDOR]
#   WEIGHTS: NxK,... (default 4096x4096); LO:HI the m range (default 1:64);
#   MAX_EVALS per bucket and template (default 16); BUDGET the sweep's (default
#   none); VENDOR win (a bucket or part the vendor beats is the vendor's),
#   time (the vendor timed at each bucket for x vendor, holding none) or off
#   (aitune's own kernels only: issue 33's first bar; default off). Either
#   way the scan races the vendor at every size.
#   SCAN_ARGS (environment): more arguments for `aitune scan`, e.g.
#   "--step 61" for issue 33's second row (m 256..8192 in steps of 61).
#   RANGE_TEMPLATES (environment): only these of gemm_nt's families, e.g.
#   "swapab" or "swapab,wgmma" (the spec's `templates:`; default all).
#   RANGE_HOLD=1 (environment): `hold: true` (winners chosen over each
#   bucket, parts where they lose; docs/SPEC.md).
#   RANGE_EXACT=1 (environment): n and k `exact: true`, as a model's
#   weights are tuned (python -m aitune tune): each weight its own bucket,
#   hold's races and parts along m only.
#   AITUNE (environment): the binary (default build/aitune), e.g. an older
#   build beside this one for an A/B in one session.
#   RANGE_WINDOW=D (environment, e.g. 150s): after the scan, `aitune window`
#   over the spec for D (the buckets with the scan's holes first: their
#   finalists and neighbours' winners raced at the holes' sizes), then the
#   scan again; the table is the second scan's. On an H200 (eighteenth
#   session, bench/results/2026-11-29/s18-window-call10) a window of 92 s
#   took 1024 x 4096 from 15 holes (0.990x worst) to none (1.094x).
# The registry (OUTDIR/range.db), the sweep's and scan's output, the sweep's
# trace (OUTDIR/trace.txt, AITUNE_TRACE) with where its time went bucket by
# bucket (OUTDIR/time_split.txt, bench/trace_split.py) and the table
# (OUTDIR/range_table.txt) stay in OUTDIR. Needs a built tree (make) and a GPU.
set -u
AITUNE=${AITUNE:-build/aitune}
out=${1:?OUTDIR}
weights=${2:-4096x4096}
range=${3:-1:64}
evals=${4:-16}
budget=${5:-}
vendor=${6:-off}
case $vendor in
    win | time | off) ;;
    *) echo "bench/range_scan.sh: VENDOR must be win, time or off, not '$vendor'" >&2; exit 2 ;;
esac
case ${RANGE_EXACT:-} in "" | 1) ;; *) echo "bench/range_scan.sh: RANGE_EXACT must be 1 or unset, not '$RANGE_EXACT'" >&2; exit 2 ;; esac
[[ ${RANGE_WINDOW:-} =~ ^([0-9]+[smh]?)?$ ]] ||
    { echo "bench/range_scan.sh: RANGE_WINDOW must be a duration such as 150s or 5m, not '$RANGE_WINDOW'" >&2; exit 2; }
[[ ${RANGE_TEMPLATES:-} =~ ^[a-z0-9_]*(,[a-z0-9_]+)*$ ]] ||
    { echo "bench/range_scan.sh: RANGE_TEMPLATES must be names separated by commas, not '$RANGE_TEMPLATES'" >&2; exit 2; }
mkdir -p "$out"
db=$out/range.db
spec=$out/range.yaml
{
    echo "name: range-scan"
    echo "arch: sm_90a"
    echo "search: model"
    echo "max_evals: $evals"
    echo "top_k: 4"
    echo "timing: stream"
    [ "${RANGE_HOLD:-0}" = 1 ] && echo "hold: true"
    echo "tasks:"
    for w in ${weights//,/ }; do
        echo "  - op: gemm_nt"
        echo "    dtypes: [bf16]"
        [ -n "${RANGE_TEMPLATES:-}" ] && echo "    templates: [${RANGE_TEMPLATES//,/, }]"
        echo "    shapes:"
        echo "      m: {range: [${range%:*}, ${range#*:}], align: [1]}"
        echo "      n: {values: [${w%x*}]${RANGE_EXACT:+, exact: true}}"
        echo "      k: {values: [${w#*x}]${RANGE_EXACT:+, exact: true}}"
    done
} > "$spec"
t0=$(date +%s)
rm -f "$out/trace.txt"
AITUNE_TRACE=$out/trace.txt "$AITUNE" sweep "$spec" --db "$db" --vendor "$vendor" \
    ${budget:+--budget "$budget"} > "$out/sweep.txt" 2> "$out/sweep.err"
echo "sweep: exit $?, $(( $(date +%s) - t0 )) s; $(grep -E '^(sweep|hold|vendor):' "$out/sweep.err" | grep -v '^sweep: bucket ' | tr '\n' ' ')"
python3 bench/trace_split.py "$out/trace.txt" > "$out/time_split.txt" 2>&1
t1=$(date +%s)
"$AITUNE" scan "$spec" --db "$db" ${SCAN_ARGS:-} > "$out/scan.txt" 2> "$out/scan.err"
echo "scan: exit $?, $(( $(date +%s) - t1 )) s"
grep '^scan:' "$out/scan.err"
if [ -n "${RANGE_WINDOW:-}" ]; then
    t2=$(date +%s)
    "$AITUNE" window "$spec" --budget "$RANGE_WINDOW" --db "$db" > "$out/window.txt" 2> "$out/window.err"
    echo "window: exit $?, $(( $(date +%s) - t2 )) s"
    t3=$(date +%s)
    "$AITUNE" scan "$spec" --db "$db" ${SCAN_ARGS:-} > "$out/scan2.txt" 2> "$out/scan2.err"
    echo "scan after the window: exit $?, $(( $(date +%s) - t3 )) s"
    grep '^scan:' "$out/scan2.err"
fi
python3 - "$db" > "$out/range_table.txt" <<'PY'
import json, math, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select shape, median_us, vendor_us, hole, template, bucket from scans where op = 'gemm_nt'").fetchall()
by = {}
for shape, us, vus, hole, tmpl, bucket in rows:
    s = json.loads(shape)
    by.setdefault((s["n"], s["k"]), []).append((s["m"], us, vus, hole, tmpl, bucket))
print("%-12s %-9s %5s %5s %10s %10s %10s %16s" % ("weight", "m", "sizes", "holes", "geo<=64", "geo65-256", "worst", "at"))
for (n, k), rs in sorted(by.items()):
    rs.sort()
    def geo(sel):
        xs = [v / u for m, u, v, h, t, b in sel if u and v]
        return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")
    lo = [r for r in rs if r[0] <= 64]
    hi = [r for r in rs if 65 <= r[0] <= 256]
    xs = [(r[2] / r[1], r[0]) for r in rs if r[1] and r[2]]
    worst = min(xs) if xs else (float("nan"), 0)
    print("%-12s %-9s %5d %5d %10.3f %10.3f %10.3f %16s" % ("%dx%d" % (n, k), "%d-%d" % (rs[0][0], rs[-1][0]), len(rs),
          sum(r[3] for r in rs), geo(lo), geo(hi), worst[0], "m=%d" % worst[1]))
for (n, k), rs in sorted(by.items()):
    xs = [v / u for m, u, v, h, t, b in rs if u and v]
    print("geomean over every size scanned, %dx%d: %.3f" % (n, k, math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")))
print()
print("every m (us, vendor us, x vendor, template, bucket):")
for (n, k), rs in sorted(by.items()):
    for m, us, vus, hole, tmpl, bucket in rs:
        print("%dx%d m=%-5d %9.2f %9.2f %6.3f%s  %s  %s" % (n, k, m, us or 0, vus or 0, (vus / us) if us and vus else 0,
              " HOLE" if hole else "", tmpl, bucket))
PY
head -8 "$out/range_table.txt"
