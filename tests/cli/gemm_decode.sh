#!/usr/bin/env bash
# tests/run: slow 33 (a sample of the decode GEMM spaces compiled)
# The GEMM families for decode and unaligned shapes (issue 10) without a GPU:
# a seeded sample of the gemv, rowdot and mma spaces, both layouts, several dtypes,
# at shapes with m = 1 and m = 16, odd k (4097, 4001) and odd n (4001, 4097),
# is instantiated and compiled for sm_90a. Every kernel compiles, none spills
# or keeps a stack frame; wgmma stages the operands TMA cannot read in place
# and supports() keeps gemv off m > 64 (nt; m > 16 nn) and rowdot off m > 4; a winner of each family is emitted
# and built by nvcc (wgmma's tensor maps over its staged copies included); the families' index maps are checked against numpy
# (tests/sim/gemm_fragments.py). About 20 kernels, ~20 s of CPU.
. "$(dirname "$0")/lib.sh"

spec decode.yaml <<'EOF'
name: decode
seed: 11
search: random
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [gemv, rowdot, mma, wgmma]
    shapes: {m: {values: [1]}, n: {values: [4001]}, k: {values: [4097]}}
  - op: gemm_nt
    dtypes: [f16]
    templates: [rowdot]
    shapes: {m: {values: [4]}, n: {values: [4096]}, k: {values: [4096]}}
  - op: gemm_nn
    dtypes: ["f16>f32"]
    templates: [gemv]
    shapes: {m: {values: [16]}, n: {values: [4097]}, k: {values: [4001]}}
  - op: gemm_nt
    dtypes: [f16]
    templates: [gemv]
    shapes: {m: {values: [16]}, n: {values: [4096]}, k: {values: [4096]}}
  - op: gemm_nt
    dtypes: [bf16]
    templates: [mma]
    shapes: {m: {values: [4096]}, n: {values: [4097]}, k: {values: [4096]}}
  - op: gemm_nn
    dtypes: ["bf16>f32"]
    templates: [mma]
    shapes: {m: {values: [4001]}, n: {values: [4001]}, k: {values: [4001]}}
EOF
DB=$T/decode.db
t0=$(date +%s)
expect_exit 0 "compile a seeded sample of the gemv and mma spaces at decode and odd shapes" \
    "$AITUNE" compile -v "$T/decode.yaml" --db "$DB" --max-evals 3
secs=$(( $(date +%s) - t0 ))
cp "$T/out" "$T/table"
for f in gemm_nt/gemv gemm_nn/gemv gemm_nt/rowdot gemm_nt/mma gemm_nn/mma; do
    n=$(awk -v f="$f" '$2 == f' "$T/table" | wc -l)
    expect_true "$f is instantiated and compiled ($n configs)" test "$n" -ge 2
    # Column 5 of a table row is spills in bytes, from ptxas -v.
    clean=$(awk -v f="$f" '$2 == f && $5 == 0 && $4 > 0' "$T/table" | wc -l)
    expect_eq "$f: none of its $n configs spills, all report registers" "$clean" "$n"
done
# Registers stay under the 255 cap with room: the constraints keep the
# estimate at 240 (mma) and 200 (gemv).
# l2pre (prefetch before the grid dependency wait) only goes with pdl.
nl2=$(grep -c '"l2pre":1' "$T/table")
expect_eq "no sampled config has l2pre without pdl ($nl2 with l2pre)" "$(grep '"l2pre":1' "$T/table" | grep -c '"pdl":0')" 0
over=$(awk '($2 ~ /gemv|rowdot|mma/) && $4 > 250' "$T/table" | wc -l)
expect_eq "no gemv, rowdot or mma kernel is at the register cap" "$over" 0
# nt with k = 4097: A's and B's rows both start unaligned, so both are staged.
nw=$(awk '$2 == "gemm_nt/wgmma"' "$T/table" | wc -l)
expect_true "wgmma takes k = 4097 ($nw configs)" test "$nw" -ge 2
expect_eq "every wgmma config there stages A and B" "$(awk '$2 == "gemm_nt/wgmma"' "$T/table" | grep -c '"stage":"ab"')" "$nw"
nk=$(sql "$DB" "select count(*) from cubins where kernel like 'aitune_%'")
stack=$(sql "$DB" "select count(*) from cubins where stack > 0 and kernel like 'aitune_%'")
expect_eq "no local memory in any of the $nk kernels" "$stack" 0
echo "# gemm_decode: $nk kernels compiled in $secs s"

