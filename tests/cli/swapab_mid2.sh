#!/usr/bin/env bash
# tests/run: slow 15 (swapab's second mid-size kernel compiled at its chosen configs, its box plan built and run on the CPU)
# swapab's second mid-size kernel (templates/gemm_nt/swapab.lua, mc >= 1:
# A's rows in boxes of 64 and 8 over the pass's rows only, the wgmma width
# chosen at run time among nvar, A multicast to mc column tiles of a
# cluster) without a GPU:
# - its box plan and width choice (the source's host-testable part, built
#   with g++: tests/host/swapab_boxes.cpp) over every pass height, for bn
#   96..256, mc 1, 2, 4 and nvar 1, 2, 3, 5;
# - configs chosen to reach each part of it (m = 65..256, issue 33's
#   weights and ragged ones) compile for sm_90a without spills or
#   stack, within the registers their threads have (one CTA an SM), no
#   wgmma serialized by ptxas, launch bounds of their warpgroups and the
#   producer warp; a multicast kernel's loads are multicasts and its
#   slots released to the whole group; one case per width;
# - the releases and the producer's waits at CTA scope, so no fence
#   (MEMBAR.ALL.GPU) or L1 invalidate sits in the mainloop of mc 1, 2, 4
#   (the machine code, where nvdisasm is at hand: $NVDISASM or PATH);
# - the defaults above m = 64 are the first mid-size kernel (mc 0, nvar 1:
#   the second measured no faster on an H100), bn holding m in one tile or half of m in two, pdl on,
#   and at five shapes the (bm, bn, csplit) an H200 measured fastest;
# - the launch plan: column tiles padded to whole groups along x, the
#   slices of k along y, BN rows along z, a cluster of mc x csplit, A's two
#   tensor maps (boxes of 64 and 8 rows);
# - the constraints refuse each rule broken alone, with its reason, and a
#   config without mc or nvar is the first mid-size kernel; the first
#   kernel takes nvar too (mc 0: one consume1 case a width).
. "$(dirname "$0")/lib.sh"

KS=$ROOT/build/tests/kernel_sample
if [ ! -x "$KS" ]; then
    fail "swapab mid2: build/tests/kernel_sample is not built (make)"
    exit 1
fi
cfg() {   # cfg bm bn csplit mc nvar [stages [wstep]]: a config line's JSON
    printf '{"bm":%s,"bn":%s,"csplit":%s,"evict":0,"inflight":1,"kbox":1,"l2pre":0,"mc":%s,"nvar":%s,"pdl":1,"stages":%s,"wstep":%s}' \
        "$1" "$2" "$3" "$4" "$5" "${6:-4}" "${7:-0}"
}

