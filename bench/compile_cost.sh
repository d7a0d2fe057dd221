#!/usr/bin/env bash
# bench/compile_cost.sh: what one GEMM candidate costs to compile, in CPU
# seconds of the process that runs NVRTC (user + sys, not wall time: other
# work on the machine inflates wall time, not this), per template family,
# and whether each candidate's ptxas report (registers, spills, shared
# memory, stack) and, where cuobjdump is found, its SASS are those of the
# stored baseline. No GPU needed; run it on the GPU host too, where sweeps
# compile (its cores may differ).
#
#     bench/compile_cost.sh [-r REPS] [-j N] [-t TEMPLATE] [--update] [OUT]
#     bench/compile_cost.sh --spec SPEC [--max-evals N] [-j N] [OUT]
#
#   -r REPS      compile the sample REPS times (default 1) and keep each
#                candidate's least CPU time (a loaded machine adds noise)
#   -j N         N compiling processes at once (default 1), each a share of
#                the sample: the CPU time per candidate when every core
#                compiles, as in a sweep (SMT siblings and shared caches
#                make it larger than one process alone)
#   -t TEMPLATE  only that template's lines (e.g. gemm_nt/mma)
#   --spec SPEC  instead: `aitune compile SPEC` into a fresh registry with
#                -j N threads (default: one per core) and --max-evals N
#                (default 8), and its CPU seconds (aitune and its NVRTC
#                helpers, user + sys), wall seconds and the sum of its
#                kernels' compile times (wall, as `aitune compile -v` and the
#                registry's compile_ms have them), each per kernel compiled
#   --update     write the results as the new baseline (after a change meant
#                to alter kernels; say so in the commit)
#   --sample     regenerate bench/compile_cost/sample.txt (see below) and stop
#   OUT          where logs and cubins go (default: a fresh /tmp folder)
#
# The sample (bench/compile_cost/sample.txt, tests/unit/kernel_sample.c's
# list format): from `kernel_sample list -n 3 specs/gemm-decode.yaml
# specs/gemm.yaml`, distinct sources only, per GEMM template (the wgmma,
# swapab, gemv, mma and rowdot families of gemm_nt and gemm_nn, and
# gemm_nt's swapped wgmma kernel, whose widths chosen at run time cost the
# most) its first default and five samples spread over the list (the
# swapped kernel's list holds four): 52 candidates of the
# configs a decode or square-GEMM sweep compiles. Each is compiled with
# aitune's NVRTC options (src/jit.c) in one process, one after another,
# after a warm-up compile (a tuning helper pays NVRTC's start-up once).
#
# The baseline (bench/compile_cost/baseline.txt): the NVRTC it was made
# with, then per sample line its number, template, ptxas report and the
# hash of `cuobjdump -sass` of its cubin
# ("-" where no cuobjdump was found). cuobjdump: $CUOBJDUMP, else on PATH,
# else $CUDA/bin (it needs nvdisasm beside it or on PATH; PyPI's
# nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm carry both).
#
# Prints one row per candidate, then per family: candidates, mean and
# largest CPU seconds, mean wall seconds; then the mean over all and the
# checks. Exit 0: every report (and SASS compared) unchanged; 1: a change
# or a failed compile; 2: usage.
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
CUDA=${CUDA:-/usr/local/cuda}
KS=$ROOT/build/tests/kernel_sample
SAMPLE=$ROOT/bench/compile_cost/sample.txt
BASE=$ROOT/bench/compile_cost/baseline.txt

