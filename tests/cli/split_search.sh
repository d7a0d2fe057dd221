#!/usr/bin/env bash
# tests/run: slow 25 (many sweeps of split buckets)
# A split part whose winner among the bucket's finalists still loses more
# than split_at gets a search of its own (spec split_evals), at the probe
# inside it where its winner loses most, among the sizes no search has
# covered: the part that holds the bucket's own size (4096, searched by the
# bucket's search) is searched at its upper edge, 5696.
# The fake worker's modes: shape_time (rankings differ at every size, so
# n=2^12 splits at 5760 and its parts' winners lose something) and late:5760
# (a third of the kernels are the slowest below n = 5760 and the fastest
# from it on: the bucket's search at 4096 keeps none of them as finalists,
# and only a search at the upper part's size, 5760, finds one).
# split_depth: 1 keeps the parts of shape_time (a ranking of its own at
# every size: each part loses somewhere, at every level) from being split
# again; parts split again are tested at the end, on landscapes made for it.
# split_polish: 0 keeps a part's candidates to its search's; the polish that
# ends it is tested at the end.
. "$(dirname "$0")/lib.sh"

# Every sweep here measures axpy f32 kernels, whose source does not depend
# on n: a new registry starts with a cubin cache of every axpy f32 kernel
# (seed_db axpy), so NVRTC does not compile them again for each sweep. What the checks read is
# the same: the trim drops losers' kernels by hash, wherever they came from,
# and the seed holds no measurement. A bad spec's registry is not made: the
# test checks the sweep leaves none.
eval "unseeded_$(declare -f fake_sweep)"
eval "unseeded_$(declare -f bg_fake_sweep)"
seeded() { [ -e "$1" ] || case $2 in *bad.yaml) ;; *) seed_db "$1" axpy ;; esac; }
fake_sweep() { seeded "$2" "$3" && unseeded_fake_sweep "$@"; }
bg_fake_sweep() { seeded "$2" "$3" && unseeded_bg_fake_sweep "$@"; }

# expect_retune_kept MODE DB SPEC NPARTS WHAT: after a driver upgrade,
# retune races the split bucket's stored finalists again (those of all its
# NPARTS parts), holds and splits it again, and keeps every part's winner;
# $T/out and $T/err are retune's.
expect_retune_kept() {
    local before
    before=$(sql "$2" "$key")
    sqlite3 "$2" "update devices set driver = '550.1' where driver = 'fake'"
    run env AITUNE_WORKER="$FAKE" FAKE_MODE="$1" "$AITUNE" retune "$3" --db "$2" --quiet
    expect_eq "$5: retune exits 0" "$RC" 0 || show_last
    expect_stdout "^retune [a-z]+ f32 [^ ]+: split in $4 parts, [0-9]+ finalists raced again: now $4 parts, $4 winners kept" \
        "$5: retune keeps the $4 parts"
    expect_eq "$5: the same winners after retune" "$(sql "$2" "$key")" "$before"
}

spec parts.yaml <<'YAML'
name: parts
search: random
max_evals: 16
top_k: 4
hold: true
split_evals: 12
split_depth: 1
split_polish: 0
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {log2: [12, 12]}
YAML
MODE=shape_time,late:5760
DB=$T/parts.db
fake_sweep "$MODE" "$DB" "$T/parts.yaml"
expect_eq "a sweep with split_evals exits 0" "$RC" 0 || show_last
cp "$T/out" "$T/parts.out"
cp "$T/err" "$T/parts.err"
key="select bucket, lo, hi, template, config from winners order by bucket"
winners=$(sql "$DB" "$key")

expect_eq "n=2^12 is stored as its two parts" "$(sql "$DB" "select group_concat(bucket, ' ') from (select bucket from winners order by bucket)")" \
    "n=2^12/2^12 n=2^12/5760"
expect_stdout "^split      axpy f32 n=2\^12/5760: its winner loses [0-9.]+% \(at 5760\): searched at 5760, 12 candidates; [1-4] new finalists? raced$" \
    "the upper part, its winner losing most at its own size, is searched there: one line"
expect_stdout "^split      axpy f32 n=2\^12/2\^12: its winner loses [0-9.]+% \(at 4096\): searched at 5696, 12 candidates; ([1-4] new finalists? raced|none new)$" \
    "the lower part, losing at the bucket's size where the bucket's search ran, is searched at its upper edge, 5696"
expect_eq "one line per part searched" "$(grep -c 'searched at' "$T/out")" 2
expect_eq "the lower part's search: split_evals candidates at its upper edge, none at the bucket's size again" \
    "$(sql "$DB" "select count(*) || ' ' || count(distinct config_hash) || ' ' || group_concat(distinct shape) from measurements where bucket = 'n=2^12/2^12'")" \
    '12 12 {"n":5696}'
expect_eq "the part's search took split_evals candidates, stored at its size under its key" \
    "$(sql "$DB" "select count(*) || ' ' || count(distinct config_hash) || ' ' || group_concat(distinct shape) from measurements where bucket = 'n=2^12/5760'")" \
    '12 12 {"n":5760}'
expect_eq "its search is seeded by the part's key: it tries configs the bucket's search did not" \
    "$(sql "$DB" "select count(*) > 0 from measurements p where p.bucket = 'n=2^12/5760' and not exists
                  (select 1 from measurements m where m.bucket = 'n=2^12' and m.config_hash = p.config_hash)")" 1
expect_eq "the bucket's own measurements stay at its size" \
    "$(sql "$DB" "select group_concat(distinct shape) from measurements where bucket = 'n=2^12'")" '{"n":4096}'
# The upper part's winner is a kernel only its search found: at the
# bucket's size it is not among the 8 fastest (the hold race's finalists).
win=$(sql "$DB" "select template || ' ' || config from winners where bucket = 'n=2^12/5760'")
expect_eq "the upper part's winner comes from its own search" \
    "$(sql "$DB" "select count(*) from measurements where bucket = 'n=2^12/5760' and template || ' ' || config = '$win'")" 1
expect_eq "and is not one of the bucket's finalists" \
    "$(sql "$DB" "select count(*) from (select template || ' ' || config as c from measurements where bucket = 'n=2^12'
                  and status = 'ok' order by median_us limit 8) where c = '$win'")" 0
expect_stdout "^split      axpy f32 n=2\^12/5760: n \[5760, 8192\): $(printf '%s' "$win" | sed 's/[]{}[]/\\&/g'), worst loss 0\.0% " \
    "the part's line names that winner: it holds the part"
expect_eq "the part's runners-up are its race's: the new finalists and the bucket's" \
    "$(sql "$DB" "select json_array_length(runners_up) > 4 from winners where bucket = 'n=2^12/5760'")" 1
# The cubin cache keeps the parts' finalists (retune races them without
# compiling) and drops the kernels of the part's search that lost.
finals="select w.template || ' ' || w.config from winners w union select json_extract(f.value, '$.template') || ' ' ||
        json(json_extract(f.value, '$.config')) from winners w, json_each(w.runners_up) f"
expect_eq "the parts' searches' losers' cubins are dropped" \
    "$(sql "$DB" "select count(*) from measurements m join cubins c on c.hash = m.cubin where m.bucket like 'n=2^12/%'
                  and m.template || ' ' || m.config not in ($finals)")" 0
