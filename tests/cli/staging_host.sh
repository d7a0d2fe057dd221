#!/usr/bin/env bash
# tests/run: slow 28 (wgmma kernels compiled, their staging built and run on the CPU)
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

if ! command -v g++ >/dev/null 2>&1; then
    skip "staging on the CPU: no g++"
    done_testing
    exit
fi

# layout | compile shape m,n,k | the config's values (a one-config space)
configs='nn|4001,4001,4001|128,256,2,4,1x1,8,rows,ab_overlap
nt|4001,1001,1001|128,64,2,8,2x1,4,direct,ab_overlap
nn|4001,1000,1001|128,64,2,8,1x2,4,direct,a_overlap
nn|4001,4001,4001|128,256,2,4,1x1,8,rows,ab
nn|4001,4001,4001|128,256,2,4,1x1,4,rows,abk_overlap
nn|4001,1001,1001|128,64,2,8,2x1,4,direct,abk_overlap
nn|4001,4001,4001|128,256,2,4,1x1,8,tma_ws,ab_overlap
nt|4001,1001,1001|128,64,2,8,2x1,4,tma_ws,ab
nn|4001,1001,1001|128,192,2,4,1x2,4,tma_ws,ab'
i=0
while IFS='|' read -r layout shape vals; do
    i=$((i + 1))
    IFS=, read -r bm bn cons stages cluster group epi stage <<<"$vals"
    IFS=, read -r sm sn sk <<<"$shape"
    cat > "$T/space$i.lua" <<LUA
M.params = {
  { "bm", { $bm } }, { "bn", { $bn } }, { "consumers", { $cons } }, { "stages", { $stages } },
  { "persistent", { 1 } }, { "raster", { "m" } }, { "group", { $group } }, { "producer_regs", { 40 } },
  { "cluster", { "$cluster" } }, { "schedule", { "coop" } }, { "inflight", { 0 } },
  { "epilogue", { "$epi" } }, { "streamk", { 0 } }, { "stage", { "$stage" } },
}
LUA
    cat > "$T/spec$i.yaml" <<YAML
name: staging-host
tasks:
  - op: gemm_$layout
    dtypes: [bf16]
    templates: [wgmma]
    shapes: {m: {values: [$sm]}, n: {values: [$sn]}, k: {values: [$sk]}}
YAML
    python3 "$ROOT/bench/narrow.py" "$T/home$i" wgmma "$T/space$i.lua"
    # The compile also builds the template's default at the shape (never
    # one of these configs: it has inflight 1). Configs of one shape share
    # it: a registry starts as the shape's last one, and the config's kernel
    # is the cubin the compile added that is not the default.
    shape_db=$T/shape-$layout-$sm-$sn-$sk.db
    rm -f "$T/c$i.db"
    [ -f "$shape_db" ] && cp "$shape_db" "$T/c$i.db"
    had=$( [ -f "$T/c$i.db" ] && sql "$T/c$i.db" "select group_concat(quote(hash)) from cubins")
    AITUNE_HOME=$T/home$i run "$AITUNE" compile "$T/spec$i.yaml" --db "$T/c$i.db" --quiet
    cp "$T/c$i.db" "$shape_db"
    q="from cubins where hash not in (${had:-''}) and hash not in (select cubin from defaults where cubin is not null)"
    n=$(sql "$T/c$i.db" "select count(*) $q")
    what="$layout $bm x $bn, cluster $cluster, stage $stage, $epi"
    expect_eq "$what: instantiated and compiled" "$RC,$n" "0,1" || { show_last; continue; }
    sql "$T/c$i.db" "select source $q" > "$T/src$i.cu"
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
