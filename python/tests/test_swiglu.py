"""aitune::swiglu and the fused gated MLP without a GPU: the op's registration, fake and
CPU implementations, argument errors; its CUDA kernel (called on CPU tensors through the
recording libcuda, which computes nothing: a launched result is garbage, so only the
addresses and dims a launch got are checked); what torch.compile traces; patch/unpatch
of transformers' gated MLPs; the gemm_swiglu tasks of a model's spec. Where nothing is
launched, results must be PyTorch's, bit for bit."""

import json

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import aitune  # noqa: E402
from aitune import dispatch, ops, tuning  # noqa: E402

BF = torch.bfloat16
H, INTER = 64, 128          # hidden (k), intermediate (n): gate/up fuse to 256 x 64


def _swiglu(x, g, u):
    return F.silu(F.linear(x, g)) * F.linear(x, u)


# ---- the op ----

def test_registered_with_a_fake_implementation():
    op = torch.ops.aitune.swiglu.default
    assert op.name() == "aitune::swiglu"
    assert str(op._schema) == "aitune::swiglu(Tensor x, Tensor gate_weight, Tensor up_weight) -> Tensor"
    for key in ("CUDA", "CPU", "Meta"):
        assert torch._C._dispatch_has_kernel_for_dispatch_key("aitune::swiglu", key), key
    assert ops.OPS["swiglu"] == ("gemm_swiglu", ("m", "n", "k"))
    x = torch.empty(2, 3, H, dtype=BF, device="meta")
    w = torch.empty(INTER, H, dtype=BF, device="meta")
    y = torch.ops.aitune.swiglu(x, w, w)
    assert y.shape == (2, 3, INTER) and y.dtype == BF and y.device.type == "meta"
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        x = torch.empty(2048, 4096, dtype=BF, device="cuda")
        g = torch.empty(14336, 4096, dtype=BF, device="cuda")
        y = torch.ops.aitune.swiglu(x, g, torch.empty_like(g))
        assert y.shape == (2048, 14336) and y.device.type == "cuda"


def test_cpu_is_the_reference():
    torch.manual_seed(0)
    x = torch.randn(2, 3, H, dtype=BF)
    g, u = torch.randn(INTER, H, dtype=BF), torch.randn(INTER, H, dtype=BF)
    y = torch.ops.aitune.swiglu(x, g, u)
    assert torch.equal(y, _swiglu(x, g, u))
    assert not torch.equal(y, _swiglu(x, u, g)), "gate and up are not interchangeable"


@pytest.mark.parametrize("call,words", [
    (lambda: torch.ops.aitune.swiglu(torch.randn(3, H), torch.randn(INTER, H - 1), torch.randn(INTER, H - 1)),
     ["k = 64", "k = 63"]),
    (lambda: torch.ops.aitune.swiglu(torch.randn(3, H), torch.randn(INTER, H), torch.randn(INTER + 8, H)),
     ["gate_weight is [128, 64]", "up_weight [136, 64]"]),
    (lambda: torch.ops.aitune.swiglu(torch.randn(3, H), torch.randn(INTER, H), torch.randn(INTER, H, dtype=BF)),
     ["'up_weight'", "bfloat16"]),
    (lambda: torch.ops.aitune.swiglu(torch.randn(3, H), torch.randn(H), torch.randn(H)),
     ["gate_weight and up_weight [n, k]"]),
    (lambda: torch.ops.aitune.swiglu(torch.empty(3, H, device="meta"), torch.empty(INTER, H + 1, device="meta"),
                                     torch.empty(INTER, H + 1, device="meta")), ["k = 64"]),
])
def test_argument_errors(call, words):
    with pytest.raises(aitune.AituneError) as e:
        call()
    assert str(e.value).startswith("aitune::swiglu: ") and all(w in str(e.value) for w in words), str(e.value)


