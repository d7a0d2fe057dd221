#!/usr/bin/env bash
# tests/run: slow 50 (a sample of the GEMM spaces compiled)
# The Hopper GEMM family without a GPU: a seeded sample of its
# space (both layouts, every output type, a bar shape and a ragged one) is
# instantiated and compiled for sm_90a with the ptxas checks (no spills, no
# local memory, no ignored setmaxnreg or serialized wgmma: those warnings fail
# the compile); the template defaults are among them; a fake sweep's GEMM
# winners are emitted (tensor maps encoded in the emitted host code) and
# built by nvcc; the wgmma family stages exactly the operands TMA cannot
# read in place.
. "$(dirname "$0")/lib.sh"

SPEC=$ROOT/tests/fixtures/gemm/sample.yaml
DB=$T/gemm.db

expect_exit 0 "compile a seeded sample of the GEMM spaces" "$AITUNE" compile -v "$SPEC" --db "$DB" --max-evals 6
cp "$T/out" "$T/table"
for f in gemm_nn/wgmma gemm_nt/wgmma; do
    n=$(awk -v f="$f" '$2 == f' "$T/table" | wc -l)
    expect_true "family $f is instantiated and compiled ($n configs)" test "$n" -ge 6
    clean=$(awk -v f="$f" '$2 == f && $5 == 0' "$T/table" | wc -l)
    expect_eq "family $f: none of its $n configs spills" "$clean" "$n"
done
failed=$(sql "$DB" "select count(*) from measurements where status <> 'ok' and status <> 'constraint'")
expect_eq "no sampled GEMM config fails to compile" "$failed" 0
nk=$(sql "$DB" "select count(*) from cubins where kernel like 'aitune_%'")
local_arrays=$(sql "$DB" "select count(*) from cubins where stack > 0 and kernel like 'aitune_%'")
expect_eq "no GEMM kernel uses local memory ($nk compiled)" "$local_arrays" 0

# The wgmma family stages the operand TMA cannot read in place (nn with
# n = 4097: B's rows), and only that one; at aligned shapes it stages none.
cat > "$T/odd.yaml" <<'YAML'
name: odd
tasks:
  - op: gemm_nn
    dtypes: [bf16]
    templates: [wgmma]
    shapes: {m: {values: [64]}, n: {values: [4097]}, k: {values: [64]}}
YAML
run "$AITUNE" compile -v "$T/odd.yaml" --db "$T/odd-nn.db" --max-evals 2
expect_eq "n = 4097 compiles with wgmma" "$RC" 0 || show_last
nw=$(grep -c 'gemm_nn/wgmma' "$T/out")
expect_true "wgmma candidates at n = 4097 ($nw)" test "$nw" -ge 2
expect_eq "every one stages B, and only B" "$(grep 'gemm_nn/wgmma' "$T/out" | grep -c '"stage":"b"')" "$nw"
expect_eq "no wgmma candidate at an aligned shape stages anything" \
    "$(sql "$DB" "select count(*) from cubins where source like '%#define STAGE_A 1%' or source like '%#define STAGE_B 1%'")" 0
# nt loads only k-long rows with TMA: an odd n is taken, with direct stores.
sed -i 's/op: gemm_nn/op: gemm_nt/' "$T/odd.yaml"
run "$AITUNE" compile -v "$T/odd.yaml" --db "$T/odd.db" --max-evals 3
expect_true "gemm_nt with n = 4097 is compiled by the wgmma family" grep -q 'gemm_nt/wgmma' "$T/out"
expect_true "... and never with TMA stores" sh -c "! grep 'gemm_nt/wgmma' '$T/out' | grep -q '\"epilogue\":\"tma\"'"
# There D's rows are stored straight from registers ("direct") or a row at a
# time from shared memory ("rows"), which only odd n may take.
run "$AITUNE" compile -v "$T/odd.yaml" --db "$T/odd.db" --max-evals 12
nr=$(grep 'gemm_nt/wgmma' "$T/out" | grep -c '"epilogue":"rows"')
expect_true "some sampled configs at n = 4097 store rows from shared memory ($nr)" test "$nr" -ge 1
expect_eq "... none of them spills" "$(grep '"epilogue":"rows"' "$T/out" | awk '$5 != 0' | wc -l)" 0
expect_eq "... each kernel has the rows epilogue" \
    "$(sql "$T/odd.db" "select count(*) from cubins where source like '%#define EPI_ROWS 1%'")" "$nr"
expect_eq "no candidate at an aligned n stores rows" \
    "$(sql "$DB" "select count(*) from cubins where source like '%#define EPI_ROWS 1%'")" 0

