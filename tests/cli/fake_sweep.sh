#!/usr/bin/env bash
# The whole pipeline without a GPU: sweep with the fake worker, then show,
# show --json, lookup at each level, and emit + nvcc. The fake's times are
# deterministic (a hash of the kernel name), so the winner is known.
. "$(dirname "$0")/lib.sh"

small_spec
DB=$T/fake.db
seed_db "$DB" || { fail "seed the cubin cache (aitune compile small.yaml)"; exit 1; }

# A registry with only compiled kernels has no winners yet.
expect_exit 0 "show of a compile-only registry" "$AITUNE" show --db "$DB"
expect_stdout "^no winners yet in .*fake.db" "show says there are no winners yet"
expect_exit 0 "show --json of a compile-only registry" "$AITUNE" show --db "$DB" --json
expect_eq "show --json of no winners is []" "$(tr -d ' \n' <"$T/out")" "[]"

# devices through the fake worker.
run env AITUNE_WORKER="$FAKE" "$AITUNE" devices --json
expect_eq "devices --json with the fake worker exits 0" "$RC" 0
got=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d), d[0]["name"], d[0]["cc"], d[0]["sms"])' <"$T/out" 2>&1)
expect_eq "devices --json is valid JSON with the device" "$got" "1 Fake GPU 90 132"
run env AITUNE_WORKER="$FAKE" "$AITUNE" devices
expect_stdout "^GPU 0: Fake GPU, sm_90, 132 SMs" "devices names the GPU"

fake_sweep ok "$DB" "$T/small.yaml"
expect_eq "fake sweep of small.yaml exits 0" "$RC" 0 || show_last
expect_stdout "^device: Fake GPU \(sm_90, 132 SMs" "the sweep names the (fake) device"
expect_stdout "^axpy +f32 +n=2\^6 .* us .*axpy/vec \{" "the sweep prints the bucket's winner"
expect_stderr "sweep: [0-9]+ candidates evaluated, [0-9]+ ok" "the summary line counts the candidates"
if grep -q "already in the registry" "$T/err"; then fail "a fresh sweep resumes nothing"; show_last; else ok "a fresh sweep resumes nothing"; fi
n_ok=$(sql "$DB" "select count(*) from measurements where status = 'ok'")
n_all=$(sql "$DB" "select count(*) from measurements")
n_cfg=$(sql "$DB" "select count(distinct config_hash) from measurements")
[ "$n_ok" -ge 30 ] && ok "every candidate is an ok measurement ($n_ok)" || fail "ok measurements: $n_ok"
expect_eq "each config is measured once" "$n_all" "$n_cfg"
expect_eq "one winner" "$(sql "$DB" "select count(*) from winners")" 1
expect_eq "the run is recorded as ok" "$(sql "$DB" "select outcome from runs order by id desc limit 1")" ok
expect_eq "the device fingerprint is recorded" "$(sql "$DB" "select name || ' ' || cc || ' ' || driver from devices")" "Fake GPU 90 fake"
expect_eq "the default is stored for (axpy, sm_90, f32)" \
    "$(sql "$DB" "select template || ' ' || config from defaults where op='axpy' and arch='sm_90' and dtype='f32'")" \
    'axpy/vec {"block":256,"grid_stride":0,"ilp":1,"vec":1}'
expect_eq "the default was measured" \
    "$(sql "$DB" "select count(*) from measurements where config = '{\"block\":256,\"grid_stride\":0,\"ilp\":1,\"vec\":1}' and status = 'ok'")" 1
# The fake's times: the fastest ok measurement is the winner.
best=$(sql "$DB" "select config from measurements where status = 'ok' order by median_us, config limit 1")
win=$(sql "$DB" "select config from winners")
expect_eq "the winner is the fastest candidate" "$win" "$best"
expect_eq "the winner's time is the fastest time" \
    "$(sql "$DB" "select printf('%.2f', median_us) from winners")" \
    "$(sql "$DB" "select printf('%.2f', min(median_us)) from measurements where status = 'ok'")"
expect_eq "the winner has a time, a cubin and a launch" \
    "$(sql "$DB" "select median_us > 0 and length(cubin) = 16 and launch like '%grid%' and exhaustive = 1 and default_us > 0 from winners")" 1
expect_eq "every measurement carries its kernel's registers" \
    "$(sql "$DB" "select count(*) from measurements where status = 'ok' and (registers is null or registers < 1)")" 0

