# bench/suites/elementwise.sh: axpy, scale_copy and cast, and the emitted
# .cu against the swept cubin (tests/gpu/run.sh, the first GPU check).
about="elementwise ops (axpy, scale_copy, cast) at the copy ceiling; emitted .cu bit-identical to the swept kernel"
spec=specs/elementwise.yaml
peers="PyTorch copy_ and add_(alpha), bench/peers_elementwise.py, same call"
metric="GB/s of the winner at axpy f32 2^26 (12 B/element) and cast f32>bf16 2^28 (6 B/element); x the peer"
bar=">= 2900 GB/s for both; the emitted .cu gives the swept kernel's bits"
gpus=1
minutes=3
command="tests/gpu/run.sh OUT"
needs="$spec tests/gpu/run.sh bench/peers_elementwise.py"

measure() { tests/gpu/run.sh "$@"; }

# checks.txt: "PASS axpy f32 n=2^26 >= 2900 GB/s: 3139.2 GB/s (256.6 us); x1.060 vs torch copy_, x1.047 vs torch add_"
rows() {
    python3 - "$1/checks.txt" <<'PY'
import re, sys
for line in open(sys.argv[1]):
    m = re.match(r"(PASS|FAIL) (\S+) (\S+) (n=\S+) >= (\d+) GB/s: ([0-9.]+) GB/s \(([0-9.]+) us\); (.*)", line)
    if m:
        verdict, op, dt, n, lo, gbps, us, vs = m.groups()
        ratios = "; ".join(re.sub(r"^x([0-9.]+) vs (.*)$", r"\1x \2", p.strip()) for p in vs.split(","))
        print("\t".join(["%s %s %s" % (op, dt, n), "%.0f GB/s (%s us)" % (float(gbps), us), "", ratios,
                         ">= %s GB/s" % lo, "yes" if verdict == "PASS" else "no"]))
        continue
    m = re.match(r"(PASS|FAIL) emitted (.*) is bit-identical to the swept kernel", line)
    if m:
        print("\t".join(["emitted .cu of %s (nvcc)" % m.group(2),
                         "bit-identical to the swept kernel" if m.group(1) == "PASS" else "differs, or did not build",
                         "", "", "bit-identical", "yes" if m.group(1) == "PASS" else "no"]))
        continue
    m = re.match(r"(PASS|FAIL) aitune sweep specs/elementwise.yaml completes: (\d+) s; (.*)", line)
    if m:
        print("\t".join(["sweep of specs/elementwise.yaml", "%s s: %s" % (m.group(2), m.group(3).strip()), "", "",
                         "completes", "yes" if m.group(1) == "PASS" else "no"]))
PY
}
