#!/usr/bin/env bash
# tests/run: slow 20 (a sample of the gated product's space compiled)
# The gated MLP product (templates/gemm_swiglu: D = SiLU(A·Gᵀ) ⊙ (A·Uᵀ), B
# = [G; U]; the wgmma family with op.swiglu) without a GPU: a seeded sample
# at an aligned prefill shape and a ragged one compiles for sm_90a without
# spills or stack, every kernel loading B by the 4-D box (8 gate rows, then
# the same 8 up rows) and tiling 2n accumulator columns; its rules (direct
# stores, no stream-K) refuse the rest; an n no 8-row group divides is a
# bucket no template serves, and the sweep says so and why; a fake sweep's
# winner is looked up and emitted, its tensor map encoded with rank 4, and
# the file builds with nvcc. swapab's decode kernel (m <= 64) takes the same
# boxes and pairs a warp's rows g and g + 8; rowdot (m <= 4) streams each
# column's gate row and up row. (tests/cli/tmpl_sources.sh pins every other
# wgmma kernel's source: the gated product leaves them byte for byte.)
. "$(dirname "$0")/lib.sh"

KS=$ROOT/build/tests/kernel_sample
spec sw.yaml <<'YAML'
name: sw
search: random
seed: 3
tasks:
  - op: gemm_swiglu
    dtypes: [bf16, f16]
    shapes: {m: {values: [2048]}, n: {values: [14336]}, k: {values: [4096]}}
  - op: gemm_swiglu
    dtypes: [bf16]
    shapes: {m: {values: [300]}, n: {values: [200]}, k: {values: [520]}}
YAML
expect_exit 0 "compile a seeded sample of the gated product's space" "$AITUNE" compile -v "$T/sw.yaml" --db "$T/sw.db" --max-evals 6
n=$(awk '$2 == "gemm_swiglu/wgmma"' "$T/out" | wc -l)
expect_true "gemm_swiglu/wgmma configs compiled ($n)" test "$n" -ge 12
expect_eq "none of them spills" "$(awk '$2 == "gemm_swiglu/wgmma" && $5 != 0' "$T/out" | wc -l)" 0
expect_eq "every one stores directly, without stream-K" \
    "$(grep 'gemm_swiglu/wgmma' "$T/out" | grep '"epilogue":"direct"' | grep -c '"streamk":0')" "$n"
nk=$(sql "$T/sw.db" "select count(*) from cubins where kernel like 'aitune_%'")
expect_eq "no kernel uses local memory ($nk)" "$(sql "$T/sw.db" "select count(*) from cubins where stack > 0 and kernel like 'aitune_%'")" 0
expect_eq "every kernel loads B as 4-D boxes, tiles 2n columns and stores SiLU(gate) * up" \
    "$(sql "$T/sw.db" "select count(*) from cubins where kernel like 'aitune_%' and source like '%cp.async.bulk.tensor.4d%'
       and source like '%tiles_n = (int)((2 * n + BN - 1) / BN)%' and source like '%swiglu(a[0], a[4])%'")" "$nk"

# Its rules, one config at a time.
if [ -x "$KS" ]; then
    base='{"bm":128,"bn":192,"cluster":"1x1","consumers":2,"epilogue":"direct","group":4,"inflight":1,"persistent":1,"producer_regs":40,"raster":"m","schedule":"pingpong","stage":"none","stages":4,"streamk":0}'
    ks_accepted gemm_swiglu/wgmma bf16 2048,14336,4096 "$base"
    ks_refused gemm_swiglu/wgmma bf16 2048,14336,4096 "${base/\"direct\"/\"tma\"}" \
        "the gated product stores SiLU(gate) * up from registers (direct)"
    ks_refused gemm_swiglu/wgmma bf16 2048,14336,4096 "${base/\"streamk\":0/\"streamk\":1}" \
        "the gated product has no stream-K fix-up"
    # A cluster pair along M: each CTA loads half of each B box (BN/32
    # groups of 16 rows) and multicasts it to both.
    ks_accepted gemm_swiglu/wgmma bf16 2048,14336,4096 "${base/\"1x1\"/\"2x1\"}"
else
    skip "gemm_swiglu rules: build/tests/kernel_sample is not built (make)"
fi

# The decode kernel of swapab (m <= 64): the same 4-D boxes of B, split-K
# and pdl samples included, each store pairing a warp's rows g and g + 8.
spec dec.yaml <<'YAML'
name: dec
search: random
seed: 2
tasks:
  - op: gemm_swiglu
    dtypes: [bf16, f16]
    templates: [swapab]
    shapes: {m: {values: [1, 8, 40]}, n: {values: [14336, 200]}, k: {values: [4096, 520]}}
YAML
expect_exit 0 "compile a seeded sample of swapab's gated decode kernel" "$AITUNE" compile -v "$T/dec.yaml" --db "$T/dec.db" --max-evals 3
nd=$(awk '$2 == "gemm_swiglu/swapab"' "$T/out" | wc -l)
expect_true "gemm_swiglu/swapab configs compiled ($nd)" test "$nd" -ge 12
expect_eq "none of them spills" "$(awk '$2 == "gemm_swiglu/swapab" && $5 != 0' "$T/out" | wc -l)" 0
expect_true "... split-K over a cluster among them" grep -q 'gemm_swiglu/swapab.*"csplit":[248]' "$T/out"
ndk=$(sql "$T/dec.db" "select count(*) from cubins where kernel like 'aitune_%'")
expect_eq "every kernel loads B as 4-D boxes and stores SiLU(gate) * up of rows g and g + 8 ($ndk)" \
    "$(sql "$T/dec.db" "select count(*) from cubins where kernel like 'aitune_%' and source like '%tma_load4(sB + b * W_BYTES%'
       and source like '%st_out(swiglu(v, u))%' and source not like '%tma_load(sB + b * W_BYTES%'")" "$ndk"
