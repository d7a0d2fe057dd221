"""bench/llama_e2e.py's --gpus: how the work is spread over processes (no torch needed)."""

import importlib.util
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = importlib.util.spec_from_file_location("llama_e2e", os.path.join(HERE, "..", "..", "bench", "llama_e2e.py"))
e2e = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(e2e)


@pytest.fixture
def reg(tmp_path):
    p = tmp_path / "r.db"
    p.write_bytes(b"")
    return str(p)


def test_units_follow_the_options(reg):
    a = e2e.parse(["--registry", reg])
    assert e2e.units(a) == ["host", "decode:1", "decode:8", "decode:32", "nograph", "prefill", "check"]
    a = e2e.parse(["--registry", reg, "--batches", "8", "--prefill", "0", "--variants", "compile,compile+patch"])
    assert e2e.units(a) == ["host", "decode:8", "check"]


@pytest.mark.parametrize("n", [1, 2, 3, 9])
def test_shares_cover_every_unit_once(reg, n):
    a = e2e.parse(["--registry", reg])
    got = e2e.shares(a, n)
    flat = [u for s in got for u in s]
    assert sorted(flat) == sorted(e2e.units(a))
    assert len(got) == min(n, len(flat))
    for s in got:        # each keeps the run's order (host first where it is)
        assert s == sorted(s, key=e2e.units(a).index)


def test_two_shares_balance_the_compiles(reg):
    a = e2e.parse(["--registry", reg])
    cost = [sum(e2e.unit_cost(a, u) for u in s) for s in e2e.shares(a, 2)]
    assert max(cost) <= 0.6 * sum(cost)
    one = e2e.shares(a, 1)[0]
    assert one == e2e.units(a)


@pytest.mark.parametrize("args, word", [(["--gpus", "0"], "--gpus"), (["--units", "host,nope"], "--units"),
                                        (["--units", ","], "--units")])
def test_bad_spread_options(reg, capsys, args, word):
    with pytest.raises(SystemExit) as e:
        e2e.parse(["--registry", reg] + args)
    assert e.value.code == 2
    assert word in capsys.readouterr().err


def test_two_processes_host_times_first(tmp_path):
    """--gpus 2 on the CPU (a tiny model, eager only): the process that times the host
    runs alone until those times are taken; the tables come out once, merged."""
    import subprocess
    import sys
    pytest.importorskip("transformers")
    import fakereg
    reg = fakereg.build(str(tmp_path / "r.db"), gemm=((1, 256, 256),), rows=(), dtypes=("bf16",))
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, ".."))
    r = subprocess.run([sys.executable, SPEC.origin, "--registry", reg, "--tiny", "--device", "cpu", "--gpus", "2",
                        "--batches", "1,2", "--variants", "eager,patch", "--steps", "1", "--prompt", "2",
                        "--prefill", "0", "--host-calls", "5", "--out", str(out)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    lines = r.stdout.splitlines()
    starts = [i for i, ln in enumerate(lines) if ln.startswith("llama_e2e: gpu ")]
    assert len(starts) == 2 and "host" in lines[starts[0]] and "host" not in lines[starts[1]]
    host = [i for i, ln in enumerate(lines) if "what=host" in ln]
    assert host and max(host) < starts[1]            # every host time before the second process starts
    assert (out / "host.done").exists()
    assert sum(1 for ln in lines if ln.startswith("| 1 |")) == 1 and any(ln.startswith("| 2 |") for ln in lines)
    assert "bars met" in r.stdout
