#!/usr/bin/env python3
"""Issue 32's bar table in one call: transformers' LlamaForCausalLM with the
Llama-3-8B configuration (random bf16 weights, built on the GPU), a static KV cache,
one decode step captured in a CUDA graph.

    python -m aitune tune llama3-8b.json --batch 1:32 --prompt 128:2048 --db llama.db  # first, on the GPU
    OUT=/tmp/out python bench/llama_e2e.py --registry llama.db

Measures, each in this process on this GPU (so every ratio is same card, same run):
  - tokens/s of decoding (batch x steps / time of `steps` graph replays, after a
    prompt of --prompt tokens) at each --batches for: cuBLAS eager (PyTorch as it
    is), eager + aitune.patch, torch.compile (default mode; static shapes, each batch
    compiled for its own size, as transformers' compiled generation does: its
    CompileConfig's dynamic=False; --dynamic lets Dynamo make the batch symbolic once
    it has seen two sizes, as plain torch.compile does), torch.compile + patch
    (patch's defaults: q/k/v and gate/up grouped), and where --variants asks,
    patch-nogroup and compile+patch-nogroup (patch(group=False)), and patch-nofuse and
    compile+patch-nofuse (patch(swiglu=False): gate/up grouped, each MLP's gate/up and
    silu * mul not one gemm_swiglu);
  - batch 1 without a graph: eager and eager + patch (host overhead included);
  - a --prefill-token prefill (batch 1), torch.compile with and without patch, each
    variant on a model of its own (a patched copy; one after the other where the GPU
    cannot hold the copy), timed round-robin: at the power limit a prefill's clock
    follows the work just done, so the variant timed second would run slower;
  - host time per call of 1 x 4096 x 4096: aitune.nn.Linear's eager forward and
    torch.ops.aitune.linear against torch.mm and F.linear (--host-calls calls each);
  - check=True over one decode step (every patched call compared with PyTorch's on
    the same input) and the step's logits against unpatched PyTorch's.
Prints a short table last; writes details (JSON lines, one per measurement, as
they land, so a run cut short keeps what it measured) to $OUT/llama_e2e.jsonl.

--quick: batches 1 and 8 only, 32 steps, no prefill, 1000 host calls (about
5 minutes on an H100 with the registry tuned beforehand; the full run measures
batch 32 and the prefill too). The last table is issue 32's bars, each with its
measured ratio and whether it is met ("not measured" where the run left it out).

--gpus N spreads the work over N GPUs of this host, one process of this script
each: a unit whose ratios belong together (the host times; one batch's variants;
batch 1 without a graph; the prefill's variants; the check) runs whole in one
process, so every ratio is still same card, same run. The process that times the
host runs alone until those times are taken: another process's compiling would
share the host's CPU with them (the tenth session's two runs timed them beside
it). The lines come
with [gpu K] before them; each writes its own OUT/gpuK/llama_e2e.jsonl; the tables
are printed once, from all of them. A full run takes about 10 minutes on one H100
and about half that on two.

--tiny runs a 2-layer model of the same structure (on the CPU with --device cpu:
no graphs, a smoke test of this script).
"""

import argparse
import json
import os
import signal
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

LLAMA3_8B = dict(hidden_size=4096, intermediate_size=14336, num_attention_heads=32, num_key_value_heads=8,
                 num_hidden_layers=32, vocab_size=128256, head_dim=128, rms_norm_eps=1e-5, rope_theta=500000.0,
                 max_position_embeddings=8192)
VARIANTS = ("eager", "patch", "compile", "compile+patch", "patch-nogroup", "compile+patch-nogroup", "patch-nofuse",
            "compile+patch-nofuse")
