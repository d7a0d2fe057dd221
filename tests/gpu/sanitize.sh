#!/usr/bin/env bash
# compute-sanitizer memcheck over a sweep of tests/gpu/sanitize.yaml: every
# candidate's verification and timing runs under the sanitizer (the worker
# is a child process; the sanitizer follows it). PASS when the sanitizer
# reports no errors and no candidate was recorded wrong or faulting.
#   tests/gpu/sanitize.sh OUTDIR
set -u
keep=${1:-/tmp/aitune-sanitize}
w=$(mktemp -d /tmp/aitune-sanitize.XXXX)
mkdir -p "$keep"
compute-sanitizer --tool memcheck --print-limit 20 build/aitune sweep tests/gpu/sanitize.yaml --db "$w/s.db" \
    --timeout 120s --quiet > "$keep/sanitize.txt" 2>&1
rc=$?
errs=$(grep -o "ERROR SUMMARY: [0-9]*" "$keep/sanitize.txt" | awk '{ s += $3 } END { print s + 0 }')
summary=$(grep "ERROR SUMMARY" "$keep/sanitize.txt" | tail -3 | tr '\n' ' ')
python3 - "$w/s.db" "$rc" "$errs" "$summary" <<'PY' | tee "$keep/sanitize-result.txt"
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
bad = con.execute("select op, dtype, bucket, template, status, substr(error, 1, 120) from measurements "
                  "where status in ('wrong', 'runtime', 'timeout')").fetchall()
for r in bad[:20]:
    print("  bad:", r)
n = con.execute("select count(*) from measurements where status = 'ok'").fetchone()[0]
tm = con.execute("select template, count(*) from measurements where status = 'ok' group by template").fetchall()
ok = sys.argv[2] == "0" and sys.argv[3] == "0" and not bad and n > 0
print("%s compute-sanitizer memcheck: sweep exit %s, %s sanitizer errors (%s), %d candidates ok %s, %d bad" %
      ("PASS" if ok else "FAIL", sys.argv[2], sys.argv[3], sys.argv[4].strip(), n, dict(tm), len(bad)))
sys.exit(0 if ok else 1)
PY
