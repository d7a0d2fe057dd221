#!/usr/bin/env bash
# tests/run: slow 22 (emitted files with a vendor part built by nvcc)
# The vendor in the loop, without a GPU (issue 33): fake sweeps of gemm_nt
# where the fake worker plays cuBLASLt with a deterministic time
# (FAKE_VENDOR_US). The sweep times the vendor at each bucket's shape and
# races it against each winner; where the vendor is faster it holds the
# bucket, or a split bucket's part. The sweep's lines and summary, show,
# why, report, status, export and merge say x vendor and count the vendor's
# buckets; resume, retune and check handle them; --vendor time and off; a
# missing or wrong vendor is a recorded measurement, never a failed sweep;
# an old registry (schema 4) reads without vendor rows and is migrated by a
# write; lookup answers the vendor's bucket; emit writes a file whose
# dispatcher calls cuBLASLt there, built by nvcc and linked with -lcublasLt;
# a vendor row the vendor cannot serve is refused as bad input.
. "$(dirname "$0")/lib.sh"

spec g.yaml <<'EOF'
name: g
max_evals: 2
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [mma]
    shapes: {m: {values: [16, 64]}, n: {values: [256]}, k: {values: [256]}}
EOF
B16='m=2^4,n=2^8,k=2^8'
B64='m=2^6,n=2^8,k=2^8'
# g.yaml's kernels, compiled once: each new registry of a sweep of g.yaml
# below starts with them (cubin_seed), so the sweep does not wait for NVRTC
# (what this file checks is the vendor's part, not the compiles).
fake_sweep ok "$T/kernels.db" "$T/g.yaml" --keep-cubins
[ "$RC" = 0 ] || { fail "a sweep of g.yaml for its kernels: exit $RC"; show_last; }
gsweep() {   # gsweep MODE DB [args...]: a fake sweep of g.yaml
    local mode=$1 db=$2
    shift 2
    [ -e "$db" ] || cubin_seed "$T/kernels.db" "$db"
    fake_sweep "$mode" "$db" "$T/g.yaml" "$@"
}
vsweep() {   # vsweep VENDOR_US DB [args...]: a fake sweep of g.yaml
    local us=$1 db=$2
    shift 2
    FAKE_VENDOR_US=$us gsweep ok "$db" "$@"
}

# The vendor slower everywhere (50 us): timed, raced, never a winner.
DB=$T/lose.db
vsweep 50 "$DB"
expect_eq "a fake GEMM sweep with the vendor exits 0" "$RC" 0 || show_last
expect_eq "the registry is schema 8" "$(sql "$DB" "select value from meta where key = 'schema_version'")" 8
expect_eq "the vendor timed at each bucket's shape, as the candidates (flush)" \
    "$(sql "$DB" "select group_concat(json_extract(shape, '\$.m') || ':' || timing || ':' || status || ':' || median_us, ' ')
                  from (select * from vendor_times order by json_extract(shape, '\$.m'))")" "16:flush:ok:50.0 64:flush:ok:50.0"
expect_eq "with the hardware it ran on, the library and the heuristic's choice" \
    "$(sql "$DB" "select count(*) from vendor_times v join devices d on d.hw = v.hw where library = 'cuBLASLt fake' and algo like 'algo %'")" 2
expect_eq "the worker was asked for the vendor (load, then race)" "$(grep -c ' vendor gpu=0$' "$T/fake-state.log")" 4
expect_eq "no winner is the vendor's" "$(sql "$DB" "select count(*) from winners where template = 'vendor/cublaslt'")" 0
expect_stdout "^gemm_nt +bf16 +m=2\^4,n=2\^8,k=2\^8 .* [0-9.]+x vendor  gemm_nt/mma" "each winner's line gives x vendor"
expect_stderr "^vendor: cuBLASLt timed at 2 shapes, raced against 2 winners; winners [0-9.]+x the vendor \(geometric mean of 2\), worst [0-9.]+x; the vendor holds 0 buckets or parts$" \
    "the summary says what the vendor did"
