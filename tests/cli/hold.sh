#!/usr/bin/env bash
# Buckets that hold (spec `hold: true`), with the fake worker: after a
# bucket's race its finalists are verified and raced again at the bucket's
# middle and upper edge, and the finalist with the smallest worst loss
# becomes the winner. shape_time makes the fake's times depend on the shape,
# so rankings differ inside a bucket and some winners move. split_at: 0
# keeps each bucket whole (tests/cli/split.sh splits them).
. "$(dirname "$0")/lib.sh"

cat >"$T/hold.yaml" <<'YAML'
name: hold
arch: sm_90a
search: random
max_evals: 6
top_k: 4
hold: true
split_at: 0
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {log2: [12, 17]}
YAML
DB=$T/hold.db
# --keep-cubins: the sweeps below start from this one's kernels (cubin_seed;
# the same seeded search asks for the same configs) instead of compiling
# them again.
fake_sweep shape_time "$DB" "$T/hold.yaml" --keep-cubins
expect_eq "a sweep with hold: true exits 0" "$RC" 0 || show_last
expect_eq "6 winners" "$(sql "$DB" "select count(*) from winners")" 6
expect_stderr "^hold: 6 buckets probed at other sizes than their own, [0-9]+ winners? changed" "the summary says how many buckets were probed and changed"
moved=$(sed -n 's/^hold: 6 buckets probed at other sizes than their own, \([0-9]*\) winner.*/\1/p' "$T/err")
[ "${moved:-0}" -ge 1 ] && ok "with shape-dependent times some winners move ($moved)" || fail "no winner moved"
expect_eq "one 'hold' line per probed bucket says whether the winner stays" "$(grep -c '^hold  .*: the race.s winner loses' "$T/out")" 6
expect_eq "each move names the new winner" "$(grep -c 'another finalist, worst loss smaller, wins' "$T/out")" "$moved"
# The stored winner of each moved bucket is the finalist the hold line names.
bad=0
while IFS= read -r line; do
    bucket=$(printf '%s\n' "$line" | awk '{print $4}' | tr -d ':')
    cfg=$(printf '%s\n' "$line" | sed 's/^hold  *axpy f32 [^ ]*: axpy\/vec \({[^}]*}\).*/\1/')
    got=$(sql "$DB" "select config from winners where bucket = '$bucket'")
    [ "$got" = "$cfg" ] || { bad=1; echo "    $bucket: stored $got, hold named $cfg"; }
done < <(grep '^hold  .*axpy/vec {' "$T/out")
expect_eq "the stored winners are the ones hold chose" "$bad" 0
if grep -q '^split' "$T/out"; then fail "split_at: 0 splits nothing"; else ok "split_at: 0 splits nothing"; fi
grep -q 'task=5760/f32' "$T/fake-state.log" && ok "n=2^12 was raced at its middle, 5760" || fail "no race at n=5760"
grep -q 'task=8128/f32' "$T/fake-state.log" && ok "and at its upper edge, 8128" || fail "no race at n=8128"

# Without hold, no probes.
sed 's/^hold: true/hold: false/' "$T/hold.yaml" >"$T/nohold.yaml"
cubin_seed "$DB" "$T/nohold.db"
fake_sweep shape_time "$T/nohold.db" "$T/nohold.yaml"
expect_eq "hold: false exits 0" "$RC" 0
if grep -q '^hold' "$T/out" "$T/err"; then fail "hold: false probes nothing"; else ok "hold: false probes nothing"; fi

# timing: stream reaches the worker with every task, the probes' included.
sed 's/^split_at: 0/split_at: 0\ntiming: stream/' "$T/hold.yaml" >"$T/stream.yaml"
cubin_seed "$DB" "$T/stream.db"
fake_sweep shape_time "$T/stream.db" "$T/stream.yaml"
expect_eq "a sweep with timing: stream exits 0" "$RC" 0 || show_last
n_all=$(grep -c ' time .*task=' "$T/fake-state.log")
n_stream=$(grep -c ' time .*task=.* timing=stream' "$T/fake-state.log")
expect_true "the worker was asked to time ($n_all requests)" test "$n_all" -gt 0
expect_eq "every time request's task says timing=stream" "$n_stream" "$n_all"
grep -q 'task=5760/f32 timing=stream' "$T/fake-state.log" && ok "the probe at the middle, 5760, is timed as a stream too" ||
    fail "the probe at 5760 is not timed as a stream"
