#!/usr/bin/env bash
# A registry written by aitune 0.1 (tests/fixtures/registry-0.1.sql, a dump
# of one made by 0.1's code and schema): read-only commands read it as it
# is; the first command that writes migrates it (schema 2, version-2 launch
# plans) in place, once; emit gives the same file before and after. And:
# compile stores the template defaults (with their kernels), so lookup and
# emit answer at the default level without a sweep; a registry from a newer
# aitune is refused by the tool and by libaitune.
. "$(dirname "$0")/lib.sh"

OLD=$T/old.db
sqlite3 "$OLD" < "$ROOT/tests/fixtures/registry-0.1.sql"
expect_eq "the fixture is a schema-1 registry" "$(sql "$OLD" "select value from meta where key = 'schema_version'")" 1

expect_exit 0 "lookup reads a 0.1 registry" "$AITUNE" lookup reduce_all --arch sm_90 --dtype f32 --shape 1048576 --db "$OLD"
expect_stdout "exact: tuned bucket n=2\^20" "at the exact level"
expect_exit 0 "emit reads a 0.1 registry without migrating it" \
    "$AITUNE" emit reduce_all --arch sm_90 --dtype f32 --shape 1048576 --db "$OLD" -o "$T/before.cu"
expect_eq "emit left it at schema 1 (read-only)" "$(sql "$OLD" "select value from meta where key = 'schema_version'")" 1
expect_true "the 0.1 workspace (544 bytes) comes through" grep -q "return (size_t)(544LL)" "$T/before.cu"
expect_exit 0 "why reads a 0.1 registry's measurements (no timing column) without migrating it" \
    "$AITUNE" why axpy --dtype f32 --bucket 'n=2^9' --arch sm_90 --db "$OLD"
expect_stdout "fastest correct candidates" "and lists them"
expect_eq "why left it at schema 1" "$(sql "$OLD" "select value from meta where key = 'schema_version'")" 1

spec tiny.yaml <<EOF
name: tiny
max_evals: 1
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {values: [1000]}
EOF
run "$AITUNE" compile "$T/tiny.yaml" --db "$OLD" --max-evals 1
expect_eq "compile on a 0.1 registry exits 0" "$RC" 0 || show_last
expect_stderr "2 launch plans from aitune 0.1 migrated" "and says it migrated the plans"
expect_eq "the schema is now 8" "$(sql "$OLD" "select value from meta where key = 'schema_version'")" 8
expect_eq "its measurements say how they were timed: flush, as every one before schema 4" \
    "$(sql "$OLD" "select count(*) from measurements where timing <> 'flush'")" 0
expect_eq "defaults gained their kernel columns" "$(sql "$OLD" "select count(*) from pragma_table_info('defaults') where name in ('cubin', 'launch')")" 2
expect_eq "every winner holds a version-2 plan" "$(sql "$OLD" "select count(*) from winners where launch like '{\"v\":2,%'")" 2
ws=$(sql "$OLD" "select launch from winners where op = 'reduce_all'")
expect_true "the migrated plan keeps the workspace" grep -q '"kind":"workspace","size":"544"' <<<"$ws"
run "$AITUNE" compile "$T/tiny.yaml" --db "$OLD" --max-evals 1
expect_true "a second compile has nothing to migrate" test "$(grep -c 'migrated' "$T/err")" -eq 0
expect_exit 0 "emit after the migration" \
    "$AITUNE" emit reduce_all --arch sm_90 --dtype f32 --shape 1048576 --db "$OLD" -o "$T/after.cu"
expect_true "gives the same file as before it" cmp -s "$T/before.cu" "$T/after.cu"
expect_exit 0 "the whole op emits too" "$AITUNE" emit reduce_all --arch sm_90 --dtype f32 --db "$OLD" -o "$T/whole.cu"
if command -v nvcc >/dev/null 2>&1; then
    expect_exit 0 "nvcc builds the migrated kernel's file" nvcc -gencode=arch=compute_90a,code=sm_90a -c "$T/after.cu" -o "$T/after.o"
else
    skip "nvcc builds the migrated kernel's file: no nvcc"
fi

# compile stores defaults: lookup and emit answer without any sweep.
NEW=$T/new.db
run "$AITUNE" compile "$T/tiny.yaml" --db "$NEW" --max-evals 1
expect_eq "compile on a new registry exits 0" "$RC" 0 || show_last
expect_eq "it stored the default with its kernel" "$(sql "$NEW" "select count(*) from defaults where cubin is not null and launch like '{\"v\":2,%'")" 1
expect_exit 0 "lookup answers after compile alone" "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape 5000 --db "$NEW"
expect_stdout "default" "at the default level"
expect_exit 0 "emit answers after compile alone" "$AITUNE" emit axpy --arch sm_90 --dtype f32 --shape 5000 --db "$NEW" -o "$T/d.cu"
expect_exit 0 "and so does a whole-op emit" "$AITUNE" emit axpy --arch sm_90 --dtype f32 --db "$NEW" -o "$T/dall.cu"

# A newer schema is refused by both.
sql "$NEW" "update meta set value = '9' where key = 'schema_version'" >/dev/null
run "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape 5000 --db "$NEW"
expect_eq "lookup (libaitune) refuses a newer registry: exit 3" "$RC" 3
expect_stderr "newer aitune" "and says why"
run "$AITUNE" compile "$T/tiny.yaml" --db "$NEW" --max-evals 1
expect_eq "compile refuses it too: exit 3" "$RC" 3
expect_stderr "newer aitune" "and says why"
done_testing
