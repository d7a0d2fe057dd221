#!/usr/bin/env bash
# tests/run: slow 6 (sweeps on slow fake GPUs)
# bench/multi_gpu.sh without a GPU, the fake worker playing one or two:
#   - two GPUs against one: both sweeps run, the winners are compared bucket
#     by bucket, and the last lines are the table (wall, candidates, CPU,
#     buckets per run), the speedup line bench/suites/multi-gpu.sh reads and
#     the bar's verdict; one GPU is refused;
#   - --one: a sweep cut at LIMIT says so, keeps what it measured and gives
#     --resume to go on; --resume finishes it, adding the seconds up and
#     measuring nothing twice;
#   - `ranges`: the spec written is issue 33's first row (36 buckets);
#   - bad settings: one line, exit 2.
. "$(dirname "$0")/lib.sh"

MG=$ROOT/bench/multi_gpu.sh
spec six.yaml <<'EOF'
name: six
tasks:
  - op: axpy
    dtypes: [f32, f16]
    shapes:
      n: {log2: [6, 8]}
EOF
# mg GPUS MODE ARGS...: the script on fake GPUs (from the repository root,
# as it is run).
mg() {
    local n=$1 mode=$2
    shift 2
    rm -f "$T/fake-state" "$T/fake-state.pid" "$T/fake-state.log"
    run env AITUNE="$AITUNE" AITUNE_WORKER="$FAKE" FAKE_GPUS="$n" FAKE_MODE="$mode" FAKE_STATE="$T/fake-state" \
        ONE_DIR="$T/one" AITUNE_PROGRESS_INTERVAL=1 bash -c 'cd "$0" && exec "$@"' "$ROOT" "$MG" "$@"
}

# ---- two GPUs against one ----
EVALS=3 mg 2 slow_time:20 "$T/cmp" "$T/six.yaml"
expect_eq "two fake GPUs against one: exit 0 (both complete, winners agree)" "$RC" 0 || show_last
expect_stdout '^one-gpu: exit 0 after [0-9.]+ s, [0-9.]+ CPU s$' "the one-GPU sweep's line"
expect_stdout '^two-gpus: exit 0 after [0-9.]+ s, [0-9.]+ CPU s$' "the two-GPU sweep's line"
expect_eq "six buckets compared, each the same config" "$(grep -c ' same: axpy/vec ' "$T/out")" 6
expect_stdout '^\| one GPU \| --gpu 0 \| [0-9.]+ \| [0-9]+ \| [0-9.]+ \| [0-9]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ of [0-9]+ \| 6 \| 0 \|$' \
    "the table's one-GPU row: wall, candidates, rate, compiles, CPU, per compile, cores busy, buckets, exit"
expect_stdout '^\| two GPUs \| --gpus 2 \| .* \| 6 \| 0 \|$' "the table's two-GPU row"
expect_stdout '^speedup [0-9.]+x \([0-9.]+ s -> [0-9.]+ s\); winners: 6 same config, 0 other config within 5%, 0 different, 0 missing; PASS; 0 buckets split differently$' \
    "the speedup line, as bench/suites/multi-gpu.sh reads it"
expect_stdout '^bar \(2 GPUs >= 1.7x one\): (met|not met); measurements per second, 2 GPUs over 1: [0-9.]+x$' "the bar's line"
expect_true "the last line is the bar's" test "$(tail -n 1 "$T/out" | cut -c1-3)" = bar
expect_true "the report and both registries are kept" test -s "$T/cmp/multi-gpu.txt" -a -s "$T/cmp/one-gpu.db" -a -s "$T/cmp/two-gpus.db"
expect_eq "the two-GPU run used both (its measurements' devices)" \
    "$(sql "$T/cmp/two-gpus.db" "select count(distinct device) from measurements")" 2
# The comparison can fail (--compare: again, from the kept registries, no
# GPU): a winner of the two-GPU run another config 30% slower, a bucket
# missing in it, and a bucket split there and not in the one-GPU run.
cp -r "$T/cmp" "$T/cmp2"
two=$T/cmp2/two-gpus.db
sql "$two" "update winners set config = '{\"block\":1024}', median_us = median_us * 1.3 where dtype = 'f32' and bucket = 'n=2^6'" >/dev/null
sql "$two" "delete from winners where dtype = 'f16' and bucket = 'n=2^7'" >/dev/null
sql "$two" "update winners set bucket = bucket || '/200' where dtype = 'f16' and bucket = 'n=2^8'" >/dev/null
run env AITUNE="$AITUNE" "$MG" --compare "$T/cmp2"
expect_eq "--compare of doctored registries: exit 1" "$RC" 1
expect_stdout '^axpy f32 n=2\^6 .* \+30\.0% .* DIFFERENT: axpy/vec ' "a slower other config is DIFFERENT"
expect_stdout '^axpy f16 n=2\^7 .* MISSING in the two-GPU run$' "a bucket without a winner is MISSING"
expect_stdout '^axpy f16 n=2\^8 +split differently: 1 GPU whole, 2 GPUs 200$' "a bucket split in one run only"
expect_stdout 'winners: 3 same config, 0 other config within 5%, 1 different, 1 missing; FAIL; 1 buckets split differently$' \
    "the verdict counts them and fails"
