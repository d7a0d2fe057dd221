"""Decode attention (aitune::attn_decode, aitune.attention): the op's arguments, its
PyTorch computation against sdpa's, transformers models patched and unpatched, what
torch.compile traces, the spec `tune` writes for it and a sweep of it whose winners
libaitune answers at five dims (the fake worker). No GPU."""

import dis
import sqlite3

import pytest
import torch
import torch.nn.functional as F

import fakereg
import aitune
from aitune import attention, ops, tuning
from aitune._lib import AituneError

BF = torch.bfloat16
LLAMA3_8B = {"hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
             "vocab_size": 128256, "model_type": "llama", "torch_dtype": "bfloat16", "head_dim": 128}


def _qkv(b=2, h=8, g=2, n=37, d=64, dtype=torch.float32, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(b, h, d, generator=gen).to(dtype)
    k = torch.randn(b, g, n, d, generator=gen).to(dtype)
    v = torch.randn(b, g, n, d, generator=gen).to(dtype)
    return q, k, v


def _sdpa(q, k, v, keep, scale):
    """PyTorch's own attention of one query per sequence (keep: [b, n] bool)."""
    rep = q.shape[1] // k.shape[1]
    out = F.scaled_dot_product_attention(q[:, :, None, :], k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1),
                                         attn_mask=keep[:, None, None, :], scale=scale)
    return out[:, :, 0, :]


# ---- the op ----

def test_cpu_op_is_sdpa_with_the_mask_as_a_bias():
    q, k, v = _qkv()
    keep = torch.rand(2, 37, generator=torch.Generator().manual_seed(1)) > 0.3
    keep[:, 0] = True
    bias = torch.where(keep, 0.0, float("-inf"))
    got = ops.attn_decode(q, k, v, bias, 0.125)
    assert got.shape == (2, 8, 64)
    torch.testing.assert_close(got, _sdpa(q, k, v, keep, 0.125), rtol=1e-5, atol=1e-5)


def test_a_sequence_whose_keys_are_all_masked_gives_zeros():
    q, k, v = _qkv(b=2)
    bias = torch.zeros(2, 37)
    bias[1] = float("-inf")
    got = ops.attn_decode(q, k, v, bias, 0.125)
    assert torch.equal(got[1], torch.zeros_like(got[1]))
    assert got[0].abs().sum() > 0


@pytest.mark.parametrize("args, says", [
    (lambda q, k, v, b: (q[0], k, v, b), "want q [b, h, d]"),
    (lambda q, k, v, b: (q, k, v[:, :, :5], b), "k and v must be"),
    (lambda q, k, v, b: (q[:, :7], k, v, b), "not a multiple of k's 2 kv heads"),
    (lambda q, k, v, b: (q, k, v, b[:, :5]), "bias must be [2, 37]"),
    (lambda q, k, v, b: (q, k.double(), v, b), "'k' is torch.float64"),
])
def test_bad_arguments_are_refused_by_name(args, says):
    q, k, v = _qkv()
    with pytest.raises(AituneError, match=r"aitune::attn_decode: .*" + says.replace("[", r"\[").replace("]", r"\]")):
        ops.attn_decode(*args(q, k, v, torch.zeros(2, 37)), 0.1)


def test_inputs_that_require_grad_are_refused():
    q, k, v = _qkv()
    q.requires_grad_(True)
    with pytest.raises(AituneError, match="requires grad"):
        ops.attn_decode(q, k, v, torch.zeros(2, 37), 0.1)


def test_fake_gives_the_query_shape():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        q, k, v = torch.empty(3, 8, 64, dtype=BF), torch.empty(3, 2, 100, 64, dtype=BF), torch.empty(3, 2, 100, 64,
                                                                                                       dtype=BF)
        out = ops.attn_decode(q, k, v, torch.empty(3, 100, dtype=BF), 0.125)
    assert out.shape == (3, 8, 64) and out.dtype == BF


# ---- the attention function transformers calls ----

class _Attn(torch.nn.Module):
    num_key_value_groups = 4
    is_causal = True


@pytest.fixture
def sdpa_installed():
    tf = pytest.importorskip("transformers")
    assert tf is not None
    found = attention._interfaces()
    if found is None:
        pytest.skip("transformers has no AttentionInterface")
    attention._register(found)
    return found[2]


@pytest.mark.parametrize("mask_kind", ["bool", "float", "none", "one row for all"])
def test_a_decode_step_gives_sdpa_s_result(sdpa_installed, monkeypatch, mask_kind):
    """Forced to take the kernel's path (aitune's op, here its PyTorch computation), a
    one-query step over a cache gives what transformers' sdpa path gives for the mask."""
    monkeypatch.setattr(attention, "_has_kernel", lambda q, k: True)
    calls = []
    real = ops.attn_decode
    monkeypatch.setattr(ops, "attn_decode", lambda *a: calls.append(a) or real(*a))
    b, h, g, n, d = 2, 8, 2, 19, 32
    q4 = torch.randn(b, h, 1, d, dtype=BF)
    k, v = torch.randn(b, g, n, d, dtype=BF), torch.randn(b, g, n, d, dtype=BF)
    keep = (torch.arange(n) <= torch.tensor([[11], [17]])).view(b, 1, 1, n)
    mask = {"bool": keep, "float": torch.where(keep, 0.0, float("-inf")).to(BF), "none": None,
            "one row for all": keep[:1]}[mask_kind]
    mod = _Attn()
    mod.num_key_value_groups = h // g
    want = sdpa_installed(mod, q4, k, v, mask, scaling=0.2)[0]
    got, w = attention.attention_forward(mod, q4, k, v, mask, scaling=0.2)
    assert w is None and len(calls) == 1
    assert got.shape == want.shape == (b, 1, h, d)
    torch.testing.assert_close(got.float(), want.float(), rtol=2e-2, atol=2e-2)


