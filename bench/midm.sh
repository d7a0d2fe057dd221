#!/usr/bin/env bash
# bench/midm.sh: issue 33's first bar at m = 65..256 for swapab's second
# mid-size kernel (templates/gemm_nt/swapab.lua, mc >= 1: A's rows loaded
# only over the pass's rows, the wgmma width chosen at run time among nvar,
# A multicast to mc column tiles of a cluster), in one device call on an
# H100 (about 5.5 minutes, at most 7). Three phases, each under its own
# limit, one line each, the tables last:
#
#   check     a sweep (timing flush, every candidate verified against the
#             op's reference with NaN-poisoned outputs) of the second kernel
#             alone (a copy of the templates whose swapab space has mc 1, 2,
#             4 only: bench/narrow.py) over m 65..256 at n = 1100, k = 1096
#             (partial column tiles and k boxes; 1100 / bm tiles pad
#             multicast groups with CTAs past n) in bf16, and bf16>f32 at m =
#             65, 150, 256; then `aitune scan` verifies the registry's answer
#             at a sample of 40 m and more (the speed phase's scan verifies
#             every m at the four weights). PASS: nothing wrong, faulting or
#             hung, every size scanned ok, mc 2 and 4 and nvar 3 and 5 among
#             the verified. An mc or nvar value that failed here is left out
#             of the speed phase's space (said in its line), so a broken path
#             costs one phase, not the run.          (~1 min, at most 2)
#   speed     bench/range_scan.sh over the four weights of issue 33's first
#             bar (4096x4096, 1024x4096, 14336x4096, 4096x14336), m 65..256
#             as a range (buckets tuned at 127, 255 and 256), n and k exact
#             (as python -m aitune tune writes a model's weights), gemm_nt
#             bf16, timing stream, hold (winners chosen over each bucket,
#             parts along m where they lose), only TEMPLATES (default swapab) with swapab's
#             space narrowed to the mid-size kernels (mc 0, the first one, as
#             the control; mc 1, 2, 4; nvar 1, 2, 3, 5; pdl, l2pre, inflight),
#             EVALS candidates per bucket (default 40) within BUDGET (default
#             150s); every candidate verified. Then `aitune scan` of every m
#             against cuBLASLt (the vendor in the loop, raced in the same
#             task).                                (~3.5 min, at most 4.3)
#   sanitize  compute-sanitizer memcheck (bench/kern_check.sh's sanitize
#             phase, tests/gpu/sanitize.sh) over a sweep of one bucket (m =
#             200, n = 1100, k = 1096) of the second kernel with multicast
#             and split-K (2D clusters).             (~40 s, at most 1.2)
#
# Printed last: each bucket or part that answered, the m it answered, its
# x cuBLASLt there and its config, with the fastest of each kernel (mc 0
# the first, mc 1/2/4 the second), each nvar and each cluster size (cl: mc
# x csplit CTAs) measured at the size it was tuned at (the A/B of the
# design); the first kernel against the second wherever both were measured;
# every m as x cuBLASLt with the family and mc that answered; per weight
# the geomean over 65..256, the worst, the holes, the us of both at m = 65,
# 128, 129, 192, 255, 256, and the bar (worst >= 1.00x, geomean >= 1.10x).
#
#   bench/midm.sh OUTDIR [TEMPLATES] [BUDGET] [EVALS]
#   TEMPLATES  gemm_nt families for the speed phase, comma-separated
#              (default swapab; "swapab,wgmma" races the wgmma family too)
#   BUDGET     the speed sweep's budget (default 150s)
#   EVALS      candidates per template and bucket (default 40)
#   MIDM_PHASES (environment) the phases to run, comma-separated (default
#              check,speed,sanitize); the tables read OUTDIR/speed/range.db
#              when there is one (a second call into the same OUTDIR with
#              MIDM_PHASES=sanitize prints the first's tables again)
# Needs build/aitune (built where Lua headers are: nothing is built here),
# python3, a GPU, compute-sanitizer on PATH or in /usr/local/cuda/bin. Every
# file (registries, outputs, tables) stays in OUTDIR. Exit 0 when check and
# sanitize passed and speed measured (the bars are printed, not enforced),
# 1 otherwise, 2 usage.
set -u
cd "$(dirname "$0")/.." || exit 1
out=${1:-}
templates=${2:-swapab}
budget=${3:-150s}
evals=${4:-40}
usage() { echo "bench/midm.sh: $1 (usage: bench/midm.sh OUTDIR [TEMPLATES] [BUDGET] [EVALS])" >&2; exit 2; }
[ -n "$out" ] || usage "OUTDIR missing"
[[ $templates =~ ^[a-z0-9_]+(,[a-z0-9_]+)*$ ]] || usage "TEMPLATES must be names separated by commas, not '$templates'"
[[ $budget =~ ^[0-9]+[smh]$ ]] || usage "BUDGET must be like 150s, not '$budget'"
[[ $evals =~ ^[0-9]+$ ]] && [ "$evals" -ge 1 ] || usage "EVALS must be a positive integer, not '$evals'"
[ -x build/aitune ] || { echo "bench/midm.sh: no build/aitune (make)" >&2; exit 1; }
weights=4096x4096,1024x4096,14336x4096,4096x14336
phases=${MIDM_PHASES:-check,speed,sanitize}
for p in ${phases//,/ }; do
    case $p in check | speed | sanitize) ;; *) usage "MIDM_PHASES: unknown phase '$p' (check, speed, sanitize)" ;; esac
