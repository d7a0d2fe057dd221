#!/usr/bin/env python3
"""Where a Llama-3-8B decode step's GPU time goes, torch.compile with and without
aitune.patch (issue 32): the step captured in a CUDA graph as bench/llama_e2e.py
captures it, then replayed under torch.profiler; per variant the step's wall time,
the kernels' summed time, their count, and the kernels that take the most.

    OUT=/tmp/out python bench/llama_profile.py --registry llama.db [--batch 1]
        [--variants compile,compile+patch,compile+patch-norms,compile+patch-linear,compile+patch-nogroup]
        [--repeat R] [--prefill TOKENS] [--timeline]

--repeat R captures each variant's step R times (new graphs, new addresses) and
prints each capture's step time: a variance between captures of one process is
one of the graph's memory, not of the machine. --prefill TOKENS profiles a
prefill of TOKENS tokens (batch 1, torch.compile, no graph; the median of 10
after 2 warm-up) in place of the decode step, and with --repeat R runs the
variants round-robin R times.

--timeline adds each kernel's share of the step's wall: its end minus the previous
kernel's end, per kernel name and per (previous kernel, kernel) pair. A kernel's
duration overstates a pdl kernel (it starts early and waits for the one before it);
its share counts what the step pays for it, so it is what to compare with the
kernel's sweep time.

Variants: compile (torch.compile, default mode), compile+patch (aitune.patch as it is:
the Linears' aitune::linear in the graph, q/k/v and gate/up one aitune::linear_group
each, the patched norms computing PyTorch's way there, which Inductor fuses),
compile+patch-nogroup (patch(group=False): every projection its own GEMM), compile+patch-norms (patch(norms="always"): the norms'
aitune::rms_norm in the graph too), compile+patch-linear (patch(norms=False): the
norms not patched at all). Prints a table per variant; JSON lines in
$OUT/llama_profile.jsonl.
"""

