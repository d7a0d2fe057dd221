"""patch / unpatch, the drop-in modules and the dispatch cache, launching through the
recording libcuda (no GPU): which kernel each call launches with which addresses,
fallbacks and misses, copies of unaligned inputs, check mode, Hugging Face RMSNorm
classes matched by name and structure."""

import sqlite3
import warnings

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import aitune  # noqa: E402
from aitune import dispatch, nn as ann  # noqa: E402

BF = torch.bfloat16


class LlamaRMSNorm(torch.nn.Module):
    """Hugging Face's, as transformers writes it (not imported)."""

    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden))
        self.variance_epsilon = eps

    def forward(self, x):
        dt = x.dtype
        h = x.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)
        return self.weight * h.to(dt)


class Qwen2RMSNorm(LlamaRMSNorm):
    pass


class MyOwnRMSNorm(LlamaRMSNorm):
    pass


class GemmaRMSNorm(LlamaRMSNorm):
    pass


class ScaledRMSNorm(LlamaRMSNorm):
    def __init__(self, hidden):
        super().__init__(hidden)
        self.scale = torch.nn.Parameter(torch.ones(1))


class Tiny(torch.nn.Module):
    def __init__(self, norm=LlamaRMSNorm):
        super().__init__()
        self.q = torch.nn.Linear(128, 64, bias=False)
        self.norm = norm(64)
        self.o = torch.nn.Linear(64, 128, bias=True)

    def forward(self, x):
        return self.o(self.norm(self.q(x)))


def model(norm=LlamaRMSNorm):
    torch.manual_seed(0)
    return Tiny(norm).to(BF)


def test_patch_swaps_and_unpatch_restores(disp):
    m = model()
    sd = {k: v.clone() for k, v in m.state_dict().items()}
    p = aitune.patch(m)
    assert p.dispatcher is disp
    assert type(m.q) is ann.Linear and isinstance(m.q, torch.nn.Linear)
    assert type(m.norm).__name__ == "AituneLlamaRMSNorm" and isinstance(m.norm, LlamaRMSNorm)
    assert p.counts == {"linear": 2, "rms_norm": 1}
    assert list(m.state_dict()) == list(sd)
    with pytest.raises(aitune.AituneError, match="patched already"):
        aitune.patch(m)
    aitune.unpatch(m)
    assert type(m.q) is torch.nn.Linear and type(m.norm) is LlamaRMSNorm and "_aitune" not in m.q.__dict__
    assert all(torch.equal(v, sd[k]) for k, v in m.state_dict().items())
    with pytest.raises(aitune.AituneError, match="not patched"):
        aitune.unpatch(m)


@pytest.mark.parametrize("cls,taken", [(LlamaRMSNorm, True), (Qwen2RMSNorm, True), (MyOwnRMSNorm, True),
                                       (GemmaRMSNorm, False), (ScaledRMSNorm, False)])
def test_rms_norm_classes_by_name_and_structure(disp, cls, taken):
    m = model(cls)
    p = aitune.patch(m)
    assert (p.counts.get("rms_norm") == 1) is taken
    aitune.unpatch(m)


def test_launches_with_the_tensors_addresses(disp, fake_cuda):
    fk = fake_cuda
    m = model()
    aitune.patch(m)
    x = torch.randn(1, 128, dtype=BF)
    loads = fk.loads()
    with torch.no_grad():
        n = fk.launches()
        y = m.q(x)
        assert fk.launches() == n + 1 and fk.kernel() == "fake_gemm"
        assert y.shape == (1, 64) and y.dtype == BF
        assert fk.param(0) == x.data_ptr() and fk.param(1) == m.q.weight.data_ptr() and fk.param(2) == y.data_ptr()
        assert (fk.param(3), fk.param(4), fk.param(5)) == (1, 64, 128), "m, n, k"
        ws = fk.param(6)
        assert ws and fk.memset_addr() == ws and fk.memset_bytes() == 16, "a workspace, its head zeroed"
        enc = fk.encodes()
        y2 = m.q(x)
        assert fk.encodes() == enc, "the weight's map was encoded at bind, x's at the last call (kept: same x)"
        assert fk.param(2) == y2.data_ptr() != y.data_ptr(), "a new output each call"
        assert fk.param(6) == ws, "one workspace per stream"
        x2 = x.clone()
        m.q(x2)
        assert fk.encodes() - enc == 1 and fk.param(0) == x2.data_ptr(), "another x: its map alone is encoded"
    aitune.unpatch(m)
    # A norm: x, weight, y, eps as f32, rows, cols.
    norm = torch.nn.Sequential(LlamaRMSNorm(128, eps=0.25)).to(BF)
    aitune.patch(norm)
    with torch.no_grad():
        x = torch.randn(2, 8, 128, dtype=BF)
        y = norm(x)
    assert fk.kernel() == "fake_rmsnorm" and fk.param(0) == x.data_ptr() and fk.param(2) == y.data_ptr()
    assert fk.param(3) & 0xffffffff == 0x3e800000 and fk.param(4) == 16 and fk.param(5) & 0xffffffff == 128
    assert y.shape == x.shape
    assert fk.loads() - loads == 2, "one module load per kernel (gemm, rmsnorm)"
    aitune.unpatch(norm)


