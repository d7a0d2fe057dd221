#!/usr/bin/env bash
# tests/run: slow 35 (swapped wgmma configs compiled, two winners emitted and built)
# The wgmma family with its operands exchanged (gemm_nt/wgmma_swap,
# templates/lib/wgmma.lua's family with op.swap) without a GPU: it serves
# nt at m above 256 only, with k a multiple of 8; its space holds only
# direct stores, no staging and its widths along m; a seeded sample of it
# compiles for sm_90a without spills or local memory; its default takes the
# tile whose waves cost least (lib/wgmma_swap.lua's default); a
# fake sweep's winner keeps the exchange in its launch plan (A's tensor map
# over B's n rows, B's over A's m rows, the kernel's m and n exchanged),
# and the emitted file builds with nvcc; a width chosen at run time
# (wstep) compiles a mainloop a width and picks, at every m, a width the
# kernel holds that fills as few waves as bn's. The transposed stores'
# results are checked on a GPU only (the worker's verification,
# compute-sanitizer, tests/gpu/gemm_launch.sh at five widths); tiles of
# 192 rows split by columns between the consumers compile and are refused
# where they cannot be.
. "$(dirname "$0")/lib.sh"

cat > "$T/swap.yaml" <<'YAML'
name: swap
max_evals: 10
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [wgmma_swap]
    shapes: {m: {values: [2086], exact: true}, n: {values: [4096], exact: true}, k: {values: [4096], exact: true}}
  - op: gemm_nt
    dtypes: [f16]
    templates: [wgmma_swap]
    shapes: {m: {values: [1049], exact: true}, n: {values: [14336], exact: true}, k: {values: [4096], exact: true}}
YAML
expect_exit 0 "compile a seeded sample of the swapped space" "$AITUNE" compile -v "$T/swap.yaml" --db "$T/c.db"
n=$(awk '$2 == "gemm_nt/wgmma_swap"' "$T/out" | wc -l)
expect_true "swapped configs are instantiated and compiled ($n)" test "$n" -ge 12
expect_eq "none of them spills" "$(awk '$2 == "gemm_nt/wgmma_swap" && $5 != 0' "$T/out" | wc -l)" 0
expect_eq "none uses local memory" "$(sql "$T/c.db" "select count(*) from cubins where stack > 0 and kernel like 'aitune_%'")" 0
expect_eq "every one stores directly, stages nothing, and is m-wide by a multiple of 8 from 128 to 256" \
    "$(awk '$2 == "gemm_nt/wgmma_swap"' "$T/out" | grep '"epilogue":"direct"' | grep '"stage":"none"' |
       grep -cE '"bn":(128|136|144|152|160|176|192|208|224|256),')" "$n"

# Where it is not offered: m up to 256 (swapab's), k not a multiple of 8.
for shape in "256 4096 4096" "2086 4096 4100"; do
    set -- $shape
    cat > "$T/no.yaml" <<YAML
name: no
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [wgmma_swap]
    shapes: {m: {values: [$1], exact: true}, n: {values: [$2], exact: true}, k: {values: [$3], exact: true}}
YAML
    run "$AITUNE" compile "$T/no.yaml" --plan
    expect_true "no swapped candidate at m, n, k = $1, $2, $3" grep -q ' 0 candidates' "$T/out" || show_last
done

KS=$ROOT/build/tests/kernel_sample
# One consumer with stream-K spills next to 104 accumulators (bn 208, the
# GPU sweep's three "compile" rows, nineteenth session call 9): refused.
printf 'gemm_nt/wgmma_swap\tbf16\t1025,4096,4096\tsample\t%s\n' \
    '{"bm":64,"bn":208,"cluster":"1x1","consumers":1,"epilogue":"direct","group":1,"inflight":1,"persistent":1,"producer_regs":40,"raster":"n","schedule":"coop","stage":"none","stages":5,"streamk":1,"wstep":0}' >"$T/sk208"
run "$KS" sources -c -o "$T/sk208.out" "$T/sk208"
expect_true "one consumer, bn 208, stream-K: refused as a spill" grep -q "spills (stream-K's fix-up" "$T/err" || show_last

# The default: the tile whose waves cost least.
run "$KS" list -n 0 "$T/swap.yaml"
expect_eq "its default at 2086 x 4096 x 4096: 128 x 176 tiles (32 x 12 of them: three waves, the last nearly full)" \
    "$(awk -F'\t' '$3 == "2086,4096,4096" && $4 == "default"' "$T/out" | grep -o '"bm":[0-9]*,"bn":[0-9]*')" '"bm":128,"bn":176'
expect_eq "its default at 2086 x 4096 x 4096 picks its width at run time, in steps of 16" \
    "$(awk -F'\t' '$3 == "2086,4096,4096" && $4 == "default"' "$T/out" | grep -o '"wstep":[0-9]*')" '"wstep":16'
expect_eq "its default at 1049 x 14336 x 4096: 256 x 152 tiles (392 of them, three waves)" \
    "$(awk -F'\t' '$3 == "1049,14336,4096" && $4 == "default"' "$T/out" | grep -o '"bm":[0-9]*,"bn":[0-9]*')" '"bm":256,"bn":152'

