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


def test_timed_rounds_interleave(monkeypatch):
    """The prefill's variants are timed round-robin, the order reversed every other
    round, the warm-up calls left out of the medians."""
    calls, clock = [], [0.0]
    cost = {"a": 2.0, "b": 3.0}

    def fn(name):
        def run():
            calls.append(name)
            clock[0] += cost[name] + (10.0 if len(calls) <= 4 else 0.0)   # the warm-up rounds are slow
        return run
    monkeypatch.setattr(e2e.time, "perf_counter", lambda: clock[0])
    got = e2e.timed_rounds(None, {"a": fn("a"), "b": fn("b")}, cuda=False, rounds=4, warm=2)
    assert calls == ["a", "b", "b", "a"] * 3
    assert got == {"a": 2.0, "b": 3.0}


def test_sigterm_stops_the_processes(tmp_path):
    """--gpus 2 stopped by SIGTERM (as `timeout` stops it) stops the processes it
    started: none is left running after it has exited."""
    import re
    import signal
    import subprocess
    import sys
    import time
    pytest.importorskip("transformers")
    import fakereg
    reg = fakereg.build(str(tmp_path / "r.db"), gemm=((1, 256, 256),), rows=(), dtypes=("bf16",))
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, ".."), PYTHONUNBUFFERED="1")
    pr = subprocess.Popen([sys.executable, SPEC.origin, "--registry", reg, "--tiny", "--device", "cpu", "--gpus", "2",
                           "--batches", "1", "--variants", "eager,patch", "--steps", "50", "--prompt", "2",
                           "--prefill", "0", "--host-calls", "200000", "--out", str(tmp_path / "out")],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        line = pr.stdout.readline()
        m = re.match(r"llama_e2e: gpu \d runs host.* \(pid (\d+)\)$", line.strip())
        assert m, line
        child = int(m.group(1))
        while "what=build" not in line:      # the process has built the model: the host times next,
            line = pr.stdout.readline()       # silent for a long while (it would outlive its parent)
            assert line, "the first process ended early"
        time.sleep(0.5)
        pr.send_signal(signal.SIGTERM)
        rest = pr.communicate(timeout=60)[0]
    finally:
        if pr.poll() is None:
            pr.kill()
    assert pr.returncode == 128 + signal.SIGTERM, rest[-2000:]

    def running(pid):
        try:
            with open("/proc/%d/stat" % pid) as f:
                return f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False
    assert not running(child), "the process it started was left running"