def test_misses_fall_back_to_pytorch(disp, fake_cuda, reg_path):
    fk = fake_cuda
    m = model()
    p = aitune.patch(m)
    x = torch.randn(3, 128, dtype=BF)      # m = 3: no tuned bucket holds it
    with torch.no_grad():
        n = fk.launches()
        y = m.q(x)
        y = m.q(x)
        assert fk.launches() == n, "nothing launched"
        assert torch.equal(y, F.linear(x, m.q.weight))
        m.q(x.float().to(torch.float16).to(BF))
    miss = p.misses()[("gemm_nt", "bf16", (3, 64, 128))]
    assert miss["count"] == 3 and "no tuned bucket" in miss["why"] and "nearest" in miss["why"]
    with torch.no_grad():
        m.q.float()(x.float())
    assert "bf16 and f16" in p.misses()[("gemm_nt", "float32", (3, 64, 128))]["why"]
    aitune.unpatch(m)                     # writes libaitune's misses to the registry
    rows = sqlite3.connect(reg_path).execute("SELECT op, dtype, shape FROM misses").fetchall()
    assert ("gemm_nt", "bf16", "3,64,128") in rows


def test_unaligned_and_strided_inputs_are_copied(disp, fake_cuda):
    fk = fake_cuda
    lin = ann.Linear(128, 64, bias=False, dtype=BF)
    big = torch.randn(1, 136, dtype=BF)
    x = big[:, 1:129]                     # 2 bytes past an aligned address
    assert x.data_ptr() % 16 and x.is_contiguous()
    with torch.no_grad():
        lin(x)
        assert fk.param(0) != x.data_ptr() and fk.param(0) % 16 == 0, "an aligned copy was launched"
        xs = torch.randn(128, 2, dtype=BF).t()[:1]
        assert not xs.is_contiguous()
        lin(xs)
        assert fk.param(0) != xs.data_ptr() and fk.param(0) % 16 == 0


def test_drop_in_linear_with_bias(disp, fake_cuda):
    lin = ann.Linear(128, 64, bias=True, dtype=torch.float16)
    ref = torch.nn.Linear(128, 64, bias=True, dtype=torch.float16)
    assert list(lin.state_dict()) == list(ref.state_dict())
    x = torch.randn(16, 128, dtype=torch.float16)
    with torch.no_grad():
        n = fake_cuda.launches()
        y = lin(x)
        assert fake_cuda.launches() == n + 1 and y.shape == (16, 64)
        lin.bias.fill_(0)


def test_no_registry_means_pytorch(fake_cuda, libaitune):
    dispatch._current = None
    lin = ann.Linear(128, 64, dtype=BF)
    x = torch.randn(1, 128, dtype=BF)
    with torch.no_grad():
        assert torch.equal(lin(x), F.linear(x, lin.weight, lin.bias))


def test_grad_mode_is_refused(disp, fake_cuda):
    m = model()
    aitune.patch(m)
    with pytest.raises(aitune.AituneError, match="'weight' requires grad"):
        m(torch.randn(1, 128, dtype=BF))
    aitune.unpatch(m)


def test_check_names_the_first_difference(disp, fake_cuda):
    # The recording driver computes nothing: every launched result is garbage, so the
    # first call aitune ran is the first difference, named by its module.
    m = model()
    p = aitune.patch(m, check=True)
    with torch.no_grad(), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m(torch.randn(1, 128, dtype=BF))
    assert p.first_mismatch is not None and p.first_mismatch.startswith("q (aitune::linear, 1x64x128, bfloat16)")
    assert p.compared == 1 and any("first difference" in str(x.message) for x in w)
    aitune.unpatch(m)
    m = model()
    p = aitune.patch(m, check="raise")
    with torch.no_grad(), pytest.raises(aitune.AituneError, match="check: q "):
        m(torch.randn(1, 128, dtype=BF))
    aitune.unpatch(m)
    # Where aitune launches nothing, PyTorch's results are compared with themselves: no finding.
    m = model()
    p = aitune.patch(m, check=True)
    with torch.no_grad():
        m(torch.randn(3, 128, dtype=BF))
    assert p.first_mismatch is None
    aitune.unpatch(m)
    with pytest.raises(aitune.AituneError, match="check must be"):
        aitune.patch(model(), check="yes")