# The box plan and the width choice on the CPU.
if command -v g++ >/dev/null 2>&1; then
    : > "$T/boxes.list"
    for c in '96 1 3' '96 2 1' '128 2 5' '128 4 2' '192 4 3' '192 1 5' '256 2 5' '256 4 1' '256 1 3' '224 1 5 8' '192 2 5 16'; do
        set -- $c
        printf 'gemm_nt/swapab\tbf16\t%s,4096,4096\tsample\t%s\n' "$1" "$(cfg 128 "$1" 1 "$2" "$3" 4 "${4:-0}")" >> "$T/boxes.list"
    done
    if "$KS" sources -c -o "$T/src" "$T/boxes.list" > /dev/null 2> "$T/boxes.err"; then
        i=0
        while read -r line; do
            i=$((i + 1))
            cu=$T/src/$i.cu
            grep -E '^#define (BN|MC|WIDTH_FOR) ' "$cu" > "$T/defs$i.h"
            sed -n '/==== host-testable from here/,/==== end host-testable ====/p' "$cu" > "$T/part$i.cuh"
            ws=$(grep -oE 'case [0-9]+: consume<' "$cu" | grep -oE '[0-9]+' | tr '\n' ' ')
            if ! g++ -std=c++17 -O1 -Wall -DDEFS="\"$T/defs$i.h\"" -DPART="\"$T/part$i.cuh\"" \
                    -o "$T/boxes$i" "$ROOT/tests/host/swapab_boxes.cpp" 2> "$T/gxx$i.err"; then
                fail "build the box plan of $(cut -f5 <<< "$line")"
                head -5 "$T/gxx$i.err" | sed 's/^/    /'
                continue
            fi
            # shellcheck disable=SC2086
            out=$("$T/boxes$i" $ws)
            if [ $? = 0 ]; then ok "box plan and widths of $(cut -f5 <<< "$line" | grep -oE '"bn":[0-9]+|"mc":[0-9]+|"nvar":[0-9]+|"wstep":[0-9]+' | tr '\n' ' '): $out"
            else fail "box plan of $(cut -f5 <<< "$line")"; head -5 <<< "$out" | sed 's/^/    /'; fi
        done < "$T/boxes.list"
        expect_eq "one width case per nvar, bn down to bn/2 (bn 256, nvar 5: 256 224 192 160 128)" \
            "$(grep -oE 'case [0-9]+: consume<' "$T/src/7.cu" | grep -oE '[0-9]+' | tr '\n' ' ')" "256 224 192 160 128 "
        expect_eq "wstep 8: nvar widths in steps of 8 (bn 224, nvar 5: 224 216 208 200 192)" \
            "$(grep -oE 'case [0-9]+: consume<' "$T/src/10.cu" | grep -oE '[0-9]+' | tr '\n' ' ')" "224 216 208 200 192 "
        expect_eq "wstep 16: nvar widths in steps of 16 (bn 192, nvar 5: 192 176 160 144 128)" \
            "$(grep -oE 'case [0-9]+: consume<' "$T/src/11.cu" | grep -oE '[0-9]+' | tr '\n' ' ')" "192 176 160 144 128 "
    else
        fail "instantiate the box-plan configs"; head -5 "$T/boxes.err" | sed 's/^/    /'
    fi
else
    skip "swapab mid2 box plan on the CPU: no g++"
fi

# The defaults at issue 33's four weights: the first mid-size kernel, bn
# holding m.
spec w.yaml <<'YAML'
name: mid2
search: random
seed: 3
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [swapab]
    shapes: {m: {values: [65, 100, 129, 200, 256]}, n: {values: [4096, 1024, 14336]}, k: {values: [4096]}}
  - op: gemm_nt
    dtypes: [bf16]
    templates: [swapab]
    shapes: {m: {values: [65, 100, 129, 200, 256]}, n: {values: [4096]}, k: {values: [14336]}}
