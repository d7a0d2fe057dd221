#!/usr/bin/env bash
# tests/run: slow 2 (sweeps that wait on slow fake GPUs)
# A sweep on every GPU of a host (issue 11), with the fake worker playing
# two GPUs (FAKE_GPUS=2; its log says which GPU served each time request):
# each bucket is timed on one GPU only, both GPUs get work, the winners are
# those of a one-GPU sweep, a kill -9 resumes without loss, and a bad --gpus
# is one line and exit 2.
. "$(dirname "$0")/lib.sh"

spec six.yaml <<'EOF'
name: six
max_evals: 6
tasks:
  - op: axpy
    dtypes: [f32, f16]
    shapes:
      n: {log2: [6, 8]}
EOF
# The cubin cache of the spec, so the sweeps below measure rather than
# compile: a one-GPU fake sweep that keeps every kernel it compiled (the
# candidates its search asks for, the defaults, both references and the
# engine's), its measurements and winners dropped (cubin_seed).
fake_sweep ok "$T/seeding.db" "$T/six.yaml" --keep-cubins
expect_eq "seed the cubin cache" "$RC" 0 || { show_last; exit 1; }
cubin_seed "$T/seeding.db" "$T/seed.db" || { fail "seed the cubin cache"; exit 1; }

# fake_gpus N MODE DB [args...]: a sweep of six.yaml on N fake GPUs.
fake_gpus() {
    local n=$1 mode=$2 db=$3
    shift 3
    rm -f "$T/fake-state" "$T/fake-state.pid" "$T/fake-state.log"
    run env AITUNE_WORKER="$FAKE" FAKE_GPUS="$n" FAKE_MODE="$mode" FAKE_STATE="$T/fake-state" \
        "$AITUNE" sweep "$T/six.yaml" --db "$db" "$@"
}
winners="select op, arch, dtype, bucket, hw, template, config, printf('%.4f', median_us) from winners order by 1, 2, 3, 4, 5"
# Buckets (dtype, shape) timed on more than one GPU, from the fake's log.
shared_buckets() { awk '$2 == "time" { print $4, $3 }' "$T/fake-state.log" | sort -u | awk '{ print $1 }' | uniq -d | wc -l; }
# Configs of a bucket with two ok measurements: something was measured twice.
twice() { sql "$1" "select count(*) from (select dtype, bucket, config_hash from measurements where status = 'ok'
                    group by dtype, bucket, config_hash having count(*) > 1)"; }

# ---- the reference: one GPU ----
cp "$T/seed.db" "$T/one.db"
fake_gpus 1 slow_time:20 "$T/one.db" --quiet
expect_eq "a one-GPU sweep of 6 buckets" "$RC" 0 || show_last
expect_eq "it has 6 winners" "$(sql "$T/one.db" "select count(*) from winners")" 6

# ---- two GPUs, by default ----
cp "$T/seed.db" "$T/two.db"
fake_gpus 2 slow_time:20 "$T/two.db" --quiet
expect_eq "a sweep on a host with two GPUs" "$RC" 0 || show_last
expect_stdout "^device: Fake GPU .*\[GPU 0\]$" "it names GPU 0"
expect_stdout "^device: Fake GPU .*\[GPU 1\]$" "and GPU 1"
expect_eq "every bucket is timed on one GPU only (the fake's log)" "$(shared_buckets)" 0
expect_eq "both GPUs timed buckets" "$(awk '$2 == "time" { print $3 }' "$T/fake-state.log" | sort -u | tr '\n' ' ')" "gpu=0 gpu=1 "
expect_eq "every bucket's measurements are of one device (the registry)" \
    "$(sql "$T/two.db" "select count(*) from (select dtype, bucket from measurements group by dtype, bucket having count(distinct device) > 1)")" 0
expect_eq "two device rows, one per GPU" "$(sql "$T/two.db" "select group_concat(uuid, ' ') from (select uuid from devices order by uuid)")" \
    "GPU-fake-0000 GPU-fake-0001"
expect_eq "one run per GPU, both ok" "$(sql "$T/two.db" "select group_concat(outcome) from runs")" "ok,ok"
n_win=$(grep -c " \[GPU [01]\]$" "$T/out")
expect_eq "each winner line names its GPU" "$n_win" 8
expect_eq "the winners are the one-GPU sweep's" "$(sql "$T/two.db" "$winners")" "$(sql "$T/one.db" "$winners")"
expect_eq "nothing measured twice" "$(twice "$T/two.db")" 0
expect_eq "every winner's and default's cubin is kept on two GPUs" \
    "$(sql "$T/two.db" "select count(*) from (select cubin from winners union all select cubin from defaults where cubin is not null) k left join cubins c on c.hash = k.cubin where c.hash is null")" 0
