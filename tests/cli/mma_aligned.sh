#!/usr/bin/env bash
# tests/run: slow 8 (mma kernels compiled with and without `aligned`)
# The mma family's `aligned` param (templates/lib/mma.lua): fixed by the
# shape's rows (k, and n for nn, multiples of 8), so by the bucket's
# alignment class; an aligned kernel holds the 16-byte main loop alone.
#   - defaults and constraints: aligned 1 exactly where both operands' rows
#     are 16-byte aligned (nt at n = 4097 too: its B rows are k long), 0
#     elsewhere; the other value is refused with a reason;
#   - sources: aligned 0 is the kernel from before the param (the text
#     equal but for the kernel's name, which the config's hash gives), and
#     a config kept from then (no `aligned`) instantiates to it; aligned 1
#     has no any-alignment loop, and calls plain_tile where the 16-byte
#     loop cannot load;
#   - NVRTC: an aligned kernel compiles in less CPU time than its
#     both-loops twin, with no more registers and no spills;
#   - plain_tile on the CPU (tests/host/mma_plain.cpp, both layouts, ragged
#     tiles, operands at odd element offsets): every output exact, written
#     once, nothing read or written outside the buffers (AddressSanitizer
#     where g++ has it).
. "$(dirname "$0")/lib.sh"

KS=$ROOT/build/tests/kernel_sample
if [ ! -x "$KS" ]; then
    fail "mma aligned: build/tests/kernel_sample is not built (make)"
    exit 1
fi

spec t.yaml <<'EOF'
name: mma-aligned
arch: sm_90a
seed: 1
search: random
max_evals: 2
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [mma]
    shapes: {m: {values: [256]}, n: {values: [4096, 4097]}, k: {values: [4096, 4001]}}
  - op: gemm_nn
    dtypes: [bf16]
    templates: [mma]
    shapes: {m: {values: [256]}, n: {values: [4096, 4097]}, k: {values: [4096, 4004]}}