w16=$(sql "$DB" "select median_us from winners where bucket = '$B16'")
x16=$(python3 -c "print('%.2fx' % (50.0 / $w16))")
expect_exit 0 "show" "$AITUNE" show --db "$DB"
expect_stdout "^op .* vs dflt +x vendor +template config" "show has an x vendor column"
expect_stdout "^gemm_nt +sm_90 +bf16 +m=2\^4,n=2\^8,k=2\^8 .* ${x16//./\\.} +gemm_nt/mma" "the m=16 winner is $x16 the vendor"
expect_exit 0 "show --json" "$AITUNE" show --db "$DB" --json
got=$(python3 -c 'import json,sys; w={x["bucket"]: x for x in json.load(sys.stdin)}
a = w["m=2^4,n=2^8,k=2^8"]
print(a["vendor_us"], round(a["x_vendor"] * a["median_us"], 1))' <"$T/out" 2>&1)
expect_eq "show --json: vendor_us and x_vendor" "$got" "50.0 50.0"
expect_exit 0 "why --shape 16,256,256" "$AITUNE" why gemm_nt --dtype bf16 --shape 16,256,256 --db "$DB"
expect_stdout "^  ${x16//./\\.} the vendor \(cuBLASLt: 50\.00 us at the same shape, timed the same way\)" "why gives x vendor"
expect_stdout "^the vendor \(cuBLASLt fake\), timed as the candidates:" "why lists the vendor's measurements"
expect_stdout '^ +50\.00 us +1\.0% +at \{"m":16,"n":256,"k":256\}  algo 0 ' "with its shape and algorithm"
expect_exit 0 "report" "$AITUNE" report -o "$T/r.html" --db "$DB"
expect_true "report plots x vendor" grep -q '<svg class="vendor"' "$T/r.html"
expect_true "and has the column, $x16 for m=16" grep -q "<th>x vendor</th>.*" "$T/r.html"
expect_true "... with $x16" grep -q "<td>$x16</td>" "$T/r.html"

# Resume: the buckets are decided (src/sweep_resume.h), the vendor's times
# in the registry: the same sweep again asks the vendor nothing.
vsweep 50 "$DB"
expect_stderr "^sweep: nothing to do: all 2 buckets are decided" "a second sweep does nothing"
expect_eq "nor times the vendor again" "$(grep -c ' vendor gpu=0$' "$T/fake-state.log")" 0

# Faster at m >= 64 (5 us): the vendor holds that bucket.
DB=$T/win.db
vsweep 50,5@64 "$DB"
expect_eq "a sweep where the vendor wins m=64 exits 0" "$RC" 0 || show_last
expect_eq "the m=64 winner is the vendor: config {}, no cubin, its plan, the beaten template its runner-up" \
    "$(sql "$DB" "select template || ' ' || config || ' ' || median_us || ' ' || (cubin is null) || ' '
                  || json_extract(launch, '\$.kernel') || ' ' || json_extract(runners_up, '\$[0].template')
                  || ' ' || (margin > 0) from winners where bucket = '$B64'")" \
    "vendor/cublaslt {} 5.0 1 cublaslt gemm_nt/mma 1"
expect_eq "the m=16 winner is a template's" "$(sql "$DB" "select template from winners where bucket = '$B16'")" gemm_nt/mma
expect_stdout "^gemm_nt +bf16 +m=2\^6,n=2\^8,k=2\^8 +5\.00 us .*the vendor's  vendor/cublaslt \{\}" "its line says so"
expect_stderr "the vendor holds 1 bucket or part$" "the summary counts it"
AITUNE_WORKER=$FAKE run "$AITUNE" status --db "$DB"
expect_stdout "^the vendor \(cuBLASLt\) holds 1 bucket or part: no template beat it there" "status counts the vendor's bucket"
AITUNE_WORKER=$FAKE run "$AITUNE" status --db "$DB" --json
expect_eq "status --json: vendor 1" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["vendor"])' <"$T/out" 2>&1)" 1
expect_exit 0 "lookup m=100 (in the vendor's bucket)" "$AITUNE" lookup gemm_nt --arch sm_90 --dtype bf16 --shape 100,300,300 --db "$DB" --json
expect_eq "answers the vendor" "$(python3 -c 'import json,sys; c=json.load(sys.stdin); print(c["level"], c["template"], c["config"])' <"$T/out" 2>&1)" \
    "exact vendor/cublaslt {}"
