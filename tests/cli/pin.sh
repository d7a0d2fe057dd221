#!/usr/bin/env bash
# `aitune pin` (issue 32): a finalist of a bucket's race made its winner, for a
# choice made by a measurement the sweep cannot make (the application's step).
# A fake sweep of gemm_nt bf16 m = 8 (gemv, swapab, rowdot; top_k 4) leaves a
# winner and three runners-up; --list prints them with their kernels; a
# runner-up pinned is what show, lookup, emit (built by nvcc where there is
# one) and why answer, the old winner among the runners-up, the run row the
# command with its note; pinned again, nothing changes; the same sweep run
# again leaves the pin. Every refusal: an unknown op, a config not among the
# finalists, malformed JSON, a bucket with no winner, a finalist whose cubin
# is gone, a read-only registry, hostile strings (taken as data).
. "$(dirname "$0")/lib.sh"

spec pin.yaml <<'YAML'
name: pin
seed: 3
top_k: 4
max_evals: 2
search: random
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [gemv, swapab, rowdot]
    shapes: {m: {values: [8]}, n: {values: [4096]}, k: {values: [4096]}}
YAML
DB=$T/pin.db
K='m=2^3,n=2^12,k=2^12'
fake_sweep ok "$DB" "$T/pin.yaml"
expect_eq "the sweep exits 0" "$RC" 0 || show_last

# ---- --list ----
expect_exit 0 "--list" "$AITUNE" pin gemm_nt --dtype bf16 --bucket "$K" --list --db "$DB"
cp "$T/out" "$T/list"
n=$(wc -l <"$T/list")
expect_true "it lists the winner and at least 2 runners-up ($n lines)" test "$n" -ge 3
expect_eq "the winner first, winner true only there" "$(grep -n '"winner":true' "$T/list" | cut -d: -f1)" 1
expect_eq "every finalist has its kernel" "$(grep -c '"kernel":true' "$T/list")" "$n"
old_t=$(sed -n 1p "$T/list" | python3 -c 'import json,sys; print(json.load(sys.stdin)["template"])')
old_c=$(sed -n 1p "$T/list" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["config"], separators=(",", ":"), sort_keys=True))')
stored=$(sql "$DB" "select template || ' ' || config from winners")
expect_eq "the winner line is the winner row" "$old_t $old_c" "$stored"
# A runner-up of the other family when there is one, else the second.
pick=$(python3 - "$T/list" "$old_t" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
other = [r for r in rows[1:] if r["template"] != sys.argv[2]] or rows[1:]
r = other[0]
print(r["template"], json.dumps(r["config"], separators=(",", ":"), sort_keys=True), r["median_us"])
PY
)
new_t=${pick%% *}; rest=${pick#* }; new_c=${rest% *}; new_us=${rest##* }
# The user's config with spaces and another key order: compared canonical.
spaced=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(json.dumps(dict(reversed(list(d.items())))))' "$new_c")

# ---- refusals before the pin ----
expect_exit 2 "an unknown op" "$AITUNE" pin gemm_zz --dtype bf16 --bucket "$K" --list --db "$DB"
expect_stderr "op 'gemm_zz' has no templates" "... named"
expect_exit 2 "malformed JSON in --config" "$AITUNE" pin gemm_nt --dtype bf16 --bucket "$K" --template "$new_t" \
    --config '{"bm":128,' --db "$DB"
expect_stderr "--config .* is not a JSON object" "... named"
expect_exit 2 "a template that is not the op's" "$AITUNE" pin gemm_nt --dtype bf16 --bucket "$K" --template gemm_nt/nope \
    --config '{}' --db "$DB"
expect_exit 2 "a key that is not one" "$AITUNE" pin gemm_nt --dtype bf16 --bucket "m=8;DROP TABLE winners" --list --db "$DB"
expect_exit 2 "neither --list nor a finalist" "$AITUNE" pin gemm_nt --dtype bf16 --bucket "$K" --db "$DB"
expect_exit 3 "a bucket with no winner" "$AITUNE" pin gemm_nt --dtype bf16 --bucket 'm=2^4,n=2^12,k=2^12' --list --db "$DB"
expect_stderr "bucket m=2\^4,n=2\^12,k=2\^12 has no winner" "... named"
expect_exit 3 "no registry" "$AITUNE" pin gemm_nt --dtype bf16 --bucket "$K" --list --db "$T/none.db"
other_c=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); k=sorted(d)[0]; d[k]=d[k]+1 if isinstance(d[k],int) else d[k]; print(json.dumps(d))' "$old_c")
expect_exit 3 "a config the template knows that is not a finalist" "$AITUNE" pin gemm_nt --dtype bf16 --bucket "$K" \
    --template "$old_t" --config '{"vec":8}' --db "$DB"
