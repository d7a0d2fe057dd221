#!/usr/bin/env bash
# Development probe for the Hopper GEMM family, outside the tuner.
#   bench/gemm_probe.sh build   (here: needs nvcc and lua5.4; writes .probe/)
#   bench/gemm_probe.sh run     (on the GPU, with .probe carried)
# Each line of VARIANTS below is "layout key=value..." over the wgmma params.
set -euo pipefail
cd "$(dirname "$0")/.."
P=.probe
VARIANTS=${VARIANTS:-"
nt bm=128 bn=256 consumers=2 stages=4 persistent=1 group=8
nt bm=128 bn=256 consumers=2 stages=4 persistent=0 group=1
nt bm=128 bn=128 consumers=2 stages=6 persistent=1 group=8
nt bm=256 bn=128 consumers=2 stages=4 persistent=1 group=8
nt bm=128 bn=192 consumers=2 stages=5 persistent=1 group=8
nt bm=128 bn=256 consumers=2 stages=4 persistent=1 group=16 raster=n
nt bm=128 bn=128 consumers=1 stages=6 persistent=1 group=8
nn bm=128 bn=256 consumers=2 stages=4 persistent=1 group=8
nn bm=128 bn=128 consumers=2 stages=6 persistent=1 group=8
nn bm=256 bn=128 consumers=2 stages=4 persistent=1 group=8
"}
case "${1:-}" in
build)
    rm -rf $P && mkdir -p $P
    i=0
    echo "$VARIANTS" | while read -r layout kv; do
        [ -n "$layout" ] || continue
        i=$((i + 1))
        name="g${i}_${layout}_$(echo "$kv" | tr -d ' =' | sed 's/consumers/c/;s/stages/s/;s/persistent/p/;s/group/g/;s/raster/r/;s/cluster/x/;s/producer_regs/pr/;s/schedule//;s/epilogue/e/;s/streamk/sk/')"
        name=${name:0:60}
        # "nostore" (a probe switch, not a config): skip the epilogue's
        # stores, to measure what the epilogue costs.
        nostore=0
        case " $kv " in *" nostore "*) nostore=1; kv=${kv/nostore/};; esac
        lua5.4 bench/gemm/dump.lua . "$layout" bf16 "$name" $kv > $P/$name.cu 2> $P/$name.facts || { cat $P/$name.facts >&2; exit 1; }
        [ $nostore = 0 ] || sed -i 's/if ((long long)(tm + 1) \* BM <= m/if (m < 0 \&\& (long long)(tm + 1) * BM <= m/; s/if (col < n) {/if (m < 0 \&\& col < n) {/' $P/$name.cu
        smem=$(sed -n 's/^smem=\([0-9]*\).*/\1/p' $P/$name.facts)
        threads=$(sed -n 's/.*block=\([0-9]*\).*/\1/p' $P/$name.facts)
        bm=$(echo "$kv" | sed -n 's/.*bm=\([0-9]*\).*/\1/p'); bn=$(echo "$kv" | sed -n 's/.*bn=\([0-9]*\).*/\1/p')
        pers=$(echo "$kv" | sed -n 's/.*persistent=\([0-9]*\).*/\1/p')
        share=$(sed -n 's/.*share=\([0-9]*\).*/\1/p' $P/$name.facts)
        abox=$(sed -n 's/.*abox=\([0-9]*\).*/\1/p' $P/$name.facts)
        bbox=$(sed -n 's/.*bbox=\([0-9]*\).*/\1/p' $P/$name.facts)
        epi=$(sed -n 's/.*epi=\([0-9]*\).*/\1/p' $P/$name.facts)
        sk=$(sed -n 's/.*streamk=\([0-9]*\).*/\1/p' $P/$name.facts)
        nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -o $P/$name.cubin $P/$name.cu 2> $P/$name.ptxas
        grep -E "registers|spill|warning" $P/$name.ptxas | tr '\n' ' ' | sed "s/^/$name: /"; echo
        echo "$P/$name.cubin $name $layout $bm $bn $threads $smem $pers $share $abox $bbox $epi $sk" >> $P/variants.txt
    done
    nvcc -O2 -std=c++17 -arch=sm_90a -o $P/gemm_probe bench/gemm_probe.cu -lcublas -lcuda -Xlinker -rpath,/usr/local/cuda/lib64
    ;;
run)
    shift
    for s in "${@:-4096x4096x4096 8192x8192x8192}"; do
        echo "== $s"
        $P/gemm_probe $P/variants.txt ${s//x/ }
    done
    ;;
*) echo "usage: $0 build|run [MxNxK...]" >&2; exit 2 ;;
esac
