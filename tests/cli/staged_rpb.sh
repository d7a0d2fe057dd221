#!/usr/bin/env bash
# tests/run: slow 20 (rpb sample compiled)
# The staged (tma) family's rpb for the ops with weights (rmsnorm,
# layernorm; templates/lib/staged.lua) without a GPU: a block takes rpb
# rows one after another, its slices of the weights copied into shared
# memory once. The rules (only for ops with weights; another block an SM
# to overlap a row's copy; enough blocks for every SM); the source (the
# weights' slices after the row's, read from shared memory, the row loop
# with its mbarrier phase and alternating partials); the launch (grid and
# shared memory, checked against the slices the source lays out); a sample
# compiled by NVRTC without spills or stack; rpb 1 is the kernel before
# rpb (tests/cli/tmpl_sources.sh). Timing: bench/rows_vocab.sh.
. "$(dirname "$0")/lib.sh"

KS=$ROOT/build/tests/kernel_sample
if [ ! -x "$KS" ]; then
    skip "rpb: build/tests/kernel_sample is not built (make)"
    exit 0
fi

run "$AITUNE" list
expect_true "rmsnorm/tma has rpb" grep -qE '^  rmsnorm/tma .* rpb=1,2,4,8' "$T/out"
expect_true "layernorm/tma has rpb" grep -qE '^  layernorm/tma .* rpb=1,2,4,8' "$T/out"
expect_true "softmax/tma (no weights) has not" bash -c "grep -E '^  softmax/tma ' '$T/out' | grep -vq rpb"

C2='"block":256,"cluster":2,"occ":1,"peel":0,"red":0'
ks_accepted rmsnorm/tma bf16 4096,32000 "{$C2,\"rpb\":4,\"store\":0}"
ks_accepted rmsnorm/tma bf16 4096,32001 '{"block":256,"cluster":2,"occ":1,"peel":1,"red":0,"rpb":4,"store":1}'
# 32000 bf16 in one block: 64 KB of row and 64 KB of weight, one block an SM
ks_refused rmsnorm/tma bf16 4096,32000 '{"block":256,"cluster":1,"occ":1,"peel":0,"red":0,"rpb":2,"store":0}' \
    "rows per block with one block an SM: nothing overlaps a row's copy"
ks_refused layernorm/tma bf16 64,32000 "{$C2,\"rpb\":8,\"store\":0}" "rows per block leave SMs without a block"
# a 96 KB slice fits a block, with a weight's and a bias's beside it not
ks_accepted layernorm/tma bf16 4096,49152 '{"block":256,"cluster":1,"occ":1,"peel":0,"red":0,"rpb":1,"store":0}'
ks_refused layernorm/tma bf16 4096,49152 '{"block":256,"cluster":1,"occ":1,"peel":0,"red":0,"rpb":2,"store":0}' \
    "the slice and the weights' do not fit a block's shared memory"

# The sources.
{
    ks_line rmsnorm/tma bf16 4096,32000 "{$C2,\"rpb\":4,\"store\":1}"
    ks_line layernorm/tma bf16 4096,32001 '{"block":256,"cluster":2,"occ":1,"peel":1,"red":0,"rpb":2,"store":0}'
    ks_line rmsnorm/tma bf16 4096,32000 "{$C2,\"rpb\":1,\"store\":1}"
} >"$T/src.txt"
mkdir -p "$T/src"
run "$KS" sources -o "$T/src" "$T/src.txt"
expect_eq "rpb configs instantiate" "$RC" 0 || show_last
S=$T/src
expect_true "rpb 4: four rows a block" grep -q '^#define SROWS 4$' "$S/1.cu"
expect_true "... walked one after another" grep -qF 'for (int rr = 0; rr < SROWS && r0 + rr < rows; ++rr)' "$S/1.cu"
expect_true "... the weight's slice copied into shared memory once" grep -qF 'stv<VE>(s_w + i * VE, ldv<VE>(w + cb + i * VE))' "$S/1.cu"
expect_true "... and read from there" grep -qF 'const VecT<V> wv = ldv<V>(s_w + c);' "$S/1.cu"
expect_true "... one mbarrier, its phase flipping with each copy" grep -qF 'while (!mbar_done(mb, phase)) {} phase ^= 1;' "$S/1.cu"
expect_true "... the cluster partials alternating by row" grep -qF 'float* pr = part + (rr & 1) * 4;' "$S/1.cu"
expect_true "... the slice released through the async proxy" grep -qF 'fence_async_smem();' "$S/1.cu"
expect_true "layernorm rpb peel: weight and bias shifted in shared memory" \
    grep -qF 'wv = ldu<V>(s_w + c, s_w, s_w + n), bv = ldu<V>(s_b + c, s_b, s_b + n)' "$S/2.cu"
