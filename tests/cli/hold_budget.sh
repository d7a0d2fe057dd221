#!/usr/bin/env bash
# A budget (--budget) is shared by a sweep's buckets (src/sweep_lanes.c:
# share_of), and hold's probes, the split's part races and the parts' own
# searches stop at the bucket's share as its search does (sweep_hold.h,
# sweep_split.h), so a bucket whose hold or split is slow cannot spend what
# the buckets after it need: the fourth session's GPU run of
# bench/rows_vocab.sh gave rmsnorm's last bucket (the top bucket's aligned
# class, tuned after its class-1 twin: tests/cli/range_classes.sh) no time,
# and 256000 was answered by a class-1 part. A cut bucket keeps the winners
# chosen before the cut (the race's; the parts' among their candidates),
# marked not exhaustive and not recorded decided: the next run holds and
# splits it again and ends as an uncut sweep. The fake worker plays the GPU;
# slow_time makes each race cost a fixed time, so the cuts land where the
# test says. Cuts: one where the search took the share, one in hold's
# probes, one in the split; each sweep may run over its budget by at most
# two races and 0.3 s (within).
. "$(dirname "$0")/lib.sh"

# The tool built with AddressSanitizer (make test-asan) runs its host work
# several times slower: every time and budget is stretched by F.
F=1
nm "$AITUNE" 2>/dev/null | grep -q __asan_init && F=3
ms() { echo $(( $1 * F )); }                          # a slow_time
secs() { awk -v s="$1" -v f=$F 'BEGIN { printf "%g", s * f }'; }   # a budget
# took: the sweep's own time (its summary's last figure, from the start its
# budget counts from).
took() { sed -n 's/^sweep: .*; \([0-9.]*\) s$/\1/p' "$T/err"; }
# within WHAT B SLOW: the sweep took at most B plus the overrun a cut
# allows: the race in flight when the share ran out and the last bucket's
# store (two races of SLOW ms, and 0.3 s of host work).
within() {
    local t
    t=$(took)
    if awk -v t="${t:-999}" -v b="$2" -v s="$3" -v f=$F 'BEGIN { exit !(t <= b + 2 * s / 1000 + 0.3 * f) }'; then
        ok "$1: the sweep took $t s of a ${2} s budget"
    else
        fail "$1: the sweep took ${t:-?} s of a ${2} s budget (allowed: 2 races of $3 ms and $(secs 0.3) s more)"
    fi
}

# axpy over a range of n: two buckets, its class 8 (tuned at 120) first,
# then class 1 (at 127), as rmsnorm's widths were tuned class 1 first and
# the aligned class after it. Their search is exhaustive and flip_at makes
# hold move each winner and split each bucket, in parts of two levels
# (rankings flipped in [84, 100) and from 116 on: no one cut holds).
spec ax.yaml <<'YAML'
name: ax-budget
arch: sm_90a
top_k: 2
tasks:
  - op: axpy
    dtypes: [f32]
    shapes: {n: {range: [70, 127]}}
YAML
MODE=flip_at:84/100/116
seed_db "$T/ref.db"
fake_sweep "$MODE" "$T/ref.db" "$T/ax.yaml"
expect_eq "the axpy range sweep without a budget exits 0" "$RC" 0 || show_last
WINNERS="select bucket, lo, hi, template, config, exhaustive from winners order by bucket"
ref=$(sql "$T/ref.db" "$WINNERS")
expect_eq "... splits both buckets, in 7 parts in all, every winner exhaustive, both recorded decided" \
    "$(sql "$T/ref.db" "select count(*) || ' ' || sum(exhaustive) from winners") $(sql "$T/ref.db" "select count(*) from decided")" "7 7 2"
