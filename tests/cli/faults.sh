#!/usr/bin/env bash
# A candidate that crashes, hangs, faults, loses the context or answers
# wrong is data: the sweep records it, restarts the worker and goes on.
# A worker that lies about times must not produce a winner.
. "$(dirname "$0")/lib.sh"

small_spec
export FAKE_HANG_S=5     # a leaked hung fake ends itself

DB=$T/faults.db
seed_db "$DB" || { fail "seed the cubin cache"; exit 1; }
MODE="crash_verify:3,hang_verify:6,wrong_verify:9,segv_verify:12,sticky_verify:15"
start=$(date +%s)
fake_sweep "$MODE" "$DB" "$T/small.yaml" --timeout 1s
took=$(( $(date +%s) - start ))
expect_eq "a sweep with crashes, a hang, a segfault and a lost context exits 0" "$RC" 0 || show_last 20
[ "$took" -lt 30 ] && ok "the hang cost about the --timeout ($took s)" || fail "the sweep took $took s"
expect_eq "the winner is still stored" "$(sql "$DB" "select count(*) from winners")" 1
count() { sql "$DB" "select count(*) from measurements where status = '$1'"; }
expect_eq "3 runtime rows (crash, segfault, lost context)" "$(count runtime)" 3
expect_eq "1 timeout row (the hang)" "$(count timeout)" 1
expect_eq "1 wrong row" "$(count wrong)" 1
n_ok=$(count ok)
[ "$n_ok" -ge 30 ] && ok "the other candidates are ok ($n_ok)" || fail "ok rows: $n_ok"
expect_eq "failed rows carry an error text" \
    "$(sql "$DB" "select count(*) from measurements where status != 'ok' and (error is null or error = '')")" 0
expect_eq "failed rows carry no time" \
    "$(sql "$DB" "select count(*) from measurements where status != 'ok' and median_us is not null")" 0
sql "$DB" "select error from measurements where status = 'timeout'" | grep -q "no answer within 1 s" &&
    ok "the timeout row says no answer within 1 s" || fail "the timeout row's error: $(sql "$DB" "select error from measurements where status = 'timeout'")"
sql "$DB" "select error from measurements where status = 'runtime'" | grep -q "exited with code 1" &&
    ok "the crash row says how the worker ended" || fail "the crash row's error"
sql "$DB" "select error from measurements where status = 'runtime'" | grep -q "ILLEGAL_ADDRESS" &&
    ok "the lost-context row keeps the worker's error" || fail "the lost-context row's error"
sql "$DB" "select error from measurements where status = 'wrong'" | grep -q "differ" &&
    ok "the wrong row keeps the worker's message" || fail "the wrong row's error"
expect_stderr "sweep: [0-9]+ candidates evaluated, [0-9]+ ok, 3 runtime, 1 timeout, 1 wrong" "the summary counts each status"
expect_stderr "worker: 4 restarts \(2 crashes, 1 hung kernels killed, 1 lost contexts\)" "the summary mentions the worker restarts"
# Which candidates failed is the verify order: none of them is the winner.
expect_eq "the winner is an ok candidate" \
    "$(sql "$DB" "select count(*) from winners w join measurements m on m.config = w.config and m.status = 'ok'")" 1

# A hung kernel's worker must not outlive the deadline (it is in its own
# process group; AITUNE_WORKER runs through /bin/sh).
if [ -f "$T/fake-state.pid" ]; then
    # the 6th verify went to the hung process: its pid is in the fake's log
    hung=$(awk '$2 == "verify" { n++; if (n == 6) print $1 }' "$T/fake-state.log")
    if [ -n "$hung" ] && kill -0 "$hung" 2>/dev/null && [ "$(awk '{print $3}' /proc/"$hung"/stat 2>/dev/null)" != Z ]; then
        fail "the hung worker (pid $hung) is still running after the sweep"
        kill -9 "$hung" 2>/dev/null
    else
        ok "the hung worker is gone after the sweep"
    fi
fi

# The run that saw failures is resumable: a rerun repeats nothing (its
# bucket decided again, as after a cut: src/sweep_resume.h).
undecide "$DB"
fake_sweep ok "$DB" "$T/small.yaml" --timeout 1s
expect_eq "rerun exits 0" "$RC" 0
expect_stderr "already in the registry" "the rerun takes every result from the registry"
expect_eq "failed candidates are not measured again" "$(count runtime) $(count timeout) $(count wrong)" "3 1 1"

# A worker that lies about times: garbage or missing timing keys are not
# an ok measurement of 0 us, and never a winner.
DB2=$T/lie.db
seed_db "$DB2"
fake_sweep lie "$DB2" "$T/small.yaml"
expect_eq "a sweep with a lying worker still exits 0" "$RC" 0
expect_eq "no ok measurement without a positive time" \
    "$(sql "$DB2" "select count(*) from measurements where status = 'ok' and (median_us is null or median_us <= 0)")" 0
expect_eq "no winner without a positive time" "$(sql "$DB2" "select count(*) from winners where not (median_us > 0)")" 0
run "$AITUNE" show --db "$DB2" --json
expect_true "show --json stays valid JSON" python3 -c 'import json,sys; json.load(sys.stdin)' <"$T/out"

# The template default is measured first; when the strategy asks for it
# again later, it is not measured (or counted as resumed) a second time,
# whether its first measurement was ok or not. Seed 22 puts the default at
# the start of the random strategy's second batch.
spec r22.yaml <<'SPEC'
name: r22
seed: 22
search: random
max_evals: 12
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {log2: [6, 6]}
SPEC
for mode in ok wrong_verify:1; do
    DB3=$T/r22-${mode%%:*}.db
    seed_db "$DB3"
    fake_sweep "$mode" "$DB3" "$T/r22.yaml"
    expect_eq "random sweep (default $mode) exits 0" "$RC" 0
    if grep -q "already in the registry" "$T/err"; then
        fail "default $mode: a fresh sweep reports nothing as already in the registry"; show_last
    else
        ok "default $mode: a fresh sweep reports nothing as already in the registry"
    fi
    expect_eq "default $mode: each config measured once" \
        "$(sql "$DB3" "select count(*) = count(distinct config_hash) from measurements")" 1
    expect_eq "default $mode: the default measured once" \
        "$(sql "$DB3" "select count(*) from measurements where config = '{\"block\":256,\"grid_stride\":0,\"ilp\":1,\"vec\":1}'")" 1
done

# A template whose default() leaves out a param: the sweep says which, in
# one line, instead of storing a default that fails only when an
# application's lookup falls back to it; the search goes on.
mkdir -p "$T/nodef"
cp -r "$ROOT/templates" "$ROOT/search" "$T/nodef/"
sed -i 's/return { block = 256, vec = 1, ilp = 1, grid_stride = 0 }/return { block = 256, vec = 1, ilp = 1 }/' \
    "$T/nodef/templates/lib/elementwise.lua"
expect_true "the copy's axpy default lacks grid_stride" grep -q 'return { block = 256, vec = 1, ilp = 1 }' \
    "$T/nodef/templates/lib/elementwise.lua"
DB4=$T/nodef.db
AITUNE_HOME=$T/nodef fake_sweep ok "$DB4" "$T/r22.yaml"
expect_eq "a sweep past a broken default exits 0" "$RC" 0
expect_stderr "template 'axpy/vec' default\\(\\): the config has no 'grid_stride'" "the broken default is named, with the param"
expect_eq "no default is stored for it" "$(sql "$DB4" "select count(*) from defaults where op = 'axpy'")" 0
expect_true "the search still measured configs" test "$(sql "$DB4" "select count(*) from measurements")" -ge 1

done_testing
