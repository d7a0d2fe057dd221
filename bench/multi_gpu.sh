#!/usr/bin/env bash
# bench/multi_gpu.sh: how long a sweep takes, on two GPUs against one (issue
# 11, issue 33's "2 GPUs >= 1.7x one on the same spec"), or on one GPU alone
# (issue 33's "one sweep of a spec holding the first row's ranges <= 15 min
# on one H100"). Uses the prebuilt build/ (static: no Lua, libyaml or SQLite
# packages needed; python3 for the comparison). Each mode is one device call.
#
#   bench/multi_gpu.sh [OUTDIR] [SPEC]             two GPUs against one
#   bench/multi_gpu.sh --one [--resume] [OUTDIR] [SPEC]   one GPU, one sweep
#   bench/multi_gpu.sh --compare OUTDIR            the comparison again, from
#                      a two-GPU call's OUTDIR (no GPU; NOISE may differ)
#
# OUTDIR: default $OUT, else /tmp/aitune-multi-gpu. SPEC: a spec file, or
# `ranges` (the default): issue 33's first row, gemm_nt bf16 with m {range:
# [1, 256], align: [1]} at the weights 4096x4096, 1024x4096, 14336x4096 and
# 4096x14336 (n x k), timed as a stream, aitune's own kernels (--vendor
# off), 36 buckets, each held and split where its winner loses; written to
# OUTDIR/ranges.yaml. Decode sizes time in microseconds, so such a sweep is
# compile-bound: what a second GPU can gain depends on the compile pool
# keeping both fed.
#
# Two GPUs against one (host with two GPUs of one model; about 8 minutes at
# most): the spec into two fresh registries (no cubin shared), with --gpu 0
# and with --gpus 2, each with EVALS candidates per bucket and template
# (--max-evals; for `ranges` default 8, the `ranges` suite's count; for a
# file the spec's own unless EVALS is set). Prints both wall times, the
# speedup, the measurements each run made per second (the same work at the
# same rate: the ratio that still means something when a run is cut), the
# CPU seconds of aitune and its NVRTC helpers (per kernel compiled, and the
# cores they kept busy on average: near the host's count, the compiles
# bound the sweep), and the winners compared bucket by bucket (the same
# template and config, else times within NOISE, default 0.05). A bucket
# split into parts is compared part by part when both runs split it alike,
# else listed as split differently (hold races pick splits by measured
# times). The first sweep is cut at LIMIT1 seconds (default 270), the
# second at LIMIT2 (default 180, less if the first took long), so the call
# stays within 8 minutes. PASS: both complete, no winner different or
# missing, each bucket measured on one GPU. Last, a table, the verdict line
# (bench/suites/multi-gpu.sh reads it) and the bar's line (1.7x).
#
# One GPU (--one): the spec on GPU 0 with EVALS per bucket and template
# (`ranges`: default 16), cut at LIMIT seconds (default 560: a 10-minute
# call). The registry is build/one-sweep/registry.db (ONE_DIR: another
# folder), kept between calls on a warm machine (build/ is ignored):
# without --resume it starts empty; with --resume the sweep goes on where
# the last call stopped (nothing measured twice, the buckets decided left
# as they are: src/sweep_resume.h) and the seconds add up.
# Prints wall and CPU seconds, candidates, buckets with a winner of all
# and, when cut, the sweep's own estimate of the whole (elapsed plus its
# progress line's ETA); last, a table and the 15-minute bar's line.
#
# VENDOR (default: off for `ranges`, win for a file): --vendor for every
# sweep. AITUNE (default build/aitune).
set -u
mode=compare resume=0
while [ $# -gt 0 ]; do
    case $1 in
        --one) mode=one; shift ;;
        --compare) mode=again; shift ;;
        --resume) resume=1; shift ;;
        -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "bench/multi_gpu.sh: unknown option '$1'" >&2; exit 2 ;;
        *) break ;;
    esac
done
[ $resume = 0 ] || [ $mode = one ] || { echo "bench/multi_gpu.sh: --resume is for --one" >&2; exit 2; }
out=${1:-${OUT:-/tmp/aitune-multi-gpu}}
if [ $mode = again ]; then
    for f in one-gpu.db two-gpus.db devices.json one-gpu.rc two-gpus.rc one-gpu.s two-gpus.s; do
        [ -f "$out/$f" ] || { echo "bench/multi_gpu.sh: --compare: no $out/$f (not the OUTDIR of a two-GPU call)" >&2; exit 2; }
    done
