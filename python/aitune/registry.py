"""Registries, lookups and kernels: the ctypes layer over libaitune (src/aitune.h).

Registry opens a registry read-only; lookup() answers which config a shape gets;
kernel() loads a tuned kernel into the current CUDA context; launch() checks
arguments against its launch plan and launches it (the slow, checked path);
bind() makes a Bound: a kernel evaluated at one shape, launched with addresses
only (the fast path that aitune.dispatch caches); its runners launch it through
aitune_launch_cached, one ctypes argument per call (see Bound).
"""

import ctypes
import json
import operator
import os
import re
import struct
import threading
import weakref

from . import _lib
from ._lib import AituneError, LEVELS, MISUSE, OK

# ---- what crosses into C: ctypes neither checks a long long's range (2^64 + 5
# arrives as 5) nor a string's NULs (b"softmax\0x" arrives as "softmax") ----

_LL_MAX = (1 << 63) - 1


def _c_shape(shape):
    """shape as a C array of long long and its length. Each size must be an
    integer (an int, or anything with __index__ such as a numpy integer; not a
    bool, a float or a string) that a long long holds; else ValueError. Whether
    a size is >= 1 is libaitune's to say (AITUNE_MISUSE)."""
    sizes = []
    for s in shape:
        if isinstance(s, bool):
            raise ValueError("shape: %r is not a size" % (s,))
        try:
            v = operator.index(s)
        except TypeError:
            raise ValueError("shape: %r is not an integer" % (s,)) from None
        if not -_LL_MAX - 1 <= v <= _LL_MAX:
            raise ValueError("shape: %d does not fit a 64-bit size" % v)
        sizes.append(v)
    return (ctypes.c_longlong * len(sizes))(*sizes), len(sizes)


def _c_text(s, what):
    """A name (op, arch, dtype) as C text: a str without NUL; else ValueError."""
    if not isinstance(s, str):
        raise ValueError("%s: %r is not a string" % (what, s))
    if "\0" in s:
        raise ValueError("%s %r holds a NUL character" % (what, s))
    return s.encode()


def _c_path(path):
    """A registry's path as C text (os.fsencode); one with a NUL is ValueError
    (C would open the file named by what comes before it)."""
    b = os.fsencode(path)
    if b"\0" in b:
        raise ValueError("registry path %r holds a NUL character" % (path,))
    return b


# ---- expressions (src/expr.h): integers, dim names, + - *, (), cdiv/min/max ----

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*)|(.))")


def eval_expr(text, env):
    """Evaluate a launch-plan expression with dims from env (a dict)."""
    toks = []
    for num, name, ch in _TOKEN.findall(text):
        toks.append(("n", int(num)) if num else ("id", name) if name else ("ch", ch))
    pos = [0]

    def peek():
        return toks[pos[0]] if pos[0] < len(toks) else (None, None)

    def take(ch):
        if peek() == ("ch", ch):
            pos[0] += 1
            return True
        return False

    def atom():
        kind, v = peek()
        pos[0] += 1
        if kind == "n":
            return v
        if kind == "ch" and v == "(":
            x = total()
            if not take(")"):
                raise AituneError("expression %r: expected ')'" % text)
            return x
        if kind == "ch" and v == "-":
            return -atom()
        if kind == "id" and v in ("cdiv", "min", "max"):
            if not take("("):
                raise AituneError("expression %r: expected '('" % text)
            a = total()
            if not take(","):
                raise AituneError("expression %r: expected ','" % text)
            b = total()
            if not take(")"):
                raise AituneError("expression %r: expected ')'" % text)
            return min(a, b) if v == "min" else max(a, b) if v == "max" else (a + b - 1) // b
        if kind == "id" and v in env:
            return int(env[v])
        raise AituneError("expression %r: unexpected %r" % (text, v))

    def product():
        x = atom()
        while take("*"):
            x *= atom()
        return x

    def total():
        x = product()
        while True:
            if take("+"):
                x += product()
            elif take("-"):
                x -= product()
            else:
                return x

    x = total()
    if pos[0] != len(toks):
        raise AituneError("expression %r: trailing text" % text)
    return x