YAML
"$KS" list -n 0 "$T/w.yaml" > "$T/defaults" 2> "$T/defaults.err"
expect_eq "20 defaults listed" "$(wc -l < "$T/defaults")" 20
bad=$(python3 - "$T/defaults" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    m, n, k = map(int, f[2].split(","))
    c = json.loads(f[4])
    why = []
    if c["mc"] != 0 or c["nvar"] != 1: why.append("not the first mid-size kernel")
    if c["bn"] >= 2 * m or 2 * c["bn"] < m: why.append("bn %d for m %d" % (c["bn"], m))
    if c["csplit"] > 8: why.append("a cluster of %d" % c["csplit"])
    if c["pdl"] != 1: why.append("no pdl")
    if why: print(f[2], f[4], "; ".join(why))
PY
)
expect_eq "every default at m 65..256 is the first mid-size kernel, bn holding m or half of it ${bad:+($bad)}" "$bad" ""
# mid_cost's picks where an H200's narrowed sweep measured the best (bm, bn,
# csplit) of the default's candidates (bench/results/2026-11-28/s14-mid-call5;
# 100 x 1024 x 4096: bench/results/2026-11-29/s18-bn128-call9, one tile of
# 128 rows against two of 96 on the same 64 CTAs).
for want in '65,1024,4096 64 96 4' '129,4096,4096 64 160 2' '200,14336,4096 128 224 1' '65,14336,4096 128 96 1' \
            '129,4096,14336 64 160 2' '100,1024,4096 64 128 4'; do
    set -- $want
    got=$(awk -F'\t' -v s="$1" '$3 == s { print $5 }' "$T/defaults" | python3 -c '
import json, sys
c = json.loads(sys.stdin.read()); print(c["bm"], c["bn"], c["csplit"])')
    expect_eq "the mid-size default at $1 is bm $2, bn $3, csplit $4 (the measured best)" "$got" "$2 $3 $4"
done

# Compiled: configs chosen to reach each part of the second kernel (widths
# up to 256 on two warpgroups, four warpgroups, 8 slices of k, multicast to
# 2 and 4, 4 widths, 2 boxes a slot, inflight 0, l2pre) through `aitune
# compile` one at a time (a narrowed one-config space each), whose ptxas
# log says whether wgmma were serialized. (The defaults above m = 64 are
# the first kernel's, compiled by swapab_mid.sh.)
mid2="source like '%#define MC %'"
nk=0
: > "$T/plans"
# bm bn stages csplit pdl l2pre inflight kbox mc nvar [wstep] | m,n,k
while IFS='|' read -r vals shape; do
    # shellcheck disable=SC2086
    set -- $vals
    cat > "$T/one.lua" <<LUA
M.params = {
  { "bm", { $1 } }, { "bn", { $2 } }, { "stages", { $3 } }, { "csplit", { $4 } }, { "pdl", { $5 } },
  { "l2pre", { $6 } }, { "inflight", { $7 } }, { "kbox", { $8 } }, { "mc", { $9 } }, { "nvar", { ${10} } },
  { "wstep", { ${11:-0} } },
}
LUA
    rm -rf "$T/home1"
    (cd "$ROOT" && python3 bench/narrow.py "$T/home1" swapab "$T/one.lua") || { fail "narrow the swapab space"; continue; }
    IFS=, read -r m n k <<< "$shape"
    printf 'name: one\ntasks:\n  - op: gemm_nt\n    dtypes: [bf16]\n    templates: [swapab]\n    shapes: {m: {values: [%s]}, n: {values: [%s]}, k: {values: [%s]}}\n' \
        "$m" "$n" "$k" > "$T/c1.yaml"
    AITUNE_HOME=$T/home1 run "$AITUNE" compile "$T/c1.yaml" --db "$T/c.db" --quiet
    if [ "$RC" = 0 ] && grep -q '1 candidates evaluated; 1 compiled' "$T/err"; then nk=$((nk + 1))
    else fail "compile bm bn stages csplit pdl l2pre inflight kbox mc nvar = $vals at $shape"; show_last; fi
    # Its launch plan: a fake sweep's winner, the kernel from the cache (and
    # the engine's kernels and the reference from the first such sweep's).
    cubin_seed "$T/c.db" "$T/p.db"
    [ -f "$T/p0.db" ] && sqlite3 "$T/p.db" "attach '$T/p0.db' as p0;
        insert into cubins select * from p0.cubins where hash not in (select hash from main.cubins)"
    AITUNE_HOME=$T/home1 fake_sweep ok "$T/p.db" "$T/c1.yaml"
    [ "$RC" = 0 ] || { fail "fake sweep of $vals at $shape"; show_last; }
    [ -f "$T/p0.db" ] || cp "$T/p.db" "$T/p0.db"
    sql "$T/p.db" "select config || ' ' || launch from winners where template = 'gemm_nt/swapab'" >> "$T/plans"
done <<'CONFIGS'
128 256 4 4 1 0 1 1 2 3|255,4096,4096
128 256 4 4 1 0 1 1 2 5|255,4096,14336
64 256 4 8 1 0 1 1 1 2|255,1024,4096
128 256 4 1 1 2 1 1 4 3|255,14336,4096
256 128 4 2 1 0 1 1 4 3|127,14336,4096
256 128 4 8 0 0 0 1 1 5|127,4096,4096
128 192 2 2 1 1 1 2 2 2|150,1000,1096
64 96 8 4 0 0 1 1 2 2|70,1000,1096
128 224 4 1 1 0 1 1 1 5 8|200,14336,4096
CONFIGS
# Each compile adds the template's default at its shape (the first mid-size
# kernel: its own test is swapab_mid.sh); the $nk configs are the second's.
nall=$(sql "$T/c.db" "select count(*) from cubins")
n2=$(sql "$T/c.db" "select count(*) from cubins where $mid2")
expect_true "the $nk configs and the defaults at their shapes compiled ($nall kernels)" test "$nall" -ge "$nk"
expect_true "a second-kernel kernel for each distinct config ($n2 of $nall)" test "$n2" -ge "$nk"
expect_eq "none of the second kernel's spills or keeps a stack frame" \
    "$(sql "$T/c.db" "select count(*) from cubins where $mid2 and spills = 0 and stack = 0 and registers > 0")" "$n2"
for pair in '1|255' '2|224' '4|120'; do
    w=${pair%|*} cap=${pair#*|}
    expect_eq "kernels of $w warpgroup(s) stay within $cap registers" \
        "$(sql "$T/c.db" "select count(*) from cubins where source like '%#define WGS $w
%' and registers > $cap")" 0
done
expect_eq "ptxas serializes no kernel's wgmma (C7520)" \
    "$(sql "$T/c.db" "select count(*) from cubins where $mid2 and log like '%C7520%'")" 0
expect_eq "launch bounds: the warpgroups and the producer warp, one block an SM" \
    "$(sql "$T/c.db" "select count(*) from cubins where (
        (source like '%#define WGS 1
%' and source like '%__launch_bounds__(160, 1)%') or (source like '%#define WGS 2
%' and source like '%__launch_bounds__(288, 1)%') or (source like '%#define WGS 4
%' and source like '%__launch_bounds__(544, 1)%'))")" "$nall"
nmc=$(sql "$T/c.db" "select count(*) from cubins where source like '%#define MC 2
%' or source like '%#define MC 4
%'")
expect_true "at least the 6 multicast configs ($nmc)" test "$nmc" -ge 6
expect_eq "the $nmc multicast kernels load A with multicast, wait on the cluster before the mainloop, release slots to the group" \
    "$(sql "$T/c.db" "select count(*) from cubins where (source like '%#define MC 2
%' or source like '%#define MC 4
%') and source like '%#if MC > 1
            tma_load_mc(sA + b * A_BYTES + 128u * row, map, x, (int)r0 + row, bar, mask);%'
        and source like '%pdl_wait();
#if MC > 1
  cluster_wait();%' and source like '%for (int x = 0; x < MC; x++) arrive_group(bar, peer(x, split));%'")" "$nmc"

# The slots' releases and the producer's waits stay at CTA scope: an
# arrive that releases at cluster scope is MEMBAR.ALL.GPU before each of
# a warp's mc arrives a slot (ptxas 13.0), and a wait that acquires at
# cluster scope an L1 invalidate each slot. In the source of every
# multicast kernel above; in the machine code where nvdisasm is at hand
# ($NVDISASM or on PATH): between the mainloop's first wgmma and its last
# wait for them, mc arrives and no fence.
expect_eq "the $nmc multicast kernels release slots at CTA scope, and their producers wait so" \
    "$(sql "$T/c.db" "select count(*) from cubins where (source like '%#define MC 2
%' or source like '%#define MC 4
%') and source like '%mbarrier.arrive.release.cta.shared::cluster.b64 _, [r]; }\"%'
        and source not like '%mbar_wait_cluster(empty%'")" "$nmc"
ND=${NVDISASM:-$(command -v nvdisasm)}
if [ -n "$ND" ] && [ -x "$ND" ]; then
    : > "$T/fence.list"
    for mc in 1 2 4; do
        printf 'gemm_nt/swapab\tbf16\t152,4096,4096\tsample\t%s\n' "$(cfg 128 192 2 $mc 1)" >> "$T/fence.list"
    done
    rm -rf "$T/fence"
    if "$KS" compile -o "$T/fence" "$T/fence.list" > /dev/null 2> "$T/fence.err"; then
        for i in 1 2 3; do
            mc=$(( i == 1 ? 1 : (i == 2 ? 2 : 4) ))
            # The consumers' mainloop: from the first wgmma to the wait for none in flight.
            "$ND" -c "$T/fence/$i.cubin" | sed -n '/HGMMA/,/WARPGROUP.DEPBAR.LE gsb0, 0x0/p' > "$T/loop$i.sass"
            nf=$(grep -c 'MEMBAR\|CCTL' "$T/loop$i.sass")
            na=$(grep -c 'SYNCS.ARRIVE' "$T/loop$i.sass")
            if [ "$nf" = 0 ] && [ "$na" = "$mc" ] && grep -q HGMMA "$T/loop$i.sass"; then
                ok "mc $mc: its mainloop's release is $na arrive(s) and no fence (machine code)"
            else
                fail "mc $mc: the mainloop holds $nf fences or cache invalidates and $na arrives (want 0 and $mc)"
                grep -n 'MEMBAR\|CCTL\|SYNCS' "$T/loop$i.sass" | head -8 | sed 's/^/    /'
            fi
        done
    else
        fail "compile the mc 1, 2, 4 configs at 152 x 4096 x 4096"; head -5 "$T/fence.err" | sed 's/^/    /'
    fi
else
    skip "swapab mid2: the mainloop's machine code (no nvdisasm; set NVDISASM)"
fi

# The launch plans of the configs above: column tiles padded to whole
# groups along x, the slices of k along y, BN rows along z, a cluster of
# mc x csplit, the threads compiled for, A's tensor maps of 64 and 8 rows.
expect_eq "a plan for each of the $nk configs" "$(wc -l < "$T/plans")" "$nk"
bad=$(python3 - "$T/plans" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    cfg, plan = line.split(" ", 1)
    c, p = json.loads(cfg), json.loads(plan)
    bm, bn, cs, mc = c["bm"], c["bn"], c["csplit"], c["mc"]
    x = "cdiv(n, %d)" % bm if mc == 1 else "cdiv(n, %d) * %d" % (bm * mc, mc)
    want = {"grid": [x, str(cs), "cdiv(m, %d)" % bn], "cluster": [str(mc), str(cs), "1"],
            "block": [str(128 * (bm // 64) + 32), "1", "1"]}
    why = ["%s %s, not %s" % (key, p.get(key), v) for key, v in want.items() if p.get(key) != v]
    maps = [(q["arg"], q["box"]) for q in p["params"] if q["kind"] == "tmap"]
    if maps != [("B", [64, bm]), ("A", [64, 64]), ("A", [64, 8])]:
        why.append("tensor maps %s" % maps)
    if why: print(cfg, "; ".join(why))
PY
)
expect_true "the plans hold clusters of several shapes ($(grep -oE '"cluster":\[[^]]*\]' "$T/plans" | sort -u | tr '\n' ' '))" \
    test "$(grep -oE '"cluster":\[[^]]*\]' "$T/plans" | sort -u | wc -l)" -ge 3
expect_eq "each plan: tiles padded to groups along x, slices along y, BN rows along z, cluster mc x csplit, A's boxes of 64 and 8 rows ${bad:+($bad)}" "$bad" ""

# The rules, one broken at a time, each refused with its reason
# (kernel_sample sources -c: what compile and a sweep would not build).
check_refused() {   # check_refused SHAPE CONFIG REASON
    printf 'gemm_nt/swapab\tbf16\t%s\tsample\t%s\n' "$1" "$2" > "$T/r.list"
    "$KS" sources -c "$T/r.list" > /dev/null 2> "$T/r.err"
    local rc=$?
    if [ $rc != 0 ] && grep -qF "$3" "$T/r.err"; then ok "refused: $3"
    else fail "not refused with '$3' ($2 at $1): exit $rc, $(head -c 200 "$T/r.err")"; fi
}
printf 'gemm_nt/swapab\tbf16\t200,1000,1096\tsample\t%s\n' "$(cfg 128 256 2 2 2)" > "$T/ok.list"
expect_exit 0 "the base config (bm 128, bn 256, csplit 2, mc 2, nvar 2) is taken at 200 x 1000 x 1096" "$KS" sources -c "$T/ok.list"
check_refused 200,1000,1096 "$(cfg 128 256 4 4 2)" "a cluster of 16 CTAs (at most 8)"
check_refused 90,4096,4096 "$(cfg 128 96 1 1 5)" "bn 96 in 5 widths: not multiples of 8"
check_refused 200,1000,1096 "$(cfg 128 224 1 0 5)" "bn 224 in 5 widths: not multiples of 8"
check_refused 200,1000,1096 "$(cfg 256 128 4 0 3)" "spills (nvar widths, split-K 4 or 8, 96 registers at bm 256)"
check_refused 40,4096,4096 "$(cfg 128 64 1 1 1)" "mc, nvar and wstep are the mid-size kernel's (bn > 64)"
check_refused 40,4096,4096 "$(cfg 128 64 1 0 1 4 8)" "mc, nvar and wstep are the mid-size kernel's (bn > 64)"
check_refused 200,1000,1096 "$(cfg 128 224 1 0 1 4 8)" "wstep steps between nvar widths: nvar 1 has one"
check_refused 90,4096,4096 "$(cfg 128 96 1 0 5 4 16)" "bn 96 down 5 widths in steps of 16: narrower than bn/2"
printf 'gemm_nt/swapab\tbf16\t200,1000,1096\tsample\t%s\n' "$(cfg 128 224 1 0 5 4 8)" > "$T/ok8.list"
expect_exit 0 "bn 224, nvar 5, wstep 8 (widths 224 .. 192, not multiples of 16) is taken at 200 x 1000 x 1096" \
    "$KS" sources -c "$T/ok8.list"
check_refused 200,100,1096 "$(cfg 128 256 1 2 1)" "fewer column tiles than the multicast group"
# Without mc and nvar (a config kept from before they were params), or mc 0:
# the first kernel, whose source has no second map of A.
printf 'gemm_nt/swapab\tbf16\t200,1000,1096\tsample\t{"bm":128,"bn":256,"csplit":2,"evict":0,"inflight":1,"kbox":1,"l2pre":0,"pdl":1,"stages":4}\n' > "$T/old.list"
printf 'gemm_nt/swapab\tbf16\t200,1000,1096\tsample\t%s\n' "$(cfg 128 256 2 0 1)" >> "$T/old.list"
rm -rf "$T/old"
"$KS" sources -o "$T/old" "$T/old.list" > /dev/null 2>&1
expect_eq "a config without mc and nvar, and mc 0, are the first kernel" \
    "$(cat "$T/old/1.cu" "$T/old/2.cu" | grep -c 'tmA8\|#define MC ')" 0
# The first kernel takes nvar too (mc 0): its consumers at the narrowest of
# nvar widths that holds the tile's rows (bn 256, nvar 5: 256 .. 128).
printf 'gemm_nt/swapab\tbf16\t200,1000,1096\tsample\t%s\n' "$(cfg 128 256 2 0 5)" > "$T/w1.list"
rm -rf "$T/w1"
"$KS" sources -o "$T/w1" "$T/w1.list" > /dev/null 2>&1
expect_eq "the first kernel with nvar 5: one consume1 case a width, switched on the tile's rows" \
    "$(grep -c 'tmA8\|#define MC ' "$T/w1/1.cu"),$(grep -o 'case [0-9]*: consume1<[0-9]*>' "$T/w1/1.cu" | grep -o '<[0-9]*>' | tr -d '<>' | tr '\n' ' '),$(grep -c 'switch (width_for((int)zr))' "$T/w1/1.cu")" \
    "0,256 224 192 160 128 ,1"

done_testing
