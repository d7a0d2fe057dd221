"""Tuning a model in one command: the spec written from a config or a misses table,
its errors, the command line, and the whole loop (tune, patch, run, misses, tune
--from-misses) with build/aitune on the fake worker and the recording libcuda."""

import json
import os
import re
import sqlite3
import subprocess
import sys

import pytest

import fakereg
from aitune import tuning

AITUNE = os.path.join(fakereg.ROOT, os.environ.get("BUILD", "build"), "aitune")
FAKE_WORKER = os.path.join(fakereg.ROOT, os.environ.get("BUILD", "build"), "tests", "fake_worker")
LLAMA3_8B = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
             "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32, "vocab_size": 128256,
             "rms_norm_eps": 1e-05, "model_type": "llama", "torch_dtype": "bfloat16", "head_dim": 128}


def tasks(text):
    """[(op, timing, {dim: value text})] of a spec written by tuning."""
    out = []
    for block in text.split("  - op: ")[1:]:
        op = block.split("\n")[0]
        timing = re.search(r"timing: (\w+)", block)
        dims = dict(re.findall(r"^      (\w+): (\{.*\})$", block, re.M))
        out.append((op, timing.group(1) if timing else None, dims))
    return out


def test_llama3_8b_spec():
    text = tuning.model_spec(LLAMA3_8B, batch=(1, 32), prompt=(128, 2048), group="off")
    assert "\narch: sm_90a\n" in text and "\nname: model-llama\n" in text
    t = tasks(text)
    gemms = {(d["n"], d["k"], d["m"], timing) for op, timing, d in t if op == "gemm_nt"}
    dec, pre = "{range: [1, 63], align: [1]}", "{range: [128, 65536], align: [1]}"
    for n, k in ((1024, 4096), (4096, 4096), (14336, 4096), (4096, 14336)):
        nv, kv = "{values: [%d], exact: true}" % n, "{values: [%d], exact: true}" % k
        assert (nv, kv, dec, "neighbour") in gemms and (nv, kv, pre, "stream") in gemms, (n, k)
    assert ("{values: [128256], exact: true}", "{values: [4096], exact: true}", "{range: [1, 32], align: [1]}",
            "neighbour") in gemms
    assert len(gemms) == 9
    norms = [(timing, d["rows"], d["cols"]) for op, timing, d in t if op == "rmsnorm"]
    assert norms == [("neighbour", dec, "{values: [4096], exact: true}"), ("stream", pre, "{values: [4096], exact: true}")]


def _size(v):
    return int(re.fullmatch(r"\{values: \[(\d+)\], exact: true\}", v).group(1))


def _weights(text):
    return {(_size(d["n"]), _size(d["k"])) for op, _, d in tasks(text) if op == "gemm_nt"}


def test_grouped_projections_in_the_spec():
    """By default the spec has q/k/v and gate/up fused as aitune.patch groups them
    (Llama-3-8B: 4096 + 2 x 1024 = 6144 and 2 x 14336 = 28672 rows of 4096), o_proj,
    down_proj and lm_head as they are; "only" has the fused ones alone. Each weight is
    tuned at its exact n and k, so 6144 and o_proj's 4096 (one log2 bucket) are both
    tuned (test_tuning_exact.py)."""
    on = tuning.model_spec(LLAMA3_8B, (1, 32), (128, 2048))
    assert _weights(on) == {(6144, 4096), (28672, 4096), (4096, 4096), (4096, 14336), (128256, 4096)}
    assert "projections grouped: on" in on and "rmsnorm" in on
    off = tuning.model_spec(LLAMA3_8B, (1, 32), (128, 2048), group="off")
    assert _weights(off) == {(4096, 4096), (1024, 4096), (14336, 4096), (4096, 14336), (128256, 4096)}
    only = tuning.model_spec(LLAMA3_8B, (1, 32), (1, 1), group="only")
    assert _weights(only) == {(6144, 4096), (28672, 4096)}
    gemms = [t for t in tasks(only) if t[0] == "gemm_nt"]
    assert "rmsnorm" not in only and len(gemms) == 2, "decode rows only, no norms, no lm_head"
    assert all(timing == "neighbour" and d["m"] == "{range: [1, 32], align: [1]}" for _, timing, d in gemms)
    assert [(op, d["m"]) for op, _, d in tasks(only) if op != "gemm_nt"] == [
        ("gemm_swiglu", "{range: [1, 32], align: [1]}")], "and the gated MLP's fused product"
    # Qwen2-7B: q/k/v 3584 + 2 x 512 = 4608 rows (o_proj's 3584 is in the bucket below), gate/up 37888.
    qwen2 = dict(LLAMA3_8B, hidden_size=3584, intermediate_size=18944, num_attention_heads=28,
                 num_key_value_heads=4, head_dim=128, model_type="qwen2")
    assert _weights(tuning.model_spec(qwen2, (1, 8), (1, 1), group="only")) == {(4608, 3584), (37888, 3584)}
    with pytest.raises(tuning.SpecError, match="group must be"):
        tuning.model_spec(LLAMA3_8B, group="yes")
    with pytest.raises(tuning.SpecError, match="leaves out gemm_nt"):
        tuning.model_spec(LLAMA3_8B, ops=["rmsnorm"], group="only")
    qwen_moe = dict(LLAMA3_8B, model_type="qwen2_moe", num_experts=60, moe_intermediate_size=1408)
    assert {(2816, 4096), (4096, 1408), (60, 4096)} <= _weights(tuning.model_spec(qwen_moe, (1, 8), (1, 1)))
    assert (1408, 4096) in _weights(tuning.model_spec(qwen_moe, (1, 8), (1, 1), group="off"))


