"""Peers for the GEMM ops: cuBLAS through PyTorch (torch.matmul for gemm_nn,
F.linear for gemm_nt, with its default 32 MiB workspace on Hopper), and
optionally torch.compile max-autotune (Inductor's Triton templates, autotuned),
on the shapes aitune tunes, timed like aitune times (median of CUDA-event
timings, L2 cleared between runs: triton.testing.do_bench).

    python3 bench/peers_gemm.py [--compile] [--cold N] CASE...
    CASE: op:dtype:MxNxK, e.g. gemm_nt:bf16:4096x14336x4096

--cold N rotates through N copies of B (the weights), so none is in L2 when
timed, as in decoding. Prints one JSON object per line: {"case", "cublas_ms",
"cublas_tflops", "compile_ms", "compile_tflops", "weight_tbps"}."""
import json
import sys
import time

import torch
import torch.nn.functional as F
from triton.testing import do_bench

DT = {"f16": torch.float16, "bf16": torch.bfloat16}


def case(op, dt, m, n, k, copies):
    src, _, dst = dt.partition(">")
    t = DT[src]
    a = torch.randn(m, k, device="cuda", dtype=t)
    bs = [torch.randn(k, n, device="cuda", dtype=t) if op == "gemm_nn" else torch.randn(n, k, device="cuda", dtype=t)
          for _ in range(copies)]
    out = torch.float32 if dst == "f32" else t
    if op == "gemm_nn":
        def fn(a, b):
            return torch.matmul(a, b, out_dtype=out) if out != t else torch.matmul(a, b)
    else:
        def fn(a, b):
            return F.linear(a, b) if out == t else torch.matmul(a, b.t(), out_dtype=out)
    return fn, a, bs


def timed(fn, a, bs):
    i = [0]

    def step():
        i[0] = (i[0] + 1) % len(bs)
        return fn(a, bs[i[0]])
    return do_bench(step, warmup=25, rep=200, return_mode="median")


def main():
    argv = sys.argv[1:]
    comp = "--compile" in argv
    copies = 1
    if "--cold" in argv:
        copies = int(argv[argv.index("--cold") + 1])
    cases = [a for a in argv if ":" in a]
    for spec in cases:
        op, dt, shape = spec.split(":")
        m, n, k = (int(v) for v in shape.split("x"))
        fn, a, bs = case(op, dt, m, n, k, copies)
        flops = 2.0 * m * n * k
        r = {"case": spec}
        ms = timed(fn, a, bs)
        r["cublas_ms"] = ms
        r["cublas_tflops"] = flops / ms / 1e9
        r["weight_tbps"] = bs[0].numel() * bs[0].element_size() / ms / 1e9
        if comp:
            t0 = time.time()
            cfn = torch.compile(fn, mode="max-autotune-no-cudagraphs", dynamic=False)
            cfn(a, bs[0])
            torch.cuda.synchronize()
            r["compile_s"] = time.time() - t0
            cms = timed(cfn, a, bs)
            r["compile_ms"] = cms
            r["compile_tflops"] = flops / cms / 1e9
        print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