def test_a_prefill_and_a_shape_without_a_kernel_run_sdpa(sdpa_installed, monkeypatch):
    calls = []
    monkeypatch.setattr(ops, "attn_decode", lambda *a: calls.append(a))
    mod = _Attn()
    k = v = torch.randn(1, 2, 9, 16)
    q = torch.randn(1, 8, 3, 16)
    attention.attention_forward(mod, q.to(BF), k.to(BF), v.to(BF), None, scaling=0.25)   # 3 queries: a prefill
    monkeypatch.setattr(attention, "_has_kernel", lambda q, k: False)
    attention.attention_forward(mod, q[:, :, :1].to(BF), k.to(BF), v.to(BF), None, scaling=0.25)
    monkeypatch.setattr(attention, "_has_kernel", lambda q, k: True)
    attention.attention_forward(mod, q[:, :, :1], k, v, None, scaling=0.25)            # f32: not tuned
    assert calls == []


def test_an_eager_step_without_a_kernel_runs_sdpa_and_is_a_miss(sdpa_installed, tmp_path, monkeypatch):
    """Eager, the dispatcher answers: no tuned bucket at the step's shape, so sdpa runs and
    the shape (b, h, g, n, d) is recorded as a miss."""
    from aitune import dispatch
    calls = []
    monkeypatch.setattr(ops, "attn_decode", lambda *a: calls.append(a))
    d = dispatch.use(dispatch.Dispatcher(fakereg.build(str(tmp_path / "none.db"), gemm=(), rows=()), arch="sm_90",
                                         host_tensors=True))
    try:
        mod = _Attn()
        mod.num_key_value_groups = 4
        k = v = torch.randn(1, 2, 9, 16, dtype=BF)
        out, _ = attention.attention_forward(mod, torch.randn(1, 8, 1, 16, dtype=BF), k, v, None, scaling=0.25)
        assert out.shape == (1, 1, 8, 16) and calls == []
        assert ("attn_decode", "bf16", (1, 8, 2, 9, 16)) in d.misses()
    finally:
        dispatch._current = None


def test_the_traced_path_imports_nothing():
    """torch.compile (2.11) breaks the graph at an import of transformers' lazy modules,
    and then compiled each attention layer apart, eager past the eighth (RESULTS,
    thirteenth session): nothing on the traced path may import."""
    for fn in (attention.attention_forward, attention.decode_ok, attention._bias, attention._has_kernel):
        names = {i.opname for i in dis.get_instructions(fn)}
        assert "IMPORT_NAME" not in names, fn.__name__


# ---- patch ----

def _empty_db(tmp_path):
    return fakereg.build(str(tmp_path / "none.db"), gemm=(), rows=())


def _tiny_llama(tf, impl="sdpa"):
    cfg = tf.LlamaConfig(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                         num_hidden_layers=2, vocab_size=100, head_dim=16)
    cfg._attn_implementation = impl
    torch.manual_seed(0)
    return tf.LlamaForCausalLM(cfg).to(BF).eval()


def test_patch_points_the_model_at_aitune_and_unpatch_back(tmp_path):
    tf = pytest.importorskip("transformers")
    if attention._interfaces() is None:
        pytest.skip("transformers has no AttentionInterface")
    m = _tiny_llama(tf)
    ids = torch.randint(0, 100, (2, 5))
    with torch.no_grad():
        want = m(input_ids=ids).logits
    p = aitune.patch(m, _empty_db(tmp_path))
    assert p.attention == "sdpa" and m.config._attn_implementation == "aitune"
    assert "attention" in repr(p)
    marks = [mod.__dict__.get("_aitune_attn") for mod in m.modules() if hasattr(mod, "layer_idx")]
    assert [t[0] for t in marks if t] == ["model.layers.0.self_attn", "model.layers.1.self_attn"]
    with torch.no_grad():
        got = m(input_ids=ids).logits     # a prefill: sdpa, as before
    assert torch.equal(got, want)
    aitune.unpatch(m)
    assert m.config._attn_implementation == "sdpa"
    assert not any("_aitune_attn" in mod.__dict__ for mod in m.modules())
    p = aitune.patch(m, _empty_db(tmp_path), attention=False)
    assert p.attention is None and m.config._attn_implementation == "sdpa"
    aitune.unpatch(m)
    e = _tiny_llama(tf, "eager")
    p = aitune.patch(e, _empty_db(tmp_path))
    assert p.attention is None and e.config._attn_implementation == "eager", "only sdpa models are taken"
    aitune.unpatch(e)
    with pytest.raises(AituneError, match="attention must be True or False"):
        aitune.patch(m, _empty_db(tmp_path), attention="yes")


