"""Race a bucket's finalists in the application's own step, and keep what runs it fastest.

A sweep times each candidate alone, or between short neighbour kernels (`timing:
neighbour`), and keeps the fastest. Inside a real model the order can change: in a
Llama-3-8B batch-8 decode step, gemv's m = 8 winners ran 12-54% over their sweep times
and swapab's finalists, ranked second by the sweep, ran the step 2.6% faster
(bench/RESULTS.md, sixth session). race() measures what the sweep cannot: for each
bucket the step's kernels came from, it pins each of the bucket's finalists in turn
(`aitune pin`, on a scratch copy of the registry), captures the step again, times it
against the incumbent's, interleaved, and keeps a finalist only where the step runs
faster by more than min_gain twice (a win is timed again, the finalist first: one
timing's noise is above min_gain). The buckets it changed are pinned in the registry
at the end (`aitune pin --note`: the command and the step times stay in the run's
record; `aitune why` shows them).

    d = aitune.use("registry.db")
    p = aitune.patch(model, d)
    def capture():                  # warm-up, then one step in a CUDA graph
        ...                         # the step must call the model afresh: kernels bind
        return graph.replay         #   at the first call after each pin
    report = aitune.racing.race(capture)

    # or, for a step that advances device state (a decode step over a static cache):
    capture = aitune.racing.replayable(step, [ids, pos] + aitune.decoding.cache_counters(cache))
    # or a model from its config, random weights, at batch 8 (python -m aitune race):
    reports = aitune.racing.race_model(aitune.decoding.load_config("config.json"), [8], "registry.db")

capture() is called once per trial, after the dispatcher has changed: it must run the
step once outside capture (kernels load then; a shape first met during capture falls
back to PyTorch) and return a callable that runs one step. The race keeps two of them
at a time (the incumbent's and the finalist's). When it returns, the registry it leaves
is the current dispatcher's: capture the step again to run on it. (The registries of
the trials stay open for the process's life, so a graph captured during the race never
launches a kernel that closing one would unload; close_trials() closes them once the
step has been captured again.) timer(fn) gives the seconds per step of
fn; the default replays it `replays` times between CUDA events after 3 of warm-up and
takes the median. Under torch.compile the graph need not be traced again: the aitune
ops ask the current dispatcher at run time.

What it changes: only the registry at the end (nothing with dry_run=True), only
buckets whose winners the step used (ops: gemm_nt and gemm_swiglu by default), only to finalists the
sweep measured and verified (their kernels kept). A later `aitune sweep` of the same
spec leaves a pinned bucket as it is; `aitune retune` and `window` decide by the spec's
timing again (`aitune help pin`).
"""

import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from . import dispatch
from ._lib import AituneError


def _pin(aitune, db, op, dtype, bucket, extra):
    cmd = [aitune, "pin", op, "--dtype", dtype, "--bucket", bucket, "--db", db] + list(extra)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise AituneError("aitune pin %s %s %s: exit %d: %s" % (op, dtype, bucket, r.returncode,
                                                                (r.stderr or r.stdout).strip()))
    return r.stdout


def _pin_to(aitune, db, op, dtype, bucket, choice, note=None):
    """Pin choice ({template, config}) as the bucket's winner in db."""
    _pin(aitune, db, op, dtype, bucket, ["--template", choice["template"],
                                         "--config", json.dumps(choice["config"], sort_keys=True)]
         + (["--note", note] if note else []))


def finalists(aitune, db, op, dtype, bucket):
    """The bucket's winner and runners-up (`aitune pin --list`): dicts with template,
    config, median_us, winner and kernel (whether its kernel is kept: pinnable)."""
    out = []
    for line in _pin(aitune, db, op, dtype, bucket, ["--list"]).splitlines():
        line = line.strip()
        if line:
            out.append(json.loads(line))
    return out


_BACKUP = """import sqlite3, sys
a = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
b = sqlite3.connect(sys.argv[2])
a.backup(b)
b.close()
a.close()
"""