expect_eq "losers' cubins are dropped once both lanes are done, as on one GPU" \
    "$(sql "$T/two.db" "select count(*) from cubins")" "$(sql "$T/one.db" "select count(*) from cubins")"
expect_eq "as many measurements as on one GPU" "$(sql "$T/two.db" "select count(*) from measurements")" \
    "$(sql "$T/one.db" "select count(*) from measurements")"
if grep -q "locked" "$T/err"; then fail "no 'database is locked'"; show_last; else ok "no 'database is locked'"; fi
expect_stderr "^sweep: [0-9]+ candidates evaluated, [0-9]+ ok.* 6 winners" "one summary for both GPUs"
expect_eq "no worker restarts reported (two workers started, one each)" "$(grep -c '^workers\?:' "$T/err")" 0

# A second run does nothing (every bucket is decided: src/sweep_resume.h);
# decided again (as after a cut), it takes everything from the registry,
# whichever GPU measured it.
fake_gpus 2 ok "$T/two.db" --quiet
expect_stderr "^sweep: nothing to do: all 6 buckets are decided" "the same command again does nothing"
undecide "$T/two.db"
fake_gpus 2 ok "$T/two.db" --quiet
expect_eq "the same command again" "$RC" 0
n_all=$(sql "$T/two.db" "select count(*) from measurements where status != 'constraint'")
expect_stderr "\($n_all already in the registry\)" "measures nothing again: each GPU resumes the other's buckets"

# ---- --gpus N, a list, and --gpu ----
cp "$T/seed.db" "$T/first.db"
fake_gpus 2 ok "$T/first.db" --quiet --gpus 1
expect_eq "--gpus 1 on a two-GPU host" "$RC" 0
expect_eq "uses GPU 0 alone" "$(awk '$2 == "time" { print $3 }' "$T/fake-state.log" | sort -u | tr '\n' ' ')" "gpu=0 "
cp "$T/seed.db" "$T/gpu1.db"
fake_gpus 2 ok "$T/gpu1.db" --quiet --gpu 1
expect_eq "--gpu 1" "$RC" 0
expect_eq "uses GPU 1 alone" "$(awk '$2 == "time" { print $3 }' "$T/fake-state.log" | sort -u | tr '\n' ' ')" "gpu=1 "
expect_no_stdout "\[GPU" "one GPU: lines as before, untagged"

# ---- progress: one line for both GPUs, each lane's bucket on it ----
cp "$T/seed.db" "$T/prog.db"
AITUNE_PROGRESS_INTERVAL=0 fake_gpus 2 slow_time:20 "$T/prog.db"
expect_eq "a sweep with progress lines" "$RC" 0
expect_stderr "^sweep: bucket [0-9]/6, [0-9]+ candidates, .*; GPU [01] axpy f(32|16) n=2\^[678] [0-9]+/[0-9]+" \
    "the progress line shows the run's counts and a lane's bucket"
expect_stderr "; GPU 0 axpy .*; GPU 1 axpy " "and both lanes at once"
bad=$(grep -Ecv '^(device: Fake GPU .*|axpy +f(32|16) +n=2\^[678] .* us .*) \[GPU [01]\]$' "$T/out")
expect_eq "every stdout line is whole: a device or a winner, with its GPU" "$bad" 0

# ---- kill -9 mid-sweep, then resume ----
cp "$T/seed.db" "$T/killed.db"
rm -f "$T/fake-state" "$T/fake-state.log"
env AITUNE_WORKER="$FAKE" FAKE_GPUS=2 FAKE_MODE=slow_time:150 FAKE_STATE="$T/fake-state" \
    "$AITUNE" sweep "$T/six.yaml" --db "$T/killed.db" --quiet >"$T/bg.out" 2>"$T/bg.err" </dev/null &
BG=$!
BG_PIDS="${BG_PIDS:-} $BG"
for i in $(seq 1 300); do
    [ "$(sqlite3 "$T/killed.db" "select count(*) from measurements where status = 'ok'" 2>/dev/null)" -ge 12 ] 2>/dev/null && break
    sleep 0.1
done
kill -9 "$BG" 2>/dev/null
wait "$BG" 2>/dev/null
before=$(sql "$T/killed.db" "select count(*) from measurements where status != 'constraint'")
gpus=$(sql "$T/killed.db" "select count(distinct device) from measurements where status = 'ok'")
[ "$before" -ge 12 ] && [ "$gpus" = 2 ] && ok "killed with $before measurements from both GPUs" ||
    { fail "measurements at kill -9: $before, from $gpus GPUs"; sed 's/^/    err: /' "$T/bg.err" | head -5; }
