#!/usr/bin/env bash
# Launch plans end to end without a GPU: a fake sweep stores version-2 plans,
# a spec listing dims out of the op's order still stores buckets lookup finds,
# emit writes one bucket or the whole op (nvcc builds both), and emit treats
# the registry as untrusted (issue 14 items 1-3): injected expressions,
# kernel names and comment text (newlines, backslashes, trigraphs) are
# refused or neutralized, NULL columns give errors not crashes, and -o
# writes only regular files.
. "$(dirname "$0")/lib.sh"

spec order.yaml <<EOF
name: order
search: random
max_evals: 2
tasks:
  - op: softmax
    dtypes: [bf16]
    shapes:
      cols: {values: [1000, 5000]}
      rows: {values: [64]}
EOF
DB=$T/order.db
fake_sweep ok "$DB" "$T/order.yaml"
expect_eq "fake sweep of a spec listing cols before rows exits 0" "$RC" 0 || show_last
keys=$(sql "$DB" "select group_concat(bucket || ' ' || dims || ' ' || lo, ';') from (select * from winners order by bucket)")
expect_eq "buckets are keyed in the op's dim order (rows, cols)" "$keys" "rows=2^6,cols=2^12 rows,cols 64,4096;rows=2^6,cols=2^9 rows,cols 64,512"
expect_exit 0 "lookup finds the very shape the sweep tuned" "$AITUNE" lookup softmax --arch sm_90 --dtype bf16 --shape 64,1000 --db "$DB"
expect_stdout "exact: tuned bucket rows=2\^6,cols=2\^9" "and answers at the exact level"
v=$(sql "$DB" "select count(*) from winners where launch like '{\"v\":2,%'")
expect_eq "every winner stores a version-2 launch plan" "$v" 2
v=$(sql "$DB" "select count(*) from defaults where cubin in (select hash from cubins) and launch like '{\"v\":2,%'")
expect_eq "the sweep stores the default with its kernel (libaitune launches at the default level)" "$v" 1

# emit: one bucket, and the whole op with its dispatcher.
expect_exit 0 "emit one bucket" "$AITUNE" emit softmax --arch sm_90 --dtype bf16 --shape 64,1000 --db "$DB" -o "$T/one.cu"
expect_exit 0 "emit the whole op (no --shape)" "$AITUNE" emit softmax --arch sm_90 --dtype bf16 --db "$DB" -o "$T/all.cu"
expect_stderr "over 2 kernels" "the whole-op file holds both buckets"
expect_exit 0 "emit the whole op without --arch (the registry has one)" "$AITUNE" emit softmax --dtype bf16 --db "$DB" -o "$T/noarch.cu"
expect_true "gives the same file" cmp -s "$T/all.cu" "$T/noarch.cu"
n=$(grep -c "^static int aitune_pick" "$T/all.cu")
expect_eq "the whole-op file has one dispatcher" "$n" 1
n=$(grep -c "aitune_softmax_bf16_workspace_bytes(long long rows, long long cols)" "$T/all.cu")
expect_eq "and a workspace-size function over the op's dims" "$n" 1
if command -v nvcc >/dev/null 2>&1; then
    expect_exit 0 "nvcc builds the one-bucket file" nvcc -gencode=arch=compute_90a,code=sm_90a -c "$T/one.cu" -o "$T/one.o"
    expect_exit 0 "nvcc builds the whole-op file" nvcc -gencode=arch=compute_90a,code=sm_90a -c "$T/all.cu" -o "$T/all.o"
else
    skip "nvcc builds the emitted files: no nvcc"
fi