cubin_seed "$DB" "$T/flush.db"
fake_sweep shape_time "$T/flush.db" "$T/hold.yaml"
expect_eq "without timing, no task says timing=stream" "$(grep -c 'timing=stream' "$T/fake-state.log")" 0
# One registry, both methods: a stream sweep takes none of the flush sweep's
# measurements as its own (they are another method's times); run again, it
# resumes from its own.
cubin_seed "$DB" "$T/mix.db"
fake_sweep shape_time "$T/mix.db" "$T/hold.yaml"
nflush=$(sql "$T/mix.db" "select count(*) from measurements where timing = 'flush'")
expect_true "a flush sweep records its measurements as flush ($nflush)" test "$nflush" -gt 0
fake_sweep shape_time "$T/mix.db" "$T/stream.yaml"
expect_eq "the stream sweep over it exits 0" "$RC" 0 || show_last
if grep -q "already in the registry" "$T/err"; then fail "the stream sweep resumed from flush measurements"
else ok "the stream sweep resumed from none of the flush measurements"; fi
nstream=$(sql "$T/mix.db" "select count(*) from measurements where timing = 'stream'")
expect_true "it measured its own ($nstream, timing = 'stream')" test "$nstream" -gt 0
expect_eq "and left the flush ones as they were" "$(sql "$T/mix.db" "select count(*) from measurements where timing = 'flush'")" "$nflush"
undecide "$T/mix.db"    # decided again, as after a cut (src/sweep_resume.h)
fake_sweep shape_time "$T/mix.db" "$T/stream.yaml"
expect_stderr "already in the registry" "run again, the stream sweep resumes from its own measurements"
run "$AITUNE" why axpy --dtype f32 --shape 4096 --all --db "$T/mix.db"
expect_eq "why over both methods exits 0" "$RC" 0 || show_last
ns=$(grep -c ' us .*(stream)$' "$T/out")
nf=$(grep ' us  ' "$T/out" | grep -vc '(stream)$')
expect_true "why marks the stream-timed candidates ($ns) apart from the flush-timed ones ($nf)" \
    test "$ns" -gt 0 -a "$nf" -gt 0
run "$AITUNE" merge "$T/merged.db" "$T/mix.db"
expect_eq "merge exits 0" "$RC" 0 || show_last
expect_eq "merge keeps how each measurement was timed" \
    "$(sql "$T/merged.db" "select sum(timing = 'stream') || ' ' || sum(timing = 'flush') from measurements")" "$nstream $nflush"
# check times a winner the way it was recorded, whatever the spec says now.
chk_on() {
    rm -f "$T/fake-state" "$T/fake-state.pid" "$T/fake-state.log"
    run env AITUNE_WORKER="$FAKE" FAKE_MODE=shape_time FAKE_STATE="$T/fake-state" "$AITUNE" check "$2" --db "$1" --quiet
}
nbefore=$(sql "$T/stream.db" "select count(*) from measurements where timing = 'stream'")
chk_on "$T/stream.db" "$T/hold.yaml"
expect_eq "check of stream-timed winners with a spec that says flush exits 0" "$RC" 0 || show_last
n_all=$(grep -c ' time .*task=' "$T/fake-state.log")
expect_true "it asked the worker to time ($n_all requests)" test "$n_all" -gt 0
expect_eq "every one as a stream, as the winners were recorded" "$(grep -c ' time .*task=.* timing=stream' "$T/fake-state.log")" "$n_all"
expect_stdout "^ok .* \[timed stream as recorded; the spec says flush\]$" "its lines say so"
expect_true "its measurements are stored as stream ones" \
    test "$(sql "$T/stream.db" "select count(*) from measurements where timing = 'stream'")" -gt "$nbefore"