expect_exit 0 "why on the vendor's bucket" "$AITUNE" why gemm_nt --dtype bf16 --shape 64,256,256 --db "$DB"
expect_stdout "^  the vendor itself \(cuBLASLt\): no template beat it here" "why says the vendor holds it"
expect_exit 0 "show" "$AITUNE" show --db "$DB"
expect_stdout "^gemm_nt +sm_90 +bf16 +m=2\^6,n=2\^8,k=2\^8 .* 1\.00x +vendor/cublaslt \{\}" "show lists the vendor's bucket"

# retune (after a driver upgrade: every bucket stale) and check on a
# registry where the vendor holds a bucket (a copy: the rest reads win.db).
cp "$DB" "$T/retune.db"
DB=$T/retune.db
FAKE_VENDOR_US=50,5@64 run env AITUNE_WORKER="$FAKE" FAKE_DRIVER=fake-2 "$AITUNE" retune "$T/g.yaml" --db "$DB" --quiet
expect_eq "retune exits 0" "$RC" 0 || show_last
expect_stdout "^retune gemm_nt bf16 m=2\^6,n=2\^8,k=2\^8: the vendor's bucket, 1 template finalist raced again: the vendor kept$" \
    "retune races the beaten template and the vendor again, without searching"
expect_eq "the vendor still holds it" "$(sql "$DB" "select template from winners where bucket = '$B64'")" vendor/cublaslt
FAKE_VENDOR_US=50 run env AITUNE_WORKER="$FAKE" FAKE_DRIVER=fake-3 "$AITUNE" retune "$T/g.yaml" --db "$DB" --quiet
expect_stdout "^retune gemm_nt bf16 m=2\^6,n=2\^8,k=2\^8: the vendor's bucket, .*: a template wins now$" \
    "with the vendor slower now, retune gives the bucket back to a template"
expect_eq "stored" "$(sql "$DB" "select template from winners where bucket = '$B64'")" gemm_nt/mma
vsweep 50,5@64 "$T/check.db"
FAKE_VENDOR_US=50,5@64 run env AITUNE_WORKER="$FAKE" "$AITUNE" check "$T/g.yaml" --db "$T/check.db" --quiet
expect_stdout "^ok +gemm_nt bf16 m=2\^6,n=2\^8,k=2\^8: 5\.00 us -> 5\.00 us \(\+0\.0%; the vendor\)$" "check re-times the vendor's bucket"
FAKE_VENDOR_US=50,9@64 run env AITUNE_WORKER="$FAKE" "$AITUNE" check "$T/g.yaml" --db "$T/check.db" --quiet
expect_stdout "^REGRESSED +gemm_nt bf16 m=2\^6,n=2\^8,k=2\^8: 5\.00 us -> 9\.00 us .*; the vendor\)" "and says when it got slower"

# --vendor time: timed, never a winner; --vendor off: not timed at all.
vsweep 50,5@64 "$T/time.db" --vendor time
expect_eq "--vendor time: timed at both shapes" "$(sql "$T/time.db" "select count(*) from vendor_times where status = 'ok'")" 2
expect_eq "... and holds nothing, faster or not" "$(sql "$T/time.db" "select count(*) from winners where template = 'vendor/cublaslt'")" 0
expect_stdout "^gemm_nt +bf16 +m=2\^6,n=2\^8,k=2\^8 .* 0\.[0-9]+x vendor  gemm_nt/mma" "... where the winner's x vendor is below 1"
vsweep 5 "$T/off.db" --vendor off
expect_eq "--vendor off: no vendor rows" "$(sql "$T/off.db" "select count(*) from vendor_times")" 0
expect_no_stdout "vendor" "and no x vendor"
expect_eq "... and the worker was never asked" "$(grep -c ' vendor gpu=' "$T/fake-state.log")" 0
expect_exit 2 "--vendor bad is a usage error" "$AITUNE" sweep "$T/g.yaml" --db "$T/x.db" --vendor maybe
expect_stderr "--vendor 'maybe' is not win, time or off" "and says why"

