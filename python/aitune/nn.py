"""Drop-in modules: Linear, RMSNorm and LayerNorm that run the registry's tuned kernels.

Each is a subclass of PyTorch's module with the same parameters, state_dict and
arguments (so a model built with them loads the same checkpoints), whose forward
runs an aitune op:
  - under torch.compile it calls torch.ops.aitune.<op>, which Dynamo traces
    (fake implementation) and the compiled graph runs (norms: see below);
  - in eager mode it skips the dispatcher: each module keeps, per (input shape,
    dtype, device), a runner over a launch bound for its own weight's address
    (the weight's tensor map encoded once), and a table by input shape alone of
    the runner last used there, which a warm call (Linear, RMSNorm) looks up
    first: a call is one dict lookup, x's checks (dtype, device, layout: the
    runner's, which steps aside for the slow path where they differ), one output
    allocation and one cached launch (the weight checked again only when its
    address, dtype or layout changes: aitune.ops._runner); past MODULE_RUNS
    shapes it shares the dispatcher's runners (bound without the weight's
    address), through the slow path.
The norms (RMSNorm, LayerNorm) take the aitune op in eager mode and in plain CUDA
graphs only: traced by torch.compile, they compute what PyTorch's module does, which
Inductor fuses with its neighbours (the residual add before a norm: one kernel, where
an extern aitune::rms_norm call leaves the add to a kernel of its own; on an H100, a
Llama-3-8B decode step under torch.compile ran 6.50 ms with the Linears patched and
6.59 ms with the norms too). A module whose `aitune_in_compile` is True (a class
attribute, False; patch(norms="always") sets it per module) calls
torch.ops.aitune.<op> under torch.compile too. Linear calls its op everywhere.
The registry is the one aitune.use() (or aitune.patch) chose; with none, or where
it has no tuned bucket for a shape, the module computes what PyTorch's does
(recorded as a miss). Linear's bias is added by PyTorch after the product.

aitune.patching swaps these forwards into an existing model's modules (the class of
each instance is swapped, its parameters untouched), including Hugging Face's
RMSNorm classes, which rms_norm_class() subclasses.
"""

import torch
import torch.nn.functional as F

from . import _lib, dispatch, ops

# A module keeps runners of its own for this many input shapes (a server's decode
# batches); past them (a prefill's every prompt length), it shares the dispatcher's,
# one per shape for all modules of the same weight shape, so memory grows with the
# distinct shapes, not with shapes x modules.
MODULE_RUNS = 16

_compiling = torch.compiler.is_compiling
_grad_enabled = torch.is_grad_enabled
_FALLBACK = ops._FALLBACK
# linear_forward's warm path in C (_aitune_hot.linear, src/pyhot.c), or None: where
# the hot module is absent or AITUNE_HOT=0 (_lib.hot()), the Python body below runs.
# Set by _use_hot when _linear_slow leaves a runner for the warm path (the runners
# were made, so _lib.hot() has looked for the module by then).
_linear_c = None


class _State:
    """A module's runners for one dispatcher, and its check-mode hook.

    runs: (x.shape, x.dtype, x's device index) -> runner, or _FALLBACK. fast (Linear):
    x.shape -> the module's own runner last used at that shape, for the hot path
    (the runner checks x's dtype and device itself); empty in check mode."""

    __slots__ = ("d", "runs", "fast", "checker", "name", "zeros")

    def __init__(self, d, checker=None, name=""):
        self.d, self.runs, self.fast, self.checker, self.name, self.zeros = d, {}, {}, checker, name, None


def _state(mod, d):
    st = mod.__dict__.get("_aitune")
    if st is None or st.d is not d:
        old = st
        st = _State(d, old.checker if old else None, old.name if old else "")
        mod.__dict__["_aitune"] = st
    return st


def _checked(st, op, shape, got, ref):
    if st.checker is not None:
        st.checker.compare(st.name, op, shape, got, ref)
    return got


# ---- forwards (shared by the drop-in classes and patched modules) ----

def gemm_run(d, runs, op, x, w, key):
    """A module's runner of GEMM op ("linear", "swiglu": ops.gemm_runner) over its weight
    w at key (x's shape, dtype, device), made at the shape's first call: its own, kept
    in runs and bound to w's address, for its first MODULE_RUNS shapes, then the
    dispatcher's, shared by every weight of w's shape (see the module doc)."""
    if len(runs) < MODULE_RUNS:
        run = runs[key] = ops.gemm_runner(d, op, x, w, known_weight=True) or _FALLBACK
        return run
    return ops._cached(d, (op, x.shape, tuple(w.shape), x.dtype, key[2]), lambda: ops.gemm_runner(d, op, x, w))