expect_eq "their finalists' cubins are kept" \
    "$(sql "$DB" "select count(*) from measurements m left join cubins c on c.hash = m.cubin where m.bucket like 'n=2^12/%'
                  and m.template || ' ' || m.config in ($finals) and c.hash is null")" 0
cat "$T/parts.err" >"$T/err"
expect_stderr "^hold: 1 bucket probed .*, 1 bucket split in 2 parts, 2 parts searched \(24 candidates\); .* after splitting$" \
    "the hold summary counts the parts searched and their candidates"
after=$(sed -n 's/^hold: .* \([0-9.]*\)% after splitting$/\1/p' "$T/err")

# split_evals: 0: today's split, the parts choose among the bucket's finalists.
sed 's/^split_evals: 12/split_evals: 0/' "$T/parts.yaml" >"$T/none.yaml"
fake_sweep "$MODE" "$T/none.db" "$T/none.yaml"
expect_eq "split_evals: 0 exits 0" "$RC" 0 || show_last
expect_eq "split_evals: 0 searches no part" "$(grep -c 'searched' "$T/out" "$T/err" | awk -F: '{ n += $2 } END { print n }')" 0
expect_eq "split_evals: 0 measures nothing at a part's size" "$(sql "$T/none.db" "select count(*) from measurements where bucket like '%/%'")" 0
expect_eq "split_evals: 0 splits the same way" \
    "$(sql "$T/none.db" "select group_concat(bucket, ' ') from (select bucket from winners order by bucket)")" "n=2^12/2^12 n=2^12/5760"
expect_eq "split_evals: 0: each part's winner is one of the bucket's measured configs" \
    "$(sql "$T/none.db" "select count(*) from winners w where exists (select 1 from measurements m where m.bucket = 'n=2^12'
                         and m.template = w.template and m.config = w.config)")" 2
expect_eq "the lower part is the same either way" "$(sql "$T/none.db" "select config from winners where bucket = 'n=2^12/2^12'")" \
    "$(sql "$DB" "select config from winners where bucket = 'n=2^12/2^12'")"
us_none=$(sql "$T/none.db" "select median_us from winners where bucket = 'n=2^12/5760'")
us_own=$(sql "$DB" "select median_us from winners where bucket = 'n=2^12/5760'")
awk -v a="$us_own" -v b="$us_none" 'BEGIN { exit !(a > 0 && 2 * a < b) }' &&
    ok "the part's own search finds a faster winner ($us_own us, $us_none us without)" ||
    fail "the part's search does not find a faster winner: $us_own us, $us_none us without"
after_none=$(sed -n 's/^hold: .* \([0-9.]*\)% after splitting$/\1/p' "$T/err")
awk -v a="$after" -v b="$after_none" 'BEGIN { exit !(a != "" && a < b) }' &&
    ok "the worst loss after splitting shrinks with the part's search ($after% against $after_none%)" ||
    fail "the worst loss after splitting: $after% with the part's search, $after_none% without"

# Resume: the same sweep again measures nothing and reaches the same winners.
expect_resumed "$MODE" "$DB" "$T/parts.yaml" "$key"
expect_stdout "searched at 5760, 12 candidates" "the part's search is found in the registry"

# The budget of a part's search.
for c in "max_evals: 16|8|the default: a quarter of max_evals, at least 8" \
         "max_evals: 48|12|the default: a quarter of max_evals" \
         "split_evals: 100|16|never more than max_evals"; do
    IFS='|' read -r line want what <<<"$c"
    case $line in
    max_evals*) sed -e "s/^max_evals: 16/$line/" -e '/^split_evals/d' "$T/parts.yaml" >"$T/b.yaml" ;;
    *) sed "s/^split_evals: 12/$line/" "$T/parts.yaml" >"$T/b.yaml" ;;
    esac
    rm -f "$T/b.db"
    fake_sweep "$MODE" "$T/b.db" "$T/b.yaml"
    got=$(sql "$T/b.db" "select count(*) from measurements where bucket = 'n=2^12/5760'")
    expect_eq "$line: the part's search takes $want candidates ($what)" "$RC $got" "0 $want"
done
# (11: with 10 the bucket's random search, over the lazy space, already finds
# a finalist good in the upper part, which then needs no search of its own.)
rm -f "$T/b.db"
fake_sweep "$MODE" "$T/b.db" "$T/b.yaml" --max-evals 11
expect_eq "--max-evals 11 caps the part's search too (split_evals: 100)" \
    "$RC $(sql "$T/b.db" "select count(*) from measurements where bucket = 'n=2^12/5760'")" "0 11"
expect_eq "a capped part is marked not exhaustive" "$(sql "$T/b.db" "select exhaustive from winners where bucket = 'n=2^12/5760'")" 0

# --budget spent in the bucket's search: no part is searched.
rm -f "$T/b.db"
fake_sweep "$MODE,slow_time:200" "$T/b.db" "$T/parts.yaml" --budget 1s
expect_eq "a sweep whose budget ran out exits 0" "$RC" 0 || show_last
expect_stderr "budget ran out" "the budget ran out"
expect_eq "no part's search starts after the budget ran out" \
    "$(sql "$T/b.db" "select count(*) from measurements where bucket like '%/%'")" 0
if grep -q 'searched' "$T/out" "$T/err"; then fail "no part searched over budget"; else ok "no part searched over budget"; fi

# A joint search: one search over the op's templates, split_evals for the part.
sed 's/^split_evals: 12/split_evals: 12\njoint: true/' "$T/parts.yaml" >"$T/joint.yaml"
fake_sweep "$MODE" "$T/joint.db" "$T/joint.yaml"
expect_eq "a joint sweep with split_evals exits 0" "$RC" 0 || show_last
expect_stdout "^split      axpy f32 n=2\^12/5760: .*: searched at 5760, 12 candidates; " "its part is searched jointly"
expect_eq "the joint part search took 12 candidates" "$(sql "$T/joint.db" "select count(*) from measurements where bucket = 'n=2^12/5760'")" 12

# Bad values: exit 3, one line naming the file, line and field.
for bad in "-1" "lots" "1.5"; do
    sed "s/^split_evals: 12/split_evals: $bad/" "$T/parts.yaml" >"$T/bad.yaml"
    fake_sweep "$MODE" "$T/bad.db" "$T/bad.yaml"
    expect_eq "split_evals: $bad is a bad spec (exit 3)" "$RC" 3
    expect_stderr "^aitune: error: spec '.*bad.yaml' line 6: 'split_evals' (must be an integer|= -1 is out of range)" \
        "split_evals: $bad: the error names file, line and field"
    expect_stderr_lines 1 "split_evals: $bad: one line"
done
[ -e "$T/bad.db" ] && fail "a bad spec leaves no registry" || ok "a bad spec leaves no registry"

