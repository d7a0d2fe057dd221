"""Grouped projections: the Linears of one block that read the same input run as ONE GEMM.

A decoder layer's attention computes q_proj(x), k_proj(x), v_proj(x) and its MLP
gate_proj(x), up_proj(x): five products of one input by five weights. patch(model,
group=True) runs each such set as one product by the concatenation of the weights
(Llama-3-8B: q/k/v 4096 + 1024 + 1024 = 6144 rows, gate/up 2 x 14336 = 28672 rows
of 4096), so a decode step launches 129 GEMMs instead of 225; each launch costs a
fixed time (its launch, the ramp-up, the tail of its last wave) that the bytes of
the weights do not.

What the user keeps. Each member keeps its own `weight` (and `bias`) Parameter,
the same object: make() copies the members' weights into one buffer [sum n, k]
owned by the Group and points each Parameter's data at its rows (a view), so
memory does not grow (the old storages are freed; while a group is made, one
group's size more) and state_dict, parameters() and checkpoints (torch.save,
safetensors, save_pretrained: the views do not overlap) are what they were.
load_state_dict copies into the views, so the product sees the new weights.
undo() (unpatch) gives each member an independent copy of its rows again.

How a call runs. The first member called computes the whole product and returns
its columns (a view of the output, split by torch.split); its siblings called
with the same input tensor (the same Python object, not modified in place since:
its _version) return theirs; the last one served clears the group's pending
product (under torch.inference_mode, whose tensors have no version counter,
and under torch.compile, the identity alone: an input changed in place between
siblings is not seen there; no family patch knows does that). Anything else runs
the member's own GEMM (aitune.nn's linear path):
  - a sibling called with another tensor while its columns wait (a cross
    attention's k/v read another input): the group is turned off for good
    (Group.off says why) and its members run separately;
  - weights that are no longer the group's views (model.to(), param.data = ...
    after patch): turned off likewise; patch after moving the model;
  - a shape whose fused product the registry has no tuned bucket for: separate
    GEMMs for that shape in eager mode (the fused shape is recorded as a miss;
    `python -m aitune tune` writes the fused shapes into its spec). A trace cannot
    ask per shape (Dynamo makes the batch dim symbolic once it has seen two sizes),
    so it asks whether the registry has the fused weight at any of _PROBE_ROWS, and
    linear_group runs PyTorch's one GEMM over the fused weight at a size it lacks;
    with static shapes (torch.compile(dynamic=False)) the trace asks at the shape
    itself, and traces the members' products (aitune.ops.traced_linear) where the
    registry has no kernel of its own for the fused one.
Under torch.compile the same Python runs at trace time: Dynamo sees the identity
test and traces one torch.ops.aitune.linear_group per group and the siblings'
slices, no pending state left behind. linear_group takes the members' weights
(not the buffer) and checks at run time that they are adjacent rows of one
storage, so a compiled graph stays right if the weights are replaced later
(separate GEMMs then). At trace time the registry is asked whether the fused
shape is tuned (a constant to Dynamo): where it is not, the members' own
aitune.linear calls are traced instead.

Groups are found by structure, as Hugging Face names them (Llama, Mistral, Qwen2,
Qwen3 and their kin): a module whose children q_proj, k_proj, v_proj (or
gate_proj, up_proj) are all plain nn.Linear modules patch takes, with the same
in_features, dtype and device, contiguous weights, and a bias on all or none.

A gate/up group of a gated MLP also runs with its SiLU-times-up as one kernel:
aitune.gated.
"""

import torch
import torch.nn.functional as F

from . import dispatch, nn, ops

# The sibling sets, by child name: each one reads the same input in the families
# patch knows (attention's projections, the gated MLP's two inputs).
SETS = (("q_proj", "k_proj", "v_proj"), ("gate_proj", "up_proj"))

_compiling = torch.compiler.is_compiling
_grad_enabled = torch.is_grad_enabled
_FALLBACK = ops._FALLBACK


class Group:
    """One set of sibling Linears run as one GEMM (see the module doc)."""

    def __init__(self, name, names, members):
        self.name, self.names, self.members = name, tuple(names), tuple(members)
        w0 = members[0].weight
        self.sizes = tuple(m.out_features for m in members)
        self.n, self.k = sum(self.sizes), w0.shape[1]
        self.dtype = ops.DTYPES.get(w0.dtype)
        self.all = (1 << len(members)) - 1
        self.bias = members[0].bias is not None   # a bool for traced code (a tensor there would be an input)
        self.cat = self.bcat = None           # the buffers the members' weights and biases view
        self.ptrs = self.bptrs = ()           # the addresses those views start at
        self.pending = None                   # (x, x._version, outputs, bitmask of members not served)
        self.off = None                       # why the group runs separately, once it does
        self.runs, self.d = {}, None          # runners of the fused product per (shape, dtype, device)
        self.fast = {}                        # x.shape -> the runner last used there (not _FALLBACK)
        self.checker = None

    def __repr__(self):
        return "<aitune group %s: %s, %d x %d%s>" % (self.name or "(model)", "+".join(self.names), self.n, self.k,
                                                      "" if self.off is None else ", off: " + self.off)

    def turn_off(self, why):
        """Run the members separately from now on; the buffers go (the members' weights
        hold what they still view)."""
        self.off, self.pending, self.runs, self.fast = why, None, {}, {}
        self.cat = self.bcat = None


