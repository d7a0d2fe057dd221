"""The modules' hot path (aitune.nn: a module that ran at x's shape calls its runner
for it straight away; the runner launches through its aitune_cached block for the
thread, aitune.registry.Bound), through the recording libcuda (no GPU): what it
still checks per call after warm-up, where it steps aside for the slow path, the
bias, threads, a closed registry, a switched dispatcher and check mode. Every test
runs twice: with the runners in C (_aitune_hot, src/pyhot.c) and in Python."""

import gc
import threading

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import aitune  # noqa: E402
from aitune import dispatch, nn as ann  # noqa: E402

BF = torch.bfloat16


@pytest.fixture(autouse=True, params=["C", "Python"])
def hot(request, monkeypatch):
    """The runners' implementation: "C" (the hot path's module, skipped where it is not
    built) or "Python" (as with AITUNE_HOT=0)."""
    from aitune import _lib
    if request.param == "C":
        if _lib.hot() is None:
            pytest.skip("no %s (make)" % _lib.HOT_NAME)
    else:
        _lib.hot()
        monkeypatch.setattr(_lib, "_hot", None)
    return request.param


def warm(mod, x):
    """mod called once at x's shape (bound, its runner in the hot path's table)."""
    n = aitune.dispatch.current()
    with torch.no_grad():
        mod(x)
    st = mod.__dict__["_aitune"]
    assert st.d is n and x.shape in st.fast, "the first call leaves the runner for the hot path"
    return st.fast[x.shape]


def test_warm_calls_still_check_x(disp, fake_cuda):
    lin = ann.Linear(128, 64, bias=False, dtype=BF)
    x = torch.randn(1, 128, dtype=BF)
    run = warm(lin, x)
    with torch.no_grad():
        # Another dtype at the same shape: the runner steps aside, the slow path refuses it.
        with pytest.raises(aitune.AituneError, match="'weight' is torch.bfloat16, x is torch.float16"):
            lin(x.to(torch.float16))
        assert run(x.to(torch.float16), lin.weight) is None
        # Unaligned and strided inputs at the warm shape: copies are launched.
        big = torch.randn(1, 136, dtype=BF)
        xu = big[:, 1:129]
        assert xu.data_ptr() % 16 and xu.shape == x.shape
        lin(xu)
        assert fake_cuda.param(0) not in (0, xu.data_ptr()) and fake_cuda.param(0) % 16 == 0
        xs = torch.randn(128, 2, dtype=BF).t()[:1]
        assert not xs.is_contiguous() and xs.shape == x.shape
        lin(xs)
        assert fake_cuda.param(0) not in (0, xs.data_ptr()) and fake_cuda.param(0) % 16 == 0
        y = lin(x)
        assert fake_cuda.param(0) == x.data_ptr() and fake_cuda.param(2) == y.data_ptr()

    # Another device than the runner's: it steps aside before touching the tensor's data.
    class OnCuda1:
        dtype = BF

        def get_device(self):
            return 1

        def data_ptr(self):
            raise AssertionError("read past the device check")
    assert run(OnCuda1(), lin.weight) is None


def test_warm_calls_refuse_grad(disp, fake_cuda):
    lin = ann.Linear(128, 64, bias=False, dtype=BF)
    x = torch.randn(1, 128, dtype=BF)
    warm(lin, x)
    n = fake_cuda.launches()
    with pytest.raises(aitune.AituneError, match="'weight' requires grad"):
        lin(x)
    lin.requires_grad_(False)
    with pytest.raises(aitune.AituneError, match="'x' requires grad"):
        lin(x.requires_grad_())
    assert fake_cuda.launches() == n, "nothing launched"
    lin(x.detach())
    assert fake_cuda.launches() == n + 1, "grad mode with nothing that requires grad runs"


def test_bias_is_added_on_every_call(disp, fake_cuda):
    # The recording driver writes nothing, so the output holds whatever the allocator
    # had; a NaN bias makes every element NaN only if it is added.
    lin = ann.Linear(128, 64, bias=True, dtype=BF)
    x = torch.randn(1, 128, dtype=BF)
    with torch.no_grad():
        lin.bias.fill_(float("nan"))
        for _ in range(3):
            n = fake_cuda.launches()
            y = lin(x)
            assert fake_cuda.launches() == n + 1 and y.isnan().all()
        lin.bias.data = torch.full((64,), float("nan"), dtype=BF)     # another bias tensor
        assert lin(x).isnan().all()


def test_a_closed_registry_is_an_error_not_a_launch(disp, fake_cuda):
    lin = ann.Linear(128, 64, bias=False, dtype=BF)
    x = torch.randn(1, 128, dtype=BF)
    warm(lin, x)
    disp.reg.close()
    n = fake_cuda.launches()
    with torch.no_grad(), pytest.raises(aitune.AituneError, match="the registry is closed"):
        lin(x)
    assert fake_cuda.launches() == n