# The part that holds the bucket's own size (n=2^12/2^12, tuned at 4096)
# gets a search too, at its upper edge, and its winner can come from it.
# Mode ace:37 adds a few kernels that are the fastest at every size (9 us):
# the bucket's search (16 candidates at 4096) draws none, so the lower
# part's winner among the bucket's finalists loses more than split_at; its
# search at 5696 draws one, which holds the part at 4096 too.
ACE=$MODE,ace:37
ADB=$T/ace.db
fake_sweep "$ACE" "$ADB" "$T/parts.yaml"
expect_eq "a sweep with ace:37 exits 0" "$RC" 0 || show_last
expect_eq "the bucket's search at 4096 draws no ace" "$(sql "$ADB" "select count(*) from measurements where bucket = 'n=2^12' and median_us = 9")" 0
expect_stdout "^split      axpy f32 n=2\^12/2\^12: its winner loses [0-9.]+% \(at [0-9]+\): searched at 5696, 12 candidates; [1-4] new finalists? raced$" \
    "the part that holds the bucket's size is searched at its upper edge, and the line names that size"
expect_eq "its search took split_evals candidates at 5696, under the part's key, and drew an ace" \
    "$(sql "$ADB" "select count(*) || ' ' || group_concat(distinct shape) || ' ' || (sum(median_us = 9) > 0) from measurements where bucket = 'n=2^12/2^12'")" \
    '12 {"n":5696} 1'
expect_eq "the part's winner is an ace now, stored with its time at the part's own size" \
    "$(sql "$ADB" "select median_us || ' ' || shape from winners where bucket = 'n=2^12/2^12'")" '9.0 {"n":4096}'
awin=$(sql "$ADB" "select template || ' ' || config from winners where bucket = 'n=2^12/2^12'")
expect_eq "found by the part's search at 5696: the bucket's search never measured it" \
    "$(sql "$ADB" "select group_concat(bucket || ' ' || shape, ';') from measurements where template || ' ' || config = '$awin'")" \
    'n=2^12/2^12 {"n":5696}'
[ "$awin" != "$(sql "$DB" "select template || ' ' || config from winners where bucket = 'n=2^12/2^12'")" ] &&
    ok "the stored winner of the part differs from the one without aces" || fail "the lower part's winner did not change"
expect_stdout "^split      axpy f32 n=2\^12/2\^12: n \[4096, 5760\): $(printf '%s' "$awin" | sed 's/[]{}[]/\\&/g'), worst loss 0\.0% " \
    "the part's line names it, holding the part"
expect_stderr "^hold: .*, 2 parts searched \(24 candidates\); .* 0\.0% after splitting$" "no part loses anything after splitting"
# Its budget: split_evals, the default, and never more than --max-evals.
for c in "split_evals: 5|5|split_evals" "|8|the default: a quarter of max_evals, at least 8"; do
    IFS='|' read -r line want what <<<"$c"
    if [ -n "$line" ]; then sed "s/^split_evals: 12/$line/" "$T/parts.yaml" >"$T/b.yaml"; else sed '/^split_evals/d' "$T/parts.yaml" >"$T/b.yaml"; fi
    rm -f "$T/b.db"
    fake_sweep "$ACE" "$T/b.db" "$T/b.yaml"
    expect_eq "${line:-no split_evals}: the search of the part that holds the bucket's size takes $want candidates ($what), at 5696" \
        "$RC $(sql "$T/b.db" "select count(*) || ' ' || group_concat(distinct shape) from measurements where bucket = 'n=2^12/2^12'")" \
        "0 $want {\"n\":5696}"
done
# Resume: nothing measured again, the same winners.
akey="select bucket, lo, hi, template, config, median_us from winners order by bucket"
expect_resumed "$ACE" "$ADB" "$T/parts.yaml" "$akey"
expect_stdout "searched at 5696, 12 candidates" "the resume finds the part's search at 5696 in the registry"
# Ctrl-C in that part's search: the resume measures nothing twice, searches
# at the same size and reaches the same winners.
bg_fake_sweep "$ACE,slow_time:100" "$T/aint.db" "$T/parts.yaml"
wait_for "$T/aint.db" "select count(*) from measurements where bucket = 'n=2^12/2^12'" 3 || fail "the lower part's search never began"
kill -INT "$BG"
wait "$BG"
expect_eq "SIGINT in the search of the part that holds the bucket's size exits 130" "$?" 130
fake_sweep "$ACE" "$T/aint.db" "$T/parts.yaml"
expect_eq "its resume exits 0" "$RC" 0 || show_last
expect_eq "its resume measures nothing twice" \
    "$(sql "$T/aint.db" "select count(*) from (select bucket, shape, config_hash from measurements group by 1, 2, 3 having count(*) > 1)")" 0
expect_eq "the part's search is whole after the resume, at 5696" \
    "$(sql "$T/aint.db" "select count(*) || ' ' || group_concat(distinct shape) from measurements where bucket = 'n=2^12/2^12'")" '12 {"n":5696}'
expect_eq "the resume reaches the winners of the uninterrupted sweep" "$(sql "$T/aint.db" "$akey")" "$(sql "$ADB" "$akey")"
# retune: the parts' winners are raced again (each a slot of the bucket's
# race, the upper part's slow at 4096 too) and kept, the ace in the lower
# one; nothing is searched.
expect_retune_kept "$ACE" "$ADB" "$T/parts.yaml" 2 "the ace sweep"
expect_no_stdout "searched at" "retune searches no part"

# No part would change the winner among the finalists, yet it loses more
# than split_at (shape_time, seeds 5, 11 and 24: in each part the bucket's
# finalists rank so that one of them is the best of both). Only a config
# the bucket's search did not keep can help, so the parts that lose more
# than split_at are searched on trial: split where a search changed a
# part's winner (seeds 5 and 11), else the bucket stays whole (seed 24).
for seed in 5 11 24; do
    sed "s/^name: parts/name: parts\nseed: $seed/" "$T/parts.yaml" >"$T/trial$seed.yaml"
    fake_sweep shape_time "$T/trial$seed.db" "$T/trial$seed.yaml"
    expect_eq "seed $seed: the sweep exits 0" "$RC" 0 || show_last
    cp "$T/out" "$T/trial$seed.out"
    cp "$T/err" "$T/trial$seed.err"
done
TDB=$T/trial5.db
cat "$T/trial5.out" >"$T/out"
expect_stdout "^split      axpy f32 n=2\^12/5760: its winner loses [0-9.]+% \(at [0-9]+\): searched at [0-9]+, 12 candidates; [1-4] new finalists? raced$" \
    "seed 5: the parts are searched on trial"
first_search=$(grep -n 'searched at' "$T/out" | head -1 | cut -d: -f1)
split_line=$(grep -n '^split      axpy f32 n=2^12: .*: 2 parts, split along n at 5760$' "$T/out" | cut -d: -f1)
[ -n "$first_search" ] && [ -n "$split_line" ] && [ "$first_search" -lt "$split_line" ] &&
    ok "seed 5: the bucket is split after its parts' searches, which decide it" ||
    fail "seed 5: no split line after the parts' searches (search line ${first_search:-none}, split line ${split_line:-none})"
expect_eq "seed 5: stored as its two parts" "$(sql "$TDB" "select group_concat(bucket, ' ') from (select bucket from winners order by bucket)")" \
    "n=2^12/2^12 n=2^12/5760"