expect_exit 0 "show" "$AITUNE" show --db "$DB"
expect_stdout "^axpy +sm_90 +f32 +n=2\^6 .*axpy/vec $win" "show lists the winner"
expect_no_stdout "not exhaustive" "a complete sweep is not marked (not exhaustive)"
expect_exit 0 "show --json" "$AITUNE" show --db "$DB" --json
expect_true "show --json is valid JSON" python3 -c 'import json,sys; json.load(sys.stdin)' <"$T/out"
got=$(python3 -c 'import json,sys; w=json.load(sys.stdin); print(len(w), w[0]["op"], w[0]["dtype"], w[0]["bucket"], w[0]["exhaustive"], w[0]["median_us"] > 0)' <"$T/out" 2>&1)
expect_eq "show --json has the winner's fields" "$got" "1 axpy f32 n=2^6 True True"
run "$AITUNE" show --db "$T/empty.db" --json
[ "$RC" = 3 ] && ok "show --json of a missing registry exits 3" || fail "show --json of a missing registry: exit $RC"

# A second sweep of the same spec does nothing (its bucket is decided:
# src/sweep_resume.h); decided again (as after a cut), it measures nothing.
fake_sweep ok "$DB" "$T/small.yaml"
expect_eq "a second sweep exits 0" "$RC" 0
expect_stderr "^sweep: nothing to do: its 1 bucket is decided" "the second sweep does nothing"
undecide "$DB"
fake_sweep ok "$DB" "$T/small.yaml"
expect_eq "a sweep that decides the bucket again exits 0" "$RC" 0
expect_stderr "\($n_all already in the registry\)" "it takes every candidate from the registry"
expect_eq "and adds no measurement" "$(sql "$DB" "select count(*) from measurements")" "$n_all"
expect_eq "the winner stays the same" "$(sql "$DB" "select config from winners")" "$win"

# --max-evals caps the candidates per bucket and template (plus the default).
DB4=$T/capped.db
seed_db "$DB4"
fake_sweep ok "$DB4" "$T/small.yaml" --max-evals 5
expect_eq "a capped sweep exits 0" "$RC" 0
n=$(sql "$DB4" "select count(*) from measurements")
[ "$n" -ge 5 ] && [ "$n" -le 6 ] && ok "--max-evals 5 measures 5 candidates and the default ($n)" || fail "--max-evals 5 measured $n"
expect_eq "a capped winner is not exhaustive" "$(sql "$DB4" "select exhaustive from winners")" 0
run "$AITUNE" show --db "$DB4"
expect_stdout "\(not exhaustive\)" "show marks a capped winner (not exhaustive)"

# Two dtypes, two buckets: a winner each, in order, and lookups by bucket edges.
spec two.yaml <<'SPEC'
name: two
max_evals: 3
tasks:
  - op: axpy
    dtypes: [f32, f16]
    shapes:
      n: {log2: [6, 7]}
SPEC
DB5=$T/two.db
seed_db "$DB5"
fake_sweep ok "$DB5" "$T/two.yaml"
expect_eq "a two-dtype, two-bucket sweep exits 0" "$RC" 0 || show_last
expect_eq "4 winners" "$(sql "$DB5" "select count(*) from winners")" 4
expect_eq "winner edges are the buckets'" \
    "$(sql "$DB5" "select group_concat(dtype || ':' || lo || '-' || hi, ' ') from (select * from winners order by dtype, cast(lo as integer))")" \
    "f16:64-128 f16:128-256 f32:64-128 f32:128-256"
run "$AITUNE" show --db "$DB5"
order=$(awk 'NR > 1 { print $3 "/" $4 }' "$T/out" | tr '\n' ' ')
expect_eq "show orders winners by dtype, then size" "$order" "f16/n=2^6 f16/n=2^7 f32/n=2^6 f32/n=2^7 "
for q in "127 exact n=2^6" "128 exact n=2^7" "255 exact n=2^7" "1 nearest n=2^6" "256 nearest n=2^7" "100000 nearest n=2^7"; do
    set -- $q
    run "$AITUNE" lookup axpy --arch sm_90 --dtype f16 --shape "$1" --db "$DB5" --json
    got=$(python3 -c 'import json,sys; c=json.load(sys.stdin); print(c["level"], c["bucket"])' <"$T/out" 2>&1)
    expect_eq "lookup f16 n=$1 -> $2 $3" "$got" "$2 $3"
done
# axpy has one dim: two sizes are a usage error (2, like every malformed
# --shape), not a silent default.
run "$AITUNE" lookup axpy --arch sm_90 --dtype f16 --shape 64,64 --db "$DB5"
expect_eq "lookup with two sizes for a one-dim op exits 2" "$RC" 2
expect_stderr "dim" "and the error is about the dims"
run "$AITUNE" emit axpy --arch sm_90 --dtype f16 --shape 64,64 --db "$DB5" -o "$T/two-dims.cu"
expect_eq "emit with two sizes for a one-dim op exits 2" "$RC" 2

# f16: every candidate answers wrong, so there is no winner, only the default.
spec f16.yaml <<'EOF'
name: f16
tasks:
  - op: axpy
    dtypes: [f16]
    shapes:
      n: {log2: [6, 6]}