def test_differs():
    from aitune import ops
    ref = torch.randn(4, 64, dtype=BF)
    assert ops.differs(ref.clone(), ref) is None
    bad = ref.clone()
    bad[2, 5] += 8
    msg = ops.differs(bad, ref)
    assert msg and "[2, 5]" in msg
    nan = ref.clone()
    nan[0, 0] = float("nan")
    assert "[0, 0]" in ops.differs(nan, ref)


def test_first_call_during_capture_falls_back(reg_path, fake_cuda, torch_mod):
    import contextlib
    d = dispatch.Dispatcher(reg_path, arch="sm_90", host_tensors=True, capturing=lambda: True,
                            device_scope=lambda dev: contextlib.nullcontext())
    assert d.bound("gemm_nt", "bf16", (1, 64, 128), dev=0) is None
    assert "graph capture" in d.misses()[("gemm_nt", "bf16", (1, 64, 128))]["why"]
    d2 = dispatch.Dispatcher(reg_path, arch="sm_90", host_tensors=True, capturing=lambda: False,
                             device_scope=lambda dev: contextlib.nullcontext())
    b = d2.bound("gemm_nt", "bf16", (1, 64, 128), dev=0)
    assert b is not None and d2.bound("gemm_nt", "bf16", (1, 64, 128), dev=0) is b, "cached"
    d2._capturing = lambda: True
    assert d2.bound("gemm_nt", "bf16", (1, 64, 128), dev=0) is b, "a shape bound before capture launches in it"
    d.reg.close()
    d2.reg.close()


def test_a_winner_that_cannot_bind_is_a_miss(tmp_path, fake_cuda):
    import fakereg
    # k = 100: the plan's tensor map needs 16-byte rows (k * 2 = 200 bytes is not).
    path = fakereg.build(str(tmp_path / "odd.db"), gemm=((1, 64, 100),), rows=(), dtypes=("bf16",))
    d = dispatch.Dispatcher(path, arch="sm_90", host_tensors=True)
    assert d.bound("gemm_nt", "bf16", (1, 64, 100)) is None
    assert "does not bind" in d.misses()[("gemm_nt", "bf16", (1, 64, 100))]["why"]
    d.reg.close()


def test_a_transformers_llama(disp):
    """transformers' own LlamaForCausalLM (when installed): every projection, the lm_head
    and every RMSNorm are taken, the logits match unpatched PyTorch's where nothing is
    tuned (all fall back), and unpatch restores the classes."""
    transformers = pytest.importorskip("transformers")
    cfg = transformers.LlamaConfig(hidden_size=64, intermediate_size=128, num_attention_heads=4,
                                   num_key_value_heads=2, num_hidden_layers=2, vocab_size=100, head_dim=16)
    torch.manual_seed(0)
    m = transformers.LlamaForCausalLM(cfg).to(BF).eval()
    ids = torch.randint(0, 100, (2, 5))
    with torch.no_grad():
        want = m(input_ids=ids).logits
    p = aitune.patch(m)
    assert p.counts == {"linear": 2 * 7 + 1, "rms_norm": 2 * 2 + 1}, p.counts
    with torch.no_grad():
        got = m(input_ids=ids).logits
    assert torch.equal(got, want)
    assert ("gemm_nt", "bf16", (10, 128, 64)) in p.misses(), "the MLP's up projection at 2 x 5 tokens"
    aitune.unpatch(m)
    assert not any(type(x).__name__.startswith("Aitune") for x in m.modules())


def test_many_shapes_share_runners(disp, fake_cuda, monkeypatch):
    """Past MODULE_RUNS shapes a module uses the dispatcher's runners: per shape, not per
    module and shape (a prefill meets every prompt length)."""
    monkeypatch.setattr(ann, "MODULE_RUNS", 1)
    a, b = ann.Linear(128, 64, bias=False, dtype=BF), ann.Linear(128, 64, bias=False, dtype=BF)
    with torch.no_grad():
        a(torch.randn(1, 128, dtype=BF))
        b(torch.randn(1, 128, dtype=BF))
        n = fake_cuda.launches()
        ya = a(torch.randn(16, 128, dtype=BF))
        assert fake_cuda.param(1) == a.weight.data_ptr()
        yb = b(torch.randn(16, 128, dtype=BF))
        assert fake_cuda.launches() == n + 2 and fake_cuda.param(1) == b.weight.data_ptr()
        assert ya.shape == yb.shape == (16, 64)
    assert len(a.__dict__["_aitune"].runs) == 1 and len(b.__dict__["_aitune"].runs) == 1
    assert sum(1 for k in disp.runs if k[0] == "linear" and k[1] == (16, 128)) == 1