TINY = dict(hidden_size=256, intermediate_size=512, num_attention_heads=4, num_key_value_heads=2,
            num_hidden_layers=2, vocab_size=1000, head_dim=64, rms_norm_eps=1e-5, rope_theta=500000.0,
            max_position_embeddings=4096)


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--registry", required=True, help="the registry `python -m aitune tune` wrote")
    p.add_argument("--batches", default="1,8,32", help="decode batch sizes (default 1,8,32; '': none, the prefill only)")
    p.add_argument("--steps", type=int, default=48, help="decode steps timed per batch (default 48)")
    p.add_argument("--prompt", type=int, default=128, help="prompt tokens before decoding (default 128)")
    p.add_argument("--prefill", type=int, default=2048, help="tokens of the timed prefill (default 2048; 0: none)")
    p.add_argument("--host-calls", type=int, default=2000, help="calls per host-time measurement (default 2000)")
    p.add_argument("--variants", default="eager,patch,compile,compile+patch",
                   help="which of eager, patch, compile, compile+patch, patch-nogroup, compile+patch-nogroup, "
                   "patch-nofuse, compile+patch-nofuse "
                   "(default the first four)")
    p.add_argument("--quick", action="store_true",
                   help="batches 1 and 8, 32 steps, no prefill, 1000 host calls (given options win)")
    p.add_argument("--tiny", action="store_true", help="a 2-layer model (a smoke test)")
    p.add_argument("--dynamic", action="store_true",
                   help="torch.compile's default dynamic shapes (the batch symbolic after two sizes: on an H100 "
                        "the patched batch-32 step varied by 9%% between runs that way); default: static per batch")
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help="cpu: no graphs (with --tiny)")
    p.add_argument("--out", default=os.environ.get("OUT", "."), help="folder for llama_e2e.jsonl (default $OUT)")
    p.add_argument("--gpus", type=int, default=1,
                   help="spread the work over N GPUs of this host, a process each (default 1): each ratio still "
                        "comes from one process on one GPU; a full run on 2 takes about half the time")
    p.add_argument("--units", help=argparse.SUPPRESS)     # --gpus' processes: the units each runs
    p.add_argument("--result", help=argparse.SUPPRESS)    # and where it writes what it measured
    p.add_argument("--host-done", help=argparse.SUPPRESS)  # a file written once the host times are taken
    a = p.parse_args(argv)
    if a.quick:
        given = set(argv if argv is not None else sys.argv[1:])
        for opt, attr, val in (("--batches", "batches", "1,8"), ("--steps", "steps", 32), ("--prefill", "prefill", 0),
                               ("--host-calls", "host_calls", 1000)):
            if not any(g == opt or g.startswith(opt + "=") for g in given):
                setattr(a, attr, val)
    try:
        a.batches = [int(b) for b in a.batches.split(",") if b]
    except ValueError:
        p.error("--batches: a comma-separated list of integers")
    a.variants = [v for v in a.variants.split(",") if v]
    bad = set(a.variants) - set(VARIANTS)
    if bad or not a.variants:
        p.error("--variants: unknown %s" % ", ".join(sorted(bad)))
    if (a.batches and min(a.batches) < 1) or (not a.batches and not a.prefill) or a.steps < 1 or a.prompt < 1 or a.prefill < 0 or a.host_calls < 1:
        p.error("batches, steps, prompt and host-calls must be >= 1, prefill >= 0")
    if a.gpus < 1:
        p.error("--gpus: at least 1 (with --device cpu: that many processes, a test of the spreading)")
    if a.units is not None:
        a.units = [u for u in a.units.split(",") if u]
        if not a.units or set(a.units) - set(units(a)):
            p.error("--units: some of %s" % ",".join(units(a)))
    if a.device == "cpu" and not a.tiny:
        p.error("--device cpu needs --tiny (8B parameters on the CPU would take hours)")
    if not os.path.isfile(a.registry):
        p.error("--registry %s: no such file (tune first: python -m aitune tune --help)" % a.registry)
    return a


class Log:
    def __init__(self, folder):
        os.makedirs(folder, exist_ok=True)
        self.path = os.path.join(folder, "llama_e2e.jsonl")
        self.f = open(self.path, "w")
        self.rows = []

    def __call__(self, **row):
        row["t"] = round(time.time(), 1)
        self.rows.append(row)
        self.f.write(json.dumps(row) + "\n")
        self.f.flush()
        print("  " + " ".join("%s=%s" % (k, v) for k, v in row.items() if k != "t"), flush=True)


