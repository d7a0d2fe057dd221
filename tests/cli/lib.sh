# tests/cli/lib.sh: helpers for the command-line tests. Source it from a
# tests/cli/*.sh script; each check prints one line that tests/run counts:
#   ok   <description>
#   FAIL <script>: <description> (details)
#   skip <description>: <reason>
#
# After `run CMD...` (or expect_exit), the last command's exit code is in
# $RC, its stdout in $T/out and its stderr in $T/err.

set -u
ROOT=${AITUNE_TEST_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
AITUNE=${AITUNE_BIN:-$ROOT/build/aitune}
FAKE=${AITUNE_FAKE_WORKER:-$ROOT/build/tests/fake_worker}
# The Makefile's virtual environment (make deps): torch, pytest, numpy.
VENV=${AITUNE_VENV:-$ROOT/.venv}
SCRIPT=$(basename "$0")
T=$(mktemp -d "${TMPDIR:-/tmp}/aitune-cli-XXXXXX")
RC=0
NFAIL=0

# Never touch the user's registry: every command gets --db or this.
export AITUNE_DB="$T/default-registry.db"
unset AITUNE_WORKER FAKE_MODE FAKE_STATE AITUNE_HOME

cleanup() {
    # Processes a test started in the background, by pid.
    for p in ${BG_PIDS:-}; do kill -9 "$p" 2>/dev/null; done
    rm -rf "$T"
}
trap cleanup EXIT

ok()   { echo "ok   $*"; }
fail() { echo "FAIL $SCRIPT: $*"; NFAIL=$((NFAIL + 1)); }
skip() { echo "skip $*"; }

# Show a little of the last command's output after a failure.
show_last() {
    local what
    for what in out err; do
        [ -s "$T/$what" ] && sed -e "s/^/    $what: /" "$T/$what" | head -n "${1:-6}"
    done
    return 0
}

# AITUNE_TEST_PROFILE=FILE: each `run` appends a line to FILE: its CPU
# seconds (user + sys of what it waited for), wall seconds and command,
# then a line per "N compiled, M from the cache" its stderr holds: where a
# file's time goes, and which commands wait for NVRTC (sort -rn FILE).
profile_cpu() {   # sets PROFILE_CPU: this shell's children's user + sys seconds so far
    times >"$T/.times"
    PROFILE_CPU=$(awk 'NR == 2 { t = 0; for (i = 1; i <= NF; i++) { split($i, a, "m"); sub("s", "", a[2]); t += a[1] * 60 + a[2] }
                                 printf "%.2f", t }' "$T/.times")
}
run() {
    local c0 w0
    if [ -n "${AITUNE_TEST_PROFILE:-}" ]; then profile_cpu; c0=$PROFILE_CPU w0=$(date +%s.%N); fi
    "$@" >"$T/out" 2>"$T/err" </dev/null
    RC=$?
    if [ -n "${AITUNE_TEST_PROFILE:-}" ]; then
        profile_cpu
        awk -v c="$PROFILE_CPU" -v c0="$c0" -v w="$(date +%s.%N)" -v w0="$w0" -v what="$SCRIPT: ${*:1:6}" \
            'BEGIN { printf "%.2f\t%.2f\t%s\n", c - c0, w - w0, what }' >>"$AITUNE_TEST_PROFILE"
        grep -h -o '[0-9]* compiled, [0-9]* from the cache' "$T/err" | sed "s|^|\t\t$SCRIPT: |" >>"$AITUNE_TEST_PROFILE"
    fi
    return 0
}

# expect_exit CODE "desc" cmd...
expect_exit() {
    local want=$1 desc=$2
    shift 2
    run "$@"
    if [ "$RC" = "$want" ]; then
        ok "$desc (exit $RC)"
        return 0
    fi
    fail "$desc: exit $RC, want $want"
    show_last
    return 1
}

# expect_stderr "regex" "desc": the last command's stderr matches (grep -E).
expect_stderr() {
    if grep -Eq -- "$1" "$T/err"; then ok "$2"; return 0; fi
    fail "$2: stderr does not match /$1/"
    show_last
    return 1
}

expect_stdout() {
    if grep -Eq -- "$1" "$T/out"; then ok "$2"; return 0; fi
    fail "$2: stdout does not match /$1/"
    show_last
    return 1
}

expect_no_stdout() {
    if ! grep -Eq -- "$1" "$T/out"; then ok "$2"; return 0; fi
    fail "$2: stdout matches /$1/"
    show_last
    return 1
}

# expect_lines N "desc": stderr has exactly N lines.
expect_stderr_lines() {
    local n
    n=$(wc -l <"$T/err")
    if [ "$n" -eq "$1" ]; then ok "$2"; return 0; fi
    fail "$2: stderr has $n lines, want $1"
    show_last
    return 1
}

# expect_true "desc" cmd...: the command succeeds (its output is not kept).
expect_true() {
    local desc=$1
    shift
    if "$@" >/dev/null 2>&1; then ok "$desc"; return 0; fi
    fail "$desc"
    return 1
}

# expect_eq "desc" GOT WANT
expect_eq() {
    if [ "$2" = "$3" ]; then ok "$1"; return 0; fi
    fail "$1: got '$2', want '$3'"
    return 1
}

# has_gpu: a GPU this aitune can use.
has_gpu() {
    command -v nvidia-smi >/dev/null 2>&1 || return 1
    "$AITUNE" devices >/dev/null 2>&1
}

# A spec file under $T: spec NAME <<'EOF' ... EOF
spec() { cat >"$T/$1"; }

# The one-bucket, one-dtype axpy spec the sweep tests share (38 kernels at n=64).
small_spec() {
    spec "${1:-small.yaml}" <<'EOF'
name: small
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {log2: [6, 6]}
EOF
}

# gemm_lookup DB M,N,K: "LEVEL BUCKET" of libaitune's answer for a bf16 gemm_nt
# shape on sm_90 (aitune lookup --json).
gemm_lookup() {
    run "$AITUNE" lookup gemm_nt --arch sm_90 --dtype bf16 --shape "$2" --db "$1" --json
    sed -n 's/.*"level":"\([a-z]*\)".*"bucket":"\([^"]*\)".*/\1 \2/p' "$T/out"
}

# expect_dispatcher CU DB SHAPES...: the dispatcher `aitune emit` wrote into CU
# (its tables and aitune_pick, compiled as C with cc) picks, for every shape
# (M,N,K), the bucket gemm_lookup answers from DB; and nvcc -c builds CU. Each
# check skips, saying so, without its compiler.
expect_dispatcher() {
    local cu=$1 db=$2 want="" got="" s k
    shift 2
    if command -v cc >/dev/null 2>&1; then
        { echo '#include <math.h>'; echo '#include <stdio.h>'; echo '#include <stdlib.h>'
          sed -n '/^static const long long aitune_lo/,/^}/p' "$cu"
          echo 'int main(int c, char **v)'
          echo '{'
          echo '    for (int i = 1; i < c; i++) {'
          echo '        long long s[3];'
          echo '        if (sscanf(v[i], "%lld,%lld,%lld", &s[0], &s[1], &s[2]) != 3) return 2;'
          echo '        printf("%d\n", aitune_pick(s));'
          echo '    }'
          echo '    return 0;'
          echo '}'
        } >"$T/pick.c"
        if cc -std=c11 -Wall -Werror -o "$T/pick" "$T/pick.c" -lm 2>"$T/cc.err"; then
            for s in "$@"; do want="$want$(gemm_lookup "$db" "$s" | cut -d' ' -f2);"; done
            for k in $("$T/pick" "$@"); do
                got="$got$(sed -n "s|^// kernel $k: bucket \(.*\): template .*|\1|p" "$cu");"
            done
            expect_eq "the emitted dispatcher picks the bucket lookup answers, for every shape" "$got" "$want"
        else
            fail "the emitted dispatcher compiles as C: $(head -3 "$T/cc.err")"
        fi
    else
        skip "the emitted dispatcher picks as lookup does: no cc"
    fi
    if command -v nvcc >/dev/null 2>&1; then
        run nvcc -gencode=arch=compute_90a,code=sm_90a -c "$cu" -o "$cu.o"
        expect_eq "nvcc -c builds the emitted file" "$RC" 0 || show_last
    else
        skip "nvcc builds the emitted file: no nvcc"
    fi
}

# emit_builds DB OP ARCH DTYPE SHAPE OUT LABEL: `aitune emit` writes OP's
# answer at SHAPE into OUT, and nvcc -c builds it (the caller checks that
# there is an nvcc). Each is one check, named by LABEL.
emit_builds() {
    run "$AITUNE" emit "$2" --arch "$3" --dtype "$4" --shape "$5" --db "$1" -o "$6"
    expect_eq "emit $7" "$RC" 0 || { show_last; return 1; }
    run nvcc -gencode=arch=compute_90a,code=sm_90a -c "$6" -o "$6.o"
    expect_eq "nvcc -c builds the emitted $7" "$RC" 0 || show_last
}

# marked_home TAG: $T/home, a templates tree whose axpy has a template of four
# candidates (block 32, 64, 128, 256) where block 128's source carries a
# marker of this run's own, MARK (aitune_TAG_marker_...), and home/four.yaml
# (small_spec) over it. AITUNE_NVRTC_CRASH/HANG=$MARK (jit.h) then make that
# compile crash or hang, and leftovers counts this run's processes (tests run
# in parallel) by the marker in their environment.
marked_home() {
    MARK="aitune_$1_marker_$$_$RANDOM"
    mkdir -p "$T/home/templates/axpy" "$T/home/search"
    ln -s "$ROOT/templates/lib" "$T/home/templates/lib"
    cp "$ROOT/templates/axpy/op.lua" "$T/home/templates/axpy/op.lua"
    cp "$ROOT"/search/*.lua "$T/home/search/"
    cat >"$T/home/templates/axpy/four.lua" <<EOF
local t = lib("elementwise").template(OP)
t.params = { { "block", { 32, 64, 128, 256 } } }
t.constraints = function() return true end
t.default = function() return { block = 64 } end
t.launch = function(p) return { grid = { "cdiv(n, 64)", 1, 1 }, block = { p.block, 1, 1 }, smem = 0 } end
t.source = function(p, dt, dev, name)
  local mark = p.block == 128 and "// $MARK\n" or ""
  return mark .. 'extern "C" __global__ void ' .. name .. '(float* x) { x[threadIdx.x] = ' .. p.block .. '.0f; }'
end
return t
EOF
    small_spec home/four.yaml
}

# leftovers: how many processes hold marked_home's MARK in their environment.
leftovers() {
    local f n=0
    for f in /proc/[0-9]*/environ; do
        grep -qs "$MARK" "$f" && n=$((n + 1))
    done
    echo "$n"
}

# An axpy f32 spec with buckets n = 2^LO .. 2^HI, named after its file, with
# more top-level lines if given: axpy_spec FILE LO HI [LINE...]
# (axpy_spec two.yaml 6 7 "max_evals: 10").
axpy_spec() {
    local file=$1 lo=$2 hi=$3 line
    shift 3
    {
        echo "name: ${file%.yaml}"
        for line in "$@"; do echo "$line"; done
        printf 'tasks:\n  - op: axpy\n    dtypes: [f32]\n    shapes:\n      n: {log2: [%s, %s]}\n' "$lo" "$hi"
    } >"$T/$file"
}

# edit_params FILE 'key|v1 v2,key2|v' : in a narrowed params file (bench/narrow.py's
# input: lines { "key", { ... } }), each named key's values replaced ('none|': none).
edit_params() {
    local file=$1 e key val edits
    IFS=, read -ra edits <<< "$2"
    for e in "${edits[@]}"; do
        key=${e%%|*} val=${e#*|}
        [ "$key" = none ] || sed -i "s/{ \"$key\", { [^}]* } }/{ \"$key\", { $val } }/" "$file"
    done
}

# The joint search the tests share: softmax's three templates searched
# together for one bucket, 9 configs chosen at random (joint_spec [FILE]).
joint_spec() {
    spec "${1:-joint.yaml}" <<'EOF'
name: joint
arch: sm_90a
search: random
max_evals: 9
joint: true
tasks:
  - op: softmax
    dtypes: [bf16]
    shapes:
      rows: {values: [16384]}
      cols: {values: [4096]}
EOF
}

# A registry whose cubin cache holds every kernel of axpy f32 at n = 2^6
# and 2^7 (small.yaml's 38 and the 12 more of the many two-bucket specs:
# axpy's sources do not depend on n), so fake sweeps do not wait for
# NVRTC: seed_db PATH. seed_db PATH axpy: every kernel of axpy f32 at any
# size instead (150, the union of n = 2^6 .. 2^13), for files that sweep
# axpy at larger sizes; seed_db PATH scale: that and scale_copy f32's at
# n = 2^6. Each also holds the engine's kernels and its ops' references,
# which a sweep compiles before its candidates (not candidates: no
# measurement, winner or default names them, and gc drops them). Compiled
# once per test run:
# tests/run gives its files a shared folder (AITUNE_TEST_SHARED), where the
# first file that needs a seed compiles it with this run's aitune while the
# others wait on its lock; a file run by hand compiles its own.
seed_db() {
    local dir=${AITUNE_TEST_SHARED:-$T} name=${2:-small}
    if [ ! -f "$dir/.seed-$name.db" ]; then
        (
            flock 9 || exit 1
            [ -f "$dir/.seed-$name.db" ] && exit 0
            tmp=$dir/.seed-$name.tmp one=$T/seed-$name-one.yaml
            rm -f "$tmp" "$tmp.sweep"
            case $name in
                small) axpy_spec "seed-$name.yaml" 6 7 ;;
                axpy) axpy_spec "seed-$name.yaml" 6 13 ;;
                scale) seed_db "$tmp" axpy || exit 1
                       printf 'name: seed-scale\ntasks:\n  - op: scale_copy\n    dtypes: [f32]\n    shapes:\n      n: {log2: [6, 6]}\n' \
                           >"$T/seed-$name.yaml" ;;
                *) exit 1 ;;
            esac
            "$AITUNE" compile "$T/seed-$name.yaml" --db "$tmp" >/dev/null 2>&1 || exit 1
            # The engine's kernels (fill, compare, the L2 flush) and the
            # references: a fake sweep of one candidate a bucket into a
            # copy compiles them, and their cubins join the seed (a cache
            # like any other: a sweep checks them against their hashes).
            sed -e 's/^tasks:/max_evals: 1\ntasks:/' -e 's/log2: \[\([0-9]*\), [0-9]*\]/log2: [\1, \1]/' \
                "$T/seed-$name.yaml" >"$one"
            cp "$tmp" "$tmp.sweep" &&
                env AITUNE_WORKER="$FAKE" FAKE_MODE=ok FAKE_STATE="$T/seed-$name.state" \
                    "$AITUNE" sweep "$one" --db "$tmp.sweep" --quiet --keep-cubins >/dev/null 2>&1 &&
                sqlite3 "$tmp" "attach '$tmp.sweep' as s;
                    insert into cubins select * from s.cubins where hash not in (select hash from main.cubins)" &&
                rm -f "$tmp.sweep" "$tmp.sweep.lock" "$T/seed-$name.state"* &&
                mv "$tmp" "$dir/.seed-$name.db"
        ) 9>"$dir/.seed-$name.lock" || return 1
        [ -f "$dir/.seed-$name.db" ] || return 1
    fi
    cp "$dir/.seed-$name.db" "$1"
}

