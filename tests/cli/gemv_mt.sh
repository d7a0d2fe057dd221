#!/usr/bin/env bash
# tests/run: slow 13 (gemv mt spaces compiled)
# gemv nt's mt (templates/gemm_nt/gemv.lua) without a GPU: mt tiles of 16
# rows of A per pass, so one stream of the weight serves m up to 16 mt. A
# seeded sample of the mt 2, 3 and 4 spaces (m = 31, 47, 64; a decode
# weight and an odd one, whose k takes the tested path and the FMA-pipe
# rest) compiles without spills or stack, every kernel asking ptxas for
# blocks; each bucket is offered the one mt that covers it in one pass;
# the rules (too few tiles, tiles without rows, minb 0, more registers than
# the blocks leave) refuse a one-config space; supports() offers the family
# up to m = 64; the default above m = 16 carries the mt of its bucket.
# mt 1's sources are byte for byte those before mt (tests/cli/tmpl_sources.sh).
. "$(dirname "$0")/lib.sh"

spec mt.yaml <<'YAML'
name: mt
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [gemv]
    shapes: {m: {values: [31, 47, 64]}, n: {values: [4096]}, k: {values: [4096]}}
  - op: gemm_nt
    dtypes: [bf16>f32]
    templates: [gemv]
    shapes: {m: {values: [31, 47, 64]}, n: {values: [1000]}, k: {values: [1001]}}
