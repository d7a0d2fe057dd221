#!/usr/bin/env bash
# How big a full specs/memory.yaml registry is, and that everything it kept
# still launches (issue 13, registry upkeep). On a GPU machine, prebuilt
# build/ (the aitune binary is static: no Lua, libyaml or SQLite needed;
# python3 reads the registry):
#
#     bench/registry_size.sh [--spec FILE] [--budget D] [--limit S] [--db PATH] [--no-sweep]
#
# 1. aitune sweep SPEC into a fresh registry (wall time; the sweep drops the
#    cubins of candidates that lost as their buckets are decided and says
#    how much);
# 2. the registry's size and what it holds, then `aitune gc` (size before
#    and after), then the same again;
# 3. in the registry: every winner, finalist and default has its cubin (and
#    winners and defaults their launch plan);
# 4. on the GPU: `aitune check SPEC` loads, verifies and times every winner
#    from its stored cubin; `aitune retune --all` on one bucket of each
#    (op, dtype) races those buckets' finalists from their stored cubins
#    (the compile count shows none was compiled again);
# 5. a short table.
#
# Time: the full memory.yaml sweep took 359 s on an H100 (bench/archive/RESULTS-2026.md,
# 2026-11-22: 97 buckets, 5706 candidates, 2946 kernels compiled on 16
# cores); dropping losers' cubins costs a few recompiles where a later task
# returns to an (op, dtype). check re-times 97 winners (about a second
# each), the finalists' race about 30 s. The steps after the sweep stop at
# --limit seconds from the start (default 530, under the 9 minutes one call
# may take) and say what they skipped; --budget D caps the sweep itself
# (winners so far kept; buckets not reached have none). --no-sweep starts
# at step 2 with the registry a call before left (while the machine is
# still the same one): for a check the time limit cut short.
#
# Logs go to $OUT (default /tmp/aitune-regsize-out); the registry to
# /tmp/aitune-regsize/memory.db unless --db.
set -u
cd "$(dirname "$0")/.." || exit 1
SPEC=specs/memory.yaml
BUDGET=
LIMIT=530
DB=/tmp/aitune-regsize/memory.db
SWEEP=1
while [ $# -gt 0 ]; do
    case $1 in
        --spec) SPEC=$2; shift 2 ;;
        --budget) BUDGET=$2; shift 2 ;;
        --limit) LIMIT=$2; shift 2 ;;
        --db) DB=$2; shift 2 ;;
        --no-sweep) SWEEP=0; shift ;;
        -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "registry_size.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
OUT=${OUT:-/tmp/aitune-regsize-out}
mkdir -p "$OUT" "$(dirname "$DB")"
AITUNE=build/aitune
[ -x "$AITUNE" ] || { echo "registry_size.sh: no $AITUNE (build first, or carry build/)" >&2; exit 1; }
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }
left() { echo $(( LIMIT - $(elapsed) )); }
log() { echo "[$(elapsed) s] $*" | tee -a "$OUT/summary.txt"; }
: >"$OUT/summary.txt"

# What a registry holds: bytes on disk, cubins (count, bytes), measurements,
# winners, finalists, defaults, and how many of each have their kernel.
stats() {
    python3 - "$1" <<'PY'
import json, os, sqlite3, sys
db = sys.argv[1]
size = sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p))
c = sqlite3.connect(db)
q = lambda s, *a: c.execute(s, a).fetchall()
cubins = set(h for (h,) in q("select hash from cubins"))
ncub, cbytes = q("select count(*), coalesce(sum(length(cubin) + length(source) + coalesce(length(log), 0)), 0) from cubins")[0]
nmeas = q("select count(*) from measurements")[0][0]
winners = q("select op, arch, dtype, bucket, cubin, launch, runners_up from winners")
w_ok = sum(1 for w in winners if w[4] in cubins and (w[5] or "").startswith('{"v":2'))
# A finalist's kernel: its measurement in the winner's bucket names it.
meas = {}
for op, arch, dt, b, tmpl, cfg, cub in q("select op, arch, dtype, bucket, template, config, cubin from measurements "
                                         "where cubin is not null"):
    meas.setdefault((op, arch, dt, b, tmpl, json.dumps(json.loads(cfg), sort_keys=True)), set()).add(cub)
nfin = f_ok = 0
for op, arch, dt, b, _, _, ru in winners:
    for f in json.loads(ru or "[]"):
        nfin += 1
        key = (op, arch, dt, b, f["template"], json.dumps(f["config"], sort_keys=True))
        f_ok += any(h in cubins for h in meas.get(key, ()))
