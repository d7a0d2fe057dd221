#!/usr/bin/env bash
# tests/run: slow 5 (a 0.1 registry's sweep compiles its kernels)
# aitune status (issue 11): fresh or stale and why, without a GPU. The fake
# worker plays the GPU; a driver or NVRTC upgrade is simulated by rewriting
# the toolchain identity in the registry, a template edit by a changed copy
# of templates/ (AITUNE_HOME), another GPU by the fake's FAKE_* facts. Also
# the migration of a registry written by aitune 0.1 (schema 1).
. "$(dirname "$0")/lib.sh"

axpy_spec two.yaml 6 7
DB=$T/s.db
seed_db "$DB" axpy || { fail "seed the cubin cache"; exit 1; }
# --keep-cubins: the sweep on another GPU below takes its kernels from the
# cache instead of compiling the losers again.
fake_sweep ok "$DB" "$T/two.yaml" --keep-cubins
expect_eq "fake sweep of two buckets" "$RC" 0 || show_last
expect_eq "the winners carry the hardware identity" \
    "$(sql "$DB" "select count(*) from winners where hw = 'Fake GPU|sm_90|132 SMs|85899345920 B|L2 52428800 B'")" 2
expect_true "the run records its template sources" test -n "$(sql "$DB" "select json_extract(sources, '$.axpy') from runs")"

st() { run env AITUNE_WORKER="$FAKE" "$@" "$AITUNE" status --db "$DB"; }
stj() { run env AITUNE_WORKER="$FAKE" "$@" "$AITUNE" status --db "$DB" --json; }

st env
expect_eq "status right after a sweep exits 0" "$RC" 0 || show_last
expect_stdout "^fresh +axpy f32 n=2\^6" "the winner is fresh"
expect_stdout "^2 winners: 2 fresh, 0 stale" "status counts them"
stj env
expect_eq "status --json exits 0" "$RC" 0
expect_eq "status --json: every winner fresh" \
    "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["fresh"], d["stale"], d["current"]["gpu_checked"], [w["state"] for w in d["winners"]])' <"$T/out")" \
    "2 0 True ['fresh', 'fresh']"

# A driver upgrade: the registry says the winners were measured under 550.54.
cp "$DB" "$T/drv.db"
sqlite3 "$T/drv.db" "update devices set driver = '550.54'"
run env AITUNE_WORKER="$FAKE" "$AITUNE" status --db "$T/drv.db"
expect_eq "a driver change makes status exit 1" "$RC" 1
expect_stdout "^stale +axpy f32 n=2\^6 .*driver changed \(550\.54 -> fake\)" "status says the driver changed, from what to what"

# An NVRTC and CUDA driver API change.
cp "$DB" "$T/nvrtc.db"
sqlite3 "$T/nvrtc.db" "update devices set nvrtc = '12.4', cuda_driver = 12040"
run env AITUNE_WORKER="$FAKE" "$AITUNE" status --db "$T/nvrtc.db" --json
expect_eq "an NVRTC change makes status --json exit 1" "$RC" 1
expect_eq "status --json names both changes" \
    "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["stale"], "|".join(d["winners"][0]["reasons"]))' <"$T/out")" \
    "2 CUDA driver API changed (12040 -> 13000)|NVRTC changed (12.4 -> 13.0)"

# A template edit: the same templates elsewhere are fresh, an edited copy is not.
mkdir -p "$T/home"
cp -R "$ROOT/templates" "$ROOT/search" "$T/home/"
st env AITUNE_HOME="$T/home"
expect_eq "an identical copy of the templates is still fresh" "$RC" 0 || show_last
echo "-- a comment" >>"$T/home/templates/axpy/vec.lua"
st env AITUNE_HOME="$T/home"
expect_eq "an edited template makes status exit 1" "$RC" 1
expect_stdout "^stale +axpy f32 n=2\^6 .*template sources changed" "status says the template sources changed"
echo "-- lib" >>"$T/home/templates/lib/dtype.lua"
cp "$ROOT/templates/axpy/vec.lua" "$T/home/templates/axpy/vec.lua"
st env AITUNE_HOME="$T/home"
expect_stdout "template sources changed" "an edit of templates/lib counts too"

