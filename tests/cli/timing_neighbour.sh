#!/usr/bin/env bash
# timing: neighbour (bench.h): a stream chain with another kernel before each
# launch, as a model's graph runs a GEMM. With the fake worker: the timing
# reaches every time request, the registry keeps it apart from stream and
# flush measurements (no resume across methods), why and check name it, and
# merge keeps it.
. "$(dirname "$0")/lib.sh"

spec() {  # TIMING: a small axpy spec timed that way
    cat <<YAML
name: nb
arch: sm_90a
search: random
max_evals: 4
timing: $1
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {log2: [12, 13]}
YAML
}
spec neighbour >"$T/nb.yaml"
spec stream >"$T/st.yaml"
DB=$T/mix.db

fake_sweep shape_time "$DB" "$T/st.yaml"
expect_eq "a stream sweep exits 0" "$RC" 0 || show_last
nst=$(sql "$DB" "select count(*) from measurements where timing = 'stream'")
expect_true "its measurements are stored as stream ($nst)" test "$nst" -gt 0

fake_sweep shape_time "$DB" "$T/nb.yaml"
expect_eq "a sweep with timing: neighbour over the same registry exits 0" "$RC" 0 || show_last
if grep -q "already in the registry" "$T/err"; then fail "the neighbour sweep resumed from stream measurements"
else ok "the neighbour sweep resumed from none of the stream measurements"; fi
n_all=$(grep -c ' time .*task=' "$T/fake-state.log")
expect_true "the worker was asked to time ($n_all requests)" test "$n_all" -gt 0
expect_eq "every time request's task says timing=neighbour" "$(grep -c ' time .*task=.* timing=neighbour' "$T/fake-state.log")" "$n_all"
nnb=$(sql "$DB" "select count(*) from measurements where timing = 'neighbour'")
expect_true "its measurements are stored as neighbour ($nnb)" test "$nnb" -gt 0
expect_eq "the stream measurements are as they were" "$(sql "$DB" "select count(*) from measurements where timing = 'stream'")" "$nst"

# check times each winner the way it was recorded (the neighbour sweep wrote them).
rm -f "$T/fake-state" "$T/fake-state.pid" "$T/fake-state.log"
run env AITUNE_WORKER="$FAKE" FAKE_MODE=shape_time FAKE_STATE="$T/fake-state" "$AITUNE" check "$T/st.yaml" --db "$DB" --quiet
n_all=$(grep -c ' time .*task=' "$T/fake-state.log")
expect_true "check asked the worker to time ($n_all requests)" test "$n_all" -gt 0
expect_eq "every one as neighbour, as the winners were recorded" "$(grep -c ' time .*task=.* timing=neighbour' "$T/fake-state.log")" "$n_all"
expect_stdout "\[timed neighbour as recorded; the spec says stream\]$" "its lines say so"

undecide "$DB"    # decided again, as after a cut (src/sweep_resume.h)
fake_sweep shape_time "$DB" "$T/nb.yaml"
expect_stderr "already in the registry" "run again, the neighbour sweep resumes from its own measurements"

run "$AITUNE" why axpy --dtype f32 --shape 4096 --all --db "$DB"
expect_eq "why exits 0" "$RC" 0 || show_last
expect_true "why marks neighbour-timed candidates" grep -q ' us .*(neighbour)$' "$T/out"
expect_true "and stream-timed ones apart" grep -q ' us .*(stream)$' "$T/out"

run "$AITUNE" merge "$T/merged.db" "$DB"
expect_eq "merge exits 0" "$RC" 0 || show_last
expect_eq "merge keeps the neighbour measurements" \
    "$(sql "$T/merged.db" "select count(*) from measurements where timing = 'neighbour'")" \
    "$(sql "$DB" "select count(*) from measurements where timing = 'neighbour'")"
# Timed neighbour, the fastest of each template joins the race (aitune.racing.race
# chooses among a bucket's finalists in the application's step, so each family needs
# one there); timed as a stream, the race is the top_k and the default only.
for timing in neighbour stream; do
    cat >"$T/fam_$timing.yaml" <<YAML
name: fam-$timing
search: random
max_evals: 3
top_k: 1
timing: $timing
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [gemv, swapab, mma]
    shapes: {m: {values: [8], exact: true}, n: {values: [256], exact: true}, k: {values: [256], exact: true}}
YAML
    fake_sweep ok "$T/fam_$timing.db" "$T/fam_$timing.yaml" --vendor off
    expect_eq "the $timing sweep exits 0" "$RC" 0 || show_last
done
fams() { sql "$1" "select count(distinct t) from (select template t from winners union all select json_extract(value, '\$.template') from winners, json_each(winners.runners_up))"; }
expect_eq "neighbour: a finalist of each of the 3 templates raced" "$(fams "$T/fam_neighbour.db")" 3
expect_true "stream: fewer families among the finalists ($(fams "$T/fam_stream.db"))" test "$(fams "$T/fam_stream.db")" -lt 3
done_testing