REPS=1 JOBS="" ONLY="" UPDATE=0 MAKE_SAMPLE=0 SPEC="" EVALS=8 OUT=""
while [ $# -gt 0 ]; do
    case $1 in
        -r) REPS=${2:-}; shift 2 || { echo "compile_cost: -r needs a number" >&2; exit 2; } ;;
        -t) ONLY=${2:-}; shift 2 || { echo "compile_cost: -t needs a template" >&2; exit 2; } ;;
        -j) JOBS=${2:-}; shift 2 || { echo "compile_cost: -j needs a number" >&2; exit 2; } ;;
        --spec) SPEC=${2:-}; shift 2 || { echo "compile_cost: --spec needs a file" >&2; exit 2; } ;;
        --max-evals) EVALS=${2:-}; shift 2 || { echo "compile_cost: --max-evals needs a number" >&2; exit 2; } ;;
        --update) UPDATE=1; shift ;;
        --sample) MAKE_SAMPLE=1; shift ;;
        -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "compile_cost: unknown option '$1'" >&2; exit 2 ;;
        *) OUT=$1; shift ;;
    esac
done
case $REPS in ''|*[!0-9]*|0) echo "compile_cost: -r wants a count of at least 1, not '$REPS'" >&2; exit 2 ;; esac
case $JOBS in ''|[1-9]|[1-9][0-9]|[1-9][0-9][0-9]) ;; *) echo "compile_cost: -j wants 1 to 999, not '$JOBS'" >&2; exit 2 ;; esac
case $EVALS in ''|*[!0-9]*|0) echo "compile_cost: --max-evals wants a count of at least 1, not '$EVALS'" >&2; exit 2 ;; esac
[ -n "$OUT" ] || OUT=$(mktemp -d "${TMPDIR:-/tmp}/compile-cost-XXXXXX")
mkdir -p "$OUT" || exit 2

make -s -j2 build/tests/kernel_sample >/dev/null || { echo "compile_cost: cannot build build/tests/kernel_sample" >&2; exit 1; }

if [ -n "$SPEC" ]; then
    [ -f "$SPEC" ] || { echo "compile_cost: no spec '$SPEC'" >&2; exit 2; }
    make -s -j2 build/aitune >/dev/null || exit 1
    rm -f "$OUT/spec.db"*
    # bash's time: user and sys include the helpers aitune waited for.
    TIMEFORMAT='%U %S %R'
    { time build/aitune compile "$SPEC" --db "$OUT/spec.db" --max-evals "$EVALS" ${JOBS:+-j "$JOBS"} \
        >"$OUT/spec.out" 2>"$OUT/spec.err"; } 2>"$OUT/spec.time" ||
        { echo "compile_cost: aitune compile failed (see $OUT/spec.err)" >&2; tail -n 3 "$OUT/spec.err" >&2; exit 1; }
    read -r user sys wall <"$OUT/spec.time"
    line=$(grep -E '^[0-9]+ kernels: [0-9]+ compiled \(' "$OUT/spec.out" | head -n 1)
    n=$(sed -E 's/^[0-9]+ kernels: ([0-9]+) compiled.*/\1/' <<<"$line")
    ct=$(sed -E 's/.*compiled \(([0-9.]+) s of compile time\).*/\1/' <<<"$line")
    [ -n "$n" ] && [ "$n" -gt 0 ] || { echo "compile_cost: no kernel was compiled ($line)" >&2; exit 1; }
    echo "spec $SPEC, --max-evals $EVALS, -j ${JOBS:-one per core} on $(nproc) CPUs: $n kernels compiled"
    awk -v u="$user" -v s="$sys" -v w="$wall" -v n="$n" -v ct="$ct" -v c="$(nproc)" 'BEGIN {
        printf "CPU (user + sys, aitune and helpers): %.1f s, %.3f s per kernel\n", u + s, (u + s) / n
        printf "wall: %.1f s; wall x %d CPUs per kernel: %.3f s\n", w, c, w * c / n
        printf "compile time per kernel (wall, as compile_ms): %.3f s\n", ct / n }'
    echo "logs: $OUT"
    exit 0
fi

