#!/usr/bin/env python3
"""A Llama-3-8B decode step before and after aitune.racing.race (issue 32): the finalists of
each GEMM bucket the step uses, raced in the step itself, against torch.compile alone.

    OUT=/tmp/out python bench/llama_race.py --registry e2e8.db [--batch 8] [--rounds 3]
        [--replays 10] [--timed 5]

The registry is copied to $OUT/race.db first and only the copy is pinned. One process:
the model (random bf16 weights, bench/llama_e2e.py's build), torch.compile's decode step
(static shapes) in a CUDA graph; aitune.patch's step, compiled the same way; race() over
the patched step (each trial captures the step again; the position and the static
cache's per-layer counts are set back before each replay, so every replay decodes the
same token position); then the patched step
captured on the raced registry. torch.compile's step is timed before patch (patch's
grouping frees the weights' old storage, which its graph reads); the patched steps
before and after the race are timed interleaved (--timed rounds of --replays replays
each, the median per round, the median of the rounds), and the
table printed last gives each step's ms and x torch.compile, and the buckets the race
changed. JSON lines in $OUT/llama_race.jsonl.
"""

import argparse
import json
import os
import sqlite3
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--registry", required=True)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3, help="race: rounds of incumbent / finalist timing (default 3)")
    ap.add_argument("--replays", type=int, default=10, help="replays per timing (default 10)")
    ap.add_argument("--timed", type=int, default=5, help="rounds of the final interleaved timing (default 5)")
    a = ap.parse_args()
    import torch
    import aitune
    import aitune.racing as racing
    import aitune.decoding as decoding
    import llama_e2e as e2e
    out = os.environ.get("OUT", ".")
    log = open(os.path.join(out, "llama_race.jsonl"), "a")
    db = os.path.join(out, "race.db")
    src, dst = sqlite3.connect("file:%s?mode=ro" % a.registry, uri=True), sqlite3.connect(db)
    src.backup(dst)
    src.close()
    dst.close()
    ea = e2e.parse(["--registry", db, "--steps", "8"])
    d = aitune.use(db)
    model, cfg, _ = e2e.build(ea, torch)
    timer = racing.cuda_timer(a.replays)

    def step_of(dec):
        # Every replay decodes the same position: the step's position, its ids and each
        # cache layer's own count (transformers' StaticLayer.cumulative_length, which
        # every update advances whatever cache_position says) set back before it.
        return racing.replayable(dec.step, [dec.pos, dec.ids] + decoding.cache_counters(dec.cache))

    torch._dynamo.reset()
    dec_c = e2e.Decoder(model, cfg, a.batch, ea, torch, None)
    dec_c.fn = torch.compile(dec_c.forward, mode="default", dynamic=False)
    base = step_of(dec_c)()
    # torch.compile's step is timed now: patch's grouping moves the weights into one
    # buffer per group (their old storage freed), so this graph cannot run after it.
    t_compile = [timer(base) for _ in range(a.timed)]
    del base
    p = aitune.patch(model, d)
    dec_p = e2e.Decoder(model, cfg, a.batch, ea, torch, None)
    dec_p.fn = torch.compile(dec_p.forward, mode="default", dynamic=False)
    capture = step_of(dec_p)
    before = capture()
    tc, tb = statistics.median(t_compile), timer(before)
    print("before the race: compile %.3f ms, compile + patch %.3f ms (%.3fx)" % (tc * 1e3, tb * 1e3, tc / tb),
          flush=True)
    report = racing.race(capture, timer=timer, rounds=a.rounds, log=lambda s: print(s, flush=True))
    for r in report:
        log.write(json.dumps(r) + "\n")
    after = capture()                       # the current dispatcher: the raced registry
    ts = {"compile": t_compile, "compile + patch": [], "compile + patch, raced": []}
    for _ in range(a.timed):
        for name, fn in (("compile + patch", before), ("compile + patch, raced", after)):
            ts[name].append(timer(fn))
    med = {k: statistics.median(v) for k, v in ts.items()}
    log.write(json.dumps({"batch": a.batch, "step_ms": {k: v * 1e3 for k, v in med.items()}}) + "\n")
    aitune.unpatch(model)
    del p
    print("\nllama_race on %s, batch %d (step in a CUDA graph, median of %d rounds of %d replays)"
          % (torch.cuda.get_device_name(), a.batch, a.timed, a.replays))
    print("| step | ms | x torch.compile |\n| --- | --- | --- |")
    for k, v in med.items():
        print("| %s | %.3f | %.3fx |" % (k, v * 1e3, med["compile"] / v))
    print("\n| bucket | before | after | step ms: finalist / incumbent |\n| --- | --- | --- | --- |")
    for r in report:
        tried = "; ".join("%s %.3f / %.3f" % (x["template"].split("/")[-1], x["step_s"] * 1e3, x["incumbent_s"] * 1e3)
                          for x in r["tried"]) or "no other finalist with its kernel"
        print("| %s %s | %s | %s | %s |" % (r["op"], r["bucket"], r["before"]["template"], r["after"]["template"]
                                          + (" (changed)" if r["changed"] else ""), tried))


if __name__ == "__main__":
    main()