# "tma_ws" (D through TMA into an aligned copy in the workspace, copied to D
# by the producer's warps 1-3): a sample of its small configs (the space
# narrowed as bench/ws_epilogue.sh runs them under compute-sanitizer) at odd
# n, both layouts: each kernel takes D's tensor map and the workspace, gives
# the producer 72 registers and the consumers 216, and has the consumers'
# warps copy the CTA's last tile with the copy warps (no "rows" store); no
# aligned n, non-persistent or ping-pong config takes it.
python3 "$ROOT/bench/narrow.py" "$T/wshome" wgmma "$ROOT/bench/gemm/ws_small_space.lua"
AITUNE_HOME=$T/wshome run "$AITUNE" compile -v "$ROOT/tests/gpu/ws_sanitize.yaml" --db "$T/ws.db" --max-evals 1
expect_eq "compile a sample of tma_ws configs" "$RC" 0 || show_last
nws=$(grep -c '"epilogue":"tma_ws"' "$T/out")
expect_true "the sample has tma_ws configs at nn" grep -q 'gemm_nn/wgmma.*"epilogue":"tma_ws"' "$T/out"
expect_true "... and at nt ($nws in all)" grep -q 'gemm_nt/wgmma.*"epilogue":"tma_ws"' "$T/out"
expect_eq "each tma_ws kernel takes D's tensor map and the workspace, with 72 producer and 216 consumer registers" \
    "$(sql "$T/ws.db" "select count(*) from cubins where source like '%#define EPI_WS 1%' and source like '%const __grid_constant__ tmap_t tmD,%'
       and source like '%unsigned char* __restrict__ ws%' and source like '%setmaxnreg.dec.sync.aligned.u32 72;%'
       and source like '%setmaxnreg.inc.sync.aligned.u32 216;%' and source like '%ws_copy_tile(D, ws, m, n, k, ws_tm, ws_tn,%'
       and source like '%#define EPI_ROWS 0%'")" "$nws"
expect_eq "no candidate at an aligned n takes tma_ws" \
    "$(sql "$DB" "select count(*) from cubins where source like '%#define EPI_WS 1%'")" 0
# Its rules: a one-config space that tma_ws accepts at 4001^3 nn, then the
# same config breaking one rule at a time is refused.
cat > "$T/wsc.yaml" <<'YAML'
name: wsc
tasks:
  - op: gemm_nn
    dtypes: [bf16]
    templates: [wgmma]
    shapes: {m: {values: [4001]}, n: {values: [4001]}, k: {values: [4001]}}
