#!/usr/bin/env bash
# TMA weight-stream probe (issue 10): bench/gemm/tma_rows.cu, the stream of
# a 4096^2 bf16 weight through TMA boxes of KO x 128 contiguous bytes of R
# rows, back to back with PDL over rotating copies, against a grid-stride
# read and the slab GEMV. With SPACE (a swapab `M.params` block, as
# bench/narrow.py takes), instead every swapab config of it at 16 x 4096^2,
# compiled by aitune (build/aitune) and timed the same way, once per
# variant: NAME=SED applies a sed script to the copy's swapab.lua ("base="
# leaves it as it is). Needs nvcc; writes OUTDIR/tma-rows.txt.
#   bench/tma_rows.sh OUTDIR [SPACE [NAME=SED ...]]
set -eu
out=${1:-/tmp/aitune-tma-rows}
mkdir -p "$out"
nvcc -O3 -arch=sm_90a -std=c++17 -diag-suppress 128 -o "$out/tma_rows" bench/gemm/tma_rows.cu -lcuda 2> /dev/null
args=()
space=${2:-}
[ $# -ge 2 ] && shift 2
[ -n "$space" ] && [ $# -eq 0 ] && set -- base=
for v in "$@"; do
    name=${v%%=*} script=${v#*=}
    w=$(mktemp -d /tmp/aitune-tma-rows.XXXX)
    python3 bench/narrow.py "$w/home" swapab "$space"
    [ -n "$script" ] && sed -i "$script" "$w/home/templates/gemm_nt/swapab.lua"
    printf 'name: p\narch: sm_90a\ntasks:\n  - op: gemm_nt\n    dtypes: [bf16]\n    templates: [swapab]\n    shapes: {m: {values: [16]}, n: {values: [4096]}, k: {values: [4096]}}\n' > "$w/p.yaml"
    AITUNE_HOME=$w/home build/aitune compile "$w/p.yaml" --db "$w/p.db" --quiet > /dev/null
    mapfile -t -O ${#args[@]} args < <(python3 - "$w/p.db" "$w" "$name" <<'PY'
import re, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
for i, (src, kern, cubin, smem) in enumerate(con.execute("select source, kernel, cubin, smem from cubins")):
    d = dict(re.findall(r"#define (BM|BN|CS|STAGES) (\d+)", src))
    path = "%s/k%d.cubin" % (sys.argv[2], i)
    open(path, "wb").write(cubin)
    # The launch's dynamic shared memory: the template's size (sizes()).
    slot = int(d["BM"]) * 128 + int(d["BN"]) * 128
    dyn = int(d["STAGES"]) * slot + 4 * int(d["BN"]) * int(d["BM"]) + 16 * int(d["STAGES"]) + 1024
    print("%s:%s:%s:%s:%s:%s:%d:%s" % (path, kern, d["BM"], d["BN"], d["CS"], d["STAGES"], dyn, sys.argv[3]))
PY
)
done
"$out/tma_rows" "${args[@]}" | tee "$out/tma-rows.txt"