defaults = q("select cubin, launch from defaults")
d_ok = sum(1 for h, l in defaults if h in cubins and (l or "").startswith('{"v":2'))
d_none = sum(1 for h, l in defaults if not h)
print(json.dumps({"bytes": size, "cubins": ncub, "cubin_bytes": cbytes, "measurements": nmeas,
                  "winners": len(winners), "winners_ok": w_ok, "finalists": nfin, "finalists_ok": f_ok,
                  "defaults": len(defaults) - d_none, "defaults_ok": d_ok, "defaults_none": d_none}))
PY
}
show_stats() {   # label json
    python3 - "$1" "$2" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
s = json.loads(sys.argv[2])
print("%-11s %8.1f MB on disk; %d cubins (%.1f MB), %d measurements; kernels stored: winners %d/%d, "
      "finalists %d/%d, defaults %d/%d" % (sys.argv[1], s["bytes"] / 1048576, s["cubins"], s["cubin_bytes"] / 1048576,
      s["measurements"], s["winners_ok"], s["winners"], s["finalists_ok"], s["finalists"], s["defaults_ok"], s["defaults"]))
PY
}

# ---- 1. the sweep ----
sweep_s="(not run)"
dropped=
if [ "$SWEEP" = 1 ]; then
    rm -f "$DB" "$DB-wal" "$DB-shm"
    log "sweep $SPEC into $DB${BUDGET:+ (budget $BUDGET)}; expect about 6 minutes for specs/memory.yaml on an H100"
    t=$(date +%s.%N)
    "$AITUNE" sweep "$SPEC" --db "$DB" --quiet ${BUDGET:+--budget "$BUDGET"} >"$OUT/sweep.out" 2>"$OUT/sweep.err"
    src=$?
    sweep_s=$(python3 -c "print('%.0f' % ($(date +%s.%N) - $t))")
    log "sweep exit $src after $sweep_s s"
    tail -n 5 "$OUT/sweep.err" | tee -a "$OUT/summary.txt"
    dropped=$(sed -n 's/^registry: .*after dropping \([0-9]*\) cubins of candidates that lost (\([0-9.]*\) MB.*/\1 \2/p' "$OUT/sweep.err")
elif [ ! -f "$DB" ]; then
    echo "registry_size.sh: --no-sweep, but no registry at $DB" >&2
    exit 1
fi

# ---- 2. sizes, gc, sizes ----
ls -l "$DB"* | tee -a "$OUT/summary.txt"
s1=$(stats "$DB")
show_stats "after sweep" "$s1"
"$AITUNE" gc --db "$DB" >"$OUT/gc.txt" 2>&1
log "gc exit $?:"
tee -a "$OUT/summary.txt" <"$OUT/gc.txt"
ls -l "$DB"* | tee -a "$OUT/summary.txt"
s2=$(stats "$DB")
show_stats "after gc" "$s2"

# ---- 3./4. launchable on the GPU ----
# The kernels gc left; then, per later run (check, retune), what it measured
# and how many of those kernels were not among them (compiled again).
python3 - "$DB" >"$OUT/kept-hashes.txt" <<'PY'
import sqlite3, sys
for (h,) in sqlite3.connect(sys.argv[1]).execute("select hash from cubins"): print(h)
PY
last_run() {   # -> "measured ok distinct-buckets not-from-kept"
    python3 - "$DB" "$OUT/kept-hashes.txt" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
kept = set(open(sys.argv[2]).read().split())
run = c.execute("select max(id) from runs").fetchone()[0]
rows = c.execute("select op, dtype, bucket, status, cubin from measurements where run = ?", (run,)).fetchall()
print(len(rows), sum(r[3] == "ok" for r in rows), len(set(r[:3] for r in rows)), sum(r[4] not in kept for r in rows))
PY
}
check_line="skipped"
if [ "$(left)" -gt 20 ]; then
    log "check: every winner loaded from its stored cubin, verified and timed (at most $(left) s)"
    timeout -s INT "$(left)" "$AITUNE" check "$SPEC" --db "$DB" --quiet >"$OUT/check.out" 2>"$OUT/check.err"
    crc=$?
    grep -E '^(FAILED|REGRESSED) ' "$OUT/check.out" | tee -a "$OUT/summary.txt"
    tail -n 2 "$OUT/check.err" | tee -a "$OUT/summary.txt"
    read -r nm nok nb nnew <<<"$(last_run)"
    # A spec's later task may name a bucket again: such a winner is checked twice.
    check_line="$nok of $nm checks verified and timed, $nb of $(python3 -c "import json; print(json.loads('$s2')['winners'])") winners' buckets; $nnew kernels not from the stored cubins; $(grep -c '^REGRESSED ' "$OUT/check.out") slower than recorded beyond 3%"
    [ "$crc" = 124 ] && check_line="$check_line; stopped at the time limit (bench/registry_size.sh --no-sweep goes on)"
    log "check exit $crc: $check_line"
