#!/usr/bin/env bash
# tests/run: slow 8 (wgmma kernels instantiated, their staging built and run on the CPU)
# The wgmma family's staging code on the CPU (tests/host/staging.cpp): for a
# few configs (staged up front, overlapped, clusters along M and N), the
# generated kernel's host-testable part is built with g++ against emulated
# CUDA built-ins and run at shapes that cover the edge cases: many late
# bands, a first wave that reads all of A with k > 8192 (one-row claims), k
# under 16, a last band holding only A's last row; for B's k rows copied
# behind (abk_overlap) too. Every staged row must
# equal its operand, every late band count exactly its rows, every band wait
# return with its rows in place, the counters be left zero, and no read
# leave A or B (they sit against inaccessible pages). For the tma_ws
# epilogue, the copy of D (ws_copy, then the consumers' warps' shares of
# each CTA's last tile) runs too, D placed 0, 1 and 3 elements past a
# 16-byte boundary: D must equal the workspace's copy, and the copy warps
# alone must leave exactly the consumers' shares (tile widths 64, 192 and
# 256: rows of 8, 24 and 32 chunks).
. "$(dirname "$0")/lib.sh"

need_host_build "staging on the CPU"

# layout | the shape m,n,k the kernel is made for | the config's values
configs='nn|4001,4001,4001|128,256,2,4,1x1,8,rows,ab_overlap
nt|4001,1001,1001|128,64,2,8,2x1,4,direct,ab_overlap
nn|4001,1000,1001|128,64,2,8,1x2,4,direct,a_overlap
nn|4001,4001,4001|128,256,2,4,1x1,8,rows,ab
nn|4001,4001,4001|128,256,2,4,1x1,4,rows,abk_overlap
nn|4001,1001,1001|128,64,2,8,2x1,4,direct,abk_overlap
nn|4001,4001,4001|128,256,2,4,1x1,8,tma_ws,ab_overlap
nt|4001,1001,1001|128,64,2,8,2x1,4,tma_ws,ab
nn|4001,1001,1001|128,192,2,4,1x2,4,tma_ws,ab'
# Each config's source as a sweep instantiates it (kernel_sample sources -c:
# refused unless the template's params and constraints take it at the
# shape), from a copy of the templates whose wgmma space holds these
# configs' values (bench/narrow.py: abk_overlap is built, not in the
# space). Not compiled here: NVRTC compiles these families' staged,
# overlapped and tma_ws kernels in tests/cli/gemm.sh; what this file runs
# is the source's host-testable part.
cat > "$T/space.lua" <<'LUA'
M.params = {
  { "bm", { 128 } }, { "bn", { 64, 192, 256 } }, { "consumers", { 2 } }, { "stages", { 4, 8 } },
  { "persistent", { 1 } }, { "raster", { "m" } }, { "group", { 4, 8 } }, { "producer_regs", { 40 } },
  { "cluster", { "1x1", "2x1", "1x2" } }, { "schedule", { "coop" } }, { "inflight", { 0 } },
  { "epilogue", { "rows", "direct", "tma_ws" } }, { "streamk", { 0 } },
  { "stage", { "ab", "ab_overlap", "a_overlap", "abk_overlap" } },
}
LUA
(cd "$ROOT" && python3 bench/narrow.py "$T/home" wgmma "$T/space.lua") || { fail "narrow the wgmma space"; exit 1; }
i=0
while IFS='|' read -r layout shape vals; do
    i=$((i + 1))
    IFS=, read -r bm bn cons stages cluster group epi stage <<<"$vals"
    cfg=$(printf '{"bm":%s,"bn":%s,"cluster":"%s","consumers":%s,"epilogue":"%s","group":%s,"inflight":0,"persistent":1,' \
          "$bm" "$bn" "$cluster" "$cons" "$epi" "$group")
    cfg+=$(printf '"producer_regs":40,"raster":"m","schedule":"coop","stage":"%s","stages":%s,"streamk":0}' "$stage" "$stages")
    printf 'gemm_%s/wgmma\tbf16\t%s\tsample\t%s\n' "$layout" "$shape" "$cfg" >"$T/line$i"
    what="$layout $bm x $bn, cluster $cluster, stage $stage, $epi"
    run env AITUNE_TEST_ROOT="$T/home" "$KS" sources -c -o "$T/out$i" "$T/line$i"
    expect_eq "$what: a candidate, instantiated" "$RC" 0 || { show_last; continue; }
    cp "$T/out$i/1.cu" "$T/src$i.cu"
    sed -n '/^#define BM /,/^#define SA_OFF /p' "$T/src$i.cu" > "$T/defs$i.h"
    sed -n '/==== host-testable from here/,/==== end host-testable ====/p' "$T/src$i.cu" > "$T/part$i.cuh"
    run g++ -std=c++17 -O1 -Wno-unknown-pragmas -I"$T" -DDEFS="\"defs$i.h\"" -DPART="\"part$i.cuh\"" \
        "$ROOT/tests/host/staging.cpp" -o "$T/staging$i"
    expect_eq "$what: its staging code builds on the CPU" "$RC" 0 || { show_last 12; continue; }
    runs='"4001 4001 4001 8" "1000 1001 999 6" "300 72 9001 8" "700 520 15 4" "1025 1001 1001 2"'
    # tma_ws: its staging is the configs' above; the copy's own shapes.
    [ "$epi" = tma_ws ] && runs='"1000 1001 999 6" "300 72 9001 8" "1025 1001 1001 2" "1000 1001 999 6 1" "1025 1003 200 3 3" "517 4001 64 5 1"'
    eval "set -- $runs"
    for run_shape in "$@"; do
        run timeout 60 "$T/staging$i" $run_shape
        if [ "$RC" = 0 ] && ! grep -q '^FAIL' "$T/out"; then
            ok "$what at m n k grid = $run_shape: $(grep -c '^ok' "$T/out") checks ($(grep -o 'a_pre [0-9]* of [0-9]*' "$T/out" || echo 'no overlap'))"
        else
            fail "$what at m n k grid = $run_shape: exit $RC"
            show_last 8
        fi
    done
done <<<"$configs"
done_testing
