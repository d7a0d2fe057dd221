"""PyTorch peers for the elementwise family, timed like aitune times: median of
CUDA-event timings with L2 cleared between runs (triton.testing.do_bench).
Prints one JSON object: GB/s per case, counting bytes read + written.
    python3 bench/peers_elementwise.py"""
import json
import torch
from triton.testing import do_bench


def gbps(fn, nbytes):
    ms = do_bench(fn, warmup=25, rep=200, return_mode="median")
    return nbytes / (ms * 1e-3) / 1e9


def main():
    torch.manual_seed(0)
    out = {}
    n = 1 << 26
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out["copy_f32_2^26"] = gbps(lambda: y.copy_(x), 8 * n)
    out["axpy_f32_2^26"] = gbps(lambda: y.add_(x, alpha=0.75), 12 * n)
    n = 1 << 28
    x = torch.randn(n, device="cuda")
    yb = torch.empty(n, device="cuda", dtype=torch.bfloat16)
    out["cast_f32_bf16_2^28"] = gbps(lambda: yb.copy_(x), 6 * n)
    yf = torch.empty(n, device="cuda")
    out["copy_f32_2^28"] = gbps(lambda: yf.copy_(x), 8 * n)
    print(json.dumps({k: round(v, 1) for k, v in out.items()}))


if __name__ == "__main__":
    main()
