#!/usr/bin/env bash
# tests/run: slow 16 (swapab mid-size spaces compiled)
# swapab's mid-size kernel (templates/gemm_nt/swapab.lua, bn 96..256, m up
# to 256) without a GPU: a seeded sample at m = 65, 129 and 256 of a
# 4096^2 weight and m = 100, 200 of an odd one (n = 1000, k = 1096: boxes
# past n and k), bf16 and f32 outputs, compiles for sm_90a without spills
# or stack and within the registers its threads have (one warpgroup per 64
# rows of B and a producer warp, one CTA an SM); ptxas serializes none of
# its wgmma; its split-K adds through the other ranks' rings after one
# cluster barrier, each rank adding its own chunks in rank order; the
# launch plan gives each CTA BN rows of A (a column tile's tiles of rows
# neighbours along x) and the threads the
# kernel was compiled for; the constraints refuse a config breaking one
# rule at a time; supports() stops at m = 256.
. "$(dirname "$0")/lib.sh"

spec mid.yaml <<'YAML'
name: mid
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [swapab]
    shapes: {m: {values: [65, 129, 256]}, n: {values: [4096]}, k: {values: [4096]}}
  - op: gemm_nt
    dtypes: [bf16>f32]
    templates: [swapab]
    shapes: {m: {values: [100, 200]}, n: {values: [1000]}, k: {values: [1096]}}
YAML
run "$AITUNE" compile -v "$T/mid.yaml" --db "$T/mid.db" --max-evals 4
expect_eq "compile a sample of the mid-size space" "$RC" 0 || show_last
mid="source like '%#define WGS %'"
nk=$(sql "$T/mid.db" "select count(*) from cubins where $mid")
expect_true "mid-size kernels in the sample ($nk)" test "$nk" -ge 16
expect_eq "every kernel of m > 64 is the mid-size one" "$(sql "$T/mid.db" "select count(*) from cubins where not ($mid)")" 0
expect_eq "none of the $nk spills or keeps a stack frame, all report registers" \
    "$(sql "$T/mid.db" "select count(*) from cubins where $mid and spills = 0 and stack = 0 and registers > 0")" "$nk"