def test_families():
    qwen3 = dict(LLAMA3_8B, model_type="qwen3", num_attention_heads=32, num_key_value_heads=8)
    norms = {(d["rows"], d["cols"]) for op, _, d in tasks(tuning.model_spec(qwen3, (1, 8), (1, 1))) if op == "rmsnorm"}
    assert ("{range: [32, 256], align: [1]}", "{values: [128], exact: true}") in norms, "q_norm: heads x rows over head_dim"
    mixtral = dict(LLAMA3_8B, model_type="mixtral", num_local_experts=8)
    gemms = {(d["n"], d["k"]) for op, _, d in tasks(tuning.model_spec(mixtral, (1, 8), (1, 1))) if op == "gemm_nt"}
    assert ("{values: [8], exact: true}", "{values: [4096], exact: true}") in gemms, "the router"
    no_hd = {k: v for k, v in LLAMA3_8B.items() if k != "head_dim"}
    assert tuning.model_spec(no_hd, (1, 8), (1, 1)) == tuning.model_spec(LLAMA3_8B, (1, 8), (1, 1))
    f16 = tuning.model_spec(LLAMA3_8B, (1, 8), (1, 1), dtype="f16", ops=["rmsnorm"])
    assert "dtypes: [f16]" in f16 and "gemm_nt" not in f16
    small = tuning.model_spec(LLAMA3_8B, (1, 4), (1, 1))
    assert "{range: [1, 4], align: [1]}" in small and "prefill" not in small, "below the cut: decode only"
    assert "m: {range: [8, 8], align: [1]}" in tuning.model_spec(LLAMA3_8B, (1, 4), (1, 2)), "prefill from the cut"


@pytest.mark.parametrize("change,words", [
    ({"hidden_size": None}, ["'hidden_size' is missing"]),
    ({"hidden_size": -1}, ["'hidden_size'", "integer"]),
    ({"hidden_size": True}, ["'hidden_size'"]),
    ({"vocab_size": "128256"}, ["'vocab_size'"]),
    ({"torch_dtype": "float32"}, ["torch_dtype", "--dtype"]),
])
def test_bad_configs(change, words):
    cfg = dict(LLAMA3_8B)
    for k, v in change.items():
        if v is None:
            del cfg[k]
        else:
            cfg[k] = v
    with pytest.raises(tuning.SpecError) as e:
        tuning.model_spec(cfg, where="config 'x.json'")
    assert all(w in str(e.value) for w in words), str(e.value)


@pytest.mark.parametrize("text", ["", "0:4", "8:4", "a:b", "1:2:3", "-1"])
def test_bad_ranges(text):
    with pytest.raises(tuning.SpecError):
        tuning.parse_range(text, "--batch")


def cli(*args, env=None):
    e = dict(os.environ, PYTHONPATH=os.path.join(fakereg.ROOT, "python"), **(env or {}))
    return subprocess.run([sys.executable, "-m", "aitune"] + list(args), capture_output=True, text=True, env=e,
                          timeout=600)


