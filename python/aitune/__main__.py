"""python -m aitune: tune a model's shapes in one command, and race the finalists in its
decode step (see `python -m aitune tune --help`, `python -m aitune race --help`)."""

import argparse
import os
import sys
import tempfile

from . import dispatch, tuning
from ._lib import AituneError

TUNE_HELP = """\
Tune the GEMMs and norms of a model for the GPU this runs on, in one command, and
leave the registry that aitune.patch(model) opens.

  1. From the model's config (a Hugging Face config.json, or the folder that holds
     it) and the batch sizes and prompt lengths it will serve, it writes the spec of
     the model's shapes: one task per weight (F.linear's layout, gemm_nt) and per
     norm width, the rows as ranges, split between decoding (rows = batch) and
     prefilling (rows = batch x prompt tokens). q/k/v and gate/up are one weight
     each, as aitune.patch groups them (--group off: separate, for
     patch(model, group=False); --group only: just the fused ones). Each gated
     MLP's gate/up product with its silu(gate) * up (gemm_swiglu, one kernel that
     aitune.patch runs in the MLP's place) is tuned beside them.
  2. It runs `aitune sweep` on that spec (resumable: run the same command again
     after Ctrl-C), writing the winners to the registry.
  3. With --race, it races each bucket's finalists in the model's own decode step at
     each --exact-batch size (`python -m aitune race`, below), where a sweep's
     ranking may not hold.
  4. In the application:  aitune.patch(model, REGISTRY); model(x) once (warm-up,
     before any CUDA graph capture); then run it as before.

After a real run, the shapes the registry had no tuned bucket for are in its misses
table (aitune.unpatch(model) writes them); `--from-misses` tunes exactly those.

examples:
  python -m aitune tune llama3-8b/config.json --batch 1:32 --prompt 128:2048
  python -m aitune tune config.json --batch 1:32 --exact-batch 1,8,32   # the graphs' batch sizes exactly too
  python -m aitune tune config.json --batch 1:32 --exact-batch 1,8 --race  # then raced in the decode step
  python -m aitune tune config.json --prompt 128:2048 --exact-prompt 2048  # the prefill most run, exactly too
  python -m aitune tune config.json --batch 1:8 --prompt 1:4096 --dry-run   # print the spec
  python -m aitune tune config.json --ops rmsnorm --max-evals 8 --budget 10m
  python -m aitune tune config.json --batch 1:32 --prompt 1 --group only --db old.db  # add the fused shapes
  python -m aitune tune --from-misses --db registry.db

exit: 0 done, 1 the sweep or the race failed (no GPU, ...), 2 usage, 3 a bad config or
misses table
"""

RACE_HELP = """\
Race each GEMM bucket's finalists in a model's own decode step and pin the fastest
in the registry (aitune.racing.race_model). A sweep times each candidate alone or
between short neighbour kernels; inside a model the order can change (Llama-3-8B at
batch 8 on an H100: bench/RESULTS.md). This builds the model from its config with
random weights on the GPU (aitune.decoding: no download; a decode step's time does
not depend on the weights' values), patches it over the registry, prefills a random
prompt into a static cache and, at each --batch size, captures one decode step in a
CUDA graph (under torch.compile unless --mode graph) once per finalist of each
bucket the step used, times it against the incumbent's, interleaved, and keeps a
finalist only where the step runs faster by more than --min-gain. The buckets it
changed are pinned in the registry (`aitune pin`: `aitune why` shows the step times).
Needs a CUDA device, transformers, and the aitune binary (for the pins).

examples:
  python -m aitune race llama3-8b/config.json --batch 8 --db llama.db
  python -m aitune race config.json --batch 1,8 --mode graph --rounds 5
  python -m aitune race config.json --batch 8 --dry-run      # race, change nothing

exit: 0 done, 1 the race failed (no GPU, no transformers, a step that used no tuned
kernel, ...), 2 usage, 3 a bad config
"""