def test_compile_traces_the_op_in_one_graph(tmp_path, monkeypatch):
    """A decode step of a patched transformers Llama over a static cache, under
    torch.compile with static shapes where the registry answers attn_decode (forced
    here): one graph, the op in it once a layer, no graph break."""
    tf = pytest.importorskip("transformers")
    if attention._interfaces() is None:
        pytest.skip("transformers has no AttentionInterface")
    from aitune import decoding
    m = _tiny_llama(tf)
    aitune.patch(m, _empty_db(tmp_path))
    monkeypatch.setattr(ops, "own_attention", torch.compiler.assume_constant_result(lambda *a: True))
    cache = decoding.static_cache(m.config, 1, 12, "cpu", BF)
    kw = {decoding.cache_kw(m): cache}
    with torch.no_grad():
        m(input_ids=torch.randint(0, 100, (1, 4)), cache_position=torch.arange(4), use_cache=True, **kw)
    seen = []

    def backend(gm, example):
        seen.append(sum(1 for nd in gm.graph.nodes if str(nd.target).startswith("aitune.attn_decode")))
        return gm

    pos = torch.tensor([4])
    step = torch.compile(lambda ids: m(input_ids=ids, cache_position=pos, position_ids=pos.view(1, 1), use_cache=True,
                                       **kw).logits, backend=backend, fullgraph=True, dynamic=False)
    torch._dynamo.reset()
    with torch.no_grad():
        out = step(torch.tensor([[7]]))
    aitune.unpatch(m)
    assert out.shape == (1, 1, 100)
    assert seen == [2], seen


# ---- tuning ----

def test_tune_writes_the_decode_attention():
    text = tuning.model_spec(LLAMA3_8B, (1, 32), (128, 2048))
    task = text.split("  - op: attn_decode\n")[1].split("  - op:")[0]
    assert "timing: neighbour" in task
    for line in ("b: {range: [1, 32], align: [1]}", "h: {values: [32], exact: true}", "g: {values: [8], exact: true}",
                 "n: {range: [1, 4096], align: [1]}", "d: {values: [128], exact: true}"):
        assert line in task, line
    assert "n: {range: [200, 300], align: [1]}" in tuning.model_spec(LLAMA3_8B, (1, 8), (1, 16), cache=(200, 300))
    assert "attn_decode" not in tuning.model_spec(LLAMA3_8B, (1, 8), (1, 16), ops=["gemm_nt"])
    assert "attn_decode" not in tuning.model_spec(LLAMA3_8B, (1, 8), (1, 16), group="only")
    with pytest.raises(tuning.SpecError, match="cache: want 1 <= LO <= HI"):
        tuning.model_spec(LLAMA3_8B, (1, 8), (1, 16), cache=(0, 10))
    with pytest.raises(tuning.SpecError, match="32 heads over 7 kv heads"):
        tuning.model_spec(dict(LLAMA3_8B, num_key_value_heads=7), (1, 8), (1, 16))


def test_misses_of_the_attention_become_a_batch_range():
    text = tuning.misses_spec([("attn_decode", "sm_90", "bf16", (3, 32, 8, 184, 128), 4),
                               ("attn_decode", "sm_90", "bf16", (9, 32, 8, 184, 128), 1)])
    task = text.split("  - op: attn_decode\n")[1]
    assert "b: {range: [3, 9], align: [1]}" in task and "n: {values: [184], exact: true}" in task


def test_a_swept_attention_spec_answers_at_five_dims(tmp_path, monkeypatch, libaitune):
    """tune's attention task for a small model (4 heads over 2 of 64), batch 1..2 and
    caches of 100..130, swept on the fake worker: winners keyed by five dims, which
    libaitune answers for a shape inside them and not for other heads."""
    tiny = {"hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4, "num_key_value_heads": 2,
            "vocab_size": 1000, "model_type": "llama", "torch_dtype": "bfloat16"}
    db = fakereg.fake_sweep(tuning.model_spec(tiny, (1, 2), (1, 1), ops=["attn_decode"], search="random",
                                              max_evals=2, cache=(100, 130)), tmp_path, monkeypatch, "attn")
    con = sqlite3.connect(db)
    keys = sorted(r[0] for r in con.execute("SELECT bucket FROM winners WHERE op = 'attn_decode'"))
    con.close()
    assert keys and all(k.startswith("b=2^") and ",h=4,g=2," in k and k.endswith(",d=64") for k in keys), keys
    reg = aitune.Registry(db)
    try:
        c = reg.lookup("attn_decode", "sm_90", "bf16", (2, 4, 2, 120, 64))
        assert c["level"] == "exact" and c["template"] == "attn_decode/split", c
        assert c["config"]["hd"] == 64 and c["config"]["grp"] == 2
        assert reg.lookup("attn_decode", "sm_90", "bf16", (2, 8, 2, 120, 64))["level"] != "exact"
    finally:
        reg.close()
