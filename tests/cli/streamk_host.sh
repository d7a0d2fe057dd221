#!/usr/bin/env bash
# tests/run: slow 3 (wgmma sources instantiated, their schedule built and run on the CPU)
# The wgmma family's work schedule on the CPU (tests/host/streamk.cpp): the
# schedule of a generated stream-K kernel (the last partial wave's units in
# equal pieces over the idle workers), built with g++ and run over many
# grids: every (unit, k-tile) done exactly once, each unit's pieces the s
# that its ticket waits for and its last piece adds (see the .cpp's header).
. "$(dirname "$0")/lib.sh"

need_host_build "the stream-K schedule on the CPU"
cfg='{"bm":128,"bn":256,"cluster":"2x1","consumers":2,"epilogue":"tma","group":8,"inflight":1,"persistent":1,"producer_regs":40,"raster":"m","schedule":"coop","stage":"none","stages":4,"streamk":1}'
printf 'gemm_nt/wgmma\tbf16\t3184,4096,4096\tsample\t%s\n' "$cfg" >"$T/line"
run "$KS" sources -c -o "$T/src" "$T/line"
expect_eq "a stream-K config, instantiated" "$RC" 0 || { show_last; done_testing; exit; }
{ grep '^#define STREAMK ' "$T/src/1.cu"
  sed -n '/^struct sched_t {/,/^\/\/ Worker w.s accumulator slot/p' "$T/src/1.cu"; } >"$T/sched.cuh"
expect_eq "its schedule found in the source" "$(grep -c 'AIT_DEV bool item_at' "$T/sched.cuh")" 1
run g++ -std=c++17 -O2 -I"$T" -DPART='"sched.cuh"' "$ROOT/tests/host/streamk.cpp" -o "$T/streamk"
expect_eq "its schedule builds on the CPU" "$RC" 0 || { show_last 12; done_testing; exit; }
run timeout 120 "$T/streamk"
if [ "$RC" = 0 ] && grep -q '^ok   STREAMK 1' "$T/out"; then
    ok "stream-K's schedule: $(tail -1 "$T/out")"
else
    fail "stream-K's schedule: exit $RC"
    show_last 12
fi
done_testing
