"""The torch.library ops without a GPU: registration, fake implementations (meta
device, FakeTensorMode), tracing under torch.compile(fullgraph=True), PyTorch's
computation on CPU, argument errors."""

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import aitune  # noqa: E402
import aitune.ops  # noqa: E402,F401  (registers the torch.library ops)


BF = torch.bfloat16


def test_registered_in_the_aitune_namespace():
    for name in ("linear", "linear_group", "rms_norm", "layer_norm", "softmax"):
        op = getattr(torch.ops.aitune, name).default
        assert op.name() == "aitune::" + name
    assert str(torch.ops.aitune.linear.default._schema) == \
        "aitune::linear(Tensor x, Tensor weight, Tensor? bias=None) -> Tensor"
    for key in ("CUDA", "CPU", "Meta"):
        for name in ("linear", "linear_group"):
            assert torch._C._dispatch_has_kernel_for_dispatch_key("aitune::" + name, key), (name, key)


def test_meta_shapes():
    x = torch.empty(2, 3, 64, dtype=BF, device="meta")
    w = torch.empty(128, 64, dtype=BF, device="meta")
    y = torch.ops.aitune.linear(x, w, torch.empty(128, dtype=BF, device="meta"))
    assert y.shape == (2, 3, 128) and y.dtype == BF and y.device.type == "meta"
    n = torch.empty(64, dtype=BF, device="meta")
    assert torch.ops.aitune.rms_norm(x, n, 1e-6).shape == x.shape
    assert torch.ops.aitune.layer_norm(x, n, None, 1e-5).is_contiguous()
    assert torch.ops.aitune.softmax(x.transpose(0, 1)).is_contiguous()


def test_fake_tensor_mode():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        x = torch.empty(5, 4096, dtype=BF, device="cuda")
        w = torch.empty(14336, 4096, dtype=BF, device="cuda")
        y = torch.ops.aitune.linear(x, w)
        assert y.shape == (5, 14336) and y.device.type == "cuda"


def test_cpu_is_pytorchs_computation():
    torch.manual_seed(0)
    x = torch.randn(3, 64, dtype=BF)
    w, b = torch.randn(32, 64, dtype=BF), torch.randn(32, dtype=BF)
    assert torch.equal(torch.ops.aitune.linear(x, w, b), F.linear(x, w, b))
    g = torch.randn(64, dtype=BF)
    want = F.rms_norm(x.float(), (64,), g.float(), 1e-6).to(BF)
    assert torch.equal(torch.ops.aitune.rms_norm(x, g, 1e-6), want)
    want = F.layer_norm(x.float(), (64,), g.float(), None, 1e-5).to(BF)
    assert torch.equal(torch.ops.aitune.layer_norm(x, g, None, 1e-5), want)
    assert torch.equal(torch.ops.aitune.softmax(x), torch.softmax(x.float(), -1).to(BF))


@pytest.mark.parametrize("call,words", [
    (lambda: torch.ops.aitune.linear(torch.randn(3, 64), torch.randn(32, 63)), ["k = 64", "k = 63"]),
    (lambda: torch.ops.aitune.linear(torch.randn(3, 64), torch.randn(32, 64, dtype=BF)), ["'weight'", "bfloat16"]),
    (lambda: torch.ops.aitune.linear(torch.randn(3, 64), torch.randn(32, 64), torch.randn(31)), ["bias", "[32]"]),
    (lambda: torch.ops.aitune.linear(torch.randn(3, 64), torch.randn(64)), ["weight [n, k]"]),
    (lambda: torch.ops.aitune.rms_norm(torch.randn(3, 64), torch.randn(65), 1e-6), ["'weight'", "[64]"]),
    (lambda: torch.ops.aitune.layer_norm(torch.randn(3, 64), torch.randn(64), torch.randn(64, dtype=BF), 1e-5),
     ["'bias'"]),
    (lambda: torch.ops.aitune.softmax(torch.randn(3, 64), 2), ["dim 2", "out of range"]),
    (lambda: torch.ops.aitune.linear(torch.empty(3, 64, device="meta"), torch.empty(32, 65, device="meta")),
     ["k = 64"]),
])
def test_argument_errors(call, words):
    with pytest.raises(aitune.AituneError) as e:
        call()
    assert all(w in str(e.value) for w in words), str(e.value)


def test_grad_is_refused_clearly():
    x = torch.randn(3, 64)
    w = torch.nn.Parameter(torch.randn(32, 64))
    with pytest.raises(aitune.AituneError, match="'weight' requires grad.*inference"):
        torch.ops.aitune.linear(x, w)
    with torch.no_grad():
        assert torch.ops.aitune.linear(x, w).shape == (3, 32)
    with torch.inference_mode():
        assert torch.ops.aitune.rms_norm(x, w[0], 1e-6).shape == (3, 64)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(64, 128)
        self.norm = torch.nn.LayerNorm(128)
        self.down = torch.nn.Linear(128, 64, bias=False)

    def forward(self, x):
        return torch.softmax(torch.relu(self.down(self.norm(self.up(x)))) * 2 + 1, -1)


def _graph_targets(model, x):
    from torch._dynamo.testing import CompileCounterWithBackend
    torch._dynamo.reset()
    cnt = CompileCounterWithBackend("aot_eager")
    with torch.no_grad():
        y = torch.compile(model, fullgraph=True, backend=cnt)(x)
    assert cnt.frame_count == 1
    return y, [str(n.target) for n in cnt.graphs[0].graph.nodes if n.op == "call_function"]