fi
spec=${2:-ranges}
noise=${NOISE:-0.05}
aitune=${AITUNE:-build/aitune}
if [ "$spec" != ranges ]; then evals=${EVALS-}; elif [ $mode = one ]; then evals=${EVALS-16}; else evals=${EVALS-8}; fi
limit1=${LIMIT1:-270} limit2=${LIMIT2:-180} limit=${LIMIT:-560}
for v in "$limit1" "$limit2" "$limit"; do
    case $v in ''|*[!0-9]*|0) echo "bench/multi_gpu.sh: LIMIT, LIMIT1 and LIMIT2 are whole seconds, not '$v'" >&2; exit 2 ;; esac
done
case $evals in
    '') ;;
    *[!0-9]*|0) echo "bench/multi_gpu.sh: EVALS is a count of at least 1 (or empty: the spec's own), not '$evals'" >&2; exit 2 ;;
esac
case $noise in ''|*[!0-9.]*) echo "bench/multi_gpu.sh: NOISE is a fraction like 0.05, not '$noise'" >&2; exit 2 ;; esac
mkdir -p "$out" || exit 2

# The comparison of a two-GPU call's OUTDIR: its registries and each
# sweep's .rc, .s, .cpu and .line files. Prints the buckets, the table and
# the verdict lines; exit 0 PASS, 1 FAIL.
compare() {
    python3 - "$out" "$noise" "$(cat "$out/cores" 2>/dev/null || nproc)" <<'PY' | tee -a "$report"
import json, re, sqlite3, sys
out, noise, cores = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
runs = ("one-gpu", "two-gpus")
def rd(n, ext):
    try:
        return open("%s/%s.%s" % (out, n, ext)).read().strip()
    except OSError:
        return ""
rc = {n: rd(n, "rc") for n in runs}
secs = {n: float(rd(n, "s")) for n in runs}
cpu = {n: float(rd(n, "cpu") or 0) for n in runs}
ordinal = {d["uuid"]: d["index"] for d in json.load(open(out + "/devices.json"))}

def winners(name):
    con = sqlite3.connect("%s/%s.db" % (out, name))
    if not con.execute("select 1 from sqlite_master where name = 'winners'").fetchone():
        return {}, None     # the sweep stopped before the registry was made
    rows = con.execute("select w.op, w.dtype, w.bucket, w.template, w.config, w.median_us, d.uuid "
                       "from winners w left join devices d on d.id = w.device order by 1, 2, 3").fetchall()
    return {(r[0], r[1], r[2]): r[3:] for r in rows}, con

one, con1 = winners("one-gpu")
two, con2 = winners("two-gpus")
if not con1 or not con2:
    print("a sweep left no registry: see %s/*-sweep.err" % out)
    sys.exit(1)

def count(con, sql):
    return con.execute(sql).fetchone()[0]

def measured(con, key, tmpl, config):
    """The time a run measured for another run's winner, if it tried it."""
    r = con.execute("select min(median_us) from measurements where op = ? and dtype = ? and bucket in (?, ?) and "
                    "template = ? and config = ? and status = 'ok'", (key[0], key[1], key[2], key[2].split("/")[0],
                                                                       tmpl, config)).fetchone()
    return r[0] if r and r[0] else None

def base(key):
    return (key[0], key[1], key[2].split("/")[0])

# A bucket split into parts compares part by part only when both runs split
# it alike; otherwise it is its own verdict.
parts = lambda ws: {b: sorted(k for k in ws if base(k) == b) for b in {base(k) for k in ws}}
p1, p2 = parts(one), parts(two)
resplit = sorted(b for b in set(p1) & set(p2) if p1[b] != p2[b])

split = count(con2, "select count(*) from (select op, dtype, bucket from measurements "
                    "group by op, dtype, bucket having count(distinct device) > 1)")
shares = con2.execute("select d.uuid, count(distinct m.op || m.dtype || m.bucket), count(*) from measurements m "
                      "join devices d on d.id = m.device group by d.uuid order by d.uuid").fetchall()

print()
print("%-52s %11s %11s %7s %4s  %s" % ("bucket", "1 GPU us", "2 GPUs us", "diff", "GPU", "winner"))
same = near = differ = missing = 0
for key in sorted(set(one) | set(two)):
    if base(key) in resplit:
        continue
    a, b = one.get(key), two.get(key)
    name = " ".join(key)
    if not a or not b:
        missing += 1
        print("%-52s %11s %11s %7s %4s  %s" % (name, "%.2f" % a[2] if a else "-", "%.2f" % b[2] if b else "-", "",
                                              "", "MISSING in the %s run" % ("one-GPU" if not a else "two-GPU")))
        continue
    d = b[2] / a[2] - 1
    if (a[0], a[1]) == (b[0], b[1]):
        same += 1
        verdict = "same: %s %s" % (a[0], a[1])
    elif abs(d) <= noise:
        near += 1
        verdict = "within noise: %s %s vs %s %s" % (a[0], a[1], b[0], b[1])
    else:
        differ += 1
        verdict = "DIFFERENT: %s %s vs %s %s" % (a[0], a[1], b[0], b[1])
    print("%-52s %11.2f %11.2f %+6.1f%% %4s  %s" % (name, a[2], b[2], 100 * d, ordinal.get(b[3], "?"), verdict))
    if (a[0], a[1]) != (b[0], b[1]):
        # Another config: did the search go elsewhere (the other run never
        # tried it), or did the same configs time differently?
        x, y = measured(con2, key, a[0], a[1]), measured(con1, key, b[0], b[1])
        print("%-52s the 1-GPU winner in the 2-GPU run: %s; the 2-GPU winner in the 1-GPU run: %s" %
              ("", "%.2f us" % x if x else "not tried", "%.2f us" % y if y else "not tried"))
def corners(keys):
    """A split bucket's parts by their lower corners ("whole": unsplit)."""
    return " ".join(k[2].split("/", 1)[1] if "/" in k[2] else "whole" for k in keys)

for b in resplit:
    print("%-52s split differently: 1 GPU %s, 2 GPUs %s" % (" ".join(b), corners(p1[b]), corners(p2[b])))

print()
for uuid, buckets, n in shares:
    print("GPU %s (%s): %d buckets, %d measurements" % (ordinal.get(uuid, "?"), uuid, buckets, n))
print("buckets measured on more than one GPU: %d" % split)

def summary(n):
    m = re.search(r"sweep: (\d+) candidates evaluated.*?; (\d+) compiled", rd(n, "line"))
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)

