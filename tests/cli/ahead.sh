#!/usr/bin/env bash
# tests/run: slow 31 (cold compiles, and sweeps that wait on a slow fake GPU)
# The compile pool keeps ahead of the GPU (issue 12): a search's next batch
# is asked for and compiling while the current one is timed. With the fake
# worker (slow_time: each candidate costs GPU time) and real NVRTC compiles
# on a cold cache, the sweep's trace (AITUNE_TRACE) shows batch N+1's
# compiles starting before batch N's last candidate is timed, and none with
# --ahead 0; the winners and measurements of a strategy that ignores results
# are those of --ahead 0; a model-guided one repeats itself for a seed and a
# depth; max_evals is exact; a budget or Ctrl-C leaves nothing asked ahead
# in the registry, and the resume completes.
. "$(dirname "$0")/lib.sh"

small_spec
seed_db "$T/seed.db" || { fail "seed the cubin cache"; exit 1; }

# traced MODE DB SPEC [args...]: a fake sweep with its trace in $T/trace.
traced() {
    local mode=$1 db=$2 sp=$3
    shift 3
    rm -f "$T/trace" "$T/fake-state" "$T/fake-state.log"
    run env AITUNE_TRACE="$T/trace" AITUNE_WORKER="$FAKE" FAKE_MODE="$mode" FAKE_STATE="$T/fake-state" \
        "$AITUNE" sweep "$sp" --db "$db" --quiet "$@"
}
# The value of key K in a trace line's fields.
field() { awk -v k="$1" '{ for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) print substr($i, length(k) + 2) }'; }
# Batches N (of the one search) whose next batch had a compile start before
# N's last candidate was timed.
overlapped() {
    awk '{ b = s = e = 0
           for (i = 1; i <= NF; i++) {
               if ($i ~ /^batch=/) b = substr($i, 7) + 0
               if ($i ~ /^start=/) s = substr($i, 7) + 0
               if ($i ~ /^end=/) e = substr($i, 5) + 0 }
           if ($3 == "timed" && (!(b in last) || e > last[b])) last[b] = e
           if ($3 == "compiled" && (!(b in first) || s < first[b])) first[b] = s }
         END { n = 0; for (b in last) if ((b + 1) in first && first[b + 1] < last[b]) n++; print n }' "$T/trace"
}
# Seconds since t0 (date +%s.%N).
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
# Batches that asked for something.
batches() { grep " ask " "$T/trace" | field n | grep -vc '^0$'; }

# ---- the overlap, on a cold cache (real compiles) ----
traced slow_time:150 "$T/cold.db" "$T/small.yaml" -j 2
expect_eq "a sweep with the look-ahead (default depth) exits 0" "$RC" 0 || show_last
n=$(overlapped)
[ "$n" -ge 1 ] && ok "batch N+1 compiled while batch N was being timed ($n of $(($(batches) - 1)) boundaries)" ||
    { fail "no compile of a next batch started before its batch's last timing"; sed 's/^/    trace: /' "$T/trace" | head -30; }
first_ask2=$(grep " ask search=1 batch=2 " "$T/trace" | awk '{ print $1 }')
last_timed1=$(grep " timed search=1 batch=1 " "$T/trace" | tail -1 | awk '{ print $1 }')
expect_eq "batch 2 is asked for before batch 1's last candidate is timed" \
    "$(awk -v a="$first_ask2" -v t="$last_timed1" 'BEGIN { print (a < t) }')" 1
win_on=$(sql "$T/cold.db" "select template || ' ' || config from winners")
meas="select template || ' ' || config || ' ' || status || ' ' || printf('%.4f', median_us) from measurements order by 1"
sql "$T/cold.db" "$meas" >"$T/on.meas"

traced slow_time:150 "$T/cold0.db" "$T/small.yaml" -j 2 --ahead 0
expect_eq "a sweep with --ahead 0 exits 0" "$RC" 0 || show_last
expect_eq "--ahead 0: no compile of a next batch starts before its batch is timed" "$(overlapped)" 0
expect_eq "the winner is the one --ahead 0 finds" "$win_on" "$(sql "$T/cold0.db" "select template || ' ' || config from winners")"
sql "$T/cold0.db" "$meas" >"$T/off.meas"
if cmp -s "$T/on.meas" "$T/off.meas"; then ok "and so is every measurement ($(wc -l <"$T/on.meas"))"
else fail "the measurements differ with the look-ahead"; diff "$T/on.meas" "$T/off.meas" | head -5; fi
expect_eq "each config is measured once" "$(sql "$T/cold.db" "select count(*) - count(distinct config_hash) from measurements")" 0

