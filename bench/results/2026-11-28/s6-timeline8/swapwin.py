# experiment only: OUT.db = BASE.db with the winners of SRC.db's buckets (and their cubins)
import shutil, sqlite3, sys
base, src, out = sys.argv[1:4]
shutil.copy(base, out)
c = sqlite3.connect(out)
c.execute("attach ? as s", (src,))
cols = [r[1] for r in c.execute("pragma table_info(winners)")]
for row in c.execute("select * from s.winners").fetchall():
    r = dict(zip(cols, row))
    old = c.execute("select device, run from winners where op=? and arch=? and dtype=? and bucket=?",
                    (r["op"], r["arch"], r["dtype"], r["bucket"])).fetchone()
    if not old:
        print("no such bucket", r["bucket"]); continue
    r["device"], r["run"] = old
    c.execute("delete from winners where op=? and arch=? and dtype=? and bucket=?", (r["op"], r["arch"], r["dtype"], r["bucket"]))
    c.execute("insert into winners (%s) values (%s)" % (",".join(cols), ",".join("?" * len(cols))), [r[k] for k in cols])
    c.execute("insert or ignore into main.cubins select * from s.cubins where hash=?", (r["cubin"],))
    print("swapped", r["bucket"], r["template"], r["median_us"])
c.commit()