cands = {n: summary(n)[0] for n in runs}
comp = {n: summary(n)[1] for n in runs}
meas = {"one-gpu": count(con1, "select count(*) from measurements"), "two-gpus": count(con2, "select count(*) from measurements")}
nbase = {"one-gpu": len({base(k) for k in one}), "two-gpus": len({base(k) for k in two})}
ok = rc["one-gpu"] == "0" and rc["two-gpus"] == "0" and not differ and not missing and not split and len(shares) == 2

def f(x, fmt):
    return fmt % x if x is not None else "-"

print()
print("| run | GPUs | wall s | candidates | measurements / s | compiled | CPU s | CPU s / compile | cores busy | buckets | exit |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for n, g in (("one-gpu", "--gpu 0"), ("two-gpus", "--gpus 2")):
    print("| %s | %s | %.1f | %s | %.2f | %s | %.1f | %s | %.2f of %d | %d | %s |" % (
        "one GPU" if n == "one-gpu" else "two GPUs", g, secs[n], f(cands[n], "%d"), meas[n] / secs[n], f(comp[n], "%d"),
        cpu[n], f(cpu[n] / comp[n] if comp[n] else None, "%.2f"), cpu[n] / secs[n], cores, nbase[n], rc[n]))
print()
x = secs["one-gpu"] / secs["two-gpus"]
rate = (meas["two-gpus"] / secs["two-gpus"]) / (meas["one-gpu"] / secs["one-gpu"]) if meas["one-gpu"] else float("nan")
print("speedup %.2fx (%.1f s -> %.1f s); winners: %d same config, %d other config within %.0f%%, %d different, "
      "%d missing; %s; %d buckets split differently" % (x, secs["one-gpu"], secs["two-gpus"], same, near, 100 * noise,
                                                       differ, missing, "PASS" if ok else "FAIL", len(resplit)))
both = rc["one-gpu"] == "0" and rc["two-gpus"] == "0"
print("bar (2 GPUs >= 1.7x one): %s; measurements per second, 2 GPUs over 1: %.2fx%s" % (
    ("met" if x >= 1.7 else "not met") if both else "no verdict (a sweep was cut: compare the rates)", rate,
    "" if both else " (a cut run's rate over the part it did)"))
sys.exit(0 if ok else 1)
PY
    return "${PIPESTATUS[0]}"
}

