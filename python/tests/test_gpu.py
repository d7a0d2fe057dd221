"""On a GPU: aitune.nn.Linear's eager path (the first call, which binds, and the warm
calls, which take the hot path: aitune.nn, aitune_launch_cached) against F.linear,
with the registry's tuned kernels, and aitune::attn_decode against PyTorch's
computation where the registry has it. Skips, saying why, without a CUDA device, without
a registry (AITUNE_GPU_DB: one with gemm_nt bf16 tuned on this GPU at N x K, default
4096 x 4096, for some m of 1, 2, 8, 16), or in a process where the other tests loaded
the recording libcuda (run this file alone). Runs under pytest or as a script (which needs no pytest: a GPU machine may lack it), one
line per test starting with ok, FAIL or skip:

    AITUNE_GPU_DB=llama.db PYTHONPATH=python AITUNE_LIB=build/libaitune.so python3 python/tests/test_gpu.py
"""

import os
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

try:
    import pytest
except ImportError:              # the script's own runner (below) stands in
    class _Skip(Exception):
        pass

    class pytest:                # noqa: N801
        Skip = _Skip

        @staticmethod
        def skip(why):
            raise _Skip(why)

        @staticmethod
        def importorskip(name):
            return __import__(name)

        @staticmethod
        def fixture(**_):
            return lambda f: f

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import aitune  # noqa: E402

BF = torch.bfloat16
NK = tuple(int(v) for v in os.environ.get("AITUNE_GPU_NK", "4096,4096").split(","))


def _recording_driver_loaded():
    try:
        with open("/proc/self/maps") as f:
            return "fakecuda" in f.read()
    except OSError:
        return False


@pytest.fixture(scope="module")
def gpu():
    """(dispatcher, m values the registry holds at N x K) or a skip that says why."""
    if _recording_driver_loaded():
        pytest.skip("the recording libcuda is loaded in this process: run python/tests/test_gpu.py alone")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    db = os.environ.get("AITUNE_GPU_DB")
    if not db or not os.path.isfile(db):
        pytest.skip("no registry: set AITUNE_GPU_DB to one with gemm_nt bf16 tuned on this GPU")
    d = aitune.use(aitune.dispatch.Dispatcher(db))
    n, k = NK
    ms = [m for m in (1, 2, 8, 16) if d.tuned("gemm_nt", "bf16", (m, n, k), torch.cuda.current_device())]
    if not ms:
        pytest.skip("%s has no gemm_nt bf16 winner at m in 1, 2, 8, 16 x %d x %d on this GPU" % (db, n, k))
    yield d, ms
    aitune.dispatch._current = None


def _linear(bias, n, k):
    torch.manual_seed(0)
    lin = aitune.nn.Linear(k, n, bias=bias, device="cuda", dtype=BF).requires_grad_(False)
    with torch.no_grad():
        lin.weight.normal_(0, k ** -0.5)
        if bias:
            lin.bias.normal_()
    return lin


def _same(got, want, what):
    torch.cuda.synchronize()
    why = aitune.ops.differs(got, want)
    assert why is None, "%s: %s" % (what, why)


def test_warm_calls_match_pytorch(gpu):
    d, ms = gpu
    n, k = NK
    for bias in (False, True):
        lin = _linear(bias, n, k)
        for m in ms:
            with torch.no_grad():
                for i in range(4):
                    x = torch.randn(m, k, device="cuda", dtype=BF)     # a new x (and address) each call
                    _same(lin(x), F.linear(x, lin.weight, lin.bias), "m %d, bias %s, call %d" % (m, bias, i))
                st = lin.__dict__["_aitune"]
                assert x.shape in st.fast, "m %d: the warm calls took the hot path" % m
                # The same x again (its tensor maps kept), a strided x, an unaligned x.
                _same(lin(x), F.linear(x, lin.weight, lin.bias), "m %d, the same x" % m)
                xs = torch.randn(k, m, device="cuda", dtype=BF).t()
                _same(lin(xs), F.linear(xs, lin.weight, lin.bias), "m %d, a strided x" % m)
                xu = torch.randn(m * k + 1, device="cuda", dtype=BF)[1:].view(m, k)
                assert xu.data_ptr() % 16
                _same(lin(xu), F.linear(xu, lin.weight, lin.bias), "m %d, an unaligned x" % m)


