"""The ctypes layer without torch: expressions, argument checks against launch plans,
lookups, misses, errors, and bound launches through the recording libcuda."""

import os
import sqlite3
import subprocess
import sys

import pytest

import aitune
import fakereg


class Fake:
    """A __cuda_array_interface__ object at a fake address."""

    def __init__(self, shape, typestr="<f4", addr=0x10000, strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (addr, False),
                                         "strides": strides, "version": 3}


def raises(fn, *words):
    with pytest.raises(aitune.AituneError) as e:
        fn()
    msg = str(e.value)
    assert all(w in msg for w in words) and "\n" not in msg, msg
    return msg


PLAN = {"kernel": "k", "dims": ["rows", "cols"],
        "args": [{"name": "x", "role": "in", "dtype": "f32", "size": "rows * cols"},
                 {"name": "y", "role": "out", "dtype": "f32", "size": "rows * cols"},
                 {"name": "eps", "role": "scalar"},
                 {"name": "rows", "role": "dim"}, {"name": "cols", "role": "dim"}]}
X, Y = Fake((100, 300)), Fake((30000,), addr=0x20000)


def test_expressions():
    env = {"rows": 100, "cols": 300}
    assert aitune.eval_expr("cdiv(rows, 8) * 16 + max(cols, 4) - min(3, 2)", env) == 13 * 16 + 300 - 2
    raises(lambda: aitune.eval_expr("rows; import os", env), "expression")


def test_good_arguments():
    vals = aitune.check_args(PLAN, (X, Y, 1e-5), (100, 300))
    assert vals[:2] == [0x10000, 0x20000] and abs(vals[2] - 1e-5) < 1e-12 and vals[3:] == [None, None]


@pytest.mark.parametrize("args,shape,words", [
    ((X, Y), (100, 300), ["takes 3 arguments", "x, y, eps"]),
    ((X, Y, 1.0), (100,), ["2 dims", "rows, cols"]),
    ((X, Y, 1.0), (100, 0), ["cols", ">= 1"]),
    ((Fake((100, 300), "<f2"), Y, 1.0), (100, 300), ["'x'", "f16", "wants f32"]),
    ((X, Fake((299, 100)), 1.0), (100, 300), ["'y'", "29900 elements", "30000"]),
    ((Fake((100, 300), strides=(4, 400)), Y, 1.0), (100, 300), ["'x'", "contiguous"]),
    ((Fake((100, 300), addr=0x10004), Y, 1.0), (100, 300), ["'x'", "16-byte"]),
    ((X, Y, "1e-5"), (100, 300), ["'eps'", "number"]),
    (([1, 2], Y, 1.0), (100, 300), ["'x'", "CUDA tensor"]),
])
def test_bad_arguments(args, shape, words):
    raises(lambda: aitune.check_args(PLAN, args, shape), *words)


def test_missing_registry(libaitune):
    raises(lambda: aitune.Registry("/nonexistent/registry.db"), "cannot open registry", "/nonexistent")


def test_lookups_and_misses(reg_path):
    with aitune.Registry(reg_path) as reg:
        assert len(reg) == 2 * (2 + 3 * 2)
        c = reg.lookup("softmax", "sm_90", "bf16", (16, 200))
        assert c["level"] == "exact" and c["template"] == "softmax/fake" and c["bucket"] == "rows=2^4,cols=2^7"
        c = reg.lookup("softmax", "sm_90", "bf16", (64, 1 << 20))
        assert c["level"] == "nearest"
        raises(lambda: reg.lookup("softmax", "sm_90", "bf16", (64, -1)), "sizes must be >= 1")
        assert reg.miss_count() == 1
        reg.flush_misses()
        assert reg.miss_count() == 0
    db = sqlite3.connect(reg_path)
    assert db.execute("SELECT op, shape, count FROM misses").fetchall() == [("softmax", "64,1048576", 1)]


