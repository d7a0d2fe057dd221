"""Registries for the tests, written with sqlite3 from db/schema.sql: winners of
gemm_nt, gemm_swiglu, rmsnorm, layernorm and softmax with launch plans in the ops' argument
order and a "cubin" the recording libcuda (tests/unit/fake_cuda.c) accepts."""

import json
import os
import sqlite3

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCHEMA = os.path.join(ROOT, "db", "schema.sql")
FAKE_CUDA = os.path.join(ROOT, os.environ.get("BUILD", "build"), "tests", "fakecuda", "libcuda.so.1")
LIBAITUNE = os.path.join(ROOT, os.environ.get("BUILD", "build"), "libaitune.so")
AITUNE = os.path.join(ROOT, os.environ.get("BUILD", "build"), "aitune")
FAKE_WORKER = os.path.join(ROOT, os.environ.get("BUILD", "build"), "tests", "fake_worker")


def fake_sweep(spec_text, tmp_path, monkeypatch, name, extra=()):
    """spec_text swept by build/aitune on the fake worker (which plays the GPU: every
    candidate verifies, its time made up) into a new registry tmp_path/NAME.db: its
    path. Skips the test where either is not built."""
    import pytest
    from aitune import tuning
    if not (os.path.exists(AITUNE) and os.path.exists(FAKE_WORKER)):
        pytest.skip("no %s or %s (make)" % (AITUNE, FAKE_WORKER))
    spec = tmp_path / (name + ".yaml")
    spec.write_text(spec_text)
    db = str(tmp_path / (name + ".db"))
    monkeypatch.setenv("AITUNE_WORKER", FAKE_WORKER)
    monkeypatch.setenv("FAKE_MODE", "ok")
    monkeypatch.setenv("FAKE_STATE", str(tmp_path / "fake-state"))
    assert tuning.run_sweep(str(spec), db, AITUNE, ["--quiet"] + list(extra)) == 0
    return db


def _buf(name, role, dtype, size):
    return {"name": name, "role": role, "dtype": dtype, "size": size}


def gemm_plan(dtype):
    """gemm_nt: A m x k and B n x k through tensor maps, D by pointer, a workspace."""
    return {"v": 2, "kernel": "fake_gemm", "dims": ["m", "n", "k"],
            "args": [_buf("A", "in", dtype, "m * k"), _buf("B", "in", dtype, "n * k"),
                     _buf("D", "out", dtype, "m * n"), {"name": "m", "role": "dim"},
                     {"name": "n", "role": "dim"}, {"name": "k", "role": "dim"}],
            "grid": ["cdiv(n, 64)", "cdiv(m, 16)", "1"], "block": ["128", "1", "1"], "smem": "0",
            "params": [{"kind": "tmap", "arg": "A", "dims": ["k", "m"], "strides": ["k*2"], "box": [64, 16],
                        "swizzle": 128, "oob": "zero", "l2": 256},
                       {"kind": "tmap", "arg": "B", "dims": ["k", "n"], "strides": ["k*2"], "box": [64, 64],
                        "swizzle": 128, "oob": "zero", "l2": 256},
                       {"kind": "ptr", "arg": "D"}, {"kind": "dim", "expr": "m"}, {"kind": "dim", "expr": "n"},
                       {"kind": "dim", "expr": "k"}, {"kind": "workspace", "size": "256", "zero": "16"}]}


def swiglu_plan(dtype):
    """gemm_swiglu (templates/gemm_swiglu/op.lua): gemm_nt's arguments, B being the
    [gate; up] rows, 2n x k; D m x n."""
    plan = gemm_plan(dtype)
    plan["kernel"] = "fake_swiglu"
    plan["args"][1]["size"] = "2 * n * k"
    plan["params"][1]["dims"] = ["k", "2 * n"]
    return plan