def build(a, torch):
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(**(TINY if a.tiny else LLAMA3_8B))
    cfg.use_cache = True
    torch.manual_seed(0)
    t = time.time()
    # Built in bf16 on the device: no CPU copy, no fp32 init of 8B parameters.
    dflt = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device(a.device):
            model = LlamaForCausalLM(cfg)
    finally:
        torch.set_default_dtype(dflt)
    model.eval().requires_grad_(False)
    return model, cfg, time.time() - t


class Decoder:
    """One decode step over a static cache, in place: ids and the position advance on
    the device, so the step can be captured in a CUDA graph and replayed."""

    def __init__(self, model, cfg, batch, a, torch, fn):
        self.torch, self.model, self.batch = torch, model, batch
        from aitune import decoding
        self.kw = decoding.cache_kw(model)
        self.cache = decoding.static_cache(cfg, batch, a.prompt + a.steps + 8, a.device, torch.bfloat16)
        dev = a.device
        g = torch.Generator(device=dev).manual_seed(1)
        prompt = torch.randint(0, cfg.vocab_size, (batch, a.prompt), device=dev, generator=g)
        with torch.no_grad():
            out = model(input_ids=prompt, cache_position=torch.arange(a.prompt, device=dev), use_cache=True,
                        logits_to_keep=1, **{self.kw: self.cache})
        self.ids = out.logits[:, -1:].argmax(-1)
        self.pos = torch.full((1,), a.prompt, dtype=torch.long, device=dev)
        self.fn = fn
        self.graph = None

    def forward(self, ids, pos):
        out = self.model(input_ids=ids, cache_position=pos, position_ids=pos.view(1, 1).expand(ids.shape[0], 1),
                         use_cache=True, logits_to_keep=1, **{self.kw: self.cache})
        return out.logits

    def step(self):
        logits = self.fn(self.ids, self.pos)
        self.ids.copy_(logits[:, -1:].argmax(-1))
        self.pos.add_(1)
        return logits

    def capture(self, warmup=2):
        torch = self.torch
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s), torch.no_grad():
            for _ in range(warmup):          # binds every shape before capture
                self.step()
        torch.cuda.current_stream().wait_stream(s)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph), torch.no_grad():
            self.logits = self.step()

    def run(self, steps):
        torch = self.torch
        with torch.no_grad():
            if self.graph is None:
                t = time.perf_counter()
                for _ in range(steps):
                    self.step()
                if torch.cuda.is_available() and self.ids.is_cuda:
                    torch.cuda.synchronize()
                return time.perf_counter() - t
            self.graph.replay()
            torch.cuda.synchronize()
            t = time.perf_counter()
            for _ in range(steps):
                self.graph.replay()
            torch.cuda.synchronize()
            return time.perf_counter() - t


def prefill_fn(torch, model, cfg, tokens, device, compiled=True, dynamic=False):
    """One prefill of `tokens` tokens (batch 1) of model as a callable, each call from an
    empty cache, compiled as the decode steps are (torch.compile, default mode, static
    shapes unless dynamic: the first call compiles)."""
    ids = torch.randint(0, cfg.vocab_size, (1, tokens), device=device)
    pos = torch.arange(tokens, device=device)
    from aitune import decoding
    cache = decoding.static_cache(cfg, 1, tokens + 8, device, torch.bfloat16)
    kw = decoding.cache_kw(model)

    def fwd(ids, pos):
        return model(input_ids=ids, cache_position=pos, use_cache=True, logits_to_keep=1, **{kw: cache}).logits
    fn = torch.compile(fwd, mode="default", dynamic=None if dynamic else False) if compiled else fwd

    def once():
        cache.reset()
        with torch.no_grad():
            fn(ids, pos)
    return once


