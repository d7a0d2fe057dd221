# bench/suites/gemm.sh: matrix products on Hopper at the shapes where cuBLAS
# is at its best.
about="GEMM (wgmma family) at aligned shapes, against cuBLAS, a Triton matmul and torch.compile"
spec=specs/gemm.yaml
peers="cuBLAS (torch.matmul / F.linear), Triton matmul autotuned over 15 configs, torch.compile max-autotune; bench/peers_gemm.py --triton --compile, same call"
metric="TFLOP/s of the winner at each shape; x cuBLAS (and x the others)"
bar=">= 1.0x cuBLAS at 8192^3, 4096^3, 4096x14336x4096 nt, 8192x8192x512; f16 >= 0.97x"
gpus=1
minutes=5
command="bench/gemm.sh OUT specs/gemm.yaml --triton --compile"
needs="$spec bench/gemm.sh bench/peers_gemm.py"

measure() { local out=$1; shift; bench/gemm.sh "$out" specs/gemm.yaml --triton --compile "$@"; }

# gemm-table.txt, also what the decode suite reads: case, TFLOP/s of aitune,
# cuBLAS, Triton, torch.compile, x each, weight TB/s of aitune and cuBLAS.
gemm_rows() {   # TABLE MODE (tflops | tbps)
    python3 - "$1" "$2" <<'PY'
import sys
mode = sys.argv[2]
# The bars of issues 9 and 10: case -> (min x cuBLAS, min weight TB/s)
bars = {"gemm_nn:bf16:8192x8192x8192": (1.0, None), "gemm_nn:bf16:4096x4096x4096": (1.0, None),
        "gemm_nt:bf16:4096x14336x4096": (1.0, None), "gemm_nn:bf16:8192x8192x512": (1.0, None),
        "gemm_nn:f16:4096x4096x4096": (0.97, None),
        "gemm_nt:bf16:16x4096x4096": (1.2, 2.6), "gemm_nt:bf16:16x8192x8192": (None, 2.6),
        "gemm_nt:bf16:1x4096x4096": (None, 2.5), "gemm_nt:bf16:128x8192x8192": (1.1, None),
        "gemm_nt:bf16:4096x4097x4096": (4.0, None), "gemm_nn:bf16:4096x4097x4096": (4.0, None),
        "gemm_nt:bf16:4001x4001x4001": (4.0, None), "gemm_nn:bf16:4001x4001x4001": (4.0, None),
        "gemm_nt:bf16:2176x3200x4096": (1.1, None)}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 11 or f[0] == "case" or f[0].count(":") != 2:
        continue
    case = f[0]
    a, cb, tr, co, xcb, xtr, xco, wt, cbt = (float(v) for v in f[1:10])
    family = f[10].split("/")[-1]
    op, dt, shape = case.split(":")
    name = "%s %s %s" % (op, dt, shape)
    xr, tb = bars.get(case, (None, None))
    if mode == "tbps" and int(shape.split("x")[0]) <= 64:
        value, peer = "%.2f TB/s (%.1f TFLOP/s, %s)" % (wt, a, family), "cuBLAS %.2f TB/s" % cbt
    else:
        value, peer = "%.1f TFLOP/s (%s)" % (a, family), "cuBLAS %.1f" % cb
        if tr: peer += ", Triton %.1f" % tr
        if co: peer += ", torch.compile %.1f" % co
    ratio = "%.3fx cuBLAS" % xcb + (", %.3fx Triton" % xtr if tr else "") + (", %.3fx compile" % xco if co else "")
    want = []
    if xr: want.append(">= %gx cuBLAS" % xr)
    if tb: want.append(">= %g TB/s" % tb)
    met = "" if not want else "yes" if (not xr or xcb >= xr) and (not tb or wt >= tb) else "no"
    print("\t".join([name, value, peer, ratio, ", ".join(want), met]))
PY
}
rows() { gemm_rows "$1/gemm-table.txt" tflops; }
