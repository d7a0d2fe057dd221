"""Linear's warm forward in C (_aitune_hot.linear, src/pyhot.c): aitune.nn.linear_forward's
Python prologue (the module's state, its dispatcher, the runner by x's shape, the grad
check, the runner's call, the bias) done by the hot module, through the recording
libcuda (no GPU). What it returns, where it hands the call back to the slow path
(None), what it raises, and that it keeps no references. Skipped where the hot module
is not built (make)."""

import gc
import sys

import pytest

torch = pytest.importorskip("torch")

import torch.nn.functional as F  # noqa: E402

import aitune  # noqa: E402
from aitune import _lib, dispatch, nn as ann  # noqa: E402

BF = torch.bfloat16


@pytest.fixture
def hot(disp):
    """The hot module (skips where it is absent)."""
    mod = _lib.hot()
    if mod is None:
        pytest.skip("no %s (make)" % _lib.HOT_NAME)
    return mod


def warm(lin, x):
    """lin called once at x's shape: its runner in the warm path's table, and
    linear_forward bound to the C prologue."""
    with torch.no_grad():
        lin(x)
    st = lin.__dict__["_aitune"]
    assert st.d is dispatch._current and x.shape in st.fast
    return st.fast[x.shape]


def no_slow(monkeypatch):
    """_linear_slow made an error: a forward that takes it fails."""
    def slow(self, x):
        raise AssertionError("took the slow path")
    monkeypatch.setattr(ann, "_linear_slow", slow)


def test_the_warm_forward_is_the_c_prologue(hot, fake_cuda, monkeypatch):
    lin = ann.Linear(128, 64, bias=False, dtype=BF)
    x = torch.randn(1, 128, dtype=BF)
    run = warm(lin, x)
    assert type(run) is hot.Runner
    assert ann._linear_c is hot.linear, "the first slow call binds the C prologue"
    no_slow(monkeypatch)
    with torch.no_grad():
        n = fake_cuda.launches()
        y = hot.linear(lin, x)
        assert isinstance(y, torch.Tensor) and y.shape == (1, 64) and y.dtype is BF
        assert fake_cuda.launches() == n + 1
        assert (fake_cuda.param(0), fake_cuda.param(2)) == (x.data_ptr(), y.data_ptr())
        assert fake_cuda.param(1) == lin.weight.data_ptr()
        y = lin(x)
        assert y.shape == (1, 64) and y.dtype is BF and fake_cuda.launches() == n + 2
        assert fake_cuda.param(2) == y.data_ptr()


def test_the_bias_is_added(hot, fake_cuda, monkeypatch):
    lin = ann.Linear(128, 64, bias=True, dtype=BF)
    x = torch.randn(1, 128, dtype=BF)
    warm(lin, x)
    with torch.no_grad():
        # The recording driver writes nothing: a NaN bias makes every element NaN only if added.
        lin.bias.fill_(float("nan"))
        y = hot.linear(lin, x)
        assert y.isnan().all()
        lin.bias.data = torch.full((64,), float("nan"), dtype=BF)     # another bias tensor
        assert hot.linear(lin, x).isnan().all()
        lin.bias = None
        assert hot.linear(lin, x).shape == (1, 64), "no bias: nothing to add"
        # A runner of known output: the C prologue and the Python body give the same tensor.
        lin.bias = torch.nn.Parameter(torch.arange(64, dtype=BF), requires_grad=False)
        lin.__dict__["_aitune"].fast[x.shape] = lambda a, c: torch.ones(1, 64, dtype=BF)
        got = lin(x)
        monkeypatch.setattr(ann, "_linear_c", None)
        want = lin(x)
    assert torch.equal(got, want) and torch.equal(got, torch.arange(1, 65, dtype=BF).view(1, 64))


def test_any_callable_in_the_table_gets_x_and_the_weight(hot, fake_cuda, monkeypatch):
    lin = ann.Linear(128, 64, bias=False, dtype=BF)
    x = torch.randn(1, 128, dtype=BF)
    run = warm(lin, x)
    seen = []

    def wrapper(a, c):
        seen.append((a, c))
        return run(a, c)
    lin.__dict__["_aitune"].fast[x.shape] = wrapper
    no_slow(monkeypatch)
    with torch.no_grad():
        n = fake_cuda.launches()
        y = lin(x)
    assert len(seen) == 1 and seen[0][0] is x and seen[0][1] is lin.weight
    assert fake_cuda.launches() == n + 1 and fake_cuda.param(2) == y.data_ptr()