expect_eq "seed 5: the upper part's winner comes from its own search, not from the bucket's finalists" \
    "$(sql "$TDB" "select group_concat(m.bucket) from winners w join measurements m on m.template = w.template and m.config = w.config
                   where w.bucket = 'n=2^12/5760'")" "n=2^12/5760"
# Seed 11: the upper part's winner loses most at its upper edge, 8128, not
# at its own size: it is searched there, and stored at its own size.
TDB=$T/trial11.db
cat "$T/trial11.out" >"$T/out"
expect_stdout "^split      axpy f32 n=2\^12/5760: its winner loses [0-9.]+% \(at 8128\): searched at 8128, 12 candidates; " \
    "seed 11: a part that loses most at its upper edge is searched there"
expect_eq "seed 11: its search's measurements are at 8128, its winner stored at its own size" \
    "$(sql "$TDB" "select group_concat(distinct shape) || ' ' || (select shape from winners where bucket = 'n=2^12/5760')
                   from measurements where bucket = 'n=2^12/5760'")" '{"n":8128} {"n":5760}'
TDB=$T/trial24.db
cat "$T/trial24.out" >"$T/out"
cat "$T/trial24.err" >"$T/err"
expect_stdout "^split      axpy f32 n=2\^12: the winner loses [0-9.]+%, more than 5\.0%, but no part would change it, nor did a part's own search; not split$" \
    "seed 24: no part's search changed its winner: not split, and the line says why"
expect_eq "seed 24: stored whole" "$(sql "$TDB" "select group_concat(bucket, ' ') from winners")" "n=2^12"
expect_eq "seed 24: each part's search is kept under its key, at the size it searched" \
    "$(sql "$TDB" "select bucket || ' ' || shape || ' ' || count(*) from measurements where bucket like '%/%' group by bucket, shape
                   order by bucket" | tr '\n' ';')" \
    'n=2^12/2^12 {"n":5696} 12;n=2^12/5760 {"n":5760} 12;'
expect_eq "seed 24: those searches' cubins are dropped (but those the bucket's finalists share)" \
    "$(sql "$TDB" "select count(*) from measurements m join cubins c on c.hash = m.cubin where m.bucket like 'n=2^12/%'
                   and m.cubin not in (select cubin from measurements where bucket = 'n=2^12' and cubin is not null)")" 0
wwin=$(sql "$TDB" "select template || ' ' || config from winners")
expect_stdout "^hold       axpy f32 n=2\^12: $(printf '%s' "$wwin" | sed 's/[]{}[]/\\&/g'), worst loss [0-9.]+% \(at .*\), the parts' sizes raced too$" \
    "seed 24: the whole bucket's winner is the finalist every part chose, over the parts' sizes too"
expect_stderr "^hold: 1 bucket probed .*, 2 parts searched \(24 candidates\); .* after$" "seed 24: the summary counts the searches"
expect_resumed shape_time "$TDB" "$T/trial24.yaml" "$akey"
sed 's/^split_evals: 12/split_evals: 0/' "$T/trial24.yaml" >"$T/trial0.yaml"
fake_sweep shape_time "$T/trial0.db" "$T/trial0.yaml"
expect_stdout "^split      axpy f32 n=2\^12: the winner loses [0-9.]+%, more than 5\.0%, but no part would change it; not split$" \
    "split_evals: 0: nothing on trial, no part searched"
expect_eq "split_evals: 0: the same whole winner" "$(sql "$T/trial0.db" "select template || ' ' || config from winners")" "$wwin"

# gc keeps the searched part's winner's measurement (its part's, not its
# home's) and retune races its stored finalists again: the same winners,
# nothing searched, nothing measured at the part's size.
cp "$DB" "$T/gc.db"
expect_exit 0 "gc" "$AITUNE" gc --db "$T/gc.db"
expect_eq "gc keeps the part's winner's measurement at its size" \
    "$(sql "$T/gc.db" "select count(*) from winners w join measurements m on m.bucket = w.bucket and m.config = w.config
                       and m.template = w.template where w.bucket = 'n=2^12/5760'")" 1
sqlite3 "$DB" "update devices set driver = '550.1' where driver = 'fake'"
npart=$(sql "$DB" "select count(*) from measurements where bucket like 'n=2^12/%'")
run env AITUNE_WORKER="$FAKE" FAKE_MODE="$MODE" "$AITUNE" retune "$T/parts.yaml" --db "$DB" --quiet
expect_eq "retune exits 0" "$RC" 0 || show_last
# The stored parts' winners race among the bucket's finalists (the upper
# part's, slow at 4096, too), so the upper part holds; the lower part still
# loses more than split_at and races its stored finalists, those its search
# at 5696 found among them.
expect_stdout "^split      axpy f32 n=2\^12/2\^12: its winner loses [0-9.]+% \(at [0-9]+\): [1-4] of its stored finalists raced again$" \
    "retune races the part's stored finalists instead of searching it (the part that holds the bucket's size)"
expect_no_stdout "searched at" "retune searches no part"
expect_stdout "^retune axpy f32 n=2\^12: split in 2 parts, [0-9]+ finalists raced again: now 2 parts, 2 winners kept" \
    "and keeps both parts' winners"
expect_eq "the same winners after retune" "$(sql "$DB" "$key")" "$winners"
expect_stderr "; 0 compiled, " "retune compiles nothing: the cache kept every finalist"
expect_eq "retune measures nothing at the parts' sizes" "$(sql "$DB" "select count(*) from measurements where bucket like 'n=2^12/%'")" "$npart"

# Ctrl-C in the part's search: exit 130, nothing stored for the bucket; the
# resume measures nothing twice and reaches the same winners.
DB=$T/int.db
bg_fake_sweep "$MODE,slow_time:100" "$DB" "$T/parts.yaml"
wait_for "$DB" "select count(*) from measurements where bucket = 'n=2^12/5760'" 3 || fail "the part's search never began"
kill -INT "$BG"
wait "$BG"
expect_eq "SIGINT in a part's search exits 130" "$?" 130
n=$(sql "$DB" "select count(*) from measurements where bucket = 'n=2^12/5760'")
[ "$n" -ge 3 ] && [ "$n" -lt 12 ] && ok "the part's search stopped after the candidate in flight ($n of 12)" ||
    fail "measurements of the part's search after SIGINT: $n"
expect_eq "no winner stored for the interrupted bucket" "$(sql "$DB" "select count(*) from winners")" 0
fake_sweep "$MODE" "$DB" "$T/parts.yaml"
expect_eq "the resume exits 0" "$RC" 0 || show_last
expect_eq "the resume measures nothing twice" \
    "$(sql "$DB" "select count(*) from (select bucket, config_hash from measurements group by 1, 2 having count(*) > 1)")" 0
expect_eq "the part's search is whole after the resume" "$(sql "$DB" "select count(*) from measurements where bucket = 'n=2^12/5760'")" 12
expect_eq "the resume reaches the winners of the uninterrupted sweep" "$(sql "$DB" "$key")" "$winners"