expect_eq "... and both hold lines say another finalist wins" "$(grep -c "^hold .*another finalist, worst loss smaller, wins" "$T/out")" 2
held=$(sed -n 's/^hold  *axpy f32 \([^ ]*\): axpy\/vec \({[^}]*}\), worst loss .*/\1 \2/p' "$T/out")
expect_eq "... naming the finalist each holds with" "$(printf '%s\n' "$held" | grep -c .)" 2
classes="select group_concat(b, ' ') from (select distinct substr(bucket, 1, instr(bucket || '/', '/') - 1) b from winners order by b)"
both="n=2^6 n=2^6:align1"
# warm DB: the reference's registry, its winners and decisions forgotten.
warm() { cp "$T/ref.db" "$1" && sqlite3 "$1" "delete from winners; delete from decided"; }
# answered DB: how many n of the range libaitune answers from a winner of its own bucket.
answered() {
    local n a=0
    for n in $(seq 70 127); do
        "$AITUNE" lookup axpy --arch sm_90a --dtype f32 --shape "$n" --db "$1" --json 2>/dev/null | grep -q '"level":"exact"' && a=$((a + 1))
    done
    echo "$a"
}
# resumed WHAT DB: the sweep again without a budget ends as the uncut one,
# measuring nothing (the searches' measurements are the registry's).
resumed() {
    local n
    n=$(sql "$2" "select count(*) from measurements")
    fake_sweep "$MODE" "$2" "$T/ax.yaml"
    expect_eq "$1: run again without a budget, it exits 0" "$RC" 0 || show_last
    expect_eq "$1: ... holds and splits both buckets again, reaching the uncut sweep's winners, exhaustive" \
        "$(sql "$2" "$WINNERS")" "$ref"
    expect_eq "$1: ... records both decided" "$(sql "$2" "select count(*) from decided")" 2
    expect_eq "$1: ... and measures nothing again" "$(sql "$2" "select count(*) from measurements")" "$n"
}

# A cold sweep capped at 3 candidates a bucket (the kernels cached, so no
# compile eats the budget): each bucket's search and race take about its
# share (B / 2), and hold gets what is left of it, if anything. Without the
# cut, the first bucket's hold and split outlast the whole budget and the
# second gets nothing, as rmsnorm's aligned class got nothing on the GPU.
seed_db "$T/cold.db"
B=$(secs 2) SLOW=$(ms 200)
fake_sweep "$MODE,slow_time:$SLOW" "$T/cold.db" "$T/ax.yaml" --budget "${B}s" --max-evals 3
expect_eq "cold: the sweep with --budget ${B}s exits 0" "$RC" 0 || show_last
expect_eq "cold: both buckets have a winner, the one tuned last too" "$(sql "$T/cold.db" "$classes")" "$both"
within "cold" "$B" "$SLOW"
for k in 'n=2^6' 'n=2^6:align1'; do
    expect_true "cold: $k: its hold line says the budget cut it" \
        grep -qE "^hold +axpy f32 ${k//^/\\^}: the budget ran out (before its probes|after [0-9]+ of [0-9]+ sizes); the race.s winner stays, not exhaustive$" "$T/out"
done
expect_stderr "^hold: hold/split cut by the budget in 2 buckets: " "cold: the summary counts the buckets cut, once"
expect_eq "cold: no winner is exhaustive, no bucket recorded decided" \
    "$(sql "$T/cold.db" "select sum(exhaustive) from winners") $(sql "$T/cold.db" "select count(*) from decided")" "0 0"

# Hold cut: each bucket's share ends inside its probes (a race and 7 or 9
# sizes of SLOW each against a share of about B / 2). Without the cut, the
# first bucket's hold and split outlast the whole budget and the second
# gets nothing.
warm "$T/probes.db"
B=$(secs 2) SLOW=$(ms 300)
fake_sweep "$MODE,slow_time:$SLOW" "$T/probes.db" "$T/ax.yaml" --budget "${B}s"
expect_eq "hold cut: the sweep exits 0" "$RC" 0 || show_last
expect_stderr "^sweep: 0 candidates evaluated \([0-9]+ already in the registry\)" "hold cut: the searches are the registry's"
expect_eq "hold cut: both buckets have a winner, the one tuned last too" "$(sql "$T/probes.db" "$classes")" "$both"
within "hold cut" "$B" "$SLOW"
bad=0
while read -r k raced of; do
    [ "$raced" -ge 1 ] && [ "$raced" -lt "$of" ] || bad=$((bad + 1))
