#!/usr/bin/env bash
# aitune import of T4 files that lie (issue 31): what it stores is checked as
# a sweep would check it: the bucket is the shape's (a file's own bucket
# must be that one or one of its parts), the arch one NVRTC knows, every
# config value one of the template's, no control characters, nothing cut to
# fit; a refused file imports nothing (exit 3). A file exported from a whole
# registry is reported bucket by bucket.
. "$(dirname "$0")/lib.sh"

spec two.yaml <<'EOF'
name: two
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {log2: [6, 7]}
  - op: scale_copy
    dtypes: [f32]
    shapes:
      n: {log2: [6, 6]}
EOF
seed_db "$T/s.db" scale || { fail "seed the cubin cache"; exit 1; }
fake_sweep ok "$T/s.db" "$T/two.yaml"
expect_eq "a fake sweep of three buckets to export" "$RC" 0 || show_last
"$AITUNE" export --format t4 --db "$T/s.db" -o "$T/all.t4.json" || fail "export the whole registry as T4"
"$AITUNE" export --format t4 --op axpy --db "$T/s.db" -o "$T/axpy.t4.json" || fail "export axpy as T4"
n_axpy=$(sql "$T/s.db" "select count(*) from measurements where op = 'axpy' and bucket = 'n=2^6'")

# tamper NAME PYTHON: a copy of axpy.t4.json with its first result changed
# (r is that result, a its "aitune" object).
tamper() {
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"][0]
a = r["aitune"]
exec(sys.argv[3])
# "@INF@" stands for a number JSON cannot spell but a file can hold: 1e999.
open(sys.argv[2], "w").write(json.dumps(d).replace("\"@INF@\"", "1e999"))' "$T/axpy.t4.json" "$T/$1.json" "$2"
}
count() { sql "$1" "select count(*) from measurements"; }

# refused NAME "message" PYTHON
refused() {
    tamper "$1" "$3"
    seed_db "$T/in.db"
    local before
    before=$(count "$T/in.db")
    run "$AITUNE" import "$T/$1.json" --db "$T/in.db"
    if [ "$RC" = 3 ] && [ "$(wc -l <"$T/err")" = 1 ]; then ok "$1: refused in one line (exit 3)"; else fail "$1: exit $RC, want 3 in one line"; show_last; fi
    expect_stderr "$2" "$1: the message says why"
    expect_eq "$1: nothing is imported" "$(count "$T/in.db")" "$before"
}

refused bucket "bucket 'n=2\\^20' is not its shape's \\(n=2\\^6\\)" 'a["bucket"] = "n=2^20"'
refused bucket_part "bucket 'n=2\\^6/x' is not its shape's" 'a["bucket"] = "n=2^6/x"'
refused long_bucket "bucket 'n=2\\^6/1" 'a["bucket"] = "n=2^6/" + "1" * 200'
refused arch "arch 'sm_1234' is not one aitune knows" 'a["arch"] = "sm_1234"'
refused arch_b "arch 'sm_<b>' is not one aitune knows" 'a["arch"] = "sm_<b>"'
refused domain "block=48 is not one of the template's values" 'r["configuration"]["block"] = 48'
refused domain_str "is not one of the template's values" 'r["configuration"]["block"] = "64; system(\"id\")"'
refused control "its error holds a control character" 'a["error"] = "bad\u001b[31m"'
refused control_tmpl "its template holds a control character" 'a["template"] = "vec\n"'
refused inf_time "a correct result without a time" \
    'r["measurements"][0]["value"] = "@INF@"; r["times"]["runtimes"] = []'

# A part of the shape's bucket is kept as it is (an export of a split bucket).
tamper part 'a["bucket"] = "n=2^6/96"; a["shape"] = {"n": 104}'
seed_db "$T/p.db"
expect_exit 0 "a result in a part of its shape's bucket is imported" "$AITUNE" import "$T/part.json" --db "$T/p.db"
expect_eq "it keeps the part's key" "$(sql "$T/p.db" "select count(*) from measurements where bucket = 'n=2^6/96'")" 1

# --shape: strict sizes.
for s in " 64" "+64" "64," "0" "99999999999999999999"; do
    expect_exit 2 "import --shape '$s' is a usage error" "$AITUNE" import "$T/axpy.t4.json" --op axpy --template vec \
        --dtype f32 --arch sm_90 --shape "$s" --db "$T/p.db"
done

# A whole registry's T4: a line per bucket, each with its own count.
seed_db "$T/w.db"
expect_exit 0 "import a whole registry's T4" "$AITUNE" import "$T/all.t4.json" --db "$T/w.db"
expect_stdout "into 3 buckets:" "it says how many buckets it imported into"
expect_stdout "^  axpy/vec f32 sm_90 n=2\^6: $n_axpy results" "a line for axpy n=2^6 with its own count"
expect_stdout "^  scale_copy/[a-z]+ f32 sm_90 n=2\^6: [0-9]+ results" "a line for scale_copy"
expect_no_stdout "as axpy/vec f32 sm_90 n=2\^6$" "never 'everything as the first bucket'"
expect_eq "every result lands in its own bucket" \
    "$(sql "$T/w.db" "select op, bucket, count(*) from measurements where run = (select max(id) from runs) group by 1, 2" | tr '\n' ' ')" \
    "$(sql "$T/s.db" "select op, bucket, count(*) from measurements group by 1, 2" | tr '\n' ' ')"

done_testing
