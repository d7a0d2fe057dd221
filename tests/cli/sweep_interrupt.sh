#!/usr/bin/env bash
# tests/run: alone (it times how soon a sweep obeys Ctrl-C)
# Ctrl-C while a sweep waits for NVRTC: the first SIGINT gives the compiles
# in flight up at once (their helpers killed), wherever the sweep waits for
# one: a candidate's, the op's reference kernel's, the engine's own. The
# sweep exits 130 within a second with its interrupted summary, keeps what
# it measured, records nothing for the compiles it gave up, leaves no helper
# behind and a registry that resumes. AITUNE_NVRTC_HANG=TEXT (jit.h) makes a
# helper never answer on a source that contains TEXT: a compile as slow as
# one can be.
. "$(dirname "$0")/lib.sh"

# A template of four candidates; block 128 carries this run's marker (lib.sh).
marked_home interrupt
SPEC=$T/home/four.yaml
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
LIMIT=1     # seconds from SIGINT to the exit

# Helpers (aitune __nvrtc) of this run that are running.
helpers() {
    local d n=0
    for d in /proc/[0-9]*; do
        grep -qs "$MARK" "$d/environ" && tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -q -- "__nvrtc" && n=$((n + 1))
    done
    echo "$n"
}

# What the sweep of each phase has done when it waits for the compile
# that hangs: a helper runs, and (candidate) the two ahead of it in the
# queue are timed, or (reference) the engine's kernel is in the cache.
ready() {
    local db=$1 what=$2
    [ "$(helpers)" -ge 1 ] || return 1
    case $what in
        candidate) [ "$(grep -c ' timed ' "$T/trace" 2>/dev/null)" -ge 2 ] ;;
        "two GPUs") [ "$(grep -c ' timed ' "$T/trace" 2>/dev/null)" -ge 4 ] ;;
        reference) [ "$(sqlite3 "$db" "select count(*) from cubins" 2>/dev/null)" -ge 1 ] 2>/dev/null ;;
        *) true ;;
    esac
}

# interrupt DB HANG WHAT [ENV...]: a sweep of $SPEC in the background
# (with ENV) whose compiles of sources containing HANG never end; once it
# waits for one (ready), SIGINT, and the checks every phase shares. Leaves
# the time it took in $took.
interrupt() {
    local db=$1 hang=$2 what=$3 i
    shift 3
    rm -f "$T/trace" "$T/fake-state" "$T/fake-state.log"
    start_bg env AITUNE_HOME="$T/home" AITUNE_NVRTC_HANG="$hang" MARK_ENV="$MARK" AITUNE_TRACE="$T/trace" \
        AITUNE_WORKER="$FAKE" FAKE_MODE=ok FAKE_STATE="$T/fake-state" "$@" "$AITUNE" sweep "$SPEC" --db "$db" -j2
    for i in $(seq 1 300); do
        ready "$db" "$what" && break
        sleep 0.1
    done
    ready "$db" "$what" || fail "$what: the sweep never came to wait for the compile that hangs"
    sleep 0.5   # well into the compile that hangs
    local t0
    t0=$(date +%s.%N)
    kill -INT "$BG"
    # Not for ever: a sweep that waits for the hung compile is killed after 20 s.
    for i in $(seq 1 1000); do kill -0 "$BG" 2>/dev/null || break; sleep 0.02; done
    took=$(since "$t0")
    kill -0 "$BG" 2>/dev/null && kill -KILL "$BG"
    wait "$BG"
    local code=$?
    expect_eq "SIGINT while $what's compile hangs: exit 130" "$code" 130 || sed 's/^/    err: /' "$T/bg.err" | tail -n 8
    awk -v t="$took" -v l="$LIMIT" 'BEGIN { exit !(t <= l) }' &&
        ok "SIGINT while $what's compile hangs: it exits within $LIMIT s ($took s)" ||
        fail "SIGINT while $what's compile hangs: it took $took s to exit (limit $LIMIT s)"
    grep -q "aitune: interrupted; what was measured is kept: run the same command again to resume" "$T/bg.err" &&
        ok "$what: stderr says it was interrupted and how to resume" ||
        { fail "$what: no interrupted line"; sed 's/^/    err: /' "$T/bg.err" | tail -n 8; }
    if grep -E "error|does not compile|cancelled" "$T/bg.err" >/dev/null; then
        fail "$what: the given-up compile is reported as a failure"
        grep -E "error|does not compile|cancelled" "$T/bg.err" | sed 's/^/    err: /' | head -n 3
    else
        ok "$what: no error line for the compile given up"
    fi
    expect_eq "$what: the registry is intact" "$(sql "$db" "PRAGMA integrity_check")" ok
    expect_eq "$what: the run is recorded as interrupted" "$(sql "$db" "select outcome from runs order by id desc limit 1")" \
        interrupted
    expect_eq "$what: no measurement says cancelled" \
        "$(sql "$db" "select count(*) from measurements where error like '%cancel%' or status = 'compile'")" 0
    for i in $(seq 1 20); do [ "$(leftovers)" = 0 ] && break; sleep 0.1; done
    expect_eq "$what: no helper is left behind" "$(leftovers)" 0
}

