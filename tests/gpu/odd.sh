#!/usr/bin/env bash
# Every memory-bound op and dtype on odd shapes (tests/gpu/odd.yaml, or $ODD_SPEC), through
# the real sweep: each bucket must get a winner and no candidate may be
# recorded wrong, faulting or hung.   tests/gpu/odd.sh OUTDIR
set -u
keep=${1:-/tmp/aitune-odd}
w=$(mktemp -d /tmp/aitune-odd.XXXX)
mkdir -p "$keep"
build/aitune sweep ${ODD_SPEC:-tests/gpu/odd.yaml} --db "$w/odd.db" --quiet > "$w/odd.out" 2> "$keep/odd.err"
rc=$?
python3 - "$w/odd.db" "$rc" <<'PY' | tee "$keep/odd.txt"
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
bad = con.execute("select op, dtype, bucket, template, status, substr(error, 1, 120) from measurements "
                  "where status in ('wrong', 'runtime', 'timeout')").fetchall()
for r in bad[:20]:
    print("  bad:", r)
n = con.execute("select count(*) from measurements where status = 'ok'").fetchone()[0]
buckets = con.execute("select count(distinct op || dtype || bucket) from measurements").fetchone()[0]
wins = con.execute("select count(*) from winners").fetchone()[0]
ok = sys.argv[2] == "0" and not bad and wins == buckets
print("%s odd shapes: %d candidates verified ok, %d wrong/faulting, %d of %d buckets with a winner" %
      ("PASS" if ok else "FAIL", n, len(bad), wins, buckets))
sys.exit(0 if ok else 1)
PY