# cubin_seed SRC DST: DST a registry that holds SRC's cubin cache and
# nothing else (no measurement, winner, default or run), as `aitune compile`
# leaves one: a sweep into it takes the kernels it shares with SRC from the
# cache (checked against their hashes as any cached kernel is) instead of
# compiling them again. SRC is best swept with --keep-cubins.
cubin_seed() {
    cp "$1" "$2" || return 1
    sqlite3 "$2" "$(sqlite3 "$2" "select 'delete from ' || name || ';' from sqlite_master
                                  where type = 'table' and name not in ('meta', 'cubins') and name not like 'sqlite_%'")"
}

# Template constraints through build/tests/kernel_sample (KS, set by the test):
# ks_line TEMPLATE DTYPE SHAPE CONFIG prints one of its list lines;
# ks_refused ... REASON checks that the constraints refuse CONFIG saying
# REASON; ks_accepted ... that they take it.
ks_line() { printf '%s\t%s\t%s\tsample\t%s\n' "$@"; }
ks_refused() {
    ks_line "$1" "$2" "$3" "$4" >"$T/one.txt"
    run "$KS" sources -c "$T/one.txt"
    expect_true "$1 $2 $3 refuses $4 ($5)" grep -qF "refuses $4: $5" "$T/err"
}
ks_accepted() {
    ks_line "$1" "$2" "$3" "$4" >"$T/one.txt"
    run "$KS" sources -c "$T/one.txt"
    expect_eq "$1 $2 $3 accepts $4" "$RC" 0 || show_last
}