NOISE=0.5 run env AITUNE="$AITUNE" "$MG" --compare "$T/cmp2"
expect_stdout '^axpy f32 n=2\^6 .* within noise: ' "with NOISE=0.5 the 30% slower config is within noise"
run env AITUNE="$AITUNE" "$MG" --compare "$T/nothing"
expect_eq "--compare of a folder without registries: exit 2" "$RC" 2
expect_stderr "--compare: no .*one-gpu.db" "... naming what is missing"
mg 1 none "$T/cmp1" "$T/six.yaml"
expect_eq "one fake GPU: the comparison is refused (exit 1)" "$RC" 1
expect_stdout 'this host has 1 GPU; the comparison needs 2' "... and says why"

# ---- one GPU, cut and resumed ----
EVALS=4 LIMIT=3 mg 1 slow_time:300 --one "$T/one1" "$T/six.yaml"
expect_eq "--one cut at LIMIT: exit 0 (a cut is a result)" "$RC" 0 || show_last
expect_stdout '^one: exit 124 after [0-9.]+ s, [0-9.]+ CPU s \(cut at 3 s\)$' "the sweep's line says it was cut"
expect_stdout '^one sweep, one GPU: cut after [0-9.]+ s in all \([0-9]+ measurements kept\)' "the verdict: cut, with what is kept"
expect_stdout '^run it again with --resume on the same machine to go on$' "... and how to go on"
kept=$(sql "$T/one/registry.db" "select count(*) from measurements")
expect_true "the cut sweep kept its measurements ($kept)" test "${kept:-0}" -ge 1
first=$(cat "$T/one/seconds")
EVALS=4 LIMIT=120 mg 1 slow_time:30 --one --resume "$T/one2" "$T/six.yaml"
expect_eq "--one --resume: exit 0" "$RC" 0 || show_last
expect_stdout '^one: exit 0 after ' "the resumed sweep completes"
expect_stdout '^\| one GPU \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9]+ \| [0-9]+ \| 6 of 6 \| 0 \| 0 \|$' "its table: every bucket of six has a winner"
expect_stdout '^one sweep, one GPU: [0-9.]+ s \([0-9.]+ min\) in all; bar \(<= 15 min\): met$' "the bar's line"
all=$(cat "$T/one/seconds")
expect_true "the seconds add up over the calls ($first, then $all)" awk -v a="$first" -v b="$all" 'BEGIN { exit !(b > a) }'
expect_eq "nothing measured twice" \
    "$(sql "$T/one/registry.db" "select count(*) from (select dtype, bucket, config_hash from measurements where status = 'ok' group by 1, 2, 3 having count(*) > 1)")" 0
EVALS=4 LIMIT=120 mg 1 none --one "$T/one3" "$T/six.yaml"
expect_eq "--one without --resume starts empty" "$(sql "$T/one/registry.db" "select count(*) from runs")" 1
expect_true "... and its seconds are its own" awk -v a="$(cat "$T/one/seconds")" -v b="$all" 'BEGIN { exit !(a < b) }'
# The cut run's estimate comes from the sweep's last progress line (one a
# second here): its elapsed time and ETA.
expect_true "the cut run gives the sweep's estimate of the whole" \
    grep -Eq "the sweep's estimate of the whole: [0-9]+ s \([0-9.]+ min\); bar \(<= 15 min\): likely met" "$T/one1/one-gpu.txt"
expect_true "... and counts the buckets of the spec (6)" grep -Eq '^\| one GPU \| .* \| [0-9]+ of 6 \| 0 \| 124 \|$' "$T/one1/one-gpu.txt"

# ---- the ranges spec ----
mg 1 none "$T/rg"
expect_eq "the default spec on one GPU: refused as above (exit 1)" "$RC" 1
expect_true "ranges.yaml is written" test -s "$T/rg/ranges.yaml"
run "$ROOT/build/tests/kernel_sample" list -n 0 "$T/rg/ranges.yaml"
expect_eq "kernel_sample reads it" "$RC" 0 || show_last
expect_eq "36 buckets: m in 1..256 (align 1: 9 log2 buckets) at four weights" "$(cut -f3 "$T/out" | sort -u | wc -l)" 36
expect_eq "the four weights" "$(cut -f3 "$T/out" | cut -d, -f2,3 | sort -u | tr '\n' ' ')" \
    "1024,4096 14336,4096 4096,14336 4096,4096 "
expect_true "timed as a stream, 8 candidates per bucket and template" grep -q '^max_evals: 8$' "$T/rg/ranges.yaml"
expect_true "... timing stream" grep -q '^timing: stream$' "$T/rg/ranges.yaml"
expect_true "aitune's own kernels (--vendor off)" grep -q -- '--vendor off' "$T/rg/multi-gpu.txt"

# ---- bad settings ----
EVALS=x mg 2 none "$T/bad"
expect_eq "EVALS=x: exit 2" "$RC" 2
expect_stderr_lines 1 "... one line"
expect_stderr "EVALS is a count of at least 1" "... naming EVALS"
mg 2 none --resume "$T/bad"
expect_eq "--resume without --one: exit 2" "$RC" 2
expect_stderr "--resume is for --one" "... saying so"
mg 2 none "$T/bad" "$T/nosuch.yaml"
expect_eq "a spec that is not there: exit 2" "$RC" 2
LIMIT1=0 mg 2 none "$T/bad" "$T/six.yaml"
expect_eq "LIMIT1=0: exit 2" "$RC" 2

done_testing