done < <(sed -n 's/^hold  *axpy f32 \([^ ]*\): the budget ran out after \([0-9]*\) of \([0-9]*\) sizes; the race.s winner stays, not exhaustive$/\1 \2 \3/p' "$T/out")
expect_eq "hold cut: each bucket's line says how many of its sizes were raced" \
    "$(grep -c "^hold .*: the budget ran out after [0-9]* of [0-9]* sizes; the race.s winner stays, not exhaustive$" "$T/out") $bad" "2 0"
expect_no_stdout "^split " "hold cut: no bucket is split"
# The race's winner stays: the uncut sweep's hold moved both buckets to
# another finalist (held: their keys and configs).
moved=0
while read -r k cfg; do
    [ -n "$k" ] && [ "$(sql "$T/probes.db" "select config from winners where bucket = '$k'")" != "$cfg" ] && moved=$((moved + 1))
done <<<"$held"
expect_eq "hold cut: each winner is the race's, not the finalist a whole hold chose" "$moved" 2
expect_eq "hold cut: ... and not exhaustive" "$(sql "$T/probes.db" "select sum(exhaustive) from winners")" 0
expect_eq "hold cut: no bucket is recorded decided" "$(sql "$T/probes.db" "select count(*) from decided")" 0
expect_stderr "^hold: hold/split cut by the budget in 2 buckets: " "hold cut: the summary counts both"
expect_eq "hold cut: the run's outcome is budget" "$(sql "$T/probes.db" "select outcome from runs order by id desc limit 1")" budget
expect_eq "hold cut: libaitune answers every n of the range exactly" "$(answered "$T/probes.db")" 58
resumed "hold cut" "$T/probes.db"

# Split cut: each bucket's share (about B / 2) outlasts its hold (a race and
# 7 or 10 sizes of SLOW) and ends in its split (the parts' races, a part's
# own search and its finalists raced, its parts'). Measured here, unloaded:
# B from about 6.5 s to 8.9 s cuts both splits at SLOW 300 ms (below it the
# second bucket's hold is cut, above it the first bucket's split ends). Host
# work under load moves both edges up; at SLOW 150 ms and B 4.1 s (a window
# of 3.1 to 4.7 s) a loaded CI machine cut the second bucket's hold.
warm "$T/split.db"
B=$(secs 8) SLOW=$(ms 300)
fake_sweep "$MODE,slow_time:$SLOW" "$T/split.db" "$T/ax.yaml" --budget "${B}s"
expect_eq "split cut: the sweep exits 0" "$RC" 0 || show_last
within "split cut" "$B" "$SLOW"
expect_eq "split cut: both buckets held whole (their hold lines name the finalist a whole hold chooses)" \
    "$(grep -c "^hold .*another finalist, worst loss smaller, wins$" "$T/out")" 2
for k in 'n=2^6' 'n=2^6:align1'; do
    expect_true "split cut: $k: a split line says the budget cut it" \
        grep -qE "^split +axpy f32 ${k//^/\\^}[:/].*(not split again: the budget ran out|but the budget ran out; not split|the budget ran out before its finalists raced|own search before the budget ran out; not split)" "$T/out"
done
expect_eq "split cut: both buckets have winners, the one tuned last too" "$(sql "$T/split.db" "$classes")" "$both"
expect_eq "split cut: the parts stored so far are not exhaustive" "$(sql "$T/split.db" "select count(*) > 0, sum(exhaustive) from winners")" "1|0"
expect_eq "split cut: libaitune answers every n of the range exactly" "$(answered "$T/split.db")" 58
expect_eq "split cut: no bucket is recorded decided" "$(sql "$T/split.db" "select count(*) from decided")" 0
expect_stderr "^hold: hold/split cut by the budget in 2 buckets: " "split cut: the summary counts both"
resumed "split cut" "$T/split.db"

