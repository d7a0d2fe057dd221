#!/usr/bin/env bash
# Buckets that split (spec `hold: true` with `split_at`, issue 12), with the
# fake worker in mode flip_at: kernels' rankings flip at n = 5760, inside
# bucket n=2^12 = [4096, 8192) and exactly at its split point, so no config
# holds that bucket and each half has a clear winner; the buckets beside it
# have one ranking throughout and hold. Then what reads the registry:
# lookup (libaitune), emit, resume, retune, check, why, gc and merge.
. "$(dirname "$0")/lib.sh"

spec split.yaml <<'YAML'
name: split
search: random
max_evals: 8
top_k: 4
hold: true
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {log2: [11, 13]}
YAML
DB=$T/split.db
MODE=flip_at:5760
fake_sweep "$MODE" "$DB" "$T/split.yaml"
expect_eq "a sweep with hold and the default split_at exits 0" "$RC" 0 || show_last
cp "$T/out" "$T/sweep.out"
cp "$T/err" "$T/sweep.err"

# The registry: n=2^12's parts in place of it, edges partitioning it.
rows="select bucket || ' ' || lo || ' ' || hi from winners order by cast(lo as integer)"
expect_eq "n=2^12 is stored as two parts beside the buckets that held" "$(sql "$DB" "$rows" | tr '\n' ';')" \
    "n=2^11 2048 4096;n=2^12/2^12 4096 5760;n=2^12/5760 5760 8192;n=2^13 8192 16384;"
expect_eq "no winner row for the split bucket itself" "$(sql "$DB" "select count(*) from winners where bucket = 'n=2^12'")" 0
expect_eq "each part is a whole winner: shape, time, template, config, runners-up, cubin, launch plan, device, run" \
    "$(sql "$DB" "select count(*) from winners where bucket like 'n=2^12/%' and median_us > 0 and template = 'axpy/vec'
                  and json_valid(config) and json_array_length(runners_up) >= 1 and cubin is not null
                  and launch like '{%kernel%' and device is not null and run is not null")" 2
expect_eq "each part is tuned at its own size" \
    "$(sql "$DB" "select shape from winners where bucket like 'n=2^12/%' order by cast(lo as integer)" | tr '\n' ' ')" \
    '{"n":4096} {"n":5760} '
expect_eq "the parts' winners differ (the ranking flips between them)" \
    "$(sql "$DB" "select count(distinct config) from winners where bucket like 'n=2^12/%'")" 2
# Each part's winner is the fastest of its finalists at its own size.
expect_eq "each part's winner beats every runner-up it stores" \
    "$(sql "$DB" "select count(*) from winners w, json_each(w.runners_up) f where w.bucket like 'n=2^12/%'
                  and json_extract(f.value, '$.median_us') < w.median_us")" 0

# What the sweep said.
cat "$T/sweep.out" >"$T/out"
expect_stdout "^split      axpy f32 n=2\^12: the winner loses [0-9.]+%, more than 5\.0%: 2 parts, split along n at 5760$" \
    "a split line says why and where the bucket was split"
expect_stdout "^split      axpy f32 n=2\^12/2\^12: n \[4096, 5760\): axpy/vec \{.*\}, worst loss 0\.0% " \
    "the lower part's winner holds it: worst loss 0.0%"
expect_stdout "^split      axpy f32 n=2\^12/5760: n \[5760, 8192\): axpy/vec \{.*\}, worst loss 0\.0% " \
    "and the upper part's"
expect_stdout "^axpy +f32 +n=2\^12/5760 +[0-9.]+ us" "each part gets its winner's line"
expect_eq "the buckets that hold are not split" "$(grep -c '^split  *axpy f32 n=2^1[13]' "$T/out")" 0
expect_stdout "^hold       axpy f32 n=2\^11: the race's winner loses 0\.0% .*it stays" "n=2^11 holds with one ranking"
cat "$T/sweep.err" >"$T/err"
expect_stderr "^hold: 3 buckets probed at other sizes than their own, [0-9]+ winners? changed, 1 bucket split in 2 parts; .* after hold, 0\.0% after splitting$" \
    "the summary counts the split and the worst loss after splitting"