# A winner's launch plan: A's map over B (n rows), B's over A (m rows), the
# kernel's m and n exchanged, A's box rows in n.
fake_sweep ok "$T/s.db" "$T/swap.yaml"
expect_eq "a fake sweep of the swapped space exits 0" "$RC" 0 || show_last
launch=$(sql "$T/s.db" "select launch from winners where template = 'gemm_nt/wgmma_swap' and shape like '%2086%' limit 1")
expect_true "A's tensor map reads B's n rows, with its box rows in n" \
    grep -qE '"arg":"B","dims":\["k","n"\].*"box":\[64,"min\([0-9]+, max\(cdiv\((cdiv\()?n, ' <<<"$launch"
expect_true "B's tensor map reads A's m rows" grep -q '"arg":"A","dims":\["k","m"\]' <<<"$launch"
expect_true "the kernel's m and n are the GEMM's n and m" grep -q '"expr":"n"},{"kind":"dim","expr":"m"}' <<<"$launch"
expect_true "it launches with programmatic dependent launch (no workspace)" grep -q '"pdl":true' <<<"$launch"
# A width chosen at run time (wstep): the kernel holds one copy of the
# mainloop a width (the multiples of wstep from 128 below bn, then bn),
# compiles without spills or serialized wgmma (jit.c refuses those), and
# its launch passes the width as the last dim, B's box rows and the grid
# following it. The width at every m of 257..8192 at two weights, by the
# plan's own expressions: one of the kernel's widths, as few waves as bn's
# tiles make, and the narrowest such (one step narrower makes more).
ws_cfg() {  # BM BN CLUSTER WSTEP PRODUCER_REGS
    printf 'gemm_nt/wgmma_swap\tbf16\t2086,4096,4096\tsample\t{"bm":%s,"bn":%s,"cluster":"%s","consumers":2,"epilogue":"direct","group":8,"inflight":1,"persistent":1,"producer_regs":%s,"raster":"m","schedule":"coop","stage":"none","stages":4,"streamk":0,"wstep":%s}\n' \
        "$1" "$2" "$3" "$5" "$4"
}
{ ws_cfg 128 176 1x1 16 40; ws_cfg 128 176 1x2 8 40; ws_cfg 256 152 1x1 8 24; } >"$T/ws"
run "$KS" sources -o "$T/ws.src" "$T/ws"
expect_eq "each run-time-width kernel holds one mainloop a width (128..176 by 16: 4; by 8: 7; 128..152 by 8: 4)" \
    "$(for i in 1 2 3; do grep -c '^      case [0-9]*: {$' "$T/ws.src/$i.cu"; done | tr '\n' ' ')" "4 7 4 "
expect_eq "the widths are 128, 144, 160, 176" "$(grep -o '^      case [0-9]*' "$T/ws.src/1.cu" | awk '{print $2}' | tr '\n' ' ')" "128 144 160 176 "
run "$KS" compile -o "$T/ws.cubin" "$T/ws"
expect_eq "all three compile" "$RC" 0 || show_last
expect_eq "none spills" "$(awk -F'\t' '{split($6, r, " "); if (r[2] != 0 || r[4] != 0) print}' "$T/out" | wc -l)" 0
for bad in "128 128 1x1 8 40:needs bn above 128" "128 176 2x1 8 40:cluster 2x1"; do
    ws_cfg ${bad%%:*} >"$T/bad"
    run "$KS" sources -c -o "$T/bad.out" "$T/bad"
    expect_true "refused: ${bad#*:}" grep -q "${bad#*:}" "$T/err" || show_last
done
# Tiles of 192 weight rows: the two coop consumers split each tile by
# columns (lib/wgmma.lua's cols), each all 192 rows (three m64 wgmma a k
# step) and bn/2 columns from c * bn/2 of B's slot; a run-time width's
# copies of the mainloop run half its width. They compile without spills
# (132 accumulators at bn 176, 144 at 192).
{ ws_cfg 192 176 1x1 0 24; ws_cfg 192 192 1x1 16 24; ws_cfg 192 160 1x1 0 40; } >"$T/cols"
run "$KS" sources -c -o "$T/cols.src" "$T/cols"
expect_eq "bm 192, coop: the constraints take bn 176, 192 (wstep 16) and 160" "$RC" 0 || show_last
expect_eq "each consumer's wgmma is m64n88 at bn 176, on B's half from c * (BN / 2) rows" \
    "$(grep -c 'wgmma.mma_async.sync.aligned.m64n88k16\|desc(sB + c \* (BN / 2) \* 128 + kk \* 32, 1, 1024)' "$T/cols.src/1.cu")" 2
expect_eq "... its accumulators a quarter of bn a row step, its columns from c * cw (BN / 2), in BN / 16 groups of 8" \
    "$(grep -c 'float acc\[MI\]\[BN / 4\];\|const int cw = BN / 2;\|constexpr int JN = BN / 16;\|col0 = (long long)tn \* tw + c \* cw + 2' "$T/cols.src/1.cu")" 4