if [ $MAKE_SAMPLE = 1 ]; then
    "$KS" list -n 3 specs/gemm-decode.yaml specs/gemm.yaml >"$OUT/list.txt" || exit 1
    "$KS" sources "$OUT/list.txt" | awk -F'\t' '!seen[$6]++' >"$OUT/distinct.txt" || exit 1
    for t in gemm_nt/wgmma gemm_nn/wgmma gemm_nt/wgmma_swap gemm_nt/swapab gemm_nt/gemv gemm_nn/gemv gemm_nt/mma gemm_nn/mma gemm_nt/rowdot; do
        awk -F'\t' -v t="$t" '$1 == t && $4 == "default" { print; exit }' "$OUT/distinct.txt"
        awk -F'\t' -v t="$t" '$1 == t && $4 == "sample"' "$OUT/distinct.txt" >"$OUT/s.txt"
        awk -v n="$(wc -l <"$OUT/s.txt")" 'BEGIN { st = int(n / 5); if (st < 1) st = 1 }
            (NR - 1) % st == 0 && c < 5 { print; c++ }' "$OUT/s.txt"
    done | cut -f1-5 >"$SAMPLE"
    echo "compile_cost: $(wc -l <"$SAMPLE") candidates in $SAMPLE"
    exit 0
fi

find_cuobjdump() {
    local c
    for c in "${CUOBJDUMP:-}" "$(command -v cuobjdump 2>/dev/null)" "$CUDA/bin/cuobjdump"; do
        [ -n "$c" ] && [ -x "$c" ] && { echo "$c"; return 0; }
    done
    return 1
}
CUOBJ=$(find_cuobjdump) || CUOBJ=""

# The sample, or one template's lines of it (their line numbers kept).
awk -F'\t' -v t="$ONLY" '{ print NR "\t" ((t == "" || $1 == t) ? $0 : "#") }' "$SAMPLE" >"$OUT/numbered.txt"
cut -f2- "$OUT/numbered.txt" >"$OUT/sample.txt"
[ -n "$(grep -v '^#' "$OUT/sample.txt")" ] || { echo "compile_cost: no line of template '$ONLY' in the sample" >&2; exit 2; }

# Share j of -j N: the lines whose number is j modulo N (the others
# commented out, so line numbers stay).
JOBS=${JOBS:-1}
for j in $(seq 0 $((JOBS - 1))); do
    awk -v j="$j" -v n="$JOBS" '{ print ((NR - 1) % n == j) ? $0 : "#" }' "$OUT/sample.txt" >"$OUT/share$j.txt"
done
status=0
for r in $(seq 1 "$REPS"); do
    pids=()
    for j in $(seq 0 $((JOBS - 1))); do
        "$KS" compile -o "$OUT/cubin" "$OUT/share$j.txt" >"$OUT/run$r.$j.txt" 2>"$OUT/run$r.$j.err" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || status=1; done
done
grep -h 'kernel_sample: line' "$OUT"/run*.err | sort -u | head -n 5 >&2
NVRTC=$(sed -n 's/^kernel_sample: NVRTC \([0-9.]*\),.*/\1/p' "$OUT/run1.0.err" | head -n 1)

# Per line: the least CPU time over the runs, the report, the wall time of
# that run, and the SASS hash.
awk -F'\t' '{ key = $1 FS $2 FS $3 FS $4 FS $5
              if (!(key in cpu) || $7 < cpu[key]) { cpu[key] = $7; wall[key] = $8 }
              rep[key] = $6 }
            END { for (k in cpu) print k FS rep[k] FS cpu[k] FS wall[k] }' "$OUT"/run*.txt >"$OUT/best.txt"
: >"$OUT/results.txt"
n=0
while IFS=$'\t' read -r tname dtype shape kind config; do
    n=$((n + 1))
    [ "$tname" = "#" ] && continue
    row=$(awk -F'\t' -v k="$tname	$dtype	$shape	$kind	$config" '($1 FS $2 FS $3 FS $4 FS $5) == k { print $6 "\t" $7 "\t" $8; exit }' "$OUT/best.txt")
    [ -n "$row" ] || row="failed	-	-"
    sass=-
    if [ -n "$CUOBJ" ] && [ -s "$OUT/cubin/$n.cubin" ]; then
        sass=$("$CUOBJ" -sass "$OUT/cubin/$n.cubin" 2>/dev/null | grep -v '^[[:space:]]*$' | md5sum | cut -c1-16)
        [ "$sass" = d41d8cd98f00b204 ] && sass=-   # nothing came out (no nvdisasm)
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$tname" "$dtype" "$shape" "$row" "$sass" >>"$OUT/results.txt"
done <"$OUT/sample.txt"