if [ $mode = again ]; then
    report=$out/compare.txt
    : >"$report"
    compare
    exit $?
fi

if [ "$spec" = ranges ]; then
    vendor=${VENDOR:-off}
    spec=$out/ranges.yaml
    {
        echo "# issue 33's first row (bench/multi_gpu.sh): every m in 1..256 at four weights."
        echo "name: ranges"
        echo "arch: sm_90a"
        echo "search: model"
        echo "max_evals: ${evals:-8}"
        echo "top_k: 4"
        echo "timing: stream"
        echo "tasks:"
        for w in 4096x4096 1024x4096 14336x4096 4096x14336; do
            echo "  - op: gemm_nt"
            echo "    dtypes: [bf16]"
            echo "    shapes:"
            echo "      m: {range: [1, 256], align: [1]}"
            echo "      n: {values: [${w%x*}]}"
            echo "      k: {values: [${w#*x}]}"
        done
    } >"$spec"
else
    vendor=${VENDOR:-win}
    [ -f "$spec" ] || { echo "bench/multi_gpu.sh: no spec '$spec'" >&2; exit 2; }
fi
case $vendor in win|time|off) ;; *) echo "bench/multi_gpu.sh: VENDOR is win, time or off, not '$vendor'" >&2; exit 2 ;; esac

report=$out/multi-gpu.txt
[ $mode = one ] && report=$out/one-gpu.txt
log() { echo "$*" | tee -a "$report"; }
: >"$report"
start=$(date +%s)
"$aitune" devices --json >"$out/devices.json" 2>"$out/devices.err" || { cat "$out/devices.err"; exit 1; }
"$aitune" devices | tee -a "$report"
ngpus=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$out/devices.json")
log "mode $mode, spec $spec, --max-evals ${evals:-as the spec says}, --vendor $vendor, $(nproc) cores, $($aitune --version)"

# sweep NAME DB LIMIT ARGS...: a timed sweep into DB, cut at LIMIT seconds.
# Leaves NAME.{rc,s,cpu,line} in $out: exit code, wall and CPU seconds
# (aitune and the helpers it waited for), the summary line.
sweep() {
    local name=$1 db=$2 lim=$3
    shift 3
    local t0 t1
    t0=$(date +%s.%N)
    TIMEFORMAT='%U %S'
    { time AITUNE_PROGRESS_INTERVAL=${AITUNE_PROGRESS_INTERVAL:-5} timeout -s INT -k 20 "$lim" "$aitune" sweep "$spec" --db "$db" --vendor "$vendor" \
        ${evals:+--max-evals "$evals"} "$@" >"$out/$name-sweep.txt" 2>"$out/$name-sweep.err"; } 2>"$out/$name.time"
    local rc=$?
    t1=$(date +%s.%N)
    echo "$rc" >"$out/$name.rc"
    python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$t1" >"$out/$name.s"
    awk 'NF == 2 { printf "%.1f\n", $1 + $2 }' "$out/$name.time" | tail -n 1 >"$out/$name.cpu"
    grep -E '^sweep: [0-9]+ candidates evaluated' "$out/$name-sweep.err" | tail -n 1 >"$out/$name.line"
    log "$name: exit $rc after $(cat "$out/$name.s") s, $(cat "$out/$name.cpu") CPU s$([ "$rc" = 124 ] || [ "$rc" = 130 ] && echo " (cut at $lim s)")"
    tail -n 3 "$out/$name-sweep.err" | sed 's/^/    /' | tee -a "$report"
}