# A missing or wrong vendor is a measurement: the sweep goes on.
FAKE_VENDOR_US=5 gsweep novendor "$T/nov.db"
expect_eq "without cuBLASLt the sweep exits 0" "$RC" 0 || show_last
expect_eq "its winners are the templates'" "$(sql "$T/nov.db" "select group_concat(distinct template) from winners")" gemm_nt/mma
expect_eq "the vendor's rows say why, with no time" \
    "$(sql "$T/nov.db" "select count(*) from vendor_times where status = 'runtime' and median_us is null and error like 'cannot open cuBLASLt%'")" 2
expect_eq "one warning, not one per bucket" "$(grep -c 'the vendor (cuBLASLt) is not timed' "$T/err")" 1
expect_stderr ", [0-9]+ failed; .*the vendor holds 0" "the summary counts the failures"
FAKE_VENDOR_US=5 gsweep vendor_wrong "$T/wrong.db"
expect_eq "a vendor that answers wrong: exit 0" "$RC" 0 || show_last
expect_eq "recorded wrong" "$(sql "$T/wrong.db" "select count(*) from vendor_times where status = 'wrong'")" 2
expect_eq "and never a winner, however fast" "$(sql "$T/wrong.db" "select count(*) from winners where template = 'vendor/cublaslt'")" 0

# hold: rankings flip at n = 384 inside the bucket, and the vendor is fast
# from there: the bucket splits, and the vendor holds the upper part.
spec h.yaml <<'EOF'
name: h
search: random
max_evals: 4
top_k: 4
hold: true
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [mma]
    shapes: {m: {log2: [5, 5]}, n: {values: [256]}, k: {values: [256]}}
EOF
FAKE_VENDOR_US=50,5@384 fake_sweep flip_at:384,flip_dim:1 "$T/h.db" "$T/h.yaml"
expect_eq "a held, split sweep exits 0" "$RC" 0 || show_last
expect_eq "the part from n = 384 is the vendor's, the others templates'" \
    "$(sql "$T/h.db" "select group_concat(json_extract(shape, '\$.n') || ':' || template, ' ') from
                      (select * from winners order by json_extract(shape, '\$.n'))")" \
    "256:gemm_nt/mma 320:gemm_nt/mma 384:vendor/cublaslt"
expect_eq "the vendor was timed at each part's size (hold's other sizes too), under the bucket's key" \
    "$(sql "$T/h.db" "select count(distinct json_extract(shape, '\$.n')) || ' ' || count(distinct bucket) from vendor_times
                      where json_extract(shape, '\$.n') in (256, 320, 384)")" "3 1"
expect_exit 0 "lookup n = 400: the vendor's part" "$AITUNE" lookup gemm_nt --arch sm_90 --dtype bf16 --shape 40,400,300 --db "$T/h.db"
expect_stdout "vendor/cublaslt" "answers the vendor"

# The vendor is hold's bar as well as the finalists (sweep_probe.h): a range
# bucket [128, 256) of m whose template winner is fastest of the finalists
# everywhere, where cuBLASLt is faster from m = 192 on (5 us; 1000 below).
spec vr.yaml <<'EOF'
name: vr
search: random
max_evals: 3
top_k: 3
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [mma]
    shapes: {m: {range: [128, 255], align: [1]}, n: {values: [256], exact: true}, k: {values: [256], exact: true}}