# ---- arguments ----

_TORCH_DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}
_CAI_DTYPES = {"<f4": "f32", "<f2": "f16", "f4": "f32", "f2": "f16"}


def _buffer(obj, name):
    """(address, dtype, numel, contiguous, device index or None) of a tensor-like."""
    if type(obj).__module__.startswith("torch") and hasattr(obj, "data_ptr"):
        dt = _TORCH_DTYPES.get(str(obj.dtype).replace("torch.", ""))
        if not obj.is_cuda:
            raise AituneError("argument '%s' is on %s, not on a CUDA device" % (name, obj.device), MISUSE)
        return obj.data_ptr(), dt or str(obj.dtype), obj.numel(), obj.is_contiguous(), obj.device.index
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is None:
        raise AituneError("argument '%s' is a %s: want a CUDA tensor (PyTorch, or __cuda_array_interface__)"
                          % (name, type(obj).__name__), MISUSE)
    shape = tuple(cai.get("shape", ()))
    typestr = cai.get("typestr", "?")
    dt = _CAI_DTYPES.get(typestr, typestr)
    itemsize = int(typestr[2:]) if len(typestr) > 2 and typestr[2:].isdigit() else 0
    numel = 1
    for s in shape:
        numel *= s
    strides = cai.get("strides")
    contiguous = strides is None
    if strides is not None:
        want, contiguous = itemsize, True
        for s, st in zip(reversed(shape), reversed(strides)):
            if s != 1 and st != want:
                contiguous = False
            want *= s
    return int(cai["data"][0]), dt, numel, contiguous, None


def check_args(plan, args, shape, current_device=None):
    """Check args (the op's non-dim arguments, in order) against a launch plan
    (the dict of its JSON) at shape; return one value per op argument for
    aitune_launch (address, float, or None for a dim). Raises AituneError."""
    dims = plan["dims"]
    if len(shape) != len(dims):
        raise AituneError("%s takes a shape of %d dims (%s), not %d" % (plan["kernel"], len(dims), ", ".join(dims),
                                                                       len(shape)), MISUSE)
    env = {}
    for d, s in zip(dims, shape):
        if int(s) != s or s < 1:
            raise AituneError("shape: %s = %r must be an integer >= 1" % (d, s), MISUSE)
        env[d] = int(s)
    takes = [a for a in plan["args"] if a["role"] != "dim"]
    if len(args) != len(takes):
        raise AituneError("the op takes %d arguments (%s; dims come from shape), not %d"
                          % (len(takes), ", ".join(a["name"] for a in takes), len(args)), MISUSE)
    it = iter(args)
    values = []
    for a in plan["args"]:
        if a["role"] == "dim":
            values.append(None)
            continue
        obj = next(it)
        name = a["name"]
        if a["role"] == "scalar":
            if isinstance(obj, bool) or not isinstance(obj, (int, float)):
                raise AituneError("argument '%s' is a scalar: want a number, not %s" % (name, type(obj).__name__),
                                  MISUSE)
            values.append(float(obj))
            continue
        addr, dt, numel, contiguous, dev = _buffer(obj, name)
        if dt != a["dtype"]:
            raise AituneError("argument '%s' has dtype %s; the kernel wants %s" % (name, dt, a["dtype"]), MISUSE)
        if "size" in a:
            want = eval_expr(a["size"], env)
            if numel != want:
                raise AituneError("argument '%s' has %d elements; shape %s needs %s = %d" %
                                  (name, numel, tuple(shape), a["size"], want), MISUSE)
        if not contiguous:
            raise AituneError("argument '%s' is not contiguous (call .contiguous())" % name, MISUSE)
        if current_device is not None and dev is not None and dev != current_device:
            raise AituneError("argument '%s' is on cuda:%d, the current device is cuda:%d" %
                              (name, dev, current_device), MISUSE)
        if addr % 16:
            raise AituneError("argument '%s' is not 16-byte aligned (a view at an offset?)" % name, MISUSE)
        values.append(addr)
    return values