def timed_rounds(torch, fns, cuda, rounds=10, warm=2):
    """{name: median seconds} of each callable of fns ({name: fn}): `warm` calls each
    first, then `rounds` rounds calling each once, round-robin, the order reversed every
    other round. A sustained prefill holds the GPU at its power limit, where the clock
    follows the work just done (bench/RESULTS.md, fourth session: every kernel of the
    variant timed second ran slower): interleaved, both sides see the same clocks."""
    times = {name: [] for name in fns}
    names = list(fns)
    for i in range(warm + rounds):
        for name in (names if i % 2 == 0 else names[::-1]):
            if cuda:
                torch.cuda.synchronize()
            t = time.perf_counter()
            fns[name]()
            if cuda:
                torch.cuda.synchronize()
            if i >= warm:
                times[name].append(time.perf_counter() - t)
    return {name: statistics.median(ts) for name, ts in times.items()}


def timed_prefill(torch, model, cfg, tokens, device, compiled=True, dynamic=False):
    """(prefill_fn's callable, its median time in s over 10 after 2 warm-up: 4 moved by
    0.5%)."""
    once = prefill_fn(torch, model, cfg, tokens, device, compiled, dynamic)
    return once, timed_rounds(torch, {"one": once}, device == "cuda")["one"]


def model_bytes(model):
    """Bytes of a model's parameters and buffers."""
    return sum(t.numel() * t.element_size() for t in list(model.parameters()) + list(model.buffers()))


def host_time(torch, aitune, a, log):
    """Host time per call of a 1 x 4096 x 4096 product (bench/host_overhead.py)."""
    sys.path.insert(0, HERE)
    import host_overhead
    res, tuned, _ = host_overhead.measure(torch, aitune, a.device, 256 if a.tiny else 4096, a.host_calls,
                                          min(500, a.host_calls), lambda row: log(**row))
    return res, tuned


# The work, in units that each hold every side of the ratios they give (so a unit
# runs whole in one process, on one GPU): the host times, each decode batch's
# variants, batch 1 without a graph, the prefill's variants, the check.
def units(a):
    out = ["host"] + ["decode:%d" % b for b in a.batches]
    if "eager" in a.variants or "patch" in a.variants:
        out.append("nograph")
    if a.prefill:
        out.append("prefill")
    return out + ["check"]


def unit_cost(a, u):
    """Rough seconds a unit takes on an H100 (torch.compile's tracing dominates:
    about 55 s a decode step, 110 s a 2048-token prefill), for spreading units."""
    comp = sum(1 for v in a.variants if v.startswith("compile"))
    if u.startswith("decode:"):
        return 55 * comp + 8 * (len(a.variants) - comp)
    if u == "prefill":
        return 110 * comp if comp else 10 * len(a.variants)
    return {"host": 12, "nograph": 6}.get(u, 4)


def shares(a, n):
    """units(a) over n processes, the costliest first onto the least loaded; each
    share keeps units(a)'s order."""
    load, got = [0.0] * n, [[] for _ in range(n)]
    for u in sorted(units(a), key=lambda u: -unit_cost(a, u)):
        k = load.index(min(load))
        load[k] += unit_cost(a, u)
        got[k].append(u)
    order = units(a)
    return [sorted(g, key=order.index) for g in got if g]


def blank(card):
    """What a run measured, before it measures: card, tps {(variant, batch, graph):
    tokens/s}, prefill {variant: ms}, host, host_tuned, check."""
    return {"card": card, "tps": {}, "prefill": {}, "host": None, "host_tuned": None, "check": None}