def test_what_crosses_into_c_is_checked(reg_path):
    # ctypes would wrap 2^64 + 16 to 16 and cut "softmax\0x" to "softmax".
    with aitune.Registry(reg_path) as reg:
        for shape in [(16, 2**64 + 200), (16, -2**64), (16, 200.0), (True, 200), ("16", 200)]:
            with pytest.raises(ValueError):
                reg.lookup("softmax", "sm_90", "bf16", shape)
        for op, arch, dtype in [("softmax\0x", "sm_90", "bf16"), ("softmax", "sm_90\0", "bf16"),
                                ("softmax", "sm_90", "bf16\0f32")]:
            with pytest.raises(ValueError):
                reg.lookup(op, arch, dtype, (16, 200))
        assert reg.lookup("softmax", "sm_90", "bf16", (16, 200))["level"] == "exact"
    with pytest.raises(ValueError):
        aitune.Registry(reg_path + "\0.other")


def test_closed_registry(reg_path):
    reg = aitune.Registry(reg_path)
    reg.close()
    raises(lambda: reg.lookup("softmax", "sm_90", "bf16", (16, 200)), "closed")
    reg.close()   # twice is fine


NO_DRIVER = """
import aitune
reg = aitune.Registry(%r)
for f in (lambda: reg.kernel("softmax", "bf16", (16, 200), arch="sm_90"),
          lambda: reg.kernel_in_context("softmax", "bf16", (16, 200), "sm_90")):
    try:
        f()
        print("loaded")
    except aitune.AituneError as e:
        print("error:", e)
"""


def test_no_driver_says_what_is_missing(reg_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(fakereg.ROOT, "python"))
    out = subprocess.run([sys.executable, "-c", NO_DRIVER % reg_path], capture_output=True, text=True, env=env,
                         timeout=120).stdout
    if "loaded" in out or "no current CUDA context" in out:
        pytest.skip("this machine has a driver (tests/gpu/launch.sh covers launching)")
    lines = [ln for ln in out.splitlines() if ln.startswith("error:")]
    assert len(lines) == 2 and all("libcuda" in ln for ln in lines), out


def test_bound_launch_patches_addresses(reg_path, fake_cuda):
    fk = fake_cuda
    with aitune.Registry(reg_path) as reg:
        k = reg.kernel_in_context("gemm_nt", "bf16", (1, 64, 128), "sm_90")
        assert k.level == "exact" and k.plan["kernel"] == "fake_gemm"
        W, A, D = 0x7f0000100000, 0x7f0000200000, 0x7f0000300000
        b = reg.bind(k, (1, 64, 128), known={"B": W})
        assert b.ws_bytes == 256 and b.grid == (1, 1, 1) and b.kind == 0
        enc = fk.encodes()
        n = fk.launches()
        b.launch((A, W, D, 0x7f0000400000), 0x51)
        assert fk.launches() == n + 1 and fk.kernel() == "fake_gemm" and fk.stream() == 0x51
        assert fk.param(0) == A and fk.param(1) == W and fk.param(2) == D and fk.param(3) == 1
        assert fk.encodes() - enc == 1, "only A's map is encoded again; B's was encoded at bind"
        assert fk.param(6) == 0x7f0000400000 and fk.memset_addr() == 0x7f0000400000 and fk.memset_bytes() == 16
        raises(lambda: b.launch((A + 8, W, D, 0x7f0000400000)), "'A'", "16-byte")
        raises(lambda: b.launch((A, W, 0, 0x7f0000400000)), "'D' is NULL")
        # A norm's scalar goes in as an f32.
        kn = reg.kernel_in_context("rmsnorm", "bf16", (16, 128), "sm_90")
        bn = reg.bind(kn, (16, 128))
        bn.launch((A, W, D, 0.25))
        assert fk.param(3) & 0xffffffff == 0x3e800000 and fk.param(4) == 16
    raises(lambda: b.launch((A, W, D, 0x7f0000400000)), "closed")


