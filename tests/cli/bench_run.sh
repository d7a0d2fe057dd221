#!/usr/bin/env bash
# bench/run, the benchmark driver, without a GPU: --help, --list and
# --dry-run work; a suite that needs a GPU says so and exits 4, whatever
# GPU the test machine has (a fake aitune plays the machine); a run (a fake
# suite on a fake GPU) rewrites its suite's rows of FIGURES.md and no
# others; --from rebuilds rows from a run's folder, and each real suite's
# parser reads the outputs its script wrote on the GPU (bench/archive/results);
# bench/FIGURES.md has a block per suite, each row with its GPU, date and
# command.
. "$(dirname "$0")/lib.sh"

RUN=$ROOT/bench/run
A=$ROOT/bench/archive/results
suites=$(cd "$ROOT/bench/suites" && ls *.sh | sed 's/\.sh$//')
sum() { md5sum "$1" | cut -d' ' -f1; }
before=$(sum "$ROOT/bench/FIGURES.md")

# ---- help, list, usage ----
expect_exit 0 "bench/run --help" "$RUN" --help
for s in $suites; do
    grep -q "^Suites:.* $s\( \|$\)\|^Suites: $s " "$T/out" || fail "--help does not list suite $s"
done
expect_stdout "4 this$|; 4 |exit.* 4 " "--help names the no-GPU exit code"
expect_exit 0 "bench/run --list" "$RUN" --list
n=0
for s in $suites; do
    n=$((n + 1))
    for field in spec peers metric bar needs; do
        awk -v s="$s:" -v f="$field:" '$1 == s { on = 1; next } /^[a-z0-9-]+: / { on = 0 } on && $1 == f && NF > 1 { found = 1 } END { exit !found }' \
            "$T/out" || fail "--list: suite $s has no $field"
    done
done
[ "$n" -ge 8 ] && ok "--list describes $n suites, each with spec, peers, metric, bar and needs" || fail "only $n suites"
for f in $(grep -o 'specs/[a-z0-9_-]*\.yaml' "$T/out" | sort -u); do
    [ -f "$ROOT/$f" ] || fail "--list names $f, which is not in the tree"
done
expect_exit 2 "an unknown suite" "$RUN" nosuch
expect_stderr "no suite 'nosuch' \(suites: .*memory" "it is named, with the suites there are"
expect_exit 2 "a suite name with a slash" "$RUN" ../suites/memory
expect_exit 2 "an unknown option" "$RUN" --fast memory
expect_exit 2 "no suite" "$RUN"
expect_exit 2 "ARGS without --" "$RUN" --dry-run memory extra

# ---- dry run: no GPU needed, nothing written ----
expect_exit 0 "bench/run --dry-run memory" "$RUN" --dry-run memory -- --no-compile
expect_stdout "^would run: bench/memory.sh OUT --no-compile " "it says the command, with the suite's ARGS"
expect_stdout "^    bar: +.*2900 GB/s" "and the suite's bar"

# ---- a machine without a GPU, or with too few (a fake aitune) ----
cat >"$T/aitune" <<'EOF'
#!/bin/sh
[ "$1" = devices ] || { echo "fake aitune: $*" >&2; exit 1; }
case ${FAKE_GPUS:-0} in
    0) echo "aitune: error: no GPU: cannot open libcuda.so.1: is the NVIDIA driver installed?" >&2; exit 1 ;;
    1) echo '[{"index":0,"name":"Fake GPU 80GB","sms":132}]' ;;
    *) echo '[{"index":0,"name":"Fake GPU 80GB","sms":132},{"index":1,"name":"Fake GPU 80GB","sms":132}]' ;;
esac
EOF
chmod +x "$T/aitune"
for s in $suites; do
    AITUNE=$T/aitune OUT=$T/o run "$RUN" "$s"
    [ "$RC" = 4 ] && grep -q "suite $s needs [0-9] GPUs\? and this machine has none (no GPU: cannot open libcuda" "$T/err" &&
        [ "$(wc -l <"$T/err")" = 1 ] && [ ! -e "$T/o/$s" ] ||
        { fail "bench/run $s without a GPU: exit $RC"; show_last; }
