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