def test_a_swept_winner_binds_and_launches(fake_cuda):
    """A registry from `aitune sweep` on the fake worker (tests/cli/python.sh): a real
    template's launch plan and cubin, bound and launched through the recording driver."""
    path = os.environ.get("AITUNE_SWEEP_DB")
    if not path:
        pytest.skip("no swept registry (AITUNE_SWEEP_DB; tests/cli/python.sh makes one)")
    fk = fake_cuda
    with aitune.Registry(path) as reg:
        k = reg.kernel_in_context("softmax", "bf16", (64, 1000), "sm_90")
        names = [a["name"] for a in k.plan["args"]]
        assert names == ["x", "y", "rows", "cols"] and k.level == "exact"
        b = reg.bind(k, (64, 1000))
        vals = (0x7f0000100000, 0x7f0000200000) + ((0x7f0000300000,) if b.ws_bytes else ())
        n = fk.launches()
        b.launch(vals, 7)
        assert fk.launches() == n + 1 and fk.kernel() == k.plan["kernel"] and fk.stream() == 7
        assert fk.geom(1, 0) == b.block[0] and fk.geom(0, 0) == b.grid[0]


def test_pip_installed_copy_finds_the_library(tmp_path, libaitune):
    """pip install ./python (into a folder): the package loads libaitune from
    AITUNE_LIB, and without one says how to point at one."""
    import shutil
    src = tmp_path / "src"         # a copy: building writes egg-info and build/ beside the sources
    shutil.copytree(os.path.join(fakereg.ROOT, "python"), src, ignore=shutil.ignore_patterns(
        "tests", "build", "*.egg-info", "__pycache__"))
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                        "--target", str(tmp_path / "site"), str(src)],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        pytest.skip("pip cannot build the package here: %s" % r.stderr.strip()[-200:])
    code = "import aitune, aitune._lib as L\ntry:\n    L.load(); print('loaded', L.path())\n" \
           "except aitune.AituneError as e:\n    print('error:', e)\n"
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "site"))
    env.pop("AITUNE_LIB", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=str(tmp_path),
                         timeout=60).stdout
    assert out.startswith("loaded") or ("AITUNE_LIB" in out and "make install" in out), out
    env["AITUNE_LIB"] = fakereg.LIBAITUNE
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=str(tmp_path),
                         timeout=60).stdout
    assert out.strip() == "loaded " + fakereg.LIBAITUNE, out


def test_the_hot_module_is_found_where_make_puts_it(tmp_path, libaitune):
    """The package copied elsewhere (pip install) with AITUNE_LIB naming the build's
    libaitune finds _aitune_hot.abi3.so beside it; AITUNE_HOT=0, or no such file
    there, is None (the Python runners)."""
    import shutil
    from aitune import _lib
    built = os.path.join(os.path.dirname(os.path.realpath(fakereg.LIBAITUNE)), _lib.HOT_NAME)
    if not os.path.exists(built):
        pytest.skip("no %s (make)" % built)
    site = tmp_path / "site"
    shutil.copytree(os.path.join(fakereg.ROOT, "python", "aitune"), site / "aitune",
                    ignore=shutil.ignore_patterns("__pycache__"))
    code = ("import aitune._lib as l; l.load(); h = l.hot(); assert l.__file__.startswith(%r); "
            "print(h.__file__ if h else None, h.CACHED_MAXARGS if h else '')" % str(site))

    def where(lib, hot="1"):
        env = dict(os.environ, PYTHONPATH=str(site), AITUNE_LIB=lib, AITUNE_HOT=hot)
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60,
                           cwd=str(tmp_path))
        assert r.returncode == 0, r.stderr
        return r.stdout.split()
    assert where(fakereg.LIBAITUNE) == [built, "17"]
    assert where(fakereg.LIBAITUNE, hot="0") == ["None"]
    other = tmp_path / "lib"
    other.mkdir()
    shutil.copy(os.path.realpath(fakereg.LIBAITUNE), other / "libaitune.so")
    assert where(str(other / "libaitune.so")) == ["None"], "none beside that libaitune: the Python runners"
