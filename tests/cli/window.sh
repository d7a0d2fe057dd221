#!/usr/bin/env bash
# tests/run: slow 7 (windows that wait on a slow fake GPU until their budget)
# aitune window (issue 11) and sweep --from-misses with the fake worker: the
# order of the work (stale, then misses by calls, then untuned, then cut-short
# searches), the stop at the budget and the resume in the next window.
. "$(dirname "$0")/lib.sh"

spec four.yaml <<'EOF2'
name: four
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {log2: [6, 9]}
EOF2
DB=$T/w.db
seed_db "$DB" axpy || { fail "seed the cubin cache"; exit 1; }
cp "$DB" "$T/seed.db"
# --keep-cubins: the windows below take the losers' kernels from the cache
# instead of compiling them again (what they check is the order of the work).
fake_sweep ok "$DB" "$T/four.yaml" --shard 0/2 --keep-cubins
expect_eq "a first sweep of half the buckets" "$RC" 0 || show_last
# n=2^6 stale (its winner's device row has another NVRTC), n=2^8 cut short,
# n=2^9 asked for 50 times (n=600), n=2^7 untuned.
sqlite3 "$DB" "insert into devices (name, uuid, cc, sms, mem_bytes, l2_bytes, smem_optin, driver, cuda_driver, nvrtc)
                 select name, uuid, cc, sms, mem_bytes, l2_bytes, smem_optin, driver, cuda_driver, '12.4' from devices;
               update winners set device = (select id from devices where nvrtc = '12.4') where bucket = 'n=2^6';
               update winners set exhaustive = 0 where bucket = 'n=2^8'; delete from decided where bucket = 'n=2^8';
               insert into misses values ('axpy', 'sm_90', 'f32', '{\"n\":600}', 50), ('axpy', 'sm_90', 'f32', '{\"n\":70000}', 3)"

win() { rm -f "$T/fake-state"*; run env AITUNE_WORKER="$FAKE" FAKE_STATE="$T/fake-state" "$@"; }
win "$AITUNE" window "$T/four.yaml" --db "$DB" --budget 10m --plan
expect_eq "window --plan exits 0" "$RC" 0 || show_last
expect_eq "the plan: stale, misses, untuned, cut short" \
    "$(grep -E '^ +[0-9]+ ' "$T/out" | awk '{print $2 "/" $5}' | tr '\n' ' ')" \
    "stale/n=2^6 misses/n=2^9 untuned/n=2^7 sampled/n=2^8 "
expect_stdout "misses +axpy +f32 +n=2\^9 .*50 calls missed" "the misses' bucket carries its calls"
n0=$(sql "$DB" "select count(*) from measurements")
expect_eq "--plan measures and records nothing" "$(sql "$DB" "select count(*) from measurements")" "$n0"
expect_eq "--plan records no run" "$(sql "$DB" "select count(*) from runs")" 1

# A window too short for everything stops at the budget, cleanly.
win env FAKE_MODE=slow_time:300 "$AITUNE" window "$T/four.yaml" --db "$DB" --budget 3s --quiet
expect_eq "a short window exits 0" "$RC" 0 || show_last
expect_stdout "^retune axpy f32 n=2\^6: .*winner kept" "the stale bucket comes first"
expect_stdout "^window: [0-3] of 4 done in [0-9]+ s; the rest waits for the next window" "it stops at the budget"
# The next window goes on.
win "$AITUNE" window "$T/four.yaml" --db "$DB" --budget 10m --quiet
expect_eq "the next window exits 0" "$RC" 0 || show_last
expect_stdout "^window: ([0-9]) of \1 done" "it finishes what was left"
expect_eq "every bucket has a complete winner" "$(sql "$DB" "select count(*) || ' ' || sum(exhaustive) from winners")" "4 4"
win "$AITUNE" window "$T/four.yaml" --db "$DB" --budget 10m --plan
expect_stdout "^window: 0 buckets to work on" "then there is nothing left to do"
win "$AITUNE" status --db "$DB"
expect_eq "and status is fresh" "$RC" 0 || show_last

# sweep --from-misses: only the buckets holding misses (n=600: n=2^9); a
# miss outside every bucket of the spec (n=70000) makes no task.
M=$T/m.db
cp "$T/seed.db" "$M"
sqlite3 "$M" "insert into misses values ('axpy', 'sm_90', 'f32', '{\"n\":600}', 50), ('axpy', 'sm_90', 'f32', '{\"n\":70000}', 3)"
fake_sweep ok "$M" "$T/four.yaml" --from-misses
expect_eq "sweep --from-misses exits 0" "$RC" 0 || show_last
expect_eq "it tunes the misses' bucket only" "$(sql "$M" "select group_concat(bucket) from winners")" "n=2^9"
cp "$T/seed.db" "$T/none.db"
fake_sweep ok "$T/none.db" "$T/four.yaml" --from-misses
expect_eq "--from-misses with no misses recorded is bad input" "$RC" 3
expect_stderr "^aitune: error: no misses recorded" "and says so"

# One window's buckets of one op share kernels: each item's sweep keeps the
# losers' kernels, so the next bucket takes them from the cache, and the
# window drops them at its end, leaving what two sweeps would.
spec two.yaml <<'EOF2'
name: two
max_evals: 6
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {log2: [6, 7]}
EOF2
W=$T/two.db
cp "$T/seed.db" "$W"
sqlite3 "$W" "delete from cubins"
win "$AITUNE" window "$T/two.yaml" --db "$W" --budget 10m
expect_eq "a window of two untuned buckets exits 0" "$RC" 0 || show_last
expect_eq "the first bucket compiles, the second takes its kernels from the cache" \
    "$(grep -oE "[0-9]+ compiled" "$T/err" | awk '{print ($1 > 0)}' | tr '\n' ' ')" "1 0 "
expect_stdout "^window: dropped [1-9][0-9]* cubins of candidates that lost" "the losers' kernels go at the end"
cp "$T/seed.db" "$T/two-sweep.db"
sqlite3 "$T/two-sweep.db" "delete from cubins"
fake_sweep ok "$T/two-sweep.db" "$T/two.yaml"
expect_eq "and the window keeps the kernels one sweep of both buckets keeps" \
    "$(sql "$W" "select count(*) from cubins")" "$(sql "$T/two-sweep.db" "select count(*) from cubins")"

expect_exit 2 "window without --budget" "$AITUNE" window "$T/four.yaml" --db "$DB"
expect_exit 2 "window with a bad --budget" "$AITUNE" window "$T/four.yaml" --db "$DB" --budget soon
expect_exit 3 "window of a missing registry" "$AITUNE" window "$T/four.yaml" --db "$T/nope.db" --budget 1m
expect_exit 1 "window without a GPU" "$AITUNE" window "$T/four.yaml" --db "$DB" --budget 1m

done_testing