# One CTA an SM, its registers allotted to whole warpgroups: 160 threads
# (bm 64) may have 255 registers, 288 (bm 128) 168, 544 (bm 256) 96 (bn 160
# there needed 106 and failed to compile).
for pair in '1|255' '2|168' '4|96'; do
    w=${pair%|*} cap=${pair#*|}
    expect_eq "kernels of $w warpgroup(s) stay within $cap registers" \
        "$(sql "$T/mid.db" "select count(*) from cubins where source like '%#define WGS $w
%' and registers > $cap")" 0
done
expect_eq "ptxas serializes no mid-size kernel's wgmma (C7520)" \
    "$(sql "$T/mid.db" "select count(*) from cubins where $mid and log like '%C7520%'")" 0
expect_eq "each kernel's launch bounds are its warpgroups and the producer warp, one block an SM" \
    "$(sql "$T/mid.db" "select count(*) from cubins where $mid and (
        (source like '%#define WGS 1
%' and source like '%__launch_bounds__(160, 1)%') or (source like '%#define WGS 2
%' and source like '%__launch_bounds__(288, 1)%') or (source like '%#define WGS 4
%' and source like '%__launch_bounds__(544, 1)%'))")" "$nk"
ncs=$(sql "$T/mid.db" "select count(*) from cubins where $mid and source not like '%#define CS 1
%'")
expect_true "the sample has split-K configs ($ncs of $nk)" test "$ncs" -ge 1
expect_eq "split-K kernels wait on one cluster barrier, send their parts with 16-byte remote stores and add theirs in rank order" \
    "$(sql "$T/mid.db" "select count(*) from cubins where $mid and source not like '%#define CS 1
%' and source like '%cluster_arrive();
  cluster_wait();%' and source like '%st_peer4(base + 16u * at%' and source like '%mbar_wait_cluster(rbar, 0u);%'
    and source like '%for (int from = 0; from < CS; from++)%'")" "$ncs"

# The launch plan of a fake sweep's winners at m = 200, n = 1000 from the
# first kernel's space (mc 0; the default, the second kernel's, and its
# plan: tests/cli/swapab_mid2.sh): cdiv(m, BN) CTAs of rows of A a column
# tile, neighbours along x (so they stream the weight's boxes together), the
# threads the kernel was compiled for, A's box a tile's rows high (m split
# evenly over the tiles of rows, rounded up to 8: templates/lib/swapab.lua
# mid_box).
spec one.yaml <<'YAML'
name: one
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [swapab]
    shapes: {m: {values: [200]}, n: {values: [1000]}, k: {values: [1096]}}
YAML
cat > "$T/first.lua" <<'LUA'
M.params = {
  { "bm", { 64, 128, 256 } }, { "bn", { 256 } }, { "stages", { 2, 4, 6 } }, { "csplit", { 1, 2, 4, 8 } },
  { "pdl", { 0, 1 } }, { "l2pre", { 0, 1 } }, { "inflight", { 0, 1 } }, { "kbox", { 1, 2 } },
  { "mc", { 0 } }, { "nvar", { 1 } }, { "wstep", { 0 } },
}
LUA
python3 "$ROOT/bench/narrow.py" "$T/firsthome" swapab "$T/first.lua"
seed_db "$T/one.db"
AITUNE_HOME=$T/firsthome fake_sweep ok "$T/one.db" "$T/one.yaml" --max-evals 2
expect_eq "a fake sweep at m = 200 exits 0" "$RC" 0 || show_last
expect_true "no warning about swapab's default" bash -c "! grep -q 'default()' '$T/err'"
d=$(sql "$T/one.db" "select config from defaults where template = 'gemm_nt/swapab'")
expect_true "the default at m = 200 is a pass of 256 rows ($d)" grep -q '"bn":256,' <<< "$d"
plans=$(sql "$T/one.db" "select config || ' ' || launch from winners where template = 'gemm_nt/swapab'")
expect_true "the winners are the first kernel's" grep -q '"mc":0,' <<< "$plans"
while read -r line; do
    cfg=${line%% *}
    bm=$(sed 's/.*"bm":\([0-9]*\).*/\1/' <<< "$cfg") bn=$(sed 's/.*"bn":\([0-9]*\).*/\1/' <<< "$cfg")
    expect_true "bm $bm bn $bn: grid x cdiv(n, $bm) * cdiv(m, $bn), z 1, $((bm * 2 + 32)) threads, A's box 64 x a tile's rows (m over the tiles, to 8)" \
        grep -q "\"grid\":\[\"cdiv(n, $bm) \* cdiv(m, $bn)\",\"[0-9]*\",\"1\"\],\"block\":\[\"$((bm * 2 + 32))\".*\"arg\":\"A\",.*\"box\":\[64,\"min($bn, cdiv(cdiv(m, cdiv(m, $bn)), 8) \* 8)\"\]" <<< "$line"
done <<< "$plans"

# The rules, on a one-config space at 200 x 1000 x 1096: accepted (one tile
# of 256 rows; two tiles of 128 rows, 100 rows each), then one rule
# broken at a time (three tiles of 96 rows; the second kernel, mc 1, with
# a pass narrower than m; bm 256 with bn 192 or 160: at least 122 or 106
# registers where 544 threads have 96; 8 ranks' sums past a ring of 2
# slots; more shared memory than an SM has).
for bad in 'none|' 'bn|128' 'bn|96' 'bn|128,mc|1' 'bm|256,bn|192' 'bm|256,bn|160' 'csplit|8,stages|2' 'stages|8,kbox|2'; do
    cat > "$T/one.lua" <<'LUA'
M.params = {
  { "bm", { 128 } }, { "bn", { 256 } }, { "stages", { 4 } }, { "csplit", { 2 } },
  { "pdl", { 1 } }, { "l2pre", { 1 } }, { "inflight", { 1 } }, { "kbox", { 1 } },
  { "mc", { 0 } }, { "nvar", { 1 } }, { "wstep", { 0 } },
}
LUA
    edit_params "$T/one.lua" "$bad"
    rm -rf "$T/onehome"    # (r.db kept: the bucket's default, which each compile adds, from its cache)
    python3 "$ROOT/bench/narrow.py" "$T/onehome" swapab "$T/one.lua"
    AITUNE_HOME=$T/onehome run "$AITUNE" compile "$T/one.yaml" --db "$T/r.db" --quiet
    if [ "$bad" = 'none|' ] || [ "$bad" = 'bn|128' ]; then
        expect_true "swapab mid at 200 x 1000 x 1096 ($bad): the one-config space is compiled" grep -q '1 candidates evaluated; 1 compiled' "$T/err"
    else
        expect_true "swapab mid with $bad: refused by the constraints" grep -q '0 candidates evaluated; 0 compiled, 0 from the cache; 1 rejected' "$T/err"
    fi
done

# bench/narrow.py remakes its HOME from the current directory's templates: a
# HOME that is the current directory, or holds it, is refused, not removed.
mkdir -p "$T/guard/templates" "$T/guard/search"
run sh -c "cd '$T/guard' && python3 '$ROOT/bench/narrow.py' . swapab '$T/one.lua'"
expect_eq "narrow.py with HOME the current directory: refused (exit 1)" "$RC" 1
expect_true "and the directory is left as it was" test -d "$T/guard/templates"
run sh -c "cd '$T/guard/templates' && python3 '$ROOT/bench/narrow.py' .. swapab '$T/one.lua'"
expect_eq "narrow.py with HOME above the current directory: refused (exit 1)" "$RC" 1

# supports(): m = 256 is served, m = 257 is not.
for m in 256 257; do
    sed "s/m: {values: \[200\]}/m: {values: [$m]}/" "$T/one.yaml" > "$T/m$m.yaml"
    run "$AITUNE" compile "$T/m$m.yaml" --db "$T/m$m.db" --max-evals 1 --quiet
    expect_eq "compile swapab at m = $m" "$RC" 0 || show_last
done
expect_true "m = 256 is offered swapab" test "$(sql "$T/m256.db" "select count(*) from cubins")" -ge 1
expect_eq "m = 257 is not" "$(sql "$T/m257.db" "select count(*) from cubins")" 0

done_testing
