#!/usr/bin/env python3
"""A gated MLP's first half at prefill sizes: the registry's gemm_swiglu kernel (one
kernel: both products, SiLU and the multiply) against what torch.compile runs for
silu(gate_proj(x)) * up_proj(x) (two cuBLAS GEMMs and one Inductor kernel), in one
process on one GPU.

    OUT=/tmp/out python bench/swiglu_prefill.py --registry sw.db [--tokens 2048,512]
        [--n 14336] [--k 4096] [--layers 32]

Each side is a chain of `layers` calls over `layers` different weight pairs (a model's
layers: every call reads weights no earlier call of the chain left in L2), captured in
one CUDA graph and replayed back to back for 2 s, alternating the sides every replay
so both run at the same clock (sustained: a prefill holds an H100 at its power limit);
the time per call is each side's mean over the last second. Sides:
  - compile:  torch.compile of lambda x, g, u: F.silu(F.linear(x, g)) * F.linear(x, u)
  - grouped:  torch.compile of the same over one [2n, k] weight (F.linear, then chunk):
              what aitune.patch's grouped gate/up gives Inductor where the vendor holds it
  - aitune:   the registry's gemm_swiglu launch (aitune's Dispatcher, bound per weight)
  - aitune-grouped: where the registry has gemm_nt at (m, 2n, k): torch.compile of
              torch.ops.aitune.linear over the [2n, k] weight, then silu * mul (what
              aitune.patch gives Inductor without the fused product: a decode's peer)
The aitune output is checked first against an fp32 reference of the same inputs (worst
error relative to the largest |reference|) and against the compiled side's bf16 output.
Prints a table last; JSON lines in $OUT/swiglu_prefill.jsonl.
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--registry", required=True)
    ap.add_argument("--tokens", default="2048")
    ap.add_argument("--n", type=int, default=14336)
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=2.0)
    a = ap.parse_args()
    import torch
    import torch.nn.functional as F
    from aitune import dispatch
    import aitune.ops  # noqa: F401 (registers torch.ops.aitune)

    dev = torch.device("cuda")
    d = dispatch.use(a.registry)
    n, k, L = a.n, a.k, a.layers
    torch.manual_seed(0)
    # Weights of a trained model's scale (|w| ~ 1/sqrt(k)): SiLU sees gates of order 1.
    ws = [torch.randn(2 * n, k, device=dev, dtype=torch.bfloat16) / k ** 0.5 for _ in range(L)]
    gates = [w[:n] for w in ws]
    ups = [w[n:] for w in ws]

    def unfused(x, g, u):
        return F.silu(F.linear(x, g)) * F.linear(x, u)

    def grouped(x, w):
        gu = F.linear(x, w)
        g, u = gu.chunk(2, dim=-1)
        return F.silu(g) * u

    def ours_grouped(x, w):
        gu = torch.ops.aitune.linear(x, w)
        g, u = gu.chunk(2, dim=-1)
        return F.silu(g) * u

    cu = torch.compile(unfused, dynamic=False)
    cg = torch.compile(grouped, dynamic=False)
    ca = torch.compile(ours_grouped, dynamic=False, fullgraph=True)
    out_path = os.path.join(os.environ.get("OUT", "/tmp"), "swiglu_prefill.jsonl")
    rows = []
    for m in [int(t) for t in a.tokens.split(",")]:
        x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        b = d.bound("gemm_swiglu", "bf16", (m, n, k), 0)
        if b is None:
            print("m=%d: the registry has no gemm_swiglu kernel for (%d, %d, %d): %s"
                  % (m, m, n, k, d.misses()), file=sys.stderr)
            continue
        outs = [torch.empty(m, n, device=dev, dtype=torch.bfloat16) for _ in range(L)]

        def ours(i):
            b.launch([x.data_ptr(), ws[i].data_ptr(), outs[i].data_ptr()], torch.cuda.current_stream().cuda_stream)

        # Correctness first: NaN-poisoned output, fp32 reference.
        outs[0].fill_(float("nan"))
        ours(0)
        torch.cuda.synchronize()
        ref = unfused(x.float(), gates[0].float(), ups[0].float())
        err = ((outs[0].float() - ref).abs().max() / ref.abs().max()).item()
        comp = cu(x, gates[0], ups[0])
        err_c = ((comp.float() - ref).abs().max() / ref.abs().max()).item()
        nan = bool(torch.isnan(outs[0]).any())

        sides = {
            "compile": lambda i: cu(x, gates[i], ups[i]),
            "grouped": lambda i: cg(x, ws[i]),
            "aitune": ours,
        }
        if d.answer("gemm_nt", "bf16", (m, 2 * n, k), 0):
            sides["aitune-grouped"] = lambda i: ca(x, ws[i])
        graphs = {}
        for name, f in sides.items():
            for i in range(L):      # warm-up: compile, bind, allocate
                f(i)
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for i in range(L):
                    f(i)
            graphs[name] = g
        torch.cuda.synchronize()
        times = {s: [] for s in sides}
        ev = {s: (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for s in sides}
        t_end = time.time() + a.seconds
        half = time.time() + a.seconds / 2
        while time.time() < t_end:
            for s, g in graphs.items():
                e0, e1 = ev[s]
                e0.record()
                g.replay()
                e1.record()
                e1.synchronize()
                if time.time() >= half:
                    times[s].append(e0.elapsed_time(e1) * 1e3 / L)
        us = {s: sum(v) / len(v) for s, v in times.items()}
        flops = 4.0 * m * n * k
        row = {"m": m, "n": n, "k": k, "us": us, "tflops": {s: flops / t / 1e6 for s, t in us.items()},
               "err": err, "err_compile": err_c, "nan": nan, "template": b.kernel.template,
               "config": b.kernel.config, "replays": len(times["aitune"])}
        rows.append(row)
        with open(out_path, "a") as f:
            f.write(json.dumps(row) + "\n")
    print("%6s %10s %10s %10s %10s %8s %8s %8s %9s %9s" % ("m", "compile", "grouped", "ait-grp", "aitune", "x comp",
                                                           "x group", "x a-grp", "err", "err comp"))
    for r in rows:
        u = r["us"]
        ag = u.get("aitune-grouped")
        print("%6d %8.1fus %8.1fus %10s %8.1fus %7.3fx %7.3fx %8s %9.2e %9.2e%s" % (
            r["m"], u["compile"], u["grouped"], "%.1fus" % ag if ag else "-", u["aitune"], u["compile"] / u["aitune"],
            u["grouped"] / u["aitune"], "%.3fx" % (ag / u["aitune"]) if ag else "-", r["err"], r["err_compile"],
            "  NaN!" if r["nan"] else ""))
    return 0 if rows and all(not r["nan"] and r["err"] < 2e-2 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
