#!/usr/bin/env bash
# bench/mc_probe.sh: what A's multicast costs in swapab's second mid-size
# kernel (templates/gemm_nt/swapab.lua, mc >= 1), in one device call on an
# H100 (about 2.5 minutes, at most 4). gemm_nt bf16 at m = 152 (exact), n =
# 4096, k = 4096, timing stream, swapab only, every candidate verified
# against the op's reference before it is timed, cuBLASLt timed the same way
# (--vendor time). Two sweeps of narrowed swapab spaces (bench/narrow.py):
#
#   cta      the template as it is: mc 1, 2, 4 over bm 64/128, bn 192/256,
#            stages 2/4/6, csplit 1/2/4, inflight 0/1 (pdl 1, kbox 1,
#            nvar 1): each multicast config has its mc 1 twin.
#   cluster  the same template with the slots' releases to the multicast
#            group at cluster scope again (mbarrier.arrive.release.cluster,
#            as before this branch: MEMBAR.ALL.GPU before each of a warp's mc
#            remote arrives a slot) and the producer's empty waits acquired
#            at cluster scope (an L1 invalidate each slot); mc 2, 4,
#            inflight 1 only. The A/B of the fence alone.
#
# Printed last, one table: per variant and mc, the fastest verified time,
# its x cuBLASLt, the verified count (ok of measured), the geometric mean of
# its configs' times over their mc 1 twins' (the cta sweep's mc 1: its
# code is the same in both variants), and the fastest config.
#
#   bench/mc_probe.sh [OUTDIR]       (default $OUT)
# Needs build/aitune (nothing is built here) and python3. Every file stays in
# OUTDIR. Exit 0 when both sweeps ran and every candidate verified, 1
# otherwise, 2 usage.
set -u
cd "$(dirname "$0")/.." || exit 1
out=${1:-${OUT:-}}
[ -n "$out" ] || { echo "bench/mc_probe.sh: no OUTDIR (usage: bench/mc_probe.sh OUTDIR, or set OUT)" >&2; exit 2; }
[ -x build/aitune ] || { echo "bench/mc_probe.sh: no build/aitune (make)" >&2; exit 1; }
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 1
status=0
t_all=$(date +%s)

space() {   # space FILE MCS INFLIGHT
    cat > "$1" <<LUA
M.params = {
  { "bm", { 64, 128 } },
  { "bn", { 192, 256 } },
  { "stages", { 2, 4, 6 } },
  { "csplit", { 1, 2, 4 } },
  { "pdl", { 1 } },
  { "l2pre", { 0 } },
  { "inflight", { $3 } },
  { "kbox", { 1 } },
  { "mc", { $2 } },
  { "nvar", { 1 } },
}
LUA
}
space "$out/cta.lua" "1, 2, 4" "0, 1"
space "$out/cluster.lua" "2, 4" "1"
python3 bench/narrow.py "$out/home_cta" swapab "$out/cta.lua" || exit 1
python3 bench/narrow.py "$out/home_cluster" swapab "$out/cluster.lua" || exit 1
# The pre-branch scopes, in the cluster copy only.
python3 - "$out/home_cluster/templates/gemm_nt/swapab.lua" <<'PY' || exit 1
import sys
p = sys.argv[1]
s = open(p).read()
edits = [
    ("mbarrier.arrive.release.cta.shared::cluster.b64 _, [r]; }\"", "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [r]; }\""),
    ("        mbar_wait(empty + 8 * s, ph ^ 1);\n        const unsigned bar = full + 8 * s, sB = base + s * SLOT, sA = sB + KBOX * W_BYTES;\n        mbar_expect(bar, bytes);",
     "        mbar_wait_cluster(empty + 8 * s, ph ^ 1);\n        const unsigned bar = full + 8 * s, sB = base + s * SLOT, sA = sB + KBOX * W_BYTES;\n        mbar_expect(bar, bytes);"),
]
for a, b in edits:
    if s.count(a) != 1:
        sys.exit("mc_probe: %s: the text to put back at cluster scope is not there once: %r" % (p, a[:60]))
    s = s.replace(a, b)
open(p, "w").write(s)
PY

cat > "$out/probe.yaml" <<'YAML'
name: mc-probe
arch: sm_90a
search: exhaustive
timing: stream
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [swapab]
    shapes: {m: {values: [152], exact: true}, n: {values: [4096]}, k: {values: [4096]}}
