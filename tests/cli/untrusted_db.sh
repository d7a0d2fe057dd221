#!/usr/bin/env bash
# Registries that are not what they claim (issue 31, "Registries"): a view
# that recurses for ever where a table should be, a foreign trigger, a
# virtual table or an extra table is refused at open, by the tool and by
# libaitune (lookup, emit), in one line with exit 3, never a hang; a --db
# that looks like a SQLite URI is a plain file name; read-only commands
# leave the registry as it was.
. "$(dirname "$0")/lib.sh"

small_spec
DB=$T/r.db
seed_db "$DB" || { fail "seed the cubin cache"; exit 1; }
fake_sweep ok "$DB" "$T/small.yaml"
expect_eq "a fake sweep to read" "$RC" 0 || show_last

"$AITUNE" export --format t4 --db "$DB" -o "$T/t4.json" || fail "export a T4 file to import"

# A view whose rows never come: any query on it runs for ever.
FOREVER="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)"
WCOLS="'axpy' AS op, 'sm_90' AS arch, 'f32' AS dtype, 'n=2^6' AS bucket, '' AS hw, 'n' AS dims, '64' AS lo,
       '128' AS hi, '{\"n\":64}' AS shape, 'axpy/vec' AS template, '{}' AS config, 1.0 AS median_us, 0 AS gbps,
       0 AS tflops, 0 AS default_us, 0 AS margin, 1 AS exhaustive, '[]' AS runners_up, NULL AS cubin,
       '{}' AS launch, 1 AS device, 1 AS run"
cp "$DB" "$T/view_winners.db"
sqlite3 "$T/view_winners.db" "DROP TABLE winners; CREATE VIEW winners AS $FOREVER SELECT $WCOLS FROM c WHERE x < 0;"
cp "$DB" "$T/view_meta.db"
sqlite3 "$T/view_meta.db" "DROP TABLE meta; CREATE VIEW meta AS $FOREVER SELECT 'schema_version' AS key, '4' AS value FROM c WHERE x < 0;"
# The same, behind a table of the right name: a trigger, a virtual table.
cp "$DB" "$T/trigger.db"
sqlite3 "$T/trigger.db" "CREATE TRIGGER evil AFTER INSERT ON measurements BEGIN DELETE FROM winners; END;"
cp "$DB" "$T/trigger_renamed.db"
sqlite3 "$T/trigger_renamed.db" "DROP TRIGGER devices_identity;
    CREATE TRIGGER devices_identity AFTER INSERT ON devices BEGIN DELETE FROM winners; END;"
cp "$DB" "$T/virtual.db"
sqlite3 "$T/virtual.db" "DROP TABLE misses; CREATE VIRTUAL TABLE misses USING fts5(op, arch, dtype, shape, count);"
cp "$DB" "$T/extra.db"
sqlite3 "$T/extra.db" "CREATE TABLE notes (x);"
cp "$DB" "$T/generated.db"
sqlite3 "$T/generated.db" "ALTER TABLE misses ADD COLUMN g TEXT AS (upper(op));"

for bad in view_winners view_meta trigger trigger_renamed virtual extra generated; do
    B=$T/$bad.db
    cp "$B" "$T/before.db"
    for cmd in "show" "lookup axpy --arch sm_90 --dtype f32 --shape 64" "why axpy --dtype f32 --shape 64" \
               "status" "export --format json" "report -o $T/r.html" "gc" \
               "emit axpy --arch sm_90 --dtype f32 --shape 64 -o $T/e.cu" "compile $T/small.yaml" \
               "import $T/t4.json"; do
        # trigger_renamed: libaitune never writes where the schema's
        # triggers fire, and checks their names only (lookup answers).
        [ "$bad" = trigger_renamed ] && [ "${cmd%% *}" = lookup ] && continue
        # shellcheck disable=SC2086
        run timeout 10 "$AITUNE" $cmd --db "$B"
        if [ "$RC" = 3 ] && grep -Eq "not an aitune registry|altered" "$T/err" && [ "$(wc -l <"$T/err")" = 1 ]; then
            ok "$bad: ${cmd%% *} refuses it in one line (exit 3)"
        else
            fail "$bad: ${cmd%% *}: exit $RC, want 3 with one line"
            show_last 3
        fi
    done
    run timeout 10 "$AITUNE" merge "$T/out_$bad.db" "$B"
    [ "$RC" = 3 ] && ok "$bad: merge refuses it as an input (exit 3)" || { fail "$bad: merge input: exit $RC, want 3"; show_last 3; }
    cmp -s "$B" "$T/before.db" && ok "$bad: nothing wrote to it" || fail "$bad: a command changed the refused registry"
