#!/usr/bin/env bash
# Session 18, call 3: rowdot with pipe (the next step's weights in flight during this step's FMAs), m = 1..4
set -u
python3 bench/narrow.py $OUT/nt rowdot .gpu/s18/rd3.lua || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/nt timeout 400 build/aitune sweep .gpu/s18/probe3.yaml --db $OUT/p.db --vendor time --quiet > $OUT/p.txt 2> $OUT/p.err
echo "probe exit $? in $(( $(date +%s) - t0 )) s"; tail -3 $OUT/p.err
python3 - $OUT/p.db > $OUT/probe.txt <<'PY'
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
ven = {}
for s, us in con.execute("select shape, median_us from vendor_times where status='ok'"):
    s = json.loads(s); ven[(s["m"], s["n"], s["k"])] = us
rows = []; bad = {}
for sh, st, us, c, reg in con.execute("select shape, status, median_us, config, registers from measurements"):
    s = json.loads(sh)
    if st != "ok": bad[st] = bad.get(st, 0) + 1; continue
    rows.append(((s["m"], s["n"], s["k"]), us, json.loads(c), reg))
print("not ok:", bad, "ok:", len(rows))
for key in sorted(ven, key=lambda x: (x[1], x[2], x[0])):
    v = ven[key]; by = key[1] * key[2] * 2
    print("m=%d n=%d k=%d cuBLASLt %.2f us (%.0f GB/s)" % (key + (v, by / v / 1e3)))
    for pipe in (0, 1):
        rs = sorted([x for x in rows if x[0] == key and x[2].get("pipe", 0) == pipe], key=lambda r: r[1])
        for r in rs[:3]:
            c = r[2]
            print("   pipe%d %.2f x%.3f %.0f GB/s w%d kw%d rows%d mr%d u%d reg%d" % (pipe, r[1], v / r[1], by / r[1] / 1e3, c["warps"], c["kw"], c["rows"], c["mrows"], c["unroll"], r[3]))
PY
rm -rf $OUT/nt
gzip $OUT/p.db; rm -f $OUT/p.db.lock $OUT/p.txt
cat $OUT/probe.txt