# ---- a candidate's compile (the search's look-ahead) ----
# The queue: the default (64), then 32, 128 (hangs) and 256. 64 and 32 are
# measured; 128 is the candidate the sweep waits for.
interrupt "$T/c.db" "$MARK" candidate
expect_eq "what was measured before SIGINT is kept (the default and 32)" \
    "$(sql "$T/c.db" "select group_concat(config, ' ') from (select config from measurements order by config)")" \
    '{"block":32} {"block":64}'
grep -q "^sweep: 2 candidates evaluated" "$T/bg.err" && ok "the interrupted summary counts the two measured" ||
    { fail "the interrupted summary"; grep "^sweep:" "$T/bg.err" | sed 's/^/    err: /'; }
expect_eq "no winner is decided by an interrupted search" "$(sql "$T/c.db" "select count(*) from winners")" 0
# The resume, NVRTC well again: the two measured are taken from the
# registry, the two others measured, a winner stored.
run env AITUNE_HOME="$T/home" AITUNE_WORKER="$FAKE" FAKE_MODE=ok "$AITUNE" sweep "$SPEC" --db "$T/c.db" --quiet
expect_eq "the resume exits 0" "$RC" 0 || show_last
expect_stderr "^sweep: 2 candidates evaluated \(2 already in the registry\)" "the resume measures only the two not measured"
expect_eq "all four measured, each once" \
    "$(sql "$T/c.db" "select count(*) || ' ' || count(distinct config_hash) from measurements where status = 'ok'")" "4 4"
expect_eq "a winner is stored" "$(sql "$T/c.db" "select count(*) from winners")" 1
expect_eq "the resumed registry is intact" "$(sql "$T/c.db" "PRAGMA integrity_check")" ok

# ---- two GPUs: their lanes share the pool, and the kernel of 128 (its
# source is the same at both buckets' sizes) compiles once for both; the
# lane that waits on the other's compile gives it up too ----
SPEC1=$SPEC
SPEC=$T/home/two.yaml
sed 's/log2: \[6, 6\]/log2: [6, 7]/' "$SPEC1" >"$SPEC"
interrupt "$T/g.db" "$MARK" "two GPUs" FAKE_GPUS=2
expect_eq "two GPUs: each lane's default and 32 are kept" "$(sql "$T/g.db" "select count(*) from measurements")" 4
run env AITUNE_HOME="$T/home" AITUNE_WORKER="$FAKE" FAKE_GPUS=2 FAKE_MODE=ok "$AITUNE" sweep "$SPEC" --db "$T/g.db" --quiet
expect_eq "two GPUs: the resume exits 0" "$RC" 0 || show_last
expect_eq "two GPUs: then both buckets have their four, each once, and a winner" \
    "$(sql "$T/g.db" "select count(*) || ' ' || count(distinct bucket || config_hash) || ' ' || (select count(*) from winners) from measurements where status = 'ok'")" \
    "8 8 2"
SPEC=$SPEC1

# ---- the op's reference kernel (set up before a bucket's search) ----
interrupt "$T/r.db" aitune_reference reference
expect_eq "reference: nothing was measured" "$(sql "$T/r.db" "select count(*) from measurements")" 0

# ---- the engine's own kernel (compiled before anything else) ----
interrupt "$T/e.db" fill_f32 "the engine kernel"
expect_eq "the engine kernel: nothing was measured" "$(sql "$T/e.db" "select count(*) from measurements")" 0
run env AITUNE_HOME="$T/home" AITUNE_WORKER="$FAKE" FAKE_MODE=ok "$AITUNE" sweep "$SPEC" --db "$T/e.db" --quiet
expect_eq "the engine kernel: the sweep again, NVRTC well, exits 0" "$RC" 0 || show_last
expect_eq "the engine kernel: then all four are measured" \
    "$(sql "$T/e.db" "select count(*) from measurements where status = 'ok'")" 4

done_testing
