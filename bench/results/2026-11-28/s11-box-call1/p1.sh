#!/usr/bin/env bash
# Probe: swapab's A box of min(bn, round8(m)) rows (new) against bn rows (old, HEAD's templates), same configs.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
cp -r .gpu/old $OUT/oldh && python3 bench/narrow.py $OUT/oldh swapab .gpu/space.lua || exit 1
mkdir -p $OUT/newh && cp -r templates search $OUT/newh/ && python3 bench/narrow.py $OUT/newh swapab .gpu/space.lua || exit 1
for v in old new; do
  AITUNE_HOME=$OUT/${v}h timeout 150 build/aitune sweep .gpu/probe.yaml --db $OUT/$v.db --vendor time --quiet > $OUT/$v.txt 2> $OUT/$v.err
  echo "$v exit $? at $(( $(date +%s) - t0 )) s"
done
AITUNE_HOME=$OUT/newh SANITIZE_SPEC=.gpu/san.yaml SANITIZE_ARGS="--vendor off" timeout 150 tests/gpu/sanitize.sh $OUT/san | tail -3
echo "san at $(( $(date +%s) - t0 )) s"
python3 - $OUT/old.db $OUT/new.db <<'PY'
import sqlite3, sys, json
res = {}
for tag, path in (("old", sys.argv[1]), ("new", sys.argv[2])):
    con = sqlite3.connect(path)
    for sh, st, us, c in con.execute("select shape, status, median_us, config from measurements"):
        m = json.loads(sh)["m"]; bn = json.loads(c)["bn"]
        res.setdefault((m, bn), {})[tag] = (st, us)
    for sh, us in con.execute("select shape, median_us from vendor_times where status = 'ok'"):
        res.setdefault((json.loads(sh)["m"], 0), {})[tag] = ("vendor", us)
print("%4s %4s %16s %16s" % ("m", "bn", "old", "new"))
for (m, bn), d in sorted(res.items()):
    f = lambda t: "%s %.2f" % (t[0], t[1] or 0) if t else "-"
    print("%4d %4s %16s %16s" % (m, bn or "cuBL", f(d.get("old")), f(d.get("new"))))
PY
rm -rf $OUT/oldh $OUT/newh
