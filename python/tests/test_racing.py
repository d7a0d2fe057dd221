"""aitune.racing.race on the recording driver: a registry swept by the fake worker, a
"step" whose time a table gives per kernel config, and `aitune pin` doing the pins."""

import json
import sqlite3

import pytest

import fakereg

AITUNE = fakereg.AITUNE
SHAPE = (8, 256, 256)

SPEC = """name: race
arch: sm_90a
search: random
max_evals: 6
top_k: 4
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [mma]
    shapes: {m: {values: [8], exact: true}, n: {values: [256], exact: true}, k: {values: [256], exact: true}}
"""


@pytest.fixture(autouse=True)
def _close_trials():
    """Each race's trial registries closed after the test (the recording driver holds a
    bounded number of modules, and later tests load theirs)."""
    yield
    from aitune import racing
    racing.close_trials()


@pytest.fixture
def swept(tmp_path, monkeypatch, fake_cuda):
    return fakereg.fake_sweep(SPEC, tmp_path, monkeypatch, "race", ["--vendor", "off"])


def winner(db):
    con = sqlite3.connect(db)
    try:
        t, c = con.execute("SELECT template, config FROM winners WHERE op = 'gemm_nt'").fetchone()
    finally:
        con.close()
    return t, json.loads(c)


def setup_step(db, times):
    """A dispatcher over db made current, and capture(): the step "runs" the kernel the
    current dispatcher answers SHAPE with; timer(fn) is times' entry for its config (or
    1.0), so the race sees the step's time change with the kernel."""
    from aitune import dispatch
    dispatch.use(dispatch.Dispatcher(db, arch="sm_90", host_tensors=True))
    captured = []

    def capture():
        k = dispatch.current().kernel("gemm_nt", "bf16", SHAPE)
        assert k is not None and k is not dispatch.VENDOR
        key = json.dumps(k.config, sort_keys=True)
        captured.append(key)
        return lambda: key

    def timer(fn):
        return times.get(fn(), 1.0)
    return capture, timer, captured


def test_race_keeps_a_faster_finalist(swept):
    from aitune import racing
    t0, c0 = winner(swept)
    fins = racing.finalists(AITUNE, swept, "gemm_nt", "bf16", "m=8,n=256,k=256")
    assert fins[0]["winner"] and (fins[0]["template"], fins[0]["config"]) == (t0, c0)
    others = [f for f in fins[1:] if f["kernel"]]
    assert others, fins
    fast = json.dumps(others[-1]["config"], sort_keys=True)
    capture, timer, captured = setup_step(swept, {fast: 0.9})
    lines = []
    report = racing.race(capture, timer=timer, rounds=1, aitune=AITUNE, log=lines.append)
    assert [r["bucket"] for r in report] == ["m=8,n=256,k=256"]
    r = report[0]
    assert r["changed"] and r["after"]["config"] == others[-1]["config"]
    assert len(r["tried"]) == len(others)
    # The incumbent was captured once (on the scratch copy), then each finalist in turn.
    assert fast in captured and len(captured) == 1 + len(others)
    # The registry now answers with it; the pin's run says why.
    assert winner(swept) == (others[-1]["template"], others[-1]["config"])
    con = sqlite3.connect(swept)
    cmd = con.execute("SELECT r.command FROM winners w JOIN runs r ON r.id = w.run").fetchone()[0]
    con.close()
    assert "pin" in cmd and "raced in the application's step" in cmd
    assert lines[-1].startswith("race: 1 bucket raced, 1 changed")


def test_race_keeps_the_winner_when_nothing_is_faster(swept):
    from aitune import racing
    before = winner(swept)
    capture, timer, _ = setup_step(swept, {})
    report = racing.race(capture, timer=timer, rounds=1, aitune=AITUNE)
    assert not report[0]["changed"] and report[0]["after"] == report[0]["before"]
    assert winner(swept) == before


def test_race_dry_run_leaves_the_registry(swept):
    from aitune import racing
    before = winner(swept)
    fins = racing.finalists(AITUNE, swept, "gemm_nt", "bf16", "m=8,n=256,k=256")
    fast = json.dumps([f for f in fins[1:] if f["kernel"]][0]["config"], sort_keys=True)
    capture, timer, _ = setup_step(swept, {fast: 0.5})
    report = racing.race(capture, timer=timer, rounds=1, aitune=AITUNE, dry_run=True)
    assert report[0]["changed"]
    assert winner(swept) == before


def test_race_within_noise_is_no_change(swept):
    from aitune import racing
    fins = racing.finalists(AITUNE, swept, "gemm_nt", "bf16", "m=8,n=256,k=256")
    fast = json.dumps([f for f in fins[1:] if f["kernel"]][0]["config"], sort_keys=True)
    capture, timer, _ = setup_step(swept, {fast: 0.999})   # 0.1% faster: under min_gain
    report = racing.race(capture, timer=timer, rounds=1, aitune=AITUNE, min_gain=0.002)
    assert not report[0]["changed"]