done
run "$AITUNE" show --db "$T/view_winners.db"
expect_stderr "view 'winners' is a view, not a table" "the message names the view"
run "$AITUNE" show --db "$T/trigger.db"
expect_stderr "trigger 'evil' is not one of the schema's" "the message names the trigger"
run "$AITUNE" compile "$T/small.yaml" --db "$T/trigger_renamed.db"
expect_stderr "trigger 'devices_identity' is not one of the schema's" "a schema trigger with another body is refused"
run "$AITUNE" show --db "$T/virtual.db"
expect_stderr "table 'misses' is a virtual table" "the message names the virtual table"

# A view in place of the output of a merge: refused before anything is read.
run timeout 10 "$AITUNE" merge "$T/view_meta.db" "$DB"
expect_eq "merge into a registry whose meta is a view: exit 3" "$RC" 3 || show_last

# ---- --db names a file, never a SQLite URI ----
mkdir -p "$T/uri"
cd "$T/uri" || exit 1
expect_exit 3 "show --db 'file:/dev/null' is no such file, not /dev/null" "$AITUNE" show --db 'file:/dev/null'
expect_stderr "no such file|no registry" "it says there is no such file"
for ro in "show" "status" "export --format json"; do
    # shellcheck disable=SC2086
    expect_exit 3 "$ro --db 'file:x?mode=memory' is no such file" "$AITUNE" $ro --db 'file:x?mode=memory'
done
expect_exit 0 "compile --db 'file:x?mode=memory' writes a plain file of that name" \
    "$AITUNE" compile "$T/small.yaml" --db 'file:x?mode=memory' --max-evals 2
[ -f "$T/uri/file:x?mode=memory" ] && ok "the file 'file:x?mode=memory' holds the registry" \
    || fail "no file 'file:x?mode=memory': the registry went elsewhere (a memory database?)"
n=$(sqlite3 "$T/uri/file:x?mode=memory" "select count(*) from cubins" 2>&1)
[ "${n:-0}" -ge 1 ] 2>/dev/null && ok "it keeps the $n cubins" || fail "the registry has no cubins: '$n'"
expect_exit 0 "show --db 'file:x?mode=memory' reads it back" "$AITUNE" show --db 'file:x?mode=memory'
cp "$DB" "$T/uri/file:r.db"
expect_exit 0 "lookup (libaitune) --db 'file:r.db' reads the plain file" \
    "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape 64 --db 'file:r.db'
expect_stdout "axpy/vec" "and answers from it"
cd "$ROOT" || exit 1

# ---- read-only commands leave the file and its folder as they were ----
RO=$T/ro
mkdir -p "$RO"
cp "$DB" "$RO/reg.db"
sqlite3 "$RO/reg.db" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
rm -f "$RO/reg.db-wal" "$RO/reg.db-shm"
sum=$(md5sum <"$RO/reg.db")
for cmd in "show" "status" "export --format csv" "report -o $T/ro.html" "why axpy --dtype f32 --shape 64" \
           "lookup axpy --arch sm_90 --dtype f32 --shape 64"; do
    # shellcheck disable=SC2086
    run "$AITUNE" $cmd --db "$RO/reg.db"
    [ "$RC" -le 1 ] || { fail "$cmd on a good registry: exit $RC"; show_last 3; }
done
expect_eq "show, status, export, report, why and lookup change no byte of the registry" "$(md5sum <"$RO/reg.db")" "$sum"
# status opens read-only: a registry it may not write is read all the same.
chmod 444 "$RO/reg.db"
if [ "$(id -u)" != 0 ]; then
    run "$AITUNE" status --db "$RO/reg.db"
    [ "$RC" -le 1 ] && ok "status reads a registry it may not write (exit $RC)" || { fail "status on a read-only file: exit $RC"; show_last; }
else
    skip "status on a read-only file: root writes anything"
fi
chmod 644 "$RO/reg.db"
# An older registry is read as it is, not migrated.
OLD=$T/old.db
cp "$DB" "$OLD"
sqlite3 "$OLD" "ALTER TABLE measurements DROP COLUMN timing; ALTER TABLE cubins DROP COLUMN cubin_hash; DROP TABLE vendor_times; DROP TABLE scans; UPDATE meta SET value = '3' WHERE key = 'schema_version'"
run "$AITUNE" status --db "$OLD"
[ "$RC" -le 1 ] && ok "status reads a schema 3 registry (exit $RC)" || { fail "status on schema 3: exit $RC"; show_last; }
expect_eq "status left it at schema 3" "$(sql "$OLD" "select value from meta where key = 'schema_version'")" "3"

done_testing