def test_cli_help_and_errors(tmp_path):
    r = cli("tune", "--help")
    assert r.returncode == 0 and "examples:" in r.stdout and "--from-misses" in r.stdout and "aitune.patch" in r.stdout
    assert cli().returncode == 2
    assert cli("tune").returncode == 2
    bad = tmp_path / "config.json"
    bad.write_text('{"hidden_size": 4096}')
    r = cli("tune", str(tmp_path), "--dry-run")
    assert r.returncode == 3 and r.stderr.count("\n") == 1 and "aitune: error: config" in r.stderr, r.stderr
    bad.write_text("{not json")
    assert cli("tune", str(bad), "--dry-run").returncode == 3
    assert cli("tune", str(tmp_path / "none.json"), "--dry-run").returncode == 3
    good = tmp_path / "llama.json"
    good.write_text(json.dumps(LLAMA3_8B))
    r = cli("tune", str(good), "--batch", "1:8", "--prompt", "16:512", "--dry-run")
    assert r.returncode == 0 and r.stdout == tuning.model_spec(LLAMA3_8B, (1, 8), (16, 512))
    r = cli("tune", str(good), "--batch", "1:8", "--prompt", "1", "--group", "only", "--dry-run")
    assert r.returncode == 0 and r.stdout == tuning.model_spec(LLAMA3_8B, (1, 8), (1, 1), group="only")
    assert cli("tune", str(good), "--group", "maybe", "--dry-run").returncode == 2
    r = cli("tune", str(good), "--batch", "x", "--dry-run")
    assert r.returncode == 3 and "--batch" in r.stderr