done
ok "every suite without a GPU: exit 4, one line that says so, no output folder"
expect_eq "no run touched bench/FIGURES.md" "$(sum "$ROOT/bench/FIGURES.md")" "$before"
FAKE_GPUS=1 AITUNE=$T/aitune OUT=$T/o run "$RUN" multi-gpu
expect_eq "multi-gpu on one GPU exits 4" "$RC" 4
expect_stderr "needs 2 GPUs and this machine has 1; nothing was measured" "it says how many it needs and has"
AITUNE=$T/nonexistent run "$RUN" memory
expect_eq "no build/aitune: exit 1" "$RC" 1
expect_stderr "no $T/nonexistent: build it first" "it says to build"

# ---- a run: a fake suite on a fake GPU rewrites its rows ----
mkdir -p "$T/suites"
cat >"$T/suites/fake.sh" <<'EOF'
about="a fake suite"
spec=specs/elementwise.yaml
peers="none"
metric="seconds"
bar="<= 2 s"
gpus=1
minutes=1
command="echo"
needs="$spec"
measure() { echo "measuring into $1 with ${2:-no args}"; printf '1.5\n' >"$1/a.txt"; [ -z "${FAKE_FAIL:-}" ]; }
rows() {
    [ -f "$1/a.txt" ] || return 0
    printf 'alpha\t%s s\t\t\t<= 2 s\t%s\n' "$(cat "$1/a.txt")" "${FAKE_MET:-yes}"
    printf 'gamma|pipe\tnew\t\t\t\t\n'
}
EOF
cat >"$T/suites/needy.sh" <<'EOF'
about="needs a file"; spec=x; peers=x; metric=x; bar=x; gpus=1; minutes=1; command=x; needs="bench/no-such-script.py"
measure() { :; }
rows() { :; }
EOF
cat >"$T/F.md" <<'EOF'
# Figures

Text before.

<!-- bench/run fake begin -->
old definition
| figure | aitune | peer | ratio | bar | met | GPU | date | command |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
| alpha | 9 s |  |  | <= 2 s | no | Old GPU | 2020-01-01 | old command |
| beta | 7 s |  |  |  |  | Old GPU | 2020-01-02 | other command |
<!-- bench/run fake end -->

Text after.
EOF
cp "$T/F.md" "$T/F0.md"
export BENCH_SUITES=$T/suites BENCH_FIGURES=$T/F.md
expect_exit 1 "--dry-run of a suite whose script is missing" "$RUN" --dry-run needy
expect_stderr "needs files this tree lacks: bench/no-such-script.py" "the missing file is named"
FAKE_GPUS=1 AITUNE=$T/aitune run "$RUN" --out "$T/run1" fake -- one
expect_eq "a run whose figures meet their bars exits 0" "$RC" 0 || show_last
expect_true "the suite got its output folder and ARGS" grep -q "measuring into $T/run1 with one" "$T/run1/bench-run.log"
today=$(date -u +%Y-%m-%d)
expect_true "the measured row replaces the old one, with GPU, date and command" \
    grep -qxF "| alpha | 1.5 s |  |  | <= 2 s | yes | Fake GPU 80GB | $today | bench/run fake -- one |" "$T/F.md"
expect_true "a row the run did not measure stays as it was" \
    grep -qxF "| beta | 7 s |  |  |  |  | Old GPU | 2020-01-02 | other command |" "$T/F.md"
