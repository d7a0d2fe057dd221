"""Swap torch.softmax and F.rms_norm for the kernels aitune tuned, and check
the results against PyTorch's.

    make && aitune sweep specs/memory.yaml --db registry.db   # on the GPU box
    PYTHONPATH=python python3 examples/torch_swap.py registry.db

Exit 0 when every tuned result matches PyTorch's within the op's tolerance
(bf16: rtol 1.6e-2), 1 otherwise, 2 without PyTorch or a GPU.
"""
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("skip: no PyTorch")
    sys.exit(2)
if not torch.cuda.is_available():
    print("skip: no CUDA device")
    sys.exit(2)

import aitune  # noqa: E402

reg = aitune.Registry(sys.argv[1] if len(sys.argv) > 1 else "registry.db")


def softmax(x, dim=-1):
    """torch.softmax over the last dim of a contiguous 2-D tensor, tuned."""
    if dim not in (-1, x.dim() - 1) or x.dim() != 2 or not x.is_contiguous():
        return torch.softmax(x, dim)
    y = torch.empty_like(x)
    reg.launch("softmax", x, y, shape=tuple(x.shape))
    return y


def rms_norm(x, normalized_shape, weight, eps=1e-6):
    """F.rms_norm over the last dim with a weight, tuned."""
    rows, cols = x.numel() // x.shape[-1], x.shape[-1]
    y = torch.empty_like(x)
    reg.launch("rmsnorm", x, weight.contiguous(), y, float(eps), shape=(rows, cols))
    return y


bad = 0
for rows, cols in [(4096, 1024), (1000, 3000), (16384, 4096)]:
    x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(cols, device="cuda", dtype=torch.bfloat16)
    want = torch.softmax(x.float(), -1)
    got = softmax(x).float()
    err = ((got - want).abs() / (want.abs() + 1e-5)).max().item()
    ok = torch.allclose(got, want, rtol=1.6e-2, atol=1e-5)
    print("%s softmax %dx%d: max rel err %.3g" % ("ok  " if ok else "FAIL", rows, cols, err))
    bad += not ok
    want = F.rms_norm(x.float(), (cols,), w.float(), 1e-6)
    got = rms_norm(x, (cols,), w, 1e-6).float()
    ok = torch.allclose(got, want, rtol=1.6e-2, atol=1e-2)
    print("%s rms_norm %dx%d: max abs err %.3g" % ("ok  " if ok else "FAIL", rows, cols, (got - want).abs().max().item()))
    bad += not ok
torch.cuda.synchronize()
reg.flush_misses()   # shapes no bucket held go to the registry for the next sweep
sys.exit(1 if bad else 0)
