"""Gated MLPs: a gate/up group and the SiLU-times-up after it as one kernel.

A gated MLP computes down_proj(silu(gate_proj(x)) * up_proj(x)). Its gate/up group's
buffer [gate; up] (2n x k, aitune.grouping) is gemm_swiglu's B, so the group's product
and the SiLU-times-up after it are one kernel (aitune::swiglu; on an H100 a Llama-3-8B
2048-token prefill spent 1.7 ms of 55.5 in Inductor's separate silu * mul kernel).
patch fuses the MLP modules takes() accepts: fuse() swaps each one's class for
mlp_class()'s (the instance kept; unfuse() swaps it back), whose forward is
down_proj(swiglu(x)) where the fused kernel applies and the module's own forward (the
grouped gate/up, then PyTorch's silu * mul) elsewhere:
  - eager mode (and CUDA graph capture): where the group is on, its weights are still
    its views, and the registry has a kernel for gemm_swiglu at x's (m, n, k); a
    shape it has none for is a miss and runs the module's forward;
  - under torch.compile: with static shapes, where the registry has a kernel of its
    own at the shape; with dynamic shapes, where it has one for the weights at any
    size (aitune.ops.swiglu_in_trace: the op then asks per shape, and runs the group's
    one GEMM and PyTorch's silu * mul at a size it lacks).
patch(model, swiglu=False) leaves the MLPs unfused (their gate/up still grouped).
"""

import torch

from . import dispatch, grouping, nn, ops

# Gated MLPs whose forward is down_proj(act_fn(gate_proj(x)) * up_proj(x)) (transformers 5.x).
MLP_CLASSES = ("LlamaMLP", "MistralMLP", "Qwen2MLP", "Qwen3MLP")
# act_fn classes that compute F.silu: torch's, and transformers' (ACT2FN["silu"]; "swish" is torch's).
SILU_CLASSES = ("SiLUActivation",)

_compiling = torch.compiler.is_compiling
_grad_enabled = torch.is_grad_enabled
_FALLBACK = ops._FALLBACK


def takes(mod, g, taken):
    """Whether mod, the parent of Group g, is a gated MLP patch fuses: a class of
    MLP_CLASSES (by name: other families' MLPs of the same structure clamp or scale)
    whose children are exactly gate_proj and up_proj (g, no bias), down_proj (a Linear
    patch took: its id in taken) and act_fn, a SiLU, and that has no parameters or
    buffers of its own."""
    kids = mod._modules
    if type(mod).__name__ not in MLP_CLASSES or g.names != ("gate_proj", "up_proj") or g.bias:
        return False
    if set(kids) != {"gate_proj", "up_proj", "down_proj", "act_fn"} or mod._parameters or mod._buffers:
        return False
    act = kids["act_fn"]
    return id(kids["down_proj"]) in taken and (type(act) is torch.nn.SiLU or type(act).__name__ in SILU_CLASSES)


class GatedMLP:
    """A gated MLP whose gate/up Group runs with its SiLU-times-up as one aitune::swiglu
    (see the module doc)."""

    def __init__(self, name, module, cls, group, checker=None):
        self.name, self.module, self.cls, self.group, self.checker = name, module, cls, group, checker
        self.n, self.k = group.sizes[0], group.k
        self.runs, self.d = {}, None          # runners of gemm_swiglu per (shape, dtype, device)

    def __repr__(self):
        g = self.group
        return "<aitune gated MLP %s: swiglu %d x %d%s>" % (self.name or "(model)", self.n, self.k,
                                                           "" if g.off is None else ", off: " + g.off)


def fuse(name, module, group, checker=None):
    """A GatedMLP over module (a gated MLP patch takes, whose gate/up are group): its
    class becomes mlp_class()'s."""
    mlp = GatedMLP(name, module, type(module), group, checker)
    module.__class__ = mlp_class(mlp.cls)
    module.__dict__["_aitune_mlp"] = mlp
    return mlp


def unfuse(mlp):
    """The module's own class again."""
    mlp.module.__class__ = mlp.cls
    mlp.module.__dict__.pop("_aitune_mlp", None)
    mlp.runs = {}


def _eager_swiglu(mlp, x):
    """silu(gate_proj(x)) * up_proj(x) in eager mode (and CUDA graph capture): one
    gemm_swiglu over the group's buffer, or None: run the module's own forward."""
    d = dispatch._current
    if d is None:
        return None
    if mlp.d is not d:
        mlp.runs, mlp.d = {}, d
    g = mlp.group
    key = (x.shape, x.dtype, x.get_device())
    run = mlp.runs.get(key)
    if run is None:
        gw, uw = (m._parameters["weight"] for m in g.members)
        ops.check_swiglu(x, gw, uw)
        run = nn.gemm_run(d, mlp.runs, "swiglu", x, g.cat, key)
    if run is _FALLBACK:
        d.miss("gemm_swiglu", g.dtype or str(x.dtype), (ops._rows(x.shape), mlp.n, mlp.k))
        return None
    if not grouping.intact(g):
        return None
    ws = tuple(m._parameters["weight"] for m in g.members)
    if _grad_enabled():
        ops.check_grad("swiglu", (x,) + ws, ("x",) + g.names)
    out = run(x, g.cat)
    if mlp.checker is not None:
        mlp.checker.compare(mlp.name, "aitune::swiglu", (ops._rows(x.shape), mlp.n, mlp.k), out,
                            ops.ref_swiglu(x, *ws))
    return out


def mlp_forward(self, x, orig):
    mlp = self._aitune_mlp
    g = mlp.group
    if g.off is None:
        if _compiling():
            if ops.swiglu_in_trace(x, mlp.n, mlp.k):
                gate, up = g.members
                return self.down_proj(ops.swiglu(x, gate._parameters["weight"], up._parameters["weight"]))
        else:
            h = _eager_swiglu(mlp, x)
            if h is not None:
                return self.down_proj(h)
    return orig(self, x)


_MLP_SUBCLASSES = {}


def mlp_class(cls):
    """A subclass of cls (a gated MLP) whose forward runs aitune::swiglu where it applies
    and cls's forward elsewhere (one per cls)."""
    sub = _MLP_SUBCLASSES.get(cls)
    if sub is None:
        orig = cls.forward

        def forward(self, x):
            return mlp_forward(self, x, orig)
        sub = type("Aitune" + cls.__name__, (cls,), {"forward": forward, "__module__": __name__,
                                                     "__doc__": "%s over aitune::swiglu" % cls.__name__})
        _MLP_SUBCLASSES[cls] = sub
    return sub