# Parts split again (spec split_depth, default 2). Mode flip_at:5760/6848:
# the ranking flips at n = 5760 (the bucket's split point) and back at 6848
# (the split point of its upper part). The upper part [5760, 8192) is raced
# at 5760 (flipped) and 8128 (not): no config holds it, so one level leaves
# it losing more than split_at; split again at 6848, each of its parts has
# one ranking throughout and a winner that holds it.
spec nest.yaml <<'YAML'
name: nest
search: random
max_evals: 16
top_k: 4
hold: true
split_evals: 0
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {log2: [11, 13]}
YAML
NMODE=flip_at:5760/6848
NDB=$T/nest.db
fake_sweep "$NMODE" "$NDB" "$T/nest.yaml"
expect_eq "a sweep whose part is split again exits 0" "$RC" 0 || show_last
cp "$T/out" "$T/nest.out"
cp "$T/err" "$T/nest.err"
rows="select bucket || ' ' || lo || ' ' || hi from winners order by cast(lo as integer)"
expect_eq "n=2^12 is stored as its lower part and its upper part's two parts" "$(sql "$NDB" "$rows" | tr '\n' ';')" \
    "n=2^11 2048 4096;n=2^12/2^12 4096 5760;n=2^12/5760 5760 6848;n=2^12/6848 6848 8192;n=2^13 8192 16384;"
# The parts of n=2^12 in DB: their lowest lo, highest hi, total length, and
# how many end where the next does not begin ("4096 8192 4096 0": they tile it).
tiling() {
    sql "$1" "select min(cast(lo as integer)) || ' ' || max(cast(hi as integer)) || ' ' || sum(hi - lo) || ' ' ||
              sum(nx is not null and nx <> cast(hi as integer)) from (select lo, hi, lead(cast(lo as integer)) over
              (order by cast(lo as integer)) as nx from winners where bucket like 'n=2^12/%')"
}
expect_eq "the parts tile the bucket: no gap, no overlap" "$(tiling "$NDB")" "4096 8192 4096 0"
# The parts of n=2^12 in DB, by lo: "key lo hi;..."
parts() {
    sql "$1" "select group_concat(bucket || ' ' || lo || ' ' || hi, ';') from (select * from winners where bucket like 'n=2^12/%'
              order by cast(lo as integer))"
}
expect_eq "the upper part's two parts have different winners" \
    "$(sql "$NDB" "select count(distinct config) from winners where bucket in ('n=2^12/5760', 'n=2^12/6848')")" 2
expect_eq "each part's winner beats every runner-up it stores, at its own size" \
    "$(sql "$NDB" "select count(*) from winners w, json_each(w.runners_up) f where w.bucket like 'n=2^12/%'
                   and json_extract(f.value, '$.median_us') < w.median_us")" 0
expect_eq "each part is tuned at its own lower edge" \
    "$(sql "$NDB" "select shape from winners where bucket like 'n=2^12/%' order by cast(lo as integer)" | tr '\n' ' ')" \
    '{"n":4096} {"n":5760} {"n":6848} '
cat "$T/nest.out" >"$T/out"
expect_stdout "^split      axpy f32 n=2\^12: the winner loses [0-9.]+%, more than 5\.0%: 2 parts, split along n at 5760$" \
    "the bucket's split line"
expect_stdout "^split      axpy f32 n=2\^12/2\^12: n \[4096, 5760\): axpy/vec \{.*\}, worst loss 0\.0% \(at [0-9]+\)$" \
    "the lower part holds: not split again, and its line is as before"
expect_stdout "^split      axpy f32 n=2\^12/5760: n \[5760, 8192\): its winner loses [0-9.]+%, more than 5\.0%: 2 parts of level 2, split along n at 6848$" \
    "the upper part's line: its loss, that it is split again, where, and its parts' level"
expect_stdout "^split      axpy f32 n=2\^12/5760: n \[5760, 6848\), level 2 in n \[5760, 8192\): axpy/vec \{.*\}, worst loss 0\.0% " \
    "its lower part's line names its level and its parent, and its winner holds it"
expect_stdout "^split      axpy f32 n=2\^12/6848: n \[6848, 8192\), level 2 in n \[5760, 8192\): axpy/vec \{.*\}, worst loss 0\.0% " \
    "and its upper part's"
expect_eq "the parts' lines come in order: the part split again, then its parts" \
    "$(grep -o '^split      axpy f32 n=2^12[^:]*: n \[[0-9]*, [0-9]*)[^:]*' "$T/out" | sed 's/.*: n //' | tr '\n' ';')" \
    "[4096, 5760);[5760, 8192);[5760, 6848), level 2 in n [5760, 8192);[6848, 8192), level 2 in n [5760, 8192);"
expect_stdout "^axpy +f32 +n=2\^12/6848 +[0-9.]+ us" "each stored part gets its winner's line"
cat "$T/nest.err" >"$T/err"
expect_stderr "^hold: 3 buckets probed .*, 1 bucket split in 3 parts, 1 part split again; .* after hold, 0\.0% after splitting$" \
    "the summary counts the parts stored and the part split again; the worst loss after splitting is below split_at"
# What reads the registry.
run "$AITUNE" show --db "$NDB"
expect_stdout "^axpy +sm_90 +f32 +n=2\^12/5760 " "show lists the upper part's lower part"
expect_stdout "^axpy +sm_90 +f32 +n=2\^12/6848 " "and its upper part"
run "$AITUNE" show --db "$NDB" --json
expect_stdout '"bucket":"n=2\^12/6848","lo":"6848","hi":"8192"' "show --json gives a part of a part with its edges"
nlookup() {
    run "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape "$1" --db "$NDB" --json
    sed -n 's/.*"level":"\([a-z]*\)".*"config":\({[^}]*}\),"bucket":"\([^"]*\)".*/\1 \3 \2/p' "$T/out"
}
got="" want=""
for n in 4096 5759 5760 6000 6847 6848 7500 8191 8192; do
    got="$got$n:$(nlookup $n);"
    want="$want$n:exact $(sql "$NDB" "select bucket || ' ' || config from winners where cast(lo as integer) <= $n and $n < cast(hi as integer)");"
done
expect_eq "lookup answers each shape from the part that holds it, with that part's winner, exactly" "$got" "$want"
case $want in *"n=2^12/5760"*"n=2^12/6848"*) ok "the parts of the part are among the answers" ;; *) fail "lookup never answered a part of a part: $want" ;; esac
expect_resumed "$NMODE" "$NDB" "$T/nest.yaml" "$key"
# retune after a driver upgrade: the finalists of all three parts are raced
# again, the bucket held and split again the same way, nothing searched.
expect_retune_kept "$NMODE" "$NDB" "$T/nest.yaml" 3 "parts of parts"
expect_stderr "; 0 compiled, " "retune compiles nothing: the cache kept every part's finalists"

# The depth limit. Mode flip_at:5760/7488: the upper part's upper part
# [6848, 8192) still has both rankings (6848 flipped, 8128 not), and only a
# third level, split at 7488, holds it.
fake_sweep flip_at:5760/7488 "$T/deep2.db" "$T/nest.yaml"
expect_eq "flip_at:5760/7488: the sweep exits 0" "$RC" 0 || show_last
expect_eq "split_depth 2 (the default): the parts stop at level 2" \
    "$(parts "$T/deep2.db")" \
    "n=2^12/2^12 4096 5760;n=2^12/5760 5760 6848;n=2^12/6848 6848 8192"
