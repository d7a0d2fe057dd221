"""A model's decode step from its config (aitune.decoding) and `python -m aitune race`:
the command line and its errors without a GPU, the configs it refuses, and the step's
state (what a replay must set back) on a tiny Llama on the CPU."""

import json
import os
import subprocess
import sys

import pytest

import fakereg
from aitune import AituneError, decoding, tuning

TINY = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64, "intermediate_size": 128,
        "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 100,
        "head_dim": 16, "rms_norm_eps": 1e-5, "max_position_embeddings": 256, "torch_dtype": "bfloat16"}


def cli(*args, **env):
    return subprocess.run([sys.executable, "-m", "aitune"] + list(args), capture_output=True, text=True,
                          cwd=os.path.join(fakereg.ROOT, "python"), env=dict(os.environ, **env), timeout=120)


def _config(tmp_path, d=TINY, name="config.json"):
    f = tmp_path / name
    f.write_text(json.dumps(d) if isinstance(d, dict) else d)
    return f


def test_race_command_line_errors(tmp_path):
    """Usage errors exit 2, a bad config 3, a missing registry 1; each says what is wrong."""
    r = cli("race", "--help")
    assert r.returncode == 0 and "examples:" in r.stdout and "--mode" in r.stdout and "aitune pin" in r.stdout
    cfg = _config(tmp_path)
    db = tmp_path / "r.db"
    db.write_bytes(b"")
    assert cli("race", str(cfg)).returncode == 2                       # no --batch
    for bad, word in (("0", "at least 1"), ("8,8", "twice"), ("8;1", "like 1,8,32")):
        r = cli("race", str(cfg), "--batch", bad, "--db", str(db))
        assert r.returncode == 2 and word in r.stderr and "--batch" in r.stderr, r.stderr
    r = cli("race", str(cfg), "--batch", "8", "--rounds", "0", "--db", str(db))
    assert r.returncode == 2 and "--rounds" in r.stderr
    r = cli("race", str(cfg), "--batch", "8", "--mode", "fast", "--db", str(db))
    assert r.returncode == 2
    r = cli("race", str(cfg), "--batch", "8", "--db", str(tmp_path / "none.db"))
    assert r.returncode == 1 and "no registry" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    r = cli("tune", str(cfg), "--race")
    assert r.returncode == 2 and "--race needs --exact-batch" in r.stderr
    r = cli("tune", str(cfg), "--exact-batch", "8", "--race", "--dry-run")
    assert r.returncode == 2 and "--race" in r.stderr


def test_race_refuses_bad_configs(tmp_path):
    """A config that is missing, not JSON, too large or not a model's: exit 3, one line
    naming the file (with transformers installed; without it: exit 1 saying so)."""
    db = tmp_path / "r.db"
    db.write_bytes(b"")
    try:
        import transformers  # noqa: F401
    except ImportError:
        r = cli("race", str(_config(tmp_path)), "--batch", "8", "--db", str(db))
        assert r.returncode == 1 and "pip install transformers" in r.stderr
        pytest.skip("no transformers: the configs' checks need it")
    no_type = dict(TINY)
    del no_type["model_type"]
    cases = [(tmp_path / "none.json", "No such file"),
             (_config(tmp_path, "{not json", "a.json"), "not JSON"),
             (_config(tmp_path, no_type, "b.json"), "no model_type"),
             (_config(tmp_path, dict(TINY, model_type="no-such-model"), "c.json"), "c.json"),
             (_config(tmp_path, " " * (tuning.CONFIG_MAX_BYTES + 1), "d.json"), "larger than 1 MiB")]
    for path, word in cases:
        r = cli("race", str(path), "--batch", "8", "--db", str(db))
        assert r.returncode == 3 and word in r.stderr and r.stderr.count("\n") == 1, (path, r.stderr)
        with pytest.raises(AituneError, match=word):
            decoding.load_config(str(path))


def test_race_without_a_gpu_says_so(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    db = tmp_path / "r.db"
    db.write_bytes(b"")
    r = cli("race", str(_config(tmp_path)), "--batch", "8", "--db", str(db))
    assert r.returncode == 1 and "needs a CUDA device" in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_parse_batches_without_a_range():
    assert tuning.parse_batches("1, 8", None, "--batch") == (1, 8)
    with pytest.raises(tuning.SpecError, match="--batch: a batch size is at least 1"):
        tuning.parse_batches("0", None, "--batch")


def test_a_decode_step_and_the_state_a_replay_sets_back():
    """The step advances ids, the position and the cache's own counters; set back to
    their values before a step, the same step runs again: the same logits, the same
    position after it. A state list that missed one (transformers 5's per-layer counts)
    would decode one position further the second time."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    cfg = decoding.load_config_dict(dict(TINY))
    model = decoding.random_model(cfg, device="cpu", dtype=torch.float32)
    step = decoding.DecodeStep(model, cfg, batch=2, prompt=5, steps=4)
    assert step.pos.tolist() == [5] and step.ids.shape == (2, 1)
    state = step.state()
    assert state[0] is step.ids and state[1] is step.pos
    starts = [t.clone() for t in state]
    a = step().clone()
    assert step.pos.tolist() == [6]
    moved = [i for i, (t, s) in enumerate(zip(state, starts)) if not torch.equal(t, s)]
    assert 1 in moved
    for t, s in zip(state, starts):
        t.copy_(s)
    b = step().clone()
    assert torch.equal(a, b) and step.pos.tolist() == [6]
    c = step()                                   # not set back: the next position
    assert step.pos.tolist() == [7] and not torch.equal(c, b)
    with pytest.raises(AituneError, match="must be >= 1"):
        decoding.DecodeStep(model, cfg, batch=0)


def test_tune_race_races_after_the_sweep(tmp_path):
    """tune --race sweeps first (the fake worker as the GPU), then races: without a CUDA
    device in this process the race fails (exit 1, saying so) and the sweep's winners
    stay in the registry."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    aitune_bin = os.path.join(fakereg.ROOT, os.environ.get("BUILD", "build"), "aitune")
    worker = os.path.join(fakereg.ROOT, os.environ.get("BUILD", "build"), "tests", "fake_worker")
    if not (os.path.exists(aitune_bin) and os.path.exists(worker)):
        pytest.skip("no %s or %s (make)" % (aitune_bin, worker))
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present: the race would run")
    db = tmp_path / "r.db"
    r = cli("tune", str(_config(tmp_path)), "--ops", "rmsnorm", "--batch", "1:4", "--prompt", "1:4",
            "--exact-batch", "2", "--race", "--max-evals", "1", "--search", "random", "--db", str(db),
            "--aitune", aitune_bin, AITUNE_WORKER=worker, FAKE_MODE="ok", FAKE_STATE=str(tmp_path / "fake-state"))
    assert r.returncode == 1 and "needs a CUDA device" in r.stderr, r.stderr[-2000:]
    assert "tuned." not in r.stderr
    import sqlite3
    con = sqlite3.connect(str(db))
    try:
        assert con.execute("SELECT count(*) FROM winners WHERE op = 'rmsnorm'").fetchone()[0] > 0
    finally:
        con.close()