EOF
vr_parts() { sql "$1" "select group_concat(json_extract(shape, '\$.m') || ':' || template, ' ') from
                       (select * from winners order by json_extract(shape, '\$.m'))"; }
FAKE_VENDOR_US=1000,5@192 fake_sweep ok "$T/vr-off.db" "$T/vr.yaml" --vendor off
expect_eq "--vendor off: no bar beside the finalists, one winner holds the bucket" "$(vr_parts "$T/vr-off.db")" "255:gemm_nt/mma"
cubin_seed "$T/vr-off.db" "$T/vr-time.db"
FAKE_VENDOR_US=1000,5@192 fake_sweep ok "$T/vr-time.db" "$T/vr.yaml" --vendor time
expect_eq "--vendor time: a sweep with the vendor as hold's bar exits 0" "$RC" 0 || show_last
expect_stdout "^hold +gemm_nt bf16 m=2\^7:align1,n=256,k=256: the race's winner loses [0-9.]+% \(at (the representative|[0-9]+x256x256), behind the vendor\)" \
    "hold says its winner loses to the vendor, and where"
expect_stdout "^split +gemm_nt bf16 m=2\^7:align1,n=256,k=256.*: its winner loses [0-9.]+% \(at (19[2-9]|2[0-5][0-9])x256x256, behind the vendor\): searched at (19[2-9]|2[0-5][0-9])x256x256" \
    "a part where the vendor is faster gets a search of its own there"
expect_eq "the vendor was timed at every size hold raced" \
    "$(sql "$T/vr-time.db" "select count(distinct shape) >= 6 from vendor_times")" 1
expect_true "no winner is the vendor's: only timed" sh -c "! sqlite3 '$T/vr-time.db' 'select template from winners' | grep -q vendor"
expect_stderr "^hold: .*the worst loss of a winner against the fastest finalist or the vendor there" "the summary says the vendor is a bar"
cubin_seed "$T/vr-off.db" "$T/vr-win.db"
FAKE_VENDOR_US=1000,5@192 fake_sweep ok "$T/vr-win.db" "$T/vr.yaml" --vendor win
expect_eq "--vendor win: exits 0" "$RC" 0 || show_last
got=$(vr_parts "$T/vr-win.db")
expect_true "the vendor holds the parts from m = 192 on, a template the rest ($got)" \
    sh -c "printf '%s\n' '$got' | grep -Eq '^([0-9]+:gemm_nt/mma )+(2[0-9][0-9]:vendor/cublaslt ?)+$' &&
           ! printf '%s\n' '$got' | grep -Eq '(^| )1[0-9][0-9]:vendor|(^| )(19[2-9]|2[0-9][0-9]):gemm_nt'"
for m in 130 191 192 240; do
    want=gemm_nt/mma; [ $m -ge 192 ] && want=vendor/cublaslt
    run "$AITUNE" lookup gemm_nt --arch sm_90 --dtype bf16 --shape $m,256,256 --db "$T/vr-win.db"
    expect_stdout "$want" "lookup m = $m answers $want"
done

# The bar is raced beside the finalists (sweep_vendor.h: sweep_vendor_bar_load),
# not timed apart: the fake vendor is fast timed alone from m = 192 on
# (FAKE_VENDOR_ALONE_US) and slow raced beside other slots, so hold sees no
# vendor ahead anywhere, and the trace says each bar was raced.
cubin_seed "$T/vr-off.db" "$T/vrr.db"
FAKE_VENDOR_US=1000 FAKE_VENDOR_ALONE_US=1000,5@192 AITUNE_TRACE=$T/vrr.trace \
    fake_sweep ok "$T/vrr.db" "$T/vr.yaml" --vendor time
expect_eq "a sweep whose vendor is fast only alone exits 0" "$RC" 0 || show_last
expect_no_stdout "behind the vendor" "hold's bar is the vendor raced beside the finalists, not timed alone"
expect_true "every probe's bar was raced, at the raced time" \
    sh -c "grep ' probe gemm_nt ' '$T/vrr.trace' | grep -q . && ! grep ' probe gemm_nt ' '$T/vrr.trace' | grep -v ' bar=raced .*vendor_us=1000.00$'"
expect_eq "the vendor's rows at hold's sizes hold the raced time" \
    "$(sql "$T/vrr.db" "select count(*) from vendor_times where json_extract(shape, '\$.m') >= 192 and median_us < 100")" 0

# A part behind the vendor by less than split_at, or within 2% of it (a
# tie, VENDOR_TIE), gets a search of its own all the same (sweep_split.c,
# split_settle): rankings flip at m = 192, so vr.yaml's bucket splits there;
# the vendor is then set 1% faster than the upper part's winner, 1% slower
# (a tie), or 5% slower (ahead: no search), from m = 192 on.
cubin_seed "$T/vr-off.db" "$T/vb-off.db"
fake_sweep flip_at:192 "$T/vb-off.db" "$T/vr.yaml" --vendor off
expect_eq "flip_at:192: a sweep without the vendor exits 0" "$RC" 0 || show_last
up="select median_us from winners where bucket like '%/192,%'"
t_up=$(sql "$T/vb-off.db" "$up")
expect_true "the bucket splits at m = 192 (the upper part's winner: $t_up us)" test -n "$t_up"
for side in behind tie ahead; do
    case $side in behind) f=0.99 ;; tie) f=1.01 ;; ahead) f=1.05 ;; esac
    us=$(python3 -c "print(round($t_up * $f, 3))")
    cubin_seed "$T/vr-off.db" "$T/vb-$side.db"
    FAKE_VENDOR_US=1000,$us@192 fake_sweep flip_at:192 "$T/vb-$side.db" "$T/vr.yaml" --vendor time
    expect_eq "vendor $us us from m = 192 (the part's winner $side): exits 0" "$RC" 0 || show_last
    rows=$(sql "$T/vb-$side.db" "select count(*) from measurements where bucket like '%/192,%'")
    case $side in
    behind)
        expect_eq "the part 1% behind the vendor is searched, under its key" \
            "$(grep -c "^split .*/192,.*: its winner ties or trails the vendor (within 2% of its time; worst loss 1\.[0-9]% at [0-9x]*, behind the vendor): searched at" "$T/out") $((rows > 0))" "1 1"
        expect_true "its winner is no slower than before" \
            python3 -c "import sys; sys.exit(not $(sql "$T/vb-$side.db" "$up") <= $t_up)" ;;
    tie)
        expect_eq "the part 1% ahead of the vendor (a tie) is searched, and its line says so" \
            "$(grep -c "^split .*/192,.*: its winner ties or trails the vendor (within 2% of its time; worst loss 0\.0% at [0-9x]*): searched at" "$T/out") $((rows > 0))" "1 1" ;;
    ahead)
        expect_eq "the part 5% ahead of the vendor is not searched" "$(grep -c "^split .*/192,.*searched at" "$T/out") $rows" "0 0" ;;
    esac