expect_stdout "^split      axpy f32 n=2\^12/6848: n \[6848, 8192\), level 2 in n \[5760, 8192\): axpy/vec \{.*\}, worst loss [0-9.]+% \(at [0-9]+\); not split again: split_depth 2 reached$" \
    "the part at the limit that still loses says why it is not split again"
expect_no_stdout "level 3" "no part of level 3"
deep2=$(sed -n 's/^hold: .* \([0-9.]*\)% after splitting$/\1/p' "$T/err")
awk -v a="$deep2" 'BEGIN { exit !(a > 5) }' && ok "the summary gives the loss left at the limit ($deep2%)" ||
    fail "the loss left at the limit: '$deep2'"
sed 's/^split_evals: 0/split_evals: 0\nsplit_depth: 3/' "$T/nest.yaml" >"$T/deep3.yaml"
fake_sweep flip_at:5760/7488 "$T/deep3.db" "$T/deep3.yaml"
expect_eq "split_depth: 3 exits 0" "$RC" 0 || show_last
expect_eq "split_depth: 3: that part is split again at 7488" \
    "$(parts "$T/deep3.db")" \
    "n=2^12/2^12 4096 5760;n=2^12/5760 5760 6848;n=2^12/6848 6848 7488;n=2^12/7488 7488 8192"
expect_stdout "^split      axpy f32 n=2\^12/6848: n \[6848, 8192\), level 2 in n \[5760, 8192\): its winner loses [0-9.]+%, more than 5\.0%: 2 parts of level 3, split along n at 7488$" \
    "split_depth: 3: the line of the part split at level 2"
expect_stdout "^split      axpy f32 n=2\^12/7488: n \[7488, 8192\), level 3 in n \[6848, 8192\): axpy/vec \{.*\}, worst loss 0\.0% " \
    "split_depth: 3: a part of level 3 holds"
expect_stderr "^hold: 3 buckets probed .*, 1 bucket split in 4 parts, 2 parts split again; .* 0\.0% after splitting$" \
    "split_depth: 3: nothing loses after splitting"
sed 's/^split_evals: 0/split_evals: 0\nsplit_depth: 1/' "$T/nest.yaml" >"$T/deep1.yaml"
fake_sweep "$NMODE" "$T/deep1.db" "$T/deep1.yaml"
expect_eq "split_depth: 1: parts are not split again" \
    "$(sql "$T/deep1.db" "select group_concat(bucket, ' ') from (select bucket from winners where bucket like 'n=2^12/%' order by bucket)")" \
    "n=2^12/2^12 n=2^12/5760"
expect_stdout "^split      axpy f32 n=2\^12/5760: n \[5760, 8192\): axpy/vec \{.*\}, worst loss [0-9.]+% \(at [0-9]+\); not split again: split_depth 1 reached$" \
    "split_depth: 1: the part that loses says why"
# A landscape that would split forever: shape_time ranks the kernels anew
# at every size, so every part's corners disagree. split_depth: 4 (the
# most) stops at level 4, each part there saying so.
sed 's/^split_evals: 0/split_evals: 0\nsplit_depth: 4/' "$T/nest.yaml" >"$T/deep4.yaml"
fake_sweep shape_time "$T/deep4.db" "$T/deep4.yaml"
expect_eq "shape_time at split_depth: 4 exits 0" "$RC" 0 || show_last
levels=$(grep -o ', level [0-9]* in ' "$T/out" | sort -u | tr -d '\n')
expect_eq "shape_time: parts of levels 2 to 4, none deeper" "$levels" ", level 2 in , level 3 in , level 4 in "
expect_eq "shape_time: every part of level 4 that loses more than split_at says the limit stopped it" \
    "$(sed -n 's/.*, level 4 in .*, worst loss \([0-9.]*\)% (at [0-9]*)$/\1/p' "$T/out" | awk '$1 > 5' | wc -l)" 0
[ "$(grep -c ', level 4 in .*; not split again: split_depth 4 reached$' "$T/out")" -gt 0 ] &&
    ok "shape_time: parts of level 4 not split again: split_depth 4 reached" || fail "no part stopped at split_depth 4"
expect_eq "shape_time: its parts tile the bucket" "$(tiling "$T/deep4.db")" "4096 8192 4096 0"
# Bad values: exit 3, one line naming the file, line and field.
for bad in 0 5 deep 1.5; do
    sed "s/^split_evals: 0/split_depth: $bad/" "$T/nest.yaml" >"$T/bad.yaml"
    rm -f "$T/bad.db"
    fake_sweep "$NMODE" "$T/bad.db" "$T/bad.yaml"
    expect_eq "split_depth: $bad is a bad spec (exit 3)" "$RC" 3
    expect_stderr "^aitune: error: spec '.*bad.yaml' line 6: 'split_depth' (must be an integer|= -?[0-9]+ is out of range \[1, 4\])" \
        "split_depth: $bad: the error names file, line and field"
    expect_stderr_lines 1 "split_depth: $bad: one line"
    [ -e "$T/bad.db" ] && fail "split_depth: $bad leaves no registry" || ok "split_depth: $bad leaves no registry"
done

# Searches below the first level (split_evals). Mode flip_at:6848: the
# bucket holds at 4096 and 5760 but not at 8128; its upper part, losing at
# its upper edge, is searched there, and then split again at 6848: its
# upper part's winner comes from that search, keyed by the part.
sed 's/^split_evals: 0/split_evals: 12\nsplit_polish: 0/' "$T/nest.yaml" >"$T/nests.yaml"
fake_sweep flip_at:6848 "$T/nests.db" "$T/nests.yaml"
expect_eq "flip_at:6848 with split_evals exits 0" "$RC" 0 || show_last
expect_stdout "^split      axpy f32 n=2\^12/5760: its winner loses [0-9.]+% \(at 8128\): searched at 8128, 12 candidates; [1-4] new finalists? raced$" \
    "the upper part is searched where it loses, at its upper edge"
expect_stdout "^split      axpy f32 n=2\^12/5760: n \[5760, 8192\): its winner loses [0-9.]+%, more than 5\.0%: 2 parts of level 2, split along n at 6848$" \
    "and still losing, split again"
expect_eq "flip_at:6848: three parts" \
    "$(parts "$T/nests.db")" \
    "n=2^12/2^12 4096 5760;n=2^12/5760 5760 6848;n=2^12/6848 6848 8192"
expect_eq "the upper part's upper part's winner is a finalist of its parent's search, stored at its own size" \
    "$(sql "$T/nests.db" "select count(*) || ' ' || max(w.shape) from winners w join measurements m on m.template = w.template
                          and m.config = w.config and m.bucket = 'n=2^12/5760' and m.shape = '{\"n\":8128}' where w.bucket = 'n=2^12/6848'")" \
    '1 {"n":6848}'
expect_stderr "^hold: 3 buckets probed .*, 1 bucket split in 3 parts, 1 part split again, 1 part searched \(12 candidates\); .* 0\.0% after splitting$" \
    "flip_at:6848: the summary counts the search and the part split again; nothing loses"
finals="select w.template || ' ' || w.config from winners w union select json_extract(f.value, '$.template') || ' ' ||
        json(json_extract(f.value, '$.config')) from winners w, json_each(w.runners_up) f"