done
has() { [[ ,$phases, == *,$1,* ]]; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
export PATH=$PATH:/usr/local/cuda/bin
status=0
summary=()
t_all=$(date +%s)

# A copy of templates/ whose swapab space is SPACE's values (bench/narrow.py).
narrow() {   # narrow HOME MC NVAR CSPLIT BM
    cat > "$1.lua" <<LUA
M.params = {
  { "bm", { $5 } },
  { "bn", { 96, 128, 192, 256 } },
  { "stages", { 2, 4, 6, 8 } },
  { "csplit", { $4 } },
  { "pdl", { 0, 1 } },
  { "l2pre", { 0, 2 } },
  { "inflight", { 0, 1 } },
  { "kbox", { 1 } },
  { "mc", { $2 } },
  { "nvar", { $3 } },
}
LUA
    rm -rf "$1"
    python3 bench/narrow.py "$1" swapab "$1.lua"
}

# ---- check ----
if has check; then
t0=$(date +%s)
narrow "$out/home_check" "1, 2, 4" "1, 2, 3, 5" "1, 2, 4, 8" "64, 128, 256" || exit 1
cat > "$out/check.yaml" <<'YAML'
name: midm-check
arch: sm_90a
search: random
seed: 5
max_evals: 6
top_k: 2
timing: flush
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [swapab]
    shapes: {m: {range: [65, 256], align: [1]}, n: {values: [1100]}, k: {values: [1096]}}
  - op: gemm_nt
    dtypes: [bf16>f32]
    templates: [swapab]
    shapes: {m: {values: [65, 150, 256]}, n: {values: [1100]}, k: {values: [1096]}}
YAML
rm -f "$out/check.db" "$out/check.db-wal" "$out/check.db-shm"
AITUNE_HOME=$out/home_check timeout 75 build/aitune sweep "$out/check.yaml" --db "$out/check.db" --vendor off \
    --timeout 5s > "$out/check_sweep.txt" 2> "$out/check_sweep.err"
src=$?
AITUNE_HOME=$out/home_check timeout 45 build/aitune scan "$out/check.yaml" --db "$out/check.db" --vendor off \
    --sample 40 --timeout 5s > "$out/check_scan.txt" 2> "$out/check_scan.err"
scrc=$?
python3 - "$out/check.db" "$src" "$scrc" "$out/check_bad_values" > "$out/check_verdict.txt" <<'PY'
import json, sqlite3, sys
db, src, scrc, badf = sys.argv[1:5]
try:
    con = sqlite3.connect(db)
    rows = con.execute("select config, status, substr(coalesce(error, ''), 1, 160) from measurements "
                       "where template = 'gemm_nt/swapab'").fetchall()
    scans = con.execute("select shape, status, config, coalesce(error, '') from scans").fetchall()
except sqlite3.Error as e:
    rows, scans = [], []
    print("  no registry to read: %s" % e)
bad = [(json.loads(c), s, e) for c, s, e in rows if s in ("wrong", "runtime", "timeout")]
ok = [json.loads(c) for c, s, e in rows if s == "ok"]
seen_mc = sorted({c.get("mc", 0) for c in ok})
seen_nv = sorted({c.get("nvar", 1) for c in ok})
# An mc or nvar value that failed and never passed is left out of the speed phase.
bad_mc = sorted({c.get("mc", 0) for c, s, e in bad} - set(seen_mc))
bad_nv = sorted({c.get("nvar", 1) for c, s, e in bad} - set(seen_nv))
with open(badf, "w") as f:
    f.write("mc %s\nnvar %s\n" % (" ".join(map(str, bad_mc)), " ".join(map(str, bad_nv))))
sbad = [s for s in scans if s[1] != "ok"]
for c, s, e in bad[:10]:
    print("  %s: %s %s" % (s, json.dumps(c, sort_keys=True), e))
for s in sbad[:10]:
    print("  scan not ok:", s)
passed = (src == "0" and scrc == "0" and not bad and not sbad and ok and len(scans) >= 40 + 3
          and {2, 4} <= set(seen_mc) and {3, 5} <= set(seen_nv))
print("  verified ok: %d candidates, mc %s, nvar %s; %d failed (mc never ok: %s, nvar never ok: %s); %d sizes scanned"
      % (len(ok), seen_mc, seen_nv, len(bad), bad_mc or "-", bad_nv or "-", len(scans)))
print("%s check: sweep exit %s, scan exit %s, %d wrong/faulting/hung candidates, %d of %d sizes not ok" %
      ("PASS" if passed else "FAIL", src, scrc, len(bad), len(sbad), len(scans)))
sys.exit(0 if passed else 1)
PY
[ $? = 0 ] || status=1
cat "$out/check_verdict.txt"
summary+=("$(tail -1 "$out/check_verdict.txt") ($(( $(date +%s) - t0 )) s)")
fi

# ---- speed ----
if has speed; then
t0=$(date +%s)
# The values of mc and nvar the check saw fail and never pass are left out.
keep() {   # keep "VALUES" "DROPPED": VALUES without DROPPED, comma-separated
    local v d out=()
    for v in $1; do
        for d in $2; do [ "$v" = "$d" ] && continue 2; done
        out+=("$v")
    done
    local IFS=,
    echo "${out[*]}"
}
bad_mc=$(sed -n 's/^mc //p' "$out/check_bad_values" 2>/dev/null)
bad_nv=$(sed -n 's/^nvar //p' "$out/check_bad_values" 2>/dev/null)
mcs=$(keep "0 1 2 4" "$bad_mc")
nvs=$(keep "1 2 3 5" "$bad_nv")
[ -n "$nvs" ] || nvs=1
dropped="${bad_mc:+ mc $bad_mc}${bad_nv:+ nvar $bad_nv}"
narrow "$out/home_speed" "$mcs" "$nvs" "1, 2, 4, 8" "64, 128, 256" || exit 1
AITUNE_HOME=$out/home_speed RANGE_TEMPLATES=$templates RANGE_HOLD=1 RANGE_EXACT=1 timeout 255 \
    bench/range_scan.sh "$out/speed" "$weights" 65:256 "$evals" "$budget" off > "$out/speed_log.txt" 2>&1
rc=$?
cat "$out/speed_log.txt"
[ $rc = 0 ] || status=1
summary+=("$([ $rc = 0 ] && echo measured || echo "FAIL ($rc)") speed: $templates at $weights, m 65..256, mc {$mcs} nvar {$nvs}${dropped:+ (left out after check:$dropped)}, $evals evals, budget $budget ($(( $(date +%s) - t0 )) s)")
fi

# ---- sanitize ----
if has sanitize; then
t0=$(date +%s)
narrow "$out/home_san" "2, 4" "3" "2" "64, 128" || exit 1
cat > "$out/sanitize.yaml" <<'YAML'
name: midm-sanitize
arch: sm_90a
search: random
seed: 11
max_evals: 3
top_k: 1
timing: flush
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [swapab]
    shapes: {m: {values: [200]}, n: {values: [1100]}, k: {values: [1096]}}
YAML
left=$(( 420 - ($(date +%s) - t_all) - 10 ))
[ $left -gt 90 ] && left=90
if [ $left -lt 30 ]; then
    status=1
    summary+=("FAIL sanitize: not run, $left s left of the 7 minutes")
else
    AITUNE_HOME=$out/home_san KC_SANITIZE_SPEC=$out/sanitize.yaml KC_SANITIZE_LIMIT=$left \
        bench/kern_check.sh "$out/kc" sanitize > "$out/sanitize_log.txt" 2>&1 || status=1
    line=$(grep -hE '^(PASS|FAIL)' "$out/kc/sanitize_verdict.txt" "$out/sanitize_log.txt" 2>/dev/null | grep sanitize | tail -1)
    summary+=("${line:-FAIL sanitize: no verdict (timed out?)} ($(( $(date +%s) - t0 )) s)")
fi
fi

# ---- the tables ----
echo
[ -f "$out/speed/range.db" ] && python3 - "$out/speed/range.db" > "$out/midm_table.txt" <<'PY'
import json, math, sqlite3, sys
try:
    con = sqlite3.connect(sys.argv[1])
    scans = con.execute("select shape, median_us, vendor_us, template, config, bucket, status from scans "
                        "where op = 'gemm_nt'").fetchall()
    winners = con.execute("select bucket, shape, median_us from winners where op = 'gemm_nt'").fetchall()
    meas = con.execute("select shape, template, config, median_us from measurements "
                       "where op = 'gemm_nt' and status = 'ok'").fetchall()
    gpu = con.execute("select name from devices limit 1").fetchone()
except sqlite3.Error as e:
    print("no speed registry to read: %s" % e)
    sys.exit(1)
print("GPU: %s" % (gpu[0] if gpu else "?"))
def w_of(s): return "%dx%d" % (s["n"], s["k"])
def geo(xs): return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")
def short(t, c):
    if not t: return "?"
    if t.startswith("vendor"): return "v"
    f = {"gemm_nt/swapab": "s", "gemm_nt/wgmma": "w", "gemm_nt/mma": "m"}.get(t, "?")
    if f == "s" and c:
        f += str(json.loads(c).get("mc", 0))
    return f
def cfg_s(c):
    c = json.loads(c)
    keys = ["bm", "bn", "csplit", "mc", "nvar", "stages", "pdl", "l2pre", "inflight"]
    return " ".join("%s%s" % (k, c[k]) for k in keys if k in c) or json.dumps(c)
vend = {}
for sh, us, vus, t, c, b, st in scans:
    s = json.loads(sh)
    vend[(w_of(s), s["m"])] = vus
# Fastest measured per kernel (mc) and per nvar at each tuned shape.
best = {}
for sh, t, c, us in meas:
    s = json.loads(sh)
    c = json.loads(c)
    key = (w_of(s), s["m"])
    d = best.setdefault(key, {})
    if t == "gemm_nt/swapab":
        # cl: CTAs a cluster (mc x csplit): whether clusters of 8 fit one wave shows here.
        cl = "cl%d" % (max(c.get("mc", 0), 1) * c.get("csplit", 1))
        for lab in ("mc%d" % c.get("mc", 0), "nvar%d" % c.get("nvar", 1) if c.get("mc", 0) >= 1 else None, cl):
            if lab and (lab not in d or us < d[lab]): d[lab] = us
    else:
        lab = t.split("/")[-1]
        if lab not in d or us < d[lab]: d[lab] = us
print()
# Who answered which m: each bucket or part that answered a scanned size,
# its config, the sizes it answered and its x cuBLASLt over them; its time at
# the size it was tuned at, and the fastest of each kernel measured there.
tuned = {b: (json.loads(sh), us) for b, sh, us in winners}
ans = {}
for sh, us, vus, t, c, b, st in scans:
    s = json.loads(sh)
    ans.setdefault((w_of(s), b, t, c), []).append((s["m"], us, vus))
print("who answered (weight, m answered, x cuBLASLt there: geomean and worst, family+mc, config; the size it was")
print("tuned at, its time there and the fastest of each kernel measured there):")
for (w, b, t, c), ms in sorted(ans.items(), key=lambda kv: (kv[0][0], min(m for m, u, v in kv[1]))):
    ms.sort()
    xs = [v / u for m, u, v in ms if u and v]
    line = "  %-10s m %3d-%-3d %5.3f %5.3f %-3s %s" % (w, ms[0][0], ms[-1][0], geo(xs), min(xs) if xs else float("nan"),
                                                   short(t, c), cfg_s(c) if c else "-")
    print(line)
    if b in tuned:
        s, us = tuned[b]
        d = best.get((w_of(s), s["m"]), {})
        ab = "  ".join("%s %.2f" % (k, d[k]) for k in sorted(d, key=lambda k: ({"m": 0, "n": 1, "c": 2}.get(k[0], 3), k)))
        print("      tuned at m=%d (%s): %.2f us;  %s" % (s["m"], w_of(s), us, ab))
# The first kernel against the second wherever the sweep (its search, hold's
# probes at a bucket's middle and lower sizes, parts) measured both: the
# rows past m it zero-fills and the width it cannot narrow show here.
scanned = {w_of(json.loads(r[0])) for r in scans}
pairs = sorted((k, d) for k, d in best.items()
               if k[0] in scanned and "mc0" in d and any(("mc%d" % x) in d for x in (1, 2, 4)))
if pairs:
    print()
    print("first (mc0) against second mid-size kernel (best of mc1/2/4), us, at every size both were measured:")
    for (w, m), d in pairs:
        two = min(d[k] for k in ("mc1", "mc2", "mc4") if k in d)
        print("  %-10s m=%-4d mc0 %7.2f  second %7.2f  (%.2fx)" % (w, m, d["mc0"], two, d["mc0"] / two))
by = {}
for sh, us, vus, t, c, b, st in scans:
    s = json.loads(sh)
    by.setdefault(w_of(s), []).append((s["m"], us, vus, t, c, st))
print()
print("every m: m:x cuBLASLt + who answered (s0 swapab's first mid-size kernel, s1/s2/s4 its second with mc 1/2/4, "
      "w wgmma, m mma, v vendor); < 1.00 marked *")
lines = []
for w, rs in sorted(by.items()):
    rs.sort()
    print(w)
    cells = []
    for m, us, vus, t, c, st in rs:
        x = vus / us if us and vus else 0.0
        cells.append("%3d:%5.3f%-2s%s" % (m, x, short(t, c), "*" if x < 1.0 else " "))
    for i in range(0, len(cells), 8):
        print("  " + " ".join(cells[i:i + 8]))
    xs = [(v / u, m) for m, u, v, t, c, st in rs if u and v and 65 <= m <= 256]
    worst = min(xs) if xs else (float("nan"), 0)
    g = geo([x for x, m in xs])
    holes = sum(1 for x, m in xs if x < 1.0)
    missing = sum(1 for m, u, v, t, c, st in rs if not (u and v))
    met = xs and worst[0] >= 1.0 and g >= 1.10 and missing == 0
    us_at = {m: (u, v) for m, u, v, t, c, st in rs}
    at = "; ".join("m=%d %.2f/%.2f us" % (m, us_at[m][0] or 0, us_at[m][1] or 0) for m in (65, 128, 129, 192, 255, 256)
                   if m in us_at)
    lines.append("%-11s geomean x cuBLASLt over 65..256 %.3f (bar 1.10), worst %.3f at m=%d (bar 1.00), "
                 "%d of %d m below 1.00x, %d without a time; bar %s  [%s aitune/cuBLASLt]"
                 % (w, g, worst[0], worst[1], holes, len(rs), missing, "met" if met else "NOT met", at))
print()
for l in lines:
    print(l)
PY
[ $? = 0 ] || { has speed && status=1; }
cat "$out/midm_table.txt" 2>/dev/null
echo
echo "== bench/midm.sh into $out ($(( $(date +%s) - t_all )) s)"
for s in "${summary[@]}"; do echo "$s"; done
grep -E '^[0-9]+x[0-9]+ +geomean' "$out/midm_table.txt" 2>/dev/null
exit $status