if [ $mode = one ]; then
    [ "$ngpus" -ge 1 ] || { log "no GPU"; exit 1; }
    dir=${ONE_DIR:-build/one-sweep}
    mkdir -p "$dir" || exit 1
    if [ $resume = 0 ]; then
        rm -f "$dir"/registry.db* "$dir/seconds"
    elif [ ! -f "$dir/registry.db" ]; then
        log "--resume: no $dir/registry.db on this machine (a fresh machine, or no call before): starting empty"
    fi
    sweep one "$dir/registry.db" "$limit" --gpu 0
    cp "$dir/registry.db" "$out/one.db" 2>/dev/null
    python3 - "$out" "$dir" "$limit" <<'PY' | tee -a "$report"
import re, sqlite3, sys
out, d, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
rc = open(out + "/one.rc").read().strip()
wall, cpu = float(open(out + "/one.s").read()), float(open(out + "/one.cpu").read() or 0)
prev = 0.0
try:
    prev = float(open(d + "/seconds").read())
except (OSError, ValueError):
    pass
total = prev + wall
open(d + "/seconds", "w").write("%.1f\n" % total)
err = open(out + "/one-sweep.err").read()
# Its progress lines: "sweep: bucket 3/36, ... 5m07s elapsed, ETA 1h02m; ..."
prog = re.findall(r"^sweep: bucket (\d+)/(\d+),.*? (\S+) elapsed, ETA (\S+?);?(?: |$)", err, re.M)
def seconds(t):
    m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", t)
    if not m or not t or t == "?":
        return None
    h, mi, se = (int(x) if x else 0 for x in m.groups())
    return 3600 * h + 60 * mi + se
line = open(out + "/one.line").read().strip()
m = re.search(r"sweep: (\d+) candidates evaluated.*?(\d+) compiled", line)
cands, compiled = (int(m.group(1)), int(m.group(2))) if m else (None, None)
con = sqlite3.connect(d + "/registry.db")
def q(sql):
    try:
        return con.execute(sql).fetchone()[0]
    except sqlite3.Error:
        return None
done = q("select count(distinct op || ' ' || dtype || ' ' || case when instr(bucket, '/') "
         "then substr(bucket, 1, instr(bucket, '/') - 1) else bucket end) from winners")
parts = q("select count(*) from winners where instr(bucket, '/') > 0")
nmeas = q("select count(*) from measurements")
nb = int(prog[-1][1]) if prog else None
# A resumed sweep counts in its progress only the buckets it decides; its
# line on stdout (or its one line when nothing is left) names them all.
kept = re.search(r"^resume: \d+ of (\d+) buckets?", open(out + "/one-sweep.txt").read(), re.M) or \
       re.search(r"^sweep: nothing to do: (?:all|its) (\d+) buckets?", err, re.M)
if kept:
    nb = int(kept.group(1))
finished = rc == "0"
eta = None if finished or not prog else seconds(prog[-1][3])
print()
print("| run | wall s (this call) | wall s (all calls) | CPU s | candidates | compiled | buckets with a winner | split parts | exit |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
print("| one GPU | %.1f | %.1f | %.1f | %s | %s | %s of %s | %s | %s |" % (wall, total, cpu, cands if cands is not None else "-",
      compiled if compiled is not None else "-", done, nb if nb else "?", parts, rc))
print()
if finished:
    print("one sweep, one GPU: %.1f s (%.1f min) in all; bar (<= 15 min): %s" % (total, total / 60, "met" if total <= 900 else "not met"))
else:
    est = total + eta if eta is not None else None
    print("one sweep, one GPU: cut after %.1f s in all (%s measurements kept); %s" % (total, nmeas,
          "the sweep's estimate of the whole: %.0f s (%.1f min); bar (<= 15 min): %s" %
          (est, est / 60, "likely met" if est <= 900 else "likely not met") if est is not None else "no estimate (no progress line)"))
    print("run it again with --resume on the same machine to go on")
PY
    exit 0
fi

[ "$ngpus" -ge 2 ] || { log "this host has $ngpus GPU; the comparison needs 2"; exit 1; }
for n in one-gpu two-gpus; do rm -f "$out/$n.db"*; done
sweep one-gpu "$out/one-gpu.db" "$limit1" --gpu 0 --quiet
left=$(( 450 - ($(date +%s) - start) ))
[ "$left" -lt "$limit2" ] && limit2=$(( left > 30 ? left : 30 ))
sweep two-gpus "$out/two-gpus.db" "$limit2" --gpus 2 --quiet
nproc >"$out/cores"
compare
exit $?
