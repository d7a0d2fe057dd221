#!/usr/bin/env bash
# tests/run: slow 12 (counts a gemm decode bucket's 55k candidates)
# Large spaces (issue 31): a spec written from docs/SPEC.md, one gemm
# bucket and the default search, holds tens of thousands of candidates.
# compile --plan counts each bucket's templates without compiling (and in
# little memory); compile and sweep refuse a bucket over SPACE_MAX without
# max_evals, saying what to set (shown on a template of 8000, quick to
# count); compile honours the spec's max_evals, streams its candidates (a
# bounded number in flight, whatever the spec), counts only what landed,
# shows progress off a terminal in every phase, and stops within a second
# at Ctrl-C in each (counting, compiling).
. "$(dirname "$0")/lib.sh"

# The spec of the issue: gemm_nt, one decode bucket, everything default.
spec decode.yaml <<'EOF'
name: decode
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    shapes:
      m: {values: [16]}
      n: {values: [4096]}
      k: {values: [4096]}
EOF

# peak_kb CMD...: run CMD (its stdout in $T/out, stderr in $T/err), its exit
# code in $RC; prints its peak resident memory in KB.
peak_kb() {
    python3 -c '
import resource, subprocess, sys
with open(sys.argv[1], "w") as o, open(sys.argv[2], "w") as e:
    rc = subprocess.call(sys.argv[4:], stdout=o, stderr=e)
open(sys.argv[3], "w").write(str(rc))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$T/out" "$T/err" "$T/rc" "$@"
}