def _linear_run(self, st, d, x, w, b, key):
    """The runner for key, made and kept at a shape's first call (see the module doc)."""
    ops.check_linear(x, w, b)
    return gemm_run(d, st.runs, "linear", x, w, key)


def linear_forward(self, x):
    # The eager path is the host time per call that issue 32's bar counts: a module
    # that ran at x's shape before calls its runner for it straight away (the runner
    # checks x's dtype, device and layout and the weight's address); everything
    # else, and whatever the runner declines (returns None), takes _linear_slow.
    if not _compiling():
        if _linear_c is not None:
            # The same steps in C; None where the Python body would take the slow path.
            out = _linear_c(self, x)
            if out is not None:
                return out
            return _linear_slow(self, x)
        try:
            st = self._aitune
        except AttributeError:
            return _linear_slow(self, x)
        if st.d is dispatch._current:
            run = st.fast.get(x.shape)
            if run is not None:
                p = self._parameters
                if _grad_enabled():
                    ops.check_grad("linear", (x, p["weight"], p.get("bias")), ("x", "weight", "bias"))
                out = run(x, p["weight"])
                if out is not None:
                    b = p.get("bias")
                    if b is not None:
                        out.add_(b)
                    return out
    return _linear_slow(self, x)


def _use_hot():
    """_linear_c for the hot module _lib.hot() gives now (bound to this package's
    dispatcher and grad mode once), or None."""
    global _linear_c
    hot = _lib.hot()
    if hot is None:
        _linear_c = None
    elif _linear_c is not hot.linear:
        hot.setup_linear(dispatch, _grad_enabled)
        _linear_c = hot.linear


def _linear_slow(self, x):
    p = self._parameters
    w = p["weight"]
    if _compiling():
        return ops.traced_linear(x, w, p.get("bias"))
    d = dispatch._current
    st = self.__dict__.get("_aitune")
    if st is None or st.d is not d:
        if d is None:
            return F.linear(x, w, p.get("bias"))
        st = _state(self, d)
    if _grad_enabled():
        ops.check_grad("linear", (x, w, p.get("bias")), ("x", "weight", "bias"))
    key = (x.shape, x.dtype, x.get_device())
    run = st.runs.get(key)
    if run is None:
        run = _linear_run(self, st, d, x, w, p.get("bias"), key)
    if run is _FALLBACK:
        b = p.get("bias")
        d.miss("gemm_nt", ops.DTYPES.get(x.dtype, str(x.dtype)), (ops._rows(x.shape),) + tuple(w.shape))
        return F.linear(x, w, b)
    out = run(x, w)
    if out is None:
        # The weight was replaced by one of another n (param.data = ...): this module's
        # runners were bound for the old one. Make them again.
        st.runs.clear()
        st.fast.clear()
        return _linear_slow(self, x)
    if st.checker is None and st.runs.get(key) is run:
        st.fast[x.shape] = run       # the module's own (not a shared one past MODULE_RUNS)
        _use_hot()
    b = p.get("bias")
    if b is not None:
        out.add_(b)
    if st.checker is not None:
        return _checked(st, "aitune::linear", (ops._rows(x.shape),) + tuple(w.shape), out, F.linear(x, w, b))
    return out


def _norm_eager(self, op, x, w, args, ref):
    d = dispatch._current
    st = self.__dict__.get("_aitune")
    if st is None or st.d is not d:
        if d is None:
            return ref(x, w, *args)
        st = _state(self, d)
    key = (x.shape, x.dtype, x.get_device())
    run = st.runs.get(key)
    if run is None:
        ops.check_norm(op, x, w, args[0] if op == "layer_norm" else None)
        if len(st.runs) < MODULE_RUNS:
            run = st.runs[key] = ops.norm_runner(d, op, x) or _FALLBACK
        else:
            run = ops._cached(d, (op, x.shape, x.dtype, key[2]), lambda: ops.norm_runner(d, op, x))
    if run is _FALLBACK:
        d.miss(ops.OPS[op][0], ops.DTYPES.get(x.dtype, str(x.dtype)), (ops._rows(x.shape), x.shape[-1]))
        return ref(x, w, *args)
    if op == "layer_norm" and (w.get_device() != key[2] or w.shape[0] != x.shape[-1]):
        ops.check_norm(op, x, w)     # the weight changed since: say how (rms_norm's runner checks)
    elif op == "rms_norm" and st.checker is None and st.runs.get(key) is run:
        st.fast[x.shape] = run       # rms_norm_forward's hot path (its runner checks x's dtype, device)
    out = run(x, w, *args)
    if st.checker is not None:
        return _checked(st, "aitune::" + op, (ops._rows(x.shape), x.shape[-1]), out, ref(x, w, *args))
    return out