# ---- the wall time drops: slow compiles (slow_nvrtc.so: each takes 800 ms
# more without using a core, as on a host with a core per compile thread)
# on 16 threads, 100 ms of GPU per candidate ----
SLOW=${AITUNE_SLOW_NVRTC:-$ROOT/build/tests/slow_nvrtc.so}
if [ -f "$SLOW" ]; then
    for a in 0 32; do
        rm -f "$T/wall$a.db"
        t0=$(date +%s.%N)
        run env LD_PRELOAD="$SLOW" SLOW_NVRTC_MS=800 AITUNE_WORKER="$FAKE" FAKE_MODE=slow_time:100 \
            "$AITUNE" sweep "$T/small.yaml" --db "$T/wall$a.db" --quiet -j 16 --ahead "$a"
        expect_eq "a sweep with slow compiles, --ahead $a" "$RC" 0 || show_last
        wall[$a]=$(since "$t0")
    done
    awk -v a="${wall[0]}" -v b="${wall[32]}" 'BEGIN { exit !(b < 0.85 * a) }' &&
        ok "the look-ahead cuts the wall time: ${wall[0]} s with --ahead 0, ${wall[32]} s with --ahead 32" ||
        fail "the wall time did not drop: ${wall[0]} s with --ahead 0, ${wall[32]} s with --ahead 32"
    expect_eq "the same winner either way" "$(sql "$T/wall32.db" "select config from winners")" \
        "$(sql "$T/wall0.db" "select config from winners")"
else
    skip "the wall time with slow compiles: no $SLOW"
fi

# ---- the option ----
for bad in -1 x 5000; do
    run "$AITUNE" sweep "$T/small.yaml" --db "$T/bad.db" --ahead "$bad"
    [ "$RC" = 2 ] && grep -q "^aitune: error: --ahead '$bad' must be an integer in \[0, 4096\]" "$T/err" &&
        ok "--ahead $bad: exit 2, and says what it takes" || { fail "--ahead $bad: exit $RC"; show_last; }
done
expect_exit 2 "--ahead is for sweep, not compile" "$AITUNE" compile "$T/small.yaml" --db "$T/bad.db" --ahead 8
run "$AITUNE" help sweep
expect_stdout "--ahead N" "sweep --help documents --ahead"

# ---- a deep look-ahead: the whole space is asked before the default lands ----
cp "$T/seed.db" "$T/deep.db"
rm -f "$T/fake-state" "$T/fake-state.log"
run env AITUNE_TRACE="$T/trace" AITUNE_PROGRESS_INTERVAL=0 AITUNE_WORKER="$FAKE" "$AITUNE" sweep "$T/small.yaml" \
    --db "$T/deep.db" --ahead 64
expect_eq "a sweep with --ahead 64 exits 0" "$RC" 0 || show_last
expect_eq "the default, asked for while on its way, is measured once" \
    "$(sql "$T/deep.db" "select count(*) || ' ' || count(distinct config_hash) from measurements")" "38 38"
last=$(grep "^sweep: bucket" "$T/err" | tail -1 | sed 's/.*, \([0-9]*\/[0-9]*\) candidates.*/\1/')
expect_eq "the progress count ends at what was planned" "${last%/*}" "${last#*/}"
expect_eq "the winner is the same" "$(sql "$T/deep.db" "select template || ' ' || config from winners")" "$win_on"

# ---- a model-guided search: repeatable for a seed and a depth; max_evals exact ----
axpy_spec model.yaml 6 6 "search: model" "max_evals: 12"
for k in 1 2; do
    cp "$T/seed.db" "$T/model$k.db"
    traced ok "$T/model$k.db" "$T/model.yaml" --ahead 16
    expect_eq "model search, --ahead 16, run $k" "$RC" 0 || show_last
done
cfgs="select config from measurements order by id"
expect_eq "the same configs, in the same order, for the same seed and depth" \
    "$(sql "$T/model1.db" "$cfgs" | md5sum)" "$(sql "$T/model2.db" "$cfgs" | md5sum)"