# Under AddressSanitizer (make test-asan) its quarantine keeps up to 256 MB
# of freed memory resident on purpose: off for this measurement, so the
# peak is the program's own (62 MB under ASan; 445 MB with it on).
kb=$(ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" peak_kb "$AITUNE" compile "$T/decode.yaml" --plan --db "$T/plan.db")
RC=$(cat "$T/rc")
expect_eq "compile --plan of a 55k-candidate bucket exits 0" "$RC" 0 || show_last
expect_stdout "^gemm_nt bf16 m=2\^4,n=2\^12,k=2\^12 \(line 3\)$" "it names the bucket and the task's line"
expect_stdout "^  gemm_nt/gemv +[0-9]{5} +over 4096 without max_evals: compile refuses it$" \
    "gemv: tens of thousands, over the limit"
expect_stdout "^  gemm_nt/rowdot +- +not for this bucket: " "a template that does not handle the bucket says why"
sum=$(awk '$1 ~ /^gemm_nt\// && $2 ~ /^[0-9]+$/ {s += $2} END {print s}' "$T/out")
expect_stdout "^compile --plan: 1 bucket, $sum candidates" "the total is the templates' sum ($sum)"
expect_true "over 50000 of them" test "$sum" -gt 50000
expect_true "counted in little memory (${kb} KB peak; the lazy space kept every index: 640 MB)" test "$kb" -lt 200000
[ ! -e "$T/plan.db" ] && ok "--plan opens no registry" || fail "--plan made $T/plan.db"

# A template of 8000 trivial candidates (block x a x b), in a home of its
# own. Each source carries this run's marker: AITUNE_NVRTC_HANG holds every
# compile, so the run is caught with compiles in flight. slow.lua's
# constraints take a while (a template's pcall inside): counting its space
# takes minutes.
MARK="aitune_space_marker_$$_$RANDOM"
mkdir -p "$T/home/templates/axpy" "$T/home/search"
ln -s "$ROOT/templates/lib" "$T/home/templates/lib"
cp "$ROOT/templates/axpy/op.lua" "$ROOT/templates/axpy/vec.lua" "$T/home/templates/axpy/"
cp "$ROOT"/search/*.lua "$T/home/search/"
cat >"$T/home/templates/axpy/big.lua" <<EOF
local t = lib("elementwise").template(OP)
local v = {}
for i = 1, 20 do v[i] = i end
t.params = { { "block", { 64, 128 } }, { "a", v }, { "b", v }, { "c", { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 } } }
t.constraints = function() return true end
t.default = function() return { block = 64, a = 1, b = 1, c = 1 } end
t.launch = function(p) return { grid = { "cdiv(n, 64)", 1, 1 }, block = { p.block, 1, 1 }, smem = 0 } end
t.source = function(p, dt, dev, name)
  return '// $MARK\n' .. 'extern "C" __global__ void ' .. name .. '(float* x) { x[threadIdx.x] = ' ..
         (p.a * 1000 + p.b * 10 + p.c) .. '.0f; }'
end
return t
EOF
sed -e 's/t.constraints = function() return true end/t.constraints = function() for k = 1, 50 do pcall(function() for i = 1, 200000 do end end) end return true end/' \
    "$T/home/templates/axpy/big.lua" >"$T/home/templates/axpy/slow.lua"
grep -q "pcall(function()" "$T/home/templates/axpy/slow.lua" || fail "slow.lua was not made"
home_spec() {   # home_spec FILE TEMPLATES [LINE...]: axpy f32 n = 2^6 with those templates only ("a, b")
    local f=$1 tn=$2
    shift 2
    { echo "name: ${f%.yaml}"; for l in "$@"; do echo "$l"; done
      printf 'tasks:\n  - op: axpy\n    dtypes: [f32]\n    templates: [%s]\n    shapes:\n      n: {log2: [6, 6]}\n' "$tn"
    } >"$T/home/$f"
}
home_spec big.yaml big
home_spec both.yaml "vec, big"
home_spec capped.yaml big "max_evals: 5"
home_spec sampled.yaml big "max_evals: 3000"
home_spec slow.yaml slow
H="env AITUNE_HOME=$T/home"

# Without max_evals, compile and sweep refuse a bucket with a template over
# the limit (here beside one under it, as gemv beside rowdot above): one
# line, exit 3, nothing written. (This space counts in a moment; the 55k
# above take seconds, which --plan spent once.)
run $H "$AITUNE" compile "$T/home/both.yaml" --db "$T/c.db" --quiet
expect_eq "compile of it is refused (exit 3)" "$RC" 3 || show_last
expect_stderr_lines 1 "in one line"
expect_stderr "^aitune: error: spec '.*both.yaml' line 3: axpy f32 n=2\^6: template axpy/big has 8000 candidates, more than the 4096 a search may try in full: set max_evals \(or pass --max-evals N\)$" \
    "the line names the spec, the bucket, the template over the limit, the count and what to set"
[ ! -e "$T/c.db" ] && ok "no registry is made" || fail "compile made $T/c.db"
AITUNE_HOME=$T/home fake_sweep ok "$T/s.db" "$T/home/both.yaml"
expect_eq "a sweep of 8000 candidates without max_evals is refused (exit 3)" "$RC" 3 || show_last
expect_stderr "template axpy/big has 8000 candidates, .*set max_evals and a search that picks \(e.g. search: random" \
    "the sweep's line names a strategy too"
[ ! -e "$T/s.db" ] && ok "the sweep makes no registry" || fail "the sweep made $T/s.db"

run $H "$AITUNE" compile "$T/home/big.yaml" --plan
expect_eq "compile --plan of 8000 candidates exits 0" "$RC" 0 || show_last
expect_stdout "^  axpy/big +8000 +over 4096 without max_evals" "it counts them exactly"
run $H "$AITUNE" compile "$T/home/capped.yaml" --plan
expect_stdout "^  axpy/big +8000 +5 of them \(max_evals\)$" "with the spec's max_evals: 5 of them"
expect_stdout "^compile --plan: 1 bucket, 8000 candidates; compile would take 5 of them" "and the total says so"
run $H "$AITUNE" compile "$T/home/big.yaml" --plan --max-evals 7
expect_stdout "^  axpy/big +8000 +7 of them \(max_evals\)$" "--max-evals overrides it"

# compile honours the spec's max_evals: 5 kernels, not 8000.
run $H "$AITUNE" compile "$T/home/capped.yaml" --db "$T/cap.db" -j2 -v
expect_eq "compile of the capped spec exits 0" "$RC" 0 || show_last
expect_stderr "^compile: 5 candidates evaluated; 5 compiled, 0 from the cache" "it compiles the spec's max_evals: 5"
expect_eq "5 rows in its table" "$(grep -c '^f32 axpy/big ' "$T/out")" 5
n=$(sql "$T/cap.db" "select count(*) from cubins")
expect_true "5 cubins, 6 with the default's kernel ($n)" test "$n" -ge 5 -a "$n" -le 6
run $H "$AITUNE" compile "$T/home/capped.yaml" --db "$T/cap.db" -j2 --max-evals 8
expect_stderr "^compile: 8 candidates evaluated" "--max-evals 8 overrides the spec"

# Compiles held (AITUNE_NVRTC_HANG): a bounded number set off, then Ctrl-C
# ends the run within a second, and nothing that did not land is counted.
leftovers() {
    local f n=0
    for f in /proc/[0-9]*/environ; do grep -qs "$MARK" "$f" && n=$((n + 1)); done
    echo "$n"
}
# ctrl_c 'CONDITION' CMD...: CMD in the background (its stderr in $T/err),
# SIGINT once the shell condition holds (at most 30 s); sets RC and CAUGHT
# (seconds from the signal to its end).
ctrl_c() {
    local cond=$1 i
    shift
    "$@" >"$T/out" 2>"$T/err" </dev/null &
    local pid=$! t0 t1
    BG_PIDS="${BG_PIDS:-} $pid"
    for i in $(seq 1 300); do eval "$cond" && break; sleep 0.1; done
    kill -INT "$pid"
    t0=$(date +%s.%N)
    while kill -0 "$pid" 2>/dev/null; do sleep 0.02; done
    t1=$(date +%s.%N)
    wait "$pid"
    RC=$?
    CAUGHT=$(python3 -c "print('%.2f' % ($t1 - $t0))")
}
within_a_second() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 1.0 else 1)" "$1"; }