YAML
# A fake sweep (the fake worker plays the GPU) compiles the sample with
# NVRTC and records each candidate under its bucket.
seed_db "$T/mt.db"
fake_sweep ok "$T/mt.db" "$T/mt.yaml" --max-evals 5
expect_eq "a fake sweep of a sample of the mt spaces exits 0" "$RC" 0 || show_last
for mt in 2 3 4; do
    n=$(sql "$T/mt.db" "select count(*) from cubins where source like '%#define MT $mt
%'")
    expect_true "mt $mt kernels are in the sample ($n)" test "$n" -ge 4
done
gemv="source like '%#define APF %'"
nk=$(sql "$T/mt.db" "select count(*) from cubins where $gemv")
expect_eq "no kernel of m > 16 is mt 1 (two passes over the weight)" \
    "$(sql "$T/mt.db" "select count(*) from cubins where $gemv and source not like '%#define MT %'")" 0
expect_eq "none of the $nk spills, all report registers" \
    "$(sql "$T/mt.db" "select count(*) from cubins where $gemv and spills = 0 and stack = 0 and registers > 0")" "$nk"
expect_eq "each asks ptxas for blocks per SM" \
    "$(sql "$T/mt.db" "select count(*) from cubins where $gemv and source like '%__launch_bounds__(WARPS * 32, MINB)%' and source not like '%#define MINB 0%'")" "$nk"
expect_eq "each walks m in passes of 16 MT rows, storing rows below m only" \
    "$(sql "$T/mt.db" "select count(*) from cubins where $gemv and source like '%r0 += 16 * MT)%' and source like '%if (row < m%'")" "$nk"
# Bucket by bucket: m = 31 is offered mt 2 only, 47 mt 3, 64 mt 4.
for pair in '2^4|2' '2^5|3' '2^6|4'; do
    b=${pair%|*} mt=${pair#*|}
    n=$(sql "$T/mt.db" "select count(*) from measurements where template = 'gemm_nt/gemv' and bucket like 'm=$b%'")
    other=$(sql "$T/mt.db" "select count(*) from measurements where template = 'gemm_nt/gemv' and bucket like 'm=$b%' and config not like '%\"mt\":$mt,%'")
    expect_true "bucket m=$b has candidates ($n)" test "$n" -ge 5
    expect_eq "every candidate of m=$b is mt $mt" "$other" 0
done

# The rules, on a one-config space at 31 x 4096^2: the config compiles; then
# one rule broken at a time is refused.
spec one.yaml <<'YAML'
name: one
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [gemv]
    shapes: {m: {values: [31]}, n: {values: [4096]}, k: {values: [4096]}}
YAML
one() {   # EDITS: the one-config space with KEY|VALUE edits, narrowed into $T/one
    cat > "$T/one.lua" <<'LUA'
local nt_params = {
  { "warps", { 8 } }, { "kw", { 8 } }, { "cpw", { 2 } }, { "vec", { 8 } }, { "seg", { 1 } }, { "lean", { 1 } },
  { "minb", { 2 } }, { "unroll", { 2 } }, { "splitk", { 1 } }, { "l2pf", { 0 } }, { "pdl", { 1 } }, { "l2pre", { 2 } },
  { "apf", { 1 } }, { "mt", { 2 } },
}
LUA
    edit_params "$T/one.lua" "$1"
    rm -rf "$T/one" "$T/one.db"
    python3 "$ROOT/bench/narrow.py" "$T/one" gemv "$T/one.lua"
}
one 'none|'
AITUNE_HOME=$T/one run "$AITUNE" compile -v "$T/one.yaml" --db "$T/one.db"
expect_eq "mt 2 at m = 31 (2 blocks of 8 warps an SM) compiles" "$RC" 0 || show_last
expect_eq "without spills, at 128 registers or fewer" \
    "$(sql "$T/one.db" "select count(*) from cubins where spills = 0 and registers between 1 and 128")" 1
# mt 1: two passes; mt 4: tiles past m; minb 0: ptxas spills; cpw 4 with
# seg 2: more registers than 2 blocks of 8 warps leave.
for bad in 'mt|1' 'mt|4' 'minb|0' 'cpw|4,seg|2'; do
    one "$bad"
    AITUNE_HOME=$T/one run "$AITUNE" compile "$T/one.yaml" --db "$T/one.db" --quiet
    expect_true "gemv mt with $bad: refused by the constraints" grep -q '0 candidates evaluated; 0 compiled, 0 from the cache; 1 rejected' "$T/err"
done
# The same edit at 1 block an SM leaves the registers it needs: accepted.
one 'cpw|4,seg|2,minb|1'
AITUNE_HOME=$T/one run "$AITUNE" compile -v "$T/one.yaml" --db "$T/one.db"
expect_eq "cpw 4, seg 2 at minb 1 compiles without spills" \
    "$(sql "$T/one.db" "select count(*) from cubins where spills = 0 and registers > 128")" 1

# supports(): m = 64 gets gemv, m = 65 none.
for m in 64 65; do
    sed "s/m: {values: \[31\]}/m: {values: [$m]}/" "$T/one.yaml" > "$T/m$m.yaml"
    run "$AITUNE" compile "$T/m$m.yaml" --db "$T/m$m.db" --max-evals 1 --quiet
    expect_eq "compile gemv at m = $m" "$RC" 0 || show_last
done
expect_true "m = 64 is offered gemv" test "$(sql "$T/m64.db" "select count(*) from cubins")" -ge 1
expect_eq "m = 65 is not" "$(sql "$T/m65.db" "select count(*) from cubins")" 0

# The default: at 31 x 4096^2 the decode config's shape with mt 2, at 2
# blocks an SM (fewer groups, one segment: the registers it needs); stored
# by a fake sweep without a warning.
seed_db "$T/def.db"
fake_sweep ok "$T/def.db" "$T/one.yaml" --max-evals 1
expect_eq "a fake sweep at m = 31 exits 0" "$RC" 0
expect_true "no warning about gemv's default" bash -c "! grep -q 'default()' '$T/err'"
d=$(sql "$T/def.db" "select config from defaults where template = 'gemm_nt/gemv'")
expect_true "its default is mt 2 at 2 blocks an SM ($d)" grep -q '"lean":1,"minb":2,"mt":2,' <<< "$d"

done_testing
