#!/usr/bin/env bash
# tests/run: slow 6 (swapab spaces compiled)
# The swap-AB decode family (templates/gemm_nt/swapab.lua, gemm_nt, sm_90a)
# without a GPU: a seeded sample of its space at the shapes of
# tests/gpu/swapab_sanitize.yaml (m = 1, 3, 16, 40; n = 1000; k = 1096 and
# 4096; bf16 and f32 outputs) compiles for sm_90a without spills or stack;
# each kernel takes the weight's and A's tensor maps and no workspace, and
# does split-K through one cluster barrier split around the mainloop plus
# one-way remote stores to CTA 0 (no barrier at the end); supports() keeps
# it off k not a multiple of 8 and off m > 256 (tests/cli/swapab_mid.sh: the
# mid-size kernel above m = 64); one-config spaces breaking
# one rule at a time are refused.
. "$(dirname "$0")/lib.sh"

run "$AITUNE" compile -v "$ROOT/tests/gpu/swapab_sanitize.yaml" --db "$T/s.db" --max-evals 4
expect_eq "compile a sample of the swapab space" "$RC" 0 || show_last
cp "$T/out" "$T/table"
n=$(awk '$2 == "gemm_nt/swapab"' "$T/table" | wc -l)
expect_true "swapab configs are instantiated at every bucket ($n)" test "$n" -ge 16
clean=$(awk '$2 == "gemm_nt/swapab" && $5 == 0 && $4 > 0' "$T/table" | wc -l)
expect_eq "none of the $n swapab kernels spills, all report registers" "$clean" "$n"
expect_eq "no swapab kernel keeps a stack frame" \
    "$(sql "$T/s.db" "select count(*) from cubins where stack > 0 and source like '%#define CS %'")" 0
# ptxas serializes wgmma that sit under a branch (C7520 in its report):
# the first kbox version lost 9% that way at 16 x 4096^2.
expect_eq "no swapab kernel has its wgmma serialized by ptxas" \
    "$(sql "$T/s.db" "select count(*) from cubins where source like '%#define CS %' and log like '%C7520%'")" 0
expect_eq "no sampled config has l2pre without pdl" "$(grep 'gemm_nt/swapab' "$T/table" | grep -v '"l2pre":0' | grep -c '"pdl":0')" 0
nk=$(sql "$T/s.db" "select count(*) from cubins where source like '%#define CS %'")
expect_true "the registry holds the sampled kernels ($nk)" test "$nk" -ge 16
expect_eq "each kernel takes two tensor maps, D and the dims, no workspace" \
    "$(sql "$T/s.db" "select count(*) from cubins where source like '%#define CS %' and source like '%(const __grid_constant__ tmap_t tmB,
    const __grid_constant__ tmap_t tmA, % D, long long m, long long n, long long k)%'")" "$nk"
ncs=$(sql "$T/s.db" "select count(*) from cubins where source like '%#define CS 1
%'")
expect_true "the sample has split-K configs ($((nk - ncs)) of $nk)" test "$ncs" -lt "$nk"
expect_eq "split-K kernels send their sums to CTA 0 and never wait on a cluster barrier at the end" \
    "$(sql "$T/s.db" "select count(*) from cubins where source not like '%#define CS 1
%' and source like '%#define CS %' and source like '%barrier.cluster.arrive.relaxed.aligned%'
    and source like '%arrive_peer(rbar, 0u);%' and source like '%mbar_wait_cluster(rbar%'")" "$((nk - ncs))"
# m = 40: a pass of 40, 48 or 64 rows of A.
n40=$(sql "$T/s.db" "select count(*) from cubins where source like '%#define BN 40%' or source like '%#define BN 48%' or source like '%#define BN 64%'")
expect_true "m = 40 compiles bn 40, 48 or 64 configs ($n40)" test "$n40" -ge 1

# supports(): k not a multiple of 8 (TMA strides) and m > 256 get no swapab.
spec nosw.yaml <<'YAML'
name: nosw
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [swapab]
    shapes: {m: {values: [16, 257]}, n: {values: [1000]}, k: {values: [1001]}}
YAML
run "$AITUNE" compile "$T/nosw.yaml" --db "$T/nosw.db" --max-evals 2
expect_eq "no swapab kernel at k = 1001 or m = 257" "$(sql "$T/nosw.db" "select count(*) from cubins")" 0

# Its rules: a one-config space accepted at 16 x 4096^2, then the same config
# breaking one rule at a time (l2pre without pdl, a pass narrower than m,
# one twice as wide as needed, more slots than boxes) is refused.
spec one.yaml <<'YAML'
name: one
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [swapab]
    shapes: {m: {values: [16]}, n: {values: [4096]}, k: {values: [4096]}}
YAML
for bad in 'none|' 'pdl|0' 'bn|8' 'bn|32' 'csplit|8,stages|16' 'kbox|4,stages|16'; do
    cat > "$T/one.lua" <<'LUA'
M.params = {
  { "bm", { 64 } }, { "bn", { 16 } }, { "stages", { 8 } }, { "csplit", { 2 } },
  { "pdl", { 1 } }, { "l2pre", { 1 } }, { "inflight", { 1 } }, { "kbox", { 1 } },
}
LUA
    edit_params "$T/one.lua" "$bad"
    rm -rf "$T/onehome"
    python3 "$ROOT/bench/narrow.py" "$T/onehome" swapab "$T/one.lua"
    AITUNE_HOME=$T/onehome run "$AITUNE" compile "$T/one.yaml" --db "$T/one.db" --quiet
    if [ "$bad" = 'none|' ]; then
        expect_true "swapab at 16 x 4096^2: the one-config space is compiled" grep -q '1 candidates evaluated; 1 compiled' "$T/err"
    else
        expect_true "swapab with $bad: refused by the constraints" grep -q '0 candidates evaluated; 0 compiled, 0 from the cache; 1 rejected' "$T/err"
    fi
done
# The default config is whole (every param, tmpl.c checks) and valid at a
# decode shape: a fake sweep stores it without a warning.
seed_db "$T/def.db"
fake_sweep ok "$T/def.db" "$T/one.yaml" --max-evals 2
expect_eq "a fake sweep of the swapab bucket exits 0" "$RC" 0
expect_true "no warning about swapab's default" bash -c "! grep -q 'default()' '$T/err'"
expect_eq "its default is stored" "$(sql "$T/def.db" "select count(*) from defaults where template = 'gemm_nt/swapab'")" 1

done_testing