def test_grad_is_refused():
    x, g = torch.randn(3, H), torch.randn(INTER, H)
    u = torch.nn.Parameter(torch.randn(INTER, H))
    with pytest.raises(aitune.AituneError, match="'up_weight' requires grad.*inference"):
        torch.ops.aitune.swiglu(x, g, u)
    with torch.no_grad():
        assert torch.ops.aitune.swiglu(x, g, u).shape == (3, INTER)


@pytest.fixture
def reg(tmp_path, fake_cuda, torch_mod):
    """A Dispatcher (the one in use) whose registry has gemm_swiglu at (1, INTER, H) and
    nothing else."""
    import fakereg
    d = dispatch.use(dispatch.Dispatcher(fakereg.build(str(tmp_path / "s.db"), gemm=(), rows=(),
                                                       swiglu=((1, INTER, H),)), arch="sm_90", host_tensors=True))
    yield d
    dispatch._current = None
    d.reg.close()


def test_the_cuda_kernel_launches_over_adjacent_weights(reg, fake_cuda):
    """The CUDA kernel (on CPU tensors: the recording driver): one gemm_swiglu launch whose
    B is the [gate; up] storage, dims (m, n, k) with n the output's width; weights apart,
    an untuned m or no dispatcher: PyTorch's computation, a miss where a dispatcher is."""
    fk = fake_cuda
    torch.manual_seed(0)
    buf = torch.randn(2 * INTER, H, dtype=BF)
    g, u = buf[:INTER], buf[INTER:]
    x = torch.randn(1, 1, H, dtype=BF)
    n = fk.launches()
    with torch.no_grad():
        y = ops._swiglu_cuda(x, g, u)
    assert fk.launches() == n + 1 and fk.kernel() == "fake_swiglu"
    assert fk.param(0) == x.data_ptr() and fk.param(1) == buf.data_ptr() and fk.param(2) == y.data_ptr()
    assert (fk.param(3), fk.param(4), fk.param(5)) == (1, INTER, H)
    assert y.shape == (1, 1, INTER) and y.dtype == BF
    assert reg.misses() == {}
    # Not one storage (up before gate is not [gate; up] either): no launch, PyTorch's, a miss.
    for gw, uw in ((g.clone(), u.clone()), (u, g)):
        with torch.no_grad():
            y = ops._swiglu_cuda(x, gw, uw)
        assert fk.launches() == n + 1 and torch.equal(y, _swiglu(x, gw, uw))
    assert "not adjacent" in reg.misses()[("gemm_swiglu", "bf16", (1, INTER, H))]["why"]
    x3 = torch.randn(3, H, dtype=BF)
    with torch.no_grad():
        y = ops._swiglu_cuda(x3, g, u)
    assert fk.launches() == n + 1 and torch.equal(y, _swiglu(x3, g, u))
    assert reg.misses()[("gemm_swiglu", "bf16", (3, INTER, H))]["count"] == 1
    dispatch._current = None
    with torch.no_grad():
        assert torch.equal(ops._swiglu_cuda(x, g, u), _swiglu(x, g, u))
    assert fk.launches() == n + 1
    dispatch._current = reg


class Gated(torch.nn.Module):
    def __init__(self, call):
        super().__init__()
        self.call = call
        self.gate = torch.nn.Parameter(torch.randn(INTER, H, dtype=BF) * 0.1, requires_grad=False)
        self.up = torch.nn.Parameter(torch.randn(INTER, H, dtype=BF) * 0.1, requires_grad=False)

    def forward(self, x):
        return self.call(x + 1, self.gate, self.up) * 2


def _targets(model, x, **kw):
    from torch._dynamo.testing import CompileCounterWithBackend
    torch._dynamo.reset()
    cnt = CompileCounterWithBackend("aot_eager")
    with torch.no_grad():
        y = torch.compile(model, fullgraph=True, backend=cnt, **kw)(x)
    assert cnt.frame_count == 1
    return y, [str(n.target) for n in cnt.graphs[-1].graph.nodes if n.op == "call_function"]


