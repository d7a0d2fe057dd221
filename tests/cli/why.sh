#!/usr/bin/env bash
# aitune why: the winner, the race, the fastest candidates, every failure
# with its reason, the environment; by shape or by bucket; bad input.
. "$(dirname "$0")/lib.sh"

small_spec
DB=$T/w.db
seed_db "$DB" || { fail "seed the cubin cache"; exit 1; }
fake_sweep wrong_verify:3,crash_verify:5 "$DB" "$T/small.yaml"
expect_eq "a fake sweep with a wrong and a crashing candidate" "$RC" 0 || show_last

expect_exit 0 "why by shape" "$AITUNE" why axpy --dtype f32 --shape 100 --db "$DB"
expect_stdout "^axpy f32 n=2\^6 on sm_90\$" "names the bucket that holds the shape"
w=$(sql "$DB" "select template || ' ' || config from winners")
expect_stdout "^winner: $(printf '%s' "$w" | sed 's/[]{}[^$.*+?|()\\]/\\&/g'): [0-9.]+ us" "shows the winner the registry holds"
expect_stdout "x the template default" "compares with the default"
expect_stdout "^the race \(finalists re-timed interleaved" "shows the race"
n_race=$(grep -c '^  [ 0-9][0-9]  ' "$T/out")
n_ru=$(sql "$DB" "select json_array_length(runners_up) + 1 from winners")
expect_eq "the race lists the winner and each runner-up" "$n_race" "$n_ru"
expect_stdout "^fastest correct candidates:" "lists the fastest candidates"
expect_stdout "^measured: [0-9]+ candidates, [0-9]+ ok, [0-9]+ runtime, 1 wrong" "counts the candidates by status"
expect_stdout "^  wrong +axpy/vec \{.*\}: .*" "the wrong candidate and its reason"
expect_stdout "^  runtime +axpy/vec \{.*\}: .+" "the crashed candidate and its reason"
expect_stdout "^run 1: aitune sweep " "the run's command line"
expect_stdout "^  aitune .*, seed 1, " "the version and seed"
expect_stdout "^  GPU: Fake GPU \(sm_90, 132 SMs.*driver fake, CUDA 13.0, NVRTC" "the device fingerprint"

expect_exit 0 "why by bucket" "$AITUNE" why axpy --dtype f32 --bucket 'n=2^6' --arch sm_90a --db "$DB"
expect_stdout "^axpy f32 n=2\^6 on sm_90\$" "--bucket and --arch sm_90a pick the same bucket"
expect_exit 0 "why --all" "$AITUNE" why axpy --dtype f32 --shape 64 --all --db "$DB"
n_ok=$(sql "$DB" "select count(*) from measurements where status = 'ok'")
expect_eq "--all lists every ok candidate" "$(grep -c '^ *[0-9.]* us .* regs  axpy/vec' "$T/out")" "$n_ok"

# Registry text with terminal escapes and newlines is shown escaped, one line each.
sqlite3 "$DB" "UPDATE measurements SET error = 'red' || char(27) || '[31m' || char(10) || 'second line' WHERE status = 'wrong'"
expect_exit 0 "why with escapes in a recorded error" "$AITUNE" why axpy --dtype f32 --shape 64 --db "$DB"
if grep -q $'\x1b' "$T/out"; then fail "why prints a raw terminal escape from the registry"; else ok "why escapes control bytes"; fi
if grep -qF 'red\x1b[31m\nsecond line' "$T/out"; then ok "the recorded error stays on one line, escaped"
else fail "the recorded error is not shown escaped on one line"; show_last 20; fi
expect_exit 1 "why for a shape with nothing recorded" "$AITUNE" why axpy --dtype f32 --shape 5000 --db "$DB"
expect_stderr "^aitune: error: nothing recorded for axpy f32 in the bucket of shape 5000 \(recorded: sm_90 n=2\^6\)\$" \
    "says what is recorded instead"
expect_stderr_lines 1 "one line"
expect_exit 2 "why of an unknown op" "$AITUNE" why axpx --dtype f32 --shape 64 --db "$DB"
expect_stderr "^aitune: error: unknown op 'axpx'" "names the unknown op"
expect_exit 2 "why of an unknown dtype" "$AITUNE" why axpy --dtype f33 --shape 64 --db "$DB"
expect_stderr "^aitune: error: unknown dtype 'f33' for op 'axpy'" "names the unknown dtype"
expect_exit 2 "why with neither --shape nor --bucket" "$AITUNE" why axpy --dtype f32 --db "$DB"
expect_exit 2 "why with a shape of the wrong rank" "$AITUNE" why axpy --dtype f32 --shape 64,64 --db "$DB"
expect_stderr "op 'axpy' has 1 dim; --shape gives 2" "says how many dims the op has"
expect_exit 3 "why on a registry that is not one" sh -c "echo garbage > '$T/bad.db'; '$AITUNE' why axpy --dtype f32 --shape 64 --db '$T/bad.db'"
expect_stderr_lines 1 "a broken registry is one line"
done_testing
