# bench/suites/memory.sh: the memory-bound families (softmax, layernorm,
# rmsnorm, transpose, reductions) against PyTorch at the shapes of their bars.
about="memory-bound families at the copy ceiling, against PyTorch eager and torch.compile"
spec=specs/memory.yaml
peers="PyTorch eager and torch.compile (max-autotune-no-cudagraphs), bench/peers_memory.py, same call"
metric="GB/s of the winner at 13 bar shapes (the fewest bytes the op must move over the median time); x each peer"
bar="softmax/layernorm/rmsnorm, rows of 4096-32768: >= 2900 GB/s and >= 1.0x torch.compile; rows of 512: >= 2500; transpose >= 2700; sum f32 2^28 >= 3100; row sums >= 2900"
gpus=1
minutes=9
command="bench/memory.sh OUT"
needs="$spec bench/memory.sh bench/peers_memory.py"

measure() { bench/memory.sh "$@"; }

rows() {
    python3 - "$1/memory-table.txt" <<'PY'
import sys
def bar(case):
    op, dt, shape = case.split(":")
    if op in ("softmax", "layernorm", "rmsnorm"):
        return (2500, None) if shape.endswith("x512") else (2900, 1.0)
    return {"transpose": (2700, None), "reduce_all": (3100, None), "reduce_rows": (2900, None)}.get(op, (None, None))
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 6 or f[0] == "case" or f[0].count(":") != 2:
        continue
    case, gbps, eager, comp, xe, xc = f[0], float(f[1]), float(f[2]), float(f[3]), f[4], f[5]
    lo, ratio = bar(case)
    met = "" if lo is None else "yes" if gbps >= lo and (ratio is None or float(xc) >= ratio) else "no"
    print("\t".join([case.replace(":", " "), "%.0f GB/s" % gbps, "eager %.0f, compile %.0f GB/s" % (eager, comp),
                     "%sx eager, %sx compile" % (xe, xc),
                     "" if lo is None else ">= %d GB/s%s" % (lo, ", >= %.1fx compile" % ratio if ratio else ""), met]))
PY
}
