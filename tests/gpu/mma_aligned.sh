#!/usr/bin/env bash
# The mma family's `aligned` kernels on the GPU (templates/lib/mma.lua):
#   - right: an aligned kernel (the 16-byte main loop alone) at aligned and
#     ragged shapes, and through plain_tile where its operands are not
#     16-byte aligned after all (A or B 1-7 elements off, k or n odd: a
#     shape of another class than its bucket's), every sampled output
#     within tolerance of an fp64 reference (tests/gpu/mma_aligned_check.cu);
#   - as fast: each aligned kernel against the same config's kernel from
#     before the param (both main loops, chosen at run time: its 16-byte
#     one runs here) at aligned shapes, back to back, alternated over
#     ROUNDS rounds (the least median of each): the ratio, and how slow
#     plain_tile is.
# Needs a GPU, nvcc and build/tests/kernel_sample (make). One device call,
# about 3 minutes (the builds run in parallel).
#   tests/gpu/mma_aligned.sh [OUTDIR]
# Prints PASS, FAIL or SKIP per check, then a table of the times; exits 1 if
# any check failed.
set -u
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi >/dev/null 2>&1; then
    echo "SKIP tests/gpu/mma_aligned.sh: no GPU"
    exit 0
fi
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "SKIP tests/gpu/mma_aligned.sh: no nvcc"; exit 0; }
KS=build/tests/kernel_sample
[ -x "$KS" ] || { echo "FAIL tests/gpu/mma_aligned.sh: $KS is not built (make)"; exit 1; }
out=${1:-${OUT:-/tmp/aitune-mma-aligned}}
rounds=${ROUNDS:-3}
mkdir -p "$out/src" "$out/bin"
fails=0
check() {   # NAME EXIT-CODE DETAIL
    if [ "$2" = 0 ]; then echo "PASS $1${3:+: $3}"; else echo "FAIL $1${3:+: $3}"; fails=$((fails + 1)); fi
}

# The kernels: per layout, the default and a 2-stage 64-deep config, each
# as aligned 1 and as the config without the param (the old kernel); one
# bf16>f32 kernel for the f32 stores. Line numbers name the sources.
cfgs='"bk":32,"bm":128,"bn":256,"group":1,"stages":4,"wm":2,"wn":4
"bk":64,"bm":128,"bn":128,"group":1,"stages":2,"wm":2,"wn":4'
: >"$out/list"
for op in gemm_nt gemm_nn; do
    while read -r c; do
        printf '%s/mma\tbf16\t4096,4096,4096\tsample\t{"aligned":1,%s}\n' "$op" "$c"
        printf '%s/mma\tbf16\t4096,4096,4096\tsample\t{%s}\n' "$op" "$c"
    done <<<"$cfgs"
done >>"$out/list"
printf 'gemm_nt/mma\tbf16>f32\t4096,4096,4096\tsample\t{"aligned":1,%s}\n' "$(head -n 1 <<<"$cfgs")" >>"$out/list"
"$KS" sources -o "$out/src" "$out/list" >"$out/sources.txt" 2>"$out/sources.err"
check "instantiate $(wc -l <"$out/list") mma kernels" $? "$(head -n 1 "$out/sources.err")"

# Build each in the background, then wait for all.
nk=$(wc -l <"$out/list")
for i in $(seq 1 "$nk"); do
    src=$out/src/$i.cu
    name=$(sed -n 's/.*__global__ void __launch_bounds__(THREADS, 1) \(aitune_gemm_n[nt]_[0-9a-f]*\)(.*/\1/p' "$src")
    f32=
    case $(sed -n "${i}p" "$out/list" | cut -f2) in *f32) f32=-DOUT_F32 ;; esac
    "$NVCC" -arch=sm_90a -std=c++17 -O2 -DSRC="\"$src\"" -DKERNEL="$name" $f32 -o "$out/bin/$i" \
        tests/gpu/mma_aligned_check.cu >"$out/bin/$i.log" 2>&1 &
