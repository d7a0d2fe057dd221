#!/usr/bin/env bash
# Registries and command lines are untrusted input (issue 14, items 3, 4,
# 5, 6 and 10): --db on something not a regular file, registries that
# cannot be written, registries in read-only folders, hostile strings in
# --json output, and exit codes of malformed --shape values.
. "$(dirname "$0")/lib.sh"

small_spec
chmod 755 "$T"

# 3. --db must be a regular file (or absent, for commands that create one).
# (Another program may have left a journal in /dev: only a new one counts.)
dev_before=$(ls -l --time-style=+%s.%N /dev/null-* 2>/dev/null)
for db in /dev/null "$T"; do
    expect_exit 3 "compile --db $db is refused" "$AITUNE" compile "$T/small.yaml" --db "$db"
    expect_stderr "registry '$db': not a regular file" "compile --db $db: says it is not a regular file"
    expect_exit 3 "show --db $db is refused" "$AITUNE" show --db "$db"
done
dev_after=$(ls -l --time-style=+%s.%N /dev/null-* 2>/dev/null)
[ "$dev_before" = "$dev_after" ] && ok "nothing is left in /dev" || fail "a journal or WAL file was left in /dev"
mkfifo "$T/fifo"
expect_exit 3 "compile --db FIFO is refused (without blocking)" timeout 20 "$AITUNE" compile "$T/small.yaml" --db "$T/fifo"
expect_exit 3 "lookup --db FIFO is refused" timeout 20 "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape 64 --db "$T/fifo"

# 4. compile fails (1) when the registry refuses a cubin, and says so once.
DB=$T/r.db
seed_db "$DB" || { fail "seed the registry"; exit 1; }
# (A trigger would be refused at open: the cubins table itself refuses rows.)
cubins_sql=$(sqlite3 "$DB" "SELECT sql FROM sqlite_master WHERE name = 'cubins'")
sqlite3 "$DB" "DROP TABLE cubins; ${cubins_sql%)*}, CONSTRAINT refused CHECK (hash = 'none'));"
# (Five kernels, a sample's four and the default's, are enough to show one
# report for several refusals.)
expect_exit 1 "compile into a registry that refuses cubins" "$AITUNE" compile "$T/small.yaml" --db "$DB" --max-evals 4
expect_stderr "cannot store a cubin: CHECK constraint failed: refused" "the refusal is named"
n=$(grep -c "cannot store" "$T/err")
expect_eq "the refusal is reported once, not per kernel" "$n" 1

# 4. Cubins are stored as they land: kill -9 in the middle keeps them.
cp "$T/.seed.yaml" "$T/k.yaml" 2>/dev/null || small_spec k.yaml
"$AITUNE" compile "$T/k.yaml" --db "$T/k.db" -j 1 >/dev/null 2>&1 &
pid=$!
BG_PIDS="$pid"
got=0
for _ in $(seq 1 300); do
    got=$(sqlite3 "$T/k.db" "SELECT count(*) FROM cubins" 2>/dev/null || echo 0)
    [ "${got:-0}" -ge 1 ] && break
    sleep 0.05
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
kept=$(sqlite3 "$T/k.db" "SELECT count(*) FROM cubins" 2>/dev/null || echo 0)
[ "${kept:-0}" -ge 1 ] && ok "a killed compile keeps the $kept cubins it stored" || fail "a killed compile kept no cubin"

# Who can be refused writing: root writes anything, so run as nobody.
if [ "$(id -u)" = 0 ]; then
    if command -v setpriv >/dev/null 2>&1; then
        as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
    else
        as_user() { return 99; }
    fi
else
    as_user() { "$@"; }
fi
if as_user true 2>/dev/null && as_user test -x "$AITUNE"; then
    # 4. A registry the user cannot write: compile stops at once with exit 1.
    mkdir -p "$T/rw"
    seed_db "$T/rw/ro.db"
    chmod 755 "$T/rw"
    chmod 444 "$T/rw/ro.db"
    [ "$(id -u)" = 0 ] || chmod 555 "$T/rw"
    run as_user "$AITUNE" compile "$T/small.yaml" --db "$T/rw/ro.db"
    expect_eq "compile into a read-only registry exits 1" "$RC" 1 || show_last
    expect_stderr "read-only" "compile into a read-only registry says it is read-only"
    expect_stderr_lines 1 "read-only registry: one error line"

    # 5. A registry in a read-only folder: every read-only command reads it.
    mkdir -p "$T/ro"
    seed_db "$T/ro/reg.db"
    fake_sweep ok "$T/ro/reg.db" "$T/small.yaml"
    expect_eq "fake sweep for the read-only folder" "$RC" 0 || show_last
    sqlite3 "$T/ro/reg.db" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
    rm -f "$T/ro/reg.db-wal" "$T/ro/reg.db-shm"
    chmod 444 "$T/ro/reg.db"
    chmod 555 "$T/ro"
    run as_user "$AITUNE" show --db "$T/ro/reg.db"
    expect_eq "show in a read-only folder exits 0" "$RC" 0 || show_last
    expect_stdout "axpy/vec" "show in a read-only folder lists the winner"
    run as_user "$AITUNE" show --json --db "$T/ro/reg.db"
    expect_eq "show --json in a read-only folder exits 0" "$RC" 0 || show_last
    run as_user "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape 64 --db "$T/ro/reg.db"
    expect_eq "lookup in a read-only folder exits 0" "$RC" 0 || show_last
    run as_user "$AITUNE" emit axpy --arch sm_90 --dtype f32 --shape 64 --db "$T/ro/reg.db" -o -
    expect_eq "emit -o - in a read-only folder exits 0" "$RC" 0 || show_last
    ls "$T/ro" | grep -q -- "-shm\|-wal" && fail "reading left files in the read-only folder" || ok "reading created nothing"
    chmod 755 "$T/ro"