def measure(a, todo, torch, aitune, log):
    """Runs the units in todo in this process: what they measured (blank's)."""
    card = torch.cuda.get_device_name() if a.device == "cuda" else "cpu"
    print("llama_e2e: %s, %s, registry %s" % (card, "tiny" if a.tiny else "Llama-3-8B", a.registry), flush=True)
    d = aitune.use(a.registry)
    model, cfg, build_s = build(a, torch)
    log(what="build", seconds=round(build_s, 1), card=card, torch=torch.__version__,
        transformers=__import__("transformers").__version__, units=todo)
    res = blank(card)
    tps = res["tps"]
    graphs = a.device == "cuda"

    def patched_as(variant, m=None):
        """The variant's patch of m (default the model; None for eager and compile)."""
        if "patch" not in variant:
            return None
        return aitune.patch(model if m is None else m, d, group=not variant.endswith("-nogroup"),
                            swiglu=not variant.endswith("-nofuse"))

    def decode(variant, batch, graph=True):
        patched = "patch" in variant
        p = patched_as(variant)
        try:
            dec = Decoder(model, cfg, batch, a, torch, None)
            fn = dec.forward
            if variant.startswith("compile"):
                fn = torch.compile(dec.forward, mode="default", dynamic=None if a.dynamic else False)
            dec.fn = fn
            t0 = time.time()
            if graph and graphs:
                dec.capture()
            else:
                dec.run(2)
            setup = time.time() - t0
            dt = dec.run(a.steps)
            tok = batch * a.steps / dt
            misses = sum(m["count"] for m in d.misses().values()) if patched else 0
            log(what="decode", variant=variant, batch=batch, graph=graph and graphs, tokens_s=round(tok, 1),
                ms_step=round(dt / a.steps * 1e3, 3), setup_s=round(setup, 1), missed_calls=misses,
                groups=len(p.groups) if p else 0, groups_off=sum(1 for g in p.groups if g.off) if p else 0,
                mlps=len(p.mlps) if p else 0)
            return tok
        finally:
            if p is not None:
                aitune.unpatch(model)

    def prefill():
        # Each variant on a model of its own (a patched copy beside the unpatched model),
        # compiled, then all timed round-robin (timed_rounds); where the GPU cannot hold
        # the copies, one variant after the other, each patching the one model.
        vs = [v for v in a.variants if v.startswith("compile")] or list(a.variants)
        copies = sum(1 for v in vs if "patch" in v)
        room = torch.cuda.mem_get_info()[0] if a.device == "cuda" else None
        together = len(vs) > 1 and (room is None or room > copies * model_bytes(model) * 1.25 + (8 << 30))
        log(what="prefill_protocol", interleaved=together, variants=vs,
            free_gib=None if room is None else round(room / 2**30, 1))

        def record(v, sec):
            res["prefill"][v] = ms = sec * 1e3
            log(what="prefill", variant=v, tokens=a.prefill, ms=round(ms, 2), tokens_s=round(a.prefill / ms * 1e3, 1),
                interleaved=together)
        if not together:
            for v in vs:
                p = patched_as(v)
                try:
                    record(v, timed_prefill(torch, model, cfg, a.prefill, a.device, v.startswith("compile"),
                                            a.dynamic)[1])
                finally:
                    if p is not None:
                        aitune.unpatch(model)
            return
        import copy
        models, fns = {}, {}
        try:
            for v in vs:
                m = model
                if "patch" in v:
                    m = models[v] = copy.deepcopy(model)
                    patched_as(v, m)
                fns[v] = prefill_fn(torch, m, cfg, a.prefill, a.device, v.startswith("compile"), a.dynamic)
                fns[v]()     # compiles (and binds the patched shapes) before any timing
            for v, sec in timed_rounds(torch, fns, a.device == "cuda").items():
                record(v, sec)
        finally:
            fns.clear()
            for m in models.values():
                aitune.unpatch(m)
            models.clear()
            if a.device == "cuda":
                torch.cuda.empty_cache()

    def check():
        # check=True over one decode step, and the logits against PyTorch's.
        dec = Decoder(model, cfg, 1, a, torch, None)
        ids, pos = dec.ids.clone(), dec.pos.clone()
        with torch.no_grad():
            want = dec.forward(ids, pos).float()
        dec2 = Decoder(model, cfg, 1, a, torch, None)
        p = aitune.patch(model, d, check=True)
        try:
            with torch.no_grad():
                got = dec2.forward(ids, pos).float()
            scale = want.abs().max().item()
            err = (got - want).abs().max().item() / max(scale, 1e-30)
            same_token = bool((got.argmax(-1) == want.argmax(-1)).all())
            res["check"] = {"compared": p.compared, "first_mismatch": p.first_mismatch, "logits_max_err_rel": err,
                            "same_next_token": same_token}
            log(what="check", **res["check"])
        finally:
            aitune.unpatch(model)

    for u in todo:
        if u == "host":
            res["host"], res["host_tuned"] = host_time(torch, aitune, a, log)
            if a.host_done:
                open(a.host_done, "w").close()
        elif u.startswith("decode:"):
            batch = int(u.split(":")[1])
            for v in a.variants:
                tps[(v, batch, True)] = decode(v, batch)
        elif u == "nograph":
            for v in ("eager", "patch"):
                if v in a.variants:
                    tps[(v, 1, False)] = decode(v, 1, graph=False)
        elif u == "prefill":
            prefill()
        elif u == "check":
            check()
    return res


