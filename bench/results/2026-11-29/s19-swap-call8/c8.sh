#!/usr/bin/env bash
# Session 19, call 8: wgmma with the operands exchanged (wgmma_swap: the weight in BM-row tiles, A's m rows in BN-wide tiles of any multiple of 8, D stored transposed) at row 2's sizes, x cuBLASLt; compute-sanitizer on ragged shapes first
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 bench/narrow.py $OUT/ns wgmma .gpu/s19/san8.lua || exit 1
cp .gpu/s19/wgmma_swap.lua $OUT/ns/templates/gemm_nt/
t0=$(date +%s)
AITUNE_HOME=$OUT/ns SANITIZE_SPEC=.gpu/s19/san8.yaml SANITIZE_ARGS="--vendor off" timeout 150 tests/gpu/sanitize.sh $OUT/san
echo "sanitize exit $? in $(( $(date +%s) - t0 )) s"
python3 bench/narrow.py $OUT/nt wgmma .gpu/s19/swap8.lua || exit 1
cp .gpu/s19/wgmma_swap.lua $OUT/nt/templates/gemm_nt/
t0=$(date +%s)
AITUNE_HOME=$OUT/nt timeout 330 build/aitune sweep .gpu/s19/probe8.yaml --db $OUT/p.db --vendor time --quiet > $OUT/p.txt 2> $OUT/p.err
echo "probe exit $? in $(( $(date +%s) - t0 )) s"; tail -3 $OUT/p.err
python3 - $OUT/p.db > $OUT/probe.txt <<'PY'
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
ven = {}
for s, us in con.execute("select shape, median_us from vendor_times where status='ok'"):
    d = json.loads(s); ven[(d["n"], d["m"])] = us
rows = {}; bad = {}
for sh, st, us, c in con.execute("select shape, status, median_us, config from measurements"):
    d = json.loads(sh); c = json.loads(c); key = (d["n"], d["m"])
    if st != 'ok': bad[st] = bad.get(st, 0) + 1; continue
    rows.setdefault(key, []).append((us, c))
print("not ok:", bad)
for key in sorted(rows):
    r = sorted(rows[key], key=lambda x: x[0]); v = ven.get(key, 0)
    print("n=%d m=%d cuBLASLt %.1f  best %.1f x%.3f" % (key[0], key[1], v, r[0][0], v / r[0][0]))
    for us, c in r[:5]:
        print("    %.1f bm%d bn%d %s st%d pr%d" % (us, c["bm"], c["bn"], c["cluster"], c["stages"], c["producer_regs"]))
PY
cat $OUT/probe.txt
rm -rf $OUT/nt $OUT/ns; gzip $OUT/p.db; rm -f $OUT/p.db.lock $OUT/p.txt
tar czf $OUT/san.tgz -C $OUT san && rm -rf $OUT/san