def test_streams_threads_and_a_replaced_weight(gpu):
    d, ms = gpu
    n, k = NK
    m = ms[0]
    lin = _linear(False, n, k)
    x = torch.randn(m, k, device="cuda", dtype=BF)
    with torch.no_grad():
        lin(x)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            y = lin(x)
        torch.cuda.current_stream().wait_stream(side)
        _same(y, F.linear(x, lin.weight), "on another stream")
        got = {}

        def other():
            with torch.no_grad():
                got["y"] = lin(x)
        t = threading.Thread(target=other)
        t.start()
        t.join()
        _same(got["y"], F.linear(x, lin.weight), "from another thread")
        lin.weight.data = torch.randn(n, k, device="cuda", dtype=BF) * k ** -0.5
        _same(lin(x), F.linear(x, lin.weight), "a replaced weight")


def test_a_captured_graph_replays_right(gpu):
    d, ms = gpu
    n, k = NK
    m = ms[0]
    lin = _linear(True, n, k)
    x = torch.randn(m, k, device="cuda", dtype=BF)
    with torch.no_grad():
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                lin(x)                      # warm: bound before capture
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            y = lin(x)
        for _ in range(3):
            x.copy_(torch.randn(m, k, device="cuda", dtype=BF))
            g.replay()
            _same(y, F.linear(x, lin.weight, lin.bias), "graph replay")


# attn_decode's shape in the tests below: Llama-3-8B's heads over the bench's cache.
ATTN = (32, 8, 184, 128)


def test_decode_attention_matches_pytorch(gpu):
    """aitune::attn_decode, where the registry has it at batch 1 or 8 over ATTN: against
    PyTorch's computation with a static cache's mask (keys past the position -inf), a
    strided q, and replayed from a CUDA graph with new inputs."""
    d, _ = gpu
    h, g, n, hd = ATTN
    dev = torch.cuda.current_device()
    bs = [b for b in (1, 8) if d.tuned("attn_decode", "bf16", (b, h, g, n, hd), dev)]
    if not bs:
        pytest.skip("the registry has no attn_decode bf16 at b in 1, 8 x %s (python -m aitune tune ... --ops "
                    "attn_decode)" % (ATTN,))
    torch.manual_seed(0)
    for b in bs:
        q = torch.randn(b, h, hd, device="cuda", dtype=BF)
        k = torch.randn(b, g, n, hd, device="cuda", dtype=BF)
        v = torch.randn(b, g, n, hd, device="cuda", dtype=BF)
        bias = torch.zeros(b, n, device="cuda", dtype=BF)
        bias[:, 177:] = float("-inf")
        with torch.no_grad():
            _same(aitune.ops.attn_decode(q, k, v, bias, hd ** -0.5),
                  aitune.ops.ref_attn_decode(q, k, v, bias, hd ** -0.5), "batch %d" % b)
            qs = torch.randn(hd, b, h, device="cuda", dtype=BF).permute(1, 2, 0)
            _same(aitune.ops.attn_decode(qs, k, v, bias, hd ** -0.5),
                  aitune.ops.ref_attn_decode(qs, k, v, bias, hd ** -0.5), "batch %d, a strided q" % b)
            gr = torch.cuda.CUDAGraph()
            with torch.cuda.graph(gr):
                y = aitune.ops.attn_decode(q, k, v, bias, hd ** -0.5)
            for _ in range(2):
                q.copy_(torch.randn_like(q))
                k.copy_(torch.randn_like(k))
                gr.replay()
                _same(y, aitune.ops.ref_attn_decode(q, k, v, bias, hd ** -0.5), "batch %d, graph replay" % b)


def _main():
    """The tests without pytest: the fixture made once, each test one line."""
    skip = getattr(pytest, "Skip", None) or pytest.skip.Exception
    tests = [(name, f) for name, f in sorted(globals().items()) if name.startswith("test_") and callable(f)]
    fixture = gpu.__wrapped__ if hasattr(gpu, "__wrapped__") else gpu
    gen = fixture()
    try:
        value = next(gen)
    except skip as e:
        for name, _ in tests:
            print("skip %s: %s" % (name, e))
        return 0
    failed = 0
    for name, f in tests:
        try:
            f(value)
            print("ok   %s" % name)
        except skip as e:
            print("skip %s: %s" % (name, e))
        except Exception as e:     # one line per failure, the run goes on
            failed += 1
            print("FAIL %s: %s: %s" % (name, type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
    gen.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(_main())