def _torch():
    try:
        import torch
        return torch
    except ImportError:
        return None


class Kernel:
    """A tuned kernel loaded into the current CUDA context."""

    def __init__(self, reg, ptr, info):
        self._reg, self._ptr = reg, ptr
        self.level = LEVELS.get(info.level, "?")
        self.template = info.template_name.decode()
        self.config = json.loads(info.config.decode())
        self.bucket = info.bucket.decode() if info.bucket else None
        self.plan = json.loads(info.plan.decode())

    def workspace_bytes(self, shape):
        shp, _ = _c_shape(shape)
        out = ctypes.c_ulonglong()
        self._reg._check(_lib.load().aitune_kernel_workspace(self._reg._h, self._ptr, shp, ctypes.byref(out)))
        return out.value


class Registry:
    """A registry opened read-only (aitune_open)."""

    def __init__(self, path):
        lib = _lib.load()
        self.path = os.fspath(path)
        self._tls = threading.local()
        # The aitune_cached blocks of Bound.cached_block() still alive (a block lives as
        # long as its thread and runner), whose handle close() clears; by id.
        self._blocks = weakref.WeakValueDictionary()
        self._blocks_lock = threading.Lock()
        self._h = ctypes.c_void_p()
        rc = lib.aitune_open(_c_path(path), ctypes.byref(self._h))
        if rc != OK:
            msg = lib.aitune_errmsg(self._h).decode(errors="replace")
            lib.aitune_close(self._h)
            self._h = None
            raise AituneError(msg, rc)

    def close(self):
        """Free the handle, its kernels and bound launches (Bounds of it then refuse to launch)."""
        with self._blocks_lock:
            if not self._h:
                return
            # A cached launch made after this passes a NULL handle (AITUNE_MISUSE), not
            # the freed one.
            for blk in list(self._blocks.values()):
                ctypes.memset(blk, 0, 8)
            _lib.load().aitune_close(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _check(self, rc):
        if rc != OK:
            self._fail(rc)

    def _fail(self, rc):
        if not self._h:
            raise AituneError("the registry is closed", MISUSE)
        raise AituneError(_lib.load().aitune_errmsg(self._h).decode(errors="replace"), rc)

    def _live(self):
        if not self._h:
            raise AituneError("the registry is closed", MISUSE)

    def __len__(self):
        self._live()
        n = ctypes.c_int()
        self._check(_lib.load().aitune_count(self._h, ctypes.byref(n)))
        return n.value

    def lookup(self, op, arch, dtype, shape):
        """The config for a shape: a dict with level, template, config, bucket, median_us."""
        self._live()
        shp, nd = _c_shape(shape)
        c = _lib.Choice()
        self._check(_lib.load().aitune_lookup(self._h, _c_text(op, "op"), _c_text(arch, "arch"), _c_text(dtype, "dtype"),
                                              shp, nd, ctypes.byref(c)))
        return {"level": LEVELS.get(c.level, "?"), "template": c.template_name.decode(),
                "config": json.loads(c.config.decode()), "bucket": c.bucket.decode() if c.bucket else None,
                "median_us": c.median_us, "distance": c.distance}

    def kernel(self, op, dtype, shape, arch=None):
        """The kernel for (op, dtype, shape) on PyTorch's current device (arch: its cc)."""
        self._live()
        torch = _torch()
        if arch is None:
            if torch is None or not torch.cuda.is_available():
                raise AituneError("no arch given and no PyTorch CUDA device to ask", MISUSE)
            major, minor = torch.cuda.get_device_capability()
            arch = "sm_%d%d" % (major, minor)
        if torch is not None and torch.cuda.is_available():
            # cudaSetDevice makes the device's primary context (PyTorch's)
            # current in this thread, where libaitune loads the kernel.
            torch.cuda.set_device(torch.cuda.current_device())
        return self.kernel_in_context(op, dtype, shape, arch)

    def kernel_in_context(self, op, dtype, shape, arch):
        """kernel() in the CUDA context current in this thread, asking PyTorch nothing."""
        self._live()
        shp, nd = _c_shape(shape)
        k = ctypes.c_void_p()
        lib = _lib.load()
        self._check(lib.aitune_kernel_get(self._h, _c_text(op, "op"), _c_text(arch, "arch"), _c_text(dtype, "dtype"),
                                          shp, nd, ctypes.byref(k)))
        info = _lib.KernelInfo()
        self._check(lib.aitune_kernel_info_get(self._h, k, ctypes.byref(info)))
        return Kernel(self, k, info)

    def launch(self, op, *args, shape, dtype=None, arch=None, stream=None, workspace=None):
        """Run the tuned kernel of op at shape on args (see the module doc).
        dtype defaults to the first buffer's; stream to PyTorch's current one."""
        self._live()
        torch = _torch()
        if dtype is None:
            for a in args:
                if not isinstance(a, (int, float)):
                    dtype = _buffer(a, "the first buffer")[1]
                    break
            if dtype is None:
                raise AituneError("no buffer to take the dtype from: pass dtype=", MISUSE)
        k = self.kernel(op, dtype, shape, arch)
        dev = torch.cuda.current_device() if torch is not None and torch.cuda.is_available() else None
        values = check_args(k.plan, args, shape, dev)
        arr = (_lib.Arg * (len(values) + 1))()
        for i, (a, v) in enumerate(zip(k.plan["args"], values)):
            if a["role"] == "scalar":
                arr[i].f32 = v
            elif v is not None:
                arr[i].ptr = v
        need = k.workspace_bytes(shape)
        keep = None
        if need:
            if workspace is None:
                if torch is None:
                    raise AituneError("the kernel needs a %d-byte workspace: pass workspace=" % need, MISUSE)
                keep = torch.empty(need, dtype=torch.uint8, device="cuda")
                workspace = keep
            addr, _, numel, _, _ = _buffer(workspace, "workspace")
            if numel * (workspace.element_size() if hasattr(workspace, "element_size") else 1) < need:
                raise AituneError("the workspace is smaller than the %d bytes the kernel needs" % need, MISUSE)
            arr[len(values)].ptr = addr
        if stream is None and torch is not None and torch.cuda.is_available():
            stream = torch.cuda.current_stream().cuda_stream
        shp, _ = _c_shape(shape)
        self._check(_lib.load().aitune_launch(self._h, k._ptr, arr, shp, ctypes.c_void_p(stream or 0)))
        if keep is not None and torch is not None:
            keep.record_stream(torch.cuda.current_stream())
        return k

    def bind(self, kernel, shape, known=None):
        """A Bound: kernel evaluated at shape (aitune_bind). known: {argument name:
        address} of buffers that stay (a weight), whose tensor maps are encoded now."""
        self._live()
        lib = _lib.load()
        shp, _ = _c_shape(shape)
        args = None
        if known:
            args = (_lib.Arg * (len(kernel.plan["args"]) + 1))()
            names = [a["name"] for a in kernel.plan["args"]]
            for name, addr in known.items():
                args[names.index(name)].ptr = addr
        b = ctypes.c_void_p()
        self._check(lib.aitune_bind(self._h, kernel._ptr, shp, args, ctypes.byref(b)))
        info = _lib.BoundInfo()
        self._check(lib.aitune_bound_info_get(self._h, b, ctypes.byref(info)))
        return Bound(self, kernel, tuple(shape), b.value, info)

    def flush_misses(self):
        """Write the shapes no tuned bucket held to the registry's misses table."""
        self._live()
        self._check(_lib.load().aitune_flush_misses(self._h))

    def miss_count(self):
        self._live()
        n = ctypes.c_longlong()
        self._check(_lib.load().aitune_miss_count(self._h, ctypes.byref(n)))
        return n.value


def thread_buffer(tls):
    """This thread's argument buffer for bound launches ((buffer, address), made once)."""
    buf = ctypes.create_string_buffer(8 * 24)   # PLAN_MAXARGS entries and the workspace, and then some
    tls.args = buf, ctypes.addressof(buf)
    return tls.args


CACHED_MAXARGS = 17     # aitune.h's AITUNE_CACHED_MAXARGS
CACHED_AT = 16          # the offset of aitune_cached's stream, after h and b


class _Block(ctypes.c_char * (CACHED_AT + 8 * CACHED_MAXARGS)):
    """An aitune_cached block: a char array, which ctypes passes to a function without
    argtypes as its address, converting nothing in Python (a subclass: weakly
    referable, see Registry._blocks)."""


class Bound:
    """A kernel bound at one shape (aitune_bind): launch() writes the buffers'
    addresses, the scalars and the stream into its prebuilt parameters and
    launches. It checks nothing but what libaitune checks (NULL buffers,
    alignment under tensor maps, the context): callers check tensors first.

    values: the op's arguments in op.lua's order without its dims, buffers
    as addresses and scalars as floats, then the workspace's address when
    ws_bytes > 0. Thread-safe: each thread packs into its own buffer.

    The runners (aitune.ops) launch through aitune_launch_cached instead, from
    an aitune_cached block of their own per thread (cached_block()): the handle and
    the bound launch are written once, and each call writes the rest with
    _cpack(block, CACHED_AT, stream, *values, workspace), the workspace entry
    always there (0 when ws_bytes is 0: libaitune does not read it then), and
    launches with _cfn(block): one pack and one ctypes call whose only argument
    needs no conversion, where launch() pays ctypes' conversion of four."""

    __slots__ = ("reg", "kernel", "shape", "ptr", "ws_bytes", "kind", "grid", "block", "cluster", "ntmaps",
                 "_pack", "_fn", "_tls", "_size", "_cpack", "_cfn")

    def __init__(self, reg, kernel, shape, ptr, info):
        self.reg, self.kernel, self.shape, self.ptr = reg, kernel, shape, ptr
        self.ws_bytes, self.kind = info.ws_bytes, info.kind
        self.grid, self.block, self.cluster = tuple(info.grid), tuple(info.block), tuple(info.cluster)
        self.ntmaps = info.ntmaps
        fmt = ""
        for a in kernel.plan["args"]:
            fmt += "Q" if a["role"] in ("in", "out", "inout") else "f4x" if a["role"] == "scalar" else "8x"
        packer = struct.Struct("<" + fmt + ("Q" if info.ws_bytes else ""))
        self._pack, self._size = packer.pack_into, packer.size
        self._fn = _lib.load().aitune_bound_launch
        # Native order and sizes ("@", what the C struct has); its Q's are packed by the
        # fast path of struct, where "<" converts through a byte array.
        self._cpack = struct.Struct("@Q" + fmt + "Q").pack_into
        self._cfn = _lib.load().aitune_launch_cached
        self._tls = reg._tls

    def cached_block(self):
        """A new aitune_cached block for this bound launch, h and b written (one per
        thread: launches read it while the GIL is released). Registry.close() clears
        its handle while it is alive."""
        reg = self.reg
        blk = _Block()
        with reg._blocks_lock:
            reg._live()
            struct.pack_into("@QQ", blk, 0, reg._h.value, self.ptr)
            reg._blocks[id(blk)] = blk
        return blk

    def launch(self, values, stream=0):
        """Launch on stream (a CUstream as an int; 0: the legacy default stream)."""
        tls = self._tls
        try:
            buf, addr = tls.args
        except AttributeError:
            buf, addr = thread_buffer(tls)
        self._pack(buf, 0, *values)
        rc = self._fn(self.reg._h, self.ptr, addr, stream)
        if rc:
            self.reg._fail(rc)

    def __repr__(self):
        return "<aitune.Bound %s %s grid %s>" % (self.kernel.template, "x".join(map(str, self.shape)), self.grid)