def why_not(members):
    """None when members (modules, in order) can be one group, else why not (a phrase)."""
    w0 = members[0]._parameters.get("weight")
    if w0 is None or w0.dim() != 2:
        return "no 2-D weight"
    bias = [m._parameters.get("bias") is not None for m in members]
    if any(bias) and not all(bias):
        return "a bias on some, not all"
    seen = set()
    for m in members:
        w = m._parameters.get("weight")
        if w is None or w.dim() != 2 or w.shape[1] != w0.shape[1]:
            return "in_features differ"
        if w.dtype != w0.dtype or w.device != w0.device:
            return "dtypes or devices differ"
        if not w.is_contiguous():
            return "a weight is not contiguous"
        if id(w) in seen:
            return "a weight is shared between them"
        seen.add(id(w))
        b = m._parameters.get("bias")
        if b is not None and (b.dtype != w0.dtype or b.device != w0.device or b.dim() != 1):
            return "a bias of another dtype, device or rank"
    if w0.dtype not in ops.GEMM_DTYPES:
        return "%s (aitune's GEMMs take bf16 and f16)" % str(w0.dtype).replace("torch.", "")
    return None


def find(model, taken):
    """([(parent name, child names, members)], [(parent name, child names, why not)])
    of the sibling sets in model whose members are all in taken (a set of module ids)."""
    found, refused, used = [], [], set()
    for name, mod in model.named_modules():
        kids = mod._modules
        for names in SETS:
            if not all(n in kids for n in names):
                continue
            members = [kids[n] for n in names]
            if not all(id(m) in taken for m in members):
                continue
            why = why_not(members)
            if why is None and any(id(m) in used for m in members):
                why = "a member is in another group already (a module shared between parents)"
            if why is None:
                used.update(id(m) for m in members)
                found.append((name, names, members))
            else:
                refused.append((name, names, why))
    return found, refused


def _gather(params):
    """One buffer holding params' data as consecutive rows; each param's data becomes its
    view. Returns (buffer, addresses of the views)."""
    first = params[0]
    rows = sum(p.shape[0] for p in params)
    buf = torch.empty((rows,) + tuple(first.shape[1:]), dtype=first.dtype, device=first.device)
    at, ptrs = 0, []
    with torch.no_grad():
        for p in params:
            view = buf.narrow(0, at, p.shape[0])
            view.copy_(p.data)
            p.data = view
            ptrs.append(view.data_ptr())
            at += p.shape[0]
    return buf, tuple(ptrs)


def make(name, names, members, checker=None):
    """A Group over members (why_not() passed): their weights (and biases) become views
    of one buffer each, and each member's class becomes GroupedLinear."""
    g = Group(name, names, members)
    g.checker = checker
    g.cat, g.ptrs = _gather([m.weight for m in members])
    if members[0].bias is not None:
        g.bcat, g.bptrs = _gather([m.bias for m in members])
    for i, m in enumerate(members):
        m.__class__ = GroupedLinear
        m.__dict__["_aitune_member"] = (g, i)
    return g


def undo(g):
    """The members' weights and biases as independent tensors again (copies of what they
    hold now); the members stay GroupedLinear until patching swaps their class back."""
    with torch.no_grad():
        for m in g.members:
            for key in ("weight", "bias"):
                p = m._parameters.get(key)
                if p is not None:
                    p.data = p.data.clone()
            m.__dict__.pop("_aitune_member", None)
    g.turn_off("undone (unpatched)")


# ---- the forward ----