def _parser():
    p = argparse.ArgumentParser(prog="python -m aitune", description="aitune from Python: tune a model's shapes.")
    sub = p.add_subparsers(dest="cmd")
    t = sub.add_parser("tune", help="tune a model's shapes from its config (or the misses of a run)",
                       description=TUNE_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("config", nargs="?", help="config.json of the model (or its folder)")
    t.add_argument("--from-misses", action="store_true",
                   help="tune the shapes in the registry's misses table instead of a config's")
    t.add_argument("--batch", default="1:32", metavar="LO:HI", help="batch sizes served (default 1:32)")
    t.add_argument("--prompt", default="1:2048", metavar="LO:HI",
                   help="prompt lengths prefilled, in tokens (default 1:2048)")
    t.add_argument("--exact-batch", metavar="B,B,...",
                   help="batch sizes a server runs most (one decode graph each): their GEMMs also tuned at m "
                   "exactly, in buckets of their own (the range holding them is tuned at its upper edge)")
    t.add_argument("--exact-prompt", metavar="P,P,...",
                   help="prompt lengths prefilled most (batch 1): their prefill GEMMs also tuned at m = P "
                   "exactly, in buckets of their own")
    t.add_argument("--cache", default=None, metavar="LO:HI",
                   help="static cache lengths the decode attention runs over (the max_cache_len given to "
                   "transformers' StaticCache; default 1 up to the longest prompt plus 2048)")
    t.add_argument("--dtype", choices=("bf16", "f16"), help="default: the config's torch_dtype")
    t.add_argument("--group", choices=tuning.GROUP_MODES, default="on",
                   help="q/k/v and gate/up fused as aitune.patch groups them (on, the default), separate "
                   "(off), or the fused ones alone (only)")
    t.add_argument("--arch", default=None, help="compile target (default sm_90a; from the misses' GPU)")
    t.add_argument("--ops", default=",".join(tuning.OPS),
                   help="which ops to tune (default %s; gemm_swiglu: with grouped projections only)"
                   % ",".join(tuning.OPS))
    t.add_argument("--db", default=None, help="the registry (default $AITUNE_DB, else "
                   "~/.local/share/aitune/registry.db: the one patch opens by default)")
    t.add_argument("--spec-out", metavar="FILE", help="keep the spec there (default: a temporary file)")
    t.add_argument("--dry-run", action="store_true", help="print the spec and stop")
    t.add_argument("--search", default="model", help="search strategy (default model; `aitune list`)")
    t.add_argument("--max-evals", type=int, default=48, help="candidates per bucket and template (default 48)")
    t.add_argument("--budget", help="stop the sweep after this long (90s, 30m, 2h); winners so far are kept")
    t.add_argument("--gpus", help="passed to `aitune sweep --gpus` (all, N, or I,J)")
    t.add_argument("--aitune", metavar="PATH", help="the aitune binary (default: $AITUNE_BIN, PATH, build/aitune)")
    t.add_argument("--race", action="store_true",
                   help="after the sweep, race the finalists in the model's decode step at each --exact-batch "
                   "size (python -m aitune race)")
    t.add_argument("--race-mode", choices=RACE_MODES, default="compile",
                   help="the step --race times: under torch.compile (default) or eager in a CUDA graph")
    r = sub.add_parser("race", help="race the finalists in a model's own decode step and pin the fastest",
                       description=RACE_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("config", help="config.json of the model (or its folder)")
    r.add_argument("--batch", required=True, metavar="B,B,...", help="decode batch sizes to race at")
    r.add_argument("--db", default=None, help="the registry (default $AITUNE_DB, else "
                   "~/.local/share/aitune/registry.db)")
    r.add_argument("--mode", choices=RACE_MODES, default="compile",
                   help="the step under torch.compile (default) or eager in a CUDA graph")
    r.add_argument("--prompt", type=int, default=128, help="prompt tokens in the cache before the step (default 128)")
    r.add_argument("--rounds", type=int, default=3, help="interleaved timings per finalist (default 3)")
    r.add_argument("--min-gain", type=float, default=0.002,
                   help="how much faster a finalist's step must be to win (default 0.002: 0.2%%)")
    r.add_argument("--dry-run", action="store_true", help="race, but pin nothing")
    r.add_argument("--aitune", metavar="PATH", help="the aitune binary (default: $AITUNE_BIN, PATH, build/aitune)")
    return p


RACE_MODES = ("compile", "graph")


def race(a, p, batches=None):
    """python -m aitune race, or (batches given) tune --race after its sweep, with the
    race's defaults: 0, or 1 when the race failed."""
    if batches is None:
        if a.prompt < 1 or a.rounds < 1 or not 0 <= a.min_gain < 1:
            p.error("--prompt and --rounds must be >= 1, --min-gain in [0, 1)")
        try:
            batches = tuning.parse_batches(a.batch, None, "--batch")
        except tuning.SpecError as e:
            p.error(str(e))
        mode, opts = a.mode, dict(prompt=a.prompt, rounds=a.rounds, min_gain=a.min_gain, dry_run=a.dry_run)
    else:
        mode, opts = a.race_mode, {}
    db = a.db or dispatch.default_path()
    if not os.path.isfile(db):
        raise AituneError("race: no registry at %s (python -m aitune tune first)" % db)
    from . import decoding, racing
    decoding.transformers_module()     # missing: exit 1, not a bad config
    try:
        cfg = decoding.load_config(a.config)
    except AituneError as e:
        raise tuning.SpecError(str(e)) from None

    def say(line):
        print("aitune: " + line, file=sys.stderr, flush=True)
    reports = racing.race_model(cfg, batches, db, compiled=mode == "compile", aitune=a.aitune, log=say, **opts)
    for b, report in reports.items():
        for r in report:
            print("batch %d %s %s %s: %s -> %s%s" % (b, r["op"], r["dtype"], r["bucket"], r["before"]["template"],
                                                     r["after"]["template"], " (changed)" if r["changed"] else ""))
    return 0


def tune(a, p):
    if a.max_evals < 0:
        p.error("--max-evals must be >= 0")
    if a.race and (a.from_misses or not a.exact_batch or a.dry_run):
        p.error("--race needs --exact-batch (the batch sizes to race at), a config and no --dry-run")
    db = a.db or dispatch.default_path()
    if a.from_misses:
        if a.config or a.exact_batch or a.exact_prompt or a.cache:
            p.error("--from-misses takes no config, no --exact-batch, --exact-prompt or --cache")
        text = tuning.misses_spec(tuning.read_misses(db), arch=a.arch, search=a.search, max_evals=a.max_evals)
    else:
        if not a.config:
            p.error("a config.json (or --from-misses) is required")
        cfg, where = tuning.read_config(a.config)
        ops = [o for o in a.ops.split(",") if o]
        batch = tuning.parse_range(a.batch, "--batch")
        exact = tuning.parse_batches(a.exact_batch, batch) if a.exact_batch else ()
        prompt = tuning.parse_range(a.prompt, "--prompt")
        prompts = tuning.parse_batches(a.exact_prompt, prompt, "--exact-prompt", "prompt lengths") \
            if a.exact_prompt else ()
        cache = tuning.parse_range(a.cache, "--cache") if a.cache else None
        text = tuning.model_spec(cfg, batch, prompt, a.dtype, a.arch or "sm_90a", ops, a.search, a.max_evals,
                                 "config '%s'" % where, a.group, exact, prompts, cache)
    if a.dry_run:
        sys.stdout.write(text)
        return 0
    if a.spec_out:
        spec = a.spec_out
        with open(spec, "w") as f:
            f.write(text)
    else:
        fd, spec = tempfile.mkstemp(prefix="aitune-model-", suffix=".yaml")
        with os.fdopen(fd, "w") as f:
            f.write(text)
    os.makedirs(os.path.dirname(os.path.abspath(db)), exist_ok=True)
    extra = ["--max-evals", str(a.max_evals)]
    if a.budget:
        extra += ["--budget", a.budget]
    if a.gpus:
        extra += ["--gpus", a.gpus]
    print("aitune: spec %s -> registry %s" % (spec, db), file=sys.stderr)
    rc = tuning.run_sweep(spec, db, a.aitune, extra)
    if not a.spec_out:
        os.remove(spec)
    if rc == 0 and a.race:
        a.db = db
        rc = race(a, p, exact)
    if rc == 0:
        print("aitune: tuned. In the application: aitune.patch(model, %r)" % db, file=sys.stderr)
    return 1 if rc == 1 else rc


def main(argv=None):
    p = _parser()
    a = p.parse_args(argv)
    if a.cmd is None:
        p.print_help()
        return 2
    try:
        return race(a, p) if a.cmd == "race" else tune(a, p)
    except tuning.SpecError as e:
        print("aitune: error: %s" % e, file=sys.stderr)
        return 3
    except AituneError as e:
        print("aitune: error: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