YAML
for bad in 'none|' 'persistent|0' 'schedule|"pingpong"' 'consumers|1' 'producer_regs|24'; do
    key=${bad%%|*} val=${bad#*|}
    cat > "$T/wsbad.lua" <<LUA
M.params = {
  { "bm", { 128 } }, { "bn", { 128 } }, { "consumers", { 2 } }, { "stages", { 6 } },
  { "persistent", { 1 } }, { "raster", { "m" } }, { "group", { 1 } }, { "producer_regs", { 40 } },
  { "cluster", { "1x1" } }, { "schedule", { "coop" } }, { "inflight", { 1 } },
  { "epilogue", { "tma_ws" } }, { "streamk", { 0 } }, { "stage", { "ab" } },
}
LUA
    sed -i "s/{ \"$key\", { [^}]* } }/{ \"$key\", { $val } }/" "$T/wsbad.lua"
    rm -rf "$T/wsbad"
    python3 "$ROOT/bench/narrow.py" "$T/wsbad" wgmma "$T/wsbad.lua"
    AITUNE_HOME=$T/wsbad run "$AITUNE" compile "$T/wsc.yaml" --db "$T/wsbad.db" --quiet
    if [ "$key" = none ]; then
        expect_true "tma_ws at 4001^3 nn: the one-config space is compiled" grep -q '1 candidates evaluated; 1 compiled' "$T/err"
    else
        expect_true "tma_ws with $key $val: refused by the constraints" grep -q '0 candidates evaluated; 0 compiled, 0 from the cache; 1 rejected' "$T/err"
    fi
done

# Stream-K (persistent grids whose units leave a wave part empty: 1152^2 is
# 81 tiles of 128x128 on 132 SMs): sampled configs with and without it
# compile without spills, and the stream-K kernels take the workspace. A
# batch of 8: about a quarter of the valid configs at this shape are stream-K.
cat > "$T/sk.yaml" <<'YAML'
name: sk
search: random
seed: 1
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [wgmma]
    shapes: {m: {values: [1152]}, n: {values: [1152]}, k: {values: [4096]}}
YAML
expect_exit 0 "compile a sample of the wgmma space at a ragged shape" "$AITUNE" compile -v "$T/sk.yaml" --db "$T/sk.db" --max-evals 8
nsk=$(grep -c '"streamk":1' "$T/out")
expect_true "the sample has stream-K configs ($nsk)" test "$nsk" -ge 1
expect_eq "no stream-K config spills" "$(grep '"streamk":1' "$T/out" | awk '$5 != 0' | wc -l)" 0
expect_eq "every stream-K kernel takes the workspace" \
    "$(sql "$T/sk.db" "select count(*) from cubins where source like '%#define STREAMK 1%' and source like '%unsigned char* __restrict__ ws)%'")" "$nsk"
# Programmatic dependent launch (lib/wgmma.lua's has_ws): a kernel with a
# workspace (zeroed before each launch) is built without it, one without
# waits for the previous launch before it touches global memory.
expect_eq "no kernel with the workspace is built with PDL" \
    "$(sql "$T/sk.db" "select count(*) from cubins where source like '%__restrict__ ws)%' and source not like '%#define PDL 0%'")" 0
nows=$(sql "$T/sk.db" "select count(*) from cubins where source not like '%__restrict__ ws)%' and kernel like 'aitune_%'")
expect_true "the sample has kernels without the workspace ($nows)" test "$nows" -ge 1
expect_eq "every kernel without it is, its wait after the barriers' set-up" \
    "$(sql "$T/sk.db" "select count(*) from cubins where source not like '%__restrict__ ws)%' and source like '%#define PDL 1%' and source like '%__syncthreads();
#if PDL
  asm volatile(\"griddepcontrol.wait;\"%'")" "$nows"

# A's tail map (lib/wgmma.lua's a_tail): the last row of tiles loads A
# through a map whose box holds only the rows of m it has, rounded up to 8
# (half of them, each CTA of a 1x2 cluster), so TMA fills no rows past m but
# those. Sampled configs at m = 317: each kernel without staging takes it
# (the third map, before D's) and picks it for the last row; the others do
# not. The winner's box, evaluated as the launch would, is 64 rows (61 of m
# rounded up) at bm 64, 128 and 256, 32 under a 1x2 cluster.
spec tail.yaml <<'YAML'
name: tail
search: random
seed: 3
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [wgmma]
    shapes: {m: {values: [317], exact: true}, n: {values: [4096], exact: true}, k: {values: [4096, 4001], exact: true}}
YAML
fake_sweep ok "$T/tail.db" "$T/tail.yaml" --max-evals 12
expect_eq "a fake sweep of sampled wgmma configs at m = 317 exits 0" "$RC" 0 || show_last
python3 - "$T/tail.db" > "$T/tail.out" <<'PY'
import json, re, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
rows = con.execute("select source from cubins where kernel like 'aitune_gemm%'").fetchall()
tail = sum('const __grid_constant__ tmap_t tmAt,' in s and 'a_tail ? &tmAt : &tmA' in s and '#define A_TAIL 1' in s for (s,) in rows)
plain = sum('tmap_t tmAt' not in s and '&tmAt' not in s and '#define A_TAIL 0' in s for (s,) in rows)
print(len(rows), tail, plain, tail + plain == len(rows))
cdiv = lambda a, b: -(-a // b)
def at317(expr):
    assert re.fullmatch(r"[a-zA-Z_0-9 ()+*,-]+", expr), expr
    env = {"m": 317, "cdiv": cdiv, "max": max, "min": min, "AIT_CDIV": cdiv, "AIT_MAX": max, "AIT_MIN": min, "int": int}
    return eval(expr, {"__builtins__": {}}, env)
# Each tail kernel's rows (its A_TAIL_ROWS at m = 317) by its SHARE.
for (s,) in rows:
    if '#define A_TAIL 1' in s:
        share = re.search(r"#define SHARE (\d)", s).group(1)
        print("kernel", at317(re.search(r"#define A_TAIL_ROWS\(m\) (.*)", s).group(1)), 32 if share == "2" else 64, "share", share)
# Each winner's staging says whether it may take the map; its plan holds it
# third, its box's rows an expression of m.
for cfg, launch in con.execute("select config, launch from winners"):
    c, L = json.loads(cfg), json.loads(launch)
    maps = [p for p in L["params"] if p["kind"] == "tmap"]
    want = "none" if c["stage"] != "none" else 32 if c["cluster"] == "1x2" else 64
    got = at317(str(maps[2]["box"][1])) if len(maps) >= 3 and maps[2]["arg"] == "A" else "none"
    print("winner", got, want, c["stage"], c["cluster"])
PY
read -r n ntail nplain whole < "$T/tail.out"
expect_true "the sample compiled kernels with and without the tail map ($ntail and $nplain of $n)" test "$ntail" -ge 1 -a "$nplain" -ge 1
expect_eq "each kernel either takes the tail map and loads the last row through it, or has none" "$whole" True
expect_eq "each tail kernel's box at m = 317 is the last row's 61 rows rounded up to 8: 64, or 32 a CTA of a 1x2 cluster (shares: $(grep '^kernel' "$T/tail.out" | awk '{print $5}' | sort -u | tr '\n' ' '))" \
    "$(grep '^kernel' "$T/tail.out" | awk '{ print ($2 == $3 ? "ok" : "bad " $0) }' | sort -u)" "ok"
expect_eq "the sample's tail kernels include a 1x2 cluster's" "$(grep -c '^kernel.* share 2$' "$T/tail.out" | awk '{print ($1 > 0)}')" 1
expect_eq "each winner holds the map exactly where its config may (third, A's, its box the last row's rows)" \
    "$(grep '^winner' "$T/tail.out" | awk '{ print ($2 == $3 ? "ok" : "bad " $0) }' | sort -u)" "ok"

# B's tail map (lib/wgmma.lua's b_tail): the swapped kernel at a fixed width
# loads the last column of tiles' B (the GEMM's A, its m rows) through a map
# whose box holds only the rows of m that column has, rounded up to 8.
# Sampled configs at m = 317: a kernel takes it exactly where its width is
# fixed and no 2x1 cluster halves B's box; its box at n = 317 (the kernel's
# n is the GEMM's m) is 317 less the full tiles before it, rounded up to 8,
# and so is the winner's plan's (its third map, evaluated at m = 317).
spec btail.yaml <<'YAML'
name: btail
search: random
seed: 18
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [wgmma_swap]
    shapes: {m: {values: [317, 320], exact: true}, n: {values: [4096], exact: true}, k: {values: [4096], exact: true}}
YAML
fake_sweep ok "$T/btail.db" "$T/btail.yaml" --max-evals 12
expect_eq "a fake sweep of sampled swapped configs at m = 317 and 320 exits 0" "$RC" 0 || show_last
python3 - "$T/btail.db" > "$T/btail.out" <<'PY'
import json, re, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
cdiv = lambda a, b: -(-a // b)
def at(expr, name, v):
    assert re.fullmatch(r"[a-zA-Z_0-9 ()+*,-]+", expr), expr
    env = {name: v, "cdiv": cdiv, "max": max, "min": min, "AIT_CDIV": cdiv, "AIT_MAX": max, "AIT_MIN": min, "int": int}
    return eval(expr, {"__builtins__": {}}, env)
want_rows = lambda m, bn: max(8, cdiv(m - (cdiv(m, bn) - 1) * bn, 8) * 8)
for (s,) in con.execute("select source from cubins where kernel like 'aitune_gemm%'"):
    bn = int(re.search(r"#define BN (\d+)", s).group(1))
    fixed = "long long bw" not in s
    share = re.search(r"#define SHARE (\d)", s).group(1)
    want = fixed and share != "1"
    tail = "#define B_TAIL 1" in s and "const __grid_constant__ tmap_t tmBt," in s and "b_tail ? &tmBt : &tmB" in s
    plain = "#define B_TAIL 0" in s and "tmap_t tmBt" not in s and "&tmBt" not in s
    rows = at(re.search(r"#define B_TAIL_ROWS\(n\) (.*)", s).group(1), "n", 317) if tail else "none"
    print("kernel", "fixed" if fixed else "widths", share, tail, plain, want == tail and (tail or plain),
          rows, want_rows(317, bn) if want else "none")
for shape, cfg, launch in con.execute("select shape, config, launch from winners"):
    m, c, L = json.loads(shape)["m"], json.loads(cfg), json.loads(launch)
    maps = [p for p in L["params"] if p["kind"] == "tmap"]
    want = want_rows(m, c["bn"]) if not c.get("wstep") and c["cluster"] != "2x1" else "none"
    got = at(str(maps[2]["box"][1]), "m", m) if len(maps) >= 3 and maps[2]["arg"] == "A" else "none"
    print("winner", m, got, want, c["bn"], c.get("wstep"), c["cluster"])
PY
expect_eq "the sample holds fixed-width kernels with no cluster, 2x1 and 1x2, a run-time width's, and winners with a tail" \
    "$(grep -c '^kernel fixed 0 ' "$T/btail.out" | awk '{print ($1 > 0)}')$(grep -c '^kernel fixed 1 ' "$T/btail.out" | awk '{print ($1 > 0)}')$(grep -c '^kernel fixed 2 ' "$T/btail.out" | awk '{print ($1 > 0)}')$(grep -c '^kernel widths' "$T/btail.out" | awk '{print ($1 > 0)}')$(grep -c '^winner [0-9]* [0-9]' "$T/btail.out" | awk '{print ($1 > 0)}')" 11111
expect_eq "each swapped kernel takes B's tail map exactly where its width is fixed and no 2x1 cluster halves B's box" \
    "$(awk '/^kernel/ { print $6 }' "$T/btail.out" | sort -u)" "True"
expect_eq "each tail kernel's box at m = 317 is the last column's rows of m rounded up to 8" \
    "$(awk '/^kernel/ { print ($7 == $8 ? "ok" : "bad " $0) }' "$T/btail.out" | sort -u)" "ok"
expect_eq "each winner holds the map exactly where its config may (third, A's, its box the last column's rows of m)" \
    "$(awk '/^winner/ { print ($3 == $4 ? "ok" : "bad " $0) }' "$T/btail.out" | sort -u)" "ok"

# Overlapped staging (A's late rows copied by the producer's idle warps):
# a sample of the overlapped configs of small tiles (the space narrowed by
# bench/narrow.py, as bench/overlap.sh runs them under compute-sanitizer)
# compiles without spills at both layouts, with 56 producer registers (72
# where B's k rows are copied behind too).
python3 "$ROOT/bench/narrow.py" "$T/ovhome" wgmma "$ROOT/bench/gemm/overlap_small_space.lua"
AITUNE_HOME=$T/ovhome run "$AITUNE" compile -v "$ROOT/tests/gpu/overlap_sanitize.yaml" --db "$T/ov.db" --max-evals 3
expect_eq "compile a sample of overlapped configs" "$RC" 0 || show_last
nov=$(grep -c '_overlap"' "$T/out")
expect_true "the sample has overlapped configs at nn ($nov in all)" grep -q 'gemm_nn/wgmma.*_overlap"' "$T/out"
expect_true "... and at nt" grep -q 'gemm_nt/wgmma.*_overlap"' "$T/out"
expect_eq "no overlapped config spills" "$(grep '_overlap"' "$T/out" | awk '$5 != 0' | wc -l)" 0
nk=$(grep -c '"abk_overlap"' "$T/out")
expect_eq "each overlapped kernel copies A behind the first wave with 56 producer registers" \
    "$(sql "$T/ov.db" "select count(*) from cubins where source like '%#define OVERLAP 1%' and source like '%#define OVERLAP_B 0%' and source like '%setmaxnreg.dec.sync.aligned.u32 56;%'")" "$((nov - nk))"
expect_eq "... and B's k rows too (abk_overlap, $nk) with 72" \
    "$(sql "$T/ov.db" "select count(*) from cubins where source like '%#define OVERLAP_B 1%' and source like '%setmaxnreg.dec.sync.aligned.u32 72;%'")" "$nk"

# A bucket holds one winner per alignment class. A sweep at another shape of
# the bucket and class replaces it quietly when the new winner's template
# takes it at the old shape (4096^3, then 4096 x 4104 x 4096); 4096 x 4097 x
# 4096 (class 1: it must stage B, which an aligned n refuses) is a bucket of
# its own. A registry written before classes were keyed may hold a winner
# tuned at 4097 under the aligned key: one tuned at 4096 replaces it with a
# warning naming both shapes.
cat > "$T/al.yaml" <<'YAML'
name: al
tasks:
  - op: gemm_nn
    dtypes: [bf16]
    templates: [wgmma]
    shapes: {m: {values: [4096]}, n: {values: [4096]}, k: {values: [4096]}}
YAML
fake_sweep ok "$T/al.db" "$T/al.yaml" --max-evals 1
expect_eq "fake sweep of 4096^3 exits 0" "$RC" 0 || show_last
sed -i 's/n: {values: \[4096\]}/n: {values: [4104]}/' "$T/al.yaml"
fake_sweep ok "$T/al.db" "$T/al.yaml" --max-evals 1
expect_eq "4096 x 4104 x 4096 replaces it" "$RC,$(sql "$T/al.db" "select json_extract(shape, '\$.n') from winners")" "0,4104"
expect_true "... without a warning: its winner runs 4096^3 too" sh -c "! grep -q 'is replaced' '$T/err'"
sed -i 's/n: {values: \[4104\]}/n: {values: [4097]}/' "$T/al.yaml"
fake_sweep ok "$T/al.db" "$T/al.yaml" --max-evals 1
expect_eq "4096 x 4097 x 4096 gets a bucket of its own beside it" \
    "$RC,$(sql "$T/al.db" "select bucket || ' ' || json_extract(shape, '\$.n') from winners order by bucket" | tr '\n' ';')" \
    "0,m=2^12,n=2^12,k=2^12 4104;m=2^12,n=2^12:align1,k=2^12 4097;"
expect_true "... without a warning" sh -c "! grep -q 'is replaced' '$T/err'"
sql "$T/al.db" "delete from winners where bucket = 'm=2^12,n=2^12,k=2^12';
                update winners set bucket = 'm=2^12,n=2^12,k=2^12'" >/dev/null
sed -i 's/n: {values: \[4097\]}/n: {values: [4096]}/' "$T/al.yaml"
fake_sweep ok "$T/al.db" "$T/al.yaml" --max-evals 1
expect_eq "4096^3 replaces a winner tuned at 4097 under the aligned key (an old registry)" \
    "$RC,$(sql "$T/al.db" "select json_extract(shape, '\$.n') from winners")" "0,4096"
expect_true "... with one warning naming both shapes and why" \
    grep -q 'm=2^12,n=2^12,k=2^12: the winner tuned at 4096x4097x4096 is replaced by one tuned at 4096x4096x4096, which gemm_nn/wgmma refuses at 4096x4097x4096 (' "$T/err" || show_last

# Winners through the whole pipeline, then emit + nvcc.
fake_sweep ok "$DB" "$SPEC" --max-evals 2
expect_eq "fake sweep of the GEMM sample exits 0" "$RC" 0 || show_last
if command -v nvcc >/dev/null 2>&1; then
    for q in "gemm_nn bf16 4096,4096,4096" "gemm_nt f16 4096,14336,4096" "gemm_nt bf16>f32 1000,136,72"; do
        set -- $q
        run "$AITUNE" emit "$1" --arch sm_90a --dtype "$2" --shape "$3" --db "$DB" -o "$T/$1.cu"
        expect_eq "emit $1 $2 $3" "$RC" 0 || { show_last; continue; }
        expect_true "the emitted $1 encodes its tensor maps" grep -q "TensorMapEncodeTiled" "$T/$1.cu"
        run nvcc -gencode=arch=compute_90a,code=sm_90a -c "$T/$1.cu" -o "$T/$1.o"
        expect_eq "nvcc -c builds the emitted $1 $2" "$RC" 0 || show_last
    done
    # The whole op, every bucket, the arch taken from the registry.
    run "$AITUNE" emit gemm_nt --dtype bf16 --db "$DB" -o "$T/whole.cu"
    expect_eq "emit gemm_nt bf16 (whole op, no --arch)" "$RC" 0 || show_last
    expect_true "the whole-op file has the dispatcher" grep -q '^extern "C" cudaError_t aitune_gemm_nt_bf16(' "$T/whole.cu"
    run nvcc -gencode=arch=compute_90a,code=sm_90a -c "$T/whole.cu" -o "$T/whole.o"
    expect_eq "nvcc -c builds the whole-op gemm_nt file" "$RC" 0 || show_last
else
    skip "nvcc builds the emitted GEMM kernels: no nvcc"
fi

# Stream-K (wgmma): where it has no partial wave to split it runs its units
# data-parallel, so such a config is valid (a stream-K winner serves every
# size of its bucket) and only weighed down in the search (prior 1/16: the
# walk tries it after the configs of weight 1). wgmma's default takes it
# where a full wave of units is followed by a partial one it splits (4096^2
# at m = 3184: 13 x 16 pairs of tiles over 66 workers), not where the
# units fill their waves (m = 4096) or make less than one (m = 64).
spec wd.yaml <<'YAML'
name: wd
search: random
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [wgmma]
    shapes: {m: {values: [64, 3184, 4096], exact: true}, n: {values: [4096]}, k: {values: [4096]}}
YAML
"$ROOT/build/tests/kernel_sample" list -n 0 "$T/wd.yaml" > "$T/wd.list" 2> "$T/wd.err"
for want in '64 0' '3184 1' '4096 0'; do
    set -- $want
    got=$(awk -F'\t' -v m="$1" '$3 == m ",4096,4096" { print $5 }' "$T/wd.list" | grep -o '"streamk":[01]')
    expect_eq "wgmma's default at $1 x 4096 x 4096 has streamk $2" "$got" "\"streamk\":$2"
done
cat > "$T/sk.lua" <<'LUA'
M.params = {
  { "bm", { 128 } }, { "bn", { 256 } }, { "consumers", { 2 } }, { "stages", { 4 } }, { "persistent", { 1 } },
  { "raster", { "m" } }, { "group", { 8 } }, { "producer_regs", { 40 } }, { "cluster", { "2x1" } },
  { "schedule", { "coop" } }, { "inflight", { 1 } }, { "epilogue", { "tma" } }, { "streamk", { 1, 0 } },
  { "stage", { "none", "a", "b", "ab", "a_overlap", "ab_overlap" } },
}
LUA
python3 "$ROOT/bench/narrow.py" "$T/skhome" wgmma "$T/sk.lua"
for m in 4096 3184; do
    cat > "$T/sk.yaml" <<YAML
name: sk
search: exhaustive
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [wgmma]
    shapes: {m: {values: [$m]}, n: {values: [4096]}, k: {values: [4096]}}
YAML
    AITUNE_HOME=$T/skhome fake_sweep ok "$T/sk$m.db" "$T/sk.yaml" --max-evals 2
    expect_eq "the two-config stream-K space at $m x 4096 x 4096: a fake sweep exits 0" "$RC" 0 || show_last
    order=$(sql "$T/sk$m.db" "select group_concat(json_extract(config, '\$.streamk'), ' ') from (select config from measurements where template = 'gemm_nt/wgmma' order by rowid)")
    if [ "$m" = 4096 ]; then
        expect_eq "at 4096 (nothing to split) both are valid, stream-K walked last" "$order" "0 1"
    else
        expect_eq "at 3184 (a partial wave to split) the space's order: stream-K first" "$order" "1 0"
    fi
done
# wgmma's default tile (nt): where 128 x 256 pairs fill fewer than three
# waves, the tile whose waves cost least (templates/lib/wgmma.lua: wave_tile):
# 64 x 128 where its units fit one wave (4096^2 at m = 256: 4 x 32), 64 x
# 192 where those do (m = 317: 5 x 22), 128 x 128 where those do (m = 439;
# 14336 x 4096 at m = 378: three waves of them against two of pairs), the
# pair where it fills its wave better (4096^2 at m = 927; 14336 x 4096 at
# 256) and from three waves of it on (m = 4096);
# each with as many stages as fit. gemm_nn keeps the pair.
spec wt.yaml <<'YAML'
name: wt
search: random
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [wgmma]
    shapes: {m: {values: [256, 317, 439, 927, 4096], exact: true}, n: {values: [4096], exact: true}, k: {values: [4096]}}
  - op: gemm_nt
    dtypes: [bf16]
    templates: [wgmma]
    shapes: {m: {values: [256, 378], exact: true}, n: {values: [14336], exact: true}, k: {values: [4096]}}
  - op: gemm_nn
    dtypes: [bf16]
    templates: [wgmma]
    shapes: {m: {values: [256], exact: true}, n: {values: [4096], exact: true}, k: {values: [4096]}}
YAML
"$ROOT/build/tests/kernel_sample" list -n 0 "$T/wt.yaml" > "$T/wt.list" 2> "$T/wt.err"
tile() {   # TEMPLATE SHAPE: the default's bm x bn cluster consumers stages
    awk -F'\t' -v t="$1" -v s="$2" '$1 == t && $3 == s { print $5 }' "$T/wt.list" |
        sed 's/.*"bm":\([0-9]*\),"bn":\([0-9]*\),"cluster":"\([0-9x]*\)","consumers":\([0-9]\).*"stages":\([0-9]\).*/\1x\2 \3 c\4 st\5/'
}
for want in '256,4096,4096 64x128 1x1 c1 st8' '317,4096,4096 64x192 1x1 c1 st6' '439,4096,4096 128x128 1x1 c2 st6' \
            '927,4096,4096 128x256 2x1 c2 st4' '4096,4096,4096 128x256 2x1 c2 st4' \
            '256,14336,4096 128x256 2x1 c2 st4' '378,14336,4096 128x128 1x1 c2 st6'; do
    set -- $want
    expect_eq "wgmma's default tile at $1 (nt)" "$(tile gemm_nt/wgmma "$1")" "$2 $3 $4 $5"
done
expect_eq "gemm_nn keeps the pair at 256 x 4096 x 4096" "$(tile gemm_nn/wgmma 256,4096,4096)" "128x256 2x1 c2 st4"
# Widths of 112 and 224 (14336 columns in 128 or 64 tiles on 132 SMs): nt
# only, stores from registers. A's box holds m rounded up to 8 rows where
# one tile row holds all of m (TMA's zero-filled rows past m cost time),
# the same expression in the kernel (A_BOX_ROWS: the bytes a slot expects)
# and in its tensor map (what emit encodes), halves of it under 1x2.
cat > "$T/w112.lua" <<'LUA'
M.params = {
  { "bm", { 256 } }, { "bn", { 112 } }, { "consumers", { 2 } }, { "stages", { 4 } },
  { "persistent", { 1 } }, { "raster", { "m" } }, { "group", { 8 } }, { "producer_regs", { 40 } },
  { "cluster", { "1x1", "1x2" } }, { "schedule", { "coop" } }, { "inflight", { 1 } },
  { "epilogue", { "direct", "tma" } }, { "streamk", { 0 } }, { "stage", { "none" } },
}
LUA
cat > "$T/w112.yaml" <<'YAML'
name: w112
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [wgmma]
    shapes: {m: {values: [129], exact: true}, n: {values: [14336], exact: true}, k: {values: [4096], exact: true}}
  - op: gemm_nn
    dtypes: [bf16]
    templates: [wgmma]
    shapes: {m: {values: [129], exact: true}, n: {values: [14336], exact: true}, k: {values: [4096], exact: true}}
YAML
python3 "$ROOT/bench/narrow.py" "$T/w112home" wgmma "$T/w112.lua"
AITUNE_HOME=$T/w112home run "$AITUNE" compile -v "$T/w112.yaml" --db "$T/w112.db"
expect_eq "compile bn 112 at 129 x 14336 x 4096" "$RC" 0 || show_last
expect_eq "nt takes bn 112 with direct stores, 1x1 and 1x2, without spills; tma stores and nn refuse it" \
    "$(awk '$2 == "gemm_nt/wgmma" && $5 == 0 && /"bn":112/ && /"epilogue":"direct"/' "$T/out" | wc -l),$(grep -c 'gemm_nn/wgmma' "$T/out")" "2,0"
expect_eq "A's box in the kernel: m rounded up to 8, at most 256, 256 past one tile row" \
    "$(sql "$T/w112.db" "select count(*) from cubins where source like '%#define SHARE 0%'
       and source like '%#define A_BOX_ROWS(m) ((int)(AIT_MIN(256, AIT_MAX(AIT_CDIV(m, 8) * 8, (AIT_CDIV(m, 256) - 1) * 256))))%'")" 1
expect_eq "... and under 1x2 half of m a CTA, at most 128" \
    "$(sql "$T/w112.db" "select count(*) from cubins where source like '%#define SHARE 2%'
       and source like '%#define A_BOX_ROWS(m) ((int)(AIT_MIN(128, AIT_MAX(AIT_CDIV(AIT_CDIV(m, 2), 8) * 8, (AIT_CDIV(m, 256) - 1) * 256))))%'")" 1
AITUNE_HOME=$T/w112home fake_sweep ok "$T/w112s.db" "$T/w112.yaml"
expect_eq "a fake sweep of the bn 112 space exits 0" "$RC" 0 || show_last
expect_eq "the winner's plan gives A's box as the kernel's expression" \
    "$(sql "$T/w112s.db" "select count(*) from winners where template = 'gemm_nt/wgmma' and (launch like '%\"box\":[64,\"min(256, max(cdiv(m, 8) * 8, (cdiv(m, 256) - 1) * 256))\"]%'
       or launch like '%\"box\":[64,\"min(128, max(cdiv(cdiv(m, 2), 8) * 8, (cdiv(m, 256) - 1) * 256))\"]%')")" 1
if command -v nvcc >/dev/null 2>&1; then
    AITUNE_HOME=$T/w112home run "$AITUNE" emit gemm_nt --arch sm_90a --dtype bf16 --shape 129,14336,4096 --db "$T/w112s.db" -o "$T/w112.cu"
    expect_eq "emit the bn 112 winner" "$RC" 0 || show_last
    expect_true "the emitted launch encodes A's box from m" \
        grep -q 'const cuuint32_t aitune_box\[2\] = { 64u, (cuuint32_t)((aitune_min(\(256\|128\)LL, aitune_max(aitune_cdiv(' "$T/w112.cu"
    run nvcc -gencode=arch=compute_90a,code=sm_90a -c "$T/w112.cu" -o "$T/w112.o"
    expect_eq "nvcc -c builds the emitted bn 112 kernel" "$RC" 0 || show_last
else
    skip "nvcc builds the emitted bn 112 kernel: no nvcc"
fi
done_testing
