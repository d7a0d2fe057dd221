#!/usr/bin/env bash
# A range sweep cut by SIGTERM mid-split resumes where it stopped (issue 33,
# src/sweep_resume.h): the buckets it decided are left as they are (no task,
# probe, race, split or vendor timing for them), the bucket it was cut in is
# decided again from its start (its measurements taken from the registry),
# the rest decided; the registry ends as an uninterrupted sweep's (winners,
# parts, the vendor's parts, measurements). Run again, a finished sweep does
# nothing and says so in one line. A bucket whose winner rows changed since,
# and a registry from before the record (schema 7), are decided again. The
# fake worker plays the GPU: rankings flip at m = 12 and the vendor wins
# from m = 14, so the range bucket [8, 16) of the odd class splits in parts,
# some of them the vendor's.
. "$(dirname "$0")/lib.sh"

spec g.yaml <<'EOF'
name: g
search: random
max_evals: 3
top_k: 3
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [gemv]
    shapes: {m: {range: [1, 16]}, n: {values: [256]}, k: {values: [256]}}
EOF
MODE=flip_at:12,flip_dim:0
export FAKE_VENDOR_US=50,5@14
WINNERS="select bucket, lo, hi, shape, template, config from winners order by bucket"
# The m of each time request the worker had (the task's), and those sizes once each.
times_m() { sed -n 's/.* time gpu=0 task=\([0-9]*\),.*/\1/p' "$T/fake-state.log"; }
sizes_m() { times_m | sort -n | uniq | tr '\n' ' '; }

# ---- the sweep uninterrupted: what the resumed one must end as ----
fake_sweep "$MODE" "$T/ref.db" "$T/g.yaml" --keep-cubins
expect_eq "the uninterrupted range sweep exits 0" "$RC" 0 || show_last
expect_true "it splits the odd class's [8, 16) in parts, some the vendor's" \
    test "$(sql "$T/ref.db" "select count(*) from winners where bucket like 'm=2^3:align1,%/%' and template = 'vendor/cublaslt'")" -ge 1
expect_eq "it records its 8 buckets decided" "$(sql "$T/ref.db" "select count(*) || ' ' || sum(winners) from decided")" \
    "8 $(sql "$T/ref.db" "select count(*) from winners")"
ref_winners=$(sql "$T/ref.db" "$WINNERS")
ref_late=$(times_m | awk '$1 >= 9' | wc -l)

# ---- cut by SIGTERM while the split bucket's parts are raced ----
DB=$T/cut.db
cubin_seed "$T/ref.db" "$DB"    # the same kernels, compiled once
bg_fake_sweep "$MODE,slow_time:25" "$DB" "$T/g.yaml"
for i in $(seq 1 300); do grep -q " time gpu=0 task=9,256,320/" "$T/fake-state.log" 2>/dev/null && break; sleep 0.05; done
kill -TERM "$BG"
wait "$BG"
expect_eq "SIGTERM mid-split exits 130" "$?" 130 || sed 's/^/    err: /' "$T/bg.err" | tail -n 5
expect_eq "the 6 buckets before it are recorded decided, the one cut is not" \
    "$(sql "$DB" "select count(*) from decided where bucket like 'm=2^3:align1%' or bucket like 'm=2^4%'") $(sql "$DB" "select count(*) from decided")" "0 6"
expect_eq "the bucket cut has no winner" "$(sql "$DB" "select count(*) from winners where bucket like 'm=2^3:align1%'")" 0
if grep -q "split in" "$T/bg.err"; then fail "the cut run's summary counts the split it stored nothing of"; grep "^hold:" "$T/bg.err"
else ok "its summary counts no split of the bucket cut (it stored none)"; fi
measured=$(sql "$DB" "select count(*) from measurements")
mapfile -t kept < <(sql "$DB" "select bucket from decided order by bucket")

# ---- the resume ----
fake_sweep "$MODE" "$DB" "$T/g.yaml"
expect_eq "the resume exits 0" "$RC" 0 || show_last
expect_stdout "^resume: 6 of 8 buckets decided by earlier runs \(6 winners\) left as they were; 2 to decide$" \
    "it says what it leaves and what it decides"
expect_eq "the worker times only at the sizes of the two buckets left (m 9..15 and 16)" "$(sizes_m)" "9 11 13 15 16 "
bad=""
for k in "${kept[@]}"; do grep -qF -- "$k" "$T/out" && bad="$bad $k"; done
expect_eq "no line about a bucket decided before (no hold, split or winner)" "$bad" ""
late=$(times_m | wc -l)
[ "$(times_m | awk '$1 < 9' | wc -l)" = 0 ] && [ "$late" -gt 0 ] && [ "$late" -le "$ref_late" ] &&
    ok "it times only in the two buckets left: $late requests, the uninterrupted sweep $ref_late there" ||
    fail "time requests of the resume: $late ($(sizes_m)), the uninterrupted sweep's there: $ref_late"