def test_compile_traces_the_op():
    torch.manual_seed(0)
    m = Gated(torch.ops.aitune.swiglu)
    x = torch.randn(5, H, dtype=BF)
    y, targets = _targets(m, x)
    assert targets.count("aitune.swiglu") == 1, targets
    with torch.no_grad():
        assert torch.equal(y, _swiglu(x + 1, m.gate, m.up) * 2)


@pytest.mark.parametrize("rows,dynamic,traced", [(1, False, True), (3, False, False), (5, True, True)])
def test_traced_swiglu_asks_the_registry(reg, rows, dynamic, traced):
    """ops.traced_swiglu: with static shapes, aitune::swiglu where the registry has a kernel
    of its own at (m, n, k) (m = 1 here), PyTorch's computation elsewhere (m = 3, a miss
    recorded at trace time); with dynamic shapes the op, the registry having gemm_swiglu
    for these weights at some size (it asks per shape when it runs)."""
    torch.manual_seed(0)
    m = Gated(ops.traced_swiglu)
    x = torch.randn(rows, H, dtype=BF)
    y, targets = _targets(m, x, dynamic=dynamic)
    assert targets.count("aitune.swiglu") == (1 if traced else 0), targets
    assert sum("silu" in t for t in targets) == (0 if traced else 1), targets
    with torch.no_grad():
        assert torch.equal(y, _swiglu(x + 1, m.gate, m.up) * 2)
    assert (("gemm_swiglu", "bf16", (3, INTER, H)) in reg.misses()) == (rows == 3 and not dynamic)


# ---- the fused gated MLP ----

def llama(act="silu", mlp_bias=False, family="Llama"):
    transformers = pytest.importorskip("transformers")
    cfg = getattr(transformers, family + "Config")(
        hidden_size=H, intermediate_size=INTER, num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=2,
        vocab_size=100, head_dim=16, hidden_act=act, **({"mlp_bias": mlp_bias} if family == "Llama" else {}))
    torch.manual_seed(0)
    return getattr(transformers, family + "ForCausalLM")(cfg).to(BF).eval()


def test_llama_mlps_are_swapped_and_swapped_back(reg):
    """Each LlamaMLP becomes AituneLlamaMLP (the same instance, Parameters and
    state_dict); with no kernel at the model's shapes its logits are unpatched PyTorch's
    and the fused shape is a miss; unpatch gives the class back."""
    from transformers.models.llama.modeling_llama import LlamaMLP
    m = llama()
    mlps = [layer.mlp for layer in m.model.layers]
    params = [(n, id(q)) for n, q in m.named_parameters()]
    sd = {k: v.clone() for k, v in m.state_dict().items()}
    ids = torch.randint(0, 100, (2, 5))
    with torch.no_grad():
        want = m(input_ids=ids).logits
    p = aitune.patch(m)
    assert [(x.name, x.module, x.n, x.k) for x in p.mlps] == [
        ("model.layers.%d.mlp" % i, mlps[i], INTER, H) for i in range(2)]
    assert all(x.group is g for x, g in zip(p.mlps, [g for g in p.groups if g.names == ("gate_proj", "up_proj")]))
    assert "2 gated MLPs" in repr(p)
    assert all(type(x).__name__ == "AituneLlamaMLP" and isinstance(x, LlamaMLP) for x in mlps)
    assert [(n, id(q)) for n, q in m.named_parameters()] == params
    assert list(m.state_dict()) == list(sd) and all(torch.equal(v, sd[k]) for k, v in m.state_dict().items())
    with torch.no_grad():
        got = m(input_ids=ids).logits
    assert torch.equal(got, want)
    assert ("gemm_swiglu", "bf16", (10, INTER, H)) in p.misses()
    aitune.unpatch(m)
    assert all(type(x) is LlamaMLP and "_aitune_mlp" not in x.__dict__ for x in mlps)
    assert list(m.state_dict()) == list(sd) and all(torch.equal(v, sd[k]) for k, v in m.state_dict().items())
    with torch.no_grad():
        assert torch.equal(m(input_ids=ids).logits, want)


