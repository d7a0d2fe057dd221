#!/usr/bin/env bash
# A sweep on two GPUs against the same sweep on one (issue 11): the same spec
# into two fresh registries, once with --gpu 0 and once with --gpus 2; both
# wall times, the speedup, and the winners compared bucket by bucket (the
# same template and config, else times within the noise margin). Uses the
# prebuilt build/ (static: no Lua, libyaml or SQLite packages needed; python3
# for the comparison). Needs a host with two GPUs of one model.
#
#   bench/multi_gpu.sh [OUTDIR] [SPEC]      (OUTDIR default $OUT, else /tmp/aitune-multi-gpu)
#
# SPEC defaults to specs/gemm.yaml: 5 buckets of real matrix products, each
# heavy enough (64 model-guided configs per family, the biggest 8192^3) that
# the GPU time dominates, and about 100 s on one H100/H200, compiles
# included: both runs fit the 9 minutes with room. Its 5 buckets are few,
# so the speedup is bounded by how they split over two GPUs (the largest
# bucket alone is a floor), not only by the GPUs; a spec of many small
# buckets (specs/elementwise.yaml) balances better but times kernels of a
# few microseconds, whose winners differ within noise more often.
# NOISE (default 0.05): the relative margin within which two winners' times
# count as the same. Each sweep is cut at LIMIT seconds (default 240).
set -u
out=${1:-${OUT:-/tmp/aitune-multi-gpu}}
spec=${2:-specs/gemm.yaml}
noise=${NOISE:-0.05}
limit=${LIMIT:-230}
aitune=${AITUNE:-build/aitune}
mkdir -p "$out"
w=$(mktemp -d /tmp/aitune-multi-gpu.XXXX)
log() { echo "$*" | tee -a "$out/multi-gpu.txt"; }
: >"$out/multi-gpu.txt"

"$aitune" devices --json >"$out/devices.json" 2>"$out/devices.err" || { cat "$out/devices.err"; exit 1; }
"$aitune" devices | tee -a "$out/multi-gpu.txt"
ngpus=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$out/devices.json")
[ "$ngpus" -ge 2 ] || { log "this host has $ngpus GPU; the comparison needs 2"; exit 1; }
log "spec $spec, noise margin $noise, $(nproc) cores, $($aitune --version)"

# sweep NAME ARGS...: a timed sweep into a fresh registry $w/NAME.db.
sweep() {
    local name=$1
    shift
    local t0 t1
    t0=$(date +%s.%N)
    timeout "$limit" "$aitune" sweep "$spec" --db "$w/$name.db" --quiet "$@" >"$out/$name-sweep.txt" 2>"$out/$name-sweep.err"
    local rc=$?
    t1=$(date +%s.%N)
    echo "$rc" >"$w/$name.rc"
    python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$t1" >"$w/$name.s"
    log "$name: exit $rc after $(cat "$w/$name.s") s$([ "$rc" = 124 ] && echo " (cut at $limit s)")"
    tail -3 "$out/$name-sweep.err" | sed 's/^/    /' | tee -a "$out/multi-gpu.txt"
    "$aitune" show --db "$w/$name.db" --json >"$out/$name-winners.json" 2>/dev/null
    cp "$w/$name.db" "$out/$name.db" 2>/dev/null
}

sweep one-gpu --gpu 0
sweep two-gpus --gpus 2

python3 - "$w" "$out" "$noise" <<'PY' | tee -a "$out/multi-gpu.txt"
import json, sqlite3, sys
w, out, noise = sys.argv[1], sys.argv[2], float(sys.argv[3])
rc = {n: open("%s/%s.rc" % (w, n)).read().strip() for n in ("one-gpu", "two-gpus")}
secs = {n: float(open("%s/%s.s" % (w, n)).read()) for n in ("one-gpu", "two-gpus")}
ordinal = {d["uuid"]: d["index"] for d in json.load(open(out + "/devices.json"))}

def winners(name):
    con = sqlite3.connect("%s/%s.db" % (w, name))
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

def measured(con, key, tmpl, config):
    """The time a run measured for another run's winner, if it tried it."""
    r = con.execute("select min(median_us) from measurements where op = ? and dtype = ? and bucket = ? and "
                    "template = ? and config = ? and status = 'ok'", (*key, tmpl, config)).fetchone()
    return r[0] if r and r[0] else None

# The two-GPU run: each bucket's measurements on one GPU, and the GPUs' shares.
split = con2.execute("select count(*) from (select op, dtype, bucket from measurements "
                     "group by op, dtype, bucket having count(distinct device) > 1)").fetchone()[0]
shares = con2.execute("select d.uuid, count(distinct m.op || m.dtype || m.bucket), count(*) from measurements m "
                      "join devices d on d.id = m.device group by d.uuid order by d.uuid").fetchall()

print()
print("%-44s %11s %11s %7s %4s  %s" % ("bucket", "1 GPU us", "2 GPUs us", "diff", "GPU", "winner"))
same = near = differ = missing = 0
for key in sorted(set(one) | set(two)):
    a, b = one.get(key), two.get(key)
    name = " ".join(key)
    if not a or not b:
        missing += 1
        print("%-44s %11s %11s %7s %4s  %s" % (name, "%.2f" % a[2] if a else "-", "%.2f" % b[2] if b else "-", "",
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
    print("%-44s %11.2f %11.2f %+6.1f%% %4s  %s" % (name, a[2], b[2], 100 * d, ordinal.get(b[3], "?"), verdict))
    if (a[0], a[1]) != (b[0], b[1]):
        # Another config: did the search go elsewhere (the other run never
        # tried it), or did the same configs time differently?
        x, y = measured(con2, key, a[0], a[1]), measured(con1, key, b[0], b[1])
        print("%-44s the 1-GPU winner in the 2-GPU run: %s; the 2-GPU winner in the 1-GPU run: %s" %
              ("", "%.2f us" % x if x else "not tried", "%.2f us" % y if y else "not tried"))

print()
for uuid, buckets, n in shares:
    print("GPU %s (%s): %d buckets, %d measurements" % (ordinal.get(uuid, "?"), uuid, buckets, n))
print("buckets measured on more than one GPU: %d" % split)
ok = rc["one-gpu"] == "0" and rc["two-gpus"] == "0" and not differ and not missing and not split and len(shares) == 2
print()
print("| run | GPUs | wall s | buckets | exit |")
print("| --- | --- | --- | --- | --- |")
print("| one GPU | --gpu 0 | %.1f | %d | %s |" % (secs["one-gpu"], len(one), rc["one-gpu"]))
print("| two GPUs | --gpus 2 | %.1f | %d | %s |" % (secs["two-gpus"], len(two), rc["two-gpus"]))
print()
print("speedup %.2fx (%.1f s -> %.1f s); winners: %d same config, %d other config within %.0f%%, %d different, "
      "%d missing; %s" % (secs["one-gpu"] / secs["two-gpus"], secs["one-gpu"], secs["two-gpus"], same, near,
                         100 * noise, differ, missing, "PASS" if ok else "FAIL"))
sys.exit(0 if ok else 1)
PY
rc=$?
rm -rf "$w"
exit $rc