# Another GPU of the same arch: stale until it has its own winners; a sweep
# there adds winners beside the first GPU's instead of overwriting them.
PCIE=(FAKE_GPU_NAME="Fake GPU PCIe" FAKE_UUID=GPU-fake-0001 FAKE_SMS=114)
st env "${PCIE[@]}"
expect_eq "another GPU makes status exit 1" "$RC" 1
expect_stdout "GPU differs \(measured on Fake GPU\|sm_90\|132 SMs" "status says the GPU differs"
rm -f "$T/fake-state"*
run env AITUNE_WORKER="$FAKE" FAKE_STATE="$T/fake-state" "${PCIE[@]}" "$AITUNE" sweep "$T/two.yaml" --db "$DB" --quiet
expect_eq "a sweep on the other GPU" "$RC" 0 || show_last
expect_eq "its winners are added, the first GPU's kept" \
    "$(sql "$DB" "select count(*) || ' ' || count(distinct hw) from winners")" "4 2"
st env "${PCIE[@]}"
expect_eq "on the other GPU, status is fresh again" "$RC" 0 || show_last
expect_stdout "^other +axpy f32 n=2\^6 .*\(on Fake GPU\|sm_90\|132 SMs" "the first GPU's winners are listed as another GPU's"
expect_stdout "^4 winners: 2 fresh, 0 stale, 2 of another GPU" "status counts the other GPU's apart"

# Without a GPU: only what this machine knows is compared, and it says so.
run "$AITUNE" status --db "$DB" --json
expect_eq "status --json without a GPU says the GPU was not checked" \
    "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["current"]["gpu_checked"], d["current"]["hw"])' <"$T/out")" \
    "False None"

# Misses per op.
sqlite3 "$DB" "insert into misses values ('axpy', 'sm_90', 'f32', '{\"n\":3000}', 5), ('axpy', 'sm_90', 'f32', '{\"n\":5000}', 2)"
st env
expect_stdout "^misses +axpy +sm_90 +f32 +2 shapes, 7 calls" "status shows the misses per op"

# Errors.
expect_exit 3 "status of a missing registry" "$AITUNE" status --db "$T/none.db"
expect_stderr "^aitune: error: no registry at" "one error line"
expect_exit 2 "status with a bad --gpu" "$AITUNE" status --db "$DB" --gpu x

# A registry written by aitune 0.1 (schema 1: tests/fixtures/schema-0.1.sql):
# read as it is (status opens read-only; the next sweep migrates it), and
# stale because 0.1 did not record the template sources.
OLD=$T/old.db
sqlite3 "$OLD" <"$ROOT/tests/fixtures/schema-0.1.sql" >/dev/null
sqlite3 "$OLD" "insert into meta values ('schema_version', '1');
  insert into devices values (1, 'Fake GPU', 'GPU-fake-0000', 90, 132, 85899345920, 52428800, 232448, 'fake', 13000, '13.0');
  insert into runs values (1, 'aitune sweep s.yaml', 'x', '0.1.0', 1, 1, '{}', '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z', 'ok');
  insert into winners (op, arch, dtype, bucket, dims, lo, hi, shape, template, config, median_us, launch, device, run)
    values ('axpy', 'sm_90', 'f32', 'n=2^6', 'n', '64', '128', '{\"n\":64}', 'axpy/vec', '{\"block\":64}', 9.5, '{}', 1, 1);
  insert into misses values ('axpy', 'sm_90', 'f32', '{\"n\":3}', 4);"
run env AITUNE_WORKER="$FAKE" "$AITUNE" status --db "$OLD"
expect_eq "status of a 0.1 registry exits 1 (stale)" "$RC" 1 || show_last
expect_eq "the 0.1 registry is left at schema 1 (read-only)" "$(sql "$OLD" "select value from meta where key = 'schema_version'")" 1
expect_eq "its winner is as it was" "$(sql "$OLD" "select op, bucket, template, median_us from winners")" "axpy|n=2^6|axpy/vec|9.5"
expect_stdout "^stale +axpy f32 n=2\^6 .*days old .*template sources not recorded" "it is stale: 0.1 kept no template hashes"
expect_eq "its misses are kept" "$(sql "$OLD" "select count from misses")" 4
run env AITUNE_WORKER="$FAKE" "$AITUNE" status --db "$OLD"
expect_eq "opening it again changes nothing" "$(sql "$OLD" "select count(*) || ' ' || value from winners, meta where key = 'schema_version'")" "1 1"
fake_sweep ok "$OLD" "$T/two.yaml"
expect_eq "a sweep into the 0.1 registry (migrating it)" "$RC" 0 || show_last
expect_eq "the sweep migrated it to schema 8" "$(sql "$OLD" "select value from meta where key = 'schema_version'")" 8
expect_eq "the new winner replaces the 0.1 one of the same GPU" "$(sql "$OLD" "select count(*) from winners")" 2
run env AITUNE_WORKER="$FAKE" "$AITUNE" status --db "$OLD"
expect_eq "then status is fresh" "$RC" 0 || show_last

done_testing
