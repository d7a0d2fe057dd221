"""bench/vendor_check.py: the GPU half of bench/vendor_check.sh (issue 33).

    python3 bench/vendor_check.py time DB          the worker's vendor times against torch.mm
    python3 bench/vendor_check.py force DB         make one bucket the vendor's if no sweep did
    python3 bench/vendor_check.py launch DB SO [M]  a vendor bucket launched through libaitune
                                                    and the emitted file (SO), against torch

time: for each stream-timed vendor row of the registry, torch.mm at the same
shape timed the way the worker times (bench.h, stream timing): the inputs in
`copies` copies (twice the L2 over their bytes, plus 2, at most 16), L2
flushed, then a chain of at least 16 launches over the copies in turn between
two events, its time over its launches; the chain captured in a CUDA graph so
host gaps stay out (the worker's C loop keeps ahead of the GPU the same way).
Median of 60 samples. Prints one line per shape: worker vendor us, torch.mm
us, their ratio.

launch: at a shape inside a bucket the vendor holds: D through libaitune
(aitune.Registry.launch: kernel_get, the 32 MiB workspace, aitune_launch;
and Registry.bind: aitune_bind, aitune_bound_launch) and through the
emitted file's dispatcher, each compared with torch's
A @ W.T within gemm's bf16 tolerance (rtol 1.6e-2, atol 1e-4 k); whether
the two agree bit for bit (the same heuristic choice) is printed too.
Exit status 1 when a comparison fails.
"""
import ctypes
import json
import os
import sqlite3
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

VENDOR = "vendor/cublaslt"


def shape_of(text):
    s = json.loads(text)
    return s["m"], s["n"], s["k"]


def time_chain(m, n, k, samples=60):
    """torch.mm at (m, n, k), timed as bench.c's stream timing (see above)."""
    import torch
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    in_bytes = (m * k + n * k) * 2
    copies = min(16, 2 * l2 // in_bytes + 2)
    chain = copies * ((16 + copies - 1) // copies)
    A = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for _ in range(copies)]
    W = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(copies)]
    D = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    for i in range(3):   # warm-up: cuBLAS's heuristic, outside the capture
        torch.mm(A[i % copies], W[i % copies].t(), out=D)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(chain):
            torch.mm(A[i % copies], W[i % copies].t(), out=D)
    times = []
    for _ in range(samples):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        flush.fill_(1)
        e0.record()
        g.replay()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) * 1e3 / chain)
    return statistics.median(times), copies, chain


def cmd_time(db):
    con = sqlite3.connect(db)
    rows = con.execute("SELECT shape, median_us, status, library, algo FROM vendor_times WHERE op = 'gemm_nt' "
                       "AND dtype = 'bf16' AND timing = 'stream' ORDER BY json_extract(shape, '$.m')").fetchall()
    if not rows:
        print("FAIL no stream-timed vendor rows in %s: did the sweep time the vendor?" % db)
        return 1
    bad = 0
    print("%-18s %12s %12s %8s  %s" % ("shape m,n,k", "worker us", "torch.mm us", "ratio", "library, algorithm"))
    for shape, us, status, lib, algo in rows:
        m, n, k = shape_of(shape)
        if status != "ok":
            print("FAIL %d,%d,%d: the worker's vendor measurement is %s" % (m, n, k, status))
            bad += 1
            continue
        t, copies, chain = time_chain(m, n, k)
        print("%-18s %12.2f %12.2f %8.3f  %s, %s (copies %d, chain %d)" % ("%d,%d,%d" % (m, n, k), us, t, us / t,
                                                                           lib, algo, copies, chain))
    return 1 if bad else 0


def vendor_plan(dtype):
    """A vendor winner's plan (registry_vendor.c: reg_vendor_plan writes the same)."""
    args = [{"name": a, "role": "in" if a in "AB" else "out", "dtype": dtype} for a in "ABD"]
    args += [{"name": d, "role": "dim"} for d in "mnk"]
    params = [{"kind": "ptr", "arg": a} for a in "ABD"] + [{"kind": "dim", "expr": d} for d in "mnk"]
    params.append({"kind": "workspace", "size": "33554432", "zero": "0"})
    return json.dumps({"v": 2, "kernel": "cublaslt", "dims": ["m", "n", "k"], "args": args,
                       "grid": ["1", "1", "1"], "block": ["1", "1", "1"], "cluster": ["1", "1", "1"], "smem": "0",
                       "params": params}, separators=(",", ":"))