def test_compile_traces_the_ops_in_one_graph(tmp_path, libaitune):
    import fakereg
    d = aitune.dispatch.Dispatcher(fakereg.build(str(tmp_path / "r.db")), arch="sm_90", host_tensors=True)
    model = Block().to(BF)
    aitune.patch(model, d, norms="always")
    try:
        x = torch.randn(3, 64, dtype=BF)
        y, targets = _graph_targets(model, x)
        assert targets.count("aitune.linear") == 2 and targets.count("aitune.layer_norm") == 1, targets
        with torch.no_grad():
            want = Block.forward(model, x)
        assert torch.equal(y, want)
        # On the meta device too (no data at all).
        xm = torch.empty(7, 64, dtype=BF, device="meta")
        mm = Block().to(BF).to("meta")
        aitune.patch(mm, d)
        y, targets = _graph_targets(mm, xm)
        assert y.shape == (7, 64) and targets.count("aitune.linear") == 2
    finally:
        aitune.dispatch._current = None


class RmsBlock(torch.nn.Module):
    """A residual add before each norm, as a decoder layer has: nn.RMSNorm and a
    Hugging Face-like one (matched by name and structure)."""

    def __init__(self):
        super().__init__()
        from test_patch import LlamaRMSNorm
        self.up = torch.nn.Linear(64, 64, bias=False)
        self.n1 = torch.nn.RMSNorm(64, eps=1e-6)
        self.n2 = LlamaRMSNorm(64)

    def forward(self, x):
        h = x + self.up(x)
        return self.n2(h + self.n1(h))


@pytest.mark.parametrize("norms,in_graph", [(True, 0), ("always", 2), (False, 0)])
def test_norms_under_compile_are_pytorchs_by_default(tmp_path, fake_cuda, norms, in_graph):
    """Traced by torch.compile, a patched norm computes what PyTorch's module does (no
    aitune::rms_norm in the graph, so Inductor fuses it with the add before it); with
    norms="always" the graph calls aitune::rms_norm; eager calls go to aitune either way."""
    import fakereg
    d = aitune.dispatch.Dispatcher(fakereg.build(str(tmp_path / "r.db"), gemm=((1, 64, 64),), rows=((1, 64),)),
                                   arch="sm_90", host_tensors=True)
    model = RmsBlock().to(BF)
    p = aitune.patch(model, d, norms=norms)
    try:
        assert p.counts.get("rms_norm", 0) == (2 if norms else 0)
        with torch.no_grad():
            n = fake_cuda.launches()
            model.n1(torch.randn(1, 64, dtype=BF))
            assert fake_cuda.launches() - n == (1 if norms else 0)
            assert not norms or fake_cuda.kernel() == "fake_rmsnorm"
        x = torch.randn(3, 64, dtype=BF)
        y, targets = _graph_targets(model, x)
        assert targets.count("aitune.rms_norm") == in_graph, targets
        assert targets.count("aitune.linear") == 1, targets
        # PyTorch's computation in the graph otherwise: F.rms_norm (nn.RMSNorm's) and
        # Hugging Face's own (rsqrt of the mean square), which Inductor can fuse.
        assert sum("method rms_norm" in t for t in targets) == (1 if not in_graph else 0), targets
        assert sum("method rsqrt" in t for t in targets) == (1 if not in_graph else 0), targets
        with torch.no_grad():
            want = RmsBlock.forward(model, x)
        assert torch.allclose(y.float(), want.float(), atol=2e-2, rtol=2e-2)
    finally:
        aitune.unpatch(model)
        aitune.dispatch._current = None
    assert "aitune_in_compile" not in model.n1.__dict__, "unpatch drops the per-module choice"
    with pytest.raises(aitune.AituneError, match="norms must be"):
        aitune.patch(RmsBlock(), d, norms="yes")
    # The drop-in class alone: PyTorch's under torch.compile unless the module says otherwise.
    n = aitune.nn.RMSNorm(64, eps=1e-6).to(BF)
    assert _graph_targets(n, x)[1].count("aitune.rms_norm") == 0
    n.aitune_in_compile = True
    assert _graph_targets(n, x)[1].count("aitune.rms_norm") == 1


def test_inductor_compiles_around_the_ops(tmp_path, libaitune):
    """Inductor (CPU here) keeps the aitune ops as extern calls and generates code for
    what lies between them."""
    import fakereg
    from torch._inductor.utils import run_and_get_code
    d = aitune.dispatch.Dispatcher(fakereg.build(str(tmp_path / "r.db")), arch="sm_90", host_tensors=True)
    model = Block().to(BF)
    aitune.patch(model, d, norms="always")
    try:
        torch._dynamo.reset()
        x = torch.randn(3, 64, dtype=BF)
        with torch.no_grad():
            y, code = run_and_get_code(torch.compile(model, fullgraph=True), x)
            want = Block.forward(model, x)
        src = "\n".join(code)
        calls = [ln for ln in src.splitlines() if "= torch.ops.aitune.linear.default(" in ln]
        assert len(calls) == 2, src[:3000]
        assert "cpp_fused" in src or "triton" in src, "no generated kernel between the ops"
        assert torch.allclose(y.float(), want.float(), atol=1e-2)
    finally:
        aitune.dispatch._current = None
