"""Fixtures of the Python layer's tests (no GPU): libaitune from the build tree, the
recording libcuda (tests/unit/fake_cuda.c) in place of the driver, registries
written by fakereg.py. A missing piece skips the tests that need it, saying which
make target builds it."""

import ctypes
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import fakereg  # noqa: E402

os.environ.setdefault("AITUNE_LIB", fakereg.LIBAITUNE)


@pytest.fixture(scope="session")
def libaitune():
    if not os.path.exists(os.environ["AITUNE_LIB"]):
        pytest.skip("no libaitune at %s (make)" % os.environ["AITUNE_LIB"])
    import aitune._lib
    return aitune._lib.load()


class FakeCuda:
    """The recording driver's controls (fake_cuda.c)."""

    def __init__(self, lib):
        self.lib = lib
        lib.fakecu_param.restype = ctypes.c_ulonglong
        lib.fakecu_param.argtypes = [ctypes.c_int, ctypes.c_int]
        lib.fakecu_stream.restype = ctypes.c_ulonglong
        lib.fakecu_memset_addr.restype = ctypes.c_ulonglong
        lib.fakecu_memset_bytes.restype = ctypes.c_ulonglong
        lib.fakecu_kernel.restype = ctypes.c_char_p
        lib.fakecu_geom.restype = ctypes.c_uint
        lib.fakecu_fail.argtypes = [ctypes.c_char_p]

    def __getattr__(self, name):
        f = getattr(self.lib, "fakecu_" + name)
        return f

    def param(self, i, w=0):
        return self.lib.fakecu_param(i, w)

    def kernel(self):
        return self.lib.fakecu_kernel().decode()


@pytest.fixture(scope="session")
def fake_cuda(libaitune):
    """The recording libcuda, loaded before libaitune opens "libcuda.so.1" (so it gets
    this one). Skips where it is not built, or where the process already has a driver."""
    if not os.path.exists(fakereg.FAKE_CUDA):
        pytest.skip("no recording libcuda at %s (make %s)" % (fakereg.FAKE_CUDA, fakereg.FAKE_CUDA))
    lib = ctypes.CDLL(fakereg.FAKE_CUDA, mode=ctypes.RTLD_GLOBAL)
    fk = FakeCuda(lib)
    # Prove libaitune gets it: a kernel load through it is counted.
    import aitune
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "aitune-fakecuda-probe-%d.db" % os.getpid())
    if os.path.exists(path):
        os.remove(path)
    fakereg.build(path, gemm=(), rows=((16, 128),), dtypes=("bf16",))
    before = lib.fakecu_loads()
    try:
        with aitune.Registry(path) as reg:
            reg.kernel_in_context("softmax", "bf16", (16, 128), "sm_90")
    except aitune.AituneError as e:
        pytest.skip("libaitune does not use the recording libcuda here: %s" % e)
    finally:
        os.remove(path)
    if lib.fakecu_loads() != before + 1:
        pytest.skip("libaitune opened another libcuda than the recording one")
    return fk


@pytest.fixture
def reg_path(tmp_path, libaitune):
    return fakereg.build(str(tmp_path / "reg.db"))


@pytest.fixture
def torch_mod():
    return pytest.importorskip("torch")


@pytest.fixture
def disp(reg_path, fake_cuda, torch_mod):
    """A Dispatcher over a fake registry, the one the ops use, for one test."""
    from aitune import dispatch
    d = dispatch.use(dispatch.Dispatcher(reg_path, arch="sm_90", host_tensors=True))
    yield d
    dispatch._current = None
    d.reg.close()