def _eager_product(g, x):
    """The fused product's column blocks for x in eager mode (and CUDA graph capture),
    or None: run the members separately."""
    d = dispatch._current
    if d is None:
        return None
    if g.d is not d:
        g.runs, g.fast, g.d = {}, {}, d
    # The runner last used at x's shape (it checks x's dtype and device: None where
    # they are not its own), else the one of x's (shape, dtype, device).
    run = g.fast.get(x.shape)
    if run is None:
        run = _group_runner(g, d, x)
        if run is None:
            return None
    if not intact(g):
        return None
    if _grad_enabled():
        ops.check_grad("linear", (x,) + tuple(m._parameters["weight"] for m in g.members), ("x",) + g.names)
    out = run(x, g.cat)
    if out is None:
        run = _group_runner(g, d, x)
        if run is None:
            return None
        out = run(x, g.cat)
    if g.bcat is not None:
        out.add_(g.bcat)
    # The columns as views: unsafe_split_with_sizes makes them for a quarter of
    # Tensor.split's host time (no view tracking for autograd, which aitune's ops refuse).
    return out.unsafe_split_with_sizes(g.sizes, -1)


def intact(g):
    """Whether the members' weights (and biases) are still the group's views; where not,
    the group is turned off. (Checked per call: param.data = ... leaves no other trace;
    the old buffer stays allocated, so its addresses are not reused.)"""
    moved = False
    for mod, ptr in zip(g.members, g.ptrs):
        moved |= mod._parameters["weight"].data_ptr() != ptr
    for mod, ptr in zip(g.members, g.bptrs):
        moved |= mod._parameters["bias"].data_ptr() != ptr
    if moved:
        g.turn_off("its weights are no longer views of the group's buffer (replaced after patch: "
                   "model.to(), param.data = ...; patch after moving the model)")
    return not moved


def _group_runner(g, d, x):
    """The runner of the fused product at x's (shape, dtype, device), made at its first
    call; None where it falls back (a miss, counted)."""
    key = (x.shape, x.dtype, x.get_device())
    run = g.runs.get(key)
    if run is None:
        ops.check_linear(x, g.cat, g.bcat)
        run = nn.gemm_run(d, g.runs, "linear", x, g.cat, key)
    if run is _FALLBACK:
        d.miss("gemm_nt", g.dtype or str(x.dtype), (ops._rows(x.shape), g.n, g.k))
        return None
    if g.runs.get(key) is run:
        g.fast[x.shape] = run       # the group's own (not a shared one past MODULE_RUNS)
    return run


def _traced_product(g, x):
    """Under torch.compile: one aitune::linear_group where the registry has the fused weight
    (at any m: an m it lacks runs cuBLAS over the fused weight at run time, a miss)."""
    dev = ops.trace_device(x)
    if ops.static_trace():
        # m is a constant: the fused product where the registry has a kernel of its
        # own for it, else the members' products, each as ops.traced_linear decides.
        if not ops.own_kernel("gemm_nt", ops.DTYPES.get(x.dtype), ops._rows(x.shape), g.n, g.k, dev):
            return None
    elif not ops.tuned_somewhere("gemm_nt", ops.DTYPES.get(x.dtype), g.n, g.k, dev):
        return None
    ms = g.members
    ws = [mod._parameters["weight"] for mod in ms]
    bs = [mod._parameters["bias"] for mod in ms] if g.bias else []
    return ops.linear_group(x, ws, bs).split(g.sizes, -1)


def grouped_forward(self, x):
    g, i = self._aitune_member
    p = g.pending
    if p is not None:
        if p[0] is x:
            # Traced (_version is data Dynamo cannot branch on), or an inference tensor:
            # the identity alone.
            if p[3] >> i & 1 and (p[1] is None or p[1] == x._version):
                left = p[3] & ~(1 << i)
                g.pending = (x, p[1], p[2], left) if left else None
                return p[2][i] if g.checker is None else _checked(self, g, i, x, p[2][i])
        elif p[3] >> i & 1:
            # Its columns wait for another input: this set does not share its input.
            g.turn_off("%s was called with another input than its siblings'" % g.names[i])
    if g.off is not None:
        return nn.linear_forward(self, x)
    if _compiling():
        outs, ver = _traced_product(g, x), None
    else:
        # An inference tensor (torch.inference_mode) has no version counter: identity alone.
        outs, ver = _eager_product(g, x), None if x.is_inference() else x._version
    if outs is None:
        return nn.linear_forward(self, x)
    g.pending = (x, ver, outs, g.all & ~(1 << i))
    return outs[i] if g.checker is None else _checked(self, g, i, x, outs[i])


def _checked(self, g, i, x, out):
    if _compiling():
        return out
    st = self.__dict__.get("_aitune")
    p = self._parameters
    ref = F.linear(x, p["weight"], p.get("bias"))
    g.checker.compare(st.name if st else g.names[i], "aitune::linear_group",
                      (ops._rows(x.shape), g.n, g.k), out, ref)
    return out


class GroupedLinear(nn.Linear):
    """A member of a Group: an nn.Linear (its own weight and bias Parameters, views of the
    group's buffers) whose product is computed with its siblings' (see the module doc)."""

    forward = grouped_forward