done

# A part's search races the registry's winners nearest it too, beside its
# own finalists (race_neighbours, sweep_warm.h's warm_neighbours): the bucket
# [256, 512) is swept first (24 candidates); then vr.yaml's part [128, 192),
# 2% behind the vendor, is searched with one candidate (split_evals: 1, a
# random search: no warm start; no polish), and the neighbour's winner,
# faster there, takes the part.
spec nb.yaml <<'EOF'
name: nb
search: random
max_evals: 24
top_k: 3
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [mma]
    shapes: {m: {range: [256, 511], align: [1]}, n: {values: [256], exact: true}, k: {values: [256], exact: true}}
EOF
sed 's/^top_k: 3$/top_k: 3\nsplit_evals: 1\nsplit_polish: 0/' "$T/vr.yaml" > "$T/vr1.yaml"
cubin_seed "$T/vr-off.db" "$T/nb.db"
fake_sweep ok "$T/nb.db" "$T/nb.yaml" --vendor off
expect_eq "the neighbouring bucket's sweep exits 0" "$RC" 0 || show_last
nb_cfg=$(sql "$T/nb.db" "select config from winners")
nb_us=$(sql "$T/nb.db" "select median_us from winners")
low="select median_us || ' ' || config from winners where bucket like 'm=2^7:%/2^7,%'"
cp "$T/nb.db" "$T/nb-off.db"
fake_sweep flip_at:192 "$T/nb-off.db" "$T/vr1.yaml" --vendor off
t_low=$(sql "$T/nb-off.db" "$low" | cut -d' ' -f1)
expect_true "without the vendor, the part [128, 192) keeps a winner slower ($t_low us) than the neighbour's ($nb_us us)" \
    python3 -c "import sys; sys.exit(not $nb_us < $t_low)"