def test_a_fused_mlp_is_one_kernel_then_down_proj(reg, fake_cuda):
    """At m = 1 (tuned): one gemm_swiglu launch over the group's buffer, whose output is
    down_proj's input; gate_proj and up_proj are not called. At m = 3 (not tuned): the
    module's own forward, PyTorch's result; weights replaced after patch: the group is
    off and the MLP runs its own forward with the new weight."""
    fk = fake_cuda
    m = llama()
    mlp = m.model.layers[0].mlp
    p = aitune.patch(m)
    fused = p.mlps[0]
    seen = []
    mlp.down_proj.register_forward_pre_hook(lambda mod, args: seen.append(args[0].data_ptr()))
    calls = []
    mlp.gate_proj.register_forward_pre_hook(lambda mod, args: calls.append("gate"))
    x = torch.randn(1, 1, H, dtype=BF)
    with torch.no_grad():
        n = fk.launches()
        mlp(x)
        assert fk.launches() == n + 1 and fk.kernel() == "fake_swiglu"
        assert fk.param(1) == fused.group.cat.data_ptr() == mlp.gate_proj.weight.data_ptr()
        assert mlp.up_proj.weight.data_ptr() == fk.param(1) + INTER * H * 2
        assert (fk.param(3), fk.param(4), fk.param(5)) == (1, INTER, H)
        assert seen == [fk.param(2)] and calls == []
        x3 = torch.randn(3, H, dtype=BF)
        want = F.linear(_swiglu(x3, mlp.gate_proj.weight, mlp.up_proj.weight), mlp.down_proj.weight)
        n = fk.launches()
        assert torch.equal(mlp(x3), want) and fk.launches() == n and calls == ["gate"]
        assert ("gemm_swiglu", "bf16", (3, INTER, H)) in p.misses()
        new = torch.randn(INTER, H, dtype=BF)
        mlp.gate_proj.weight.data = new
        want = F.linear(_swiglu(x, new, mlp.up_proj.weight), mlp.down_proj.weight)
        n = fk.launches()
        assert torch.equal(mlp(x), want) and fk.launches() == n
        assert fused.group.off and "no longer views" in fused.group.off and "off:" in repr(fused)
    aitune.unpatch(m)


def test_check_mode_names_the_fused_call(reg, fake_cuda):
    import warnings
    m = llama()
    p = aitune.patch(m, check=True)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.model.layers[1].mlp(torch.randn(1, H, dtype=BF))
    assert p.first_mismatch.startswith("model.layers.1.mlp (aitune::swiglu, 1x128x64, bfloat16)"), p.first_mismatch
    aitune.unpatch(m)
    m = llama()
    aitune.patch(m, check="raise")
    with torch.no_grad(), pytest.raises(aitune.AituneError, match="check: model.layers.0.mlp "):
        m.model.layers[0].mlp(torch.randn(1, H, dtype=BF))
    aitune.unpatch(m)


@pytest.mark.parametrize("rows,dynamic,traced", [(1, False, True), (3, False, False), (5, True, True)])
def test_compile_traces_the_fused_mlp(reg, rows, dynamic, traced):
    """Under torch.compile(fullgraph=True): aitune::swiglu where the trace finds a kernel
    (static shapes: at the shape; dynamic: for the weights at any size), then no gate/up
    product in the graph; else the MLP's own forward (the grouped gate/up, traced as
    PyTorch's here: no gemm_nt is tuned); the result is the unpatched MLP's either way."""
    m = llama()
    mlp = m.model.layers[0].mlp
    x = torch.randn(rows, H, dtype=BF)
    with torch.no_grad():
        want = mlp(x)
    aitune.patch(m)
    try:
        y, targets = _targets(mlp, x, dynamic=dynamic)
        assert targets.count("aitune.swiglu") == (1 if traced else 0), targets
        assert sum("silu" in t for t in targets) == (0 if traced else 1), targets
        assert sum("linear" in t for t in targets) == (1 if traced else 3), targets
        assert torch.equal(y, want)
    finally:
        aitune.unpatch(m)


