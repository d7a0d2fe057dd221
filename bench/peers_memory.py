"""Peers for the memory-bound families: PyTorch eager and torch.compile
(mode max-autotune-no-cudagraphs: Inductor's Triton kernels, autotuned), on
the same shapes aitune tunes, timed like aitune times (median of CUDA-event
timings, L2 cleared between runs: triton.testing.do_bench).

    python3 bench/peers_memory.py [--no-compile] CASE...
    CASE: op:dtype:shape, e.g. softmax:bf16:32768x4096, reduce_all:f32:268435456

Prints one JSON object per line: {"case", "eager_gbps", "compile_gbps",
"compile_s"}; GB/s counts the fewest bytes (inputs once, outputs once)."""
import json
import sys
import time

import torch
import torch.nn.functional as F
from triton.testing import do_bench

DT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def case(op, dt, shape):
    """The function, its inputs and the bytes it must move."""
    t = DT[dt]
    es = torch.tensor([], dtype=t).element_size()
    if op == "reduce_all":
        (n,) = shape
        x = torch.rand(n, device="cuda", dtype=t)
        return (lambda x: x.sum(dtype=torch.float32)), (x,), n * es + 4
    rows, cols = shape
    x = torch.randn(rows, cols, device="cuda", dtype=t)
    w = torch.randn(cols, device="cuda", dtype=t)
    b = torch.randn(cols, device="cuda", dtype=t)
    n = rows * cols
    if op == "softmax":
        return (lambda x: torch.softmax(x, dim=-1)), (x,), 2 * n * es
    if op == "layernorm":
        return (lambda x, w, b: F.layer_norm(x, (cols,), w, b, 1e-5)), (x, w, b), 2 * n * es + 2 * cols * es
    if op == "rmsnorm":
        return (lambda x, w: F.rms_norm(x, (cols,), w, 1e-6)), (x, w), 2 * n * es + cols * es
    if op == "transpose":
        return (lambda x: x.t().contiguous()), (x,), 2 * n * es
    if op == "reduce_rows":
        return (lambda x: x.sum(dim=-1, dtype=torch.float32).to(t)), (x,), n * es + rows * es
    if op == "reduce_rows_max":
        return (lambda x: x.amax(dim=-1)), (x,), n * es + rows * es
    raise SystemExit("unknown op " + op)


def gbps(fn, args, nbytes):
    ms = do_bench(lambda: fn(*args), warmup=25, rep=200, return_mode="median")
    return nbytes / (ms * 1e-3) / 1e9


def main():
    compile_too = "--no-compile" not in sys.argv
    for spec in [a for a in sys.argv[1:] if not a.startswith("--")]:
        op, dt, shape = spec.split(":")
        shape = tuple(int(v) for v in shape.split("x"))
        fn, args, nbytes = case(op, dt, shape)
        out = {"case": spec, "eager_gbps": round(gbps(fn, args, nbytes), 1)}
        if compile_too:
            t0 = time.time()
            cfn = torch.compile(fn, mode="max-autotune-no-cudagraphs", dynamic=False)
            cfn(*args)
            torch.cuda.synchronize()
            out["compile_s"] = round(time.time() - t0, 1)
            out["compile_gbps"] = round(gbps(cfn, args, nbytes), 1)
        print(json.dumps(out), flush=True)
        del args
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