us=$(python3 -c "print(round($t_low * 0.98, 3))")
cp "$T/nb.db" "$T/nb-v.db"
FAKE_VENDOR_US=$us,1000@192 fake_sweep flip_at:192 "$T/nb-v.db" "$T/vr1.yaml" --vendor time
expect_eq "with the vendor 2% faster there: exits 0" "$RC" 0 || show_last
expect_stdout "^split .*/2\^7,2\^8,2\^8: its winner ties or trails the vendor .*: searched at [0-9x]*, 1 candidate; 1 new finalist and 1 neighbours' winner raced$" \
    "the part's search raced the neighbour's winner beside its own finalist"
expect_eq "and the neighbour's config holds the part" "$(sql "$T/nb-v.db" "$low")" "$nb_us $nb_cfg"

# The registry is untrusted: a neighbour's winner whose config is not one of
# its template's (group 3: the kernel would build, its raster groups are any
# size) is not built nor raced, and the sweep goes on.
cp "$T/nb.db" "$T/nb-bad.db"
sqlite3 "$T/nb-bad.db" "update winners set config = replace(config, '\"group\":1', '\"group\":3')"
expect_true "the tampered winner holds group 3" sh -c "sqlite3 '$T/nb-bad.db' 'select config from winners' | grep -q '\"group\":3'"
FAKE_VENDOR_US=$us,1000@192 fake_sweep flip_at:192 "$T/nb-bad.db" "$T/vr1.yaml" --vendor time
expect_eq "with a tampered neighbour: exits 0" "$RC" 0 || show_last
expect_stdout "^split .*/2\^7,2\^8,2\^8: its winner ties or trails the vendor .*: searched at [0-9x]*, 1 candidate; 1 new finalist raced$" \
    "the tampered neighbour is not raced"
expect_true "and no winner holds group 3 but the tampered row" \
    sh -c "[ \$(sqlite3 '$T/nb-bad.db' \"select count(*) from winners where config like '%\\\"group\\\":3%'\") = 1 ]"

# Export and merge carry the rows.
DB=$T/win.db
expect_exit 0 "export --format json --what vendor" "$AITUNE" export --format json --what vendor --db "$DB"
got=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d), sorted(x["shape"]["m"] for x in d), d[0]["timing"])' \
      <"$T/out" 2>&1)
expect_eq "the vendor rows, shapes as JSON" "$got" "2 [16, 64] flush"
expect_exit 0 "export --format json (every table)" "$AITUNE" export --format json --db "$DB"
expect_eq "the vendor table is in it" "$(python3 -c 'import json,sys; print(len(json.load(sys.stdin)["vendor"]))' <"$T/out" 2>&1)" 2
expect_exit 0 "export --format csv --what vendor" "$AITUNE" export --format csv --what vendor --db "$DB"
expect_stdout "^op,arch,dtype,bucket,shape,hw,timing,library,algo,status,median_us" "csv has the header"
expect_exit 0 "export --format csv --what vendor of an op without vendor rows" \
    "$AITUNE" export --format csv --what vendor --op softmax --db "$DB"
expect_eq "is its header alone" "$(wc -l <"$T/out") $(head -c 9 "$T/out")" "1 op,arch,d"
expect_exit 0 "merge" "$AITUNE" merge "$T/m.db" "$DB"
expect_stdout "\+2 vendor times" "merge carries the vendor rows"
expect_eq "with the hardware they were measured on" "$(sql "$T/m.db" "select count(*) from vendor_times v join devices d on d.hw = v.hw")" 2
expect_eq "and the vendor's winner" "$(sql "$T/m.db" "select count(*) from winners where template = 'vendor/cublaslt'")" 1
expect_exit 0 "merge again" "$AITUNE" merge "$T/m.db" "$DB"
expect_stdout "\+0 vendor times" "adds nothing"