EOF
expect_exit 0 "list the mma defaults and samples of aligned and unaligned shapes" "$KS" list -n 2 "$T/t.yaml"
cp "$T/out" "$T/list"
# template, shape, the aligned values its lines hold
got=$(awk -F'\t' '{ a = $5; sub(/.*"aligned":/, "", a); sub(/[,}].*/, "", a); v[$1 " " $3] = v[$1 " " $3] a }
    END { for (x in v) print x, v[x] }' "$T/list" | sort)
want="gemm_nn/mma 256,4096,4004 000
gemm_nn/mma 256,4096,4096 111
gemm_nn/mma 256,4097,4004 000
gemm_nn/mma 256,4097,4096 000
gemm_nt/mma 256,4096,4001 000
gemm_nt/mma 256,4096,4096 111
gemm_nt/mma 256,4097,4001 000
gemm_nt/mma 256,4097,4096 111"
expect_eq "defaults and samples: aligned 1 exactly where A's and B's rows are 16-byte aligned" "$got" "$want"

# The other value at each shape: refused (sources -c), with the reason.
awk -F'\t' 'BEGIN { OFS = "\t" } $4 == "default" { a = ($5 ~ /"aligned":1/) ? 0 : 1; sub(/"aligned":[01]/, "\"aligned\":" a, $5); print }' \
    "$T/list" >"$T/flipped"
expect_exit 1 "the other aligned value is refused at every shape" "$KS" sources -c "$T/flipped"
expect_eq "every flipped line is refused" "$(grep -c 'refuses' "$T/err")" "$(wc -l <"$T/flipped")"
expect_stderr 'rows are 16-byte aligned: the 16-byte main loop alone serves' "aligned 0 at aligned rows: the reason"
expect_stderr 'rows are not 16-byte aligned: the any-alignment main loop is needed' "aligned 1 at unaligned rows: the reason"

# Sources. One config at an aligned shape in three forms: aligned 1, aligned
# 0 (instantiated without -c: the constraints would refuse it here) and the
# config without the param, as registries kept from before it hold it.
cfg='"bk":32,"bm":128,"bn":256,"group":1,"stages":4,"wm":2,"wn":4'
for op in gemm_nt gemm_nn; do
    printf '%s/mma\tbf16\t256,4096,4096\tsample\t{"aligned":1,%s}\n' "$op" "$cfg"
    printf '%s/mma\tbf16\t256,4096,4096\tsample\t{"aligned":0,%s}\n' "$op" "$cfg"
    printf '%s/mma\tbf16\t256,4096,4096\tsample\t{%s}\n' "$op" "$cfg"
done >"$T/three"
mkdir -p "$T/src"
expect_exit 0 "instantiate aligned 1, aligned 0 and the param-less config in both layouts" "$KS" sources -o "$T/src" "$T/three"
unname() { sed 's/aitune_gemm_n[nt]_[0-9a-f]\{8\}/KERNEL/' "$1"; }
for i in 1 4; do
    op=$(sed -n "${i}p" "$T/three" | cut -d/ -f1)
    a1=$T/src/$i.cu a0=$T/src/$((i + 1)).cu old=$T/src/$((i + 2)).cu
    if cmp -s <(unname "$a0") <(unname "$old") && ! cmp -s "$a0" "$old"; then
        ok "$op: aligned 0 is the kernel from before the param, renamed"
    else
        fail "$op: aligned 0's source is not the param-less config's (but for the kernel's name)"
    fi
    expect_true "$op: aligned 0 holds both main loops" grep -q 'else mainloop<false>(' "$a0"
    expect_true "$op: aligned 1 holds no any-alignment main loop" test "$(grep -c 'mainloop<false>' "$a1")" = 0
    expect_true "$op: aligned 1 falls back to plain_tile" grep -q 'else { plain_tile(D, A, B, m, n, k, bm0, bn0); return; }' "$a1"
    expect_true "$op: aligned 0 has no plain_tile" test "$(grep -c plain_tile "$a0")" = 0
done

# NVRTC: aligned 1 against the param-less kernel (both loops), nt and nn.
awk 'NR == 1 || NR == 3 || NR == 4 || NR == 6' "$T/three" >"$T/pair"
run "$KS" compile "$T/pair"
if [ "$RC" != 0 ]; then
    fail "kernel_sample compile of the pairs: exit $RC"
    show_last
else
    cp "$T/out" "$T/compiled"
    for op in gemm_nt gemm_nn; do
        new=$(awk -F'\t' -v t="$op/mma" '$1 == t && $5 ~ /aligned/' "$T/compiled")
        old=$(awk -F'\t' -v t="$op/mma" '$1 == t && $5 !~ /aligned/' "$T/compiled")
        read -r nr ns _ <<<"$(cut -f6 <<<"$new")"
        read -r or _ <<<"$(cut -f6 <<<"$old")"
        nc=$(cut -f7 <<<"$new") oc=$(cut -f7 <<<"$old")
        expect_eq "$op aligned 1: no spills" "$ns" 0
        expect_true "$op aligned 1: $nr registers, at most the both-loops kernel's $or" test "$nr" -le "$or"
        if awk -v a="$nc" -v b="$oc" 'BEGIN { exit !(a + 0 < b + 0) }'; then
            ok "$op aligned 1 compiles in less CPU time than with both loops ($nc s against $oc s)"
        else
            fail "$op aligned 1 took $nc CPU s to compile, the both-loops kernel $oc s"
        fi
    done
fi

# plain_tile on the CPU: the aligned kernels of bf16>f32 (f32 stores, no PTX
# in what is run).
if ! command -v g++ >/dev/null 2>&1; then
    skip "plain_tile on the CPU: no g++"
    done_testing
    exit
fi
asan=-fsanitize=address
echo 'int main() { return 0; }' >"$T/probe.cpp"
g++ $asan -o "$T/probe" "$T/probe.cpp" 2>/dev/null && "$T/probe" || asan=
[ -n "$asan" ] || skip "plain_tile's reads and writes outside the buffers: g++ has no AddressSanitizer here"
for lay in nt nn; do
    # 128 x 64 tiles, 256 threads: a tile's outputs are 32 per thread.
    printf 'gemm_%s/mma\tbf16>f32\t256,4096,4096\tsample\t{"aligned":1,"bk":32,"bm":128,"bn":64,"group":1,"stages":3,"wm":4,"wn":2}\n' \
        "$lay" >"$T/$lay.list"
    mkdir -p "$T/$lay"
    if ! "$KS" sources -c -o "$T/$lay" "$T/$lay.list" >/dev/null 2>"$T/$lay.err"; then
        fail "instantiate the $lay kernel for the CPU run: $(head -n 1 "$T/$lay.err")"
        continue
    fi
    grep -E '^#define (BM|BN|THREADS|NN|OUT_T) ' "$T/$lay/1.cu" >"$T/$lay/defs.h"
    sed -n '/^AIT_DEV void plain_tile(/,/^}$/p' "$T/$lay/1.cu" >"$T/$lay/part.cuh"
    expect_eq "$lay: the kernel defines the five macros plain_tile reads" "$(wc -l <"$T/$lay/defs.h")" 5
    if ! g++ -std=c++17 -O1 -g $asan -I"$T/$lay" -DDEFS='"defs.h"' -DPART='"part.cuh"' -o "$T/$lay/plain" \
        "$ROOT/tests/host/mma_plain.cpp" 2>"$T/$lay/cc.err"; then
        fail "build tests/host/mma_plain.cpp against the $lay kernel's plain_tile: $(head -n 3 "$T/$lay/cc.err" | tr '\n' ' ')"
        continue
    fi
    # Ragged tiles in m and n, odd k, operands 1-7 elements off 16 bytes;
    # one aligned case; sizes under a tile.
    for args in "130 70 37 1 3" "257 129 64 0 0" "5 3 9 7 1" "1 1 1 0 5" "128 64 16 2 0"; do
        run "$T/$lay/plain" $args
        if [ "$RC" = 0 ] && grep -q '^ok ' "$T/out"; then
            ok "$lay plain_tile: $(cat "$T/out" | sed 's/^ok //')"
        else
            fail "$lay plain_tile at $args: $(cat "$T/out" "$T/err" | head -n 3 | tr '\n' ' ')"
        fi
    done
done
# The check can fail: a plain_tile that skips a tile's last column.
sed 's/col >= n) continue;/col >= n || col == bn0 + BN - 1) continue;/' "$T/nt/part.cuh" >"$T/broken.cuh"
if g++ -std=c++17 -O1 -I"$T/nt" -DDEFS='"defs.h"' -DPART='"'"$T/broken.cuh"'"' -o "$T/broken" \
    "$ROOT/tests/host/mma_plain.cpp" 2>/dev/null; then
    expect_exit 1 "a plain_tile that skips a column fails the CPU check" "$T/broken" 130 70 37 1 3
    expect_stdout '^FAIL nt .* never written' "... and says which outputs it left"
else
    fail "build the broken plain_tile"
fi

done_testing
