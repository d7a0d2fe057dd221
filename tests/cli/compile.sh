#!/usr/bin/env bash
# `aitune compile`: every candidate of a one-bucket, one-dtype axpy spec
# compiled with NVRTC (no GPU), shown as a table with -v and as a summary
# without; the second run comes from the registry's cubin cache.
. "$(dirname "$0")/lib.sh"

small_spec
expect_exit 0 "compile -v small.yaml" "$AITUNE" compile "$T/small.yaml" --db "$T/c.db" -j2 -v
expect_stdout "^kernel +config +regs +spills +smem +ms" "the table has a regs column"
rows=$(grep -c '^f32 axpy/vec' "$T/out")
[ "$rows" -ge 10 ] && ok "one row per kernel ($rows)" || { fail "one row per kernel: $rows rows"; show_last; }
# columns: label(2) config regs spills smem ms
bad=$(grep '^f32 axpy/vec' "$T/out" | awk '{ if ($4 + 0 < 1) n++ } END { print n + 0 }')
expect_eq "every kernel reports registers > 0" "$bad" 0
cached=$(grep '^f32 axpy/vec' "$T/out" | grep -c '\*')
expect_eq "the first run has nothing from the cache" "$cached" 0
expect_stderr "compile: $rows candidates evaluated; $rows compiled, 0 from the cache" "the summary counts the compiles"
n=$(sql "$T/c.db" "select count(*) from cubins")
expect_eq "every kernel is in the cubin cache" "$n" "$rows"
n=$(sql "$T/c.db" "select count(*) from measurements")
expect_eq "compile records no measurements" "$n" 0
n=$(sql "$T/c.db" "select count(*) from cubins where length(cubin) < 100 or registers < 1")
expect_eq "cached cubins are real and carry their report" "$n" 0

expect_exit 0 "compile -v small.yaml again" "$AITUNE" compile -v "$T/small.yaml" --db="$T/c.db"
rows2=$(grep -c '^f32 axpy/vec' "$T/out")
cached=$(grep '^f32 axpy/vec' "$T/out" | grep -c '[0-9]\*')
expect_eq "the second run lists the same kernels" "$rows2" "$rows"
expect_eq "the second run marks every row as cached (*)" "$cached" "$rows"
expect_stdout "^\(\* from the cubin cache\)" "the table explains the * marker"
expect_stderr "0 compiled, $rows from the cache" "the summary says all came from the cache"

# Without -v: a summary, not a row per kernel.
expect_exit 0 "compile small.yaml (summary)" "$AITUNE" compile "$T/small.yaml" --db "$T/c.db"
expect_stdout "^$rows kernels: 0 compiled \(0.0 s of compile time\), $rows from the cubin cache, 0 failed\$" "the summary counts the kernels"
expect_stdout "^no kernel spills registers\$" "the summary says whether any kernel spills"
expect_stdout "^\(aitune compile -v lists every kernel\)" "the summary points to -v"
expect_eq "no row per kernel without -v" "$(grep -c '^f32 axpy/vec' "$T/out")" 0
rm -f "$T/c2.db"
expect_exit 0 "compile 6 of small.yaml into a new registry (summary)" "$AITUNE" compile "$T/small.yaml" --db "$T/c2.db" \
    --max-evals 6
expect_stdout "^slowest compiles:" "a summary of fresh compiles lists the slowest"
expect_eq "five slowest compiles" "$(grep -c '^ *[0-9.]* ms  f32 axpy/vec' "$T/out")" 5

# Two buckets share the same kernels: one compile each, not two.
axpy_spec two.yaml 6 7
expect_exit 0 "compile a two-bucket spec on the same registry" "$AITUNE" compile "$T/two.yaml" --db "$T/c.db" -v
dups=$(grep '^f32 axpy/vec' "$T/out" | awk '{print $3}' | sort | uniq -d | wc -l)
expect_eq "a kernel shared by two buckets is listed once" "$dups" 0

# A compile that fails is a row with its error, and exit 1.
mkdir -p "$T/home/templates/axpy" "$T/home/search"
ln -s "$ROOT/templates/lib" "$T/home/templates/lib"
cp "$ROOT/templates/axpy/op.lua" "$T/home/templates/axpy/op.lua"
cp "$ROOT"/search/*.lua "$T/home/search/"
cat >"$T/home/templates/axpy/broken.lua" <<'EOF'
local t = lib("elementwise").template(OP)
t.params = { { "block", { 64, 128 } } }
t.constraints = function() return true end
t.default = function() return { block = 64 } end
t.launch = function(p) return { grid = { "cdiv(n, 64)", 1, 1 }, block = { p.block, 1, 1 }, smem = 0 } end
t.source = function(p, dt, dev, name)
  if p.block == 128 then return 'extern "C" __global__ void ' .. name .. '(float* x) { x[0] = ; }' end
  return 'extern "C" __global__ void ' .. name .. '(float* x) { x[threadIdx.x] = 1.0f; }'
end
return t
EOF
cat >"$T/home/broken.yaml" <<'EOF'
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {log2: [6, 6]}
EOF
run env AITUNE_HOME="$T/home" "$AITUNE" compile "$T/home/broken.yaml" --db "$T/b.db"
expect_eq "compile with a kernel that does not compile exits 1" "$RC" 1
expect_stdout "axpy/broken .*\{\"block\":128\}.*error" "the failing kernel's row shows the compile error"
expect_stderr "1 of [0-9]+ kernels failed to compile" "the summary counts the failure"

# Ctrl-C stops a long compile soon (the queue is dropped), exits 130 and
# keeps what was compiled. n=2^12 has about 150 kernels (~10 s here).
spec big.yaml <<'EOF'
name: big
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {log2: [12, 12]}
EOF
"$AITUNE" compile "$T/big.yaml" --db "$T/big.db" >"$T/big.out" 2>"$T/big.err" </dev/null &
pid=$!
BG_PIDS="${BG_PIDS:-} $pid"
for i in $(seq 1 50); do
    [ "$(sqlite3 "$T/big.db" "select count(*) from cubins" 2>/dev/null || echo 0)" -ge 5 ] 2>/dev/null && break
    sleep 0.1
done
kill -INT "$pid"
t0=$(date +%s)
wait "$pid"
code=$?
waited=$(( $(date +%s) - t0 ))
expect_eq "SIGINT during compile exits 130" "$code" 130
[ "$waited" -le 3 ] && ok "SIGINT stops the compile within a few seconds ($waited s)" || fail "the compile went on for $waited s after SIGINT"
grep -q "interrupted" "$T/big.err" && ok "compile says it was interrupted" || fail "compile does not say it was interrupted"
n=$(sql "$T/big.db" "select count(*) from cubins")
[ "$n" -ge 5 ] && ok "what was compiled before SIGINT is cached ($n)" || fail "cached after SIGINT: $n"

done_testing
