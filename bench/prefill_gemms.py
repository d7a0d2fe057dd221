#!/usr/bin/env python3
"""Llama-3-8B's prefill GEMMs (m = 2048 tokens) as the registry answers them against
PyTorch's cuBLAS, timed three ways in one process (issue 32: the patched prefill lost
2.5-5% to torch.compile alone while the sweep had its winners at 0.99-1.05x cuBLASLt).

    OUT=/tmp/out python bench/prefill_gemms.py --registry llama.db [--tokens 2048]

Per shape, aitune (torch.ops.aitune.linear: the registry's winner, or PyTorch's GEMM
where the vendor holds the bucket) and torch.mm in the model's way (F.linear over each
member weight: gate and up two products, where aitune.patch runs one over their fused
weight), each timed with CUDA events:
  - burst:     after 0.5 s of an idle GPU, 5 launches, the median (a sweep's view: a
               cool, unthrottled GPU);
  - sustained: after 1 s of the same launches back to back, the mean of 100 more (a
               prefill's view: 32 layers of GEMMs, the GPU at its power limit);
  - mixed:     both sides' launches alternating for 2 s, each side's mean over the last
               second (the same clock state for both).
The SM clock (torch.cuda.clock_rate, MHz) is read at the end of each sustained run.
Prints a table last; JSON lines in $OUT/prefill_gemms.jsonl.
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

# (name, fused n of the aitune side, the member weights' n of PyTorch's side, k)
SHAPES = (("q/k/v", 6144, (4096, 1024, 1024), 4096), ("o_proj", 4096, (4096,), 4096),
          ("gate/up", 28672, (14336, 14336), 4096), ("down", 4096, (4096,), 14336))


def clock(torch):
    try:
        return torch.cuda.clock_rate()
    except Exception:       # no pynvml
        return -1


def events_time(torch, fn, n):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(n):
        fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e) * 1e3 / n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--registry", required=True)
    ap.add_argument("--tokens", type=int, default=2048)
    a = ap.parse_args()
    import torch
    import torch.nn.functional as F
    import aitune
    import aitune.ops  # noqa: F401  (registers torch.ops.aitune)
    aitune.use(a.registry)
    dev = "cuda"
    out = open(os.path.join(os.environ.get("OUT", "."), "prefill_gemms.jsonl"), "a")
    x = {k: torch.randn(a.tokens, k, device=dev, dtype=torch.bfloat16) for k in (4096, 14336)}
    rows = []
    for name, n, members, k in SHAPES:
        w = torch.randn(n, k, device=dev, dtype=torch.bfloat16) * 0.02
        parts = list(torch.split(w, list(members))) if len(members) > 1 else [w]
        xi = x[k]
        ours = lambda: torch.ops.aitune.linear(xi, w, None)     # noqa: E731
        theirs = lambda: [F.linear(xi, p) for p in parts]       # noqa: E731
        ref = F.linear(xi, w).float()
        got = ours().float()
        err = ((got - ref).abs().max() / ref.abs().max()).item()
        row = {"shape": name, "m": a.tokens, "n": n, "k": k, "max_err_rel": err}
        for side, fn in (("aitune", ours), ("torch", theirs)):
            torch.cuda.synchronize()
            time.sleep(0.5)
            row[side + "_burst_us"] = min(events_time(torch, fn, 1) for _ in range(5))
            t0 = time.time()
            while time.time() - t0 < 1.0:
                events_time(torch, fn, 20)
            row[side + "_sustained_us"] = events_time(torch, fn, 100)
            row[side + "_clock_mhz"] = clock(torch)
        tot = {"aitune": [0.0, 0], "torch": [0.0, 0]}
        t0 = time.time()
        while time.time() - t0 < 2.0:
            late = time.time() - t0 > 1.0
            for side, fn in (("aitune", ours), ("torch", theirs)):
                us = events_time(torch, fn, 5)
                if late:
                    tot[side][0] += us
                    tot[side][1] += 1
        for side in tot:
            row[side + "_mixed_us"] = tot[side][0] / max(tot[side][1], 1)
        out.write(json.dumps(row) + "\n")
        out.flush()
        rows.append(row)
        del w, parts
    print("\nprefill GEMMs at m = %d on %s (us; x = torch / aitune)" % (a.tokens, torch.cuda.get_device_name()))
    print("| shape | aitune burst | torch burst | x | aitune sustained | torch sustained | x | mixed aitune | mixed torch | x | clock MHz a/t | err |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print("| %s | %.1f | %.1f | %.3f | %.1f | %.1f | %.3f | %.1f | %.1f | %.3f | %s/%s | %.4f |" % (
            r["shape"], r["aitune_burst_us"], r["torch_burst_us"], r["torch_burst_us"] / r["aitune_burst_us"],
            r["aitune_sustained_us"], r["torch_sustained_us"], r["torch_sustained_us"] / r["aitune_sustained_us"],
            r["aitune_mixed_us"], r["torch_mixed_us"], r["torch_mixed_us"] / r["aitune_mixed_us"],
            r["aitune_clock_mhz"], r["torch_clock_mhz"], r["max_err_rel"]))


if __name__ == "__main__":
    main()