expect_eq "a run-time width's copies run half its width (128..192 by 16)" \
    "$(grep -o 'wgmma_w<[0-9]*>(acc' "$T/cols.src/2.cu" | tr -dc '0-9\n' | tr '\n' ' ')" "64 72 80 88 96 "
expect_eq "... from bw / 2 of B's slot and of the tile's columns" \
    "$(grep -c 'B_DESC desc(sB + c \* ((int)bw / 2) \* 128\|const int tw = (int)bw;\|const int cw = (int)bw / 2;' "$T/cols.src/2.cu")" 3
run "$KS" compile "$T/cols"
expect_eq "all three compile" "$RC" 0 || show_last
expect_eq "none spills" "$(awk -F'\t' '{split($6, r, " "); if (r[2] != 0 || r[4] != 0) print}' "$T/out" | wc -l)" 0
for bad in "192 136 1x1 0 40:bn must be a multiple of 16" "192 176 1x1 8 24:wstep 16" "192 176 1x2 0 24:without a cluster"; do
    ws_cfg ${bad%%:*} >"$T/bad"
    run "$KS" sources -c -o "$T/bad.out" "$T/bad"
    expect_true "bm 192 refused: ${bad#*:}" grep -q "${bad#*:}" "$T/err" || show_last
done
# The sweep's space narrowed to run-time widths (bench/narrow.py).
printf 'local SWAP_WIDTHS = {\n  152, 176, 208,\n}\n' >"$T/widths.lua"
printf 'local SWAP_PARAMS = {\n  { "wstep", { 8, 16 } },\n}\n' >"$T/wstep.lua"
python3 "$ROOT/bench/narrow.py" "$T/home" wgmma_swap "$T/widths.lua" wgmma_swap "$T/wstep.lua"
head -7 "$T/swap.yaml" | sed 's/max_evals: 10/max_evals: 3/' >"$T/ws.yaml"
AITUNE_HOME=$T/home fake_sweep ok "$T/ws.db" "$T/ws.yaml"
expect_eq "a fake sweep of run-time widths exits 0" "$RC" 0 || show_last
sql "$T/ws.db" "select config, launch from winners where template = 'gemm_nt/wgmma_swap'" >"$T/ws.launch"
expect_eq "its winners take a run-time width" "$(grep -c '"wstep":[18]' "$T/ws.launch")" "$(wc -l <"$T/ws.launch")"
cat >"$T/widths.py" <<'PY'
import json, sys
def cdiv(a, b): return -(-a // b)
bad = 0
for line in open(sys.argv[1]):
    cfg, launch = line.rstrip("\n").split("|", 1)
    p, plan = json.loads(cfg), json.loads(launch)
    bw = plan["params"][-1]["expr"]
    box = [q for q in plan["params"] if q.get("arg") == "A"][0]["box"][1]
    assert box == bw, (box, bw)
    bn, step, per = p["bn"], p["wstep"], 2 if p["cluster"] == "1x2" else 1
    widths = list(range(128, bn, step)) + [bn]
    for n in (4096, 14336):
        for m in range(257, 8193):
            env = {"cdiv": cdiv, "min": min, "max": max, "m": m, "n": n, "k": 4096}
            w = eval(bw, env)
            def waves(w): return cdiv(cdiv(n, p["bm"]) * cdiv(m, per * w), 132 // per)
            grid = eval(plan["grid"][0], env)
            narrower = [x for x in widths if x < w]
            ok = w in widths and waves(w) == waves(bn) and (not narrower or waves(max(narrower)) > waves(bn))
            ok = ok and grid == min(cdiv(n, p["bm"]) * cdiv(m, per * w), 132 // per) * per
            if not ok:
                bad += 1
                if bad < 4: print("m=%d n=%d: width %d of %s, waves %d (bn's %d), grid %d" % (m, n, w, widths, waves(w), waves(bn), grid))
print("bad", bad)
PY
run python3 "$T/widths.py" "$T/ws.launch"
expect_eq "every m of 257..8192 at n = 4096 and 14336 gets a kernel's width, bn's waves, the narrowest such, and its grid" "$(tail -1 "$T/out")" "bad 0" || show_last

# Each fake sweep's winner emitted and built: the swapped one, and the one
# whose width is chosen at run time.
if command -v nvcc >/dev/null 2>&1; then
    for w in "s:the swapped winner" "ws:a run-time-width winner"; do
        db=${w%%:*} what=${w#*:}
        run "$AITUNE" emit gemm_nt --arch sm_90a --dtype bf16 --shape 2086,4096,4096 --db "$T/$db.db" -o "$T/$db.cu"
        expect_eq "emit $what" "$RC" 0 || show_last
        run nvcc -gencode=arch=compute_90a,code=sm_90a -c "$T/$db.cu" -o "$T/$db.o"
        expect_eq "nvcc -c builds $what" "$RC" 0 || show_last
    done
else
    skip "nvcc builds the emitted swapped kernels: no nvcc"
fi
done_testing
