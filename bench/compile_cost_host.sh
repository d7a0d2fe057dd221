#!/usr/bin/env bash
# bench/compile_cost_host.sh: what GEMM candidates cost to compile on the
# machine a sweep compiles on (a GPU host: run it there in one call; it needs
# no GPU), in three measurements by bench/compile_cost.sh:
#   1. the 48-candidate sample, one process: CPU seconds per candidate alone;
#   2. the same sample split over one process per CPU (nproc): CPU seconds
#      per candidate when every CPU compiles, as in a sweep;
#   3. `aitune compile SPEC --max-evals EVALS` (default specs/gemm-decode.yaml,
#      8): CPU seconds per kernel of aitune and its NVRTC helpers, wall time
#      times CPUs per kernel (the figure issue 33 quotes, 2.8), and the
#      kernels' compile_ms (wall).
# Prints, last, one table: per family the mean CPU seconds alone and with
# every CPU busy, then the spec's three per-kernel figures and the machine.
#
#     bench/compile_cost_host.sh OUT [SPEC [EVALS]]
set -u
cd "$(dirname "$0")/.." || exit 2
OUT=${1:?usage: bench/compile_cost_host.sh OUT [SPEC [EVALS]]}
SPEC=${2:-specs/gemm-decode.yaml}
EVALS=${3:-8}
mkdir -p "$OUT" || exit 2
N=$(nproc)

make -s -j"$N" build/aitune build/tests/kernel_sample >"$OUT/make.log" 2>&1 ||
    { echo "compile_cost_host: make failed (see $OUT/make.log)" >&2; tail -n 5 "$OUT/make.log" >&2; exit 1; }
bench/compile_cost.sh -j 1 "$OUT/alone" >"$OUT/alone.txt" 2>&1
rc1=$?
bench/compile_cost.sh -j "$N" "$OUT/busy" >"$OUT/busy.txt" 2>&1
rc2=$?
bench/compile_cost.sh --spec "$SPEC" --max-evals "$EVALS" "$OUT/spec" >"$OUT/spec.txt" 2>&1
rc3=$?

# The family rows of a compile_cost.sh output: "family n mean max wall".
fam() { awk '/^family / { on = 1; next } on && NF == 5 { print } on && NF == 0 { exit }' "$1"; }
fam "$OUT/alone.txt" >"$OUT/alone.fam"
fam "$OUT/busy.txt" >"$OUT/busy.fam"

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $N CPUs" \
     "($(lscpu 2>/dev/null | awk -F: '/Thread\(s\) per core/ { gsub(/ /, "", $2); print $2 }') threads per core)"
[ -r /sys/fs/cgroup/cpu.max ] && echo "cgroup cpu.max: $(cat /sys/fs/cgroup/cpu.max)"
grep -h '^ptxas report unchanged\|^SASS\|^NOTE' "$OUT/alone.txt"
echo
printf '%-16s %14s %14s\n' family "cpu s alone" "cpu s, $N busy"
join <(sort "$OUT/alone.fam") <(sort "$OUT/busy.fam") | awk '{ printf "%-16s %14.3f %14.3f\n", $1, $3, $7 }' | sort
echo
echo "$SPEC, --max-evals $EVALS, -j $N:"
grep -v '^logs:' "$OUT/spec.txt" | sed 's/^/  /'
echo "logs: $OUT (alone.txt, busy.txt, spec.txt)"
[ $rc1 = 0 ] && [ $rc2 = 0 ] && [ $rc3 = 0 ]
