#!/usr/bin/env bash
# tests/run: slow 3 (wgmma sources instantiated, their schedule built and run on the CPU)
# The wgmma family's work schedule on the CPU (tests/host/streamk.cpp): the
# schedule of generated stream-K kernels (modes 1 and 2), built with g++ and run over many
# grids: every (unit, k-tile) done exactly once, each unit's pieces the s
# that its ticket waits for and its last piece adds (see the .cpp's header).
. "$(dirname "$0")/lib.sh"

need_host_build "the stream-K schedule on the CPU"
# Each mode: 1 (the tail's units in equal pieces over the idle workers), 2
# (the even split: the tail's k-tiles in equal ranges over every worker;
# built, not in the space, so instantiated from a copy of the templates
# whose wgmma space holds it: bench/narrow.py).
cat > "$T/space.lua" <<'LUA'
M.params = {
  { "bm", { 128 } }, { "bn", { 128, 256 } }, { "consumers", { 2 } }, { "stages", { 4, 5, 6 } },
  { "persistent", { 1 } }, { "raster", { "m" } }, { "group", { 8 } }, { "producer_regs", { 40 } },
  { "cluster", { "2x1" } }, { "schedule", { "coop" } }, { "inflight", { 1 } },
  { "epilogue", { "tma" } }, { "streamk", { 1, 2 } }, { "stage", { "none" } },
}
LUA
(cd "$ROOT" && python3 bench/narrow.py "$T/home" wgmma "$T/space.lua") || { fail "narrow the wgmma space"; exit 1; }
for mode in 1 2; do
    # bn 256 (128 accumulators) spills next to the even split's fix-up: bn 128 there.
    bn=256 stages=4; [ "$mode" = 2 ] && bn=128 stages=6
    cfg='{"bm":128,"bn":'$bn',"cluster":"2x1","consumers":2,"epilogue":"tma","group":8,"inflight":1,"persistent":1,"producer_regs":40,"raster":"m","schedule":"coop","stage":"none","stages":'$stages',"streamk":'$mode'}'
    printf 'gemm_nt/wgmma\tbf16\t3184,4096,4096\tsample\t%s\n' "$cfg" >"$T/line"
    rm -rf "$T/src"
    run env AITUNE_TEST_ROOT="$T/home" "$KS" sources -c -o "$T/src" "$T/line"
    expect_eq "a stream-K $mode config, instantiated" "$RC" 0 || { show_last; continue; }
    { grep '^#define STREAMK ' "$T/src/1.cu"
      sed -n '/^struct sched_t {/,/^\/\/ Accumulator slot/p' "$T/src/1.cu"; } >"$T/sched.cuh"
    expect_eq "its schedule found in the source ($mode)" "$(grep -c 'AIT_DEV bool item_at' "$T/sched.cuh")" 1
    run g++ -std=c++17 -O2 -I"$T" -DPART='"sched.cuh"' "$ROOT/tests/host/streamk.cpp" -o "$T/streamk"
    expect_eq "its schedule builds on the CPU ($mode)" "$RC" 0 || { show_last 12; continue; }
    run timeout 120 "$T/streamk"
    if [ "$RC" = 0 ] && grep -q "^ok   STREAMK $mode" "$T/out"; then
        ok "stream-K $mode's schedule: $(tail -1 "$T/out")"
    else
        fail "stream-K $mode's schedule: exit $RC"
        show_last 12
    fi
done
done_testing
