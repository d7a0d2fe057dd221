"""The dispatch cache: per (op, dtype, shape, device), the bound launch that runs it, or
the reason it falls back to PyTorch.

The first call of a shape looks it up in the registry (libaitune: in-memory, no SQL
after the first of its op), loads the winner's kernel into the device's context and
binds it (aitune_bind: plan evaluated, shared memory allowed, tensor maps encoded).
Every later call is a dict lookup and a bound launch. Only a tuned bucket that holds
the shape (level "exact") is used: a nearest bucket's config was tuned for other
sizes and may lose to PyTorch, so such a shape falls back and is recorded as a miss,
as is one whose winner cannot bind there (a stride TMA cannot read). Misses are
counted per call here (misses()) and, per shape, by libaitune, which
flush_misses() writes to the registry's misses table for `tune --from-misses`.

Loading a module (cuModuleLoadData) is not allowed while a CUDA graph is being
captured, so the first call of each shape must come before capture (a warm-up run,
which graph capture needs anyway). A shape first met during capture falls back to
PyTorch for that capture and is recorded as a miss ("first seen during graph
capture"); the next call outside capture binds it.

This module needs no torch: devices are indices, tensors are addresses. aitune.ops
adds the torch side (streams, capture, the current device).
"""

import json
import os
import sys
import threading

from ._lib import AituneError, VENDOR_TEMPLATE
from .registry import Registry

DEFAULT_DB = os.path.join(os.path.expanduser("~"), ".local", "share", "aitune", "registry.db")


# kernel()'s answer for a bucket whose winner is the vendor library (_lib.VENDOR_TEMPLATE).
VENDOR = object()


def default_path():
    """$AITUNE_DB, else ~/.local/share/aitune/registry.db (where `aitune sweep` writes)."""
    return os.environ.get("AITUNE_DB") or DEFAULT_DB