else
    skip "read-only registries: cannot run as another user here"
fi

# 6. --json output of hostile registry strings is valid JSON that carries
# the strings, never injects keys.
HDB=$T/hostile.db
seed_db "$HDB"
fake_sweep ok "$HDB" "$T/small.yaml"
expect_eq "fake sweep for the hostile registry" "$RC" 0 || show_last
sqlite3 "$HDB" "UPDATE winners SET template = 'axpy/vec\",\"pwned\":true,\"x\":\"' || char(10) || char(27) || '[31m',
    config = '{\"block\":256}, \"pwned\": 1', median_us = 1e999;"
run "$AITUNE" show --json --db "$HDB"
expect_eq "show --json of a hostile registry exits 0" "$RC" 0 || show_last
got=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
w = d[0]
assert "pwned" not in w, w
assert w["template"].startswith("axpy/vec\",\"pwned\":true"), w["template"]
assert w["template"].endswith("\n\x1b[31m"), w["template"]
assert w["config"] == "{\"block\":256}, \"pwned\": 1", w["config"]
assert w["median_us"] is None, w["median_us"]
print("valid")' <"$T/out" 2>&1)
expect_eq "show --json of hostile strings is valid JSON carrying them" "$got" "valid"
run "$AITUNE" show --db "$HDB"
if grep -q $'\x1b' "$T/out"; then fail "show prints raw terminal escapes from the registry"; else ok "show escapes control bytes"; fi
run "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape 64 --db "$HDB" --json
if [ "$RC" = 0 ]; then
    got=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
assert "pwned" not in d, d
print("valid")' <"$T/out" 2>&1)
    expect_eq "lookup --json of hostile strings is valid JSON" "$got" "valid"
else
    ok "lookup refuses the hostile registry (exit $RC)"
fi

# 10. --shape: strict, one rule (exit 2), one line of error.
for s in 1.5 0 -5 +5 " 64" 64, ,64 64,,32 99999999999999999999 9223372036854775807 0x40 1e3 "" 64x 6.4e1; do
    expect_exit 2 "lookup --shape '$s'" "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape "$s" --db "$HDB"
done
expect_exit 2 "lookup --shape with two dims for a one-dim op" "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape 64,64 --db "$HDB"
expect_exit 0 "lookup --shape 64 is fine" "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape 64 --db "$HDB"
for a in "sm_90 -DX" "sm_90a$(printf '\n')x" "sm_1"; do
    expect_exit 2 "lookup --arch '$a' is refused" "$AITUNE" lookup axpy --arch "$a" --dtype f32 --shape 64 --db "$HDB"
done
expect_exit 2 "emit of an op that is no name" "$AITUNE" emit 'axpy(){system("id");}' --arch sm_90 --dtype f32 --shape 64 --db "$HDB" -o -
expect_exit 2 "emit --dtype that is no name" "$AITUNE" emit axpy --arch sm_90 --dtype 'f32*/' --shape 64 --db "$HDB" -o -
expect_exit 2 "compile -j 4," "$AITUNE" compile "$T/small.yaml" -j 4, --db "$HDB"
expect_exit 2 "compile -j ' 4'" "$AITUNE" compile "$T/small.yaml" -j " 4" --db "$HDB"
run "$AITUNE" lookup $'ax\npy' --arch sm_90 --dtype f32 --shape 64 --db "$HDB"
expect_eq "an op with a newline: exit 2" "$RC" 2
expect_stderr_lines 3 "an op with a newline: one error line (and the usage)"

# 1. At the default level emit instantiates the registry's template and
# config: both must be the op's own (a value no param has, a template of
# another op) before a template turns them into source.
DDB=$T/dflt.db
seed_db "$DDB" || fail "seed the default registry"
sqlite3 "$DDB" "DELETE FROM winners"
expect_exit 0 "emit at the default level" "$AITUNE" emit axpy --arch sm_90 --dtype f32 --shape 64 --db "$DDB" -o "$T/d.cu"
sqlite3 "$DDB" "UPDATE defaults SET config = json_set(config, '$.block', '1); system(\"id\"); (void)(1') WHERE op = 'axpy'"
expect_exit 3 "a default config with a value the template does not have is refused" \
    "$AITUNE" emit axpy --arch sm_90 --dtype f32 --shape 64 --db "$DDB" -o "$T/d2.cu"
expect_stderr "the default axpy/vec .*block=.* is not one of the template's values" "the error names the bad value"
expect_stderr_lines 1 "in one line"
[ -e "$T/d2.cu" ] && fail "no file is written" || ok "no file is written"
sqlite3 "$DDB" "UPDATE defaults SET template = 'softmax/hold' WHERE op = 'axpy'"
expect_exit 3 "a default naming another op's template is refused" \
    "$AITUNE" emit axpy --arch sm_90 --dtype f32 --shape 64 --db "$DDB" -o "$T/d3.cu"
expect_stderr "names template 'softmax/hold', not one of the op's" "the error names the template"

done_testing
