#!/usr/bin/env python3
"""Host time per call of a 1 x N x K product (default N = K = 4096, bf16): aitune's ways
in against torch.mm and F.linear, in the same process, and their results checked.

    OUT=/tmp/out python bench/host_overhead.py --registry llama.db      # on the GPU
    python bench/host_overhead.py --fake                                 # here, without one

Timed (each over --calls calls after 20 of warm-up, in chunks of --chunk; the best
chunk of three interleaved rounds): torch.mm, F.linear, aitune.nn.Linear.forward (the bar), aitune.nn.Linear()
(nn.Module's __call__ on top), torch.ops.aitune.linear (the op, as a compiled graph
calls it), and the pieces of one warm forward alone: the module's runner, the
output's allocation (torch.empty_like of the runner's template; torch.empty for
comparison), the current stream, the cached launch (aitune_launch_cached, packed
once: ctypes, libaitune and the driver's launch), ctypes alone (the same call on a
NULL handle), Bound.launch (aitune_bound_launch, the way before the cached launch)
and cuCtxGetCurrent. A line then splits the forward into those parts.

On the GPU each side is timed while the GPU is held busy by torch.cuda._sleep, in
chunks of --chunk calls, so the launches only queue: what is timed is the host's
work alone (argument checks, allocation, dispatch, the driver's launch call), not
the GPU's (a 1 x 4096 x 4096 product takes ~15 us of GPU time, more than aitune's
host time). Before timing, Linear's results (first call, warm calls, a new x, with
a bias) and the op's are compared with F.linear's (bf16 tolerance); a difference
is named and the exit code is 1. --fake runs on the CPU with the recording libcuda
(build/tests/fakecuda) and a registry it writes, so aitune's side is everything but
the driver's launch (which costs a few us on a GPU machine) and nothing is computed
(no check); torch.mm and F.linear then run on CPU tensors of K = 16 (their
dispatch, almost no arithmetic).

Bar (issue 32): aitune <= 10 us per call and <= 0.5x torch.mm. Prints a table last;
details (JSON lines) go to $OUT/host_overhead.jsonl.
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))


def _time(torch, ways, calls, chunk, cuda, rounds=3):
    """{name: us per call} of each (name, fn, args) of ways: 20 calls of warm-up, then
    `calls` timed, `chunk` at a time while the GPU sleeps; the best chunk of `rounds`
    interleaved rounds (timeit's rule: the least disturbed sample is the cost itself;
    the other processes of a shared host only ever add to it, on both sides alike)."""
    res = {}
    for _ in range(rounds):
        for name, fn, args in ways:
            for _ in range(20):
                fn(*args)
            done = 0
            while done < calls:
                n = min(chunk, calls - done)
                if cuda:
                    torch.cuda.synchronize()
                    torch.cuda._sleep(int(2e8))     # ~0.1 s of GPU time: the launches only queue
                t = time.perf_counter()
                for _ in range(n):
                    fn(*args)
                us = (time.perf_counter() - t) / n * 1e6
                res[name] = min(us, res.get(name, us))
                done += n
            if cuda:
                torch.cuda.synchronize()
    return res


def check(torch, aitune, lin, x, cuda):
    """Whether Linear's eager results (the first call, the warm path, with a bias, and
    torch.ops.aitune.linear's) match F.linear's within bf16's tolerance: {what: None
    or the difference}. On the recording driver nothing is computed: not checked."""
    import torch.nn.functional as F
    if not cuda:
        return {}
    out = {}
    w = lin.weight
    ref = F.linear(x, w)
    fresh = aitune.nn.Linear(w.shape[1], w.shape[0], bias=True, device=x.device, dtype=x.dtype).requires_grad_(False)
    fresh.weight.copy_(w)
    fresh.bias.normal_()
    out["aitune.nn.Linear.forward"] = aitune.ops.differs(lin.forward(x), ref)
    out["aitune.nn.Linear.forward, a new x each call"] = aitune.ops.differs(lin.forward(x.clone()), ref)
    out["aitune.nn.Linear.forward with bias (first call)"] = aitune.ops.differs(fresh.forward(x), F.linear(x, w, fresh.bias))
    out["aitune.nn.Linear.forward with bias (warm)"] = aitune.ops.differs(fresh.forward(x), F.linear(x, w, fresh.bias))
    out["torch.ops.aitune.linear"] = aitune.ops.differs(torch.ops.aitune.linear(x, w), ref)
    torch.cuda.synchronize()
    return out


def measure(torch, aitune, dev, k, calls, chunk, log=None, n=None):
    """({name: us per call}, tuned, info) for the ways in to a 1 x n x k bf16 product
    (n defaults to k) and the pieces of one eager call; info describes the bound
    launch and the correctness checks (info["check"])."""
    import ctypes
    import torch.nn.functional as F
    from aitune.registry import CACHED_AT
    n = n or k
    cuda = dev != "cpu"
    bf = torch.bfloat16
    x = torch.randn(1, k, device=dev, dtype=bf)
    lin = aitune.nn.Linear(k, n, bias=False, device=dev, dtype=bf).requires_grad_(False)
    w = lin.weight
    # On CPU tensors torch.mm and F.linear run at 1 x 16 x 16 in f32: their dispatch,
    # almost no arithmetic (PyTorch's CPU bf16 GEMM at 4096 would time arithmetic).
    small = 16 if not cuda else k
    xs = torch.randn(1, small, device=dev, dtype=torch.float32 if not cuda else bf)
    ws = torch.randn(small if not cuda else n, small, device=dev, dtype=xs.dtype)
    ways = [("torch.mm", torch.mm, (xs, ws.t())), ("F.linear", F.linear, (xs, ws)),
            ("aitune.nn.Linear.forward", lin.forward, (x,)), ("aitune.nn.Linear()", lin, (x,))]
    if cuda:   # on CPU tensors the op is PyTorch's CPU kernel: nothing of aitune's to time
        ways.append(("torch.ops.aitune.linear", torch.ops.aitune.linear, (x, w)))
    info = {}
    with torch.no_grad():
        lin(x)
        st = lin.__dict__.get("_aitune")
        run = st.fast.get(x.shape) if st else None
        tuned = run is not None
        # The pieces of one warm eager call, each timed alone: the module's runner (the
        # forward less its table lookup, grad and bias checks), the output's allocation
        # (as the runner does it, and as torch.empty would), the current stream, and the
        # launch through libaitune (ctypes, libaitune and the driver's launch).
        if run is not None:
            ways.append(("the module's runner (x, weight)", run, (x, w)))
        xdev = x.device
        ways.append(("torch.empty(shape, dtype=, device=)", lambda: torch.empty((1, n), dtype=bf, device=xdev), ()))
        template = aitune.ops._out_template((1, n), bf, xdev)
        if template is not None:
            ways.append(("torch.empty_like(template)", torch.empty_like, (template,)))
        if cuda:
            ways.append(("_cuda_getCurrentRawStream", torch._C._cuda_getCurrentRawStream, (x.get_device(),)))
        d = aitune.dispatch.current()
        b = d.bound("gemm_nt", "bf16", (1, n, k), x.get_device(), {"B": w.data_ptr()}) if d and tuned else None
        if b is not None:
            out = torch.empty(1, n, device=dev, dtype=bf)
            s = torch._C._cuda_getCurrentRawStream(x.get_device()) if cuda else 0
            wsa = aitune.ops.workspace(x.get_device(), x.device, s, b.ws_bytes) if b.ws_bytes else 0
            vals = (x.data_ptr(), w.data_ptr(), out.data_ptr())
            blk = b.cached_block()
            b._cpack(blk, CACHED_AT, s, *vals, wsa)
            ways.append(("aitune_launch_cached (ctypes, packed once)", b._cfn, (blk,)))
            # The way before the cached launch: four ctypes arguments, packed per call.
            ways.append(("Bound.launch (aitune_bound_launch)", b.launch, (vals + ((wsa,) if b.ws_bytes else ()), s)))
            # ctypes alone: the same call on a block whose handle is NULL, which libaitune
            # refuses at once.
            ways.append(("ctypes alone (aitune_launch_cached, NULL handle)", b._cfn,
                         (ctypes.create_string_buffer(len(blk)),)))
            if cuda:
                try:
                    cu = ctypes.CDLL("libcuda.so.1")
                    ctx = ctypes.c_void_p()
                    ways.append(("cuCtxGetCurrent (ctypes)", cu.cuCtxGetCurrent, (ctypes.byref(ctx),)))
                except OSError:
                    pass
            info = {"template": b.kernel.template, "config": b.kernel.config, "grid": b.grid, "block": b.block,
                    "cluster": b.cluster, "tensor_maps_per_launch": b.ntmaps, "ws_bytes": b.ws_bytes}
            if log:
                log(dict(what="bound", **info))
        info["check"] = check(torch, aitune, lin, x, cuda) if tuned else {}
        if log:
            for what, why in info["check"].items():
                log(dict(what="check", call=what, ok=why is None, why=why))
        res = _time(torch, ways, calls, chunk, cuda)
    for name, us in res.items():
        row = {"what": "host", "call": name, "us": round(us, 2), "x_mm": round(us / res["torch.mm"], 3),
               "shape": "1x16x16" if not cuda and name in ("torch.mm", "F.linear") else "1x%dx%d" % (n, k),
               "tuned": tuned, "device": dev}
        if log:
            log(row)
    return res, tuned, info


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--registry", help="a registry with gemm_nt bf16 tuned at 1 x N x K (on the GPU)")
    g.add_argument("--fake", action="store_true", help="CPU, with the recording libcuda and a registry written here")
    p.add_argument("-k", type=int, default=4096, help="K (default 4096)")
    p.add_argument("-n", type=int, default=0, help="N (default K)")
    p.add_argument("--calls", type=int, default=2000, help="calls per way (default 2000)")
    p.add_argument("--chunk", type=int, default=500, help="calls queued per busy GPU period (default 500)")
    p.add_argument("--out", default=os.environ.get("OUT", "."), help="folder for host_overhead.jsonl")
    a = p.parse_args(argv)
    n = a.n or a.k
    if a.k < 16 or a.k % 8 or n < 16 or n % 8 or a.calls < 1 or a.chunk < 1:
        p.error("-k and -n must be multiples of 8, >= 16; --calls and --chunk >= 1")
    if a.registry and not os.path.isfile(a.registry):
        p.error("--registry %s: no such file" % a.registry)
    if a.fake:
        import ctypes
        sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
        import fakereg
        if not os.path.exists(fakereg.FAKE_CUDA):
            sys.exit("host_overhead: no %s (make)" % fakereg.FAKE_CUDA)
        ctypes.CDLL(fakereg.FAKE_CUDA, mode=ctypes.RTLD_GLOBAL)   # before libaitune opens libcuda
        os.environ.setdefault("AITUNE_LIB", fakereg.LIBAITUNE)
    import torch
    import aitune
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "host_overhead.jsonl")
    f = open(path, "w")

    def log(row):
        f.write(json.dumps(row) + "\n")

    if a.fake:
        import tempfile
        import fakereg
        reg = fakereg.build(os.path.join(tempfile.mkdtemp(prefix="aitune-host-"), "fake.db"), gemm=((1, n, a.k),),
                            rows=(), dtypes=("bf16",))
        aitune.use(aitune.dispatch.Dispatcher(reg, arch="sm_90", host_tensors=True))
        dev, what = "cpu", "CPU, recording libcuda (no driver launch)"
    else:
        if not torch.cuda.is_available():
            sys.exit("host_overhead: no CUDA device (--fake measures without one)")
        aitune.use(a.registry)
        dev, what = "cuda", torch.cuda.get_device_name()
    res, tuned, info = measure(torch, aitune, dev, a.k, a.calls, a.chunk, log, n)
    f.close()
    print("host time per call, 1 x %d x %d bf16, %s, %d calls each%s" % (n, a.k, what, a.calls,
                                                                     "" if tuned else
                                                                     " (NOT TUNED: aitune fell back to PyTorch)"))
    print("| call | us | x torch.mm |")
    print("| --- | --- | --- |")
    for name, us in res.items():
        print("| %s | %.2f | %.2f |" % (name, us, us / res["torch.mm"]))
    if "template" in info:
        print("the module's bound launch: %s, grid %s, block %s, cluster %s, %d tensor map(s) (the weight's prebuilt, "
              "x's encoded again when its address moves, the last one kept), workspace %d bytes" % (
                  info["template"], info["grid"], info["block"], info["cluster"], info["tensor_maps_per_launch"],
                  info["ws_bytes"]))
    fwd = res["aitune.nn.Linear.forward"]
    run, alloc = res.get("the module's runner (x, weight)"), res.get("torch.empty_like(template)")
    cached = res.get("aitune_launch_cached (ctypes, packed once)")
    noop = res.get("ctypes alone (aitune_launch_cached, NULL handle)")
    if None not in (run, alloc, cached, noop):
        print("Linear.forward %.2f us = its table lookup, grad and bias checks %.2f + the runner %.2f: the output's "
              "allocation %.2f, the cached launch %.2f (ctypes %.2f, libaitune and the driver's launch %.2f), the rest "
              "(x's and the weight's checks, the stream, the pack, and what the pieces timed alone cost more "
              "together: caches shared) %.2f" % (
                  fwd, fwd - run, run, alloc, cached, noop, cached - noop, run - alloc - cached))
    checks = info.get("check", {})
    bad = {what: why for what, why in checks.items() if why is not None}
    if checks:
        print("correct (against F.linear, bf16 tolerance): %s" % (
            "yes, %d of %d" % (len(checks), len(checks)) if not bad else
            "NO: " + "; ".join("%s: %s" % kv for kv in bad.items())))
    else:
        print("correct: not checked (%s)" % ("nothing tuned" if not tuned else "the recording driver computes nothing"))
    print("bar: aitune.nn.Linear.forward %.2f us (<= 10: %s), %.2fx torch.mm (<= 0.5: %s)" % (
        fwd, "yes" if fwd <= 10 else "no", fwd / res["torch.mm"], "yes" if fwd <= 0.5 * res["torch.mm"] else "no"))
    print("details: %s" % path)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
