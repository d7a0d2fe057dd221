"""`python -m aitune tune` writes a model's weight dims at their exact sizes (docs/SPEC.md
"Exact sizes"): every GEMM's n and k and every norm's width `{values: [N], exact: true}`,
the token rows m a range. Sibling projections fused by aitune.patch then get buckets of
their own even where their n shares a power of two with another weight's, and a sweep of
the written spec (build/aitune on the fake worker) leaves a winner per weight that
libaitune answers each weight's shape from."""

import re
import sqlite3

import pytest

import fakereg
from aitune import tuning

LLAMA3_8B = {"hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
             "vocab_size": 128256, "model_type": "llama", "torch_dtype": "bfloat16", "head_dim": 128}
# q/k/v fused: (4 + 2 x 2) x 64 = 512 rows; lm_head 1000 rows: both of n's bucket [512, 1024) and class 8.
TINY = {"hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4, "num_key_value_heads": 2,
        "vocab_size": 1000, "model_type": "llama", "torch_dtype": "bfloat16"}
DIM = re.compile(r"^      (\w+): (\{.*\})$", re.M)


def _tasks(text):
    return [(b.split("\n")[0], dict(DIM.findall(b))) for b in text.split("  - op: ")[1:]]


def test_weight_dims_are_exact_rows_are_ranges():
    text = tuning.model_spec(LLAMA3_8B, (1, 32), (128, 2048))
    exact = re.compile(r"\{values: \[\d+\], exact: true\}")
    rng = re.compile(r"\{range: \[\d+, \d+\], align: \[1\]\}")
    t = _tasks(text)
    assert {op for op, _ in t} == {"gemm_nt", "rmsnorm", "gemm_swiglu", "attn_decode"}
    for op, d in t:
        fixed, rows = {"attn_decode": (("h", "g", "d"), ("b", "n"))}.get(
            op, (("n", "k"), ("m",)) if op.startswith("gemm") else (("cols",), ("rows",)))
        assert all(exact.fullmatch(d[f]) for f in fixed), (op, d)
        assert all(rng.fullmatch(d[r]) for r in rows), (op, d)
    # Llama-3-8B's fused q/k/v and o_proj, one log2 bucket of n: both tuned, each exactly.
    gemms = {(d["n"], d["k"]) for op, d in t if op == "gemm_nt"}
    assert ("{values: [6144], exact: true}", "{values: [4096], exact: true}") in gemms
    assert ("{values: [4096], exact: true}", "{values: [4096], exact: true}") in gemms
    assert "answered by" not in text


def test_misses_spec_is_exact_too():
    text = tuning.misses_spec([("gemm_nt", "sm_90", "bf16", (3, 6144, 4096), 2),
                               ("gemm_nt", "sm_90", "bf16", (9, 6144, 4096), 1)])
    (op, d), = _tasks(text)
    assert d == {"m": "{range: [3, 9], align: [1]}", "n": "{values: [6144], exact: true}",
                 "k": "{values: [4096], exact: true}"}


def test_tuned_spec_answers_each_weight_from_its_own_bucket(tmp_path, monkeypatch, libaitune):
    """The spec written for TINY's GEMMs (decode rows 1, the mma template only, one
    candidate: the fake worker's times are made up), swept: a winner per weight, keyed
    by its n and k, the fused q/k/v's (512) and lm_head's (1000) apart; lookup answers
    each weight's shape from its own bucket, exactly, and a size between them from none."""
    import aitune
    text = tuning.model_spec(TINY, (1, 1), (1, 1), ops=["gemm_nt"], search="random", max_evals=1)
    db = fakereg.fake_sweep(text.replace("    shapes:\n", "    templates: [mma]\n    shapes:\n"), tmp_path,
                            monkeypatch, "tiny")
    con = sqlite3.connect(db)
    keys = sorted(r[0] for r in con.execute("SELECT bucket FROM winners"))
    con.close()
    weights = [(256, 256), (256, 512), (512, 256), (1024, 256), (1000, 256)]
    assert keys == sorted("m=2^0,n=%d,k=%d" % w for w in weights)
    reg = aitune.Registry(db)
    try:
        for n, k in weights:
            c = reg.lookup("gemm_nt", "sm_90", "bf16", (1, n, k))
            assert (c["level"], c["bucket"]) == ("exact", "m=2^0,n=%d,k=%d" % (n, k)), (n, k, c)
        c = reg.lookup("gemm_nt", "sm_90", "bf16", (1, 768, 256))
        assert c["level"] == "nearest", c
    finally:
        reg.close()
