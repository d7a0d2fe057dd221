#!/usr/bin/env bash
# bench/vendor_check.sh: the vendor in the loop, on a GPU (issue 33). One
# device call of about 3 minutes on an H100 with a built tree carried (make;
# this builds nothing but the emitted file), nvcc, compute-sanitizer and
# PyTorch:
#   bench/vendor_check.sh [OUTDIR]        (default $OUT, else /tmp/aitune-vendor)
#  1. sweep bench/vendor_check.yaml (gemm_nt bf16, 4096 x 4096 weight, stream
#     timing): the worker times cuBLASLt beside the candidates; show gives x
#     vendor, the summary counts the vendor's buckets.
#  2. the worker's vendor times against torch.mm timed the same way in this
#     run (bench/vendor_check.py time).
#  3. a bucket the vendor holds (the sweep's; else one made the vendor's, and
#     the output says so) launched through libaitune and through the emitted
#     file (aitune_launch, and a bound launch), each against torch within
#     tolerance.
#  4. compute-sanitizer memcheck over the worker's vendor path (a tiny sweep)
#     and over step 3's launches.
# PASS/FAIL lines, then a short table; logs under OUTDIR. Exit 1 on a FAIL.
set -u
out=${1:-${OUT:-/tmp/aitune-vendor}}
mkdir -p "$out"
fails=0
check() {   # NAME EXIT-CODE DETAIL
    if [ "$2" = 0 ]; then echo "PASS $1${3:+: $3}"; else echo "FAIL $1${3:+: $3}"; fails=$((fails + 1)); fi
}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! build/aitune devices >/dev/null 2>&1; then
    echo "SKIP bench/vendor_check.sh: no GPU (or no build/aitune: make)"
    exit 0
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | head -1 | tee "$out/gpu.txt"
db=$out/vendor.db
rm -f "$db" "$db"-wal "$db"-shm
t0=$(date +%s)
q() { python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$1" "$2" 2>&1; }

# 1. The sweep.
build/aitune sweep bench/vendor_check.yaml --db "$db" > "$out/sweep.txt" 2> "$out/sweep.err"
check "sweep bench/vendor_check.yaml" $? "$(tail -1 "$out/sweep.err")"
n=$(q "$db" "select count(*) from vendor_times where status = 'ok' and timing = 'stream'")
check "the worker timed the vendor at each tuned shape" "$([ "$n" -ge 2 ] 2>/dev/null; echo $?)" "$n stream rows"
build/aitune show --db "$db" > "$out/show.txt" 2>&1
check "show gives x vendor" "$(grep -qE ' [0-9]+\.[0-9]+x +(gemm_nt|vendor)/' "$out/show.txt"; echo $?)"
grep -iE "vendor" "$out/sweep.err" | tail -3

# 2. The worker's cuBLASLt against torch.mm, timed the same way.
python3 bench/vendor_check.py time "$db" > "$out/time.txt" 2>&1
check "torch.mm timed as the worker times" $? "$(tail -1 "$out/time.txt")"

# 3. A vendor bucket through libaitune and the emitted file.
python3 bench/vendor_check.py force "$db" > "$out/force.txt" 2>&1
check "a bucket the vendor holds" $? "$(tail -1 "$out/force.txt")"
arch=sm_$(build/aitune devices 2>/dev/null | sed -n 's/.*sm_\([0-9]*\).*/\1/p' | head -1)
build/aitune emit gemm_nt --arch "$arch" --dtype bf16 --db "$db" -o "$out/vendor.cu" 2> "$out/emit.err"
check "emit gemm_nt bf16 (whole op)" $? "$(tail -1 "$out/emit.err")"
nvcc -gencode=arch=compute_${arch#sm_}a,code=sm_${arch#sm_}a -O2 -shared -Xcompiler -fPIC -o "$out/vendor.so" \
    "$out/vendor.cu" -lcublasLt 2> "$out/nvcc.err"
check "nvcc builds it, linked with -lcublasLt" $? "$(tail -1 "$out/nvcc.err")"
python3 bench/vendor_check.py launch "$db" "$out/vendor.so" > "$out/launch.txt" 2>&1
check "libaitune and the emitted file against torch" $? "$(grep -c '^PASS' "$out/launch.txt") PASS"

# 4. compute-sanitizer: the worker's vendor path, then the launches.
cat > "$out/tiny.yaml" <<'EOF'
name: vendor_tiny
arch: sm_90a
max_evals: 1
tasks:
  - op: gemm_nt
    dtypes: [bf16, f16>f32]
    templates: [mma]
    shapes: {m: {values: [40]}, n: {values: [256]}, k: {values: [264]}}
EOF
compute-sanitizer --tool memcheck --print-limit 20 build/aitune sweep "$out/tiny.yaml" --db "$out/tiny.db" \
    --timeout 120s --quiet > "$out/sanitize-worker.txt" 2>&1
rc=$?
errs=$(grep -o "ERROR SUMMARY: [0-9]*" "$out/sanitize-worker.txt" | awk '{ s += $3 } END { print s + 0 }')
nv=$(q "$out/tiny.db" "select count(*) from vendor_times where status = 'ok'")
check "memcheck over the worker's vendor path" "$([ "$rc" = 0 ] && [ "$errs" = 0 ] && [ "$nv" = 2 ]; echo $?)" \
    "exit $rc, $errs errors, $nv vendor rows ok of 2"
compute-sanitizer --tool memcheck --print-limit 20 python3 bench/vendor_check.py launch "$db" "$out/vendor.so" \
    > "$out/sanitize-launch.txt" 2>&1
rc=$?
errs=$(grep -o "ERROR SUMMARY: [0-9]*" "$out/sanitize-launch.txt" | awk '{ s += $3 } END { print s + 0 }')
check "memcheck over libaitune's and the emitted file's vendor launches" "$([ "$rc" = 0 ] && [ "$errs" = 0 ]; echo $?)" \
    "exit $rc, $errs errors"

echo "---- $(($(date +%s) - t0)) s; $(cat "$out/gpu.txt")"
grep -E "^(gemm_nt|op) " "$out/show.txt"
cat "$out/time.txt"
grep -E "^(PASS|FAIL|NOTE|libaitune)" "$out/force.txt" "$out/launch.txt" | sed 's/^[^:]*://'
[ "$fails" = 0 ]