def test_grad_takes_the_slow_path_and_its_error(hot, fake_cuda):
    lin = ann.Linear(128, 64, bias=True, dtype=BF)
    x = torch.randn(1, 128, dtype=BF)
    warm(lin, x)
    n = fake_cuda.launches()
    assert hot.linear(lin, x) is None
    with pytest.raises(aitune.AituneError, match="aitune::linear: 'weight' requires grad: aitune ops are for "
                                                 "inference"):
        lin(x)
    lin.weight.requires_grad_(False)
    assert hot.linear(lin, x) is None, "the bias still requires grad"
    with pytest.raises(aitune.AituneError, match="'bias' requires grad"):
        lin(x)
    lin.bias.requires_grad_(False)
    xg = x.clone().requires_grad_()
    assert hot.linear(lin, xg) is None
    with pytest.raises(aitune.AituneError, match="'x' requires grad"):
        lin(xg)
    assert fake_cuda.launches() == n, "nothing launched"
    y = lin(x)
    assert fake_cuda.launches() == n + 1, "grad mode with nothing that requires grad runs"
    assert y.shape == (1, 64) and not y.requires_grad
    lin.requires_grad_(True)
    with torch.no_grad():
        assert hot.linear(lin, xg) is not None, "no grad mode: what requires grad does not matter"


def test_another_dispatcher_takes_the_slow_path(hot, disp, fake_cuda, reg_path):
    lin = ann.Linear(128, 64, bias=False, dtype=BF)
    x = torch.randn(1, 128, dtype=BF)
    warm(lin, x)
    d2 = dispatch.use(dispatch.Dispatcher(reg_path, arch="sm_90", host_tensors=True))
    try:
        with torch.no_grad():
            assert hot.linear(lin, x) is None
            n = fake_cuda.launches()
            lin(x)
            assert lin.__dict__["_aitune"].d is d2 and fake_cuda.launches() == n + 1
            assert hot.linear(lin, x) is not None, "warm again under d2"
            dispatch._current = None
            assert hot.linear(lin, x) is None
            assert torch.equal(lin(x), F.linear(x, lin.weight)), "no dispatcher: PyTorch's product"
    finally:
        d2.reg.close()


def test_a_shape_not_warm_takes_the_slow_path(hot, fake_cuda):
    lin = ann.Linear(128, 64, bias=False, dtype=BF)
    x = torch.randn(1, 128, dtype=BF)
    warm(lin, x)
    x16 = torch.randn(16, 128, dtype=BF)
    with torch.no_grad():
        assert hot.linear(lin, x16) is None
        n = fake_cuda.launches()
        y = lin(x16)
        assert y.shape == (16, 64) and fake_cuda.launches() == n + 1
        assert hot.linear(lin, x16).shape == (16, 64), "warm at 16 rows now"
        # A module that never ran: no state, the slow path.
        fresh = ann.Linear(128, 64, bias=False, dtype=BF)
        assert "_aitune" not in fresh.__dict__ and hot.linear(fresh, x) is None
        # A runner that steps aside (x of another dtype): the slow path, which refuses it.
        assert hot.linear(lin, x.to(torch.float16)) is None
        with pytest.raises(aitune.AituneError, match="'weight' is torch.bfloat16, x is torch.float16"):
            lin(x.to(torch.float16))


def test_errors_propagate(hot, disp, fake_cuda):
    lin = ann.Linear(128, 64, bias=False, dtype=BF)
    x = torch.randn(1, 128, dtype=BF)
    run = warm(lin, x)
    st = lin.__dict__["_aitune"]

    def boom(a, c):
        raise ValueError("boom from the runner")
    with torch.no_grad():
        st.fast[x.shape] = boom
        with pytest.raises(ValueError, match="boom from the runner"):
            hot.linear(lin, x)
        with pytest.raises(ValueError, match="boom from the runner"):
            lin(x)
        # A runner of another arity (a norm's): its own TypeError.
        norm = ann.RMSNorm(128, dtype=BF)
        norm(x)
        st.fast[x.shape] = norm.__dict__["_aitune"].fast[x.shape]
        with pytest.raises(TypeError, match="a runner takes 3 positional arguments"):
            lin(x)
        # A C runner's error: the registry closed under it.
        st.fast[x.shape] = run
        disp.reg.close()
        with pytest.raises(aitune.AituneError, match="the registry is closed"):
            hot.linear(lin, x)
        # Not a tensor: x.shape's error.
        with pytest.raises(AttributeError, match="shape"):
            lin(object())
    with pytest.raises(TypeError):
        hot.linear(lin)
    with pytest.raises(TypeError):
        hot.setup_linear(1, 2)


