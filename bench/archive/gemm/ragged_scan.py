"""Find shapes where cuBLAS fills the H100 worst (issue 10, ragged last
waves): time F.linear (bf16, nt) over a grid of m x n (multiples of 128 whose
tile counts leave partial waves) at one k, with L2 flushed before each call
(triton.testing.do_bench), and print a spec of the N shapes with the lowest
cuBLAS TFLOP/s among those large enough to be compute-bound.
    python3 bench/archive/gemm/ragged_scan.py K N > spec.yaml   (table on stderr)"""
import sys
import torch
import torch.nn.functional as F
from triton.testing import do_bench

k, count = int(sys.argv[1]), int(sys.argv[2])
sizes = [1152, 1408, 1664, 1920, 2176, 2432, 2688, 2944, 3200, 3456]
rows = []
for m in sizes:
    for n in sizes:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        ms = do_bench(lambda: F.linear(a, b), warmup=10, rep=40, return_mode="median")
        tf = 2.0 * m * n * k / ms / 1e9
        rows.append((tf, m, n))
        print("cublas %5d x %5d x %5d nt: %7.1f TFLOP/s" % (m, n, k, tf), file=sys.stderr)
rows.sort()
print("name: gemm-ragged-scan\narch: sm_90a\nseed: 1\nsearch: model\nmax_evals: 64\ntop_k: 4\ntasks:")
for tf, m, n in rows[:count]:
    print("  - op: gemm_nt\n    dtypes: [bf16]\n    templates: [wgmma]\n"
          "    shapes: {m: {values: [%d]}, n: {values: [%d]}, k: {values: [%d]}}  # cuBLAS %.1f TFLOP/s" % (m, n, k, tf))
