"""patch(model) / unpatch(model): a model's modules over aitune's ops, in place.

patch swaps the class of each module it takes (the instance, its parameters,
buffers and hooks stay; state_dict is unchanged) and unpatch swaps it back:
  - torch.nn.Linear (exactly that class, not subclasses) -> aitune.nn.Linear;
  - torch.nn.LayerNorm -> aitune.nn.LayerNorm; torch.nn.RMSNorm -> aitune.nn.RMSNorm;
  - Hugging Face RMSNorm modules, matched by class name and structure without
    importing transformers: the classes in RMS_NORM_CLASSES (Llama, Mistral,
    Mixtral, Qwen2, Qwen2-MoE, Qwen3, Phi-3, Granite), and any other class whose
    name ends in "RMSNorm", that has a 1-D `weight` and a float `variance_epsilon`,
    and no other parameters or children, except the families that scale by
    (1 + weight) (Gemma): they compute weight * (x / rms(x)).to(x.dtype), which
    aitune::rms_norm computes in fp32 rounded once (within a bf16 ulp of theirs).

The registry (a path, a Registry or a Dispatcher; default $AITUNE_DB) becomes the
one the aitune ops use (aitune.use). Each module binds a shape's kernel on its first
call of that shape: run the model once (a warm-up, as graph capture needs anyway)
before capturing a CUDA graph; patch does not guess shapes. A shape the registry
cannot answer runs PyTorch's computation and is recorded as a miss (Patch.misses();
unpatch writes libaitune's to the registry's misses table for
`python -m aitune tune --from-misses`).

group=True (the default) runs the projections that read one input as one GEMM
(q_proj/k_proj/v_proj, gate_proj/up_proj: aitune.grouping); each member keeps its
Parameters (views of one buffer per group), state_dict is unchanged, and unpatch
gives them independent storage again. Patch.groups lists the groups made (each
one's `off` says why it runs separately, once it does), Patch.ungrouped the
sibling sets left apart and why.

With group=True (and swiglu=True, the default), each gated MLP also runs its gate/up
product and silu(gate) * up as one kernel where the registry has gemm_swiglu at the
shape (aitune.gated: the Llama, Mistral, Qwen2 and Qwen3 MLPs, matched by class name
and structure, whose act_fn is a SiLU). Its class is swapped (the instance kept;
unpatch swaps it back); Patch.mlps lists them.

attention=True (the default) runs the decode steps' attention of Hugging Face models
that use "sdpa" as aitune::attn_decode where the registry has it (aitune.attention:
the config's attention implementation becomes "aitune", whose masks are sdpa's; a
prefill, and a shape without a kernel, run sdpa as before). Patch.attention names the
implementation replaced (None: none was).

check=True compares every patched call (a fused MLP's swiglu included) with
PyTorch's result on the same input (within the dtype's tolerance,
aitune.ops.TOLERANCE), keeps aitune's result, and names the first call that differs
(Patch.first_mismatch, and a warning);
check="raise" raises an AituneError there instead. Comparing reads the GPU, so
check mode is for eager runs, not for graph capture.
"""

import warnings

import torch

from . import attention as attn
from . import dispatch, gated, grouping, nn, ops
from ._lib import AituneError

RMS_NORM_CLASSES = {name: "variance_epsilon" for name in (
    "LlamaRMSNorm", "MistralRMSNorm", "MixtralRMSNorm", "Qwen2RMSNorm", "Qwen2MoeRMSNorm", "Qwen3RMSNorm",
    "Qwen3MoeRMSNorm", "Phi3RMSNorm", "GraniteRMSNorm")}
# Families whose RMSNorm is not weight * normalized x.
NOT_RMS_NORM = ("Gemma",)


class Checker:
    """Check mode: compares and keeps the first difference."""

    def __init__(self, mode):
        self.mode, self.first, self.compared = mode, None, 0

    def compare(self, name, op, shape, got, ref):
        self.compared += 1
        if self.first is not None:
            return
        why = ops.differs(got, ref)
        if why is None:
            return
        self.first = "%s (%s, %s, %s): %s" % (name or "?", op, "x".join(map(str, shape)),
                                             str(ref.dtype).replace("torch.", ""), why)
        if self.mode == "raise":
            raise AituneError("check: " + self.first)
        warnings.warn("aitune check: first difference: " + self.first, stacklevel=3)


class Patch:
    """What patch() did: the modules swapped, the dispatcher, check mode's findings."""

    def __init__(self, model, dispatcher, checker):
        self.model, self.dispatcher, self.checker = model, dispatcher, checker
        self.swapped = []      # (qualified name, module, original class, kind)
        self.groups = []       # aitune.grouping.Group
        self.ungrouped = []    # (parent name, child names, why not)
        self.mlps = []         # aitune.gated.GatedMLP
        self.attention = None  # the attention implementation aitune.attention replaced

    @property
    def counts(self):
        c = {}
        for _, _, _, kind in self.swapped:
            c[kind] = c.get(kind, 0) + 1
        return c

    @property
    def first_mismatch(self):
        """None, or the first call check mode found different from PyTorch's (a line)."""
        return self.checker.first if self.checker else None

    @property
    def compared(self):
        return self.checker.compared if self.checker else 0

    def misses(self):
        return self.dispatcher.misses()

    def unpatch(self):
        unpatch(self.model)

    def __repr__(self):
        kinds = ", ".join("%d %s" % (n, k) for k, n in sorted(self.counts.items())) or "nothing"
        if self.groups:
            kinds += "; %d groups" % len(self.groups)
        if self.mlps:
            kinds += "; %d gated MLPs" % len(self.mlps)
        if self.attention:
            kinds += "; attention"
        return "<aitune.Patch: %s over %s>" % (kinds, self.dispatcher.reg.path)


