"""patch(model, group=True): sibling projections as one GEMM (aitune.grouping), without a
GPU: launches go to the recording libcuda (which computes nothing, so a launched result
is garbage and only its addresses and dims are checked); where nothing is launched
(a registry without the fused shape, no dispatcher, the CPU kernels under
torch.compile) the outputs must be PyTorch's, bit for bit."""

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import aitune  # noqa: E402
from aitune import dispatch, grouping, ops  # noqa: E402

BF = torch.bfloat16
H, KV, INTER = 64, 32, 128          # hidden, k/v width, MLP width: q/k/v fuse to 128, gate/up to 256


class Attn(torch.nn.Module):
    """q/k/v/o projections named as Hugging Face names them (bias: Qwen2's q/k/v)."""

    def __init__(self, bias=False):
        super().__init__()
        self.q_proj = torch.nn.Linear(H, H, bias=bias)
        self.k_proj = torch.nn.Linear(H, KV, bias=bias)
        self.v_proj = torch.nn.Linear(H, KV, bias=bias)
        self.o_proj = torch.nn.Linear(H, H, bias=False)

    def forward(self, x):
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        return self.o_proj(q * torch.cat([k, v], -1))


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = torch.nn.Linear(H, INTER, bias=False)
        self.up_proj = torch.nn.Linear(H, INTER, bias=False)
        self.down_proj = torch.nn.Linear(INTER, H, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(torch.nn.Module):
    def __init__(self, bias=False):
        super().__init__()
        self.self_attn, self.mlp = Attn(bias), Mlp()

    def forward(self, x):
        h = x + self.self_attn(x)
        return h + self.mlp(h)


class Decoder(torch.nn.Module):
    def __init__(self, layers=2, bias=False):
        super().__init__()
        self.layers = torch.nn.ModuleList(Layer(bias) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def decoder(bias=False, layers=2):
    torch.manual_seed(0)
    m = Decoder(layers, bias).to(BF).eval()
    with torch.no_grad():
        for p in m.parameters():
            p.mul_(0.1)     # keep the residual sums small enough for bf16
    return m


@pytest.fixture
def reg(tmp_path, fake_cuda, torch_mod):
    """A Dispatcher whose registry has the fused shapes at m = 1 (q/k/v 128 x 64,
    gate/up 256 x 64), none of the separate ones."""
    import fakereg
    d = dispatch.use(dispatch.Dispatcher(fakereg.build(str(tmp_path / "g.db"), gemm=((1, 128, 64), (1, 256, 64)),
                                                       rows=()), arch="sm_90", host_tensors=True))
    yield d
    dispatch._current = None
    d.reg.close()


def _storage(t):
    return t.untyped_storage().data_ptr()


def test_groups_found_and_state_kept(reg):
    m = decoder()
    params = [(n, id(p)) for n, p in m.named_parameters()]
    sd = {k: v.clone() for k, v in m.state_dict().items()}
    p = aitune.patch(m)
    assert [(g.name, g.names, g.n, g.k) for g in p.groups] == [
        ("layers.%d.%s" % (i, part), names, n, H) for i in range(2)
        for part, names, n in (("self_attn", ("q_proj", "k_proj", "v_proj"), H + 2 * KV),
                               ("mlp", ("gate_proj", "up_proj"), 2 * INTER))]
    assert p.ungrouped == [] and "4 groups" in repr(p)
    # The same Parameter objects, the same keys and values; q/k/v now rows of one buffer.
    assert [(n, id(q)) for n, q in m.named_parameters()] == params
    assert list(m.state_dict()) == list(sd) and all(torch.equal(v, sd[k]) for k, v in m.state_dict().items())
    a = m.layers[0].self_attn
    assert _storage(a.q_proj.weight) == _storage(a.k_proj.weight) == _storage(a.v_proj.weight)
    assert a.k_proj.weight.data_ptr() == a.q_proj.weight.data_ptr() + H * H * 2
    assert isinstance(a.q_proj, torch.nn.Linear) and type(a.o_proj) is aitune.nn.Linear
    aitune.unpatch(m)
    assert type(a.q_proj) is torch.nn.Linear and "_aitune_member" not in a.q_proj.__dict__
    assert [(n, id(q)) for n, q in m.named_parameters()] == params
    assert all(torch.equal(v, sd[k]) for k, v in m.state_dict().items())
    # Independent again: each weight its own storage, of its own size.
    for w in (a.q_proj.weight, a.k_proj.weight, a.v_proj.weight):
        assert w.untyped_storage().nbytes() == w.numel() * 2
    assert len({_storage(w) for w in (a.q_proj.weight, a.k_proj.weight, a.v_proj.weight)}) == 3
    with pytest.raises(aitune.AituneError, match="group must be"):
        aitune.patch(m, group="yes")
    p = aitune.patch(m, group=False)
    assert p.groups == [] and type(a.q_proj) is aitune.nn.Linear
    aitune.unpatch(m)


def test_one_launch_per_group(reg, fake_cuda):
    fk = fake_cuda
    m = decoder()
    p = aitune.patch(m)
    a, g = m.layers[0].self_attn, p.groups[0]
    x = torch.randn(1, H, dtype=BF)
    with torch.no_grad():
        n = fk.launches()
        q = a.q_proj(x)
        assert fk.launches() == n + 1 and fk.kernel() == "fake_gemm"
        assert fk.param(1) == g.cat.data_ptr() == a.q_proj.weight.data_ptr(), "B: the group's buffer"
        assert (fk.param(3), fk.param(4), fk.param(5)) == (1, H + 2 * KV, H), "m, the fused n, k"
        base = fk.param(2)
        k, v = a.k_proj(x), a.v_proj(x)
        assert fk.launches() == n + 1, "the siblings launch nothing"
        assert (q.shape, k.shape, v.shape) == ((1, H), (1, KV), (1, KV))
        assert q.data_ptr() == base and k.data_ptr() == base + H * 2 and v.data_ptr() == base + (H + KV) * 2
        assert g.pending is None, "the last sibling served clears the group"
        # A whole layer: one launch for q/k/v, one for gate/up; o_proj and down_proj are not
        # tuned here (they fall back).
        n = fk.launches()
        m.layers[1](x)
        assert fk.launches() == n + 2
        assert ("gemm_nt", "bf16", (1, H, H)) in p.misses()
    aitune.unpatch(m)


def test_untuned_fused_shape_runs_separately(reg, fake_cuda):
    """m = 3: the registry has no fused shape there, so each member runs its own GEMM
    (PyTorch's here: not tuned either); the result is the unpatched model's, and the
    fused shape is a miss."""
    m = decoder()
    x = torch.randn(3, H, dtype=BF)
    with torch.no_grad():
        want = m(x)
    p = aitune.patch(m)
    with torch.no_grad():
        n = fake_cuda.launches()
        got = m(x)
        assert fake_cuda.launches() == n
    assert torch.equal(got, want)
    assert ("gemm_nt", "bf16", (3, H + 2 * KV, H)) in p.misses()
    assert ("gemm_nt", "bf16", (3, 2 * INTER, H)) in p.misses()
    assert all(g.off is None for g in p.groups), "a miss is per shape, not the group's end"
    aitune.unpatch(m)


def test_without_a_registry_it_is_pytorch(fake_cuda, torch_mod, reg):
    m = decoder(bias=True)
    x = torch.randn(1, H, dtype=BF)
    with torch.no_grad():
        want = m(x)
    aitune.patch(m)
    dispatch._current = None
    with torch.no_grad():
        assert torch.equal(m(x), want)
    dispatch._current = reg
    aitune.unpatch(m)


def test_a_sibling_given_another_input(reg, fake_cuda):
    fk = fake_cuda
    m = decoder()
    p = aitune.patch(m)
    a, g = m.layers[0].self_attn, p.groups[0]
    x, y = torch.randn(1, H, dtype=BF), torch.randn(1, H, dtype=BF)
    with torch.no_grad():
        a.q_proj(x)
        n = fk.launches()
        k = a.k_proj(y)                          # not the input q's product was computed for
        assert fk.launches() == n
        assert torch.equal(k, F.linear(y, a.k_proj.weight)), "its own product (PyTorch's: not tuned)"
        assert g.off and "k_proj was called with another input" in g.off and g.pending is None
        v = a.v_proj(x)
        assert torch.equal(v, F.linear(x, a.v_proj.weight))
        q = a.q_proj(x)
        assert fk.launches() == n and torch.equal(q, F.linear(x, a.q_proj.weight)), "off for good"
        assert p.groups[1].off is None
    aitune.unpatch(m)


def test_an_input_changed_in_place_is_not_served_stale(reg, fake_cuda):
    fk = fake_cuda
    m = decoder()
    aitune.patch(m)
    a = m.layers[0].self_attn
    x = torch.randn(1, H, dtype=BF)
    with torch.no_grad():
        a.q_proj(x)
        x.add_(1)
        n = fk.launches()
        a.k_proj(x)
        assert fk.launches() == n + 1 and fk.param(0) == x.data_ptr(), "computed again for the new values"
        a.v_proj(x)
        assert fk.launches() == n + 1, "then served"
    aitune.unpatch(m)


def test_under_inference_mode(reg, fake_cuda):
    """Inference tensors have no version counter: the identity alone serves the siblings."""
    fk = fake_cuda
    m = decoder()
    p = aitune.patch(m)
    a = m.layers[0].self_attn
    with torch.inference_mode():
        x = torch.randn(1, H, dtype=BF)
        n = fk.launches()
        q, k, v = a.q_proj(x), a.k_proj(x), a.v_proj(x)
        assert fk.launches() == n + 1 and k.data_ptr() == q.data_ptr() + H * 2 and p.groups[0].pending is None
        m(x)
        assert fk.launches() == n + 5, "the model: one launch per group (o_proj, down_proj fall back)"
    aitune.unpatch(m)


def test_replaced_weights_turn_the_group_off(reg, fake_cuda):
    m = decoder()
    p = aitune.patch(m)
    a, g = m.layers[0].self_attn, p.groups[0]
    x = torch.randn(1, H, dtype=BF)
    new = torch.randn(KV, H, dtype=BF)
    a.k_proj.weight.data = new
    with torch.no_grad():
        n = fake_cuda.launches()
        q, k = a.q_proj(x), a.k_proj(x)
        assert fake_cuda.launches() == n
        assert g.off and "no longer views" in g.off and g.cat is None
        assert torch.equal(k, F.linear(x, new)) and torch.equal(q, F.linear(x, a.q_proj.weight))
    aitune.unpatch(m)
    assert torch.equal(a.k_proj.weight, new)


def test_load_state_dict_reaches_the_buffer(reg, fake_cuda):
    m = decoder()
    other = decoder()
    with torch.no_grad():
        for q in other.parameters():
            q.add_(1)
    p = aitune.patch(m)
    m.load_state_dict(other.state_dict())
    g = p.groups[0]
    a = other.layers[0].self_attn
    assert torch.equal(g.cat, torch.cat([a.q_proj.weight, a.k_proj.weight, a.v_proj.weight]))
    assert all(gr.off is None for gr in p.groups)
    aitune.unpatch(m)


def test_biases_are_grouped_too(reg, fake_cuda):
    m = decoder(bias=True)
    x = torch.randn(1, H, dtype=BF)
    p = aitune.patch(m)
    a, g = m.layers[0].self_attn, p.groups[0]
    assert g.bcat is not None and a.v_proj.bias.data_ptr() == g.bcat.data_ptr() + (H + KV) * 2
    assert p.groups[1].bcat is None
    with torch.no_grad():
        n = fake_cuda.launches()
        out = a.q_proj(x)
        assert fake_cuda.launches() == n + 1
        base = fake_cuda.param(2)
        assert out.data_ptr() == base
    # Members with and without a bias are not grouped; nor are weights of other in_features.
    m2 = decoder(bias=True)
    m2.layers[0].self_attn.k_proj.bias = None
    m2.layers[1].mlp.up_proj = torch.nn.Linear(H + 8, INTER, bias=False).to(BF)
    p2 = aitune.patch(m2)
    assert [(g.name) for g in p2.groups] == ["layers.0.mlp", "layers.1.self_attn"]
    assert sorted(p2.ungrouped) == [("layers.0.self_attn", ("q_proj", "k_proj", "v_proj"), "a bias on some, not all"),
                                    ("layers.1.mlp", ("gate_proj", "up_proj"), "in_features differ")]
    aitune.unpatch(m2)
    aitune.unpatch(m)


def test_check_mode_names_a_member(reg, fake_cuda):
    import warnings
    m = decoder()
    p = aitune.patch(m, check=True)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m(torch.randn(1, H, dtype=BF))
    assert p.first_mismatch.startswith("layers.0.self_attn.q_proj (aitune::linear_group, 1x128x64"), p.first_mismatch
    aitune.unpatch(m)


def _graph(model, x):
    from torch._dynamo.testing import CompileCounterWithBackend
    torch._dynamo.reset()
    cnt = CompileCounterWithBackend("aot_eager")
    with torch.no_grad():
        y = torch.compile(model, fullgraph=True, backend=cnt)(x)
    assert cnt.frame_count == 1
    return y, [str(n.target) for n in cnt.graphs[0].graph.nodes if n.op == "call_function"]


@pytest.mark.parametrize("rows", [1, 3])
def test_compile_traces_one_op_per_group(reg, rows):
    """Traced by torch.compile(fullgraph=True): one aitune::linear_group per group where the
    registry has the fused weight (at m = 1: at run time an m it lacks runs PyTorch's one
    GEMM over the fused weight); the compiled result (the ops' CPU kernels) is the
    unpatched model's; no pending product is left in a group after the call."""
    m = decoder(bias=True)
    x = torch.randn(rows, H, dtype=BF)
    with torch.no_grad():
        want = m(x)
    p = aitune.patch(m)
    try:
        y, targets = _graph(m, x)
        assert targets.count("aitune.linear_group") == 4, targets
        assert targets.count("aitune.linear") == 4, targets
        assert torch.equal(y, want)
        assert all(g.pending is None and g.off is None for g in p.groups)
    finally:
        aitune.unpatch(m)


def test_compile_without_the_fused_weight_traces_the_members(tmp_path, fake_cuda, torch_mod):
    """A registry without the fused weights at any m: the members' own aitune::linear."""
    import fakereg
    d = dispatch.use(dispatch.Dispatcher(fakereg.build(str(tmp_path / "s.db"), gemm=((1, H, H),), rows=()),
                                         arch="sm_90", host_tensors=True))
    m = decoder()
    x = torch.randn(2, H, dtype=BF)
    with torch.no_grad():
        want = m(x)
    p = aitune.patch(m)
    try:
        y, targets = _graph(m, x)
        assert targets.count("aitune.linear_group") == 0, targets
        assert targets.count("aitune.linear") == 14, targets
        assert torch.equal(y, want)
        assert not d.misses() or all(s[2][0] == 2 for s in d.misses()), "the trace's probes record no miss"
    finally:
        aitune.unpatch(m)
        dispatch._current = None
        d.reg.close()


def test_static_shapes_trace_what_the_registry_answers(tmp_path, fake_cuda, torch_mod):
    """torch.compile(dynamic=False): m is a constant, so the trace asks the registry at the
    shape itself: the fused q/k/v (128 x 64, a template's kernel) as aitune::linear_group;
    the fused gate/up (256 x 64), which the vendor holds, as the members' products, each
    an aitune::linear (128 x 64 again); o_proj and down_proj (not tuned: a miss, recorded
    at trace time) as F.linear, PyTorch's graph there. At m = 3, where the registry has
    nothing, the whole graph is plain PyTorch's."""
    import fakereg
    path = fakereg.vendor(fakereg.build(str(tmp_path / "v.db"), gemm=((1, 128, 64), (1, 256, 64)), rows=()),
                          "%n=2^8,%")
    d = dispatch.use(dispatch.Dispatcher(path, arch="sm_90", host_tensors=True))
    m = decoder()
    p = aitune.patch(m)
    try:
        for rows, groups, linears in ((1, 2, 4), (3, 0, 0)):
            x = torch.randn(rows, H, dtype=BF)
            aitune.unpatch(m)
            with torch.no_grad():
                want = m(x)
            p = aitune.patch(m)
            torch._dynamo.reset()
            from torch._dynamo.testing import CompileCounterWithBackend
            cnt = CompileCounterWithBackend("aot_eager")
            with torch.no_grad():
                y = torch.compile(m, fullgraph=True, dynamic=False, backend=cnt)(x)
            targets = [str(n.target) for n in cnt.graphs[0].graph.nodes if n.op == "call_function"]
            assert targets.count("aitune.linear_group") == groups, (rows, targets)
            assert targets.count("aitune.linear") == linears, (rows, targets)
            assert sum("linear" in t and "aitune" not in t for t in targets) == 14 - 3 * groups - linears, \
                (rows, targets)
            assert torch.equal(y, want)
        missed = {k[2] for k in d.misses()}
        assert (1, H, INTER) in missed and (1, H, H) in missed and (3, 128, H) in missed, missed
        assert (1, 256, H) not in missed, "a vendor bucket is no miss"
    finally:
        aitune.unpatch(m)
        dispatch._current = None
        d.reg.close()


def test_compile_with_a_dynamic_batch(reg):
    """A batch dim Dynamo made symbolic (two sizes seen, or dynamic=True) still traces
    one aitune::linear_group per group (m is no constant there)."""
    from torch._dynamo.testing import CompileCounterWithBackend
    m = decoder()
    p = aitune.patch(m)
    try:
        torch._dynamo.reset()
        cnt = CompileCounterWithBackend("aot_eager")
        f = torch.compile(m, fullgraph=True, dynamic=True, backend=cnt)
        with torch.no_grad():
            for rows in (2, 5):
                x = torch.randn(rows, H, dtype=BF)
                aitune.unpatch(m)
                want = m(x)
                p = aitune.patch(m)
                assert torch.equal(f(x), want)
        targets = [str(n.target) for n in cnt.graphs[-1].graph.nodes if n.op == "call_function"]
        assert targets.count("aitune.linear_group") == 4, targets
    finally:
        aitune.unpatch(m)


def test_compile_a_sibling_given_another_input(reg):
    """A cross attention: k/v read another tensor than q. Traced, q's product is the
    group's; k's call turns the group off and runs k's own; the result is right."""
    class Cross(Attn):
        def forward(self, x, mem):
            q, k, v = self.q_proj(x), self.k_proj(mem), self.v_proj(mem)
            return self.o_proj(q * torch.cat([k, v], -1))

    torch.manual_seed(0)
    m = torch.nn.ModuleDict({"attn": Cross()}).to(BF)
    x, mem = torch.randn(1, H, dtype=BF), torch.randn(1, H, dtype=BF)
    with torch.no_grad():
        want = m["attn"](x, mem)
    p = aitune.patch(m)
    try:
        torch._dynamo.reset()
        with torch.no_grad():
            y = torch.compile(m["attn"], fullgraph=True, backend="aot_eager")(x, mem)
        assert torch.equal(y, want)
        assert p.groups[0].off and "k_proj" in p.groups[0].off
    finally:
        aitune.unpatch(m)


def test_the_op_checks_its_weights_at_run_time(reg, fake_cuda):
    """aitune::linear_group's CUDA kernel (called here on CPU tensors through the recording
    driver): one launch over the first weight's storage when the weights are adjacent
    rows of it; the members' own products otherwise."""
    fk = fake_cuda
    x = torch.randn(1, H, dtype=BF)
    buf = torch.randn(H + 2 * KV, H, dtype=BF)
    ws = [buf[:H], buf[H:H + KV], buf[H + KV:]]
    assert ops.adjacent(ws).data_ptr() == buf.data_ptr() and ops.adjacent(ws).shape == buf.shape
    n = fk.launches()
    with torch.no_grad():
        out = ops._linear_group_cuda(x, ws, [])
    assert fk.launches() == n + 1 and fk.param(1) == buf.data_ptr() and fk.param(4) == H + 2 * KV
    assert out.shape == (1, H + 2 * KV)
    apart = [w.clone() for w in ws]
    assert ops.adjacent(apart) is None
    assert ops.adjacent([ws[0], ws[2]]) is None, "not adjacent"
    assert ops.adjacent([ws[0], ws[1].t().contiguous().t()]) is None
    with torch.no_grad():
        out = ops._linear_group_cuda(x, apart, [])
    assert fk.launches() == n + 1
    assert torch.equal(out, torch.cat([F.linear(x, w) for w in apart], -1))
    # A view that would leave its storage is not made: the rows past the first weight's
    # storage are another allocation's.
    lone = torch.randn(H, H, dtype=BF)
    assert ops.adjacent([lone[: H // 2], lone[H // 2:]]) is not None
    assert ops.adjacent([lone]) is lone
    with pytest.raises(aitune.AituneError, match="linear_group: weight 1: x has k = 64"):
        torch.ops.aitune.linear_group(x, [ws[0], torch.randn(8, 32, dtype=BF)], [])
    with pytest.raises(aitune.AituneError, match="2 biases for 3 weights"):
        torch.ops.aitune.linear_group(x, ws, [torch.zeros(H, dtype=BF)] * 2)
    y = torch.ops.aitune.linear_group(x, ws, [torch.ones(H, dtype=BF), torch.ones(KV, dtype=BF),
                                              torch.ones(KV, dtype=BF)])
    assert torch.equal(y, torch.cat([F.linear(x, w, torch.ones(w.shape[0], dtype=BF)) for w in ws], -1))
    meta = torch.ops.aitune.linear_group(torch.empty(5, H, dtype=BF, device="meta"), [w.to("meta") for w in ws], [])
    assert meta.shape == (5, H + 2 * KV)


def test_a_transformers_llama_is_grouped(reg, tmp_path):
    """transformers' own LlamaForCausalLM (when installed): each layer's q/k/v and gate/up
    are grouped; with nothing tuned at its shapes, the logits are unpatched PyTorch's;
    save_pretrained writes what from_pretrained reads back; unpatch restores."""
    transformers = pytest.importorskip("transformers")
    cfg = transformers.LlamaConfig(hidden_size=H, intermediate_size=INTER, num_attention_heads=4,
                                   num_key_value_heads=2, num_hidden_layers=2, vocab_size=100, head_dim=16)
    torch.manual_seed(0)
    m = transformers.LlamaForCausalLM(cfg).to(BF).eval()
    ids = torch.randint(0, 100, (2, 5))
    with torch.no_grad():
        want = m(input_ids=ids).logits
    p = aitune.patch(m)
    assert [(g.name, g.names) for g in p.groups] == [
        ("model.layers.%d.%s" % (i, part), names) for i in range(2)
        for part, names in (("self_attn", ("q_proj", "k_proj", "v_proj")), ("mlp", ("gate_proj", "up_proj")))]
    with torch.no_grad():
        got = m(input_ids=ids).logits
    assert torch.equal(got, want)
    assert ("gemm_nt", "bf16", (10, 128, H)) in p.misses() and ("gemm_nt", "bf16", (10, 256, H)) in p.misses()
    m.save_pretrained(str(tmp_path / "saved"))
    back = transformers.LlamaForCausalLM.from_pretrained(str(tmp_path / "saved"), dtype=BF)
    assert list(back.state_dict()) == list(m.state_dict())
    assert all(torch.equal(a, b) for a, b in zip(back.state_dict().values(), m.state_dict().values()))
    aitune.unpatch(m)
    assert not any(type(x).__name__ in ("GroupedLinear", "Linear") and type(x) is not torch.nn.Linear
                   for x in m.modules())
    with torch.no_grad():
        assert torch.equal(m(input_ids=ids).logits, want)


def test_grouping_finds_sets_by_structure():
    class Odd(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.q_proj, self.k_proj = torch.nn.Linear(8, 8), torch.nn.Linear(8, 8)   # no v_proj

    m = torch.nn.Sequential(Odd(), Attn(), Mlp()).to(BF)
    taken = {id(x) for x in m.modules() if type(x) is torch.nn.Linear}
    found, refused = grouping.find(m, taken)
    assert [(name, names) for name, names, _ in found] == [("1", ("q_proj", "k_proj", "v_proj")),
                                                         ("2", ("gate_proj", "up_proj"))]
    assert refused == []
    # Only modules patch took count (linear=False, or a subclass of nn.Linear: not taken).
    assert grouping.find(m, set()) == ([], [])
    m.float()
    assert grouping.find(m, taken)[1] == [(name, names, "float32 (aitune's GEMMs take bf16 and f16)")
                                          for name, names, _ in found]
