# bench/suites/tuning.sh: how long tuning takes: specs/gemm.yaml swept with
# the default strategy and look-ahead, against the same sweep asking each
# batch only once the last is timed (--ahead 0). The exhaustive sweeps it is
# weighed against take four device calls (bench/exhaustive_spec.sh, one or
# two tasks per call); their rows in FIGURES.md are kept until rerun.
about="tuning time of specs/gemm.yaml: the default strategy with look-ahead, against --ahead 0 (and exhaustive, bench/exhaustive_spec.sh)"
spec=specs/gemm.yaml
peers="the same sweep with --ahead 0; exhaustive sweeps of each bucket (bench/exhaustive_spec.sh, separate calls)"
metric="wall seconds of the sweep into a fresh registry (cold cubin cache); candidates measured; the winners of both runs"
bar="the default tunes the spec at least 10x faster than exhaustive, its winners within 3% of exhaustive's (issue 12)"
gpus=1
minutes=4
command="bench/ahead.sh OUT specs/gemm.yaml"
needs="$spec bench/ahead.sh"

measure() { local out=$1; shift; bench/ahead.sh "$out" specs/gemm.yaml "$@"; }

rows() {
    python3 - "$1/ahead.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"wall time: --ahead 0 ([0-9.]+) s, look-ahead ([0-9.]+) s: ([0-9.]+)x", text)
if m:
    cands = re.findall(r"sweep: (\d+) candidates evaluated", text)
    n = " (%s candidates)" % cands[-1] if cands else ""
    print("\t".join(["specs/gemm.yaml, default strategy with look-ahead", "%s s%s" % (m.group(2), n),
                     "--ahead 0: %s s" % m.group(1), "%sx faster" % m.group(3), "", ""]))
PY
}