def spread(a, argv):
    """--gpus N: units(a) over N processes of this script, one per GPU (each the
    next of CUDA_VISIBLE_DEVICES, or GPU k), their lines echoed as they come with
    [gpu k] before them; returns their results merged, or None if one failed. The
    process that times the host starts first and the others once those times are
    taken, so no other process's compiling shares the CPU with them."""
    import subprocess
    rest, skip = [], False
    for x in argv:
        if skip:
            skip = False
        elif x == "--gpus":
            skip = True
        elif not x.startswith("--gpus="):
            rest.append(x)
    seen = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = [g for g in seen.split(",") if g] if seen else [str(k) for k in range(a.gpus)]
    if len(ids) < a.gpus:
        sys.exit("llama_e2e: --gpus %d, but CUDA_VISIBLE_DEVICES names %d" % (a.gpus, len(ids)))
    procs = []
    done = os.path.join(a.out, "host.done")
    if os.path.exists(done):
        os.remove(done)
    # Stopped (Ctrl-C, or SIGTERM from `timeout`), it stops its processes too: one left
    # running would hold its GPU and share the host with whatever runs next.
    old = signal.signal(signal.SIGTERM, lambda sig, frame: sys.exit(128 + sig))
    try:
        return _spread(a, rest, ids, procs, done)
    finally:
        signal.signal(signal.SIGTERM, old)
        for pr, _, _ in procs:
            if pr.poll() is None:
                pr.terminate()
        for pr, _, _ in procs:
            try:
                pr.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pr.kill()
                pr.wait()


def _spread(a, rest, ids, procs, done):
    """spread's body: starts the processes (each appended to procs as it starts, for
    spread to stop), waits for them and merges their results."""
    import subprocess
    import threading
    order = sorted(enumerate(shares(a, a.gpus)), key=lambda ks: "host" not in ks[1])
    for k, share in order:
        folder = os.path.join(a.out, "gpu%d" % k)
        cmd = [sys.executable, os.path.abspath(__file__)] + rest + [
            "--units", ",".join(share), "--result", os.path.join(folder, "result.json"), "--out", folder]
        if "host" in share:
            cmd += ["--host-done", done]
        elif procs:      # after the host times (or once their process has ended)
            while not os.path.exists(done) and procs[0][0].poll() is None:
                time.sleep(0.2)
        pr = subprocess.Popen(cmd, env=dict(os.environ, CUDA_VISIBLE_DEVICES=ids[k]), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, bufsize=1)
        print("llama_e2e: gpu %s runs %s (pid %d)" % (ids[k], ", ".join(share), pr.pid), flush=True)

        def echo(pr=pr, tag="[gpu %s] " % ids[k]):
            for line in pr.stdout:
                print(tag + line, end="", flush=True)
        th = threading.Thread(target=echo)
        th.start()
        procs.append((pr, th, folder))
    merged, bad = blank([]), 0
    for pr, th, folder in procs:
        rc = pr.wait()
        th.join()
        if rc != 0:
            print("llama_e2e: %s exited %d" % (folder, rc), file=sys.stderr)
            bad += 1
            continue
        with open(os.path.join(folder, "result.json")) as f:
            r = json.load(f)
        merged["card"].append(r["card"])
        merged["tps"].update({(v, b, g): t for v, b, g, t in r["tps"]})
        merged["prefill"].update(r["prefill"])
        for key in ("host", "host_tuned", "check"):
            if r[key] is not None:
                merged[key] = r[key]
    if bad:
        return None
    cards = sorted(set(merged["card"]))
    merged["card"] = "%dx %s" % (a.gpus, cards[0]) if len(cards) == 1 else ", ".join(merged["card"])
    return merged


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    a = parse(argv)
    if a.gpus > 1 and a.units is None:
        res = spread(a, argv)
        if res is None:
            return 1
        report(a, res, "%s/gpu*/llama_e2e.jsonl" % a.out)
        return 0
    import torch
    import aitune
    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("llama_e2e: no CUDA device (use --tiny --device cpu for a smoke test)")
    log = Log(a.out)
    res = measure(a, a.units or units(a), torch, aitune, log)
    if a.result:
        with open(a.result, "w") as f:
            json.dump(dict(res, tps=[[v, b, g, t] for (v, b, g), t in res["tps"].items()]), f)
        return 0
    report(a, res, log.path)
    return 0


