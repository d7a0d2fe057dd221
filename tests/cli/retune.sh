#!/usr/bin/env bash
# aitune retune (issue 11) with the fake worker: which buckets it re-measures
# (only the stale ones), that a winner still fastest is kept after racing
# only its stored finalists, and that a changed ranking or a failing
# finalist escalates to a search of that bucket alone.
. "$(dirname "$0")/lib.sh"

axpy_spec two.yaml 6 7
DB=$T/r.db
seed_db "$DB" || { fail "seed the cubin cache"; exit 1; }
fake_sweep ok "$DB" "$T/two.yaml"
expect_eq "the first sweep" "$RC" 0 || show_last
sweep_evals=$(sql "$DB" "select count(*) from measurements where status = 'ok'")
key="select bucket, template, config from winners order by bucket"
before=$(sql "$DB" "$key")

retune() {
    rm -f "$T/fake-state"*
    run env AITUNE_WORKER="$FAKE" FAKE_STATE="$T/fake-state" "$@" "$AITUNE" retune "$T/two.yaml" --db "$DB" --quiet
}
nmeas() { sql "$DB" "select count(*) from measurements"; }

retune env
expect_eq "retune with nothing stale exits 0" "$RC" 0 || show_last
expect_stdout "^retune: 0 stale buckets re-raced, 0 searched again" "it re-measures nothing"

# A driver upgrade: both buckets stale; the finalists alone are raced again.
# A driver upgrade, as the registry sees it: the winners' device rows say
# they were measured under an older driver (each call a new one).
NUP=0
upgrade() { NUP=$((NUP + 1)); sqlite3 "$DB" "update devices set driver = '550.$NUP' where driver = 'fake'"; }
upgrade
n0=$(nmeas)
finalists=$(sql "$DB" "select sum(json_array_length(runners_up) + 1) from winners")
retune env
expect_eq "retune after a driver change exits 0" "$RC" 0 || show_last
expect_stdout "^retune axpy f32 n=2\^6: [0-9.]+ us -> [0-9.]+ us, winner kept" "the winner is kept, old vs new time printed"
expect_stdout "^retune: 2 stale buckets re-raced, 0 searched again" "both buckets re-raced, none searched"
expect_eq "only the stored finalists were measured (not the $sweep_evals of a sweep)" "$(( $(nmeas) - n0 ))" "$finalists"
expect_eq "the winners are the same" "$(sql "$DB" "$key")" "$before"
run env AITUNE_WORKER="$FAKE" "$AITUNE" status --db "$DB"
expect_eq "after retune, status is fresh" "$RC" 0 || show_last

# Only the stale bucket: an NVRTC change recorded on one winner's device row.
sqlite3 "$DB" "insert into devices (name, uuid, cc, sms, mem_bytes, l2_bytes, smem_optin, driver, cuda_driver, nvrtc)
               select name, uuid, cc, sms, mem_bytes, l2_bytes, smem_optin, driver, cuda_driver, '12.4' from devices
               where driver = 'fake';
               update winners set device = (select id from devices where nvrtc = '12.4') where bucket = 'n=2^7'"
retune env
expect_stdout "^retune axpy f32 n=2\^7: .*winner kept" "the stale bucket is re-raced"
expect_no_stdout "^retune axpy f32 n=2\^6" "the fresh bucket is left alone"
expect_stdout "^retune: 1 stale bucket re-raced" "one bucket"

# The ranking changed: the stored winner is now a finalist another beats by
# more than the noise; the bucket is searched again and the best one wins.
upgrade
sqlite3 "$DB" "update winners set config = json_extract(runners_up, '\$[#-1].config'), median_us = 1.0 where bucket = 'n=2^6'"
retune env
expect_eq "retune of a changed ranking exits 0" "$RC" 0 || show_last
expect_stdout "^retune axpy f32 n=2\^6: 1.00 us -> the ranking changed beyond the noise margin; searching" \
    "the changed ranking is said, and the bucket searched"
expect_stdout "^retune: 2 stale buckets re-raced, 1 searched again" "one bucket searched again"
expect_eq "the search finds the first sweep's winner again" "$(sql "$DB" "$key")" "$before"

# A finalist now fails verification: escalate too.
upgrade
retune env FAKE_MODE=wrong_verify:1
expect_stdout "^retune axpy f32 n=2\^6: [0-9.]+ us -> a finalist failed; searching" "a failing finalist escalates"

# --all re-races fresh buckets too; usage errors.
retune env
expect_stdout "^retune: 0 stale" "all fresh again"
rm -f "$T/fake-state"*
run env AITUNE_WORKER="$FAKE" FAKE_STATE="$T/fake-state" "$AITUNE" retune "$T/two.yaml" --db "$DB" --quiet --all
expect_stdout "^retune: 2 stale buckets re-raced" "--all re-races every tuned bucket"
expect_exit 2 "retune without a spec" "$AITUNE" retune --db "$DB"
expect_exit 2 "retune with a bad --noise" "$AITUNE" retune "$T/two.yaml" --db "$DB" --noise lots
expect_exit 3 "retune of a missing registry" "$AITUNE" retune "$T/two.yaml" --db "$T/none.db"
expect_stderr "^aitune: error: no registry at" "one error line"
expect_exit 1 "retune without a GPU" "$AITUNE" retune "$T/two.yaml" --db "$DB" --quiet

# aitune check: each winner of this GPU re-timed against its record.
chk() {
    rm -f "$T/fake-state"*
    run env AITUNE_WORKER="$FAKE" FAKE_STATE="$T/fake-state" "$@" "$AITUNE" check "$T/two.yaml" --db "$DB" --quiet
}
wbefore=$(sql "$DB" "select bucket, config, median_us from winners order by 1")
chk env
expect_eq "check with every winner as fast as recorded exits 0" "$RC" 0 || show_last
expect_stdout "^ok +axpy f32 n=2\^6: [0-9.]+ us -> [0-9.]+ us \(\+0\.0%\)" "check prints recorded vs new time"
expect_stdout "^check: 2 winners checked: 2 ok, 0 regressed or failed" "check counts them"
expect_eq "check times each winner again in its finalists' race, as it was recorded" \
    "$(grep -c ' race ' "$T/fake-state.log")" 2
sqlite3 "$DB" "update winners set median_us = 5.0 where bucket = 'n=2^7'"
chk env
expect_eq "a winner slower than its record makes check exit 1" "$RC" 1
expect_stdout "^REGRESSED +axpy f32 n=2\^7: 5.00 us -> [0-9.]+ us \(\+[0-9.]+%, margin 3.0%\)" "the regression is flagged"
rm -f "$T/fake-state"*
run env AITUNE_WORKER="$FAKE" FAKE_STATE="$T/fake-state" "$AITUNE" check "$T/two.yaml" --db "$DB" --quiet --noise 300
expect_eq "within a wider --noise it is not" "$RC" 0
chk env FAKE_MODE=wrong_verify:1
expect_eq "a winner that fails verification makes check exit 1" "$RC" 1
expect_stdout "^FAILED +axpy f32 n=2\^6: .*wrong" "the failure is flagged"
expect_eq "check changes no winner" "$(sql "$DB" "select bucket, config, median_us from winners order by 1")" \
    "$(echo "$wbefore" | sed 's/^\(n=2^7|.*|\)[0-9.]*$/\15.0/')"
expect_exit 2 "check --all is refused" "$AITUNE" check "$T/two.yaml" --db "$DB" --all

done_testing