# The search's part of the share: a bucket that holds stops its search at
# half its share (HOLD_SEARCH_SHARE), so hold races its sizes even where the
# search alone would fill the share (here: axpy's whole space, uncapped, at
# SLOW a candidate). Before, hold said "the budget ran out before its
# probes" in both buckets: on an H100 a 4096^2 range's [128, 256) bucket
# raced none of its sizes that way.
seed_db "$T/half.db"
B=$(secs 4) SLOW=$(ms 150)
fake_sweep "$MODE,slow_time:$SLOW" "$T/half.db" "$T/ax.yaml" --budget "${B}s"
expect_eq "half: the sweep exits 0" "$RC" 0 || show_last
within "half" "$B" "$SLOW"
expect_no_stdout "the budget ran out before its probes" "half: no bucket's hold is left without its probes"
raced=$(sed -n 's/^hold  *axpy f32 [^ ]*: the budget ran out after \([0-9]*\) of [0-9]* sizes.*/\1/p' "$T/out" | sort -n | head -1)
whole=$(grep -c "^hold  *axpy f32 [^ ]*: the race.s winner loses" "$T/out")
expect_true "half: each bucket raced its representative and another size at least (cut after ${raced:-all}, $whole held whole)" \
    test "$(grep -c '^hold  *axpy f32' "$T/out")" -ge 2 -a "${raced:-2}" -ge 2
expect_stderr "^hold: hold/split cut by the budget in 2 buckets: " "half: the summary counts both holds cut"
expect_eq "half: no winner is exhaustive, no bucket recorded decided" \
    "$(sql "$T/half.db" "select sum(exhaustive) from winners") $(sql "$T/half.db" "select count(*) from decided")" "0 0"

# Past the search's part, the templates after the cut still get their
# defaults measured (the share itself stops those too): gemm_nt at m
# 129..256 is served by mma, swapab and wgmma, searched in that order; mma's
# 40 candidates at SLOW each outlast the search's part of the share. Before,
# mma's search took the whole share and swapab's and wgmma's defaults (each
# bucket's floor: swapab's mid-size default is the fastest at these sizes on
# an H100) were never measured.
cat >"$T/g.yaml" <<'YAML'
name: g-budget
arch: sm_90a
search: random
max_evals: 40
top_k: 2
timing: stream
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    shapes:
      m: {range: [129, 256], align: [1]}
      n: {values: [4096], exact: true}
      k: {values: [4096], exact: true}
YAML
seed_db "$T/g.db"
# 25 s a bucket: mma's search (40 races of 0.45 s, and their compiles) runs
# past its share, and the other two defaults' compiles fit in the rest on a
# loaded machine (at 15 s a bucket wgmma's default missed it once while
# another test compiled beside this one; at 20 s one of the two missed it
# twice in make test's full run once swapab's space doubled with evict; at
# 25 s with races of 0.3 s mma's search once ran whole).
B=$(secs 50) SLOW=$(ms 450)
fake_sweep "shape_time,slow_time:$SLOW" "$T/g.db" "$T/g.yaml" --budget "${B}s"
expect_eq "defaults: the sweep exits 0" "$RC" 0 || show_last
expect_true "defaults: mma's search was cut (fewer than its 40 candidates in a bucket)" \
    test "$(sql "$T/g.db" "select max(n) from (select count(*) n from measurements where template = 'gemm_nt/mma' group by bucket)")" -lt 40
expect_eq "defaults: each bucket has swapab's and wgmma's default measured all the same" \
    "$(sql "$T/g.db" "select group_concat(t, ' ') from (select bucket || ':' || count(distinct template) t from measurements group by bucket order by bucket)")" \
    "m=2^7:align1,n=4096,k=4096:3 m=2^8,n=4096,k=4096:3"

done_testing