def test_a_refused_launch_is_an_error(disp, fake_cuda):
    lin = ann.Linear(128, 64, bias=False, dtype=BF)
    x = torch.randn(1, 128, dtype=BF)
    with torch.no_grad():
        lin(x)
        fake_cuda.fail(b"launch")
        with pytest.raises(aitune.AituneError, match="LAUNCH_OUT_OF_RESOURCES"):
            lin(x)
        n = fake_cuda.launches()
        lin(x)
        assert fake_cuda.launches() == n + 1, "the next call launches"


def test_outputs_are_new_contiguous_tensors(disp, fake_cuda):
    """Each call's output comes from the allocator (empty_like of a zero-stride template):
    new, contiguous, x's dtype, at every rank, for Linear and RMSNorm."""
    lin = ann.Linear(128, 64, bias=False, dtype=BF)
    norm = ann.RMSNorm(128, eps=1e-6, dtype=BF)
    with torch.no_grad():
        for shape in ((1, 128), (16, 128), (4, 4, 128), (2, 2, 4, 128)):
            x = torch.randn(*shape, dtype=BF)
            kept = []                     # alive, so the allocator cannot hand their memory out again
            for mod, out_last in ((lin, 64), (norm, 128)):
                for _ in range(3):
                    n = fake_cuda.launches()
                    y = mod(x)
                    assert fake_cuda.launches() == n + 1, (mod, shape)
                    assert y.shape == shape[:-1] + (out_last,) and y.dtype == BF and y.is_contiguous()
                    assert fake_cuda.param(2) == y.data_ptr() and all(y.data_ptr() != k.data_ptr() for k in kept)
                    kept.append(y)


def test_a_replaced_weight_is_checked_again(disp, fake_cuda):
    """The module's launch was bound for its weight's address: a weight replaced in
    place (param.data = ...) is launched at its new address, copied when it is not
    contiguous, rebound when its n changed, and refused, naming it, when the op cannot
    take it."""
    lin = ann.Linear(128, 64, bias=False, dtype=BF)
    x = torch.randn(1, 128, dtype=BF)
    with torch.no_grad():
        lin(x)
        new = torch.randn(64, 128, dtype=BF)
        lin.weight.data = new
        lin(x)
        assert fake_cuda.param(1) == new.data_ptr()
        # Same address, another layout (the transpose of a [128, 64] buffer): copied.
        lin.weight.data = new.as_strided((64, 128), (1, 64))
        assert lin.weight.data_ptr() == new.data_ptr() and not lin.weight.is_contiguous()
        lin(x)
        assert fake_cuda.param(1) not in (0, new.data_ptr()) and fake_cuda.param(1) % 16 == 0
        lin.weight.data = new
        lin(x)
        assert fake_cuda.param(1) == new.data_ptr(), "back at the checked address"
        lin.weight.data = torch.randn(64, 128, dtype=torch.float16)
        with pytest.raises(aitune.AituneError, match="'weight' is torch.float16, x is torch.bfloat16"):
            lin(x)
        lin.weight.data = torch.randn(64, 64, dtype=BF)
        with pytest.raises(aitune.AituneError, match="k = 128"):
            lin(x)
        # Another n: the fake registry has no 1 x 32 x 128 winner, so it falls back.
        lin.weight.data = torch.randn(32, 128, dtype=BF)
        n = fake_cuda.launches()
        y = lin(x)
        assert fake_cuda.launches() == n and y.shape == (1, 32)
        assert torch.equal(y, F.linear(x, lin.weight))
    norm = ann.RMSNorm(128, dtype=BF)
    with torch.no_grad():
        norm(x)
        new = torch.randn(128, dtype=BF)
        norm.weight.data = new
        norm(x)
        assert fake_cuda.param(1) == new.data_ptr()
        norm.weight.data = torch.randn(64, dtype=BF)
        with pytest.raises(aitune.AituneError, match=r"rms_norm: 'weight' must be \[128\]"):
            norm(x)