def test_each_thread_launches_from_its_own_block(disp, fake_cuda, hot):
    lin = ann.Linear(128, 64, bias=False, dtype=BF)
    x = torch.randn(1, 128, dtype=BF)
    warm(lin, x)
    blocks = len(disp.reg._blocks)
    got = {}

    def other():
        with torch.no_grad():
            x2 = torch.randn(1, 128, dtype=BF)
            y2 = lin(x2)
            got["params"] = (fake_cuda.param(0), fake_cuda.param(2))
            got["want"] = (x2.data_ptr(), y2.data_ptr())
            got["blocks"] = len(disp.reg._blocks)
    for _ in range(3):
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert got["params"] == got["want"], "the thread's own x and output were launched"
        # The C runner packs each launch on the calling thread's stack, reading the
        # shared block's handle only: no block per thread.
        want = blocks if hot == "C" else blocks + 1
        assert got["blocks"] == want, "a block of its own while the thread lives (Python runners)"
        gc.collect()
        assert len(disp.reg._blocks) == blocks, "and none left when it ended (threads come and go)"
    with torch.no_grad():
        y = lin(x)
    assert (fake_cuda.param(0), fake_cuda.param(2)) == (x.data_ptr(), y.data_ptr())
    assert len(disp.reg._blocks) == blocks, "this thread's block again"


def test_another_dispatcher_is_not_served_by_the_old_runners(disp, fake_cuda, reg_path):
    lin = ann.Linear(128, 64, bias=False, dtype=BF)
    x = torch.randn(1, 128, dtype=BF)
    warm(lin, x)
    d2 = dispatch.use(dispatch.Dispatcher(reg_path, arch="sm_90", host_tensors=True))
    try:
        disp.reg.close()             # the old runners could only fail now
        n = fake_cuda.launches()
        with torch.no_grad():
            lin(x)
            lin(x)
        assert fake_cuda.launches() == n + 2
        assert lin.__dict__["_aitune"].d is d2
    finally:
        d2.reg.close()


def test_check_mode_compares_every_call(disp, fake_cuda):
    m = torch.nn.Sequential(torch.nn.Linear(128, 64, bias=False)).to(BF)
    p = aitune.patch(m, check=True)
    x = torch.randn(1, 128, dtype=BF)
    with torch.no_grad():
        for i in range(3):
            m(x)
            assert p.compared == i + 1
    assert not m[0].__dict__["_aitune"].fast, "check mode keeps out of the hot path"
    aitune.unpatch(m)


def test_rms_norm_warm_calls(disp, fake_cuda):
    norm = ann.RMSNorm(128, eps=0.25, dtype=BF)
    x = torch.randn(1, 128, dtype=BF)
    run = warm(norm, x)
    with torch.no_grad():
        y = norm(x)
        assert fake_cuda.kernel() == "fake_rmsnorm" and fake_cuda.param(2) == y.data_ptr()
        assert fake_cuda.param(3) & 0xffffffff == 0x3e800000, "eps 0.25 as f32"
        xh = x.to(torch.float16)
        n = fake_cuda.launches()
        assert run(xh, norm.weight, 0.25) is None
        assert torch.equal(norm(xh), F.rms_norm(xh, (128,), norm.weight, 0.25)), \
            "x of another dtype than the weight: PyTorch's"
        assert fake_cuda.launches() == n


def test_a_bucket_the_vendor_holds_runs_pytorchs_gemm(tmp_path, fake_cuda, torch_mod):
    """A vendor winner (template vendor/cublaslt): Linear computes F.linear's product
    through PyTorch, launches nothing through libaitune and records no miss."""
    import fakereg
    from aitune import dispatch
    path = fakereg.vendor(fakereg.build(str(tmp_path / "v.db")), "m=2^0,n=2^6,k=2^7")
    d = dispatch.use(dispatch.Dispatcher(path, arch="sm_90", host_tensors=True))
    try:
        lin = ann.Linear(128, 64, bias=True, dtype=BF).requires_grad_(False)
        x = torch.randn(1, 128, dtype=BF)
        n = fake_cuda.launches()
        for _ in range(3):
            y = lin(x)
        assert fake_cuda.launches() == n, "nothing launched through libaitune"
        assert torch.equal(y, F.linear(x, lin.weight) + lin.bias), "PyTorch's product, the bias added after"
        assert not d.misses(), d.misses()
        x16 = torch.randn(16, 128, dtype=BF)   # the m=16 bucket is still a kernel of aitune's
        lin(x16)
        assert fake_cuda.launches() == n + 1
    finally:
        dispatch._current = None
        d.reg.close()


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine where CUDA has no device")
def test_no_device_is_a_miss_not_a_crash(tmp_path):
    """A dispatcher that must ask the GPU for its arch, on a machine without one: tuned()
    answers False (a traced group then runs its members; torch's RuntimeError escaped
    from tracing before) and a shape falls back as a miss that says why."""
    import fakereg
    path = fakereg.build(str(tmp_path / "n.db"))
    d = dispatch.Dispatcher(path)
    assert d.tuned("gemm_nt", "bf16", (1, 64, 128)) is False
    assert d.kernel("gemm_nt", "bf16", (1, 64, 128)) is None
    assert [m["why"] for m in d.misses().values()] == ["not on a CUDA device"]
