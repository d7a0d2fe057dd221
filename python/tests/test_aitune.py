"""Checks of the aitune Python package that need no GPU; prints one line per
check (ok / FAIL / skip) for tests/run. Usage: test_aitune.py REGISTRY
(a registry with softmax bf16 winners at rows=2^6, from a fake sweep)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import aitune  # noqa: E402

failed = 0


def check(cond, what):
    global failed
    print(("ok   " if cond else "FAIL test_aitune.py: ") + what)
    failed += not cond


def raises(fn, words, what):
    try:
        fn()
    except aitune.AituneError as e:
        msg = str(e)
        check(all(w in msg for w in words) and "\n" not in msg, "%s: %s" % (what, msg))
        return
    except Exception as e:  # noqa: BLE001
        check(False, "%s: raised %s: %s" % (what, type(e).__name__, e))
        return
    check(False, "%s: no error" % what)


class Fake:
    """A __cuda_array_interface__ object at a fake address."""

    def __init__(self, shape, typestr="<f4", addr=0x10000, strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (addr, False),
                                         "strides": strides, "version": 3}


env = {"rows": 100, "cols": 300}
check(aitune.eval_expr("cdiv(rows, 8) * 16 + max(cols, 4) - min(3, 2)", env) == 13 * 16 + 300 - 2, "expressions evaluate")
raises(lambda: aitune.eval_expr("rows; import os", env), ["expression"], "a bad expression is refused")

plan = {"kernel": "k", "dims": ["rows", "cols"],
        "args": [{"name": "x", "role": "in", "dtype": "f32", "size": "rows * cols"},
                 {"name": "y", "role": "out", "dtype": "f32", "size": "rows * cols"},
                 {"name": "eps", "role": "scalar"},
                 {"name": "rows", "role": "dim"}, {"name": "cols", "role": "dim"}]}
x, y = Fake((100, 300)), Fake((30000,), addr=0x20000)
vals = aitune.check_args(plan, (x, y, 1e-5), (100, 300))
check(vals[:2] == [0x10000, 0x20000] and abs(vals[2] - 1e-5) < 1e-12 and vals[3:] == [None, None],
      "good arguments give addresses, the scalar and no dims")
raises(lambda: aitune.check_args(plan, (x, y), (100, 300)), ["takes 3 arguments", "x, y, eps"], "too few arguments")
raises(lambda: aitune.check_args(plan, (x, y, 1.0), (100,)), ["2 dims", "rows, cols"], "a shape with the wrong rank")
raises(lambda: aitune.check_args(plan, (x, y, 1.0), (100, 0)), ["cols", ">= 1"], "a zero size")
raises(lambda: aitune.check_args(plan, (Fake((100, 300), "<f2"), y, 1.0), (100, 300)), ["'x'", "f16", "wants f32"],
       "a buffer of the wrong dtype")
raises(lambda: aitune.check_args(plan, (x, Fake((299, 100)), 1.0), (100, 300)), ["'y'", "29900 elements", "30000"],
       "a buffer of the wrong size")
raises(lambda: aitune.check_args(plan, (Fake((100, 300), strides=(4, 400)), y, 1.0), (100, 300)), ["'x'", "contiguous"],
       "a transposed (non-contiguous) buffer")
raises(lambda: aitune.check_args(plan, (Fake((100, 300), addr=0x10004), y, 1.0), (100, 300)), ["'x'", "16-byte"],
       "a misaligned buffer")
raises(lambda: aitune.check_args(plan, (x, y, "1e-5"), (100, 300)), ["'eps'", "number"], "a scalar given as a string")
raises(lambda: aitune.check_args(plan, ([1, 2], y, 1.0), (100, 300)), ["'x'", "CUDA tensor"], "a list instead of a tensor")

raises(lambda: aitune.Registry("/nonexistent/registry.db"), ["cannot open registry", "/nonexistent"],
       "a missing registry")
path = sys.argv[1]
with aitune.Registry(path) as reg:
    check(len(reg) == 2, "the registry's winners are counted (%d)" % len(reg))
    c = reg.lookup("softmax", "sm_90", "bf16", (64, 1000))
    check(c["level"] == "exact" and c["template"].startswith("softmax/") and isinstance(c["config"], dict),
          "lookup answers exactly: %s %s" % (c["template"], c["bucket"]))
    c = reg.lookup("softmax", "sm_90", "bf16", (64, 1 << 20))
    check(c["level"] == "nearest", "and at the nearest level for a far shape")
    raises(lambda: reg.lookup("softmax", "sm_90", "bf16", (64, -1)), ["sizes must be >= 1"], "lookup of a bad shape")
    check(reg.miss_count() == 1, "the nearest answer counts as a miss")
    reg.flush_misses()
    check(reg.miss_count() == 0, "flush_misses writes and resets them")
    try:
        import torch  # noqa: F401
        have_gpu = torch.cuda.is_available()
    except ImportError:
        have_gpu = False
    if have_gpu:
        print("skip launching without a GPU: this machine has one (tests/gpu/launch.sh covers it)")
    else:
        raises(lambda: reg.kernel("softmax", "bf16", (64, 1000), arch="sm_90"), ["libcuda"],
               "kernel() without a GPU says what is missing")
        raises(lambda: reg.launch("softmax", x, y, shape=(64, 1000), arch="sm_90", dtype="bf16"), ["libcuda"],
               "launch() without a GPU too")
sys.exit(1 if failed else 0)
