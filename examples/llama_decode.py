#!/usr/bin/env python3
"""Decode with a Hugging Face Llama-family model whose GEMMs and RMSNorms are aitune's
tuned kernels (q/k/v and gate/up one GEMM each): patch, warm up, capture one decode
step in a CUDA graph, replay it.

    python -m aitune tune MODEL/config.json --batch 1:8 --prompt 1:512 --db llama.db   # once, on this GPU
    python examples/llama_decode.py --model MODEL --registry llama.db --batch 4 --tokens 64
    python examples/llama_decode.py --config MODEL/config.json --registry llama.db     # random weights
    python examples/llama_decode.py --model MODEL --registry llama.db --batch 8 --race # pins, then decodes

--model loads a checkpoint (a folder or a hub name your transformers can reach);
--config builds the model with random bf16 weights (no download). It prints the
tokens/s with and without aitune (same model, same graph method), the shapes that
fell back to PyTorch, and writes those to the registry's misses table for
`python -m aitune tune --from-misses`.

--race first races each GEMM bucket's finalists in this decode step
(aitune.racing.race: the step captured once per finalist, timed against the
incumbent) and pins the fastest in the registry, which it changes. Where a sweep's
ranking does not hold inside the model (batch 8 on an H100: bench/RESULTS.md), the
decode that follows runs on the raced winners.

Exit 0 when the patched run's first tokens match PyTorch's, 1 when they differ, 2
without a GPU or transformers.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="a checkpoint: folder or hub name")
    src.add_argument("--config", help="a config.json: random weights")
    p.add_argument("--registry", required=True, help="the registry `python -m aitune tune` wrote")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--prompt", type=int, default=32, help="prompt tokens (random ids)")
    p.add_argument("--tokens", type=int, default=64, help="tokens to decode")
    p.add_argument("--race", action="store_true",
                   help="race each bucket's finalists in the patched step first and pin the fastest (writes the registry)")
    a = p.parse_args()
    if min(a.batch, a.prompt, a.tokens) < 1:
        p.error("--batch, --prompt and --tokens must be >= 1")
    if not os.path.isfile(a.registry):
        p.error("--registry %s: no such file (python -m aitune tune --help)" % a.registry)
    return a


def load(a, torch):
    import aitune
    import transformers
    if a.model:
        model = transformers.AutoModelForCausalLM.from_pretrained(a.model, dtype=torch.bfloat16, device_map="cuda")
        return model.eval(), model.config
    cfg = aitune.decoding.load_config(a.config)
    return aitune.decoding.random_model(cfg), cfg


def decode(model, cfg, a, torch, race=False):
    """(tokens [batch, a.tokens], seconds of the graph replays) for a.tokens steps; race:
    aitune.racing.race over this step first (the model patched)."""
    import aitune
    kw = aitune.decoding.cache_kw(model)
    cache = aitune.decoding.static_cache(cfg, a.batch, a.prompt + a.tokens + 4, "cuda", torch.bfloat16)
    g = torch.Generator(device="cuda").manual_seed(0)
    prompt = torch.randint(0, cfg.vocab_size, (a.batch, a.prompt), device="cuda", generator=g)
    with torch.no_grad():
        out = model(input_ids=prompt, cache_position=torch.arange(a.prompt, device="cuda"), use_cache=True,
                    logits_to_keep=1, **{kw: cache})
        ids = out.logits[:, -1:].argmax(-1)
        pos = torch.full((1,), a.prompt, dtype=torch.long, device="cuda")
        first = ids.clone()

        def step():
            logits = model(input_ids=ids, cache_position=pos, position_ids=pos.view(1, 1).expand(a.batch, 1),
                           use_cache=True, logits_to_keep=1, **{kw: cache}).logits
            ids.copy_(logits[:, -1:].argmax(-1))
            pos.add_(1)

        if race:
            # Each trial replays this one step: ids, the position and the cache's own
            # counters set back before every replay.
            capture = aitune.racing.replayable(step, [ids, pos] + aitune.decoding.cache_counters(cache))
            for r in aitune.racing.race(capture):
                print("race %s %s: %s -> %s%s" % (r["op"], r["bucket"], r["before"]["template"], r["after"]["template"],
                                                  " (pinned)" if r["changed"] else ""))
            capture.rewind()           # the race left ids, the position and the cache one step on
        # Warm-up outside the graph: aitune binds each shape's kernel here (a module
        # load is not allowed during capture).
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            step()
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step()
        tokens = [first, ids.clone()]
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(a.tokens - 2):
            graph.replay()
            tokens.append(ids.clone())
        torch.cuda.synchronize()
        return torch.cat(tokens, 1), time.perf_counter() - t


def main():
    a = parse()
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError as e:
        print("skip: %s" % e)
        return 2
    if not torch.cuda.is_available():
        print("skip: no CUDA device")
        return 2
    import aitune
    model, cfg = load(a, torch)
    want, t0 = decode(model, cfg, a, torch)
    p = aitune.patch(model, a.registry)
    try:
        got, t1 = decode(model, cfg, a, torch, race=a.race)
    finally:
        aitune.unpatch(model)          # also writes the misses to the registry
        if a.race:
            aitune.racing.close_trials()
    n = a.batch * (a.tokens - 2)
    print("PyTorch  %.1f tokens/s" % (n / t0))
    print("aitune   %.1f tokens/s (%.2fx); %s" % (n / t1, t0 / t1, p))
    for (op, dtype, shape), m in sorted(p.misses().items()):
        print("  fell back: %s %s %s (%d calls): %s" % (op, dtype, "x".join(map(str, shape)), m["count"], m["why"]))
    # q/k/v and gate/up ran as one GEMM each (aitune.grouping), unless a group had to stop.
    for g in p.groups:
        if g.off:
            print("  group %s ran separately: %s" % (g.name, g.off))
    # bf16 rounding differs between kernels, and greedy decoding amplifies it: the
    # first tokens must agree, later ones may drift.
    same = bool((got[:, :2] == want[:, :2]).all())
    print("first tokens %s PyTorch's" % ("match" if same else "DIFFER from"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