chk_on "$T/stream.db" "$T/stream.yaml"
expect_eq "check with the spec the winners were timed by exits 0" "$RC" 0 || show_last
if grep -q 'as recorded' "$T/out"; then fail "a check whose spec agrees notes a method"; else ok "a check whose spec agrees notes nothing"; fi
chk_on "$T/flush.db" "$T/stream.yaml"
expect_eq "check of flush-timed winners with a spec that says stream exits 0" "$RC" 0 || show_last
expect_eq "no time request says timing=stream" "$(grep -c 'timing=stream' "$T/fake-state.log")" 0
expect_stdout "^ok .* \[timed flush as recorded; the spec says stream\]$" "and its lines say flush"
# A task overrides the spec's timing.
sed 's/^split_at: 0/split_at: 0\ntiming: stream/; s/^    dtypes: \[f32\]/    dtypes: [f32]\n    timing: flush/' "$T/hold.yaml" >"$T/override.yaml"
cubin_seed "$DB" "$T/override.db"
fake_sweep shape_time "$T/override.db" "$T/override.yaml"
expect_eq "a task's timing: flush overrides the spec's stream" "$(grep -c 'timing=stream' "$T/fake-state.log")" 0
sed 's/^split_at: 0/split_at: 0\ntiming: fast/' "$T/hold.yaml" >"$T/badtiming.yaml"
fake_sweep ok "$T/badtiming.db" "$T/badtiming.yaml"
expect_eq "timing: fast is a bad spec (exit 3)" "$RC" 3
expect_stderr "badtiming.yaml' line [0-9]+: timing must be flush, stream or neighbour, not 'fast'" "the error names the field and the value"

# Hold's defaults: a range bucket is tuned at its upper edge, where
# swapab's mid-size kernel takes one tile of as many rows of A as m (bn in
# [m, 2m): only 256 at m = 255) or two tiles of rows (bn 128..224), so no finalist fits the bucket's smaller
# sizes. Each template's default at hold's other sizes (one tile of the
# narrowest width holding the size, or two of half of it: bn 160 at 129 and
# 145, ...) races beside the finalists, built and verified at each size;
# with split_evals: 0 a part's winner is one of the race's slots, so a part
# won by a narrower pass is one of them. (The range tunes class 8 apart, so
# the class-1 bucket is raced at its odd sizes alone, as this landscape of
# shape_time's random times was written for; a class-1 bucket of a range
# tuning class 1 alone serves and races the aligned sizes too: test_sweep.)
cat >"$T/mid.yaml" <<'YAML'
name: hold-defaults
arch: sm_90a
search: random
max_evals: 4
top_k: 2
split_evals: 0
timing: stream
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [swapab]
    shapes:
      m: {range: [129, 256], align: [8, 1]}
      n: {values: [4096], exact: true}
      k: {values: [4096], exact: true}
YAML
seed_db "$T/mid.db"
AITUNE_TRACE=$T/mid.trace fake_sweep shape_time "$T/mid.db" "$T/mid.yaml"
expect_eq "a swapab range sweep at m 129..256 exits 0" "$RC" 0 || show_last
# The trace says where each bucket's time went (bench/trace_split.py reads it).
expect_eq "the trace starts and ends every bucket it sweeps" \
    "$(grep -c ' bucket start gemm_nt bf16 ' "$T/mid.trace")" "$(grep -c ' bucket end gemm_nt bf16 ' "$T/mid.trace")"
expect_true "hold's races at other sizes are traced with their phases, each slot's time and the vendor's" \
    grep -Eq ' probe gemm_nt m=2\^7[^ ]* [0-9]+x4096x4096 slots=[0-9]+ task=[0-9.]+ load=[0-9.]+ race=[0-9.]+ vendor=[0-9.]+ bar=(raced|apart|none) us:( [0-9a-f]{8}=[0-9.]+)+ vendor_us=[0-9.]+$' "$T/mid.trace"
run python3 "$ROOT/bench/trace_split.py" "$T/mid.trace"
expect_eq "bench/trace_split.py reads it" "$RC" 0 || show_last
expect_eq "a row per bucket, and the sum" "$(grep -c '^gemm_nt bf16 m=' "$T/out") $(grep -c '^all buckets' "$T/out")" \
    "$(grep -c ' bucket end ' "$T/mid.trace") 1"
expect_true "its probes column counts the trace's probes" \
    awk -v n="$(grep -c ' probe gemm_nt ' "$T/mid.trace")" '/^all buckets/ { exit ($6 == n) ? 0 : 1 }' "$T/out"
expect_eq "its last line counts the probes' vendor bars, every one raced beside the slots" "$(tail -1 "$T/out")" \
    "vendor bars at the probes: $(grep -c ' probe gemm_nt .* bar=raced ' "$T/mid.trace") raced"
expect_true "hold raced swapab's defaults at 3 or more of its other sizes beside the finalists" \
    grep -Eq "hold gemm_nt bf16: ([3-9]|1[0-9]) templates' defaults at its other sizes raced" "$T/mid.trace"