def rows_plan(op, dtype):
    """rmsnorm (x, w, y, eps), layernorm (x, w, b, y, eps), softmax (x, y), all by pointer."""
    n = "rows * cols"
    args = {"rmsnorm": [_buf("x", "in", dtype, n), _buf("w", "in", dtype, "cols"), _buf("y", "out", dtype, n),
                        {"name": "eps", "role": "scalar"}],
            "layernorm": [_buf("x", "in", dtype, n), _buf("w", "in", dtype, "cols"), _buf("b", "in", dtype, "cols"),
                          _buf("y", "out", dtype, n), {"name": "eps", "role": "scalar"}],
            "softmax": [_buf("x", "in", dtype, n), _buf("y", "out", dtype, n)]}[op]
    args += [{"name": "rows", "role": "dim"}, {"name": "cols", "role": "dim"}]
    params = [{"kind": "f32" if a["role"] == "scalar" else "ptr", "arg": a["name"]}
              for a in args if a["role"] != "dim"]
    params += [{"kind": "dim", "expr": "rows"}, {"kind": "i32", "expr": "cols"}]
    return {"v": 2, "kernel": "fake_" + op, "dims": ["rows", "cols"], "args": args,
            "grid": ["rows", "1", "1"], "block": ["256", "1", "1"], "smem": "0", "params": params}


def _log2(v):
    return v.bit_length() - 1


def winner(db, op, dtype, dims, lo, plan, arch="sm_90"):
    """A winner of op at the log2 bucket of each size in lo."""
    hi = [1 << (_log2(v) + 1) for v in lo]
    lo = [1 << _log2(v) for v in lo]
    bucket = ",".join("%s=2^%d" % (d, _log2(v)) for d, v in zip(dims, lo))
    nparams = len(plan["params"])
    h = "h_%s_%s_%s" % (op, dtype, bucket)
    db.execute("INSERT OR IGNORE INTO cubins (hash, source, options, kernel, cubin) VALUES (?,?,?,?,?)",
               (h, "", "", plan["kernel"], ("FAKECUBIN %d %s" % (nparams, op)).encode()))
    db.execute("INSERT INTO winners (op, arch, dtype, bucket, dims, lo, hi, shape, template, config, median_us, "
               "cubin, launch) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
               (op, arch, dtype, bucket, ",".join(dims), ",".join(map(str, lo)), ",".join(map(str, hi)),
                json.dumps(dict(zip(dims, lo))), op + "/fake", "{}", 1.0, h, json.dumps(plan)))


def vendor(path, bucket_like):
    """Make the gemm_nt winners of buckets LIKE bucket_like the vendor's (template
    vendor/cublaslt, no cubin), as a sweep writes a bucket no template beat cuBLASLt at."""
    db = sqlite3.connect(path)
    db.execute("UPDATE winners SET template = 'vendor/cublaslt', config = '{}', cubin = NULL "
               "WHERE op = 'gemm_nt' AND bucket LIKE ?", (bucket_like,))
    db.commit()
    db.close()
    return path


def build(path, gemm=((1, 64, 128), (16, 64, 128)), rows=((1, 128), (16, 128)), dtypes=("bf16", "f16"), swiglu=()):
    """A registry at path: gemm_nt winners at each (m, n, k) of gemm, gemm_swiglu
    winners at each (m, n, k) of swiglu (n: the output's width), rmsnorm, layernorm
    and softmax winners at each (rows, cols) of rows, in each dtype."""
    with open(SCHEMA) as f:
        schema = f.read()
    db = sqlite3.connect(path)
    db.executescript(schema)
    for dt in dtypes:
        for shape in gemm:
            winner(db, "gemm_nt", dt, ("m", "n", "k"), shape, gemm_plan(dt))
        for shape in swiglu:
            winner(db, "gemm_swiglu", dt, ("m", "n", "k"), shape, swiglu_plan(dt))
        for op in ("rmsnorm", "layernorm", "softmax"):
            for shape in rows:
                winner(db, op, dt, ("rows", "cols"), shape, rows_plan(op, dt))
    db.commit()
    db.close()
    return path