def test_the_python_body_where_the_hot_module_is_off(hot, fake_cuda, monkeypatch):
    lin = ann.Linear(128, 64, bias=False, dtype=BF)
    x = torch.randn(1, 128, dtype=BF)
    warm(lin, x)
    assert ann._linear_c is hot.linear
    monkeypatch.setattr(_lib, "_hot", None)       # as with AITUNE_HOT=0
    lin2 = ann.Linear(128, 64, bias=False, dtype=BF)
    run = warm(lin2, x)
    assert ann._linear_c is None and type(run) is not hot.Runner
    with torch.no_grad():
        n = fake_cuda.launches()
        y = lin2(x)
        assert fake_cuda.launches() == n + 1 and fake_cuda.param(2) == y.data_ptr()
    monkeypatch.undo()
    warm(ann.Linear(128, 64, bias=False, dtype=BF), x)
    assert ann._linear_c is hot.linear, "bound again"


def _counts(objs):
    return [sys.getrefcount(o) for o in objs]


def _kept(objs, before):
    """Whether a count grew since before. Each live tensor holds a reference to its
    class, so torch.Tensor's count (type(y) in objs) also falls when some other test's
    tensors are freed meanwhile (a model's, released by transformers): only growth is a
    reference kept."""
    return any(a > b for a, b in zip(_counts(objs), before))


def _singletons():
    """None's, True's and False's counts (not immortal before 3.12; other code moves
    them a little, a reference kept per call by 10000)."""
    return [sys.getrefcount(o) for o in (None, True, False)]


def _same_singletons(before):
    """No count grew by 10000 calls' worth (a fall is other code's objects freed meanwhile:
    a test before this one that compiled leaves torch.compile's to be freed later)."""
    return all(a - b < 1000 for a, b in zip(_singletons(), before))


def test_no_references_are_kept(hot, fake_cuda):
    lin = ann.Linear(128, 64, bias=True, dtype=BF).requires_grad_(False)
    x = torch.randn(1, 128, dtype=BF)
    x16 = torch.randn(16, 128, dtype=BF)
    xh = x.to(torch.float16)
    run = warm(lin, x)
    st = lin.__dict__["_aitune"]
    raising = {"n": 0}

    def boom(a, c):
        raising["n"] += 1
        raise ValueError("boom")

    def calls(f, *args, exc=None):
        for _ in range(10000):
            if exc is None:
                f(*args)
            else:
                try:
                    f(*args)
                except exc:
                    pass

    with torch.no_grad():
        y = lin(x)
        objs = [x, x16, xh, lin.weight, lin.bias, type(y), st, st.fast, run, lin.__dict__, lin._parameters,
                dispatch._current, lin, hot.Runner]
        for what in (lambda: calls(lin, x), lambda: calls(hot.linear, lin, x),
                     lambda: calls(hot.linear, lin, x16), lambda: calls(hot.linear, lin, xh)):
            what()
            gc.collect()
            before, nobj, single = _counts(objs), len(gc.get_objects()), _singletons()
            what()
            gc.collect()
            assert not _kept(objs, before), "a reference kept per call"
            assert _same_singletons(single), "None, True or False kept per call"
            assert len(gc.get_objects()) <= nobj + 10, "objects kept per call"
        st.fast[x.shape] = boom
        calls(hot.linear, lin, x, exc=ValueError)
        gc.collect()
        before, nobj = _counts(objs), len(gc.get_objects())
        calls(hot.linear, lin, x, exc=ValueError)
        gc.collect()
        assert raising["n"] == 20000
        assert not _kept(objs, before), "a reference kept per raising call"
        assert len(gc.get_objects()) <= nobj + 10
        st.fast[x.shape] = run
    # Grad mode, something requires grad: None each time, nothing kept.
    lin.bias.requires_grad_(True)
    calls(hot.linear, lin, x)
    before, single = _counts(objs), _singletons()
    calls(hot.linear, lin, x)
    assert hot.linear(lin, x) is None and not _kept(objs, before)
    assert _same_singletons(single)