expect_eq "the search at m = 255 stored one tile of 256 rows or two of at least 128 only" \
    "$(sql "$T/mid.db" "select count(*) from measurements where bucket not like '%/%' and (config like '%\"bn\":96,%' or config like '%\"bn\":64,%')")" 0
narrow=$(sql "$T/mid.db" "select count(*) from winners where hi < 256 and (config like '%\"bn\":160,%' or config like '%\"bn\":192,%' or config like '%\"bn\":224,%')")
expect_true "parts below 256 are won by hold's defaults, narrower passes ($narrow)" test "${narrow:-0}" -ge 1
# A point spec of the same shape holds nothing: no defaults raced.
sed 's/{range: \[129, 256\], align: \[8, 1\]}/{values: [255], exact: true}/' "$T/mid.yaml" >"$T/point.yaml"
AITUNE_TRACE=$T/point.trace fake_sweep shape_time "$T/point.db" "$T/point.yaml"
expect_eq "the point spec's sweep exits 0" "$RC" 0 || show_last
expect_true "its trace was written" test -s "$T/point.trace"
expect_eq "a bucket that does not hold races no defaults" "$(grep -c "defaults at its other sizes" "$T/point.trace")" 0

sed 's/^hold: true/hold: 1/' "$T/hold.yaml" >"$T/bad.yaml"
fake_sweep ok "$T/bad.db" "$T/bad.yaml"
expect_eq "hold: 1 is a bad spec (exit 3)" "$RC" 3
expect_stderr "bad.yaml' line [0-9]+: 'hold' must be true or false" "the error names the field"
# A range bucket's hold also races where its finalists' own tiling steps up
# (sweep_probe.h: probe_wave_shapes): the wgmma family's plans give the
# rounds of tiles their grid runs (plan.h "waves"), and past a step a tiled
# kernel's time jumps. The trace names those sizes, each is raced, and the
# stored plans carry their waves.
cat >"$T/wv.yaml" <<'YAML'
name: wave-probes
arch: sm_90a
search: random
max_evals: 4
top_k: 1
timing: stream
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [wgmma_swap]
    shapes:
      m: {range: [1024, 2047], align: [1]}
      n: {values: [4096], exact: true}
      k: {values: [4096], exact: true}
YAML
AITUNE_TRACE=$T/wv.trace fake_sweep shape_time "$T/wv.db" "$T/wv.yaml"
expect_eq "a swapped wgmma range sweep at m 1024..2047 exits 0" "$RC" 0 || show_last
steps=$(sed -n "s/.*hold gemm_nt bf16: where the finalists' waves step up://p" "$T/wv.trace" | head -1)
nsteps=$(echo $steps | wc -w)
expect_true "hold names 1 to 6 sizes where its finalists' waves step up (${steps:-none})" test "$nsteps" -ge 1 -a "$nsteps" -le 6
all=$(sed -n "s/.* where \(the\|its new\) finalists' waves step up://p" "$T/wv.trace" | tr '\n' ' ')
raced=0
for s in $all; do grep -q " probe gemm_nt m=2^10[^ ]* ${s}x4096x4096 " "$T/wv.trace" && raced=$((raced + 1)); done
expect_eq "each of them, and each a part's search's new finalists step at, is raced ($all)" "$raced" "$(echo $all | wc -w)"
expect_true "a part's search names where its new finalists' waves step up" \
    grep -Eq " part gemm_nt bf16 m=2\^10[^ ]*: where its new finalists' waves step up:( [0-9]+)+$" "$T/wv.trace"
expect_eq "none of them is a boundary of tiles of 256 rows (those are raced already)" \
    "$(for s in $steps; do echo $((s % 256 > 1)); done | sort -u)" 1
expect_eq "every winner's plan gives its waves over the pairs or single CTAs of 132 SMs, but stream-K's" \
    "$(python3 - "$T/wv.db" <<'PY'
import json, re, sqlite3, sys
ok = set()
for cfg, launch in sqlite3.connect(sys.argv[1]).execute("select config, launch from winners"):
    waves = json.loads(launch).get("waves")
    if json.loads(cfg).get("streamk") == 1: ok.add(waves is None)
    else: ok.add(bool(waves and re.fullmatch(r"cdiv\(.*, (66|132)\)", waves)))
print(sorted(ok))
PY
)" "[True]"
done_testing