grep -q 'task=5696/f32' "$T/fake-state.log" && ok "the lower part was raced at its upper edge, 5696" || fail "no race at n=5696"

# Lookup (libaitune) answers from the parts.
lookup() {
    run "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape "$1" --db "$DB" --json
    sed -n 's/.*"level":"\([a-z]*\)".*"bucket":"\([^"]*\)".*/\1 \2/p' "$T/out"
}
got=""
for n in 3000 4096 5000 5759 5760 8191 8192; do got="$got$n:$(lookup $n);"; done
expect_eq "lookup answers each shape from its part, exactly" "$got" \
    "3000:exact n=2^11;4096:exact n=2^12/2^12;5000:exact n=2^12/2^12;5759:exact n=2^12/2^12;5760:exact n=2^12/5760;8191:exact n=2^12/5760;8192:exact n=2^13;"
run "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape 7000 --db "$DB"
expect_stdout "^axpy/vec $(sql "$DB" "select config from winners where bucket = 'n=2^12/5760'" | sed 's/[]{}[]/\\&/g')  \(exact: tuned bucket n=2\^12/5760" \
    "and with the part's config"

# emit: every part is a kernel of the dispatcher, which picks as lookup does.
expect_exit 0 "emit the whole op" "$AITUNE" emit axpy --arch sm_90 --dtype f32 --db "$DB" -o "$T/all.cu"
# One launcher ("// kernel N: bucket ...") per stored winner; two winners
# with the same config share one kernel body ("// ---- kernel N").
expect_eq "4 kernels, one per stored winner" "$(grep -c '^// kernel [0-9]*: bucket' "$T/all.cu")" 4
if command -v cc >/dev/null 2>&1; then
    { echo '#include <math.h>'; echo '#include <stdio.h>'; echo '#include <stdlib.h>'
      sed -n '/^static const long long aitune_lo/,/^}/p' "$T/all.cu"
      echo 'int main(int c, char **v) { for (int i = 1; i < c; i++) { long long s = atoll(v[i]); printf("%d ", aitune_pick(&s)); } return 0; }'
    } >"$T/pick.c"
    if cc -o "$T/pick" "$T/pick.c" -lm 2>"$T/cc.err"; then
        picks=""
        for k in $("$T/pick" 3000 5000 5759 5760 8191 8192); do
            picks="$picks$(sed -n "s|^// kernel $k: bucket \([^:]*\):.*|\1|p" "$T/all.cu") "
        done
        expect_eq "the emitted dispatcher picks each part's kernel for its shapes" "$picks" \
            "n=2^11 n=2^12/2^12 n=2^12/2^12 n=2^12/5760 n=2^12/5760 n=2^13 "
    else
        fail "the emitted dispatcher compiles as C: $(head -3 "$T/cc.err")"
    fi
else
    skip "the emitted dispatcher picks each part's kernel: no cc"
fi

# why: the part that holds a shape, under its bucket.
run "$AITUNE" why axpy --dtype f32 --shape 6000 --db "$DB"
expect_eq "why exits 0" "$RC" 0
expect_stdout "^split in 2 parts" "why says the bucket is split"
expect_stdout "^part n=2\^12/5760:" "and shows the part holding the shape"
expect_no_stdout "^part n=2\^12/2\^12:" "not the other part"
run "$AITUNE" why axpy --dtype f32 --bucket 'n=2^12/5760' --db "$DB"
expect_stdout "^measured: [1-9][0-9]* candidates" "a part's measurements are its bucket's"
run "$AITUNE" emit axpy --arch sm_90 --dtype f32 --shape 6000 --db "$DB" -o -
expect_stdout "^// Chosen at level 'exact': bucket n=2\^12/5760:" "emit for one shape takes its part's kernel"