printf '%-4s %-16s %-5s %-16s %-16s %7s %7s  %s\n' line template dtype shape "regs spl smem st" "cpu s" "wall s" sass
awk -F'\t' '{ printf "%-4s %-16s %-5s %-16s %-16s %7s %7s  %s\n", $1, $2, $3, $4, $5, $6, $7, $8 }' "$OUT/results.txt"
echo
printf '%-16s %5s %11s %11s %11s\n' family n "mean cpu s" "max cpu s" "mean wall s"
awk -F'\t' '$6 != "-" { n[$2]++; s[$2] += $6; w[$2] += $7; if ($6 > m[$2]) m[$2] = $6; N++; S += $6; W += $7; if ($6 > M) M = $6 }
    END { for (t in n) printf "%-16s %5d %11.3f %11.3f %11.3f\n", t, n[t], s[t] / n[t], m[t], w[t] / n[t] | "sort"
          close("sort")
          if (N) printf "%-16s %5d %11.3f %11.3f %11.3f\n", "all", N, S / N, M, W / N }' "$OUT/results.txt"
echo

if [ $UPDATE = 1 ]; then
    if [ -n "$ONLY" ] || [ $status != 0 ]; then
        echo "compile_cost: --update needs the whole sample compiled (no -t, no failure)" >&2
        exit 1
    fi
    { echo "# NVRTC $NVRTC"; awk -F'\t' 'BEGIN { OFS = "\t" } { print $1, $2, $5, $8 }' "$OUT/results.txt"; } >"$BASE"
    echo "compile_cost: baseline written ($BASE)"
    exit 0
fi

# The checks against the baseline, line by line.
same_rep=0 diff_rep=0 same_sass=0 diff_sass=0 unknown_sass=0
while IFS=$'\t' read -r num tname dtype shape rep cpu wall sass; do
    want=$(awk -F'\t' -v n="$num" '$1 == n { print $3 "\t" $4; exit }' "$BASE")
    want_rep=${want%%$'\t'*} want_sass=${want#*$'\t'}
    if [ "$rep" = "$want_rep" ]; then
        same_rep=$((same_rep + 1))
    else
        diff_rep=$((diff_rep + 1))
        echo "CHANGED line $num $tname: ptxas report '$rep', baseline '$want_rep'"
    fi
    if [ "$sass" = - ] || [ "$want_sass" = - ]; then
        unknown_sass=$((unknown_sass + 1))
    elif [ "$sass" = "$want_sass" ]; then
        same_sass=$((same_sass + 1))
    else
        diff_sass=$((diff_sass + 1))
        echo "CHANGED line $num $tname: SASS differs from the baseline's"
    fi
done <"$OUT/results.txt"
base_nvrtc=$(sed -n 's/^# NVRTC \([0-9.]*\)$/\1/p' "$BASE")
[ "$NVRTC" = "$base_nvrtc" ] || echo "NOTE: NVRTC $NVRTC here, the baseline's is ${base_nvrtc:-unknown}: reports may differ for that alone"
echo "ptxas report unchanged: $same_rep of $((same_rep + diff_rep))"
if [ -n "$CUOBJ" ]; then
    extra=""
    [ $unknown_sass = 0 ] || extra=" ($unknown_sass not compared: no SASS in the baseline or no cubin)"
    echo "SASS unchanged: $same_sass of $((same_sass + diff_sass))$extra"
else
    echo "SASS not compared: no cuobjdump (set CUOBJDUMP)"
fi
echo "logs and cubins: $OUT"
[ $diff_rep = 0 ] && [ $diff_sass = 0 ] && [ $status = 0 ]
