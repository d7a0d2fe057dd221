#!/usr/bin/env bash
# The memory-bound families against their peers, in one call on a GPU:
# aitune sweep specs/memory.yaml, then PyTorch eager and torch.compile on the
# bar shapes, then a ratio table. Uses the prebuilt build/.
#   bench/memory.sh OUTDIR [--no-compile]
set -u
keep=${1:-/tmp/aitune-memory}
shift || true
w=$(mktemp -d /tmp/aitune-memory.XXXX)
mkdir -p "$keep"
db=$w/memory.db
t0=$(date +%s)
build/aitune sweep specs/memory.yaml --db "$db" --quiet ${AITUNE_BUDGET:+--budget $AITUNE_BUDGET} > "$keep/memory-sweep.txt" 2> "$keep/memory-sweep.err"
echo "sweep exit $? after $(( $(date +%s) - t0 )) s"
tail -4 "$keep/memory-sweep.err"
build/aitune show --db "$db" --json > "$w/winners.json"
python3 - "$db" <<'PY' | tee "$keep/memory-failures.txt"
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
for r in con.execute("select op, dtype, bucket, template, config, status, error from measurements "
                     "where status in ('wrong', 'runtime', 'timeout')"):
    print("failed candidate:", " | ".join(str(v) for v in r))
PY
cases="softmax:bf16:32768x4096 softmax:bf16:16384x32768 softmax:bf16:32768x512
layernorm:bf16:32768x4096 layernorm:bf16:16384x32768 layernorm:bf16:32768x512
rmsnorm:bf16:32768x4096 rmsnorm:bf16:16384x32768 rmsnorm:bf16:32768x512
transpose:bf16:32768x4096 transpose:bf16:4096x32768 reduce_all:f32:268435456 reduce_rows:bf16:32768x4096"
python3 bench/peers_memory.py "$@" $cases > "$keep/memory-peers.jsonl" 2> "$w/peers.err" || tail -5 "$w/peers.err"
python3 - "$w/winners.json" "$keep/memory-peers.jsonl" <<'PY' | tee "$keep/memory-table.txt"
import json, sys
wins = json.load(open(sys.argv[1]))
peers = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
def lo(v):
    p = 1
    while p * 2 <= v: p *= 2
    return p
print("%-30s %10s %10s %10s %8s %8s  %s" % ("case", "aitune", "eager", "compile", "x eager", "x comp", "aitune config"))
for p in peers:
    op, dt, shape = p["case"].split(":")
    dims = [int(v) for v in shape.split("x")]
    key = ",".join(str(lo(v)) for v in dims)
    w = next((r for r in wins if r["op"] == op and r["dtype"] == dt and r["lo"] == key), None)
    a = w["gbps"] if w else 0
    e, c = p.get("eager_gbps", 0), p.get("compile_gbps", 0)
    print("%-30s %10.0f %10.0f %10.0f %8.2f %8.2f  %s" % (p["case"], a, e, c, a / e if e else 0, a / c if c else 0,
          (w["template"] + " " + json.dumps(w["config"])) if w else "no winner"))
PY
cp "$w/winners.json" "$keep/memory-winners.json"