EOF
fake_sweep wrong_verify:0 "$DB" "$T/f16.yaml" --max-evals 1
expect_eq "an f16 sweep where every candidate is wrong exits 0" "$RC" 0
expect_stdout "no correct candidate" "it says there is no correct candidate"
expect_eq "no f16 winner" "$(sql "$DB" "select count(*) from winners where dtype = 'f16'")" 0
expect_eq "the f16 default is stored" "$(sql "$DB" "select count(*) from defaults where dtype = 'f16'")" 1
expect_eq "wrong candidates are recorded as wrong" \
    "$(sql "$DB" "select count(*) > 0 and sum(status != 'wrong') = 0 from measurements where dtype = 'f16'")" 1

# lookup: exact, nearest, default.
expect_exit 0 "lookup a tuned shape" "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape 100 --db "$DB"
expect_stdout "^axpy/vec .*\(exact: tuned bucket n=2\^6" "n=100 is answered exactly from bucket n=2^6"
hw=$(sql "$DB" "select hw from winners where op = 'axpy' and dtype = 'f32' and bucket = 'n=2^6'")
expect_stdout "us on $(printf '%s' "$hw" | sed 's/[][\.*^$|]/\\&/g'))" "and says which GPU measured it ($hw)"
expect_exit 0 "lookup with an arch suffix" "$AITUNE" lookup axpy --arch sm_90a --dtype f32 --shape 64 --db "$DB"
expect_stdout "exact" "sm_90a finds the sm_90 winner"
expect_exit 0 "lookup a far shape" "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape 1048576 --db "$DB"
expect_stdout "\(nearest: .*n=2\^6" "n=2^20 is answered from the nearest bucket"
expect_exit 0 "lookup --json" "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape 1048576 --db "$DB" --json
got=$(python3 -c 'import json,sys; c=json.load(sys.stdin); print(c["level"], c["bucket"], round(c["distance"], 2))' <"$T/out" 2>&1)
expect_eq "lookup --json is valid JSON with the level" "$got" "nearest n=2^6 13.01"
got=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["measured_on"])' <"$T/out" 2>&1)
expect_eq "lookup --json says which GPU measured the winner" "$got" "$hw"
expect_exit 0 "lookup a dtype with only a default" "$AITUNE" lookup axpy --arch sm_90 --dtype f16 --shape 100 --db "$DB"
expect_stdout "\(default: " "f16 is answered by the template default"
expect_stdout '\{"block":256,"grid_stride":0,"ilp":1,"vec":1\}' "the default config is the template's"
expect_exit 3 "lookup a dtype with nothing" "$AITUNE" lookup axpy --arch sm_90 --dtype bf16 --shape 100 --db "$DB"
expect_stderr "no winner or default" "nothing for bf16 says so"
expect_exit 3 "lookup an op with nothing" "$AITUNE" lookup cast --arch sm_90 --dtype 'f32>bf16' --shape 100 --db "$DB"

# emit: a standalone .cu that plain nvcc compiles.
expect_exit 0 "emit the tuned kernel" "$AITUNE" emit axpy --arch sm_90 --dtype f32 --shape 100 --db "$DB" -o "$T/k.cu"
expect_stderr "wrote .*k.cu: aitune_axpy_f32" "emit says what it wrote"
grep -q 'extern "C" cudaError_t aitune_axpy_f32(' "$T/k.cu" && ok "k.cu has the launch function" || fail "k.cu has the launch function"
grep -qF "$win" "$T/k.cu" && ok "k.cu names the winning config" || fail "k.cu names the winning config"
expect_exit 0 "emit to stdout" "$AITUNE" emit axpy --arch sm_90 --dtype f16 --shape 100 --db "$DB" -o -
expect_stdout "level 'default'" "emit of a default-only dtype says so"
cp "$T/out" "$T/k16.cu"
expect_exit 3 "emit with nothing to emit" "$AITUNE" emit axpy --arch sm_90 --dtype bf16 --shape 100 --db "$DB" -o "$T/none.cu"
[ -e "$T/none.cu" ] || [ -e "$T/none.cu.tmp" ] && fail "a failed emit leaves no file" || ok "a failed emit leaves no file"
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
    NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
    expect_exit 0 "nvcc compiles the emitted exact kernel" "$NVCC" -gencode=arch=compute_90a,code=sm_90a -c "$T/k.cu" -o "$T/k.o"
    expect_exit 0 "nvcc compiles the emitted default kernel" "$NVCC" -gencode=arch=compute_90a,code=sm_90a -c "$T/k16.cu" -o "$T/k16.o"
    if command -v nm >/dev/null 2>&1; then
        nm "$T/k.o" | grep -q " T aitune_axpy_f32$" && ok "k.o exports aitune_axpy_f32 unmangled" || fail "k.o exports aitune_axpy_f32 unmangled"
    fi
else
    skip "nvcc compiles the emitted kernel: no nvcc"
fi

done_testing