# An old registry: schema 4, no vendor table (nor what later schemas add).
cp "$T/lose.db" "$T/old.db"
sql "$T/old.db" "drop table vendor_times; drop table scans; alter table cubins drop column cubin_hash;
                 update meta set value = '4' where key = 'schema_version'" >/dev/null
expect_exit 0 "show reads a schema-4 registry" "$AITUNE" show --db "$T/old.db"
expect_stdout "^gemm_nt .* - +gemm_nt/mma" "with no x vendor"
expect_eq "and leaves it at schema 4" "$(sql "$T/old.db" "select value from meta where key = 'schema_version'")" 4
AITUNE_WORKER=$FAKE run "$AITUNE" status --db "$T/old.db"
expect_eq "status reads it read-only: still schema 4" "$(sql "$T/old.db" "select value from meta where key = 'schema_version'")" 4
vsweep 50 "$T/old.db"
expect_eq "a sweep into it exits 0" "$RC" 0 || show_last
expect_eq "and migrates it to 8, with the vendor table" \
    "$(sql "$T/old.db" "select value || ' ' || (select count(*) from sqlite_master where name = 'vendor_times') from meta where key = 'schema_version'")" "8 1"

# emit: the vendor's bucket is a cuBLASLt call.
expect_exit 0 "emit the whole op" "$AITUNE" emit gemm_nt --dtype bf16 --db "$DB" -o "$T/whole.cu"
expect_true "its header says to link cuBLASLt" grep -q '^// Buckets the vendor holds call cuBLASLt: link with -lcublasLt.$' "$T/whole.cu"
expect_true "the vendor's bucket calls cuBLASLt" grep -q 'return aitune_vendor_gemm(0, CUDA_R_16BF, CUDA_R_16BF, A, B, D, m, n, k, ws, stream);' "$T/whole.cu"
expect_eq "one kernel's source (the m=16 winner's), none for the vendor" "$(grep -c '^namespace aitune_k' "$T/whole.cu")" 1
expect_exit 0 "emit --shape 64,256,256 (the vendor's)" "$AITUNE" emit gemm_nt --arch sm_90 --dtype bf16 --shape 64,256,256 --db "$DB" -o "$T/one.cu"
expect_true "a file with no kernel, calling cuBLASLt" sh -c "! grep -q '^namespace aitune_k' '$T/one.cu' && grep -q 'aitune_vendor_gemm(0,' '$T/one.cu'"
expect_true "its workspace is 32 MiB" grep -q 'return (size_t)(33554432LL);' "$T/one.cu"
if command -v nvcc >/dev/null 2>&1; then
    for f in whole one; do
        run nvcc -gencode=arch=compute_90a,code=sm_90a -Xcompiler -Wall -shared -Xcompiler -fPIC -o "$T/$f.so" "$T/$f.cu" -lcublasLt
        expect_eq "nvcc builds the emitted $f.cu and links it with -lcublasLt" "$RC" 0 || show_last
        expect_true "$f.so needs libcublasLt" sh -c "readelf -d '$T/$f.so' | grep -q 'NEEDED.*libcublasLt'"
        expect_eq "no compiler warning for $f.cu" "$(grep -c 'warning' "$T/err")" 0 || show_last
    done
else
    skip "nvcc builds the emitted file with a vendor bucket: no nvcc"
fi

# Bad input: the vendor named for a problem it does not serve.
cp "$DB" "$T/bad.db"
sql "$T/bad.db" "update winners set launch = replace(launch, '33554432', '16') where bucket = '$B64'" >/dev/null
expect_exit 3 "emit refuses a vendor bucket whose workspace is not the vendor's" \
    "$AITUNE" emit gemm_nt --dtype bf16 --db "$T/bad.db" -o "$T/bad.cu"
expect_stderr "names the vendor, which serves no such problem" "and says why"
expect_true "and writes no file" test ! -e "$T/bad.cu"
done_testing