def rms_norm_forward(self, x, eps_attr="eps", fallback=None):
    w = self._parameters["weight"]
    eps = getattr(self, eps_attr)
    if eps is None:
        eps = torch.finfo(x.dtype).eps
    compiling = _compiling()
    if w is None or w.dtype is not x.dtype or (compiling and not self.aitune_in_compile):
        # Another output dtype (HF's RMSNorm promotes x to the weight's), or traced by
        # torch.compile, where Inductor fuses PyTorch's computation with its neighbours: theirs.
        return fallback(self, x) if fallback else F.rms_norm(x, (x.shape[-1],), w, eps)
    if compiling:
        return ops.rms_norm(x, w, eps)
    if _grad_enabled():
        ops.check_grad("rms_norm", (x, w), ("x", "weight"))
    # _norm_eager inlined (the hot path of a decoder's norms); the runner checks the weight.
    d = dispatch._current
    st = self.__dict__.get("_aitune")
    if st is None or st.d is not d:
        if d is None:
            return ops.ref_rms_norm(x, w, eps)
        st = _state(self, d)
    run = st.fast.get(x.shape)
    out = run(x, w, float(eps)) if run is not None else None
    if out is None:
        return _norm_eager(self, "rms_norm", x, w, (float(eps),), ops.ref_rms_norm)
    return out


def layer_norm_forward(self, x):
    w, b = self._parameters.get("weight"), self._parameters.get("bias")
    if (w is None or len(self.normalized_shape) != 1 or w.dtype is not x.dtype
            or (_compiling() and not self.aitune_in_compile)):
        return F.layer_norm(x, self.normalized_shape, w, b, self.eps)
    if _compiling():
        return ops.layer_norm(x, w, b, self.eps)
    if _grad_enabled():
        ops.check_grad("layer_norm", (x, w, b), ("x", "weight", "bias"))
    if b is None:
        st = self.__dict__.get("_aitune")
        if st is None or st.d is not dispatch._current:
            st = _state(self, dispatch._current)
        if st.zeros is None or st.zeros.dtype is not w.dtype or st.zeros.device != w.device:
            st.zeros = torch.zeros_like(w)
        b = st.zeros
    return _norm_eager(self, "layer_norm", x, w, (b, float(self.eps)), ops.ref_layer_norm)


# ---- the drop-in classes ----

class Linear(torch.nn.Linear):
    """torch.nn.Linear (bias included; bf16 and f16 tuned) whose product is aitune::linear."""

    forward = linear_forward


_RMS_NORM_FORWARD = torch.nn.RMSNorm.forward


class RMSNorm(torch.nn.RMSNorm):
    """torch.nn.RMSNorm (one normalized dim, with a weight) over aitune::rms_norm (under
    torch.compile: PyTorch's computation, unless aitune_in_compile; see the module doc)."""

    aitune_in_compile = False

    def forward(self, x):
        if len(self.normalized_shape) != 1:
            return super().forward(x)
        return rms_norm_forward(self, x, "eps", _RMS_NORM_FORWARD)


class LayerNorm(torch.nn.LayerNorm):
    """torch.nn.LayerNorm (one normalized dim, with a weight; bias optional) over aitune::layer_norm
    (under torch.compile: PyTorch's computation, unless aitune_in_compile)."""

    aitune_in_compile = False

    forward = layer_norm_forward


_SUBCLASSES = {}


def rms_norm_class(cls, eps_attr):
    """A subclass of cls (a Hugging Face RMSNorm: y = weight * (x / rms(x)).to(x.dtype)),
    with eps in attribute eps_attr, whose forward runs aitune::rms_norm (one per cls)."""
    sub = _SUBCLASSES.get((cls, eps_attr))
    if sub is None:
        orig = cls.forward

        def forward(self, x):
            return rms_norm_forward(self, x, eps_attr, orig)
        sub = type("Aitune" + cls.__name__, (cls,), {"forward": forward, "__module__": __name__,
                                                     "aitune_in_compile": False,
                                                     "__doc__": "%s over aitune::rms_norm" % cls.__name__})
        _SUBCLASSES[(cls, eps_attr)] = sub
    return sub