expect_eq "the registry passes integrity_check" "$(sql "$T/killed.db" "PRAGMA integrity_check")" ok
fake_gpus 2 ok "$T/killed.db" --quiet
expect_eq "the same command again" "$RC" 0 || show_last
resumed=$(sed -n 's/.*(\([0-9]*\) already in the registry).*/\1/p' "$T/err")
[ -n "$resumed" ] && [ "$resumed" -ge "$before" ] && ok "every kept measurement is reused ($resumed >= $before)" ||
    fail "reused ${resumed:-none} of $before kept measurements"
expect_eq "nothing measured twice" "$(twice "$T/killed.db")" 0
expect_eq "the resumed winners are the one-GPU sweep's" "$(sql "$T/killed.db" "$winners")" "$(sql "$T/one.db" "$winners")"
expect_eq "the killed runs stay 'running', the resumed ones are ok" \
    "$(sql "$T/killed.db" "select group_concat(outcome) from (select outcome from runs order by id)")" "running,running,ok,ok"

# ---- Ctrl-C: both lanes stop after the candidate in flight ----
cp "$T/seed.db" "$T/int.db"
env AITUNE_WORKER="$FAKE" FAKE_GPUS=2 FAKE_MODE=slow_time:150 \
    "$AITUNE" sweep "$T/six.yaml" --db "$T/int.db" --quiet >"$T/bg.out" 2>"$T/bg.err" </dev/null &
BG=$!
BG_PIDS="${BG_PIDS:-} $BG"
for i in $(seq 1 300); do
    [ "$(sqlite3 "$T/int.db" "select count(*) from measurements where status = 'ok'" 2>/dev/null)" -ge 6 ] 2>/dev/null && break
    sleep 0.1
done
kill -INT "$BG"
wait "$BG"
expect_eq "SIGINT on two GPUs exits 130" "$?" 130
expect_eq "both runs are recorded as interrupted" "$(sql "$T/int.db" "select group_concat(outcome) from runs")" "interrupted,interrupted"
grep -q "run the same command again to resume" "$T/bg.err" && ok "and stderr says how to resume" || fail "SIGINT: no resume hint"

# ---- GPUs of two models ----
cp "$T/seed.db" "$T/mixed.db"
FAKE_GPU_NAME_1="Other GPU" fake_gpus 2 ok "$T/mixed.db" --quiet
expect_eq "two models under --gpus all: exit 2" "$RC" 2
expect_stderr "^aitune: error: GPUs 0 \(Fake GPU\) and 1 \(Other GPU\) are different models: name the ones to sweep with --gpus" \
    "says so and what to do"
expect_stderr_lines 1 "in one line"
FAKE_GPU_NAME_1="Other GPU" fake_gpus 2 slow_time:20 "$T/mixed.db" --quiet --gpus 0,1
expect_eq "two models, named: --gpus 0,1" "$RC" 0 || show_last
expect_eq "one winner per bucket, keyed by the model that measured it" \
    "$(sql "$T/mixed.db" "select count(*) || ' ' || count(distinct dtype || bucket) || ' ' || count(distinct hw) from winners")" "6 6 2"

# ---- bad --gpus: one line, exit 2, no registry ----
for bad in x 0 -1 17 1,1 0,x 0, ,1 all,1; do
    run env AITUNE_WORKER="$FAKE" FAKE_GPUS=2 "$AITUNE" sweep "$T/six.yaml" --db "$T/bad.db" --gpus "$bad"
    [ "$RC" = 2 ] && [ "$(grep -c '^aitune: error: --gpus' "$T/err")" = 1 ] && ok "--gpus '$bad': exit 2, one error line" ||
        { fail "--gpus '$bad': exit $RC"; show_last; }
done
expect_stderr "is not all, a count N or a list of distinct GPUs like 0,1" "the line says what --gpus takes"
for bad in 3 0,2 1,5; do
    run env AITUNE_WORKER="$FAKE" FAKE_GPUS=2 "$AITUNE" sweep "$T/six.yaml" --db "$T/bad.db" --gpus "$bad" --quiet
    [ "$RC" = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q "this host has 2" "$T/err" &&
        ok "--gpus $bad on a two-GPU host: exit 2, one line" || { fail "--gpus $bad on a two-GPU host: exit $RC"; show_last; }
done
expect_exit 2 "--gpu and --gpus together" "$AITUNE" sweep "$T/six.yaml" --db "$T/bad.db" --gpu 0 --gpus 2
expect_exit 2 "--gpus is for sweep, not compile" "$AITUNE" compile "$T/six.yaml" --db "$T/bad.db" --gpus 2
[ -e "$T/bad.db" ] && fail "a refused --gpus leaves no registry" || ok "a refused --gpus leaves no registry"

done_testing