rm -f "$T/trace"
# Once compiles are set off and a progress line says none has landed.
ctrl_c 'grep -q "^compile: bucket 1/1, 0/3000 candidates" "$T/err" && [ "$(grep -c "compile set off" "$T/trace" 2>/dev/null)" -ge 2 ]' \
    $H AITUNE_NVRTC_HANG="$MARK" AITUNE_TRACE="$T/trace" AITUNE_PROGRESS_INTERVAL=1 \
    "$AITUNE" compile "$T/home/sampled.yaml" --db "$T/hang.db" -j2
expect_eq "Ctrl-C with every compile in flight: exit 130" "$RC" 130 || show_last
expect_true "it ended ${CAUGHT} s after the signal (within a second)" within_a_second "$CAUGHT"
n=$(grep -c "compile set off" "$T/trace")
expect_true "candidates stream: $n of 3000 were set off before it stopped (at most 64 in flight)" test "$n" -ge 2 -a "$n" -le 64
expect_stderr "^compile: 0 candidates evaluated; 0 compiled, 0 from the cache" "none landed: none is counted as compiled"
expect_stderr "^compile: bucket 1/1, 0/3000 candidates" "progress lines while the compiles are held, off a terminal"
expect_eq "no cubin is stored" "$(sql "$T/hang.db" "select count(*) from cubins")" 0
expect_eq "no helper is left behind" "$(leftovers)" 0

# Counting a slow space: progress off a terminal, and Ctrl-C within a second
# though the template catches errors itself.
counting='grep -q "^compile (counting candidates): bucket 1/1" "$T/err"'
ctrl_c "$counting" $H AITUNE_PROGRESS_INTERVAL=1 "$AITUNE" compile "$T/home/slow.yaml" --plan
expect_eq "Ctrl-C while --plan counts: exit 130" "$RC" 130 || show_last
expect_true "it ended ${CAUGHT} s after the signal (within a second)" within_a_second "$CAUGHT"
expect_stderr "^compile \(counting candidates\): bucket 1/1" "a progress line says it is counting"
expect_stderr "^aitune: interrupted$" "and that it was interrupted"
ctrl_c "$counting" $H AITUNE_PROGRESS_INTERVAL=1 "$AITUNE" compile "$T/home/slow.yaml" --db "$T/slow.db"
expect_eq "Ctrl-C while compile checks the spec's spaces (a progress line says so): exit 130" "$RC" 130 || show_last
expect_stderr "^compile \(counting candidates\): bucket 1/1" "compile was counting when the signal came"
expect_true "it ended ${CAUGHT} s after the signal (within a second)" within_a_second "$CAUGHT"
[ ! -e "$T/slow.db" ] && ok "no registry was made" || fail "$T/slow.db was made"

done_testing