def test_exact_batches(tmp_path):
    """--exact-batch 1,8: each weight's decode GEMM (lm_head's too) also as a bucket of
    its own at m exactly, decode-timed, beside the ranges (which stay as they were);
    sizes outside the batch range, repeated or not numbers are refused (exit 3)."""
    base = tuning.model_spec(LLAMA3_8B, (1, 32), (128, 2048))
    text = tuning.model_spec(LLAMA3_8B, (1, 32), (128, 2048), exact_batches=(1, 8))
    assert text.startswith(base), "the ranges are those of the spec without exact batches"
    extra = tasks(text[len(base):])
    want = {(m, n, k) for m in (1, 8) for n, k in _weights(base)}
    assert {(_size(d["m"]), _size(d["n"]), _size(d["k"])) for op, _, d in extra if op == "gemm_swiglu"} == {
        (1, 14336, 4096), (8, 14336, 4096)}, "the gated MLP at each exact batch"
    extra = [t for t in extra if t[0] == "gemm_nt"]
    assert {(_size(d["m"]), _size(d["n"]), _size(d["k"])) for op, _, d in extra} == want
    assert len(extra) == len(want) == 2 * 5 and all(t == "neighbour" for _, t, _ in extra)
    assert (8, 128256, 4096) in want and (8, 6144, 4096) in want
    assert tuning.parse_batches("1, 8,32", (1, 32)) == (1, 8, 32)
    for bad, word in (("0", "outside"), ("33", "outside"), ("8,8", "twice"), ("8;16", "like 1,8,32"), ("", "like")):
        with pytest.raises(tuning.SpecError, match=word):
            tuning.parse_batches(bad, (1, 32))
    good = tmp_path / "llama.json"
    good.write_text(json.dumps(LLAMA3_8B))
    r = cli("tune", str(good), "--batch", "1:32", "--prompt", "128:2048", "--exact-batch", "1,8", "--dry-run")
    assert r.returncode == 0 and r.stdout == text
    r = cli("tune", str(good), "--batch", "1:8", "--exact-batch", "16", "--dry-run")
    assert r.returncode == 3 and r.stderr.count("\n") == 1 and "outside the batch sizes served (1..8)" in r.stderr
    assert cli("tune", "--from-misses", "--exact-batch", "8").returncode == 2
    if os.path.exists(AITUNE):
        spec = tmp_path / "s.yaml"
        spec.write_text(text)
        r = subprocess.run([AITUNE, "sweep", str(spec), "--db", str(tmp_path / "r.db"), "--quiet"],
                           env=dict(os.environ, AITUNE_WORKER="/bin/false"), capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 1 and "worker" in r.stderr, "aitune reads the spec: %s" % r.stderr


def test_exact_prompts(tmp_path):
    """--exact-prompt 2048: each weight's batch-1 prefill GEMM (not lm_head's: it takes
    the last token) and the gated MLP also as buckets of their own at m = 2048 exactly,
    prefill-timed, after the ranges and the exact batches (which stay as they were);
    lengths outside the prompt range, repeated or not numbers are refused (exit 3)."""
    base = tuning.model_spec(LLAMA3_8B, (1, 32), (128, 2048), exact_batches=(8,))
    text = tuning.model_spec(LLAMA3_8B, (1, 32), (128, 2048), exact_batches=(8,), exact_prompts=(2048, 512))
    assert text.startswith(base), "the ranges and exact batches are as without exact prompts"
    extra = tasks(text[len(base):])
    gemms = {(_size(d["m"]), _size(d["n"]), _size(d["k"])) for op, _, d in extra if op == "gemm_nt"}
    weights = _weights(base) - {(128256, 4096)}
    assert len(weights) == 4
    assert gemms == {(m, n, k) for m in (2048, 512) for n, k in weights}
    assert (2048, 128256, 4096) not in gemms, "lm_head prefills no prompt"
    assert {(_size(d["m"]), _size(d["n"])) for op, _, d in extra if op == "gemm_swiglu"} == {(2048, 14336),
                                                                                             (512, 14336)}
    assert all(t == tuning.PREFILL_TIMING for _, t, _ in extra)
    assert "gemm_swiglu" not in tuning.model_spec(LLAMA3_8B, (1, 32), (128, 2048), ops=["gemm_nt"],
                                                  exact_prompts=(2048,))
    for bad in ((64,), (4096,)):
        with pytest.raises(tuning.SpecError, match="outside the prompt lengths served"):
            tuning.model_spec(LLAMA3_8B, (1, 32), (128, 2048), exact_prompts=bad)
    good = tmp_path / "llama.json"
    good.write_text(json.dumps(LLAMA3_8B))
    r = cli("tune", str(good), "--batch", "1:32", "--prompt", "128:2048", "--exact-batch", "8", "--exact-prompt",
            "2048,512", "--dry-run")
    assert r.returncode == 0 and r.stdout == text
    for arg, word in (("4096", "outside the prompt lengths served (128..2048)"), ("512,512", "twice"),
                      ("2k", "like 1,8,32")):
        r = cli("tune", str(good), "--prompt", "128:2048", "--exact-prompt", arg, "--dry-run")
        assert r.returncode == 3 and r.stderr.count("\n") == 1 and word in r.stderr and "--exact-prompt" in r.stderr
    assert cli("tune", "--from-misses", "--exact-prompt", "2048").returncode == 2


def test_specs_parse_in_aitune(tmp_path):
    """build/aitune reads the spec (a worker that cannot start fails after the spec is
    read: exit 1; a spec it refuses would be exit 3)."""
    if not os.path.exists(AITUNE):
        pytest.skip("no %s (make)" % AITUNE)
    spec = tmp_path / "s.yaml"
    spec.write_text(tuning.model_spec(dict(LLAMA3_8B, model_type="qwen3"), (1, 32), (1, 8192)))
    env = dict(os.environ, AITUNE_WORKER="/bin/false")
    r = subprocess.run([AITUNE, "sweep", str(spec), "--db", str(tmp_path / "r.db"), "--quiet"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "worker" in r.stderr, r.stderr
    spec.write_text(spec.read_text().replace("range: [1, 63]", "range: [63, 1]"))
    r = subprocess.run([AITUNE, "sweep", str(spec), "--db", str(tmp_path / "r.db"), "--quiet"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 3, "the check above can fail"


def test_misses_spec(tmp_path, libaitune):
    path = fakereg.build(str(tmp_path / "m.db"), gemm=(), rows=(), dtypes=())
    db = sqlite3.connect(path)
    db.executemany("INSERT INTO misses (op, arch, dtype, shape, count) VALUES (?,?,?,?,?)", [
        ("gemm_nt", "sm_90", "bf16", "3,4096,4096", 5), ("gemm_nt", "sm_90", "bf16", "40,4096,4096", 1),
        ("gemm_nt", "sm_90", "bf16", "7,1024,4096", 2), ("rmsnorm", "sm_90", "bf16", "300,4096", 1),
        ("axpy", "sm_90", "f32", "100", 1), ("gemm_nt", "sm_80", "bf16", "9,64,64", 1)])
    db.commit()
    misses = tuning.read_misses(path)
    assert len(misses) == 6
    t = tasks(tuning.misses_spec(misses))
    got = {(op, timing, tuple(sorted(d.items()))) for op, timing, d in t}
    assert got == {
        ("gemm_nt", "neighbour", (("k", "{values: [4096], exact: true}"), ("m", "{range: [3, 40], align: [1]}"),
                               ("n", "{values: [4096], exact: true}"))),
        ("gemm_nt", "neighbour", (("k", "{values: [4096], exact: true}"), ("m", "{range: [7, 7], align: [1]}"),
                               ("n", "{values: [1024], exact: true}"))),
        ("rmsnorm", "stream", (("cols", "{values: [4096], exact: true}"), ("rows", "{range: [300, 300], align: [1]}")))}
    assert "\narch: sm_90a\n" in tuning.misses_spec(misses)
    assert "9, 9" in tuning.misses_spec(misses, arch="sm_80")
    db.execute("INSERT INTO misses (op, arch, dtype, shape, count) VALUES ('gemm_nt', 'sm_90', 'bf16', "
               "'1,2,3\ntasks: []', 1)")
    db.commit()
    with pytest.raises(tuning.SpecError, match="malformed"):
        tuning.read_misses(path)
    with pytest.raises(tuning.SpecError, match="nothing to tune"):
        tuning.misses_spec([("axpy", "sm_90", "f32", (100,), 1)])


TINY = {"hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4, "num_key_value_heads": 2,
        "vocab_size": 1000, "model_type": "llama", "torch_dtype": "bfloat16", "rms_norm_eps": 1e-6}


def test_tune_patch_run_and_tune_the_misses(tmp_path, fake_cuda):
    """The loop a user runs, with the fake worker as the GPU: tune a model's norms, patch
    the model, run it (every size of the ranges launches a tuned kernel; one outside
    falls back and is a miss), unpatch (the miss lands in the registry), tune
    --from-misses, and the size it missed launches too."""
    torch = pytest.importorskip("torch")
    if not (os.path.exists(AITUNE) and os.path.exists(FAKE_WORKER)):
        pytest.skip("no %s or %s (make)" % (AITUNE, FAKE_WORKER))
    import aitune
    from test_patch import LlamaRMSNorm
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(TINY))
    db = str(tmp_path / "registry.db")
    env = {"AITUNE_WORKER": FAKE_WORKER, "FAKE_MODE": "ok", "FAKE_STATE": str(tmp_path / "fake-state")}
    r = cli("tune", str(cfg), "--ops", "rmsnorm", "--batch", "1:4", "--prompt", "1:4", "--max-evals", "1",
            "--search", "random", "--db", db, "--aitune", AITUNE, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    norm = torch.nn.Sequential(LlamaRMSNorm(256)).to(torch.bfloat16)
    d = aitune.dispatch.Dispatcher(db, arch="sm_90", host_tensors=True)
    p = aitune.patch(norm, d)
    fk = fake_cuda
    with torch.no_grad():
        for rows in range(1, 17):
            n = fk.launches()
            norm(torch.randn(rows, 256, dtype=torch.bfloat16))
            assert fk.launches() == n + 1, "rows %d: %s" % (rows, p.misses())
        n = fk.launches()
        norm(torch.randn(40, 256, dtype=torch.bfloat16))
        assert fk.launches() == n
    aitune.unpatch(norm)
    d.reg.close()
    aitune.dispatch._current = None
    r = cli("tune", "--from-misses", "--db", db, "--max-evals", "1", "--search", "random", "--aitune", AITUNE,
            env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    d = aitune.dispatch.Dispatcher(db, arch="sm_90", host_tensors=True)
    aitune.patch(norm, d)
    with torch.no_grad():
        n = fk.launches()
        norm(torch.randn(40, 256, dtype=torch.bfloat16))
        assert fk.launches() == n + 1, p.misses()
    aitune.unpatch(norm)
    d.reg.close()
    aitune.dispatch._current = None