def report(a, res, details):
    """The tables: tokens/s per batch and variant, the prefill, host and check lines,
    then issue 32's bars."""
    tps, prefill, host, check, card = res["tps"], res["prefill"], res["host"], res["check"], res["card"]
    print()
    print("llama_e2e on %s (%s), tokens/s; ratios to the same run's baseline" % (card, "tiny" if a.tiny else
                                                                                "Llama-3-8B"))
    print("| batch | cuBLAS eager | eager + patch | torch.compile | compile + patch | compile + patch / compile |")
    print("| --- | --- | --- | --- | --- | --- |")
    for batch in a.batches:
        def cell(v):
            t = tps.get((v, batch, True))
            return "-" if t is None else "%.1f" % t
        c, cp = tps.get(("compile", batch, True)), tps.get(("compile+patch", batch, True))
        e, ep = tps.get(("eager", batch, True)), tps.get(("patch", batch, True))
        print("| %d | %s | %s%s | %s | %s | %s |" % (
            batch, cell("eager"), cell("patch"), " (%.2fx)" % (ep / e) if e and ep else "", cell("compile"),
            cell("compile+patch"), "%.3fx" % (cp / c) if c and cp else "-"))
    e, ep = tps.get(("eager", 1, False)), tps.get(("patch", 1, False))
    if e and ep:
        print("| 1, no graph | %.1f | %.1f (%.3fx) | | | |" % (e, ep, ep / e))
    for v, what, word in (("patch-nogroup", "group=False", "grouped"), ("compile+patch-nogroup", "group=False", "grouped"),
                          ("patch-nofuse", "swiglu=False", "fused"), ("compile+patch-nofuse", "swiglu=False", "fused")):
        full = v[:v.rindex("-")]
        base = "compile" if v.startswith("compile") else "eager"
        for batch in a.batches:
            t, tg, tb = tps.get((v, batch, True)), tps.get((full, batch, True)), tps.get((base, batch, True))
            if t:
                print("%s (patch(%s)), batch %d: %.1f tokens/s%s%s" % (
                    v, what, batch, t, ", %.3fx %s" % (t / tb, base) if tb else "",
                    "; %s / not: %.3fx" % (word, tg / t) if tg else ""))
    if prefill:
        items = ", ".join("%s %.1f ms" % kv for kv in prefill.items())
        ratio = prefill.get("compile") / prefill["compile+patch"] if "compile" in prefill and "compile+patch" in \
            prefill else None
        print("prefill %d tokens: %s%s" % (a.prefill, items, "; compile / compile+patch time %.3fx" % ratio
                                           if ratio else ""))
    if host:   # not when the run left the host unit out (--units)
        print("host per call: aitune.nn.Linear.forward %.1f us, torch.ops.aitune.linear %s us, torch.mm %.1f us, "
              "F.linear %.1f us (forward / mm %.2fx)%s" % (
                  host["aitune.nn.Linear.forward"], "%.1f" % host["torch.ops.aitune.linear"]
                  if "torch.ops.aitune.linear" in host else "-", host["torch.mm"], host["F.linear"],
                  host["aitune.nn.Linear.forward"] / host["torch.mm"], "" if res["host_tuned"] else
                  " (NOT TUNED at 1x4096x4096: aitune fell back)"))
    if check:
        print("check=True, one decode step: %d calls compared, first difference: %s; logits max error %.3g of max |logit|,"
              " same next token: %s" % (check["compared"], check["first_mismatch"] or "none",
                                        check["logits_max_err_rel"], check["same_next_token"]))
    bars(tps, prefill, host, res["host_tuned"], check, a)
    print("details: %s" % details)


