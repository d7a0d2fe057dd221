"""Peers for the GEMM ops: cuBLAS through PyTorch (torch.matmul for gemm_nn,
F.linear for gemm_nt, with its default 32 MiB workspace on Hopper),
optionally (--triton) a Triton matmul autotuned over 15 configs by
triton.autotune, and optionally torch.compile max-autotune (Inductor's
Triton templates, autotuned),
on the shapes aitune tunes, timed like aitune times (median of CUDA-event
timings, L2 cleared between runs: triton.testing.do_bench).

    python3 bench/peers_gemm.py [--compile] [--triton] [--cold N] [--stream] CASE...
    CASE: op:dtype:MxNxK, e.g. gemm_nt:bf16:4096x14336x4096

--cold N rotates through N copies of B (the weights), so none is in L2 when
timed, as in decoding. --stream times decode and small-prefill cases (M <= 64) the way a spec's
`timing: stream` has aitune time them (src/bench.h): A and B kept in enough
copies that the pair a call reads was last read two L2s of traffic before,
a chain of at least 16 calls over the copies in turn captured in a CUDA
graph (so PyTorch's host cost per call stays out), L2 flushed before each
replay, the time per call the replay's over its calls; median of 15. Prints one JSON object per line: {"case", "cublas_ms",
"cublas_tflops", "triton_ms", "triton_tflops", "triton_s", "compile_ms",
"compile_tflops", "weight_tbps"}."""
import json
import sys
import time

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from triton.testing import do_bench


def _configs():
    # 15 configs over block shape, pipeline depth and warps: the kind of
    # space a Triton user autotunes over on Hopper.
    out = []
    for bm, bn, bk, st, w in [(128, 256, 64, 3, 8), (256, 128, 64, 3, 8), (128, 128, 64, 4, 4),
                              (128, 128, 64, 3, 8), (128, 64, 64, 4, 4), (64, 128, 64, 4, 4),
                              (128, 256, 32, 4, 8), (256, 64, 64, 4, 4), (64, 256, 64, 4, 4),
                              (128, 128, 32, 4, 4), (64, 64, 64, 5, 4), (128, 64, 32, 5, 4),
                              (64, 128, 32, 5, 4), (256, 128, 32, 4, 8), (128, 256, 64, 4, 8)]:
        out.append(triton.Config({"BM": bm, "BN": bn, "BK": bk, "G": 8}, num_stages=st, num_warps=w))
    return out


@triton.autotune(configs=_configs(), key=["M", "N", "K", "NT"])
@triton.jit
def _mm(a, b, c, M, N, K, sbk, sbn, NT: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
        BK: tl.constexpr, G: tl.constexpr):
    # Grouped tile order for L2 reuse; masked tails; fp32 accumulation.
    pid = tl.program_id(0)
    tm, tn = tl.cdiv(M, BM), tl.cdiv(N, BN)
    per = G * tn
    first = (pid // per) * G
    rows = min(tm - first, G)
    pm = first + (pid % per) % rows
    pn = (pid % per) // rows
    om = pm * BM + tl.arange(0, BM)
    on = pn * BN + tl.arange(0, BN)
    ok = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + ok
        x = tl.load(a + om[:, None] * K + kk[None, :], mask=(om[:, None] < M) & (kk[None, :] < K), other=0.0)
        y = tl.load(b + kk[:, None] * sbk + on[None, :] * sbn, mask=(kk[:, None] < K) & (on[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc)
    tl.store(c + om[:, None] * N + on[None, :], acc.to(c.dtype.element_ty), mask=(om[:, None] < M) & (on[None, :] < N))


def triton_mm(a, b, nt, out_dtype):
    m, k = a.shape
    n = b.shape[0] if nt else b.shape[1]
    c = torch.empty(m, n, device=a.device, dtype=out_dtype)
    sbk, sbn = (b.stride(1), b.stride(0)) if nt else (b.stride(0), b.stride(1))
    grid = lambda meta: (triton.cdiv(m, meta["BM"]) * triton.cdiv(n, meta["BN"]),)
    _mm[grid](a, b, c, m, n, k, sbk, sbn, NT=nt)
    return c

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


def stream_timed(fn, op, m, n, k, t):
    """cuBLAS back to back over rotating copies of A and B (see --stream)."""
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    in_bytes = (m * k + n * k) * torch.finfo(t).bits // 8
    copies = min(16, 2 * l2 // in_bytes + 2)
    chain = copies * ((16 + copies - 1) // copies)
    As = [torch.randn(m, k, device="cuda", dtype=t) for _ in range(copies)]
    Bs = [torch.randn(k, n, device="cuda", dtype=t) if op == "gemm_nn" else torch.randn(n, k, device="cuda", dtype=t)
          for _ in range(copies)]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i in range(copies):
            fn(As[i], Bs[i])
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(chain):
            fn(As[i % copies], Bs[i % copies])
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    g.replay()
    torch.cuda.synchronize()
    ts = []
    for rep in range(15):
        flush.zero_()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        g.replay()
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1) / chain)
    ts.sort()
    return ts[len(ts) // 2]


def main():
    argv = sys.argv[1:]
    comp = "--compile" in argv
    tri = "--triton" in argv
    stream = "--stream" in argv
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
        if stream and m <= 64:
            ms = stream_timed(fn, op, m, n, k, DT[dt.partition(">")[0]])
            r["timing"] = "stream"
        else:
            ms = timed(fn, a, bs)
        r["cublas_ms"] = ms
        r["cublas_tflops"] = flops / ms / 1e9
        r["weight_tbps"] = bs[0].numel() * bs[0].element_size() / ms / 1e9
        if tri:
            src, _, dst = dt.partition(">")
            od = torch.float32 if dst == "f32" else DT[src]
            nt = op == "gemm_nt"
            t0 = time.time()
            got = triton_mm(a, bs[0], nt, od)
            torch.cuda.synchronize()
            r["triton_s"] = time.time() - t0
            want = fn(a, bs[0]).float()
            r["triton_relerr"] = ((got.float() - want).abs().max() / want.abs().max()).item()
            tms = timed(lambda a, b: triton_mm(a, b, nt, od), a, bs)
            r["triton_ms"] = tms
            r["triton_tflops"] = flops / tms / 1e9
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
