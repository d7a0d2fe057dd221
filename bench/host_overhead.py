#!/usr/bin/env python3
"""Host time per call of a 1 x K x K product (default K = 4096, bf16): aitune's ways
in against torch.mm and F.linear, in the same process.

    OUT=/tmp/out python bench/host_overhead.py --registry llama.db      # on the GPU
    python bench/host_overhead.py --fake                                 # here, without one

On the GPU each side is timed while the GPU is held busy by torch.cuda._sleep, in
chunks of --chunk calls, so the launches only queue: what is timed is the host's
work alone (argument checks, allocation, dispatch, the driver's launch call), not
the GPU's (a 1 x 4096 x 4096 product takes ~15 us of GPU time, more than aitune's
host time). --fake runs on the CPU with the recording libcuda
(build/tests/fakecuda) and a registry it writes, so aitune's side is everything but
the driver's launch (which costs a few us on a GPU machine); torch.mm and F.linear
then run on CPU tensors of K = 16 (their dispatch, almost no arithmetic).

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


def measure(torch, aitune, dev, k, calls, chunk, log=None, dispatcher=None):
    """{name: us per call} for the ways in, the better of two interleaved rounds."""
    import torch.nn.functional as F
    cuda = dev != "cpu"
    x = torch.randn(1, k, device=dev, dtype=torch.bfloat16)
    lin = aitune.nn.Linear(k, k, bias=False, device=dev, dtype=torch.bfloat16).requires_grad_(False)
    w = lin.weight
    small = 16 if not cuda else k
    xs = torch.randn(1, small, device=dev, dtype=torch.float32 if not cuda else torch.bfloat16)
    ws = torch.randn(small, small, device=dev, dtype=xs.dtype)
    op = torch.ops.aitune.linear
    ways = [("torch.mm", torch.mm, (xs, ws.t())), ("F.linear", F.linear, (xs, ws)),
            ("aitune.nn.Linear.forward", lin.forward, (x,)), ("aitune.nn.Linear()", lin, (x,))]
    if cuda:   # on CPU tensors the op is PyTorch's CPU kernel: nothing of aitune's to time
        ways.append(("torch.ops.aitune.linear", op, (x, w)))
    # The pieces of one eager call, timed alone: the output's allocation (as the runner
    # does it, and as torch.empty would), the current stream, the launch through
    # libaitune of a Bound like the module's (its weight's tensor map prebuilt).
    bf, xdev = torch.bfloat16, x.device
    ways += [("torch.empty(shape, dtype=, device=)", lambda: torch.empty((1, k), dtype=bf, device=xdev), ())]
    template = aitune.ops._out_template((1, k), bf, xdev)
    if template is not None:
        ways.append(("torch.empty_like(template)", torch.empty_like, (template,)))
    if cuda:
        ways.append(("_cuda_getCurrentRawStream", torch._C._cuda_getCurrentRawStream, (x.get_device(),)))
    info = {}
    with torch.no_grad():
        lin(x)
        st = lin.__dict__.get("_aitune")
        tuned = bool(st and any(r is not aitune.ops._FALLBACK for r in st.runs.values()))
        d = aitune.dispatch.current()
        known = {"B": w.data_ptr()}
        b = d.bound("gemm_nt", "bf16", (1, k, k), x.get_device(), known) if d else None
        if b is not None:
            out = torch.empty(1, k, device=dev, dtype=torch.bfloat16)
            s = torch._C._cuda_getCurrentRawStream(x.get_device()) if cuda else 0
            vals = (x.data_ptr(), w.data_ptr(), out.data_ptr())
            if b.ws_bytes:
                vals += (aitune.ops.workspace(x.get_device(), x.device, s, b.ws_bytes),)
            ways.append(("Bound.launch", b.launch, (vals, s)))
            # Bound.launch taken apart: the ctypes call into aitune_bound_launch with the
            # arguments packed once (libaitune and the driver's launch, plus ctypes), a
            # ctypes call of a libaitune function that does nothing but copy a struct
            # (ctypes alone), and the driver's context query the launch makes.
            import ctypes
            from aitune.registry import thread_buffer
            raw_buf, raw_addr = thread_buffer(b._tls)
            b._pack(raw_buf, 0, *vals)
            ways.append(("aitune_bound_launch (ctypes, packed once)", b._fn, (b.reg._h, b.ptr, raw_addr, s)))
            binfo = aitune._lib.BoundInfo()
            ways.append(("ctypes no-op (aitune_bound_info_get)", aitune._lib.load().aitune_bound_info_get,
                         (b.reg._h, b.ptr, ctypes.byref(binfo))))
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
        res = {}
        for _ in range(2):
            for name, fn, args in ways:
                for _ in range(20):
                    fn(*args)
                total, done = 0.0, 0
                while done < calls:
                    n = min(chunk, calls - done)
                    if cuda:
                        torch.cuda.synchronize()
                        torch.cuda._sleep(int(2e8))     # ~0.1 s of GPU time: the launches only queue
                    t = time.perf_counter()
                    for _ in range(n):
                        fn(*args)
                    total += time.perf_counter() - t
                    done += n
                if cuda:
                    torch.cuda.synchronize()
                us = total / calls * 1e6
                res[name] = min(us, res.get(name, us))
    for name, us in res.items():
        row = {"what": "host", "call": name, "us": round(us, 2), "x_mm": round(us / res["torch.mm"], 3),
               "shape": "1x16x16" if not cuda and name in ("torch.mm", "F.linear") else "1x%dx%d" % (k, k),
               "tuned": tuned, "device": dev}
        if log:
            log(row)
    return res, tuned, info


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--registry", help="a registry with gemm_nt bf16 tuned at 1 x K x K (on the GPU)")
    g.add_argument("--fake", action="store_true", help="CPU, with the recording libcuda and a registry written here")
    p.add_argument("-k", type=int, default=4096, help="K (default 4096)")
    p.add_argument("--calls", type=int, default=2000, help="calls per way (default 2000)")
    p.add_argument("--chunk", type=int, default=500, help="calls queued per busy GPU period (default 500)")
    p.add_argument("--out", default=os.environ.get("OUT", "."), help="folder for host_overhead.jsonl")
    a = p.parse_args(argv)
    if a.k < 16 or a.k % 8 or a.calls < 1 or a.chunk < 1:
        p.error("-k must be a multiple of 8, >= 16; --calls and --chunk >= 1")
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
        reg = fakereg.build(os.path.join(tempfile.mkdtemp(prefix="aitune-host-"), "fake.db"), gemm=((1, a.k, a.k),),
                            rows=(), dtypes=("bf16",))
        aitune.use(aitune.dispatch.Dispatcher(reg, arch="sm_90", host_tensors=True))
        dev, what = "cpu", "CPU, recording libcuda (no driver launch)"
    else:
        if not torch.cuda.is_available():
            sys.exit("host_overhead: no CUDA device (--fake measures without one)")
        aitune.use(a.registry)
        dev, what = "cuda", torch.cuda.get_device_name()
    res, tuned, info = measure(torch, aitune, dev, a.k, a.calls, a.chunk, log)
    f.close()
    print("host time per call, 1 x %d x %d bf16, %s, %d calls each%s" % (a.k, a.k, what, a.calls,
                                                                     "" if tuned else
                                                                     " (NOT TUNED: aitune fell back to PyTorch)"))
    print("| call | us | x torch.mm |")
    print("| --- | --- | --- |")
    for name, us in res.items():
        print("| %s | %.2f | %.2f |" % (name, us, us / res["torch.mm"]))
    if info:
        print("the module's bound launch: %s, grid %s, block %s, cluster %s, %d tensor map(s) (the weight's prebuilt, "
              "x's encoded again when its address moves, the last one kept), workspace %d bytes" % (
                  info["template"], info["grid"], info["block"], info["cluster"], info["tensor_maps_per_launch"],
                  info["ws_bytes"]))
    raw, noop = res.get("aitune_bound_launch (ctypes, packed once)"), res.get("ctypes no-op (aitune_bound_info_get)")
    if raw is not None and noop is not None:
        print("Bound.launch %.2f us = Python packing %.2f + ctypes %.2f + libaitune and the driver's launch %.2f "
              "(libaitune's own part, without the driver: well under 0.1 us on the recording libcuda)" % (
                  res["Bound.launch"], res["Bound.launch"] - raw, noop, raw - noop))
    fwd = res["aitune.nn.Linear.forward"]
    print("bar: aitune.nn.Linear.forward %.2f us (<= 10: %s), %.2fx torch.mm (<= 0.5: %s)" % (
        fwd, "yes" if fwd <= 10 else "no", fwd / res["torch.mm"], "yes" if fwd <= 0.5 * res["torch.mm"] else "no"))
    print("details: %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