expect_true "a new figure is added, its | made harmless" grep -q "^| gamma/pipe | new |" "$T/F.md"
expect_eq "the row order: old rows in place, new ones after" "$(grep -o '^| [a-z/]* ' "$T/F.md" | tr -d '| ' | tr '\n' ' ')" "figure alpha beta gamma/pipe "
expect_true "the block starts with the suite's definition" grep -qxF "Spec: specs/elementwise.yaml. Peers: none. Metric: seconds. Bar: <= 2 s." "$T/F.md"
expect_eq "text outside the block is kept" "$(sed -n '1,4p;/fake end/,$p' "$T/F.md")" "$(sed -n '1,4p;/fake end/,$p' "$T/F0.md")"
expect_true "the output folder gets the updated FIGURES.md" cmp -s "$T/F.md" "$T/run1/FIGURES.md"
expect_stdout "^\| alpha \| 1.5 s \|" "the rows are printed last"
cp "$T/F.md" "$T/F1.md"
FAKE_MET=no FAKE_GPUS=1 AITUNE=$T/aitune run "$RUN" --out "$T/run2" fake
expect_eq "a figure under its bar: exit 1" "$RC" 1
expect_true "and its row says so" grep -q "^| alpha | 1.5 s .* | no | Fake GPU 80GB |" "$T/F.md"
cp "$T/F1.md" "$T/F.md"
FAKE_FAIL=1 FAKE_GPUS=1 AITUNE=$T/aitune run "$RUN" --out "$T/run3" --no-figures fake
expect_eq "a measuring script that fails: exit 1" "$RC" 1
expect_eq "--no-figures leaves FIGURES.md alone" "$(sum "$T/F.md")" "$(sum "$T/F1.md")"
rm -f "$T/run3/a.txt"
FAKE_GPUS=1 AITUNE=$T/aitune run "$RUN" --from "$T/run3" fake
expect_eq "no figure out of a run: exit 1" "$RC" 1
expect_stderr "no figure came out of suite fake" "it says so"
expect_eq "and FIGURES.md is unchanged" "$(sum "$T/F.md")" "$(sum "$T/F1.md")"
expect_exit 1 "--from a folder bench/run did not write" "$RUN" --from "$T" fake
expect_exit 1 "--from a run of another suite" "$RUN" --from "$T/run1" needy
cp "$T/F0.md" "$T/F.md"
expect_exit 0 "--from the first run's folder, without a GPU" "$RUN" --from "$T/run1" fake
expect_true "gives the rows that run gave" grep -qxF "| alpha | 1.5 s |  |  | <= 2 s | yes | Fake GPU 80GB | $today | bench/run fake -- one |" "$T/F.md"
cp "$T/F0.md" "$T/F.md"
printf '# Figures\n' >"$T/F.md"
FAKE_GPUS=2 AITUNE=$T/aitune run "$RUN" --out "$T/run4" fake
expect_true "a suite with no block yet gets a section at the end" \
    grep -q "^## fake: a fake suite" "$T/F.md"
unset BENCH_SUITES BENCH_FIGURES

# ---- each real suite's parser on what its script wrote on the GPU ----
H="NVIDIA H100 80GB HBM3"
from() {   # SUITE FILE NAME-IN-DIR
    local d=$T/from-$1
    mkdir -p "$d"
    printf 'suite=%s\ngpu=%s\ndate=2026-11-22\ncommand=archived\nrc=0\n' "$1" "$H" >"$d/bench-run.txt"
    cp "$2" "$d/$3"
    BENCH_FIGURES=$T/real.md run "$RUN" --from "$d" "$1"
}
rows_met() { awk -F '\t' -v f="$2" '$1 == f { print $2 " / " $6 }' "$T/from-$1/figures.tsv"; }
from memory "$A/memory-table.txt" memory-table.txt
expect_eq "memory: 13 figures, all at their bars" "$RC $(wc -l <"$T/from-memory/figures.tsv") $(grep -c $'\tyes\t' "$T/from-memory/figures.tsv")" "0 13 13"
expect_eq "memory: softmax 32768x4096" "$(rows_met memory 'softmax bf16 32768x4096')" "3053 GB/s / yes"
from gemm "$A/gemm-table.txt" gemm-table.txt
expect_eq "gemm: 5 figures at their bars" "$RC $(grep -c $'\tyes\t' "$T/from-gemm/figures.tsv")" "0 5"
expect_eq "gemm: f16 against its 0.97x bar" "$(awk -F '\t' '$1 ~ / f16 / { print $5 }' "$T/from-gemm/figures.tsv")" ">= 0.97x cuBLAS"
from decode "$A/decode-pre/decode-final/gemm-table.txt" gemm-table.txt
expect_eq "decode: 16 x 4096^2 in TB/s of weights" "$(rows_met decode 'gemm_nt bf16 16x4096x4096')" "2.62 TB/s (42.0 TFLOP/s, gemv) / yes"
from decode "$A/decode-pre/full-first/gemm-table.txt" gemm-table.txt
expect_eq "decode: the earlier run missed 2.6 TB/s there, and exits 1" "$RC $(rows_met decode 'gemm_nt bf16 16x4096x4096')" \
    "1 2.50 TB/s (40.0 TFLOP/s, swapab) / no"