import argparse
import collections
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--registry", required=True)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--variants", default="compile,compile+patch,compile+patch-norms,compile+patch-linear")
    ap.add_argument("--steps", type=int, default=48)
    ap.add_argument("--top", type=int, default=14)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--prefill", type=int, default=0)
    ap.add_argument("--timeline", action="store_true",
                    help="also each kernel's share of the wall: its end minus the previous kernel's end, "
                         "summed per name and per (previous, name) pair")
    a = ap.parse_args()
    bad = set(a.variants.split(",")) - {"compile", "compile+patch", "compile+patch-norms", "compile+patch-linear",
                                        "compile+patch-nogroup"}
    if bad:
        ap.error("--variants: unknown %s" % ", ".join(sorted(bad)))
    import torch
    import aitune
    import llama_e2e as e2e
    ea = e2e.parse(["--registry", a.registry, "--steps", str(a.steps)])
    d = aitune.use(a.registry)
    model, cfg, _ = e2e.build(ea, torch)
    out = os.environ.get("OUT", ".")
    log = open(os.path.join(out, "llama_profile.jsonl"), "a")
    variants = a.variants.split(",")
    rounds = [(r, v) for r in range(a.repeat) for v in variants] if a.prefill else \
        [(r, v) for v in variants for r in range(a.repeat)]
    for r, v in rounds:
        torch._dynamo.reset()
        p = None
        if v.startswith("compile+patch"):
            p = aitune.patch(model, d, norms={"compile+patch": True, "compile+patch-norms": "always",
                                              "compile+patch-linear": False, "compile+patch-nogroup": True}[v],
                             group=v != "compile+patch-nogroup")
        try:
            t0 = time.time()
            if a.prefill:
                run_once, dt = e2e.timed_prefill(torch, model, cfg, a.prefill, "cuda")
                what = "prefill %d tokens" % a.prefill
            else:
                dec = e2e.Decoder(model, cfg, a.batch, ea, torch, None)
                dec.fn = torch.compile(dec.forward, mode="default")
                dec.capture()
                dt = dec.run(a.steps) / a.steps
                run_once, what = dec.graph.replay, "batch %d" % a.batch
            setup = time.time() - t0
            if r and not a.prefill:
                print("== %s, %s, capture %d: step %.3f ms" % (v, what, r + 1, dt * 1e3))
                log.write(json.dumps({"variant": v, "batch": a.batch, "capture": r + 1, "step_ms": dt * 1e3}) + "\n")
                continue
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                for _ in range(3):
                    run_once()
                torch.cuda.synchronize()
            by = collections.defaultdict(lambda: [0.0, 0])
            for ev in prof.events():
                if ev.device_type == torch.autograd.DeviceType.CUDA:
                    k = by[ev.name[:90]]
                    k[0] += ev.device_time_total / 3.0
                    k[1] += 1
            total = sum(x[0] for x in by.values())
            count = sum(x[1] for x in by.values()) / 3.0
            print("\n== %s, %s, round %d: step %.3f ms wall, %.3f ms in %d kernels (setup %.0f s)"
                  % (v, what, r + 1, dt * 1e3, total / 1e3, count, setup))
            for name, (us, n) in sorted(by.items(), key=lambda kv: -kv[1][0])[:a.top]:
                print("  %8.1f us %4d x  %s" % (us, n // 3, name))
            if a.timeline:
                timeline(torch, prof, a.top, log, v)
            log.write(json.dumps({"variant": v, "batch": a.batch, "prefill": a.prefill, "round": r + 1,
                                  "step_ms": dt * 1e3, "kernel_ms": total / 1e3, "kernels": count,
                                  "top": sorted(((n, us) for n, (us, c) in by.items()),
                                                key=lambda x: -x[1])[:40]}) + "\n")
            log.flush()
        finally:
            if p is not None:
                aitune.unpatch(model)


def timeline(torch, prof, top, log, variant):
    """Each kernel's share of the wall (a graph runs them one after another): its end
    minus the previous kernel's end, summed per name over the 3 replays and divided by
    3. Unlike the kernels' durations this counts a pdl kernel's early start (its wait
    for the kernel before it) once, as the wall does; printed per name and per
    (previous kernel, kernel) pair."""
    evs = sorted((ev for ev in prof.events() if ev.device_type == torch.autograd.DeviceType.CUDA),
                 key=lambda ev: ev.time_range.start)
    share = collections.defaultdict(lambda: [0.0, 0])
    pair = collections.defaultdict(lambda: [0.0, 0])
    prev_end, prev_name = None, "-"
    for ev in evs:
        name = ev.name[:60]
        if prev_end is not None and ev.time_range.start - prev_end < 1000:   # the same replay
            us = ev.time_range.end - prev_end
            share[name][0] += us / 3.0
            share[name][1] += 1
            pair[(prev_name, name)][0] += us / 3.0
            pair[(prev_name, name)][1] += 1
        prev_end, prev_name = max(prev_end or 0, ev.time_range.end), name
    print("  share of the wall (end - previous end), per kernel: %.1f us in all" % sum(x[0] for x in share.values()))
    for name, (us, n) in sorted(share.items(), key=lambda kv: -kv[1][0])[:top]:
        print("  %8.1f us %4d x  %6.2f us each  %s" % (us, n // 3, us * 3 / max(n, 1), name))
    print("  per (previous, kernel) pair, aitune's kernels:")
    for (p, name), (us, n) in sorted(pair.items(), key=lambda kv: -kv[1][0]):
        if name.startswith("aitune"):
            print("  %8.1f us %4d x  %6.2f us each  %s <- %s" % (us, n // 3, us * 3 / max(n, 1), name, p[:50]))
    log.write(json.dumps({"variant": variant, "share": sorted(((n, us) for n, (us, c) in share.items()),
                                                              key=lambda x: -x[1])[:40]}) + "\n")


if __name__ == "__main__":
    main()