@pytest.mark.parametrize("family", ["Llama", "Mistral", "Qwen2", "Qwen3"])
def test_the_families_mlps_are_fused(reg, family):
    m = llama(family=family)
    p = aitune.patch(m)
    assert len(p.mlps) == 2 and type(p.mlps[0].module).__name__ == "Aitune%sMLP" % family
    aitune.unpatch(m)
    assert type(p.mlps[0].module).__name__ == "%sMLP" % family


def test_what_is_not_fused(reg):
    """Another activation, a bias on gate/up, group=False, swiglu=False (gate/up still
    grouped), or another class of the same structure (its forward may compute something
    else): not fused."""
    for m, kw in ((llama(act="gelu"), {}), (llama(mlp_bias=True), {}), (llama(), {"group": False}),
                  (llama(), {"swiglu": False})):
        p = aitune.patch(m, **kw)
        assert p.mlps == [] and type(m.model.layers[0].mlp).__name__ == "LlamaMLP", kw
        assert len(p.groups) == (4 if kw == {"swiglu": False} else len(p.groups)), kw
        aitune.unpatch(m)
    with pytest.raises(aitune.AituneError, match="swiglu must be True or False"):
        aitune.patch(llama(), swiglu="yes")
    m = llama(act="swish")      # ACT2FN["swish"]: torch.nn.SiLU
    assert type(m.model.layers[0].mlp.act_fn) is torch.nn.SiLU
    p = aitune.patch(m)
    assert len(p.mlps) == 2
    aitune.unpatch(m)

    class ScaledMLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gate_proj = torch.nn.Linear(H, INTER, bias=False)
            self.up_proj = torch.nn.Linear(H, INTER, bias=False)
            self.down_proj = torch.nn.Linear(INTER, H, bias=False)
            self.act_fn = torch.nn.SiLU()

        def forward(self, x):
            return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x)) * 0.5

    m = torch.nn.Sequential(ScaledMLP()).to(BF)
    p = aitune.patch(m)
    assert len(p.groups) == 1 and p.mlps == []
    aitune.unpatch(m)
    LlamaMLP = type("LlamaMLP", (ScaledMLP,), {})
    m = torch.nn.Sequential(LlamaMLP()).to(BF)
    p = aitune.patch(m)
    assert len(p.mlps) == 1, "the same structure under a name patch knows"
    aitune.unpatch(m)
    assert type(m[0]) is LlamaMLP and "_aitune_mlp" not in m[0].__dict__


# ---- the spec ----

LLAMA3_8B = {"hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
             "vocab_size": 128256, "model_type": "llama", "torch_dtype": "bfloat16", "head_dim": 128}


def _swiglu_tasks(text):
    import re
    out = []
    for block in text.split("  - op: ")[1:]:
        if block.split("\n")[0] == "gemm_swiglu":
            out.append((re.search(r"timing: (\w+)", block).group(1), dict(re.findall(r"^      (\w+): (\{.*\})$",
                                                                                     block, re.M))))
    return out