# -o: only regular files (or stdout).
ln -s /dev/null "$T/link.cu"
expect_exit 2 "emit -o /dev/null is refused" "$AITUNE" emit softmax --arch sm_90 --dtype bf16 --db "$DB" -o /dev/null
expect_stderr "not a regular file" "and says why"
expect_exit 2 "emit -o a symlink is refused" "$AITUNE" emit softmax --arch sm_90 --dtype bf16 --db "$DB" -o "$T/link.cu"
expect_true "the symlink is left alone" test -L "$T/link.cu"
mkdir "$T/dir.cu"
expect_exit 2 "emit -o a directory is refused" "$AITUNE" emit softmax --arch sm_90 --dtype bf16 --db "$DB" -o "$T/dir.cu"
left=$(ls "$T" | grep -c 'XXXXXX\|\.cu\.' || true)
expect_eq "no temporary is left behind" "$left" 0

# Hostile rows: each a copy of the registry with one winner tampered with.
tamper() {  # name sql
    cp "$DB" "$T/$1.db"
    sql "$T/$1.db" "$2" >/dev/null
}
tamper inject "update winners set launch = replace(launch, '\"expr\":\"rows\"', '\"expr\":\"rows); system(\\\"id\\\"); (0\"')"
run "$AITUNE" emit softmax --arch sm_90 --dtype bf16 --shape 64,1000 --db "$T/inject.db" -o "$T/inject.cu"
expect_eq "an injected expression: emit exits 3" "$RC" 3
expect_stderr "launch plan: param 2 .dim." "and names the bad parameter"
expect_true "and writes no file" test ! -e "$T/inject.cu"
tamper kname "update winners set launch = replace(launch, '\"kernel\":\"', '\"kernel\":\"x(){system(0);} void ')"
run "$AITUNE" emit softmax --arch sm_90 --dtype bf16 --shape 64,1000 --db "$T/kname.db" -o "$T/kname.cu"
expect_eq "an injected kernel name: emit exits 3" "$RC" 3
tamper null "create table w2 as select * from winners; drop table winners; alter table w2 rename to winners; update winners set launch = NULL"
run "$AITUNE" emit softmax --arch sm_90 --dtype bf16 --shape 64,1000 --db "$T/null.db" -o "$T/null.cu"
expect_eq "a NULL launch (a table without NOT NULL): emit exits 3, no crash" "$RC" 3
expect_stderr "has no launch plan" "and says so"
tamper comment "update winners set config = '{}' || char(10) || 'int evil = system(\"id\");', template = 'softmax/hold\\'"
expect_exit 0 "a newline and a backslash in the config and template" "$AITUNE" emit softmax --arch sm_90 --dtype bf16 --shape 64,1000 --db "$T/comment.db" -o "$T/comment.cu"
n=$(grep -c '^int evil' "$T/comment.cu")
expect_eq "do not leave the comment" "$n" 0
bs=$(grep '^//' "$T/comment.cu" | grep -c '\\' || true)
expect_eq "no backslash in a comment line" "$bs" 0
# A trailing ??/ is a backslash where trigraphs are on (nvcc -std=c++14):
# it would splice the next line of code into the comment. (The shape stays
# JSON with both dims: emit reads the winner's alignment classes from it.)
tamper trigraph "update winners set shape = json_insert(shape, '\$.x', '??/'), template = 'softmax/hold?' || char(1) || '/'"
expect_exit 0 "a trigraph in the shape and the template" "$AITUNE" emit softmax --arch sm_90 --dtype bf16 --db "$T/trigraph.db" -o "$T/trigraph.cu"
tg=$(grep '^//' "$T/trigraph.cu" | grep -c '??' || true)
expect_eq "no ?? (trigraph) in a comment line" "$tg" 0
tamper arch "update winners set arch = 'sm_90a'"
expect_exit 0 "a winner stored as sm_90a: emit finds it as lookup does" \
    "$AITUNE" emit softmax --arch sm_90 --dtype bf16 --shape 64,1000 --db "$T/arch.db" -o "$T/arch.cu"
expect_stderr "level exact" "at the exact level"
tamper edges "update winners set lo = '64,abc'"
run "$AITUNE" emit softmax --arch sm_90 --dtype bf16 --db "$T/edges.db" -o "$T/edges.cu"
expect_eq "bad bucket edges: whole-op emit exits 3" "$RC" 3
done_testing
