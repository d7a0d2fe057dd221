#!/usr/bin/env bash
# Ranges in specs (docs/SPEC.md): `rows: {range: [1, 20]}` tunes a bucket per
# log2 range and alignment class the range meets, each at its largest size of
# that class, and every size of the range is then answered from a bucket that
# holds it, by a winner tuned at a size of its class or a lower one, at most
# 7 below it (the fake worker plays the GPU).
. "$(dirname "$0")/lib.sh"

spec range.yaml <<'YAML'
name: range
search: random
max_evals: 2
top_k: 2
tasks:
  - op: softmax
    dtypes: [bf16]
    templates: [stream]
    shapes:
      rows: {range: [1, 20]}
      cols: {values: [1000]}
YAML
DB=$T/range.db
fake_sweep ok "$DB" "$T/range.yaml"
expect_eq "a range sweep exits 0" "$RC" 0 || show_last
keys=$(sql "$DB" "select group_concat(bucket || '@' || json_extract(shape, '$.rows'), ' ') from (select bucket, shape from winners order by json_extract(shape, '$.rows'))")
want="rows=2^0,cols=2^9@1 rows=2^1,cols=2^9@2 rows=2^1:align1,cols=2^9@3 rows=2^2,cols=2^9@4"
want="$want rows=2^2:align1,cols=2^9@7 rows=2^3,cols=2^9@8 rows=2^3:align1,cols=2^9@15"
want="$want rows=2^4,cols=2^9@16 rows=2^4:align1,cols=2^9@19"
expect_eq "a winner per bucket and class, tuned at its largest size" "$keys" "$want"

# Every size of the range: an exact answer from a bucket tuned at a size of
# a class the size meets, within one class period above it.
bad=""
for r in $(seq 1 20); do
    out=$("$AITUNE" lookup softmax --arch sm_90 --dtype bf16 --shape "$r,1000" --db "$DB" --json 2>&1)
    lvl=$(printf '%s' "$out" | sed -n 's/.*"level": *"\([a-z]*\)".*/\1/p')
    b=$(printf '%s' "$out" | sed -n 's/.*"bucket": *"\([^"]*\)".*/\1/p')
    tuned=$(sql "$DB" "select json_extract(shape, '$.rows') from winners where bucket = '$b'")
    cls() { local v=$1 c=1; while [ $((v % (c * 2))) -eq 0 ] && [ $c -lt 8 ]; do c=$((c * 2)); done; echo $c; }
    if [ "$lvl" != exact ] || [ -z "$tuned" ] || [ "$(cls "$tuned")" -gt "$(cls "$r")" ] || [ "$tuned" -lt $((r - 7)) ]; then
        bad="$bad $r($lvl,$b,$tuned)"
    fi
done
expect_eq "rows 1..20 each answered exactly by a winner that runs it, tuned at most 7 below it" "$bad" ""

# A range spec resumes like any other: nothing measured again.
expect_resumed ok "$DB" "$T/range.yaml" "select bucket || template || config from winners order by bucket"

# Rankings that flip at rows = 24 (the fake worker): a range bucket's winner,
# tuned at its largest size, is raced at the smaller sizes of its range too,
# and the bucket [16, 32) is split at 24 in both classes, each part tuned at
# its own largest size.
sed 's/\[1, 20\]/[1, 40]/' "$T/range.yaml" >"$T/flip.yaml"
fake_sweep flip_at:24,flip_dim:0 "$T/flip.db" "$T/flip.yaml"
expect_eq "the flipped range sweep exits 0" "$RC" 0 || show_last
parts=$(sql "$T/flip.db" "select group_concat(bucket || '@' || json_extract(shape, '$.rows'), ' ') from (select * from winners where bucket like 'rows=2^4%' order by bucket like '%align1%', json_extract(shape, '$.rows'))")
expect_eq "[16, 32) split at 24, parts tuned at 16 and 24 (class 8), 23 and 31 (class 1)" "$parts" \
    "rows=2^4,cols=2^9/2^4,2^9@16 rows=2^4,cols=2^9/24,2^9@24 rows=2^4:align1,cols=2^9/2^4,2^9@23 rows=2^4:align1,cols=2^9/24,2^9@31"
timed=$(sed -n 's/.* time .*task=\([0-9]*\),1000\/.*/\1/p' "$T/fake-state.log" | sort -n | uniq | tr '\n' ' ')
expect_true "the finalists are raced at the smaller sizes of each bucket's class: 17, 25 and 16 ($timed)" \
    sh -c "for x in 16 17 25; do case ' $timed' in *\" \$x \"*) ;; *) exit 1 ;; esac; done"
n=$(sql "$T/flip.db" "select count(*) from winners where bucket like 'rows=2^5%' and bucket like '%/%'")
expect_eq "[32, 64) holds rows 32..40 with no flip in it: not split" "$n" 0

# A range split alone along one dim is cut where its races show the best
# config changing, not at the geometric middle (sweep_split.c: split_cut):
# rankings flip at rows = 161, one past a tile boundary hold races (160,
# 161), and [128, 256) of a range tuning class 1 alone (so serving every
# size) is cut at 161, where the middle (192) would leave 161..191 with the
# sizes below. cols exact: rows is the only dim to split.
sed 's/{range: \[1, 20\]}/{range: [128, 255], align: [1]}/; s/{values: \[1000\]}/{values: [1000], exact: true}/' \
    "$T/range.yaml" >"$T/cut.yaml"
fake_sweep flip_at:161,flip_dim:0 "$T/cut.db" "$T/cut.yaml"
expect_eq "a range sweep whose rankings flip at 161 exits 0" "$RC" 0 || show_last
expect_stdout "^split +softmax bf16 rows=2\^7:align1,cols=1000: the winner loses [0-9.]+%, more than 5.0%: 2 parts, split along rows at 161$" \
    "the bucket is cut at 161, where the rankings flip"
expect_eq "two parts, [128, 161) and [161, 256), each holding every size it serves" \
    "$(sql "$T/cut.db" "select group_concat(substr(lo, 1, instr(lo, ',') - 1) || '-' || substr(hi, 1, instr(hi, ',') - 1), ' ')
                         from (select lo, hi from winners order by cast(substr(lo, 1, instr(lo, ',') - 1) as integer))")" \
    "128-161 161-256"
expect_stderr "^hold: .*0\.0% after splitting$" "no part's winner loses anywhere it was raced"
for r in 128 160 161 200; do
    want='/2\^7,1000'; [ $r -ge 161 ] && want=/161,1000
    run "$AITUNE" lookup softmax --arch sm_90 --dtype bf16 --shape "$r,1000" --db "$T/cut.db" --json
    expect_stdout "\"bucket\": *\"rows=2\^7:align1,cols=1000$want\"" "rows = $r is answered by the part ${want//\\/}"
done

# A point spec over the same op keeps its keys: values [16] is rows=2^4.
spec point.yaml <<'YAML'
name: point
search: random
max_evals: 2
tasks:
  - op: softmax
    dtypes: [bf16]
    templates: [stream]
    shapes:
      rows: {values: [16]}
      cols: {values: [1000]}
YAML
fake_sweep ok "$T/point.db" "$T/point.yaml"
expect_eq "the point spec's bucket keeps its key" "$(sql "$T/point.db" "select bucket || '@' || shape from winners")" \
    'rows=2^4,cols=2^9@{"rows":16,"cols":1000}'
done_testing