def test_a_win_must_hold_when_timed_again(swept):
    """A finalist faster in one timing only (noise) is not kept: the win is timed again,
    the finalist first, and must hold; one faster in both is kept, with both timings
    in the report."""
    from aitune import racing
    fins = racing.finalists(AITUNE, swept, "gemm_nt", "bf16", "m=8,n=256,k=256")
    fast = json.dumps([f for f in fins[1:] if f["kernel"]][0]["config"], sort_keys=True)
    calls = []

    def lucky(times):
        def timer(fn):
            key = fn()
            calls.append(key)
            return times.get(key, 1.0) if calls.count(key) == 1 or key != fast else 1.0
        return timer
    capture, _, _ = setup_step(swept, {})
    lines = []
    report = racing.race(capture, timer=lucky({fast: 0.9}), rounds=1, aitune=AITUNE, log=lines.append)
    tried = [t for t in report[0]["tried"] if json.dumps(t["config"], sort_keys=True) == fast][0]
    assert not report[0]["changed"] and tried["step_s"] == 0.9 and tried["confirm_s"] == 1.0
    assert any("not kept" in line for line in lines)
    capture, timer, _ = setup_step(swept, {fast: 0.9})
    report = racing.race(capture, timer=timer, rounds=1, aitune=AITUNE)
    assert report[0]["changed"] and report[0]["won"]["confirm_s"] == 0.9
    assert report[0]["won"]["confirm_incumbent_s"] == 1.0


def test_race_without_a_tuned_kernel_in_the_step_says_so(swept):
    from aitune import AituneError, dispatch, racing
    dispatch.use(dispatch.Dispatcher(swept, arch="sm_90", host_tensors=True))
    with pytest.raises(AituneError, match="the step used no tuned kernel"):
        racing.race(lambda: (lambda: None), timer=lambda fn: 1.0, aitune=AITUNE)


def test_handles_stay_readable_while_another_process_pins(swept, fake_cuda):
    """An application's registry handles stay right while `aitune pin` (or a sweep)
    writes the file: aitune_open once opened and closed the file to check it was
    readable, which dropped this process's SQLite locks on it, so the writer's
    checkpoint reset the WAL the open handles read ("database disk image is
    malformed" at the next open, after a few pins)."""
    import aitune
    from aitune import racing
    fins = [f for f in racing.finalists(AITUNE, swept, "gemm_nt", "bf16", "m=8,n=256,k=256") if f["kernel"]]
    assert len(fins) >= 2
    regs = [aitune.Registry(swept)]
    try:
        for i in range(12):
            f = fins[(i + 1) % len(fins)]
            racing._pin(AITUNE, swept, "gemm_nt", "bf16", "m=8,n=256,k=256",
                        ["--template", f["template"], "--config", json.dumps(f["config"], sort_keys=True)])
            regs.append(aitune.Registry(swept))
            c = regs[-1].lookup("gemm_nt", "sm_90", "bf16", SHAPE)
            assert (c["template"], c["config"]) == (f["template"], f["config"]), i
    finally:
        for r in regs:
            r.close()


class _Layer:
    def __init__(self, n):
        self.cumulative_length = n


def test_cache_counters_are_the_layers_device_counts():
    """transformers 5's static cache layers keep their own counts: those tensors, by
    identity (replayable sets them back in place); an int count or none is not one."""
    import torch
    from aitune import decoding
    a, b = torch.zeros(1, dtype=torch.long), torch.ones(1, dtype=torch.long)
    cache = type("Cache", (), {})()
    cache.layers = [_Layer(a), _Layer(3), object(), _Layer(b)]
    got = decoding.cache_counters(cache)
    assert len(got) == 2 and got[0] is a and got[1] is b
    assert decoding.cache_counters(object()) == []


def test_replayable_replays_the_same_step():
    """Each replay of a replayable step starts from the state at replayable(): a step
    that advances its position runs at the same position every time."""
    import torch
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from aitune import racing
    pos = torch.zeros(1, dtype=torch.long, device="cuda")
    hits = torch.zeros(4, device="cuda")

    def step():
        hits.index_add_(0, pos, torch.ones(1, device="cuda"))
        pos.add_(1)
    capture = racing.replayable(step, [pos], warmup=2)
    replay = capture()
    hits.zero_()
    for _ in range(3):
        replay()
    torch.cuda.synchronize()
    assert pos.item() == 1
    assert hits.tolist() == [3.0, 0.0, 0.0, 0.0]
    capture.rewind()
    assert pos.item() == 0


def test_race_takes_the_gated_mlps_product_too(tmp_path, monkeypatch, fake_cuda):
    """By default the race takes gemm_swiglu's buckets beside gemm_nt's (a patched gated
    MLP's one kernel): a faster gemm_swiglu finalist in the step is pinned."""
    from aitune import dispatch, racing
    db = fakereg.fake_sweep(SPEC.replace("max_evals: 6", "max_evals: 4") + """  - op: gemm_swiglu
    dtypes: [bf16]
    templates: [swapab]
    shapes: {m: {values: [8], exact: true}, n: {values: [256], exact: true}, k: {values: [256], exact: true}}
""", tmp_path, monkeypatch, "race", ["--vendor", "off"])
    fins = [f for f in racing.finalists(AITUNE, db, "gemm_swiglu", "bf16", "m=8,n=256,k=256")[1:] if f["kernel"]]
    assert fins, "the gated product's bucket has finalists besides its winner"
    fast = json.dumps(fins[0]["config"], sort_keys=True)
    dispatch.use(dispatch.Dispatcher(db, arch="sm_90", host_tensors=True))

    def capture():
        d = dispatch.current()
        key = tuple(json.dumps(d.kernel(op, "bf16", SHAPE).config, sort_keys=True) for op in ("gemm_nt", "gemm_swiglu"))
        return lambda: key

    report = racing.race(capture, timer=lambda fn: 0.9 if fn()[1] == fast else 1.0, rounds=1, aitune=AITUNE,
                         log=lambda line: None)
    assert sorted((r["op"], r["changed"]) for r in report) == [("gemm_nt", False), ("gemm_swiglu", True)], report
    con = sqlite3.connect(db)
    got = con.execute("SELECT config FROM winners WHERE op = 'gemm_swiglu'").fetchone()[0]
    con.close()
    assert json.loads(got) == fins[0]["config"]