def test_the_spec_tunes_gemm_swiglu_beside_the_gemms():
    """One gemm_swiglu task per gated MLP shape (n = intermediate, k = hidden) and phase,
    at the rows the phase's GEMMs take, timed as they are, and one per exact batch
    (batch 1 too: rowdot's fused kernel); none with group off or with ops leaving it
    out; group only keeps them; misses at 1 row are tuned from as any other."""
    text = tuning.model_spec(LLAMA3_8B, (1, 32), (128, 2048), exact_batches=(1, 8))
    nk = {"n": "{values: [14336], exact: true}", "k": "{values: [4096], exact: true}"}
    assert _swiglu_tasks(text) == [
        (tuning.DECODE_TIMING, dict(nk, m="{range: [1, 63], align: [1]}")),
        (tuning.PREFILL_TIMING, dict(nk, m="{range: [128, 65536], align: [1]}")),
        (tuning.DECODE_TIMING, dict(nk, m="{values: [1], exact: true}")),
        (tuning.DECODE_TIMING, dict(nk, m="{values: [8], exact: true}"))]
    assert "m: {range: [1, 63], align: [1]}" in text.split("gemm_swiglu")[0], "the gemm_nt decode rows from 1"
    assert "m: {range: [128, 65536], align: [1]}" in text.split("gemm_swiglu")[1], "the gemm_nt prefill rows"
    assert len(_swiglu_tasks(tuning.model_spec(LLAMA3_8B, (1, 32), (1, 1)))) == 1, "decode rows only"
    assert _swiglu_tasks(tuning.model_spec(LLAMA3_8B, (1, 1), (1, 1))) == [
        (tuning.DECODE_TIMING, dict(nk, m="{range: [1, 1], align: [1]}"))], "batch 1 alone"
    missed = [("gemm_swiglu", "sm_90", "bf16", (1, 14336, 4096), 9), ("gemm_swiglu", "sm_90", "bf16", (8, 14336, 4096), 3)]
    assert _swiglu_tasks(tuning.misses_spec(missed)) == [(tuning.DECODE_TIMING, dict(nk, m="{range: [1, 8], align: [1]}"))]
    assert _swiglu_tasks(tuning.misses_spec(missed[:1])) == [
        (tuning.DECODE_TIMING, dict(nk, m="{range: [1, 1], align: [1]}"))]
    assert _swiglu_tasks(tuning.model_spec(LLAMA3_8B, (1, 32), (128, 2048), group="off")) == []
    assert _swiglu_tasks(tuning.model_spec(LLAMA3_8B, (1, 32), (128, 2048), ops=["gemm_nt", "rmsnorm"])) == []
    only = tuning.model_spec(LLAMA3_8B, (1, 32), (128, 2048), group="only")
    assert len(_swiglu_tasks(only)) == 2 and "rmsnorm" not in only
    alone = tuning.model_spec(LLAMA3_8B, (1, 32), (128, 2048), ops=["gemm_swiglu"], exact_batches=(8,))
    assert [op.split("\n")[0] for op in alone.split("  - op: ")[1:]] == ["gemm_swiglu"] * 3
    assert len(_swiglu_tasks(tuning.model_spec(LLAMA3_8B, (1, 32), (128, 2048), group="only",
                                               ops=["gemm_swiglu"]))) == 2
    moe = dict(LLAMA3_8B, model_type="qwen2_moe", num_experts=60, moe_intermediate_size=1408)
    assert {d["n"] for _, d in _swiglu_tasks(tuning.model_spec(moe, (1, 8), (1, 512)))} == {
        "{values: [14336], exact: true}", "{values: [1408], exact: true}"}
    with pytest.raises(tuning.SpecError, match="unknown gemm_swiglu2"):
        tuning.model_spec(LLAMA3_8B, ops=["gemm_swiglu2"])


def test_the_cli_tunes_gemm_swiglu_by_default(tmp_path):
    from test_tuning import cli
    cfg = tmp_path / "llama.json"
    cfg.write_text(json.dumps(LLAMA3_8B))
    r = cli("tune", str(cfg), "--batch", "1:8", "--prompt", "16:512", "--dry-run")
    assert r.returncode == 0 and len(_swiglu_tasks(r.stdout)) == 2, r.stderr
    assert r.stdout == tuning.model_spec(LLAMA3_8B, (1, 8), (16, 512))
    r = cli("tune", str(cfg), "--batch", "1:8", "--prompt", "16:512", "--ops", "gemm_nt,rmsnorm", "--dry-run")
    assert r.returncode == 0 and _swiglu_tasks(r.stdout) == []
    r = cli("tune", "--help")
    assert "gemm_swiglu" in r.stdout