expect_stderr "is not one of its finalists" "... named"
hostile='{"bm":"1\"); DROP TABLE winners; --"}'
expect_exit 3 "a hostile config is data: not a finalist" "$AITUNE" pin gemm_nt --dtype bf16 --bucket "$K" \
    --template "$new_t" --config "$hostile" --db "$DB"
expect_eq "... and the winners are all there" "$(sql "$DB" "select count(*) from winners")" 1
# A read-only registry cannot be pinned (exit 1); nothing changes.
cp "$DB" "$T/ro.db"; chmod 444 "$T/ro.db"
if [ -w "$T/ro.db" ]; then
    skip "a read-only registry (this user writes read-only files: root)"
else
    expect_exit 1 "a read-only registry" "$AITUNE" pin gemm_nt --dtype bf16 --bucket "$K" --template "$new_t" \
        --config "$new_c" --db "$T/ro.db"
fi
# A finalist whose cubin is gone cannot be pinned (exit 3), and is listed so.
cp "$DB" "$T/gone.db"
hash=$(sql "$T/gone.db" "select cubin from measurements where template = '$new_t' and config = '$new_c' and status = 'ok' limit 1")
sql "$T/gone.db" "delete from cubins where hash = '$hash'" >/dev/null
expect_exit 0 "--list with a finalist's cubin gone" "$AITUNE" pin gemm_nt --dtype bf16 --bucket "$K" --list --db "$T/gone.db"
expect_eq "... it lists it with kernel false" "$(grep -c '"kernel":false' "$T/out")" 1
expect_exit 3 "pinning it" "$AITUNE" pin gemm_nt --dtype bf16 --bucket "$K" --template "$new_t" --config "$new_c" \
    --db "$T/gone.db"
expect_stderr "cannot be pinned: its cubin .* is no longer in the registry" "... saying why"
expect_eq "... the winner unchanged" "$(sql "$T/gone.db" "select template from winners")" "$old_t"

# ---- the pin ----
note="raced in the model's decode step: 6.86 ms against 7.05 ms"
expect_exit 0 "pin a runner-up ($new_t)" "$AITUNE" pin gemm_nt --dtype bf16 --bucket "$K" --template "$new_t" \
    --config "$spaced" --note "$note" --db "$DB"
expect_stdout "^pin: gemm_nt bf16 $(printf '%s' "$K" | sed 's/\^/\\^/g'): $new_t .* \\(was $old_t .*\\)$" "one line says what and what it was"
run "$AITUNE" show --json --db "$DB"
got=$(python3 -c 'import json,sys; w=json.load(open(sys.argv[1]))[0]; print(w["template"], json.dumps(w["config"],separators=(",",":"),sort_keys=True), w["median_us"])' "$T/out")
expect_eq "show --json: the pinned finalist, its race time" "$got" "$new_t $new_c $new_us"
run "$AITUNE" lookup gemm_nt --arch sm_90 --dtype bf16 --shape 8,4096,4096 --db "$DB"
expect_stdout "^$new_t " "lookup answers with it"
run "$AITUNE" emit gemm_nt --arch sm_90 --dtype bf16 --shape 8,4096,4096 --db "$DB" -o "$T/pin.cu"
expect_eq "emit exits 0" "$RC" 0 || show_last
expect_true "the emitted file's kernel is the pinned one" grep -q "template $new_t, config $new_c" "$T/pin.cu"
wc=$(sql "$DB" "select cubin from winners")
kn=$(sql "$DB" "select kernel from cubins where hash = '$wc'")
expect_true "... its code is the cubin's kernel ($kn)" grep -q "$kn" "$T/pin.cu"
expect_eq "the winner's cubin is the finalist's measurement's" \
    "$(sql "$DB" "select count(*) from measurements where cubin = '$wc' and template = '$new_t' and status = 'ok'")" 1
