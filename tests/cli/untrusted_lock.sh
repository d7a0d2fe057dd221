#!/usr/bin/env bash
# One sweep at a time on a registry (issue 31): a second sweep, retune or
# check on a registry a sweep is using is refused in one line naming the
# holder (exit 1), by any name of the file; a killed holder leaves a lock
# file that blocks no one; compile and the read-only commands are not held.
. "$(dirname "$0")/lib.sh"

small_spec
DB=$T/l.db
seed_db "$DB" || { fail "seed the cubin cache"; exit 1; }

bg_fake_sweep slow_time:200 "$DB" "$T/small.yaml"
holder=$BG
wait_for "$DB" "select count(*) from measurements" 1 || fail "the first sweep measures"
ln -s "$DB" "$T/alias.db"
for db in "$DB" "$T/alias.db" "$T/../$(basename "$T")/l.db"; do
    run env AITUNE_WORKER="$FAKE" "$AITUNE" sweep "$T/small.yaml" --db "$db" --quiet
    expect_eq "a second sweep on $(basename "$db") is refused (exit 1)" "$RC" 1 || show_last
    expect_stderr "registry '.*' is in use by another sweep \(pid $holder since [0-9T:-]+Z: aitune sweep" \
        "it names the holder's pid and command"
    expect_stderr_lines 1 "in one line"
done
for cmd in retune check; do
    run env AITUNE_WORKER="$FAKE" "$AITUNE" $cmd "$T/small.yaml" --db "$DB" --quiet
    expect_eq "$cmd on it is refused too (exit 1)" "$RC" 1 || show_last
    expect_stderr "in use by another sweep" "$cmd says why"
done
run "$AITUNE" show --db "$DB"
expect_eq "show reads it meanwhile" "$RC" 0 || show_last
run "$AITUNE" compile "$T/small.yaml" --db "$DB" --quiet
expect_eq "compile (the cache only) is not held" "$RC" 0 || show_last
n1=$(sql "$DB" "select count(*) from runs")
kill -9 "$holder"
wait "$holder" 2>/dev/null
ls "$DB.lock" >/dev/null 2>&1 && ok "the killed sweep left its lock file" || skip "no lock file left to test with"
fake_sweep ok "$DB" "$T/small.yaml"
expect_eq "the next sweep is not blocked by a dead holder's lock" "$RC" 0 || show_last
expect_eq "measurements: one per config, no duplicates" \
    "$(sql "$DB" "select count(*) from (select config_hash, count(*) c from measurements where status = 'ok' and device is not null group by 1 having c > 1)")" 0
expect_eq "it recorded its run" "$(sql "$DB" "select count(*) from runs")" $((n1 + 1))

# The lock file is not followed through a link.
DB2=$T/m.db
seed_db "$DB2"
ln -s "$T/precious" "$DB2.lock"
echo keep >"$T/precious"
fake_sweep ok "$DB2" "$T/small.yaml"
expect_eq "a sweep whose lock file is a link fails (exit 1)" "$RC" 1 || show_last
expect_stderr "cannot lock registry" "and says it cannot lock it"
expect_eq "the link's target is untouched" "$(cat "$T/precious")" keep

done_testing