expect_true "rpb 1: the one-row kernel" bash -c "! grep -q 'SROWS' '$S/3.cu'"

# The launch, through a fake sweep and emit: the grid takes rpb rows a
# cluster, and the shared memory holds what the source lays out (row
# slice, 16 bytes, one slice per weight), evaluated at several widths.
spec one.yaml <<'YAML'
name: one
search: random
max_evals: 1
tasks:
  - op: layernorm
    dtypes: [bf16]
    templates: [tma]
    shapes: {rows: {values: [4096]}, cols: {values: [32001]}}
YAML
mkdir -p "$T/home/templates/lib"
cp -r "$ROOT/templates" "$ROOT/search" "$T/home/" 2>/dev/null
# narrow the family to one rpb config (the params block is the only
# `{ "store", { 0, 1 } },` line of lib/staged.lua)
sed -i 's/{ "block", { 128, 256, 512, 1024 } },/{ "block", { 256 } },/; s/{ "cluster", { 1, 2, 4, 8 } },/{ "cluster", { 2 } },/; s/{ "occ", { 1, 2, 3, 4, 5, 6, 7, 8 } },/{ "occ", { 1 } },/; s/t.params\[#t.params + 1\] = { "rpb", { 1, 2, 4, 8 } }/t.params[#t.params + 1] = { "rpb", { 4 } }/' \
    "$T/home/templates/lib/staged.lua"
seed_db "$T/one.db"
AITUNE_HOME=$T/home fake_sweep ok "$T/one.db" "$T/one.yaml"
expect_eq "a fake sweep of one rpb config exits 0" "$RC" 0 || show_last
expect_true "its winner is rpb 4" test "$(sql "$T/one.db" "select count(*) from winners where config like '%\"rpb\":4%'")" = 1
AITUNE_HOME=$T/home run "$AITUNE" emit layernorm --arch sm_90 --dtype bf16 --shape 4096,32001 --db "$T/one.db" -o "$T/one.cu"
expect_eq "emit the rpb winner" "$RC" 0 || show_last
expect_true "the grid: a cluster of 2 for each 4 rows" grep -qF 'aitune_g[3] = { (aitune_cdiv(rows, 4LL) * 2LL),' "$T/one.cu"
expect_true "the shared memory: the row's slice, 16 bytes, the weight's and the bias's" \
    grep -qF 'aitune_smem = (aitune_cdiv(cols, 16LL) * 16LL * 3LL + 16LL);' "$T/one.cu"
if command -v nvcc >/dev/null 2>&1; then
    run nvcc -gencode=arch=compute_90a,code=sm_90a -c "$T/one.cu" -o "$T/one.o"
    expect_eq "nvcc -c builds the emitted rpb kernel" "$RC" 0 || show_last
else
    skip "nvcc builds the emitted rpb kernel: no nvcc"
fi
# The source's layout against it: the bias's slice ends inside.
lay=$(grep -E '^  T\* s_b = ' "$S/2.cu" | sed 's/^  T\* s_b = sx + //; s/;$//')
for cols in 4097 32001 65537 100353; do
    slice=$(( (cols + 15) / 16 * 8 ))
    end_b=$(( ( $(echo "$lay" | sed "s/slice/$slice/g; s/sizeof(T)/2/g") + slice ) * 2 ))
    have=$(( (cols + 15) / 16 * 16 * 3 + 16 ))
    expect_true "at $cols columns the bias's slice ends at byte $end_b of $have" test "$end_b" -le "$have"
done

# NVRTC: a sample of the rpb spaces at an aligned and an odd width.
spec rpb.yaml <<'YAML'
name: rpb
seed: 9
search: random
tasks:
  - op: rmsnorm
    dtypes: [bf16, f32]
    templates: [tma]
    shapes: {rows: {values: [4096]}, cols: {values: [32000, 128257]}}
  - op: layernorm
    dtypes: [bf16, f32]
    templates: [tma]
    shapes: {rows: {values: [4096]}, cols: {values: [32000, 128257]}}
YAML
if [ "${AITUNE_TEST_FULL:-0}" = 1 ]; then sample=; else sample="--max-evals 3"; fi
expect_exit 0 "compile a sample of the norms' tma spaces" "$AITUNE" compile -v "$T/rpb.yaml" --db "$T/rpb.db" $sample
n=$(awk '$2 ~ /tma$/ && $3 ~ /"rpb":[248]/' "$T/out" | wc -l)
expect_true "rpb > 1 configs in the sample ($n)" test "$n" -ge 2
expect_eq "none spills" "$(awk '$2 ~ /tma$/ && $5 != 0' "$T/out" | wc -l)" 0
expect_eq "none keeps a stack frame" "$(sql "$T/rpb.db" "select count(*) from cubins where stack > 0")" 0
done_testing