if command -v nvcc >/dev/null 2>&1; then
    emit_builds "$DB" gemm_nt sm_90 bf16 8,4096,4096 "$T/built.cu" "of the pinned bucket"
else
    skip "nvcc builds the pinned bucket's file (no nvcc)"
fi
expect_eq "the old winner is among the runners-up" \
    "$(sql "$DB" "select count(*) from winners w, json_each(w.runners_up) f where json_extract(f.value, '\$.template') = '$old_t' and json(json_extract(f.value, '\$.config')) = '$old_c'")" 1
expect_eq "the pinned one is not" \
    "$(sql "$DB" "select count(*) from winners w, json_each(w.runners_up) f where json(json_extract(f.value, '\$.config')) = '$new_c'")" 0
expect_eq "as many runners-up as before" "$(sql "$DB" "select json_array_length(runners_up) from winners")" "$((n - 1))"
expect_true "the margin is negative (the sweep timed the old winner faster)" \
    test "$(sql "$DB" "select margin < 0 and margin > -1 from winners")" = 1
cmdline=$(sql "$DB" "select r.command || '|' || r.outcome from winners w join runs r on r.id = w.run")
expect_true "the winner's run is the pin's, its command with the note ($cmdline)" \
    test "${cmdline#aitune pin gemm_nt }" != "$cmdline" -a "${cmdline%|ok}" != "$cmdline" -a -z "${cmdline##*$note*}"
run "$AITUNE" why gemm_nt --dtype bf16 --bucket "$K" --db "$DB"
expect_stdout "^run [0-9]+: aitune pin gemm_nt .*--note $note" "why shows the pin's command"
expect_stdout "^winner: $new_t " "why shows the pinned winner"
run "$AITUNE" status --db "$DB"
expect_stdout "^fresh +gemm_nt bf16" "status: the pinned winner is fresh (the sweep's template sources kept)"

# ---- again: nothing to do ----
before=$(sql "$DB" "select * from winners")
expect_exit 0 "pin it again" "$AITUNE" pin gemm_nt --dtype bf16 --bucket "$K" --template "$new_t" --config "$new_c" --db "$DB"
expect_stdout "is the winner already; nothing changed" "... says it is the winner already"
expect_eq "... and changes nothing" "$(sql "$DB" "select * from winners")" "$before"
expect_eq "... nor records a run" "$(sql "$DB" "select count(*) from runs")" 2

# ---- the same sweep again leaves it ----
fake_sweep ok "$DB" "$T/pin.yaml"
expect_eq "the sweep again exits 0" "$RC" 0 || show_last
expect_stderr "nothing to do" "it has nothing to do (the pin holds the sweep's decision)"
expect_eq "the pinned winner stays" "$(sql "$DB" "select * from winners")" "$before"

# ---- the previous winner pinned back ----
expect_exit 0 "the old winner pinned back" "$AITUNE" pin gemm_nt --dtype bf16 --bucket "$K" --template "$old_t" \
    --config "$old_c" --db "$DB"
expect_eq "... it is the winner again, at its race time" "$(sql "$DB" "select template || ' ' || config from winners")" \
    "$old_t $old_c"
expect_true "... ahead of the others again (margin >= 0)" test "$(sql "$DB" "select margin >= 0 from winners")" = 1

# ---- the lock: a sweep holding the registry stops a pin (exit 1) ----
cp "$DB" "$T/busy.db"
sed 's/values: \[8\]/values: [4]/' "$T/pin.yaml" >"$T/busy.yaml"
bg_fake_sweep slow_time:400 "$T/busy.db" "$T/busy.yaml"
for _ in $(seq 100); do grep -q ' time ' "$T/fake-state.log" 2>/dev/null && break; sleep 0.1; done
expect_exit 1 "a pin while a sweep holds the registry" "$AITUNE" pin gemm_nt --dtype bf16 --bucket "$K" \
    --template "$new_t" --config "$new_c" --db "$T/busy.db"
expect_stderr "sweep" "... naming the holder"
expect_eq "... the winner unchanged" "$(sql "$T/busy.db" "select template from winners where bucket = '$K'")" "$old_t"
kill "$BG" 2>/dev/null
done_testing
