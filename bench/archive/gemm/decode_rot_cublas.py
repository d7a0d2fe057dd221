# cuBLAS (F.linear, bf16) back to back over rotating weight copies, for
# bench/archive/decode_ceiling.sh: 64 calls captured in a CUDA graph (a Python loop
# would be bound by PyTorch's per-call host cost, about 30 us, at 4096^2),
# replayed between events; per-call time = replay / 64, median of 9.
import torch
import torch.nn.functional as F
for m, nk in [(1, 4096), (16, 4096), (1, 8192), (16, 8192)]:
    R = 8 if nk == 4096 else 4
    a = torch.randn(m, nk, device="cuda", dtype=torch.bfloat16)
    bs = [torch.randn(nk, nk, device="cuda", dtype=torch.bfloat16) for _ in range(R)]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i in range(R):
            F.linear(a, bs[i])
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(64):
            F.linear(a, bs[i % R])
    g.replay()
    torch.cuda.synchronize()
    ts = []
    for rep in range(9):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        g.replay()
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1) * 1000 / 64)
    ts.sort()
    us = ts[4]
    print(f"cublas graph, rotating {R} copies: m={m} {nk}x{nk}: {us:.2f} us {nk * nk * 2 / us / 1e6:.3f} TB/s")