def _copy(src, dst):
    """A consistent copy of a registry (SQLite's backup: a WAL file's pages included),
    made by a child process: closing a connection to src in this one would drop the
    POSIX locks of this process's libaitune handles on it."""
    r = subprocess.run([sys.executable, "-c", _BACKUP, src, dst], capture_output=True, text=True)
    if r.returncode:
        raise AituneError("race: cannot copy the registry %s: %s" % (src, (r.stderr.strip().splitlines() or ["?"])[-1]))


def replayable(step, state, warmup=2):
    """A capture() for race(): step() (one decode step, say) run warmup times outside
    capture on a side stream (the kernels bind; a shape first met during capture would
    fall back to PyTorch), then captured in a CUDA graph; each replay first sets the
    device tensors in state (the step's position, its input ids, decoding.cache_counters)
    back to their values at this call, so every replay runs the same step. capture.rewind()
    sets them back once more: call it after the race, before the application's own run
    (the race leaves them one step on)."""
    import torch
    state = list(state)
    starts = [t.clone() for t in state]

    def rewind():
        torch._foreach_copy_(state, starts)

    def capture():
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s), torch.no_grad():
            for _ in range(warmup):
                rewind()
                step()
        torch.cuda.current_stream().wait_stream(s)
        rewind()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g), torch.no_grad():
            step()

        def replay():
            rewind()
            g.replay()
        return replay
    capture.rewind = rewind
    return capture


def cuda_timer(replays=20):
    """seconds per call of fn: median of `replays` calls, each between CUDA events."""
    def timer(fn):
        import torch
        for _ in range(3):
            fn()
        ts = []
        for _ in range(replays):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            ts.append(a.elapsed_time(b) / 1e3)
        return statistics.median(ts)
    return timer


def _versus(timer, a, b, rounds):
    """(seconds of a, seconds of b): each the median over rounds, a and b alternating."""
    ta, tb = [], []
    for _ in range(rounds):
        ta.append(timer(a))
        tb.append(timer(b))
    return statistics.median(ta), statistics.median(tb)


# The dispatchers of a race's trials (and their registries, whose kernels the graphs
# captured then launch): kept open for the process's life, so no graph captured during
# a race ever launches a kernel a closed registry unloaded.
_TRIALS = []


def close_trials():
    """Close the registries of every race's trials (their kernels unloaded): call it only
    once no graph captured during a race will run again (capture the step afresh first)."""
    while _TRIALS:
        _TRIALS.pop().reg.close()


def _trial(path, like):
    """A new dispatcher over path (a registry just pinned), made current and kept open."""
    d = dispatch.Dispatcher(path, arch=like.arch, host_tensors=like.host_tensors)
    _TRIALS.append(d)
    return dispatch.use(d)


