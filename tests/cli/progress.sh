#!/usr/bin/env bash
# tests/run: slow 1 (sweeps on a terminal and off it)
# Progress on stderr: plain periodic lines when stderr is not a terminal
# (AITUNE_PROGRESS_INTERVAL=0: one per candidate), a redrawn line no wider
# than the terminal when it is one (script(1) gives the sweep a terminal),
# nothing with --quiet; stdout keeps only the results.
. "$(dirname "$0")/lib.sh"

axpy_spec two.yaml 6 7
seed_db "$T/a.db" || { fail "seed the cubin cache"; exit 1; }
cp "$T/a.db" "$T/b.db"
cp "$T/a.db" "$T/c.db"
# The sweeps into b.db and c.db keep their cubins: the compiles after them
# take every kernel from the cache instead of compiling the losers again.

run env AITUNE_WORKER="$FAKE" AITUNE_PROGRESS_INTERVAL=0 "$AITUNE" sweep "$T/two.yaml" --db "$T/a.db"
expect_eq "sweep with plain progress lines exits 0" "$RC" 0 || show_last
expect_stderr "^sweep: bucket 1/2, [0-9]+/[0-9]+ candidates \([0-9]+ in all\), [0-9]+s elapsed, ETA [^;]*; axpy f32 n=2\^6 best [0-9.]+ us \([0-9.]+x default\)\$" \
    "a progress line: bucket, candidates, elapsed, ETA, best vs default"
expect_stderr "^sweep: bucket 2/2, .*; axpy f32 n=2\^7" "the second bucket is counted"
if grep -q $'\r\|\033' "$T/err"; then fail "plain lines carry terminal codes"; else ok "plain lines carry no terminal codes"; fi
if grep -q "^sweep: " "$T/out"; then fail "progress went to stdout"; else ok "progress stays off stdout"; fi
expect_stdout "^axpy +f32 +n=2\^7 " "stdout still has the winners"

t0=$(date +%s)
run env AITUNE_WORKER="$FAKE" "$AITUNE" sweep "$T/two.yaml" --db "$T/b.db" --keep-cubins
el=$(( $(date +%s) - t0 ))
n=$(grep -c '^sweep' "$T/err")
expect_true "off a terminal, a line every 5 s: $n in $el s" test "$n" -le $(( el / 5 + 1 ))

if script -qec true /dev/null >/dev/null 2>&1; then
    COLUMNS=50 script -qec "env AITUNE_WORKER='$FAKE' '$AITUNE' sweep '$T/two.yaml' --db '$T/c.db' --keep-cubins" /dev/null \
        >"$T/tty" 2>&1 </dev/null
    expect_true "on a terminal the line is redrawn in place" grep -q $'\r\033\[Ksweep: bucket [0-9]/2' "$T/tty"
    # Each bucket is drawn as it starts, however quickly a seeded cache ends it.
    expect_true "bucket 1 is drawn" grep -q $'\r\033\[Ksweep: bucket 1/2' "$T/tty"
    expect_true "bucket 2 is drawn" grep -q $'\r\033\[Ksweep: bucket 2/2' "$T/tty"
    wide=$(tr '\r' '\n' <"$T/tty" | sed 's/\x1b\[K//g' | grep '^sweep: bucket' | awk 'length($0) > 49' | wc -l)
    expect_eq "no progress line is wider than the terminal (50 columns)" "$wide" 0
    expect_true "the winner line starts on a clean line" grep -q $'\r\033\[Kaxpy       f32' "$T/tty"
    # compile -v on a terminal: the table's rows are cut to its width too.
    COLUMNS=60 script -qec "'$AITUNE' compile -v '$T/two.yaml' --db '$T/c.db'" /dev/null >"$T/tty2" 2>&1 </dev/null
    rows=$(tr '\r' '\n' <"$T/tty2" | sed 's/\x1b\[K//g' | grep -c '^f32 axpy/vec')
    wide=$(tr '\r' '\n' <"$T/tty2" | sed 's/\x1b\[K//g' | grep -E '^(compile: [0-9]+/|f32 axpy/vec|kernel )' |
        awk 'length($0) > 59' | wc -l)
    [ "$rows" -ge 10 ] && ok "compile -v on a terminal prints the table ($rows rows)" || fail "compile -v rows on a terminal: $rows"
    expect_eq "no progress line or table row of compile -v is wider than the terminal (60 columns)" "$wide" 0
else
    skip "terminal progress: no script(1)"
fi

# (Into a registry of its own: b.db's buckets are decided, and a sweep
# there would have nothing to say.)
seed_db "$T/q.db"
run env AITUNE_WORKER="$FAKE" AITUNE_PROGRESS_INTERVAL=0 "$AITUNE" sweep "$T/two.yaml" --db "$T/q.db" --quiet
expect_stderr "^sweep: [1-9][0-9]* candidates evaluated" "a sweep with --quiet measures the spec's candidates"
expect_eq "--quiet: no progress" "$(grep -c '^sweep: bucket' "$T/err")" 0

# compile counts buckets and candidates.
run env AITUNE_PROGRESS_INTERVAL=0 "$AITUNE" compile "$T/two.yaml" --db "$T/b.db"
expect_stderr "^compile: bucket [0-9]+/2, [0-9]+/[0-9]+ candidates \([0-9]+ in all\), [0-9]+s elapsed, ETA" \
    "compile shows buckets and candidates done out of planned"
done_testing
