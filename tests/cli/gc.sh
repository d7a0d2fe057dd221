#!/usr/bin/env bash
# aitune gc: drops the measurements and cubins no winner needs, VACUUMs,
# reports the sizes; every winner stays launchable (its cubin is there, emit
# and lookup still answer); --keep-finalists keeps each race's finalists.
. "$(dirname "$0")/lib.sh"

spec two.yaml <<'EOF'
name: two
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {log2: [6, 7]}
EOF
DB=$T/g.db
seed_db "$DB" || { fail "seed the cubin cache"; exit 1; }
fake_sweep wrong_verify:4 "$DB" "$T/two.yaml"
expect_eq "a fake sweep of two buckets" "$RC" 0 || show_last
cp "$DB" "$T/f.db"
size0=$(stat -c %s "$DB")
m0=$(sql "$DB" "select count(*) from measurements")
c0=$(sql "$DB" "select count(*) from cubins")
winners0=$(sql "$DB" "select op, arch, dtype, bucket, template, config, cubin from winners order by bucket")

expect_exit 0 "gc" "$AITUNE" gc --db "$DB"
expect_stdout "^.*g.db: [0-9.]+ [KM]B -> [0-9.]+ [KM]B\$" "reports the size before and after"
expect_stdout "^  measurements $m0 -> 2, cubins $c0 -> [12] \(winners kept\)\$" "reports what it dropped"
expect_eq "the winners are untouched" "$(sql "$DB" "select op, arch, dtype, bucket, template, config, cubin from winners order by bucket")" "$winners0"
expect_eq "every winner's cubin is still there, with its code" \
    "$(sql "$DB" "select count(*) from winners w join cubins c on c.hash = w.cubin where length(c.cubin) > 100")" 2
expect_eq "only the winners' own measurements remain" \
    "$(sql "$DB" "select count(*) from measurements m join winners w on m.op = w.op and m.bucket = w.bucket and m.config = w.config")" 2
expect_eq "no failed measurement remains" "$(sql "$DB" "select count(*) from measurements where status <> 'ok'")" 0
size1=$(stat -c %s "$DB")
[ "$size1" -lt "$size0" ] && ok "the file shrank ($size0 -> $size1 bytes)" || fail "the file did not shrink ($size0 -> $size1)"
[ ! -s "$DB-wal" ] && ok "the WAL is truncated" || fail "the WAL still holds $(stat -c %s "$DB-wal") bytes"
expect_eq "the registry passes an integrity check" "$(sql "$DB" "pragma integrity_check")" ok
expect_exit 0 "lookup after gc" "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape 100 --db "$DB"
expect_stdout "\(exact: tuned bucket n=2\^6" "lookup still answers exactly"
expect_exit 0 "emit after gc" "$AITUNE" emit axpy --arch sm_90 --dtype f32 --shape 200 --db "$DB" -o "$T/k.cu"
expect_true "the emitted kernel is there" grep -q "aitune_axpy_f32" "$T/k.cu"
expect_exit 0 "why after gc" "$AITUNE" why axpy --dtype f32 --shape 100 --db "$DB"
expect_stdout "^winner: axpy/vec" "why still shows the winner"
expect_exit 0 "gc again is harmless" "$AITUNE" gc --db "$DB"
expect_stdout "^  measurements 2 -> 2, " "a second gc drops nothing"

expect_exit 0 "gc --keep-finalists" "$AITUNE" gc --keep-finalists --db "$T/f.db"
want=$(sql "$T/f.db" "select sum(json_array_length(runners_up) + 1) from winners")
expect_eq "the winners' and the finalists' measurements remain" "$(sql "$T/f.db" "select count(*) from measurements")" "$want"
expect_eq "each kept measurement's cubin remains" \
    "$(sql "$T/f.db" "select count(*) from measurements m left join cubins c on c.hash = m.cubin where c.hash is null")" 0
expect_exit 0 "why after gc --keep-finalists" "$AITUNE" why axpy --dtype f32 --shape 100 --db "$T/f.db"
expect_eq "why lists the kept finalists as candidates" "$(grep -c ' regs  axpy/vec' "$T/out")" $(( want / 2 ))

expect_exit 3 "gc of a missing registry" "$AITUNE" gc --db "$T/none.db"
expect_stderr "^aitune: error: no registry at" "names the missing registry"
[ ! -e "$T/none.db" ] && ok "gc creates no registry" || fail "gc created a registry"
expect_exit 3 "gc of a file that is not a registry" sh -c "echo garbage > '$T/bad.db'; '$AITUNE' gc --db '$T/bad.db'"
expect_stderr_lines 1 "one line"
expect_exit 2 "gc with an argument" "$AITUNE" gc extra --db "$DB"
done_testing