expect_eq "the parts' finalists' cubins are kept" \
    "$(sql "$T/nests.db" "select count(*) from measurements m left join cubins c on c.hash = m.cubin where m.bucket like 'n=2^12%'
                          and m.template || ' ' || m.config in ($finals) and c.hash is null")" 0
cp "$T/nests.db" "$T/nests-gc.db"
expect_exit 0 "gc of a registry with parts of parts" "$AITUNE" gc --db "$T/nests-gc.db"
expect_eq "gc keeps the measurement of the winner found by its parent's search" \
    "$(sql "$T/nests-gc.db" "select count(*) from winners w join measurements m on m.template = w.template and m.config = w.config
                             and m.bucket = 'n=2^12/5760' where w.bucket = 'n=2^12/6848'")" 1
# A part split again on trial: mode flip_at:5760/6400/6848/7488 ranks the
# upper part's parts [5760, 6848) and [6848, 8192) each one way at their
# lower edge and the other at their upper edge, so they choose the same
# winner among the candidates; searched, neither finds a config that holds
# both rankings, so the part stays whole (as a bucket on trial does).
fake_sweep flip_at:5760/6400/6848/7488 "$T/ptrial.db" "$T/nests.yaml"
expect_eq "a part on trial: the sweep exits 0" "$RC" 0 || show_last
expect_eq "a part on trial whose parts' searches changed no winner stays whole" "$(parts "$T/ptrial.db")" \
    "n=2^12/2^12 4096 5760;n=2^12/5760 5760 8192"
expect_stdout "^split      axpy f32 n=2\^12/6848: n \[6848, 8192\), level 2 in n \[5760, 8192\): its winner loses [0-9.]+% \(at [0-9]+\): searched at [0-9]+, 12 candidates; " \
    "a part on trial: its parts are searched"
expect_stdout "^split      axpy f32 n=2\^12/5760: n \[5760, 8192\): axpy/vec \{.*\}, worst loss [0-9.]+% \(at [0-9]+\); not split again: no part would change its winner, nor did a part's own search$" \
    "a part on trial: its line says why it stays whole"
expect_no_stdout "level 2 in .*: axpy/vec" "a part on trial: no line for parts it does not keep"
expect_eq "a part on trial: its parts' searches are kept under their keys, at their sizes" \
    "$(sql "$T/ptrial.db" "select group_concat(bucket || ' ' || shape || ' ' || n, ';') from (select bucket, shape, count(*) as n
                           from measurements where bucket like 'n=2^12/%' group by bucket, shape order by bucket, shape)")" \
    'n=2^12/5760 {"n":5760} 12;n=2^12/5760 {"n":6784} 12;n=2^12/6848 {"n":6848} 12'
expect_stderr ", 1 bucket split in 2 parts, 3 parts searched \(36 candidates\); " "a part on trial: the summary counts no part split again"
expect_resumed flip_at:5760/6400/6848/7488 "$T/ptrial.db" "$T/nests.yaml" "$key"
# A part of level 2 that still loses gets a search of its own: with
# flip_at:5760/7488 the part [6848, 8192) is searched at its worst probe
# (not where its parent's search ran), under its own key.
DDB=$T/deeps.db
fake_sweep flip_at:5760/7488 "$DDB" "$T/nests.yaml"
expect_eq "flip_at:5760/7488 with split_evals exits 0" "$RC" 0 || show_last
cp "$T/out" "$T/deeps.out"
expect_stdout "^split      axpy f32 n=2\^12/6848: n \[6848, 8192\), level 2 in n \[5760, 8192\): its winner loses [0-9.]+% \(at [0-9]+\): searched at [0-9]+, 12 candidates; " \
    "a part of level 2 is searched, its line naming its level and parent"
expect_eq "each search ran under its part's key, at a size no other search ran at" \
    "$(sql "$DDB" "select group_concat(bucket || ' ' || shape || ' ' || n, ';') from (select bucket, shape, count(*) as n from measurements
                   group by bucket, shape order by bucket)")" \
    'n=2^11 {"n":2048} 17;n=2^12 {"n":4096} 17;n=2^12/5760 {"n":5760} 12;n=2^12/6848 {"n":6848} 12;n=2^13 {"n":8192} 17'
expect_stderr ", 1 bucket split in 3 parts, 1 part split again, 2 parts searched \(24 candidates\); " \
    "the summary counts the searches of both levels"
expect_resumed flip_at:5760/7488 "$DDB" "$T/nests.yaml" "$key"
# Ctrl-C in the search of the part of level 2: nothing stored for the
# bucket; the resume measures nothing twice and reaches the same winners.
bg_fake_sweep "flip_at:5760/7488,slow_time:100" "$T/dint.db" "$T/nests.yaml"
wait_for "$T/dint.db" "select count(*) from measurements where bucket = 'n=2^12/6848'" 3 || fail "the level-2 part's search never began"
kill -INT "$BG"
wait "$BG"
expect_eq "SIGINT in a level-2 part's search exits 130" "$?" 130
expect_eq "no winner stored for the bucket it cut" "$(sql "$T/dint.db" "select count(*) from winners where bucket like 'n=2^12%'")" 0
fake_sweep flip_at:5760/7488 "$T/dint.db" "$T/nests.yaml"
expect_eq "its resume exits 0" "$RC" 0 || show_last
expect_eq "its resume measures nothing twice" \
    "$(sql "$T/dint.db" "select count(*) from (select bucket, shape, config_hash from measurements group by 1, 2, 3 having count(*) > 1)")" 0
expect_eq "its resume reaches the winners of the uninterrupted sweep" "$(sql "$T/dint.db" "$key")" "$(sql "$DDB" "$key")"
# retune: the stored parts' finalists stand in for the searches.
npart=$(sql "$DDB" "select count(*) from measurements where bucket like 'n=2^12/%'")
expect_retune_kept flip_at:5760/7488 "$DDB" "$T/nests.yaml" 3 "searched parts of parts"
expect_no_stdout "searched at" "retune searches no part"
expect_eq "retune measures nothing at the parts' sizes" "$(sql "$DDB" "select count(*) from measurements where bucket like 'n=2^12/%'")" "$npart"

# Two dims: mode flip_at:1408/1664,flip2_at:6848 flips the ranking at rows
# 1408 and 1664 and at cols 6848. The bucket rows [1024, 2048) x cols
# [4096, 8192) is split along both (at rows 1408, cols 5760); then its part
# rows [1024, 1408) x cols [5760, 8192) along cols at 6848, and its part
# rows [1408, 2048) x cols [4096, 5760) along rows at 1664, so the parts'
# rows ranges nest (the runtime's index cuts them into disjoint runs).
spec nest2.yaml <<'YAML'
name: nest2
search: random
max_evals: 8
top_k: 4
hold: true
split_evals: 0
tasks:
  - op: softmax
    dtypes: [f32]
    templates: [stream]
    shapes:
      rows: {values: [1024]}
      cols: {values: [4096]}