# sql DB QUERY: one sqlite3 answer.
sql() { sqlite3 "$1" "$2" 2>&1; }

# Run a sweep with the fake worker: fake_sweep MODE DB SPEC [args...]
fake_sweep() {
    local mode=$1 db=$2 sp=$3
    shift 3
    rm -f "$T/fake-state" "$T/fake-state.pid" "$T/fake-state.log"   # verify counts start at 0
    run env AITUNE_WORKER="$FAKE" FAKE_MODE="$mode" FAKE_STATE="$T/fake-state" \
        "$AITUNE" sweep "$sp" --db "$db" --quiet "$@"
}

# start_bg CMD...: CMD in the background, its output in $T/bg.out and
# $T/bg.err, its pid in $BG (killed when the script ends).
start_bg() {
    "$@" >"$T/bg.out" 2>"$T/bg.err" </dev/null &
    BG=$!
    BG_PIDS="${BG_PIDS:-} $BG"
}

# wait_for DB QUERY N: until QUERY's answer on DB is at least N (at most 30 s).
wait_for() {
    local i
    for i in $(seq 1 300); do
        [ "$(sqlite3 "$1" "$2" 2>/dev/null)" -ge "$3" ] 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# undecide DB: DB's buckets as a sweep cut before it recorded them decided
# leaves them (src/sweep_resume.h): the next sweep decides every bucket
# again, from the measurements in the registry.
undecide() { sqlite3 "$1" "delete from decided"; }

# expect_resumed MODE DB SPEC QUERY: the same sweep again exits 0 and does
# nothing (every bucket is decided: src/sweep_resume.h; the worker sets up
# no task); with the decisions forgotten (undecide), it decides every bucket
# again measuring nothing, and QUERY (the winners) answers as before.
expect_resumed() {
    local before n
    before=$(sql "$2" "$4")
    n=$(sql "$2" "select count(*) from measurements")
    fake_sweep "$1" "$2" "$3"
    expect_eq "the sweep again exits 0" "$RC" 0 || show_last
    expect_stderr "^sweep: nothing to do: .* decided in the registry already" "it does nothing again"
    expect_eq "the worker sets up no task" "$(grep -c ' task ' "$T/fake-state.log")" 0
    undecide "$2"
    fake_sweep "$1" "$2" "$3"
    expect_eq "its decisions forgotten, the sweep again exits 0" "$RC" 0 || show_last
    expect_stderr "^sweep: 0 candidates evaluated \([0-9]+ already in the registry\)" "it measures nothing again"
    expect_eq "no measurement added" "$(sql "$2" "select count(*) from measurements")" "$n"
    expect_eq "the same winners" "$(sql "$2" "$4")" "$before"
}

# The fake sweep in the background: bg_fake_sweep MODE DB SPEC [args...].
bg_fake_sweep() {
    local mode=$1 db=$2 sp=$3
    shift 3
    rm -f "$T/fake-state" "$T/fake-state.pid" "$T/fake-state.log"
    start_bg env AITUNE_WORKER="$FAKE" FAKE_MODE="$mode" FAKE_STATE="$T/fake-state" "$AITUNE" sweep "$sp" --db "$db" --quiet "$@"
}

# Finish: the script's exit code says whether anything failed.
done_testing() { [ "$NFAIL" -eq 0 ]; }

# A test that builds part of a generated kernel on the CPU: without g++ the
# script is skipped (WHAT: no g++), without build/tests/kernel_sample it
# fails; sets KS to kernel_sample.
need_host_build() {
    if ! command -v g++ >/dev/null 2>&1; then
        skip "$1: no g++"
        done_testing
        exit
    fi
    KS=$ROOT/build/tests/kernel_sample
    if [ ! -x "$KS" ]; then
        fail "$1: build/tests/kernel_sample is not built (make)"
        exit 1
    fi
}