expect_eq "... with no stack" "$(sql "$T/dec.db" "select count(*) from cubins where stack > 0 and kernel like 'aitune_%'")" 0
if [ -x "$KS" ]; then
    dec='{"bm":128,"bn":8,"csplit":4,"evict":0,"inflight":1,"kbox":1,"l2pre":2,"mc":0,"nvar":1,"pdl":1,"stages":8,"wstep":0}'
    ks_accepted gemm_swiglu/swapab bf16 8,14336,4096 "$dec"
    ks_refused gemm_swiglu/swapab bf16 8,14336,4096 "${dec/\"bn\":8/\"bn\":96}" \
        "the gated product runs the decode kernel (bn <= 64)"
    # Its 2n rows of B are what the GEMM's rules see: 2 x 14336 / 64 = 448
    # column tiles fill 132 SMs twice over without split-K; n alone (224
    # tiles) would not.
    ks_refused gemm_swiglu/swapab bf16 8,14336,4096 "${dec/\"bm\":128/\"bm\":64}" \
        "enough column tiles to fill the GPU without split-K"
fi
# rowdot (m <= 4, any n and k): a set's rows are output columns, each its
# gate row and its up row n rows on, stored as SiLU(gate) * up; the whole
# space at m = 1 and 4, both dtypes, compiles without a spill (one block an
# SM asked of ptxas: without it 9 of them spilled).
spec rd.yaml <<'YAML'
name: rd
tasks:
  - op: gemm_swiglu
    dtypes: [bf16, f16]
    templates: [rowdot]
    shapes: {m: {values: [1, 4]}, n: {values: [14336]}, k: {values: [4096]}}
YAML
expect_exit 0 "compile rowdot's whole gated space at m = 1 and 4" "$AITUNE" compile -v "$T/rd.yaml" --db "$T/rd.db"
nr=$(awk '$2 == "gemm_swiglu/rowdot"' "$T/out" | wc -l)
expect_true "gemm_swiglu/rowdot configs compiled ($nr)" test "$nr" -ge 400
expect_eq "none of them spills" "$(awk '$2 == "gemm_swiglu/rowdot" && $5 != 0' "$T/out" | wc -l)" 0
nrk=$(sql "$T/rd.db" "select count(*) from cubins where kernel like 'aitune_%'")
expect_eq "every kernel reads each column's up row n rows after its gate row and stores SiLU(gate) * up ($nrk)" \
    "$(sql "$T/rd.db" "select count(*) from cubins where kernel like 'aitune_%' and source like '%(row0 + r %% RO + (r < RO ? 0 : n)) * k%'
       and source like '%st_out(swiglu(%' and source like '%__launch_bounds__(WARPS * 32, 1)%'")" "$nrk"

spec mid.yaml <<'YAML'
name: mid
tasks:
  - op: gemm_swiglu
    dtypes: [bf16]
    templates: [swapab]
    shapes: {m: {values: [100]}, n: {values: [14336]}, k: {values: [4096]}}
YAML
fake_sweep ok "$T/mid.db" "$T/mid.yaml"
expect_true "m = 100 is past swapab's gated kernel, and the sweep says so" \
    grep -q 'no template serves this shape (gemm_swiglu/swapab: m > 64: the gated product runs the decode kernel)' "$T/out"

# n = 100: no group of 8 rows divides it, so no template serves the bucket.
spec bad.yaml <<'YAML'
name: bad
tasks:
  - op: gemm_swiglu
    dtypes: [bf16]
    shapes: {m: {values: [64]}, n: {values: [100]}, k: {values: [4096]}}
YAML
fake_sweep ok "$T/bad.db" "$T/bad.yaml"
expect_eq "a sweep of n = 100 exits 0 (a bucket without a winner)" "$RC" 0 || show_last
expect_true "... and says no template serves it, and why" \
    grep -q 'no template serves this shape (gemm_swiglu/wgmma: the gated product reads B in place by groups of 8 rows' "$T/out"
expect_eq "... with no winner" "$(sql "$T/bad.db" "select count(*) from winners")" 0

# Through the pipeline: a fake sweep's winner, its lookup, emit and nvcc.
fake_sweep ok "$T/sw.db" "$T/sw.yaml" --max-evals 2
expect_eq "fake sweep of the gated product exits 0" "$RC" 0 || show_last
run "$AITUNE" lookup gemm_swiglu --arch sm_90a --dtype bf16 --shape 2048,14336,4096 --db "$T/sw.db"
expect_eq "lookup answers the gated product at 2048 x 14336 x 4096" "$RC" 0 || show_last
expect_true "... with its wgmma winner" grep -q 'gemm_swiglu/wgmma' "$T/out"
if command -v nvcc >/dev/null 2>&1; then
    emit_builds "$T/sw.db" gemm_swiglu sm_90a bf16 2048,14336,4096 "$T/sw.cu" "gemm_swiglu bf16 2048,14336,4096"
    expect_true "the emitted file encodes B's tensor map with rank 4, box 64 x 8 x 2" \
        grep -qE 'aitune_box\[4\] = \{ 64u, 8u, 2u, [0-9]+u \}' "$T/sw.cu"
else
    skip "emit gemm_swiglu: no nvcc"
fi
done_testing