# supports(): gemv only for m <= 64 (nt, its mt tiles) and m <= 16 (nn),
# mma everywhere from sm_80.
spec big_m.yaml <<'EOF'
name: big_m
seed: 1
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [gemv]
    shapes: {m: {values: [65]}, n: {values: [256]}, k: {values: [256]}}
  - op: gemm_nn
    dtypes: [bf16]
    templates: [gemv]
    shapes: {m: {values: [32]}, n: {values: [256]}, k: {values: [256]}}
EOF
run "$AITUNE" compile "$T/big_m.yaml" --db "$T/big_m.db" --max-evals 1
expect_eq "gemv is not offered nt m = 65 or nn m = 32" "$(sql "$T/big_m.db" "select count(*) from cubins")" 0
spec rowdot_m.yaml <<'EOF'
name: rowdot_m
seed: 1
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [rowdot]
    shapes: {m: {values: [4, 8]}, n: {values: [256]}, k: {values: [256]}}
EOF
run "$AITUNE" compile -v "$T/rowdot_m.yaml" --db "$T/rowdot_m.db" --max-evals 1
expect_eq "rowdot is offered m = 4 and not m = 8 (one bucket compiled)" "$(grep -c 'gemm_nt/rowdot' "$T/out")" 1

# A winner of each family through a fake sweep, emitted, built by nvcc (the
# gemv kernel takes the split-K workspace).
spec emit.yaml <<'EOF'
name: emit
seed: 2
search: random
max_evals: 1
top_k: 1
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [gemv]
    shapes: {m: {values: [16]}, n: {values: [4096]}, k: {values: [4096]}}
  - op: gemm_nt
    dtypes: [bf16]
    templates: [rowdot]
    shapes: {m: {values: [1]}, n: {values: [4096]}, k: {values: [4096]}}
  - op: gemm_nn
    dtypes: [bf16]
    templates: [mma]
    shapes: {m: {values: [4001]}, n: {values: [4001]}, k: {values: [4001]}}
  - op: gemm_nn
    dtypes: [bf16]
    templates: [wgmma]
    shapes: {m: {values: [4096]}, n: {values: [4097]}, k: {values: [4096]}}
  - op: gemm_nt
    dtypes: [bf16]
    templates: [swapab]
    shapes: {m: {values: [40]}, n: {values: [4096]}, k: {values: [4096]}}
