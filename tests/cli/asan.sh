#!/usr/bin/env bash
# tests/run: slow 24 (the tool built again with AddressSanitizer)
# Memory safety of the tool's main paths: aitune built with AddressSanitizer
# (and LeakSanitizer) into a temporary build folder, then compile, fake
# sweeps (clean, faulty, lying, stopped early by budget or Ctrl-C), show,
# lookup and emit. Any sanitizer report is a failure.
. "$(dirname "$0")/lib.sh"

if ! command -v "${CC:-gcc}" >/dev/null 2>&1 || ! echo 'int main(void){return 0;}' |
        "${CC:-gcc}" -fsanitize=address -x c - -o "$T/probe" >/dev/null 2>&1 || ! "$T/probe" >/dev/null 2>&1; then
    skip "AddressSanitizer checks: the compiler cannot build or run with -fsanitize=address"
    exit 0
fi
ASAN_BUILD=$T/asan
# A clean make: not the settings of a make that may be running us. At -O0:
# it builds in less than half the time of -O1, and the runs below spend
# theirs in NVRTC, SQLite and Lua, which are not rebuilt.
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES CFLAGS="-O0 -g -fsanitize=address -fno-omit-frame-pointer" \
        make -s -C "$ROOT" BUILD="$ASAN_BUILD" "$ASAN_BUILD/aitune" >"$T/asan-build.log" 2>&1; then
    fail "build aitune with -fsanitize=address"
    tail -n 5 "$T/asan-build.log"
    exit 1
fi
AITUNE=$ASAN_BUILD/aitune
if nm "$AITUNE" 2>/dev/null | grep -q "__asan_init"; then
    ok "aitune builds with -fsanitize=address"
else
    fail "the sanitizer build has no AddressSanitizer in it"
    exit 1
fi
export ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1:exitcode=86:abort_on_error=0

# check WANT "desc": the last command exited WANT with no sanitizer report
# (one line either way; a report exits 86).
check() {
    if grep -q "Sanitizer" "$T/err"; then
        fail "$2: sanitizer report"
        grep -m1 -A8 "ERROR: .*Sanitizer" "$T/err" | sed 's/^/    /'
        return 1
    fi
    if [ "$1" != any ] && [ "$RC" != "$1" ]; then
        fail "$2: exit $RC, want $1"
        show_last
        return 1
    fi
    ok "$2: no sanitizer report"
}

small_spec
DB=$T/a.db
run "$AITUNE" compile "$T/small.yaml" --db "$DB"
check 0 "asan: compile"
cp "$DB" "$T/seed.db"
fake_sweep ok "$DB" "$T/small.yaml"
check 0 "asan: fake sweep"
fake_sweep ok "$DB" "$T/small.yaml"
check 0 "asan: resumed fake sweep"
export FAKE_HANG_S=3
cp "$T/seed.db" "$T/f.db"
fake_sweep "crash_verify:2,hang_verify:4,wrong_verify:5,sticky_verify:7,segv_verify:9" "$T/f.db" "$T/small.yaml" --timeout 1s
check 0 "asan: faulty sweep"
cp "$T/seed.db" "$T/l.db"
fake_sweep lie "$T/l.db" "$T/small.yaml"
check 0 "asan: sweep with a lying worker"
for args in "show" "show --json"; do
    run "$AITUNE" $args --db "$DB"
    check 0 "asan: $args"
done
for n in 100 1048576; do
    run "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape "$n" --db "$DB"
    check 0 "asan: lookup n=$n"
done
run "$AITUNE" emit axpy --arch sm_90 --dtype f32 --shape 100 --db "$DB" -o "$T/k.cu"
check 0 "asan: emit"
run "$AITUNE" show --db "$T/missing.db"
check 3 "asan: show of a missing registry"
head -c 4096 /dev/urandom >"$T/garbage.db"
run env AITUNE_WORKER="$FAKE" "$AITUNE" sweep "$T/small.yaml" --db "$T/garbage.db"
check 3 "asan: sweep on a garbage registry"
spec bad.yaml <<'EOF'
tasks:
  - op: axpy
    dtypes: [f32, bf61]
    shapes:
      n: {log2: [6, 6]}
EOF
run "$AITUNE" compile "$T/bad.yaml" --db "$T/bad.db"
check 3 "asan: compile of a bad spec"

# Stopping a sweep while compiles are still queued (cold cache): the pool
# must not go on writing into candidates the sweep has freed.
for b in 0.5 0.6 0.7 0.8 0.9 1.0; do
    fake_sweep ok "$T/cold-$b.db" "$T/small.yaml" --budget "${b}s"
    check 0 "asan: cold sweep stopped by --budget ${b}s"
done
# The same with a deep look-ahead (the whole space asked and queued at
# once), and on two fake GPUs whose lanes share the pool's compiles of one
# kernel: a lane that stops drops its queued compiles, another lane's
# waiting on one of them compiles it instead.
for b in 0.4 0.8; do
    fake_sweep ok "$T/deep-$b.db" "$T/small.yaml" --budget "${b}s" --ahead 64 -j 1
    check 0 "asan: cold sweep, --ahead 64, stopped by --budget ${b}s"
    FAKE_GPUS=2 fake_sweep ok "$T/two-$b.db" "$T/small.yaml" --budget "${b}s" -j 1
    check 0 "asan: cold sweep on two GPUs stopped by --budget ${b}s"
done
axpy_spec two.yaml 6 7 "max_evals: 10"
FAKE_GPUS=2 fake_sweep slow_time:5 "$T/two.db" "$T/two.yaml" -j 1
check 0 "asan: cold sweep on two GPUs, both lanes compiling the same kernels"
# Ctrl-C with compiles queued.
start_bg env AITUNE_WORKER="$FAKE" FAKE_MODE=slow_time:100 "$AITUNE" sweep "$T/small.yaml" --db "$T/int.db" --quiet \
    --ahead 64 -j 1
wait_for "$T/int.db" "select count(*) from measurements" 2
kill -INT "$BG"
wait "$BG"
RC=$?
mv "$T/bg.err" "$T/err"
check 130 "asan: Ctrl-C with compiles queued (--ahead 64)"

done_testing
