"""The verdict on a GPU sweep's registry, for the scripts in tests/gpu/:
lists the candidates recorded wrong, faulting or hung, counts the verified
ones and the buckets with a winner, and prints one PASS or FAIL line.

    python3 tests/gpu/verdict.py DB SWEEP_EXIT LABEL [--sanitizer-errors N]

PASS needs the sweep to have exited 0, no bad candidate, at least one
verified, a winner in every bucket and no sanitizer errors (when given).
Exit 0 on PASS, 1 on FAIL."""
import sqlite3
import sys


def main(argv):
    db, rc, label = argv[1], argv[2], argv[3]
    san = None
    if len(argv) > 5 and argv[4] == "--sanitizer-errors":
        san = int(argv[5])
    con = sqlite3.connect(db)
    bad = con.execute("select op, dtype, bucket, template, status, substr(error, 1, 120) from measurements "
                      "where status in ('wrong', 'runtime', 'timeout')").fetchall()
    for r in bad[:20]:
        print("  bad:", r)
    n = con.execute("select count(*) from measurements where status = 'ok'").fetchone()[0]
    per = dict(con.execute("select template, count(*) from measurements where status = 'ok' group by template"))
    buckets = con.execute("select count(distinct op || dtype || bucket) from measurements").fetchone()[0]
    wins = con.execute("select count(*) from winners").fetchone()[0]
    ok = rc == "0" and not bad and n > 0 and wins == buckets and (san is None or san == 0)
    extra = "" if san is None else ", %d sanitizer errors" % san
    print("%s %s: sweep exit %s, %d candidates verified ok, %d wrong/faulting, %d of %d buckets with a winner%s" %
          ("PASS" if ok else "FAIL", label, rc, n, len(bad), wins, buckets, extra))
    if len(per) <= 8:
        print("  verified per template:", per)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