asked=$(grep " ask " "$T/trace" | field n | awk '{ s += $1 } END { print s }')
expect_eq "the strategy is asked for max_evals configs in all" "$asked" 12
n=$(sql "$T/model2.db" "select count(*) from measurements")
[ "$n" -ge 12 ] && [ "$n" -le 13 ] && ok "max_evals 12 measures 12 and the default ($n)" || fail "max_evals 12 measured $n"
cp "$T/seed.db" "$T/model0.db"
traced ok "$T/model0.db" "$T/model.yaml" --ahead 0
expect_eq "model search, --ahead 0" "$RC" 0 || show_last
n=$(sql "$T/model0.db" "select count(*) from measurements")
[ "$n" -ge 12 ] && [ "$n" -le 13 ] && ok "--ahead 0 measures as many ($n)" || fail "--ahead 0 measured $n"

# ---- a joint search asks ahead across templates ----
joint_spec
traced ok "$T/joint.db" "$T/joint.yaml" --ahead 32 --keep-cubins
expect_eq "a joint sweep with --ahead 32 exits 0" "$RC" 0 || show_last
# (Its kernels from the first sweep's cache: the same configs, measured by
# the same fake GPU, and NVRTC not asked again.)
cubin_seed "$T/joint.db" "$T/joint0.db"
traced ok "$T/joint0.db" "$T/joint.yaml" --ahead 0
q="select template || ' ' || config || ' ' || printf('%.4f', median_us) from measurements where status != 'constraint' order by 1"
expect_eq "the joint search measures what it does with --ahead 0" "$(sql "$T/joint.db" "$q" | md5sum)" "$(sql "$T/joint0.db" "$q" | md5sum)"
expect_eq "each config once" "$(sql "$T/joint.db" "select count(*) - count(distinct template || config) from measurements")" 0

# ---- --budget: what was asked ahead and not timed is not recorded ----
axpy_spec bigger.yaml 6 8
cp "$T/seed.db" "$T/budget.db"
traced slow_time:100 "$T/budget.db" "$T/bigger.yaml" --budget 3s --ahead 32
expect_eq "a sweep over budget exits 0" "$RC" 0 || show_last
expect_stderr "budget ran out" "the budget ran out"
n=$(sql "$T/budget.db" "select count(*) from measurements")
timed=$(grep -c " timed " "$T/trace")
asked=$(grep " ask " "$T/trace" | field n | awk '{ s += $1 } END { print s }')
[ "$asked" -gt "$n" ] && ok "more was asked ($asked) than measured ($n)" || fail "asked $asked, measured $n"
expect_eq "every measurement was timed (no cancelled compile recorded)" "$n" "$timed"
expect_eq "no measurement says cancelled" "$(sql "$T/budget.db" "select count(*) from measurements where error like '%cancelled%'")" 0
expect_stderr "sweep: $n candidates evaluated" "the summary counts what was measured"

# ---- Ctrl-C with compiles queued (cold cache, deep look-ahead) ----
# A joint softmax search asks for all its 40 configs at once: with one
# compile thread most of them are still queued when Ctrl-C comes, and are
# dropped (waiting for them would take over 10 s).
sed 's/^max_evals: 9/max_evals: 40/' "$T/joint.yaml" >"$T/joint40.yaml"
rm -f "$T/int.db" "$T/trace"
start_bg env AITUNE_TRACE="$T/trace" AITUNE_WORKER="$FAKE" FAKE_MODE=slow_time:100 \
    "$AITUNE" sweep "$T/joint40.yaml" --db "$T/int.db" --quiet --ahead 128 -j 1
wait_for "$T/int.db" "select count(*) from measurements where status != 'constraint'" 3
t0=$(date +%s.%N)
kill -INT "$BG"
wait "$BG"
code=$?
took=$(since "$t0")
expect_eq "SIGINT with compiles queued exits 130" "$code" 130
queued=$(grep " stop " "$T/trace" | field on_their_way)
[ "${queued:-0}" -ge 20 ] && ok "$queued candidates were on their way" || fail "on their way at SIGINT: ${queued:-none}"
# Dropped, not compiled: the cache holds the kernels measured, the three
# templates' defaults and the few compiled but not yet timed (one compile
# thread), not the 20 or more of the queue.
# And the exit comes well before the queue could have been compiled (over
# 10 s of one thread even on an idle machine; this file runs beside others).
kept=$(sql "$T/int.db" "select count(*) from cubins")
timed=$(sql "$T/int.db" "select count(*) from measurements where status != 'constraint'")
[ "$kept" -le $((timed + 8)) ] && ok "the queued compiles are dropped: $kept kernels cached for $timed measured" ||
    fail "$kept kernels cached for $timed measured: the queue was compiled"
