#!/usr/bin/env bash
# bench/kern_check.sh: the GPU check of issue 33's kernels (gemv's mt, 2-4
# tiles of 16 rows of A per pass; swapab's mid-size kernel, up to 256 rows of
# A per pass), in one device call. Three phases, each under its own time
# limit, printing one line each and a table last:
#
#   check     a sweep of bench/kern_check.yaml (each task forced to one of
#             the two families; every candidate verified against the op's
#             reference, outputs poisoned with NaN), then `aitune scan` of
#             it, which verifies the registry's answer at every m of each
#             range (17..64 for gemv, 65..256 for swapab, two weights, three
#             output types): PASS when nothing was wrong, faulting or hung,
#             every size answered ok, and the sample held gemv mt 2, 3 and 4
#             and swapab bn 96, 128, 192 and 256.   (~1.5 min, at most 4)
#   sanitize  compute-sanitizer memcheck over a sweep of
#             bench/kern_sanitize.yaml (tests/gpu/sanitize.sh, the vendor
#             off): one bucket of each family, split-K clusters included.
#             KC_SANITIZE_SPEC (environment) names another spec (bench/midm.sh:
#             swapab's second mid-size kernel), KC_SANITIZE_LIMIT its limit in
#             seconds (default 150).               (~1 min, at most 2.5)
#   speed     bench/range_scan.sh: a range sweep of m 1..256 at WEIGHTS
#             (gemm_nt bf16, F.linear's layout, timing: stream, every
#             family, 8 candidates per template and bucket, a 120 s budget,
#             cuBLASLt timed beside: --vendor time), then `aitune scan` of
#             every m against cuBLASLt; the table of every m (x vendor and
#             the family that answered), then the phases' lines, then the
#             geomeans and worst per weight against issue 33's bars.
#                                                   (~2.5 min, at most 3.5)
# About 5 minutes in all; the limits add up to 10 (a device call's most).
#
#   bench/kern_check.sh [OUTDIR] [PHASES] [WEIGHTS]
#   OUTDIR   default $OUT/kern_check, else /tmp/aitune-kern-check
#   PHASES   comma-separated, default check,sanitize,speed
#   WEIGHTS  NxK,... for speed (default 4096x4096,1024x4096; issue 33's bar
#            also names 14336x4096 and 4096x14336: about 2 min more)
#
# Needs build/aitune (built; nothing is rebuilt here), a GPU, and for the
# sanitize phase compute-sanitizer (on PATH or in /usr/local/cuda/bin). Every
# file (registries, sweep and scan output, tables) stays in OUTDIR. Exit 0
# when every phase run passed (speed passes when it measured; its bars are
# printed, not enforced), 1 otherwise, 2 usage.
set -u
cd "$(dirname "$0")/.." || exit 1
out=${1:-${OUT:+$OUT/kern_check}}
out=${out:-/tmp/aitune-kern-check}
phases=${2:-check,sanitize,speed}
weights=${3:-4096x4096,1024x4096}
for p in ${phases//,/ }; do
    case $p in check | sanitize | speed) ;; *) echo "bench/kern_check.sh: unknown phase '$p' (check, sanitize, speed)" >&2; exit 2 ;; esac
done
[[ $weights =~ ^[0-9]+x[0-9]+(,[0-9]+x[0-9]+)*$ ]] || { echo "bench/kern_check.sh: WEIGHTS must be NxK,... not '$weights'" >&2; exit 2; }
[ -x build/aitune ] || { echo "bench/kern_check.sh: no build/aitune (make)" >&2; exit 1; }
mkdir -p "$out"
export PATH=$PATH:/usr/local/cuda/bin
has() { [[ ,$phases, == *,$1,* ]]; }
status=0
summary=()

if has check; then
    t0=$(date +%s)
    db=$out/check.db
    rm -f "$db" "$db"-wal "$db"-shm
    timeout 150 build/aitune sweep bench/kern_check.yaml --db "$db" --vendor off --timeout 20s \
        > "$out/check_sweep.txt" 2> "$out/check_sweep.err"
    src=$?
    timeout 90 build/aitune scan bench/kern_check.yaml --db "$db" --vendor off --timeout 20s \
        > "$out/check_scan.txt" 2> "$out/check_scan.err"
    scrc=$?
    python3 - "$db" "$src" "$scrc" > "$out/check_verdict.txt" <<'PY'
import json, sqlite3, sys
db, src, scrc = sys.argv[1], sys.argv[2], sys.argv[3]
con = sqlite3.connect(db)
bad = con.execute("select dtype, bucket, template, config, status, substr(error, 1, 160) from measurements "
                  "where status in ('wrong', 'runtime', 'timeout')").fetchall()
ok = con.execute("select template, config from measurements where status = 'ok'").fetchall()
seen = {"gemv mt": set(), "swapab bn": set()}
for t, c in ok:
    c = json.loads(c)
    if t == "gemm_nt/gemv":
        seen["gemv mt"].add(c.get("mt", 1))
    elif t == "gemm_nt/swapab":
        seen["swapab bn"].add(c["bn"])
scans = con.execute("select dtype, shape, template, status, coalesce(error, '') from scans").fetchall()
sbad = [s for s in scans if s[3] != "ok"]
per = {}
for d, sh, t, st, e in scans:
    per[t] = per.get(t, 0) + 1
