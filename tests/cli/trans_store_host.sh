#!/usr/bin/env bash
# tests/run: slow 10 (swapped wgmma kernels instantiated, their stores built and run on the CPU)
# The swapped wgmma kernel's stores on the CPU (tests/host/trans_store.cpp):
# for tiles split between two coop consumers by rows, by columns (192-row
# tiles, lib/wgmma.lua's cols) and whole per consumer (ping-pong), of one
# width or of a width chosen at run time (wstep: every width the kernel
# holds), the generated kernel's store block is built with g++ and run over
# every tile of ragged and whole shapes: each element of D written once
# with the value its consumer's accumulators hold for it (wgmma's fragment
# layout), nothing past D, nothing from the columns past a run-time width.
# The GPU checks the same through the worker's verification and
# compute-sanitizer; this finds an index slip without one.
. "$(dirname "$0")/lib.sh"

need_host_build "swapped stores on the CPU"

# bm, bn, schedule, wstep | the runs: "M N WIDTH" (the kernel's m, its n:
# the GEMM's n and m; WIDTH: bn, or each of the run-time widths)
configs='192,176,coop,0|1000 700 176;768 704 176;100 9 176
192,192,coop,16|1000 700 128;1000 700 144;1000 700 160;1000 700 176;1000 700 192;768 768 192;768 640 128
256,136,coop,0|1000 700 136;1024 680 136
128,176,pingpong,0|1000 700 176;1024 704 176
128,176,coop,16|1000 700 128;1000 700 144;1000 700 176;1024 704 176'
i=0
while IFS='|' read -r vals runs; do
    i=$((i + 1))
    IFS=, read -r bm bn sched wstep <<<"$vals"
    printf 'gemm_nt/wgmma_swap\tbf16\t2086,4096,4096\tsample\t{"bm":%s,"bn":%s,"cluster":"1x1","consumers":2,"epilogue":"direct","group":8,"inflight":1,"persistent":1,"producer_regs":40,"raster":"m","schedule":"%s","stage":"none","stages":4,"streamk":0,"wstep":%s}\n' \
        "$bm" "$bn" "$sched" "$wstep" >"$T/line$i"
    what="$bm x $bn $sched, wstep $wstep"
    run "$KS" sources -c -o "$T/out$i" "$T/line$i"
    expect_eq "$what: a candidate, instantiated" "$RC" 0 || { show_last; continue; }
    src=$T/out$i/1.cu
    sed -n '/^#define BM /,/^#define A_BOX_ROWS/p' "$src" >"$T/defs$i.h"
    # The store block: from the line before its first one to its closing brace.
    awk '/^      \{$/ { held = $0; next }
         held != "" { if ($0 ~ /^        const long long row0 = \(long long\)tm \* BM/) { on = 1; print held } held = "" }
         on { print } on && /^      \}$/ { exit }' "$src" >"$T/tile$i.cuh"
    acc=$(sed -n 's/^ *float acc\[MI\]\[\(BN \/ [24]\)\];.*/\1/p' "$src" | head -1)
    cols=0; [ "$acc" = "BN / 4" ] && cols=1
    expect_true "$what: its store block and accumulators found ($(wc -l <"$T/tile$i.cuh") lines, acc[MI][$acc])" \
        test -s "$T/tile$i.cuh" -a -n "$acc" || continue
    run g++ -std=c++17 -O1 -Wno-unknown-pragmas -I"$T" -DDEFS="\"defs$i.h\"" -DTILE="\"tile$i.cuh\"" \
        -DACC_N="$acc" -DCOLS=$cols "$ROOT/tests/host/trans_store.cpp" -o "$T/ts$i"
    expect_eq "$what: its stores build on the CPU" "$RC" 0 || { show_last 12; continue; }
    IFS=';' read -ra list <<<"$runs"
    for r in "${list[@]}"; do
        run timeout 60 "$T/ts$i" $r
        if [ "$RC" = 0 ] && grep -q '^ok' "$T/out"; then
            ok "$what at M N width $r: $(sed -n 's/^ok [^:]*: //p' "$T/out")"
        else
            fail "$what at M N width $r: exit $RC"
            show_last 6
        fi
    done
done <<<"$configs"
done_testing