else
    log "check skipped: $(left) s left of --limit $LIMIT (run: bench/registry_size.sh --no-sweep)"
fi

# One bucket per (op, dtype) of memory.yaml: their finalists, raced again
# from the stored cubins (noise 1000%: the race keeps its winner, so nothing
# is searched again unless a finalist fails).
retune_line="skipped"
cat >"$OUT/finalists.yaml" <<'EOF'
name: finalists
arch: sm_90a
seed: 1
tasks:
  - {op: softmax, dtypes: [bf16], shapes: {rows: {values: [32768]}, cols: {values: [4096]}}}
  - {op: layernorm, dtypes: [bf16], shapes: {rows: {values: [16384]}, cols: {values: [32768]}}}
  - {op: rmsnorm, dtypes: [bf16], shapes: {rows: {values: [32768]}, cols: {values: [512]}}}
  - {op: transpose, dtypes: [bf16], shapes: {rows: {values: [32768]}, cols: {values: [4096]}}}
  - {op: reduce_all, dtypes: [f32], shapes: {n: {values: [268435456]}}}
  - {op: reduce_rows, dtypes: [bf16], shapes: {rows: {values: [32768]}, cols: {values: [4096]}}}
EOF
if [ "$SPEC" = specs/memory.yaml ] && [ "$(left)" -gt 30 ]; then
    log "retune --all of 6 buckets: their finalists raced from the stored cubins (at most $(left) s)"
    "$AITUNE" retune "$OUT/finalists.yaml" --all --noise 1000 --budget "$(( $(left) - 5 ))s" --db "$DB" --quiet \
        >"$OUT/retune.out" 2>"$OUT/retune.err"
    rrc=$?
    grep '^retune' "$OUT/retune.out" | tee -a "$OUT/summary.txt"
    grep '^sweep: ' "$OUT/retune.err" | tee -a "$OUT/summary.txt"
    read -r nm nok nb nnew <<<"$(last_run)"
    again=$(sed -n 's/^retune: .* re-raced, \([0-9]*\) searched again.*/\1/p' "$OUT/retune.out")
    retune_line="$nok of $nm finalists of $nb buckets verified and timed; $nnew kernels not from the stored cubins; ${again:-?} buckets searched again"
    log "retune exit $rrc: $retune_line"
else
    log "finalists' race skipped ($(left) s left, or not specs/memory.yaml)"
fi

# ---- 5. the table ----
python3 - "$s1" "$s2" "$sweep_s" "${dropped:-0 0}" "$check_line" "$retune_line" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
drop_n, drop_mb = sys.argv[4].split()
mb = lambda s: "%.1f MB" % (s["bytes"] / 1048576)
print()
print("| registry | after sweep | after gc |")
print("| --- | --- | --- |")
print("| on disk | %s | %s |" % (mb(a), mb(b)))
print("| cubins | %d (%.1f MB) | %d (%.1f MB) |" % (a["cubins"], a["cubin_bytes"] / 1048576, b["cubins"], b["cubin_bytes"] / 1048576))
print("| measurements | %d | %d |" % (a["measurements"], b["measurements"]))
print("| winners with their kernel | %d of %d | %d of %d |" % (a["winners_ok"], a["winners"], b["winners_ok"], b["winners"]))
print("| finalists with their kernel | %d of %d | %d of %d |" % (a["finalists_ok"], a["finalists"], b["finalists_ok"], b["finalists"]))
print("| defaults with their kernel | %d of %d | %d of %d |" % (a["defaults_ok"], a["defaults"], b["defaults_ok"], b["defaults"]))
if b["defaults_none"]:
    print("(%d defaults name no kernel: never stored, not dropped)" % b["defaults_none"])
print()
print("sweep: %s s; it dropped %s cubins of candidates that lost (%s MB)" % (sys.argv[3], drop_n, drop_mb))
print("launchable on the GPU, winners (aitune check): " + sys.argv[5])
print("launchable on the GPU, finalists (aitune retune --all, 6 buckets): " + sys.argv[6])
PY
log "done; logs in $OUT"