# Resume: the same sweep again measures nothing and splits the same way.
key="select bucket, lo, hi, template, config from winners order by bucket"
before=$(sql "$DB" "$key")
expect_resumed "$MODE" "$DB" "$T/split.yaml" "$key"

# split_at: 0 stores the bucket whole again, in place of its parts; the
# default splits it again.
sed 's/^hold: true/hold: true\nsplit_at: 0/' "$T/split.yaml" >"$T/whole.yaml"
fake_sweep "$MODE" "$DB" "$T/whole.yaml"
expect_eq "split_at: 0 exits 0" "$RC" 0 || show_last
expect_eq "split_at: 0: n=2^12 whole, its parts gone" "$(sql "$DB" "select group_concat(bucket, ' ') from (select bucket from winners order by bucket)")" \
    "n=2^11 n=2^12 n=2^13"
if grep -q '^split' "$T/out"; then fail "split_at: 0 splits nothing"; else ok "split_at: 0 splits nothing"; fi
cp "$DB" "$T/whole.db"
fake_sweep "$MODE" "$DB" "$T/split.yaml"
expect_eq "split again: the same parts" "$(sql "$DB" "$key")" "$before"

# A higher split_at keeps a bucket whose winner loses less than it whole.
sed 's/^hold: true/hold: true\nsplit_at: 1/' "$T/split.yaml" >"$T/high.yaml"
fake_sweep "$MODE" "$T/high.db" "$T/high.yaml"
worst=$(sed -n 's/^hold       axpy f32 n=2^12: .*worst loss \([0-9.]*\)%.*/\1/p' "$T/out" | tail -1)
[ -z "$worst" ] && worst=$(sed -n "s/^hold       axpy f32 n=2^12: the race's winner loses \([0-9.]*\)%.*/\1/p" "$T/out")
if awk -v w="$worst" 'BEGIN { exit !(w <= 100) }'; then
    expect_eq "split_at: 1 with a worst loss of $worst%: not split" "$(sql "$T/high.db" "select count(*) from winners where bucket like '%/%'")" 0
else
    expect_eq "split_at: 1 with a worst loss of $worst%: split" "$(sql "$T/high.db" "select count(*) from winners where bucket like '%/%'")" 2
fi

# Bad values: exit 3, one line naming the file, line and field.
for bad in "lots" "1.5" "-0.1" "nan"; do
    sed "s/^hold: true/hold: true\nsplit_at: $bad/" "$T/split.yaml" >"$T/bad.yaml"
    fake_sweep "$MODE" "$T/bad.db" "$T/bad.yaml"
    expect_eq "split_at: $bad is a bad spec (exit 3)" "$RC" 3
    expect_stderr "^aitune: error: spec '.*bad.yaml' line 6: 'split_at' must be a fraction in \[0, 1\]" "split_at: $bad: the error names file, line and field"
    expect_stderr_lines 1 "split_at: $bad: one line"
done
[ -e "$T/bad.db" ] && fail "a bad spec leaves no registry" || ok "a bad spec leaves no registry"

# check: each part re-timed at its own size.
run env AITUNE_WORKER="$FAKE" FAKE_MODE="$MODE" "$AITUNE" check "$T/split.yaml" --db "$DB" --quiet
expect_eq "check exits 0" "$RC" 0 || show_last
expect_stdout "^ok         axpy f32 n=2\^12/2\^12: " "check re-times the lower part"
expect_stdout "^ok         axpy f32 n=2\^12/5760: " "and the upper part"
expect_stdout "^check: 4 winners checked: 4 ok, 0 regressed" "four winners checked"