EOF
fake_sweep ok "$T/emit.db" "$T/emit.yaml"
expect_eq "a fake sweep of one gemv, one rowdot, one mma, one wgmma and one swapab bucket exits 0" "$RC" 0 || show_last
if command -v nvcc >/dev/null 2>&1; then
    # gemv's default at 16 x 4096^2 (the fake sweep's winner) launches with
    # pdl: its plan loses the flag here, so the first emit is the plain
    # launcher, and the flag is put back below.
    sql "$T/emit.db" "update winners set launch = replace(launch, ',\"pdl\":true', '') where op = 'gemm_nt'" >/dev/null
    expect_eq "the gemv winner's plan without pdl" \
        "$(sql "$T/emit.db" "select count(*) from winners where op = 'gemm_nt' and launch like '%\"pdl\"%'")" 0
    for q in "gemm_nt 16,4096,4096 gemv" "gemm_nt 1,4096,4096 rowdot" "gemm_nn 4001,4001,4001 mma" "gemm_nn 4096,4097,4096 wgmma" \
             "gemm_nt 40,4096,4096 swapab"; do
        set -- $q
        emit_builds "$T/emit.db" "$1" sm_90 bf16 "$2" "$T/$1-$3.cu" "$3 winner of $1 at $2"
    done
    # A plan with pdl (the gemv winner's, marked so in the registry): the
    # emitted launcher asks for programmatic stream serialization.
    sql "$T/emit.db" "update winners set launch = replace(launch, ',\"params\":', ',\"pdl\":true,\"params\":') where op = 'gemm_nt'" >/dev/null
    run "$AITUNE" emit gemm_nt --arch sm_90 --dtype bf16 --shape 16,4096,4096 --db "$T/emit.db" -o "$T/pdl.cu"
    expect_eq "emit a winner whose plan has pdl" "$RC" 0 || show_last
    expect_true "its launcher sets the programmatic-serialization attribute" \
        grep -q 'cudaLaunchAttributeProgrammaticStreamSerialization' "$T/pdl.cu"
    run nvcc -gencode=arch=compute_90a,code=sm_90a -c "$T/pdl.cu" -o "$T/pdl.o"
    expect_eq "nvcc -c builds it" "$RC" 0 || show_last
    expect_true "the plain gemv emit has no such attribute" \
        sh -c "! grep -q ProgrammaticStreamSerialization '$T/gemm_nt-gemv.cu'"
    sql "$T/emit.db" "update winners set launch = replace(launch, '\"pdl\":true', '\"pdl\":\"yes\"') where op = 'gemm_nt'" >/dev/null
    run "$AITUNE" emit gemm_nt --arch sm_90 --dtype bf16 --shape 16,4096,4096 --db "$T/emit.db" -o "$T/pdl2.cu"
    expect_true "a registry plan with \"pdl\":\"yes\" is refused (exit $RC)" test "$RC" -ne 0
    expect_stderr '"pdl" must be true or false' "in one line that names the field"
    # swapab's A map holds the rows up to m rounded to 8 (a box that follows
    # the shape: plan.h); the emitted launcher computes it from m.
    expect_eq "the swapab winner's plan gives A's box as an expression of m" \
        "$(sql "$T/emit.db" "select count(*) from winners where template = 'gemm_nt/swapab' and launch like '%\"box\":[64,\"min(%, cdiv(m, 8) * 8)\"]%'")" 1
    expect_true "the emitted swapab launch encodes A's box from m" \
        grep -q 'const cuuint32_t aitune_box\[2\] = { 64u, (cuuint32_t)((aitune_min([0-9]*LL, aitune_cdiv(m, 8LL) \* 8LL))) }' \
        "$T/gemm_nt-swapab.cu"
    # The staged B's tensor map reads the workspace, past stage's counters.
    expect_true "the emitted wgmma launch encodes B's map over the workspace" \
        grep -q 'aitune_base = (const void\*)((char\*)ws + ((128LL)))' "$T/gemm_nn-wgmma.cu"
else
    skip "nvcc builds the emitted gemv, rowdot, mma and wgmma kernels: no nvcc"
fi

# The index algebra of both families (fragment layouts, swizzle, chunk maps,
# the gemv k permutation, split-K) against numpy, where numpy is installed.
# The Makefile's virtual environment has numpy (make deps), the system's
# python3 may not.
PY=python3
[ -x "$VENV/bin/python3" ] && PY=$VENV/bin/python3
if "$PY" -c 'import numpy' >/dev/null 2>&1; then
    run "$PY" "$ROOT/tests/sim/gemm_fragments.py"
    expect_eq "tests/sim/gemm_fragments.py: the kernels' index maps give numpy's product" "$RC" 0 || show_last 12
else
    skip "tests/sim/gemm_fragments.py: no numpy"
fi

done_testing