def cmd_force(db):
    con = sqlite3.connect(db)
    have = con.execute("SELECT bucket FROM winners WHERE template = ?", (VENDOR,)).fetchall()
    if have:
        print("the sweep chose the vendor for %s" % ", ".join(b for (b,) in have))
        return 0
    row = con.execute("SELECT rowid, bucket FROM winners WHERE op = 'gemm_nt' AND dtype = 'bf16' "
                      "ORDER BY cast(lo AS integer) DESC LIMIT 1").fetchone()
    if not row:
        print("FAIL no gemm_nt bf16 winner to give the vendor")
        return 1
    con.execute("UPDATE winners SET template = ?, config = '{}', cubin = NULL, launch = ? WHERE rowid = ?",
                (VENDOR, vendor_plan("bf16"), row[0]))
    con.commit()
    print("NOTE no bucket was the vendor's after the sweep: %s made the vendor's for the launch checks" % row[1])
    return 0


def cmd_launch(db, so, m=None):
    import torch
    import aitune
    con = sqlite3.connect(db)
    row = con.execute("SELECT lo, hi, bucket FROM winners WHERE template = ? AND op = 'gemm_nt' AND dtype = 'bf16'",
                      (VENDOR,)).fetchone()
    if not row:
        print("FAIL no bucket of gemm_nt bf16 is the vendor's")
        return 1
    lo = [int(x) for x in row[0].split(",")]
    hi = [int(x) for x in row[1].split(",")]
    # Inside the bucket, not at its edge: m between lo and hi, n and k at lo.
    m = int(m) if m else min(hi[0] - 1, lo[0] + 37)
    n, k = lo[1], lo[2]
    torch.manual_seed(0)
    A = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    W = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    ref = (A.float() @ W.float().t())
    tol = 1.6e-2 * ref.abs() + 1e-4 * k
    fails = 0

    def judge(name, D):
        nonlocal fails
        err = (D.float() - ref).abs()
        bad = int((err > tol).sum())
        print("%s %s at %d,%d,%d (bucket %s): %d of %d elements outside tolerance, max |err| %.4g"
              % ("PASS" if bad == 0 else "FAIL", name, m, n, k, row[2], bad, err.numel(), float(err.max())))
        fails += bad != 0

    reg = aitune.Registry(db)
    D1 = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    kern = reg.launch("gemm_nt", A, W, D1, shape=(m, n, k))
    torch.cuda.synchronize()
    print("libaitune answered with %s %s (%s), workspace %d bytes" % (kern.template, kern.config, kern.level,
                                                                      kern.workspace_bytes((m, n, k))))
    if kern.template != VENDOR:
        print("FAIL libaitune's kernel is %s, not the vendor's" % kern.template)
        fails += 1
    judge("libaitune (aitune_launch)", D1)
    # The bound launch (aitune_bind): the vendor's kind, the same call.
    b = reg.bind(kern, (m, n, k), known={"B": W.data_ptr()})
    D4 = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    wsb = torch.empty(b.ws_bytes, dtype=torch.uint8, device="cuda")
    b.launch([A.data_ptr(), W.data_ptr(), D4.data_ptr(), wsb.data_ptr()], torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    print("bound launch: kind %d (1: the vendor), workspace %d bytes" % (b.kind, b.ws_bytes))
    if b.kind != 1:
        print("FAIL the bound launch's kind is %d, not AITUNE_BOUND_VENDOR" % b.kind)
        fails += 1
    judge("libaitune (aitune_bound_launch)", D4)

    lib = ctypes.CDLL(so)
    fn, fws = lib.aitune_gemm_nt_bf16, lib.aitune_gemm_nt_bf16_workspace_bytes
    LL = ctypes.c_longlong
    fws.restype, fws.argtypes = ctypes.c_size_t, [LL, LL, LL]
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p] * 3 + [LL] * 3 + [ctypes.c_void_p, ctypes.c_void_p]
    ws = torch.empty(fws(m, n, k), dtype=torch.uint8, device="cuda")
    D2 = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    rc = fn(A.data_ptr(), W.data_ptr(), D2.data_ptr(), m, n, k, ws.data_ptr(),
            torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    if rc != 0:
        print("FAIL the emitted aitune_gemm_nt_bf16 returned cudaError %d" % rc)
        fails += 1
    judge("emitted file (aitune_gemm_nt_bf16)", D2)
    print("libaitune and the emitted file agree bit for bit: %s" % bool(torch.equal(D1, D2)))
    # A misaligned view (2 bytes in): the plan for that alignment, still right.
    Ab = torch.empty(m * k + 1, device="cuda", dtype=torch.bfloat16)
    Av = Ab[1:].view(m, k)
    Av.copy_(A)
    D3 = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    rc = fn(Av.data_ptr(), W.data_ptr(), D3.data_ptr(), m, n, k, ws.data_ptr(),
            torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    judge("emitted file, A 2 bytes off alignment", D3)
    return 1 if fails else 0


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("time", "force", "launch"):
        print(__doc__)
        sys.exit(2)
    if sys.argv[1] == "time":
        sys.exit(cmd_time(sys.argv[2]))
    if sys.argv[1] == "force":
        sys.exit(cmd_force(sys.argv[2]))
    sys.exit(cmd_launch(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None))