YAML
TMODE=flip_at:1408/1664,flip2_at:6848
TDB=$T/nest2.db
fake_sweep "$TMODE" "$TDB" "$T/nest2.yaml"
expect_eq "a 2-D sweep with parts split again exits 0" "$RC" 0 || show_last
expect_eq "2-D: six parts, two of them parts of parts" \
    "$(sql "$TDB" "select group_concat(bucket || ' ' || lo || ' ' || hi, ';') from (select * from winners order by bucket)")" \
    "rows=2^10,cols=2^12/1408,2^12 1408,4096 1664,5760;rows=2^10,cols=2^12/1408,5760 1408,5760 2048,8192;rows=2^10,cols=2^12/1664,2^12 1664,4096 2048,5760;rows=2^10,cols=2^12/2^10,2^12 1024,4096 1408,5760;rows=2^10,cols=2^12/2^10,5760 1024,5760 1408,6848;rows=2^10,cols=2^12/2^10,6848 1024,6848 1408,8192"
expect_stdout "^split      softmax f32 rows=2\^10,cols=2\^12/1408,2\^12: rows \[1408, 2048\), cols \[4096, 5760\): its winner loses [0-9.]+%, more than 5\.0%: 2 parts of level 2, split along rows at 1664$" \
    "2-D: a part split again along rows only"
expect_stdout "^split      softmax f32 rows=2\^10,cols=2\^12/2\^10,5760: rows \[1024, 1408\), cols \[5760, 8192\): its winner loses [0-9.]+%, more than 5\.0%: 2 parts of level 2, split along cols at 6848$" \
    "2-D: another along cols only"
edges="cast(substr(lo, 1, instr(lo, ',') - 1) as integer) as r0, cast(substr(lo, instr(lo, ',') + 1) as integer) as c0,
       cast(substr(hi, 1, instr(hi, ',') - 1) as integer) as r1, cast(substr(hi, instr(hi, ',') + 1) as integer) as c1"
expect_eq "2-D: the parts tile the bucket: inside it, no two overlap, their areas add up to its" \
    "$(sql "$TDB" "with p as (select bucket, $edges from winners)
                   select (select count(*) from p where r0 < 1024 or c0 < 4096 or r1 > 2048 or c1 > 8192) || ' ' ||
                          (select count(*) from p a, p b where a.bucket < b.bucket and a.r0 < b.r1 and b.r0 < a.r1
                           and a.c0 < b.c1 and b.c0 < a.c1) || ' ' || (select sum((r1 - r0) * (c1 - c0)) from p)")" \
    "0 0 $((1024 * 4096))"
bad=0
while read -r b r0 c0 r1 c1 cfg; do
    for s in "$r0,$c0" "$((r1 - 1)),$((c1 - 1))" "$r0,$((c1 - 1))" "$((r1 - 1)),$c0"; do
        run "$AITUNE" lookup softmax --arch sm_90 --dtype f32 --shape "$s" --db "$TDB" --json
        got=$(sed -n 's/.*"level":"\([a-z]*\)".*"config":\({[^}]*}\),"bucket":"\([^"]*\)".*/\1 \3 \2/p' "$T/out")
        [ "$got" = "exact $b $cfg" ] || { bad=$((bad + 1)); echo "    $s: $got, want exact $b"; }
    done
done < <(sql "$TDB" "select bucket, $edges, config from winners" | tr '|' ' ')
expect_eq "2-D: lookup answers the four corners of every part from that part, with its winner" "$bad" 0
expect_retune_kept "$TMODE" "$TDB" "$T/nest2.yaml" 6 "2-D"
# The polish (split_polish): a searched part's winner raced over the part
# with its neighbours one param step away (search/polish.lua), then with the
# moves that paid, all at once; a line says what it raced and what won, and
# a new winner is the part's stored one.
expect_true "split_polish: 0 polishes nothing" sh -c "! grep -q '^polish' '$T/out'"
sed 's/^split_polish: 0/split_polish: 6/' "$T/parts.yaml" >"$T/polish.yaml"
rm -f "$T/trace"
AITUNE_TRACE="$T/trace" fake_sweep "$MODE" "$T/polish.db" "$T/polish.yaml"
expect_eq "a sweep with split_polish: 6 exits 0" "$RC" 0 || show_last
grep -E '^polish     axpy f32 n=2\^12/[0-9^]+: ' "$T/out" > "$T/polished"
nsearched=$(grep -cE '^split      axpy f32 n=2\^12/[0-9^]+: .*searched at ' "$T/out")
expect_true "each part searched is polished ($(wc -l < "$T/polished") lines, $nsearched searched)" \
    test "$(wc -l < "$T/polished")" -eq "$nsearched" -a "$nsearched" -ge 1
expect_true "each polish races 1 to 6 neighbours and their combination at most" \
    sh -c "! grep -vE ': [1-7] configs one move or more from its winner raced over it: ' '$T/polished'"
expect_eq "the trace names the config each polish started from" \
    "$(grep -cE '^[0-9.]+ gpu=0 polish axpy [^ ]+ axpy/vec: [1-7] configs raced in [0-9.]+ s around \{' "$T/trace")" "$nsearched"
bad=0
while read -r key cfg; do
    got=$(sql "$T/polish.db" "select config from winners where bucket = '$key'")
    [ -z "$got" ] || [ "$got" = "$cfg" ] || { bad=$((bad + 1)); echo "    $key: stored $got, polish won $cfg"; }
done < <(grep -E '^[0-9.]+ gpu=0 polish axpy [^ ]+ axpy/vec: \{.*\} wins' "$T/trace" | sed -E 's/^[0-9.]+ gpu=0 polish axpy ([^ ]+) axpy\/vec: (\{[^}]*\}) wins.*/\1 \2/')
expect_eq "a polish's new winner is its part's stored winner (where the part was kept)" "$bad" 0
# A polish that wins: ace:16 kernels take 9 us at every size, faster than
# any other; a 4-candidate bucket search and a 1-candidate part search (seed
# 2) miss them, and one is among the lower part's winner's neighbours.
sed -e 's/^name: parts/name: parts\nseed: 2/' -e 's/^max_evals: 16/max_evals: 4/' -e 's/^split_evals: 12/split_evals: 1/' \
    "$T/polish.yaml" >"$T/polish_ace.yaml"
fake_sweep shape_time,late:5760,ace:16 "$T/polish_ace.db" "$T/polish_ace.yaml"
expect_eq "a sweep whose polish finds an ace exits 0" "$RC" 0 || show_last
won=$(sed -nE 's/^polish     axpy f32 n=2\^12\/2\^12: [1-7] configs one move or more from its winner raced over it: axpy\/vec (\{[^}]*\}) wins, worst loss 0\.0% .*/\1/p' "$T/out")
expect_true "the lower part's polish finds a config that loses nothing in it (${won:-none})" test -n "$won"
expect_eq "and it is the part's stored winner, at the ace's 9 us" \
    "$(sql "$T/polish_ace.db" "select config || ' ' || median_us from winners where bucket = 'n=2^12/2^12'")" "$won 9.0"
# After a driver upgrade, retune races the stored winners again: the polished
# one (measured only in the polish's races, under no search's key) is kept.
expect_retune_kept shape_time,late:5760,ace:16 "$T/polish_ace.db" "$T/polish_ace.yaml" 2 "the polished sweep"
done_testing
