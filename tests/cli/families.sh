#!/usr/bin/env bash
# tests/run: slow 52 (the memory-bound families' spaces compiled)
# The memory-bound families without a GPU: the configs of every family's
# space at its bar shape (the staged families at 4096 and 32768 columns)
# are instantiated and compiled for sm_90a, and the ptxas report shows no
# spills and no local memory in any of them; then one winner per op (from a
# fake sweep) is emitted and built by nvcc. Which configs: with
# AITUNE_TEST_FULL=1, every one (1331 kernels, about 280 CPU-seconds);
# else the template defaults and 6 configs of each family drawn by the
# spec's seeded random search (about 100 kernels: a template whose configs
# spill or keep a local array does so across much of its space, so a few
# of each finds it; the full run is the proof).
. "$(dirname "$0")/lib.sh"

BARS=$ROOT/tests/fixtures/families/bars.yaml
DB=$T/families.db
FAMILIES="softmax/hold softmax/stream softmax/tma layernorm/hold layernorm/stream layernorm/tma rmsnorm/hold
rmsnorm/stream rmsnorm/tma transpose/tile reduce_rows/rows reduce_rows/split reduce_rows_max/rows reduce_all/vec"

if [ "${AITUNE_TEST_FULL:-0}" = 1 ]; then
    which="every config" sample=
else
    which="6 sampled configs and the default" sample="--max-evals 6"
fi
expect_exit 0 "compile $which of every memory-bound family at its bar shape" "$AITUNE" compile -v "$BARS" --db "$DB" $sample
cp "$T/out" "$T/table"
for f in $FAMILIES; do
    n=$(awk -v f="$f" '$2 == f' "$T/table" | wc -l)
    expect_true "family $f is instantiated and compiled ($n configs)" test "$n" -ge 1
    # Column 5 of a table row is spills in bytes, from ptxas -v.
    clean=$(awk -v f="$f" '$2 == f && $5 == 0' "$T/table" | wc -l)
    expect_eq "family $f: none of its $n configs spills" "$clean" "$n"
done
# No local memory: no stack frame in any compiled sample (the registry keeps
# each cubin's ptxas report).
stack=$(sql "$DB" "select count(*) from cubins where stack > 0 and kernel like 'aitune_%'")
nk=$(sql "$DB" "select count(*) from cubins where kernel like 'aitune_%'")
expect_true "the $nk compiled kernels report their registers" test "$(sql "$DB" "select count(*) from cubins where registers > 0")" -ge "$nk"
# A stack frame without spills is a register array indexed at run time.
local_arrays=$(sql "$DB" "select count(*) from cubins where stack > 0 and spills = 0 and kernel like 'aitune_%'")
expect_eq "no kernel keeps an array in local memory ($stack of $nk use a stack frame)" "$local_arrays" 0

# One winner per op through the whole pipeline, then emit + nvcc.
fake_sweep ok "$DB" "$BARS"
expect_eq "fake sweep of the bar shapes exits 0" "$RC" 0 || show_last
if command -v nvcc >/dev/null 2>&1; then
    for q in "softmax bf16 32768,4096" "layernorm bf16 32768,4096" "rmsnorm bf16 32768,4096" "transpose bf16 32768,4096" \
             "softmax bf16 16384,32768" "layernorm bf16 16384,32768" "rmsnorm bf16 16384,32768" \
             "reduce_rows bf16 4096,4096" "reduce_rows_max f32 4096,4096" "reduce_all f32 268435456"; do
        set -- $q
        emit_builds "$DB" "$1" sm_90 "$2" "$3" "$T/$1.cu" "$1 $2 $3"
    done
else
    skip "nvcc builds the emitted kernels: no nvcc"
fi
done_testing