# retune after a driver upgrade: the split bucket is stale too (its parts'
# stamps are its own), its parts' finalists are raced again and it splits
# the same way, without a search.
sqlite3 "$DB" "update devices set driver = '550.1' where driver = 'fake'"
nmeas=$(sql "$DB" "select count(*) from measurements")
run env AITUNE_WORKER="$FAKE" FAKE_MODE="$MODE" "$AITUNE" retune "$T/split.yaml" --db "$DB" --quiet
expect_eq "retune exits 0" "$RC" 0 || show_last
expect_stdout "^retune axpy f32 n=2\^12: split in 2 parts, [0-9]+ finalists raced again: now 2 parts, 2 winners kept" \
    "retune re-races the split bucket's finalists and keeps its parts"
expect_stdout "^retune: 3 stale buckets re-raced, 0 searched again" "the split bucket counts as tuned and stale, not untuned"
expect_eq "the parts' winners are the same" "$(sql "$DB" "$key")" "$before"
expect_eq "the parts are this run's" "$(sql "$DB" "select count(*) from winners where bucket like 'n=2^12/%' and run = (select max(id) from runs)")" 2
run env AITUNE_WORKER="$FAKE" "$AITUNE" status --db "$DB"
expect_eq "after retune, status is fresh" "$RC" 0 || show_last

# gc keeps what the parts need: their measurements (their bucket's) and
# cubins; retune still races them without compiling.
expect_exit 0 "gc" "$AITUNE" gc --db "$DB"
expect_eq "gc keeps the parts' winners' measurements in their bucket" \
    "$(sql "$DB" "select count(distinct w.bucket) from winners w join measurements m on m.bucket = 'n=2^12' and m.config = w.config
                  and m.template = w.template where w.bucket like 'n=2^12/%'")" 2
expect_eq "and every part's cubin" "$(sql "$DB" "select count(*) from winners w join cubins c on c.hash = w.cubin where w.bucket like 'n=2^12/%'")" 2

# merge: a split bucket's parts replace the same GPU's whole winner, both ways.
expect_exit 0 "merge a whole n=2^12 into the split registry" "$AITUNE" merge "$T/m1.db" "$DB" "$T/whole.db"
expect_eq "the parts win" "$(sql "$T/m1.db" "select group_concat(bucket, ' ') from (select bucket from winners order by bucket)")" \
    "n=2^11 n=2^12/2^12 n=2^12/5760 n=2^13"
expect_exit 0 "merge the split registry into a whole one" "$AITUNE" merge "$T/m2.db" "$T/whole.db" "$DB"
expect_eq "the parts win again" "$(sql "$T/m2.db" "select group_concat(bucket, ' ') from (select bucket from winners order by bucket)")" \
    "n=2^11 n=2^12/2^12 n=2^12/5760 n=2^13"

# Two dims: the ranking flips along cols only, so the parts along rows
# would keep the same winners: the bucket is split along cols alone.
spec two.yaml <<'YAML'
name: two
search: random
max_evals: 6
top_k: 4
hold: true
tasks:
  - op: softmax
    dtypes: [f32]
    templates: [stream]
    shapes:
      rows: {values: [1024]}
      cols: {values: [4096]}
YAML
fake_sweep flip_at:5760,flip_dim:1 "$T/two.db" "$T/two.yaml"
expect_eq "a 2-D sweep exits 0" "$RC" 0 || show_last
expect_eq "split along cols only: rows stay whole" "$(sql "$T/two.db" "select bucket || ' ' || lo || ' ' || hi from winners order by bucket" | tr '\n' ';')" \
    "rows=2^10,cols=2^12/2^10,2^12 1024,4096 2048,5760;rows=2^10,cols=2^12/2^10,5760 1024,5760 2048,8192;"
expect_stdout "2 parts, split along cols at 5760$" "the split line names the dim"
run "$AITUNE" lookup softmax --arch sm_90 --dtype f32 --shape 1900,6000 --db "$T/two.db"
expect_stdout "exact: tuned bucket rows=2\^10,cols=2\^12/2\^10,5760" "a 2-D shape is answered from its part"
done_testing