def rms_norm_eps_attr(mod, classes=None):
    """The eps attribute of a Hugging Face RMSNorm module patch takes, else None."""
    name = type(mod).__name__
    table = RMS_NORM_CLASSES if classes is None else classes
    if name.startswith(NOT_RMS_NORM):
        return None
    attr = table.get(name)
    if attr is None:
        if classes is not None or not name.endswith("RMSNorm"):
            return None
        attr = "variance_epsilon"
    w = mod._parameters.get("weight")
    if (w is None or w.dim() != 1 or len(mod._parameters) != 1 or len(mod._modules) != 0
            or not isinstance(getattr(mod, attr, None), float)):
        return None
    return attr


def _target(mod, linear, norms, classes):
    """(new class, kind) for a module patch takes, else None."""
    t = type(mod)
    if linear and t is torch.nn.Linear:
        return nn.Linear, "linear"
    if not norms:
        return None
    if t is torch.nn.LayerNorm:
        return nn.LayerNorm, "layer_norm"
    if t is torch.nn.RMSNorm:
        return nn.RMSNorm, "rms_norm"
    attr = rms_norm_eps_attr(mod, classes)
    if attr is not None:
        return nn.rms_norm_class(t, attr), "rms_norm"
    return None


def patch(model, registry=None, check=False, linear=True, norms=True, rms_norm_classes=None, arch=None,
          group=True, swiglu=True, attention=True):
    """Swap model's modules for aitune's (see the module doc); returns a Patch.

    registry: a path, Registry or Dispatcher (default: the one in use, else $AITUNE_DB or
    ~/.local/share/aitune/registry.db). check: False, True (warn at the first difference)
    or "raise". linear: take the nn.Linear modules. norms: True (aitune's kernel in eager
    mode and CUDA graphs, PyTorch's computation where torch.compile traces them, which
    Inductor fuses with their neighbours), "always" (aitune's kernel under torch.compile
    too), False (leave the norms alone: PyTorch's everywhere). rms_norm_classes: {class
    name: eps attribute} to take instead of RMS_NORM_CLASSES and the structural match.
    arch: "sm_90" to force (default: each device's). group: run sibling projections
    as one GEMM (aitune.grouping; with linear only). swiglu: each gated MLP's gate/up
    and SiLU-times-up as one aitune::swiglu where the registry has it (with group).
    attention: decode steps' attention as aitune::attn_decode (aitune.attention)."""
    if check not in (False, True, "raise"):
        raise AituneError("patch: check must be False, True or \"raise\", not %r" % (check,))
    if norms not in (False, True, "always"):
        raise AituneError("patch: norms must be True, False or \"always\", not %r" % (norms,))
    if group not in (False, True):
        raise AituneError("patch: group must be True or False, not %r" % (group,))
    if swiglu not in (False, True):
        raise AituneError("patch: swiglu must be True or False, not %r" % (swiglu,))
    if attention not in (False, True):
        raise AituneError("patch: attention must be True or False, not %r" % (attention,))
    if model.__dict__.get("_aitune_patch") is not None:
        raise AituneError("patch: the model is patched already (aitune.unpatch(model) first)")
    d = dispatch.use(registry, **({"arch": arch} if arch else {}))
    checker = Checker(check) if check else None
    p = Patch(model, d, checker)
    for name, mod in model.named_modules():
        tgt = _target(mod, linear, norms, rms_norm_classes)
        if tgt is None:
            continue
        cls, kind = tgt
        p.swapped.append((name, mod, type(mod), kind))
        mod.__class__ = cls
        st = nn._State(d, checker, name)
        mod.__dict__["_aitune"] = st
        if kind != "linear" and norms == "always":
            mod.__dict__["aitune_in_compile"] = True
    if group:
        taken = {id(mod) for _, mod, _, kind in p.swapped if kind == "linear"}
        found, p.ungrouped = grouping.find(model, taken)
        p.groups = [grouping.make(name, names, members, checker) for name, names, members in found]
        for g in p.groups if swiglu else ():
            mod = model.get_submodule(g.name)
            if gated.takes(mod, g, taken):
                p.mlps.append(gated.fuse(g.name, mod, g, checker))
    if attention:
        p.attention = attn.install(model, checker)
    model.__dict__["_aitune_patch"] = p
    return p


def unpatch(model):
    """Swap the classes back, drop the modules' runners, and write the misses libaitune
    counted to the registry (a read-only registry: a warning). Returns the Patch."""
    p = model.__dict__.pop("_aitune_patch", None)
    if p is None:
        raise AituneError("unpatch: the model is not patched")
    attn.uninstall(model, p.attention)
    for mlp in p.mlps:
        gated.unfuse(mlp)
    for g in p.groups:
        grouping.undo(g)
    for _, mod, cls, _ in p.swapped:
        mod.__class__ = cls
        mod.__dict__.pop("_aitune", None)
        mod.__dict__.pop("aitune_in_compile", None)
    try:
        p.dispatcher.flush_misses()
    except AituneError as e:
        warnings.warn("aitune unpatch: misses not written to the registry: %s" % e, stacklevel=2)
    return p
