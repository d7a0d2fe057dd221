#!/usr/bin/env bash
# NVRTC crashing on one candidate (it happens: NVRTC 13.0 segfaulted on a
# swapab variant) costs that candidate, not the run: the pool compiles in
# helper processes (`aitune __nvrtc`, jit.h), and a helper that dies is a
# compile error with one line naming the signal. AITUNE_NVRTC_CRASH=TEXT
# makes a helper raise SIGSEGV on a source that contains TEXT, and
# AITUNE_NVRTC_HANG=TEXT makes it never answer (AITUNE_COMPILE_TIMEOUT cuts
# it).
. "$(dirname "$0")/lib.sh"

# A template of four candidates; block 128 carries this run's marker (lib.sh).
marked_home crash

crash_compile() {
    run env AITUNE_HOME="$T/home" AITUNE_NVRTC_CRASH="$MARK" "$AITUNE" compile "$T/home/four.yaml" --db "$T/c.db" -j2 -v "$@"
}

crash_compile
expect_eq "compile with a candidate that crashes NVRTC exits 1, as for any failed candidate" "$RC" 1
[ "$RC" -lt 128 ] || show_last 20
expect_stdout "axpy/four .*\{\"block\":128\}.*NVRTC crashed \(signal 11, SIGSEGV\) compiling this candidate" \
    "the crashed candidate's row names the crash and the signal"
expect_stderr "1 of 4 kernels failed to compile" "the summary counts it as one failed compile"
expect_eq "the other three compiled (cubins cached)" "$(sql "$T/c.db" "select count(*) from cubins where length(cubin) > 100")" 3
expect_eq "the other rows carry no error" "$(grep '^f32 axpy/four' "$T/out" | grep -c -E 'crash|error')" 1
expect_eq "no helper is left behind" "$(leftovers)" 0
[ -z "$(ls "$T"/core* "$ROOT"/core 2>/dev/null)" ] && ok "no core file" || fail "a core file was written"

crash_compile
expect_eq "the second run exits 1 again" "$RC" 1
expect_stdout "axpy/four .*\{\"block\":128\}.* NVRTC crashed \(signal 11" "the crash is compiled again, not taken from the cache"
expect_stderr "1 compiled, 3 from the cache" "the three good ones come from the cache"
expect_eq "still three cubins" "$(sql "$T/c.db" "select count(*) from cubins")" 3
expect_eq "no helper is left behind after the second run" "$(leftovers)" 0

# Without the fault, all four compile: the crash was the injection's.
run env AITUNE_HOME="$T/home" "$AITUNE" compile "$T/home/four.yaml" --db "$T/c.db" -j2
expect_eq "without AITUNE_NVRTC_CRASH all four compile" "$RC" 0 || show_last

# A compile that never ends (AITUNE_NVRTC_HANG) is cut at
# AITUNE_COMPILE_TIMEOUT: that candidate fails with a line that says so,
# its helper is killed, the others compile.
rm -f "$T/h.db"
t0=$(date +%s)
run env AITUNE_HOME="$T/home" AITUNE_NVRTC_HANG="$MARK" AITUNE_COMPILE_TIMEOUT=2 "$AITUNE" compile "$T/home/four.yaml" \
    --db "$T/h.db" -j2 -v
el=$(( $(date +%s) - t0 ))
expect_eq "compile with a candidate whose NVRTC hangs exits 1" "$RC" 1
expect_stdout "axpy/four .*\{\"block\":128\}.*NVRTC did not finish in 2 s compiling this candidate" \
    "the hung candidate's row says it was cut at the limit"
expect_true "the run ended soon after the limit (${el} s)" test "$el" -lt 30
expect_eq "the other three compiled" "$(sql "$T/h.db" "select count(*) from cubins")" 3
expect_eq "no helper is left behind after the hang" "$(leftovers)" 0
run env AITUNE_HOME="$T/home" AITUNE_COMPILE_TIMEOUT=soon "$AITUNE" compile "$T/home/four.yaml" --db "$T/h.db" -j2
expect_eq "a bad AITUNE_COMPILE_TIMEOUT does not stop the run" "$RC" 0
expect_stderr "AITUNE_COMPILE_TIMEOUT='soon' is not a number of seconds" "it is named on stderr"

# A sweep (the fake worker times) records the crash as a compile row and goes on.
rm -f "$T/fake-state" "$T/fake-state.pid" "$T/fake-state.log"
run env AITUNE_HOME="$T/home" AITUNE_NVRTC_CRASH="$MARK" AITUNE_WORKER="$FAKE" FAKE_MODE=ok FAKE_STATE="$T/fake-state" \
    "$AITUNE" sweep "$T/home/four.yaml" --db "$T/s.db" --quiet -j2
expect_eq "a sweep with a candidate that crashes NVRTC exits 0" "$RC" 0 || show_last 20
expect_eq "the crash is a compile row with the signal" \
    "$(sql "$T/s.db" "select count(*) from measurements where status = 'compile' and error like 'NVRTC crashed (signal 11, SIGSEGV)%'")" 1
expect_eq "the other three are measured ok" "$(sql "$T/s.db" "select count(*) from measurements where status = 'ok'")" 3
expect_eq "a winner is stored" "$(sql "$T/s.db" "select count(*) from winners")" 1
expect_eq "no helper is left behind by the sweep" "$(leftovers)" 0

# A helper killed from outside (SIGKILL) is replaced: its job goes to a
# fresh helper and every candidate compiles. slow_nvrtc.so makes each
# compile take 800 ms (it is preloaded into the helpers too), so the kill
# lands while the run goes on, in a compile or between two.
SLOW=${AITUNE_SLOW_NVRTC:-$ROOT/build/tests/slow_nvrtc.so}
if [ ! -f "$SLOW" ]; then
    skip "a killed helper is replaced: $SLOW is not built"
else
    rm -f "$T/k.db"
    env AITUNE_HOME="$T/home" LD_PRELOAD="$SLOW" SLOW_NVRTC_MS=800 MARK_ENV="$MARK" \
        "$AITUNE" compile "$T/home/four.yaml" --db "$T/k.db" -j1 >"$T/k.out" 2>"$T/k.err" </dev/null &
    pid=$!
    BG_PIDS="${BG_PIDS:-} $pid"
    helper=""
    for i in $(seq 1 100); do
        helper=$(pgrep -P "$pid" -f __nvrtc | head -n 1)
        [ -n "$helper" ] && break
        sleep 0.05
    done
    [ -n "$helper" ] && ok "compile runs NVRTC in a helper process (aitune __nvrtc)" || fail "no __nvrtc child of aitune compile"
    n=$(leftovers)
    [ "$n" -ge 2 ] && ok "the marker finds this run's processes while it runs ($n)" || fail "the marker finds $n processes of a running compile"
    [ -n "$helper" ] && kill -KILL "$helper"
    wait "$pid"
    code=$?
    expect_eq "compile with a helper killed from outside exits 0" "$code" 0 || sed -e 's/^/    err: /' "$T/k.err" | head
    expect_eq "every candidate compiled" "$(sql "$T/k.db" "select count(*) from cubins")" 4
    expect_eq "no helper is left behind after the kill" "$(leftovers)" 0
fi

done_testing