def race(capture, registry=None, ops=("gemm_nt", "gemm_swiglu"), timer=None, rounds=3, min_gain=0.002, dry_run=False,
         aitune=None, log=None):
    """Race the finalists of each bucket the step used in the step itself (see the module
    doc). registry: the dispatcher's (default the current one's). Returns a list of dicts,
    one per bucket raced: op, dtype, bucket, the winner before and after ({template,
    config}), each finalist tried with the step's seconds (step_s, and the incumbent's:
    incumbent_s; where that won, the second timing's: confirm_s, confirm_incumbent_s),
    whether it changed and the trial that won (won, or None)."""
    from .tuning import find_aitune
    aitune = find_aitune(aitune)
    timer = timer or cuda_timer()
    say = log or (lambda s: None)
    d0 = dispatch.use(registry) if registry is not None else dispatch.current()
    if d0 is None:
        raise AituneError("race: no registry (aitune.use(path) or pass registry=)")
    path = d0.reg.path
    tmp = tempfile.mkdtemp(prefix="aitune-race-")
    atexit.register(shutil.rmtree, tmp, True)   # the trials' registries read it while open
    scratch = os.path.join(tmp, "race.db")
    _copy(path, scratch)
    report = []
    try:
        d_inc = _trial(scratch, d0)
        inc_fn = capture()                  # the step's kernels: what this fresh dispatcher loaded
        used = d_inc.answered(ops)
        if not used:
            raise AituneError("race: the step used no tuned kernel of %s from %s" % (", ".join(ops), path))
        for op, dtype, bucket, tmpl, config in used:
            fins = finalists(aitune, scratch, op, dtype, bucket)
            start = {"template": tmpl, "config": json.loads(config)}
            best, tried, won = start, [], None
            for f in fins:
                if f.get("winner") or not f.get("kernel"):
                    continue
                cand = {"template": f["template"], "config": f["config"]}
                _pin_to(aitune, scratch, op, dtype, bucket, cand)
                d_c = _trial(scratch, d0)
                fn = capture()
                t_inc, t_c = _versus(timer, inc_fn, fn, rounds)
                tried.append(dict(cand, step_s=t_c, incumbent_s=t_inc, sweep_us=f.get("median_us")))
                won_now = t_c < t_inc * (1 - min_gain)
                if won_now:
                    # A win is timed again, the finalist first this time, and must hold: a
                    # step's noise (0.3-0.5% between rounds on an H100) is above min_gain.
                    t_c2, t_inc2 = _versus(timer, fn, inc_fn, rounds)
                    tried[-1].update(confirm_s=t_c2, confirm_incumbent_s=t_inc2)
                    won_now = t_c2 < t_inc2 * (1 - min_gain)
                say("race %s %s %s: %s %s: step %.4f ms against %.4f ms%s" % (
                    op, dtype, bucket, cand["template"], json.dumps(cand["config"], sort_keys=True),
                    t_c * 1e3, t_inc * 1e3, "" if "confirm_s" not in tried[-1] else
                    "; again %.4f against %.4f: %s" % (tried[-1]["confirm_s"] * 1e3,
                                                        tried[-1]["confirm_incumbent_s"] * 1e3,
                                                        "kept" if won_now else "not kept")))
                if won_now:
                    best, won, inc_fn, d_inc = cand, tried[-1], fn, d_c
                else:
                    del fn                  # its graph's memory, before the next capture
                    _pin_to(aitune, scratch, op, dtype, bucket, best)
                    dispatch.use(d_inc)
            report.append({"op": op, "dtype": dtype, "bucket": bucket, "before": start, "after": best,
                           "tried": tried, "changed": won is not None, "won": won})
        changed = [r for r in report if r["changed"]]
        if not dry_run:
            for r in changed:
                _pin_to(aitune, path, r["op"], r["dtype"], r["bucket"], r["after"],
                        note="raced in the application's step: %.4f ms against %.4f ms" % (
                            r["won"]["step_s"] * 1e3, r["won"]["incumbent_s"] * 1e3))
        say("race: %d bucket%s raced, %d changed%s" % (len(report), "" if len(report) == 1 else "s", len(changed),
                                                      " (dry run: the registry is as it was)" if dry_run else ""))
    finally:
        _TRIALS.append(d0)
        dispatch.use(dispatch.Dispatcher(path, arch=d0.arch, host_tensors=d0.host_tensors))
    return report


def race_model(cfg, batches, registry, compiled=True, prompt=128, rounds=3, min_gain=0.002, dry_run=False,
               aitune=None, log=None):
    """race() in a model's own decode step, built from its transformers config with random
    weights (aitune.decoding), patched (aitune.patch, q/k/v and gate/up grouped) over
    registry, at each batch size in batches in turn: what `python -m aitune race` runs.
    compiled: the step under torch.compile (as the bars measure), else eager in a CUDA
    graph. Returns {batch: race()'s report}. Needs a CUDA device and transformers."""
    import torch
    from . import decoding, patching
    if not torch.cuda.is_available():
        raise AituneError("race: needs a CUDA device (torch.cuda.is_available() is False)")
    say = log or (lambda s: None)
    model = decoding.random_model(cfg)
    p = patching.patch(model, registry)
    reports = {}
    try:
        for b in batches:
            step = decoding.DecodeStep(model, cfg, b, prompt=prompt, compiled=compiled)
            say("race: batch %d, %s" % (b, "torch.compile" if compiled else "eager, CUDA graph"))
            capture = replayable(step, step.state())
            reports[b] = race(capture, rounds=rounds, min_gain=min_gain, dry_run=dry_run, aitune=aitune, log=say)
            del step, capture
    finally:
        patching.unpatch(model)
        del p, model
        close_trials()
    return reports
