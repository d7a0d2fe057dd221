#!/usr/bin/env bash
# A range that ends at an aligned width (bench/rows_vocab.yaml's cols
# [32000, 256000]) tunes its top log2 bucket in both classes, and each
# class's split parts answer the widths of that class: an aligned width
# (256000, 230000) from the aligned bucket's part, an odd one (255999,
# 230001) from the class-1 part, through libaitune's lookup (`aitune
# lookup`). Only where the aligned bucket is missing (a sweep cut by its
# budget before it: the top bucket's class 8 comes last in the queue, as its
# size 256000 is above class 1's 255999) does an aligned width take the
# class-1 part, exactly: what the fourth session's GPU run answered for
# rmsnorm at 256000 (bench/RESULTS.md). The fake worker plays the GPU.
. "$(dirname "$0")/lib.sh"

spec vocab.yaml <<'YAML'
name: vocab-classes
arch: sm_90a
search: random
seed: 3
max_evals: 3
top_k: 2
tasks:
  - op: rmsnorm
    dtypes: [bf16]
    templates: [stream]
    shapes: {rows: {values: [4096]}, cols: {range: [200000, 256000]}}
YAML
DB=$T/vocab.db
fake_sweep flip_at:230000,flip_dim:1 "$DB" "$T/vocab.yaml"
expect_eq "the range sweep exits 0" "$RC" 0 || show_last

# answer COLS [DB]: "LEVEL BUCKET" of libaitune's answer at 4096 x COLS.
answer() {
    run "$AITUNE" lookup rmsnorm --arch sm_90a --dtype bf16 --shape "4096,$1" --db "${2:-$DB}" --json
    sed -n 's/.*"level":"\([a-z]*\)".*"bucket":"\([^"]*\)".*/\1 \2/p' "$T/out"
}

whole=$(sql "$DB" "select group_concat(b, ' ') from (select distinct substr(bucket, 1, instr(bucket || '/', '/') - 1) b
                                                      from winners order by b)")
expect_eq "the top log2 bucket is tuned in both classes" "$whole" "rows=2^12,cols=2^17 rows=2^12,cols=2^17:align1"
n8=$(sql "$DB" "select count(*) from winners where bucket like 'rows=2^12,cols=2^17/%'")
n1=$(sql "$DB" "select count(*) from winners where bucket like 'rows=2^12,cols=2^17:align1/%'")
if [ "$n8" -ge 2 ] && [ "$n1" -ge 2 ]; then ok "both classes are split in parts ($n8 aligned, $n1 class 1)"
else fail "both classes are split in parts: $n8 aligned, $n1 class 1"; fi
tuned() { sql "$DB" "select json_extract(shape, '$.cols') from winners where bucket = '$1'"; }

# expect_part WIDTH KEY_PREFIX WHAT MOD: WIDTH answered by a part of KEY_PREFIX, tuned at
# a width whose remainder mod MOD is that of WIDTH (aligned: 0 mod 8; odd: 1 mod 2).
expect_part() {
    local a b
    a=$(answer "$1")
    b=${a#exact }
    case $a in
        "exact $2"*) ok "$3 $1: a part of its class answers ($b)" ;;
        *) fail "$3 $1: a part of its class answers: got '$a'" ;;
    esac
    expect_eq "... one tuned at a width of its class" "$(( $(tuned "$b") % $4 ))" "$(( $1 % $4 ))"
}
for c in 256000 230000 200000; do expect_part $c "rows=2^12,cols=2^17/" aligned 8; done
for c in 255999 230001 200001; do expect_part $c "rows=2^12,cols=2^17:align1/" odd 2; done

# The registry a budget cut leaves when the aligned bucket had not begun:
# the class-1 part answers the aligned width, exactly (a config tuned at an
# odd width runs at every width), and the odd width as before.
cp "$DB" "$T/cut.db"
sql "$T/cut.db" "delete from winners where bucket like 'rows=2^12,cols=2^17/%'" >/dev/null
a=$(answer 256000 "$T/cut.db")
case $a in
    "exact rows=2^12,cols=2^17:align1/"*) ok "without the aligned bucket, 256000 takes the class-1 part ($a)" ;;
    *) fail "without the aligned bucket, 256000 takes the class-1 part: got '$a'" ;;
esac
expect_eq "... the part that answers 255999" "$a" "$(answer 255999 "$T/cut.db")"

# Why the top bucket's aligned class is the one a budget cuts: its size
# (256000) is above class 1's (255999), so it is tuned last; in a full log2
# bucket class 8's (2^(k+1) - 8) comes first.
order=$(sed -n 's/.* time .*task=4096,\(25599[9]\|256000\)\/.*/\1/p' "$T/fake-state.log" | awk '!seen[$0]++' | tr '\n' ' ')
expect_eq "the top bucket's classes are timed class 1 first, then class 8" "$order" "255999 256000 "
done_testing