want_mt, want_bn = {2, 3, 4}, {96, 128, 192, 256}
passed = (src == "0" and scrc == "0" and not bad and not sbad and len(ok) > 0 and len(scans) == 2 * 48 + 1 + 2 * 192 + 2
          and want_mt <= seen["gemv mt"] and want_bn <= seen["swapab bn"])
for r in bad[:12]:
    print("  wrong/faulting:", r)
for r in sbad[:12]:
    print("  scan not ok:", r)
print("  verified ok: %d candidates; gemv mt %s, swapab bn %s; scanned %d sizes %s" %
      (len(ok), sorted(seen["gemv mt"]), sorted(seen["swapab bn"]), len(scans), per))
print("%s check: sweep exit %s, scan exit %s, %d wrong/faulting candidates, %d of %d sizes not ok" %
      ("PASS" if passed else "FAIL", src, scrc, len(bad), len(sbad), len(scans)))
sys.exit(0 if passed else 1)
PY
    rc=$?
    [ $rc = 0 ] || status=1
    cat "$out/check_verdict.txt"
    summary+=("$(tail -1 "$out/check_verdict.txt") ($(( $(date +%s) - t0 )) s)")
fi

if has sanitize; then
    t0=$(date +%s)
    if command -v compute-sanitizer > /dev/null; then
        SANITIZE_SPEC=${KC_SANITIZE_SPEC:-bench/kern_sanitize.yaml} SANITIZE_ARGS="--vendor off" \
            timeout "${KC_SANITIZE_LIMIT:-150}" tests/gpu/sanitize.sh "$out/sanitize" \
            > "$out/sanitize_verdict.txt" 2>&1
        rc=$?
        [ $rc = 0 ] || status=1
        cat "$out/sanitize_verdict.txt"
        line=$(grep -E '^(PASS|FAIL)' "$out/sanitize_verdict.txt" | tail -1)
        summary+=("${line:-FAIL sanitize: no verdict (exit $rc; timed out?)} ($(( $(date +%s) - t0 )) s)")
    else
        status=1
        summary+=("FAIL sanitize: no compute-sanitizer on PATH or in /usr/local/cuda/bin")
    fi
fi

if has speed; then
    t0=$(date +%s)
    timeout 210 bench/range_scan.sh "$out/speed" "$weights" 1:256 8 120s time > "$out/speed_log.txt" 2>&1
    rc=$?
    cat "$out/speed_log.txt"
    python3 - "$out/speed/range.db" "$out/speed_geomeans.txt" > "$out/speed_table.txt" <<'PY'
import json, math, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
rows = con.execute("select shape, median_us, vendor_us, template from scans where op = 'gemm_nt'").fetchall()
short = {"gemm_nt/gemv": "g", "gemm_nt/rowdot": "r", "gemm_nt/swapab": "s", "gemm_nt/mma": "m", "gemm_nt/wgmma": "w"}
by = {}
for shape, us, vus, t in rows:
    s = json.loads(shape)
    by.setdefault((s["n"], s["k"]), []).append((s["m"], us, vus, t))
def geo(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")
print("every m: m:x vendor + family (g gemv, r rowdot, s swapab, m mma, w wgmma, v vendor, ? none); < 1.00 marked *")
lines = []
for (n, k), rs in sorted(by.items()):
    rs.sort()
    print("%dx%d" % (n, k))
    cells = []
    for m, us, vus, t in rs:
        x = vus / us if us and vus else 0.0
        cells.append("%3d:%5.3f%s%s" % (m, x, short.get(t, "v" if t and t.startswith("vendor") else "?"), "*" if x < 1.0 else " "))
    for i in range(0, len(cells), 8):
        print("  " + " ".join(cells[i:i + 8]))
    lo = [v / u for m, u, v, t in rs if m <= 64 and u and v]
    hi = [v / u for m, u, v, t in rs if 65 <= m <= 256 and u and v]
    allx = [(v / u, m) for m, u, v, t in rs if u and v]
    worst = min(allx) if allx else (float("nan"), 0)
    fams = {}
    for m, u, v, t in rs:
        fams[short.get(t, "?")] = fams.get(short.get(t, "?"), 0) + 1
    ok = worst[0] >= 1.0 and geo(lo) >= 1.25 and geo(hi) >= 1.10
    lines.append("%-11s geomean x cuBLASLt m<=64 %.3f (bar 1.25), 65..256 %.3f (bar 1.10); worst %.3f at m=%d (bar 1.00); "
                 "%d m, answered by %s; bars %s" % ("%dx%d" % (n, k), geo(lo), geo(hi), worst[0], worst[1], len(rs),
                 " ".join("%s %d" % kv for kv in sorted(fams.items())), "met" if ok else "not met"))
with open(sys.argv[2], "w") as f:
    for l in lines:
        f.write(l + "\n")
PY
    prc=$?
    [ $rc = 0 ] && [ $prc = 0 ] || status=1
    summary+=("$([ $rc = 0 ] && [ $prc = 0 ] && echo measured || echo "FAIL speed: exit $rc") speed: $weights, m 1..256 ($(( $(date +%s) - t0 )) s; $out/speed/range_table.txt)")
fi

# Last: the per-m table, each phase's line, the geomeans.
echo
if has speed && [ -s "$out/speed_table.txt" ]; then
    cat "$out/speed_table.txt"
    echo
fi
echo "== bench/kern_check.sh ($phases) into $out"
for s in "${summary[@]}"; do echo "$s"; done
if has speed && [ -s "$out/speed_geomeans.txt" ]; then
    cat "$out/speed_geomeans.txt"
fi
exit $status