class Dispatcher:
    """Bound launches of one registry, cached per (op, dtype, shape, device).

    arch: "sm_90" (a trailing a/f is ignored); None asks PyTorch for each device's.
    host_tensors: launch for tensors off CUDA too (device -1: the tests, whose recording
    libcuda launches nothing); else they fall back to PyTorch.
    hooks (for aitune.ops): capturing() says whether a graph capture is under way;
    device_scope(dev) makes dev current while a kernel loads."""

    def __init__(self, registry, arch=None, capturing=None, device_scope=None, host_tensors=False):
        self.reg = registry if isinstance(registry, Registry) else Registry(registry)
        self.arch = arch
        self._arches = {}
        self._kernels = {}     # (op, dtype, shape, dev) -> Kernel, or None with a miss
        self._bounds = {}      # (op, dtype, shape, dev) -> Bound, or None with a miss
        self._misses = {}      # (op, dtype, shape) -> [calls, why]
        self.runs = {}         # aitune.ops' runners, keyed by what their callers see
        self._lock = threading.Lock()
        self._capturing = capturing or _torch_capturing
        self._device_scope = device_scope or _torch_device
        self.host_tensors = host_tensors

    # ---- answers ----

    def kernel(self, op, dtype, shape, dev=-1):
        """The Kernel for a shape, VENDOR where the vendor holds its bucket (a GEMM
        that PyTorch's own cuBLAS call computes: no miss), or None (a miss, recorded)."""
        key = (op, dtype, shape, dev)
        try:
            return self._kernels[key]
        except KeyError:
            pass
        if dev < 0 and not self.host_tensors:
            self.miss(op, dtype, shape, "not on a CUDA device")
            self._kernels[key] = None
            return None
        if dev >= 0 and self._capturing():
            self.miss(op, dtype, shape, "first seen during graph capture (run the model once before capturing)")
            return None
        with self._lock:
            if key not in self._kernels:
                self._kernels[key] = self._load(op, dtype, shape, dev)
            return self._kernels[key]

    def bound(self, op, dtype, shape, dev=-1, known=None):
        """The Bound for a shape, or None (a miss). known ({arg: address}) binds a
        launch of its own for buffers that stay (a module's weight), not cached here:
        the caller keeps it."""
        key = (op, dtype, shape, dev)
        if known is None:
            try:
                return self._bounds[key]
            except KeyError:
                pass
        k = self.kernel(op, dtype, shape, dev)
        if k is None or k is VENDOR:
            return None
        with self._lock:
            if known is None and key in self._bounds:
                return self._bounds[key]
            try:
                b = self.reg.bind(k, shape, known)
            except AituneError as e:
                b = None
                self.miss(op, dtype, shape, "the winner does not bind here: %s" % e)
                self._kernels[key] = None
            if known is None:
                self._bounds[key] = b
            return b

    def tuned(self, op, dtype, shape, dev=-1):
        """Whether a tuned bucket holds the shape (an exact lookup), recording nothing."""
        return self.answer(op, dtype, shape, dev) is not None

    def answer(self, op, dtype, shape, dev=-1):
        """True where a tuned bucket holds the shape with a template's winner, False
        where the vendor holds it, None where no tuned bucket does; records nothing."""
        try:
            c = self.reg.lookup(op, self.arch_of(dev), dtype, shape)
        except AituneError:
            return None
        if c["level"] != "exact":
            return None
        return c["template"] != VENDOR_TEMPLATE

    def answered(self, ops=None):
        """The buckets whose winners this dispatcher has loaded (the calls so far): sorted
        (op, dtype, bucket, template, config as canonical JSON), of ops (None: every op);
        vendor-held buckets are not among them."""
        with self._lock:
            loaded = [(key[0], key[1], k) for key, k in self._kernels.items() if k is not None and k is not VENDOR]
        return sorted({(op, dtype, k.bucket, k.template, json.dumps(k.config, sort_keys=True))
                       for op, dtype, k in loaded if ops is None or op in ops})

    def _load(self, op, dtype, shape, dev):
        arch = self.arch_of(dev)
        try:
            c = self.reg.lookup(op, arch, dtype, shape)
        except AituneError as e:
            self.miss(op, dtype, shape, "lookup failed: %s" % e)
            return None
        if c["template"] == VENDOR_TEMPLATE:
            return VENDOR
        if c["level"] != "exact":
            where = " (nearest: %s)" % c["bucket"] if c["bucket"] else ""
            self.miss(op, dtype, shape, "no tuned bucket holds it%s" % where)
            return None
        try:
            if dev >= 0:
                with self._device_scope(dev):
                    return self.reg.kernel_in_context(op, dtype, shape, arch)
            return self.reg.kernel_in_context(op, dtype, shape, arch)
        except AituneError as e:
            self.miss(op, dtype, shape, "cannot load its kernel: %s" % e)
            return None

    def arch_of(self, dev):
        if self.arch:
            return self.arch
        a = self._arches.get(dev)
        if a is None:
            import torch
            try:
                major, minor = torch.cuda.get_device_capability(dev if dev >= 0 else None)
            except (RuntimeError, AssertionError) as e:     # no driver, no device, a CPU-only build
                raise AituneError("no CUDA device to look kernels up for: %s" % e)
            a = self._arches[dev] = "sm_%d%d" % (major, minor)
        return a

    # ---- misses ----

    def miss(self, op, dtype, shape, why=None):
        """With why: record why a shape falls back (the first reason stays). Without: count
        one call of it that did (the callers do, at each fallback)."""
        m = self._misses.get((op, dtype, shape))
        if m is None:
            self._misses[(op, dtype, shape)] = [1 if why is None else 0, why or "unknown"]
        else:
            if why is None:
                m[0] += 1
            elif m[1] == "unknown":
                m[1] = why

    def misses(self):
        return {k: {"count": v[0], "why": v[1]} for k, v in self._misses.items()}

    def flush_misses(self):
        """libaitune's counted misses to the registry's misses table."""
        self.reg.flush_misses()

    def stats(self):
        """How many shapes are bound, and how many fell back."""
        return {"bound": sum(1 for b in self._bounds.values() if b is not None),
                "kernels": sum(1 for k in self._kernels.values() if k is not None),
                "missed": len(self._misses)}


def _torch_capturing():
    torch = sys.modules.get("torch")
    return bool(torch is not None and torch.cuda.is_initialized() and torch.cuda.is_current_stream_capturing())


def _torch_device(dev):
    # cudaSetDevice makes the device's primary context (PyTorch's) current in this
    # thread, where libaitune loads the kernel.
    import torch
    return torch.cuda.device(dev)


_current = None
_current_lock = threading.Lock()


def use(registry=None, **options):
    """Make a Dispatcher over registry (a path, a Registry, or a Dispatcher; None: default_path())
    the one the aitune ops use, and return it. Options go to Dispatcher."""
    global _current
    with _current_lock:
        if isinstance(registry, Dispatcher):
            _current = registry
        elif (registry is None and _current is not None and not options):
            pass
        elif (_current is not None and not options and isinstance(registry, (str, os.PathLike))
              and os.path.abspath(os.fspath(registry)) == os.path.abspath(_current.reg.path)):
            pass
        else:
            _current = Dispatcher(registry if registry is not None else default_path(), **options)
        return _current


def current():
    """The Dispatcher the ops use, or None before use()."""
    return _current