done
wait
for i in $(seq 1 "$nk"); do
    [ -x "$out/bin/$i" ] || check "build kernel $i ($(sed -n "${i}p" "$out/list" | cut -f1,2,5))" 1 "$(head -n 3 "$out/bin/$i.log" | tr '\n' ' ')"
done

# Correctness of the aligned kernels (lines 1, 3, 5, 7, 9): fast path, ragged
# tiles, and plain_tile.
for i in 1 3 5 7 9; do
    [ -x "$out/bin/$i" ] || continue
    what=$(sed -n "${i}p" "$out/list" | cut -f1,2 | tr "\t" " ")
    for args in "4096 4096 4096 0 0" "300 200 136 0 0" "300 200 136 1 0" "300 200 136 0 3" "257 129 4001 0 0" \
                "130 4097 72 7 5" "1 8 8 0 0"; do
        line=$("$out/bin/$i" $args 3 2>>"$out/check.err")
        check "$what aligned 1 at $args (M N K AOFF BOFF)" $? "$line"
    done
done

# Speed: aligned 1 (odd lines) against the old kernel (even lines), the
# same config, alternated; the least median over the rounds.
: >"$out/times.txt"
for r in $(seq 1 "$rounds"); do
    for pair in "1 2" "3 4" "5 6" "7 8"; do
        set -- $pair
        for shape in "4096 4096 4096" "256 4096 4096" "2048 14336 4096"; do
            for i in "$1" "$2"; do
                [ -x "$out/bin/$i" ] || continue
                us=$("$out/bin/$i" $shape 0 0 20 0 2>/dev/null | sed -n 's/.*median \([0-9.]*\) us.*/\1/p')
                echo "$i $shape $us" >>"$out/times.txt"
            done
        done
    done
done
# plain_tile's time: A one element off (a sample of how slow the fallback is).
for i in 1 5; do
    [ -x "$out/bin/$i" ] || continue
    us=$("$out/bin/$i" 1024 1024 1024 1 0 3 0 2>/dev/null | sed -n 's/.*median \([0-9.]*\) us.*/\1/p')
    fast=$("$out/bin/$i" 1024 1024 1024 0 0 20 0 2>/dev/null | sed -n 's/.*median \([0-9.]*\) us.*/\1/p')
    echo "plain $i $us $fast" >>"$out/times.txt"
done
python3 - "$out/times.txt" "$out/list" <<'PY'
import sys
lines = [l.split() for l in open(sys.argv[1])]
cfg = [l.rstrip("\n").split("\t") for l in open(sys.argv[2])]
best = {}
for f in lines:
    if f[0] == "plain" or len(f) < 5:
        continue
    key = (int(f[0]), " ".join(f[1:4]))
    best[key] = min(best.get(key, 1e30), float(f[4]))
print()
print("| layout | config | m n k | old us | aligned us | old / aligned |")
print("| --- | --- | --- | --- | --- | --- |")
worst = None
for new, old in ((1, 2), (3, 4), (5, 6), (7, 8)):
    for shape in ("4096 4096 4096", "256 4096 4096", "2048 14336 4096"):
        a, o = best.get((new, shape)), best.get((old, shape))
        if a is None or o is None:
            continue
        r = o / a
        worst = r if worst is None else min(worst, r)
        c = cfg[new - 1]
        print("| %s | %s | %s | %.1f | %.1f | %.3f |" % (c[0].split("/")[0], c[4].replace('"aligned":1,', ""), shape, o, a, r))
for f in lines:
    if f[0] == "plain" and len(f) == 4:
        print("plain_tile, %s, 1024^3 with A one element off: %s us against %s us aligned (%.0fx)" %
              (cfg[int(f[1]) - 1][0], f[2], f[3], float(f[2]) / float(f[3])))
print()
print("aligned kernels against the old ones: worst old/aligned %s (above 1: aligned faster)" %
      ("%.3f" % worst if worst is not None else "-"))
PY
echo "$fails failed"
[ "$fails" = 0 ]
