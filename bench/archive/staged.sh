#!/usr/bin/env bash
# The long-row families side by side, in one call on a GPU (bench/archive/staged.yaml),
# then PyTorch eager and torch.compile on the same shapes: each template's best
# (and, for transpose, each staging's best) against the peers. Prebuilt build/.
#   bench/archive/staged.sh OUTDIR
set -u
keep=${1:-/tmp/aitune-staged}
w=$(mktemp -d /tmp/aitune-staged.XXXX)
mkdir -p "$keep"
t0=$(date +%s)
build/aitune sweep bench/archive/staged.yaml --db "$w/staged.db" --quiet > "$keep/staged-sweep.txt" 2> "$keep/staged-sweep.err"
echo "sweep exit $? after $(( $(date +%s) - t0 )) s"
tail -3 "$keep/staged-sweep.err"
cases="softmax:bf16:16384x32768 layernorm:bf16:16384x32768 rmsnorm:bf16:16384x32768 softmax:bf16:32768x4096
transpose:bf16:32768x4096 transpose:bf16:4096x32768"
python3 bench/peers_memory.py $cases > "$keep/staged-peers.jsonl" 2> "$w/peers.err" || tail -5 "$w/peers.err"
python3 - "$w/staged.db" "$keep/staged-peers.jsonl" <<'PY' | tee "$keep/staged-table.txt"
import json, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
peers = {json.loads(l)["case"]: json.loads(l) for l in open(sys.argv[2]) if l.strip()}
def case_of(op, dt, shape):
    return "%s:%s:%s" % (op, dt, "x".join(str(v) for v in json.loads(shape).values()))
bad = con.execute("select op, dtype, template, status, substr(error, 1, 100) from measurements "
                  "where status in ('wrong', 'runtime', 'timeout')").fetchall()
for r in bad[:20]:
    print("  bad:", r)
print("%-28s %-18s %5s %5s %9s %8s %8s  %s" % ("case", "template", "ok", "bad", "best GB/s", "x eager", "x comp", "best config"))
rows = con.execute("""select op, dtype, shape, template,
                             case when op = 'transpose' then json_extract(config, '$.stage') else '' end,
                             sum(status = 'ok'), sum(status in ('wrong', 'runtime', 'timeout')), max(gbps)
                      from measurements group by op, dtype, bucket, template, 5 order by op, dtype, bucket""").fetchall()
for op, dt, shape, tm, stage, nok, nbad, best in rows:
    cfg = con.execute("select config from measurements where op = ? and dtype = ? and shape = ? and template = ? "
                      "and status = 'ok' order by gbps desc limit 1", (op, dt, shape, tm)).fetchone()
    if stage:
        cfg = con.execute("select config from measurements where op = ? and dtype = ? and shape = ? and template = ? "
                          "and status = 'ok' and json_extract(config, '$.stage') = ? order by gbps desc limit 1",
                          (op, dt, shape, tm, stage)).fetchone()
    c = case_of(op, dt, shape)
    p = peers.get(c, {})
    e, k = p.get("eager_gbps", 0), p.get("compile_gbps", 0)
    best = best or 0
    print("%-28s %-18s %5d %5d %9.0f %8.2f %8.2f  %s" % (c, tm + ("/" + stage if stage else ""), nok, nbad, best,
          best / e if e else 0, best / k if k else 0, cfg[0] if cfg else "-"))
for c, p in peers.items():
    print("peer %-28s eager %6.0f  compile %6.0f GB/s" % (c, p.get("eager_gbps", 0), p.get("compile_gbps", 0)))
PY
