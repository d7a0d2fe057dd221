#!/usr/bin/env python3
"""A decode GEMM timed the way a model's graph runs it: does the registry's answer keep
its sweep time there, and does it keep its rank?

    OUT=/tmp/out python bench/weight_pool.py --registry e2e8.db [--registry other.db ...]
        [--m 8] [--shapes 4096x4096,28672x4096] [--pool-gb 12] [--neighbour mul,gemm]

Why. bench/llama_profile.py --timeline found, in a Llama-3-8B batch-8 decode step,
aitune's gemv kernels 12-54% slower than their neighbour-timed sweep times and slower
than swapab's there, where the sweep ranked gemv first (bench/RESULTS.md, sixth
session). This probe varies one thing at a time that differs between a sweep and a
model: how many weights there are (`few`: 4 copies, as a sweep's; `many`: --pool-gb of
copies, each read once per round, as a model's 16 GB), and what runs before each launch
(`mul`: an elementwise kernel writing the input, as a norm does; `gemm`: a cuBLAS
product over another 4096-row weight, then mul, as a model's previous projection).

What. Per registry and weight shape (N x K, bf16, F.linear's layout): torch.ops.aitune.linear
(the registry's answer) and F.linear (cuBLAS) on m x K inputs, each a CUDA graph of
--launches launches after their neighbour, median of 5 replays, the neighbour's own
graph time per launch taken off. Each registry's answer is checked against F.linear
first (the "check" field: None, or the difference). Prints a table last; JSON lines
in $OUT/weight_pool.jsonl.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))


def graph_us(torch, body, launches, reps=5):
    """Median us per launch of `body(i)` for i in 0..launches-1, captured in one graph."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i in range(launches):     # warm-up: binds every launch outside capture
            body(i)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(launches):
            body(i)
    g.replay()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1e3 / launches)
    del g
    return sorted(ts)[len(ts) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--registry", action="append", required=True)
    ap.add_argument("--m", type=int, default=8)
    ap.add_argument("--shapes", default="4096x4096,28672x4096")
    ap.add_argument("--pool-gb", type=float, default=12.0)
    ap.add_argument("--launches", type=int, default=200)
    ap.add_argument("--neighbour", default="mul",
                    help="what runs before each launch: mul (an elementwise kernel writing the input), or "
                         "gemm (a cuBLAS GEMM over another 4096 x 4096 weight, then mul: a model's previous "
                         "projection); comma-separated for several")
    a = ap.parse_args()
    import torch
    import torch.nn.functional as F
    import aitune
    out = os.environ.get("OUT", ".")
    log = open(os.path.join(out, "weight_pool.jsonl"), "a")
    dev, bf = "cuda", torch.bfloat16
    rows = []
    torch.manual_seed(0)
    for shape in a.shapes.split(","):
        n, k = (int(v) for v in shape.split("x"))
        per = n * k * 2
        many = max(8, int(a.pool_gb * 2**30 // per))
        pool = [torch.randn(n, k, device=dev, dtype=bf) / k**0.5 for _ in range(min(many, 4))]
        pool += [torch.empty(n, k, device=dev, dtype=bf) for _ in range(many - 4)]
        for w in pool[4:]:
            w.copy_(pool[0])
        x0 = torch.randn(a.m, k, device=dev, dtype=bf)
        xb = x0.clone()
        other = [torch.randn(4096, k, device=dev, dtype=bf) for _ in range(8)]
        for nb in a.neighbour.split(","):
            def neigh(i, nb=nb):
                if nb == "gemm":
                    F.linear(xb, other[i % 8])
                return xb.mul_(1.0)        # writes the input, as a norm before a GEMM does
            t_neigh = graph_us(torch, neigh, a.launches)
            for reg in a.registry:
                aitune.use(reg)
                ref = F.linear(x0, pool[0])
                diff = aitune.ops.differs(torch.ops.aitune.linear(x0, pool[0]), ref)
                for name, fn in (("aitune", torch.ops.aitune.linear), ("F.linear", F.linear)):
                    for what, count in (("few", 4), ("many", many)):
                        def body(i, fn=fn, count=count):
                            neigh(i)
                            return fn(xb, pool[i % count])
                        us = graph_us(torch, body, max(a.launches, count)) - t_neigh
                        row = {"registry": os.path.basename(reg), "shape": "%dx%dx%d" % (a.m, n, k), "way": name,
                               "pool": "%s (%d x %.0f MB)" % (what, count, per / 1e6), "neighbour": nb,
                               "us": round(us, 2), "TB/s": round(per / us / 1e6, 3), "check": diff}
                        rows.append(row)
                        log.write(json.dumps(row) + "\n")
                        log.flush()
                        print(row, flush=True)
        del pool
        torch.cuda.empty_cache()
    print("\n| registry | shape | neighbour | way | weights | us per launch | TB/s |\n| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print("| %s | %s | %s | %s | %s | %.2f | %.2f |" % (r["registry"], r["shape"], r["neighbour"], r["way"], r["pool"],
                                                       r["us"], r["TB/s"]))


if __name__ == "__main__":
    main()