expect_eq "decode: 4096x4097x4096 nt in TFLOP/s against 4x" "$(rows_met decode 'gemm_nt bf16 4096x4097x4096')" "610.0 TFLOP/s (wgmma) / yes"
from multi-gpu "$A/multi-gpu-h200x2.txt" multi-gpu.txt
expect_eq "multi-gpu: the speedup" "$(rows_met multi-gpu 'specs/gemm.yaml on 2 GPUs')" "30.6 s / yes"
from registry "$A/registry-size-summary.txt" summary.txt
expect_eq "registry: the size" "$(rows_met registry 'specs/memory.yaml registry on disk')" "29.4 MB after the sweep, 26.9 MB after gc / yes"
expect_eq "registry: 5 figures" "$(wc -l <"$T/from-registry/figures.tsv")" 5
from tuning "$A/ahead-gemm-h100.txt" ahead.txt
expect_eq "tuning: look-ahead against --ahead 0" "$(awk -F '\t' '{ print $2 "; " $3 "; " $4 }' "$T/from-tuning/figures.tsv")" \
    "47.7 s (644 candidates); --ahead 0: 106.6 s; 2.23x faster"
from overhead "$A/align-key/launch.txt" launch.txt
expect_eq "overhead: the 141 ns lookup misses its bar, exit 1" "$RC $(rows_met overhead 'aitune_lookup, exact at 9960 winners')" "1 141 ns / no"
expect_eq "overhead: aitune_launch's added time" "$(rows_met overhead 'aitune_launch over cuLaunchKernel (softmax)')" "0.78 us / yes"
# tests/gpu/run.sh's check lines (its check NAME CODE DETAIL).
cat >"$T/checks.txt" <<'EOF'
PASS aitune devices: GPU 0: Fake
PASS aitune sweep specs/elementwise.yaml completes: 61 s; sweep: 6515 candidates evaluated, 6515 ok
PASS axpy f32 n=2^26 >= 2900 GB/s: 3139.2 GB/s (256.6 us); x1.060 vs torch copy_, x1.047 vs torch add_
FAIL cast f32>bf16 n=2^28 >= 2900 GB/s: 2800.5 GB/s (575.0 us); x0.921 vs torch copy_ (f32->bf16)
PASS emitted axpy f32 n=2^26 is bit-identical to the swept kernel: ok
EOF
from elementwise "$T/checks.txt" checks.txt
# ranges: the summary's four rows, and not each m's (a HOLE line has eight
# fields too: the parser failed on it after the summary, fourteenth session).
from ranges "$ROOT/bench/results/2026-11-28/s14-ranges-call4/range_table.txt" range_table.txt
expect_eq "ranges: four weights, none at its bar, no error" \
    "$RC $(wc -l <"$T/from-ranges/figures.tsv") $(grep -c $'\tno\t' "$T/from-ranges/figures.tsv") $(wc -c <"$T/from-ranges/figures.err")" "1 4 4 0"
expect_eq "ranges: 4096 x 14336" "$(rows_met ranges 'gemm_nt bf16 4096x14336, m 1-256')" "16 holes of 256 m; worst 0.911x at m=216 / no"
# decode-range: the table bench/decode_table.py makes from the two scans'
# printed lines (a HOLE line and a scan line alike), and a row per task.
S15=$ROOT/bench/results/2026-11-28/s15-dec-call1
"$ROOT/bench/decode_table.py" "$S15/before-scan.txt" "$S15/after-scan.txt" >"$T/decode_table.txt"
expect_eq "decode_table.py: the table the results hold, from the scans' lines" "$(cmp -s "$T/decode_table.txt" "$S15/decode_table.txt" && echo same)" same
expect_eq "decode_table.py: 7 tasks of 64 sizes" "$(grep -c '^gemm_n[nt] [bf]*16 [0-9]*x[0-9]* m=' "$T/decode_table.txt")" 448
expect_exit 1 "decode_table.py with one file" "$ROOT/bench/decode_table.py" "$S15/after-scan.txt"
from decode-range "$T/decode_table.txt" decode_table.txt
expect_eq "decode-range: 7 tasks, 4 at the bar, exit 1" \
    "$RC $(wc -l <"$T/from-decode-range/figures.tsv") $(grep -c $'\tyes\t' "$T/from-decode-range/figures.tsv")" "1 7 4"
expect_eq "decode-range: 8192^2 just under" "$(rows_met decode-range 'gemm_nt bf16 8192x8192, m 1-64')" \
    "after: 48 holes of 64 m; worst 0.979x at m=56 / no"
