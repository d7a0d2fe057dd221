#!/usr/bin/env bash
# swapab's evict param (templates/lib/swapab.lua; lib/hopper.lua's
# tma_load_w) without a GPU: evict 1 loads the weight's boxes evict-first in
# L2 (read once), evict 0 as before, in each of the three kernels (decode,
# first and second mid-size); A's boxes are never hinted; the constraints
# refuse evict 1 where the weight is read again (tiles of rows, m > bn) and
# in the gated product (its 4-D boxes take no hint); evict 1 compiles in all
# three kernels without spills. The decode kernel's default takes evict 1 and
# l2pre 4 (lib/swapab_default.lua), the gated product's l2pre 4 without the
# hint, the mid-size default evict 1 (one tile of rows) and l2pre 1.
. "$(dirname "$0")/lib.sh"

KS=$ROOT/build/tests/kernel_sample
if [ ! -x "$KS" ]; then
    fail "swapab evict: build/tests/kernel_sample is not built (make)"
    exit 1
fi
cfg() {   # cfg bm bn csplit mc evict [stages [kbox]]: a config's JSON
    printf '{"bm":%s,"bn":%s,"csplit":%s,"evict":%s,"inflight":1,"kbox":%s,"l2pre":0,"mc":%s,"nvar":1,"pdl":1,"stages":%s,"wstep":0}' \
        "$1" "$2" "$3" "$5" "${7:-1}" "$4" "${6:-4}"
}
# One kernel of each: decode (bn <= 64), first mid-size (mc 0), second (mc 2).
{
    ks_line gemm_nt/swapab bf16 16,14336,4096 "$(cfg 64 16 1 0 1 8 2)"
    ks_line gemm_nt/swapab bf16 136,14336,4096 "$(cfg 128 160 1 0 1)"
    ks_line gemm_nt/swapab bf16 200,1000,1096 "$(cfg 128 256 2 2 1)"
    ks_line gemm_nt/swapab bf16 16,14336,4096 "$(cfg 64 16 1 0 0 8 2)"
    ks_line gemm_nt/swapab bf16 136,14336,4096 "$(cfg 128 160 1 0 0)"
    ks_line gemm_nt/swapab bf16 200,1000,1096 "$(cfg 128 256 2 2 0)"
} > "$T/k.list"
rm -rf "$T/src"
expect_exit 0 "the three kernels take evict 0 and 1" "$KS" sources -c -o "$T/src" "$T/k.list"
for i in 1 2 3; do
    j=$((i + 3))
    expect_eq "kernel $i: evict 1 defines EVICT 1 and asks for evict-first, evict 0 neither" \
        "$(grep -c '^#define EVICT 1$' "$T/src/$i.cu"),$(grep -c 'evict_first' "$T/src/$i.cu"),$(grep -c '^#define EVICT 0$' "$T/src/$j.cu")" \
        "1,1,1"
    expect_eq "kernel $i: the weight's loads go through tma_load_w, A's do not" \
        "$(grep -c 'tma_load_w(sB' "$T/src/$i.cu"),$(grep -c 'tma_load_w(sA' "$T/src/$i.cu")" "1,0"
done
ks_refused gemm_nt/swapab bf16 192,14336,4096 "$(cfg 128 128 1 0 1)" \
    "evict-first with tiles of rows: they read the weight again from L2"
ks_accepted gemm_nt/swapab bf16 192,14336,4096 "$(cfg 128 128 1 0 0)"
ks_refused gemm_swiglu/swapab bf16 16,4096,4096 "$(cfg 64 16 1 0 1 8 2)" \
    "the gated product's 4-D boxes load without the evict hint"
ks_accepted gemm_swiglu/swapab bf16 16,4096,4096 "$(cfg 64 16 1 0 0 8 2)"
# The defaults (kernel_sample list: each bucket's default line).
cat > "$T/d.yaml" <<'EOF2'
name: defaults
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [swapab]
    shapes: {m: {values: [1, 16, 40, 64, 136, 190], exact: true}, n: {values: [1024, 4096, 14336], exact: true}, k: {values: [4096], exact: true}}
  - op: gemm_swiglu
    dtypes: [bf16]
    templates: [swapab]
    shapes: {m: {values: [8], exact: true}, n: {values: [14336], exact: true}, k: {values: [4096], exact: true}}
EOF2
run "$KS" list -n 0 "$T/d.yaml"
expect_eq "the defaults listed" "$RC" 0 || show_last
hints() {   # hints OP M N: the default's evict and l2pre at m x n x 4096
    awk -F'\t' -v op="$1" -v s="$2,$3,4096" '$1 == op "/swapab" && $3 == s && $4 == "default" { print $5 }' "$T/out" |
        grep -o '"evict":[0-9]\|"l2pre":[0-9]' | tr '\n' ' '
}
for n in 1024 4096 14336; do
    for m in 1 16 40 64; do
        expect_eq "the decode default at $m x $n x 4096: evict-first, 4 boxes prefetched" "$(hints gemm_nt $m $n)" '"evict":1 "l2pre":4 '
    done
    expect_eq "the mid-size default at 136 x $n x 4096 (one tile of rows): evict-first, 1 box prefetched" \
        "$(hints gemm_nt 136 $n)" '"evict":1 "l2pre":1 '
done
expect_eq "the mid-size default at 190 x 1024 x 4096 (two tiles of rows): the prefetch without the hint" \
    "$(hints gemm_nt 190 1024)" '"evict":0 "l2pre":1 '

expect_eq "the gated product's decode default: the prefetch without the hint" "$(hints gemm_swiglu 8 14336)" '"evict":0 "l2pre":4 '
# Compiled (ptxas takes the cache hint): no spills, no stack.
head -3 "$T/k.list" > "$T/c.list"
"$KS" compile "$T/c.list" > "$T/c.out" 2> "$T/c.err"
expect_eq "evict 1 compiles in each kernel without spills or stack" \
    "$(awk -F'\t' 'NF >= 6 { split($6, r, " "); if (r[1] > 0 && r[2] == 0 && r[4] == 0) n++ } END { print n + 0 }' "$T/c.out")" 3 ||
    head -5 "$T/c.err" | sed 's/^/    /'
done_testing