expect_stderr "^resume: 6 buckets decided by earlier runs left as they were \(6 winners\), 2 decided now$" \
    "the summary counts the buckets decided before and now"
expect_stderr "^sweep: [0-9]+ candidates evaluated \(([1-9][0-9]*) already in the registry\)" \
    "the bucket cut takes what it measured from the registry"
expect_eq "the winners, parts and the vendor's parts are the uninterrupted sweep's" "$(sql "$DB" "$WINNERS")" "$ref_winners"
expect_eq "and so are the measurements: none lost, none taken twice" \
    "$(sql "$DB" "select count(*) || ' ' || count(distinct bucket || config_hash || shape) from measurements")" \
    "$(sql "$T/ref.db" "select count(*) || ' ' || count(*) from measurements")"
[ "$(sql "$DB" "select count(*) from measurements")" -ge "$measured" ] && ok "the cut run's $measured measurements are kept" ||
    fail "measurements lost"
expect_eq "the vendor's times too" "$(sql "$DB" "select count(*) from vendor_times")" "$(sql "$T/ref.db" "select count(*) from vendor_times")"
expect_eq "all 8 buckets are recorded decided" "$(sql "$DB" "select count(*) from decided")" 8

# ---- run again: nothing to do ----
fake_sweep "$MODE" "$DB" "$T/g.yaml"
expect_eq "a finished sweep run again exits 0" "$RC" 0 || show_last
expect_eq "it says so in one line" "$(cat "$T/err")" \
    "sweep: nothing to do: all 8 buckets are decided in the registry already ($(sql "$DB" "select count(*) from winners") winners); 0 candidates evaluated"
expect_eq "and prints nothing else" "$(wc -c <"$T/out")" 0
expect_eq "the worker only says hello: no task, load, race or time" "$(awk '{print $2}' "$T/fake-state.log" | tr '\n' ' ')" "hello quit "
expect_eq "no run is recorded" "$(sql "$DB" "select count(*) from runs")" 2
expect_eq "the winners stay" "$(sql "$DB" "$WINNERS")" "$ref_winners"

# ---- buckets whose winner rows changed since are decided again: one
# deleted, one written by another run (a retune, a merge) ----
sql "$DB" "delete from winners where bucket = 'm=2^2,n=2^8,k=2^8';
           update winners set run = 99 where bucket = 'm=2^1:align1,n=2^8,k=2^8'" >/dev/null
fake_sweep "$MODE" "$DB" "$T/g.yaml"
expect_eq "a sweep after winners changed exits 0" "$RC" 0 || show_last
expect_stdout "^resume: 6 of 8 buckets .* left as they were; 2 to decide$" "it decides those two buckets alone"
expect_eq "timing at their sizes only" "$(sizes_m)" "3 4 "
expect_stderr "^vendor: cuBLASLt timed at 0 shapes \(2 already in the registry\)" "the vendor's times there taken from the registry"
expect_stderr "^sweep: 0 candidates evaluated \([0-9]+ already in the registry\)" "measuring nothing again"
expect_eq "the winners are the uninterrupted sweep's again" "$(sql "$DB" "$WINNERS")" "$ref_winners"

# ---- a registry from before the record (schema 7): decided again, once ----
sql "$DB" "drop table decided; update meta set value = '7' where key = 'schema_version'" >/dev/null
fake_sweep "$MODE" "$DB" "$T/g.yaml"
expect_eq "a schema-7 registry: the sweep exits 0" "$RC" 0 || show_last
expect_eq "it is migrated to schema 8" "$(sql "$DB" "select value from meta where key = 'schema_version'")" 8
expect_stderr "^sweep: 0 candidates evaluated \([0-9]+ already in the registry\)" "every bucket decided again from the registry"
expect_eq "and recorded" "$(sql "$DB" "select count(*) from decided")" 8
fake_sweep "$MODE" "$DB" "$T/g.yaml"
expect_stderr "^sweep: nothing to do: all 8 buckets" "then nothing is left to do"

# ---- another basis (--max-evals given): every bucket decided again ----
fake_sweep "$MODE" "$DB" "$T/g.yaml" --max-evals 3
expect_eq "with --max-evals 3 the sweep exits 0" "$RC" 0 || show_last
expect_stderr "^sweep: 0 candidates evaluated \([0-9]+ already in the registry\)" \
    "another basis: every bucket decided again, from the registry"
expect_eq "with the same winners" "$(sql "$DB" "$WINNERS")" "$ref_winners"

done_testing