YAML

sweep() {   # sweep NAME LIMIT_S
    local t0 rc
    t0=$(date +%s)
    rm -f "$out/$1.db" "$out/$1.db-wal" "$out/$1.db-shm"
    AITUNE_HOME=$out/home_$1 timeout "$2" build/aitune sweep "$out/probe.yaml" --db "$out/$1.db" \
        --vendor time --timeout 5s --budget "$(( $2 - 20 ))s" > "$out/$1_sweep.txt" 2> "$out/$1_sweep.err"
    rc=$?
    echo "sweep $1: exit $rc, $(( $(date +%s) - t0 )) s ($(tail -1 "$out/$1_sweep.err" 2>/dev/null | cut -c1-160))"
    [ $rc = 0 ] || status=1
}
sweep cta 140
sweep cluster 80

echo
python3 - "$out/cta.db" "$out/cluster.db" > "$out/mc_table.txt" <<'PY'
import json, math, sqlite3, sys
rows, bad, vendor, gpu = [], [], {}, None
for name, db in zip(("cta", "cluster"), sys.argv[1:3]):
    try:
        con = sqlite3.connect(db)
        for c, st, us, err in con.execute("select config, status, median_us, coalesce(error, '') from measurements "
                                          "where template = 'gemm_nt/swapab'"):
            rows.append((name, json.loads(c), st, us))
            if st != "ok":
                bad.append((name, c, st, err[:120]))
        v = con.execute("select median_us from vendor_times where status = 'ok' and timing = 'stream'").fetchone()
        vendor[name] = v[0] if v else None
        g = con.execute("select name from devices limit 1").fetchone()
        gpu = gpu or (g[0] if g else None)
    except sqlite3.Error as e:
        print("%s: no registry to read (%s)" % (name, e))
print("GPU: %s; gemm_nt bf16 m=152 n=4096 k=4096, timing stream, cuBLASLt (stream): %s"
      % (gpu or "?", ", ".join("%s %.2f us" % (k, v) for k, v in vendor.items() if v) or "not timed"))
for b in bad[:12]:
    print("  not ok: %s %s %s %s" % b)
def key(c):   # a config without its mc: its twins at other mc
    return tuple(sorted((k, v) for k, v in c.items() if k != "mc"))
ok = [(n, c, us) for n, c, st, us in rows if st == "ok" and us]
mc1 = {key(c): us for n, c, us in ok if n == "cta" and c.get("mc", 0) == 1}
def short(c):
    ks = ["bm", "bn", "stages", "csplit", "inflight", "pdl"]
    return " ".join("%s%s" % (k, c[k]) for k in ks if k in c)
print()
print("%-8s %-3s %9s %11s %12s %14s  %s" % ("variant", "mc", "best us", "x cuBLASLt", "verified ok", "x its mc1 twin", "best config"))
for n in ("cta", "cluster"):
    for mc in (1, 2, 4):
        mine = [(us, c) for m, c, us in ok if m == n and c.get("mc", 0) == mc]
        tried = [c for m, c, st, us in rows if m == n and c.get("mc", 0) == mc]
        if not tried:
            continue
        nok = sum(1 for m, c, st, us in rows if m == n and c.get("mc", 0) == mc and st == "ok")
        if not mine:
            print("%-8s %-3s %9s %11s %5d of %-4d" % (n, mc, "-", "-", nok, len(tried)))
            continue
        us, c = min(mine, key=lambda t: t[0])
        v = vendor.get(n)
        tw = [u / mc1[key(cc)] for u, cc in mine if key(cc) in mc1] if mc != 1 else []
        g = "%.3f (%d)" % (math.exp(sum(map(math.log, tw)) / len(tw)), len(tw)) if tw else "-"
        print("%-8s %-3s %9.2f %11s %5d of %-4d %14s  %s" % (n, mc, us,
              "%.3f" % (v / us) if v else "-", nok, len(tried), g, short(c)))
print("(x cuBLASLt > 1: faster than cuBLASLt; x its mc1 twin < 1: multicast faster than the same config at mc 1)")
sys.exit(1 if bad or not ok else 0)
PY
[ $? = 0 ] || status=1
echo "== bench/mc_probe.sh into $out ($(( $(date +%s) - t_all )) s, exit $status)"
cat "$out/mc_table.txt"
exit $status