expect_eq "elementwise: axpy" "$(rows_met elementwise 'axpy f32 n=2^26')" "3139 GB/s (256.6 us) / yes"
expect_eq "elementwise: a FAIL is under its bar" "$RC $(rows_met elementwise 'cast f32>bf16 n=2^28')" "1 2800 GB/s (575.0 us) / no"
expect_eq "elementwise: the emitted file" "$(rows_met elementwise 'emitted .cu of axpy f32 n=2^26 (nvcc)')" "bit-identical to the swept kernel / yes"
# bench/llama_e2e.py and bench/host_overhead.py as they printed (a tiny
# model on the CPU, the recording libcuda: tests/fixtures/bench/), and the
# lines the parsers read still in the scripts' sources.
F2=$ROOT/tests/fixtures/bench
from e2e "$F2/llama_e2e-tiny-cpu.txt" e2e.txt
expect_eq "e2e: a figure per graph batch, the eager batch 1, the prefill, the host time and check=True" \
    "$(wc -l <"$T/from-e2e/figures.tsv")" 7
expect_eq "e2e: batch 8 against its 1.10x bar" "$(awk -F '\t' '$1 ~ /batch 8,/ { print $2 "; " $4 "; " $5 "; " $6 }' "$T/from-e2e/figures.tsv")" \
    "1137.3 compile + patch; 1.524x compile; >= 1.10x compile; yes"
expect_eq "e2e: a host time aitune did not tune misses its bar" \
    "$(awk -F '\t' '$1 ~ /^host time/ { print $6 }' "$T/from-e2e/figures.tsv")" no
expect_eq "e2e: check=True that compared nothing does not pass" "$(rows_met e2e 'check=True over a decode step' | sed 's/.* \/ //')" no
for s in '| batch | cuBLAS eager | eager + patch | torch.compile | compile + patch | compile + patch / compile |' \
         'prefill %d tokens: %s%s' 'compile / compile+patch time %.3fx' 'host per call: aitune.nn.Linear.forward %.1f us, ' \
         '(forward / mm %.2fx)%s' 'check=True, one decode step: %d calls compared, first difference: %s; logits max error %.3g'; do
    grep -qF -- "$s" "$ROOT/bench/llama_e2e.py" || fail "bench/llama_e2e.py no longer prints '$s' (bench/suites/e2e.sh reads it)"
done
cp "$F2/host_overhead-fake.txt" "$T/host-overhead.txt"
from overhead "$T/host-overhead.txt" host-overhead.txt
cp "$A/align-key/launch.txt" "$T/from-overhead/launch.txt"
BENCH_FIGURES=$T/real.md run "$RUN" --from "$T/from-overhead" overhead
expect_eq "overhead: host_overhead.py's bar line" \
    "$(rows_met overhead 'host time per call, 1 x 4096 x 4096 (aitune.nn.Linear)')" "5.16 us / no"
expect_eq "overhead: and launch.sh's three figures beside it" "$(wc -l <"$T/from-overhead/figures.tsv")" 4
grep -qF 'print("bar: aitune.nn.Linear.forward %.2f us (<= 10: %s), %.2fx torch.mm (<= 0.5: %s)"' "$ROOT/bench/host_overhead.py" ||
    fail "bench/host_overhead.py no longer prints its bar line as bench/suites/overhead.sh reads it"

# ---- bench/FIGURES.md: a block per suite, its definition current, each row dated ----
F=$ROOT/bench/FIGURES.md
for s in $suites; do
    grep -qxF "<!-- bench/run $s begin -->" "$F" && grep -qxF "<!-- bench/run $s end -->" "$F" ||
        { fail "FIGURES.md has no block for suite $s"; continue; }
    bar=$(. "$ROOT/bench/suites/$s.sh"; echo "$bar")
    sed -n "/<!-- bench\/run $s begin -->/,/<!-- bench\/run $s end -->/p" "$F" >"$T/block"
    grep -qF "Bar: $bar." "$T/block" || fail "FIGURES.md's $s block does not state the suite's bar ($bar)"
    bad=$(grep '^| ' "$T/block" | grep -v '^| figure |\|^| --- |' | awk -F ' [|] ' 'NF != 9 || $7 == "" || $8 !~ /^20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]$/ || $9 ~ /^ *[|]$/' | head -n 1)
    [ -z "$bad" ] || fail "FIGURES.md, $s: a row without 9 cells, a GPU, a date or a command: $bad"
done
ok "FIGURES.md: a block per suite with its bar; every row has its GPU, date and command"
expect_eq "the tests left bench/FIGURES.md as it was" "$(sum "$F")" "$before"
done_testing
