"""Loading libaitune.so and declaring its C functions (src/aitune.h is the manual).

The library is found, in order, at:
  1. $AITUNE_LIB (a path to libaitune.so);
  2. libaitune.so beside this package (a wheel that ships it);
  3. build/libaitune.so of the source tree this package sits in (``pip install -e python``
     or PYTHONPATH=python in a checkout);
  4. what the system's loader finds (``make install`` then ``ldconfig``), and
     libaitune.so.0 under /usr/local/lib and /usr/lib.
Nothing is compiled; a missing library is an AituneError that names what was tried.

hot() loads the hot path's C module (_aitune_hot.abi3.so, src/pyhot.c: the modules'
warm calls without the interpreter around the launch) from beside this package, the
source tree's build/, or beside the loaded libaitune (AITUNE_LIB=.../build/libaitune.so
with the package pip-installed) or in aitune/ there (`make install`); None
where it is absent or AITUNE_HOT=0, and the package then runs the same path in Python.
"""

import ctypes
import ctypes.util
import importlib.machinery
import importlib.util
import os

OK, ERROR, NOTFOUND, CANTOPEN, CORRUPT, MISUSE, NOMEM = range(7)
LEVELS = {0: "exact", 1: "nearest", 2: "default"}
BOUND_KERNEL = 0
# The template of a winner that is the vendor library (aitune.h: "The vendor as a
# winner"): a bucket where no template beat cuBLASLt.
VENDOR_TEMPLATE = "vendor/cublaslt"


class AituneError(RuntimeError):
    """A failed aitune call or a bad argument; str() is one line."""

    def __init__(self, msg, status=ERROR):
        super().__init__(msg)
        self.status = status


class Arg(ctypes.Union):
    _fields_ = [("ptr", ctypes.c_ulonglong), ("f32", ctypes.c_float), ("i64", ctypes.c_longlong)]


class Choice(ctypes.Structure):
    _fields_ = [("level", ctypes.c_int), ("template_name", ctypes.c_char_p), ("config", ctypes.c_char_p),
                ("bucket", ctypes.c_char_p), ("median_us", ctypes.c_double), ("distance", ctypes.c_double)]


class KernelInfo(ctypes.Structure):
    _fields_ = [("level", ctypes.c_int), ("template_name", ctypes.c_char_p), ("config", ctypes.c_char_p),
                ("bucket", ctypes.c_char_p), ("plan", ctypes.c_char_p), ("ndims", ctypes.c_int),
                ("nargs", ctypes.c_int)]


class BoundInfo(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("kernel", ctypes.c_void_p), ("nargs", ctypes.c_int),
                ("ws_bytes", ctypes.c_ulonglong), ("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("cluster", ctypes.c_uint * 3), ("smem", ctypes.c_uint), ("ntmaps", ctypes.c_int)]


_lib = None
_path = None


def candidates():
    """The paths tried, in order (None entries skipped)."""
    here = os.path.dirname(os.path.abspath(__file__))
    out = [os.environ.get("AITUNE_LIB") or None, os.path.join(here, "libaitune.so"),
           os.path.normpath(os.path.join(here, "..", "..", "build", "libaitune.so")),
           ctypes.util.find_library("aitune")]
    out += ["/usr/local/lib/libaitune.so.0", "/usr/lib/libaitune.so.0"]
    return [c for c in out if c]


def load():
    """The loaded library (once per process)."""
    global _lib, _path
    if _lib is not None:
        return _lib
    errors = []
    env = os.environ.get("AITUNE_LIB")
    for c in candidates():
        if os.sep in c and not os.path.exists(c):
            if c == env:
                errors.append("AITUNE_LIB=%s does not exist" % c)
            continue
        try:
            lib = ctypes.CDLL(c)
            _path = c
            break
        except OSError as e:
            errors.append(str(e))
    else:
        raise AituneError("cannot load libaitune.so (%s): build it with `make` in the aitune tree, install it "
                          "with `make install`, or set AITUNE_LIB=/path/to/libaitune.so"
                          % ("; ".join(errors) or "not found"), CANTOPEN)
    P, I, LL = ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_longlong)
    S = ctypes.c_char_p
    sig = {
        "aitune_open": (I, [S, ctypes.POINTER(P)]),
        "aitune_close": (I, [P]),
        "aitune_errmsg": (S, [P]),
        "aitune_lookup": (I, [P, S, S, S, LL, I, ctypes.POINTER(Choice)]),
        "aitune_count": (I, [P, ctypes.POINTER(I)]),
        "aitune_kernel_get": (I, [P, S, S, S, LL, I, ctypes.POINTER(P)]),
        "aitune_kernel_info_get": (I, [P, P, ctypes.POINTER(KernelInfo)]),
        "aitune_kernel_workspace": (I, [P, P, LL, ctypes.POINTER(ctypes.c_ulonglong)]),
        "aitune_launch": (I, [P, P, ctypes.POINTER(Arg), LL, P]),
        "aitune_bind": (I, [P, P, LL, P, ctypes.POINTER(P)]),
        "aitune_bound_launch": (I, [P, P, P, P]),
        "aitune_bound_info_get": (I, [P, P, ctypes.POINTER(BoundInfo)]),
        "aitune_bound_free": (I, [P, P]),
        # No argtypes: callers pass a ctypes char array (registry.Bound.cached_block), which
        # ctypes hands over as its address without calling a converter in Python.
        "aitune_launch_cached": (I, None),
        "aitune_flush_misses": (I, [P]),
        "aitune_miss_count": (I, [P, LL]),
    }
    for name, (res, args) in sig.items():
        try:
            f = getattr(lib, name)
        except AttributeError:
            raise AituneError("%s lacks %s: it is older than this package (rebuild it with `make`)"
                              % (_path, name), CANTOPEN) from None
        f.restype, f.argtypes = res, args
    _lib = lib
    return lib


def path():
    """Where the loaded library came from (None before load())."""
    return _path


HOT_NAME = "_aitune_hot.abi3.so"
_hot = False    # not looked for yet


def hot():
    """The hot path's C module, or None (see the module doc); looked for once."""
    global _hot
    if _hot is not False:
        return _hot
    _hot = None
    if os.environ.get("AITUNE_HOT", "1") == "0":
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    where = [here, os.path.normpath(os.path.join(here, "..", "..", "build"))]
    lib = _path or ""
    if os.sep in lib:
        d = os.path.dirname(os.path.realpath(lib))
        where += [d, os.path.join(d, "aitune")]
    for d in where:
        f = os.path.join(d, HOT_NAME)
        if os.path.isfile(f):
            loader = importlib.machinery.ExtensionFileLoader("_aitune_hot", f)
            spec = importlib.util.spec_from_file_location("_aitune_hot", f, loader=loader)
            mod = importlib.util.module_from_spec(spec)
            loader.exec_module(mod)
            _hot = mod
            break
    return _hot