def bars(tps, prefill, host, host_tuned, check, a):
    """Issue 32's bar table: each bar, what this run measured, the ratio, met or not."""
    rows = []

    def decode(batch, need):
        c, cp = tps.get(("compile", batch, True)), tps.get(("compile+patch", batch, True))
        what = "batch %d decode, CUDA graph: compile + patch / compile" % batch
        if c and cp:
            rows.append((what, "%.1f / %.1f tokens/s" % (cp, c), cp / c, ">= %.2fx" % need, cp / c >= need))
        else:
            rows.append((what, "not measured", None, ">= %.2fx" % need, None))
    decode(1, 1.15)
    decode(8, 1.10)
    decode(32, 1.00)
    if "compile" in prefill and "compile+patch" in prefill:
        x = prefill["compile"] / prefill["compile+patch"]
        rows.append(("prefill %d tokens: compile time / compile + patch time" % a.prefill,
                     "%.1f / %.1f ms" % (prefill["compile"], prefill["compile+patch"]), x, ">= 1.00x", x >= 1.0))
    else:
        rows.append(("prefill 2048 tokens: compile time / compile + patch time", "not measured", None, ">= 1.00x", None))
    e, ep = tps.get(("eager", 1, False)), tps.get(("patch", 1, False))
    rows.append(("batch 1 decode, eager, no graph: patch / eager", "%.1f / %.1f tokens/s" % (ep, e) if e and ep
                 else "not measured", ep / e if e and ep else None, ">= 1.00x", ep / e >= 1.0 if e and ep else None))
    if host:
        fwd, mm = host["aitune.nn.Linear.forward"], host["torch.mm"]
        rows.append(("host time per call (aitune.nn.Linear.forward / torch.mm)",
                     "%.1f / %.1f us%s" % (fwd, mm, "" if host_tuned else ", NOT TUNED"), fwd / mm,
                     "<= 10 us, <= 0.50x", fwd <= 10 and fwd / mm <= 0.5 and host_tuned))
    else:
        rows.append(("host time per call (aitune.nn.Linear.forward / torch.mm)", "not measured", None,
                     "<= 10 us, <= 0.50x", None))
    if check:
        ok = check["compared"] > 0 and not check["first_mismatch"] and check["same_next_token"]
        rows.append(("check=True over a decode step", "%d calls, first difference %s, logits error %.3g" % (
            check["compared"], check["first_mismatch"] or "none", check["logits_max_err_rel"]), None, "passes", ok))
    print()
    print("issue 32's bars (same card, same run):")
    print("| bar | measured | ratio | needs | met |")
    print("| --- | --- | --- | --- | --- |")
    for what, got, x, need, met in rows:
        print("| %s | %s | %s | %s | %s |" % (what, got, "%.3fx" % x if x is not None else "-", need,
                                             "-" if met is None else "yes" if met else "NO"))
    done = [r for r in rows if r[4] is not None]
    print("bars met: %d of %d measured (%d not measured)" % (sum(1 for r in done if r[4]), len(done),
                                                             len(rows) - len(done)))


if __name__ == "__main__":
    sys.exit(main())