awk -v t="$took" 'BEGIN { exit !(t <= 8) }' && ok "it exits soon: queued compiles are not waited for ($took s)" ||
    fail "SIGINT took $took s to exit"
expect_eq "the registry is intact" "$(sql "$T/int.db" "PRAGMA integrity_check")" ok
expect_eq "no measurement says cancelled" "$(sql "$T/int.db" "select count(*) from measurements where error like '%cancelled%'")" 0
expect_eq "the run is recorded as interrupted" "$(sql "$T/int.db" "select outcome from runs order by id desc limit 1")" interrupted
n_int=$(sql "$T/int.db" "select count(*) from measurements where status != 'constraint'")
# The resume may take the kernels the joint sweep above compiled (the same
# seed's first configs, the defaults) from its cache instead of NVRTC.
sqlite3 "$T/int.db" "attach '$T/joint.db' as j; insert into cubins select * from j.cubins where hash not in (select hash from main.cubins)"
fake_sweep ok "$T/int.db" "$T/joint40.yaml"
expect_eq "the resume completes" "$RC" 0 || show_last
expect_stderr "\(([0-9]+) already in the registry\)" "it takes what was measured from the registry"
expect_eq "one winner" "$(sql "$T/int.db" "select count(*) from winners")" 1
expect_eq "nothing measured twice" \
    "$(sql "$T/int.db" "select count(*) from (select template, config_hash from measurements group by 1, 2 having count(*) > 1)")" 0
n=$(sql "$T/int.db" "select count(*) from measurements where status != 'constraint'")
[ "$n" -ge 40 ] && [ "$n" -le 43 ] && ok "40 searched and the defaults, in all ($n_int before Ctrl-C, $n after)" || fail "measured $n"

# ---- two GPUs sharing one pool on a cold cache: one kernel, one compile ----
axpy_spec two.yaml 6 7 "max_evals: 10"
rm -f "$T/fake-state" "$T/fake-state.log"
run env AITUNE_WORKER="$FAKE" FAKE_GPUS=2 FAKE_MODE=slow_time:50 "$AITUNE" sweep "$T/two.yaml" --db "$T/gpus.db" --quiet -j 2 --keep-cubins
expect_eq "a cold sweep on two fake GPUs exits 0" "$RC" 0 || show_last
compiled=$(sed -n 's/.*; \([0-9]*\) compiled, .*/\1/p' "$T/err")
kernels=$(sql "$T/gpus.db" "select count(*) from cubins")
# Both lanes want the same kernels at once (axpy's do not depend on n):
# without the pool's dedup each would compile all of them.
[ -n "$compiled" ] && [ "$compiled" -lt $((kernels + kernels / 2)) ] &&
    ok "the lanes compile a kernel they both want once, mostly ($compiled compiles, $kernels kernels)" ||
    fail "$compiled compiles for $kernels kernels"
expect_eq "every ok measurement's kernel is in the cache" \
    "$(sql "$T/gpus.db" "select count(*) from measurements m left join cubins c on c.hash = m.cubin where m.status = 'ok' and c.hash is null")" 0
expect_eq "two winners" "$(sql "$T/gpus.db" "select count(*) from winners")" 2

# ---- replay: strategies scored as a sweep with a look-ahead asks them ----
L=$ROOT/tests/sim/landscapes/memory-softmax.tsv
run "$AITUNE" replay "$L" --strategy model --seeds 2 --budget 0.2 --tsv
base=$(md5sum <"$T/out")
run "$AITUNE" replay "$L" --strategy model --seeds 2 --budget 0.2 --tsv --ahead 0
expect_eq "replay --ahead 0 is replay as before" "$(md5sum <"$T/out")" "$base"
run "$AITUNE" replay "$L" --strategy model,random --seeds 2 --budget 0.2 --ahead 16 --trace
expect_eq "replay --ahead 16 exits 0" "$RC" 0 || show_last
evals() { awk -F'\t' -v s="$1" '$1 == "trace" && $2 == s && $3 == 1' "$T/out" | wc -l; }
expect_eq "and evaluates each landscape's budget (model as many as random, seed 1)" "$(evals model)" "$(evals random)"

done_testing
