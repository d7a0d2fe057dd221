# bench/suites/multi-gpu.sh: one sweep over two GPUs against the same sweep
# on one (issue 11).
about="a sweep of specs/gemm.yaml on two GPUs of one host against the same sweep on one"
spec=specs/gemm.yaml
peers="the same sweep with --gpu 0, same call"
metric="wall seconds of each sweep, the speedup; winners compared bucket by bucket"
bar="2 GPUs >= 1.7x one; every bucket's winner the same config or within 5%"
gpus=2
minutes=6
command="bench/multi_gpu.sh OUT specs/gemm.yaml"
needs="$spec bench/multi_gpu.sh"

measure() { local out=$1; shift; bench/multi_gpu.sh "$out" specs/gemm.yaml "$@"; }

rows() {
    python3 - "$1/multi-gpu.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"speedup ([0-9.]+)x \(([0-9.]+) s -> ([0-9.]+) s\); winners: (\d+) same config, (\d+) other config "
              r"within (\d+)%, (\d+) different, (\d+) missing; (PASS|FAIL)", text)
if m:
    x, one, two, same, near, noise, diff, miss, verdict = m.groups()
    print("\t".join(["specs/gemm.yaml on 2 GPUs", "%s s" % two, "1 GPU: %s s" % one, "%sx" % x, ">= 1.7x",
                     "yes" if float(x) >= 1.7 else "no"]))
    print("\t".join(["winners, 2 GPUs against 1", "%s same config, %s other within %s%%, %s different, %s missing"
                     % (same, near, noise, diff, miss), "", "", "none different or missing",
                     "yes" if verdict == "PASS" else "no"]))
PY
}
