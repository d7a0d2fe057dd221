"""The aitune ops in PyTorch: a torch.library namespace, fake implementations, runners.

    torch.ops.aitune.linear(x, weight, bias=None)     x @ weight.T + bias   (F.linear; gemm_nt)
    torch.ops.aitune.linear_group(x, weights, biases) F.linear by each weight, concatenated on the
                                                      last dim: one gemm_nt where the weights are
                                                      adjacent rows of one storage (aitune.grouping)
    torch.ops.aitune.rms_norm(x, weight, eps)         over the last dim, in fp32, rounded once (rmsnorm)
    torch.ops.aitune.layer_norm(x, weight, bias, eps) over the last dim, biased variance (layernorm)
    torch.ops.aitune.softmax(x, dim=-1)               over the last dim only (softmax)
    torch.ops.aitune.swiglu(x, gate_weight, up_weight) silu(x @ gate_weight.T) * (x @ up_weight.T): a gated
                                                      MLP's first half in one kernel (gemm_swiglu) where
                                                      the weights are adjacent rows of one storage
    torch.ops.aitune.attn_decode(q, k, v, bias, scale) one query per sequence over a kv cache:
                                                      q [b, h, d], k and v [b, g, n, d] (g kv heads,
                                                      h a multiple of g), bias [b, n] added to the
                                                      scores (0 or -inf: the cache's mask) -> [b, h, d]
                                                      (attn_decode; aitune.attention runs it for
                                                      Hugging Face models' decode steps)

Registered with a torch.library.Library directly (lib.define / lib.impl: a Python
kernel per dispatch key), not @torch.library.custom_op, whose wrapper costs several
times more per call. Each op has:
  - a fake implementation (torch.library.register_fake), which also serves the meta
    device: torch.compile(fullgraph=True) traces the ops without running them, and
    Inductor fuses the code around them;
  - a CUDA kernel: the registry's tuned kernel through the dispatch cache
    (aitune.dispatch), PyTorch's own computation where the registry has no answer
    (recorded as a miss);
  - a CPU kernel: PyTorch's own computation (aitune tunes CUDA kernels only).

Contract of the CUDA kernels, which the fake implementations share:
  - outputs are new tensors from PyTorch's allocator (so graph capture and
    torch.compile's memory planning see them), in the input's dtype; a kernel's
    workspace is one buffer per (device, stream), from the allocator, grown when
    a kernel needs more and kept while the process lives (a captured graph keeps
    the address): launches on one stream are ordered, so they share it, as
    cuBLAS's workspace is shared (two graphs captured on one stream and replayed
    on two streams at once would share it too);
  - no host synchronisation, no allocation outside PyTorch's allocator; a shape's
    first call loads and binds its kernel, which must happen outside graph capture
    (warm up first; see aitune.dispatch);
  - inference only: a tensor that requires grad while grad mode is on is an
    AituneError (wrap the call in torch.no_grad() or torch.inference_mode());
  - an input that is not contiguous or not 16-byte aligned is copied first (one
    copy kernel), never refused; arguments of the wrong rank, size, dtype or device
    are refused with an AituneError that names the argument;
  - tuned dtypes: bf16 and f16 for linear, linear_group and swiglu; bf16, f16 and f32 for the others;
    another dtype, an empty tensor, or a registry without an answer runs PyTorch's
    computation. linear's bias is added by PyTorch after the tuned product (the
    GEMM templates have no bias epilogue yet);
  - linear_group checks at every call that its weights (and biases) are adjacent
    rows of one storage (aitune.grouping's views) and runs one GEMM over them;
    weights that are not (replaced since) or a fused shape the registry has no
    tuned bucket for run as the separate products, concatenated;
  - swiglu runs gemm_swiglu (B = [gate; up], 2n x k: the gate/up group's buffer) where
    its two weights are adjacent rows of one storage and the registry has a kernel
    for (m, n, k), n the output's width; anything else runs PyTorch's computation,
    F.silu(F.linear(x, gate)) * F.linear(x, up) (a miss). Weights that are adjacent but a
    shape without a kernel run the one GEMM over both (linear_group's way), then
    PyTorch's silu * mul. The kernel computes both products, SiLU and the product in
    fp32 and rounds once; PyTorch rounds each product first (within check mode's
    tolerance of each other). gemm_swiglu's families: wgmma at prefill sizes, swapab's
    decode kernel at m <= 64, rowdot at m <= 4; the registry holds no vendor winner for it.

What a trace contains (traced_linear, and aitune.grouping's fused products). With
static shapes (torch.compile(dynamic=False), as transformers' compiled generation
compiles), each product's m is a constant and the registry is asked at trace time:
a shape it answers with a template's kernel is traced as the aitune op; one the
vendor holds, or one it does not answer (a miss, recorded then), as F.linear, so
Inductor sees what plain torch.compile sees there (its cuBLAS call, and its
epilogue fused). With dynamic shapes m is symbolic and every product is traced as
the aitune op, which asks the registry per shape at run time. traced_swiglu asks the
same at static shapes; with dynamic shapes it traces the op where the registry has
gemm_swiglu for the weights at all (tuned_somewhere), and PyTorch's computation where not.
"""

import ctypes
import math
import threading

import torch
import torch.nn.functional as F

from . import _lib
from ._lib import AituneError, MISUSE
from . import dispatch
from .registry import CACHED_AT

DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32"}
GEMM_DTYPES = (torch.bfloat16, torch.float16)
# libaitune's op for each torch op, and its dims.
OPS = {"linear": ("gemm_nt", ("m", "n", "k")), "rms_norm": ("rmsnorm", ("rows", "cols")),
       "layer_norm": ("layernorm", ("rows", "cols")), "softmax": ("softmax", ("rows", "cols")),
       "swiglu": ("gemm_swiglu", ("m", "n", "k")), "attn_decode": ("attn_decode", ("b", "h", "g", "n", "d"))}
# The GEMM ops' B: its rows per column of the output D (gemm_swiglu's B is [gate; up]).
B_ROWS = {"linear": 1, "swiglu": 2}

_grad_enabled = torch.is_grad_enabled


# ---- argument checks (shared by the fake and the real kernels) ----

def _refuse(op, msg):
    raise AituneError("aitune::%s: %s" % (op, msg), MISUSE)


def check_grad(op, tensors, names):
    """An AituneError when grad mode is on and one of tensors requires grad."""
    if _grad_enabled():
        for t, name in zip(tensors, names):
            if t is not None and t.requires_grad:
                _refuse(op, "'%s' requires grad: aitune ops are for inference (call under torch.no_grad() or "
                            "torch.inference_mode(); unpatch the model to train it)" % name)


def _same(op, x, t, name):
    """Refuse t (argument name) unless it has x's dtype and device (x: a tensor, or a
    (dtype, device) pair)."""
    dtype, device = x if isinstance(x, tuple) else (x.dtype, x.device)
    if t.dtype != dtype:
        _refuse(op, "'%s' is %s, x is %s (cast one of them)" % (name, t.dtype, dtype))
    if t.device != device:
        _refuse(op, "'%s' is on %s, x on %s" % (name, t.device, device))


def check_linear(x, weight, bias):
    check_grad("linear", (x, weight, bias), ("x", "weight", "bias"))
    if x.dim() < 1 or weight.dim() != 2:
        _refuse("linear", "want x [..., k] and weight [n, k]; got x %s, weight %s"
                % (list(x.shape), list(weight.shape)))
    if x.shape[-1] != weight.shape[1]:
        _refuse("linear", "x has k = %d, weight [n, k] has k = %d" % (x.shape[-1], weight.shape[1]))
    _same("linear", x, weight, "weight")
    if bias is not None:
        if bias.dim() != 1 or bias.shape[0] != weight.shape[0]:
            _refuse("linear", "bias must be [%d], got %s" % (weight.shape[0], list(bias.shape)))
        _same("linear", x, bias, "bias")


def check_linear_group(x, weights, biases):
    if len(weights) < 1:
        _refuse("linear_group", "want one weight at least")
    if biases and len(biases) != len(weights):
        _refuse("linear_group", "%d biases for %d weights (give one per weight, or none)" % (len(biases), len(weights)))
    for i, w in enumerate(weights):
        try:
            check_linear(x, w, biases[i] if biases else None)
        except AituneError as e:
            raise AituneError(str(e).replace("aitune::linear:", "aitune::linear_group: weight %d:" % i), MISUSE) \
                from None


def check_swiglu(x, gate_weight, up_weight):
    check_grad("swiglu", (x, gate_weight, up_weight), ("x", "gate_weight", "up_weight"))
    if x.dim() < 1 or gate_weight.dim() != 2 or up_weight.dim() != 2:
        _refuse("swiglu", "want x [..., k], gate_weight and up_weight [n, k]; got x %s, gate_weight %s, up_weight %s"
                % (list(x.shape), list(gate_weight.shape), list(up_weight.shape)))
    if gate_weight.shape != up_weight.shape:
        _refuse("swiglu", "gate_weight is %s, up_weight %s (want one [n, k] each)"
                % (list(gate_weight.shape), list(up_weight.shape)))
    if x.shape[-1] != gate_weight.shape[1]:
        _refuse("swiglu", "x has k = %d, the weights [n, k] have k = %d" % (x.shape[-1], gate_weight.shape[1]))
    _same("swiglu", x, gate_weight, "gate_weight")
    _same("swiglu", x, up_weight, "up_weight")


def check_attn_decode(q, k, v, bias):
    check_grad("attn_decode", (q, k, v, bias), ("q", "k", "v", "bias"))
    if q.dim() != 3 or k.dim() != 4 or v.dim() != 4 or bias.dim() != 2:
        _refuse("attn_decode", "want q [b, h, d], k and v [b, g, n, d], bias [b, n]; got q %s, k %s, v %s, bias %s"
                % (list(q.shape), list(k.shape), list(v.shape), list(bias.shape)))
    b, h, d = q.shape
    if k.shape != v.shape or k.shape[0] != b or k.shape[3] != d:
        _refuse("attn_decode", "k and v must be [%d, g, n, %d] alike; got k %s, v %s" % (b, d, list(k.shape),
                                                                                         list(v.shape)))
    if k.shape[1] < 1 or h % k.shape[1]:
        _refuse("attn_decode", "q's %d heads are not a multiple of k's %d kv heads" % (h, k.shape[1]))
    if tuple(bias.shape) != (b, k.shape[2]):
        _refuse("attn_decode", "bias must be [%d, %d], got %s" % (b, k.shape[2], list(bias.shape)))
    for t, name in ((k, "k"), (v, "v"), (bias, "bias")):
        _same("attn_decode", q, t, name)


def check_norm(op, x, weight, bias=None):
    check_grad(op, (x, weight, bias), ("x", "weight", "bias"))
    if x.dim() < 1:
        _refuse(op, "x must have at least one dim")
    for t, name in ((weight, "weight"), (bias, "bias")):
        if t is None:
            continue
        if t.dim() != 1 or t.shape[0] != x.shape[-1]:
            _refuse(op, "'%s' must be [%d] (x's last dim), got %s" % (name, x.shape[-1], list(t.shape)))
        _same(op, x, t, name)


def check_softmax(x, dim):
    check_grad("softmax", (x,), ("x",))
    if x.dim() < 1:
        _refuse("softmax", "x must have at least one dim")
    if not -x.dim() <= dim < x.dim():
        _refuse("softmax", "dim %d is out of range for %d dims" % (dim, x.dim()))


# ---- PyTorch's computation: the CPU kernels, the fallback, and check mode's reference ----

def ref_linear(x, weight, bias=None):
    return F.linear(x, weight, bias)


def ref_swiglu(x, gate_weight, up_weight):
    return F.silu(F.linear(x, gate_weight)) * F.linear(x, up_weight)


def ref_rms_norm(x, weight, eps):
    return F.rms_norm(x.float(), (x.shape[-1],), weight.float(), eps).to(x.dtype)


def ref_layer_norm(x, weight, bias, eps):
    b = bias.float() if bias is not None else None
    return F.layer_norm(x.float(), (x.shape[-1],), weight.float(), b, eps).to(x.dtype)


def ref_softmax(x, dim=-1):
    return torch.softmax(x.float(), dim).to(x.dtype)


def ref_attn_decode(q, k, v, bias, scale):
    """attn_decode in fp32: each query head over its kv head's keys (a sequence whose
    keys are all -inf gives zeros)."""
    rep = q.shape[1] // k.shape[1]
    kk = k.float().repeat_interleave(rep, dim=1)
    vv = v.float().repeat_interleave(rep, dim=1)
    s = torch.einsum("bhd,bhnd->bhn", q.float(), kk) * scale + bias.float()[:, None, :]
    p = torch.softmax(s, -1).nan_to_num(0.0)
    return torch.einsum("bhn,bhnd->bhd", p, vv).to(q.dtype)


# ---- runners: a bound launch wrapped for tensors of one shape ----

def _aligned(t):
    """t, or a contiguous 16-byte aligned copy of it."""
    if t.is_contiguous() and not t.data_ptr() & 15:
        return t
    return t.clone(memory_format=torch.contiguous_format) if t.is_contiguous() else t.contiguous()


def _rows(shape):
    n = 1
    for s in shape[:-1]:
        n *= s
    return n


# Workspaces, one per (device, stream), grown as needed and never freed (a captured
# graph keeps the address it was captured with): launches on one stream run in
# order, so they share it, as cuBLAS's workspace is shared per stream.
_workspaces = {}


def workspace(dev, device, stream, nbytes):
    """The address of a workspace of at least nbytes for launches on (dev, stream)."""
    key = (dev, stream)
    w = _workspaces.get(key)
    if w is None or w[1] < nbytes:
        size = max(nbytes, 1 << 16, 2 * w[1] if w else 0)
        t = torch.empty(size, dtype=torch.uint8, device=device)
        keep = (w[2] + [t]) if w else [t]
        w = _workspaces[key] = (t.data_ptr(), size, keep)
    return w[0]


# Per (dtype, device): a one-element tensor whose zero-stride views are the runners'
# output templates (see _out_template). Kept while the process lives (one allocator
# block each).
_bases = {}


def _out_template(out_shape, dtype, device):
    """A zero-stride view of shape out_shape: torch.empty_like of it is a new contiguous
    tensor of that shape, dtype and device from PyTorch's allocator, for half the host
    time of torch.empty(shape, dtype=, device=) (no keywords to parse). None where
    empty_like would not give a contiguous tensor, or during graph capture (the base
    would come from the graph's pool): the runner calls torch.empty then."""
    key = (dtype, device)
    base = _bases.get(key)
    if base is None:
        if device.type == "cuda" and torch.cuda.is_current_stream_capturing():
            return None
        base = _bases[key] = torch.empty(1, dtype=dtype, device=device)
    t = base.expand(out_shape)
    probe = torch.empty_like(t)
    return t if probe.is_contiguous() and probe.shape == t.shape else None


def _relaunch(b, vals, s, dev, err):
    """A launch refused because this thread has no current context (a thread that made
    no CUDA runtime call yet): make the device's primary context current, try again."""
    if dev < 0 or "context" not in str(err):
        raise err
    torch.cuda.set_device(dev)
    b.launch(vals, s)


def _cached_failed(b, rc, vals, s, dev):
    """A cached launch returned rc: raise its error, or launch again where _relaunch can."""
    try:
        b.reg._fail(rc)
    except AituneError as e:
        _relaunch(b, vals, s, dev, e)


def _weight_for(check_w, c):
    """(the tensor to launch, its address) for a weight c whose address, dtype or layout
    is not the one a runner checked last: c, or its contiguous 16-byte aligned copy;
    (None, 0) for one the runner was not made for (check_w raises on one the op
    refuses)."""
    if not check_w(c):
        return None, 0
    if c.data_ptr() & 15 or not c.is_contiguous():
        c = _aligned(c)
    return c, c.data_ptr()


def trace_device(x):
    """x's CUDA device index at trace time, -1 off CUDA (the tests' CPU tensors)."""
    dev = x.device.index if x.device.type == "cuda" else -1
    return -1 if dev is None else dev


def _runner(b, out_shape, dtype, device, dev, nbufs_in, nscalars, check_w=None, wptr=None):
    """run(*inputs, *scalars) -> out for a Bound whose op takes nbufs_in input buffers,
    one output, then nscalars scalars (as the aitune ops do).

    With nbufs_in == 2 (linear: run(x, w); rms_norm: run(x, w, eps)) the call is the
    hot path of the modules, so it does per call only what can change: x's dtype,
    device, address and layout (another dtype or device: run returns None, the
    caller's slow path finds the runner for it), the output, the stream. The weight
    is checked by check_w(w) when its address is not the one checked last (wptr: the
    address a launch was bound for), or its dtype or layout changed: check_w raises
    on a weight the op refuses, and returns False for one the runner was not made for
    (a Linear's weight of another n, replaced by param.data = ...), where run returns
    None; a weight not contiguous or not 16-byte aligned is copied. A module's weight
    is checked once. The launch is one pack into the runner's aitune_cached block
    for this thread and one ctypes call (registry.Bound)."""
    ws = b.ws_bytes
    empty, empty_like = torch.empty, torch.empty_like
    tmpl = _out_template(out_shape, dtype, device)
    # The current stream as an int, without a torch.cuda.Stream object; 0 off CUDA
    # (the tests' recording libcuda).
    raw = torch._C._cuda_getCurrentRawStream if dev >= 0 else None

    if nbufs_in == 2 and _lib.hot() is not None:
        return _hot_runner(b, out_shape, dtype, device, dev, nscalars, check_w, wptr, tmpl, raw)

    if nbufs_in == 2:
        cpack, cfn, new_block = b._cpack, b._cfn, b.cached_block
        mine = threading.local()      # .blk: this thread's aitune_cached block
        seen = [wptr]                 # the weight address checked last
        # The workspace's address for the stream last used (a workspace outgrown stays
        # allocated, so the address stays good), as one tuple, replaced whole: threads
        # that share the runner never pair one stream with another's workspace. 0 for
        # a kernel without one (the block's entry is then not read).
        last_ws = [(None, 0)]

        def weight(c):
            """_weight_for(c), the address remembered where c itself is launched."""
            c2, pc = _weight_for(check_w, c)
            if c2 is c:
                seen[0] = pc
            return c2, pc

        def workspace_for(s):
            sw = last_ws[0] = (s, workspace(dev, device, s, ws))
            return sw[1]

        # Two bodies, one per arity, rather than one with *scalars: the tuples a
        # star-call builds cost more than the rest of the Python here.
        if nscalars == 0:
            def run(a, c):
                if a.dtype is not dtype or a.get_device() != dev:
                    return None
                pa = a.data_ptr()
                if pa & 15 or not a.is_contiguous():
                    a = _aligned(a)
                    pa = a.data_ptr()
                pc = c.data_ptr()
                if pc != seen[0] or c.dtype is not dtype or not c.is_contiguous():
                    c, pc = weight(c)
                    if c is None:
                        return None
                out = empty_like(tmpl) if tmpl is not None else empty(out_shape, dtype=dtype, device=device)
                s = raw(dev) if raw is not None else 0
                sw = last_ws[0]
                wa = sw[1] if not ws or sw[0] == s else workspace_for(s)
                try:
                    blk = mine.blk
                except AttributeError:
                    blk = mine.blk = new_block()
                po = out.data_ptr()
                cpack(blk, CACHED_AT, s, pa, pc, po, wa)
                rc = cfn(blk)
                if rc:
                    _cached_failed(b, rc, (pa, pc, po) + ((wa,) if ws else ()), s, dev)
                return out
            return run

        def run(a, c, e):
            if a.dtype is not dtype or a.get_device() != dev:
                return None
            pa = a.data_ptr()
            if pa & 15 or not a.is_contiguous():
                a = _aligned(a)
                pa = a.data_ptr()
            pc = c.data_ptr()
            if pc != seen[0] or c.dtype is not dtype or not c.is_contiguous():
                c, pc = weight(c)
                if c is None:
                    return None
            out = empty_like(tmpl) if tmpl is not None else empty(out_shape, dtype=dtype, device=device)
            s = raw(dev) if raw is not None else 0
            sw = last_ws[0]
            wa = sw[1] if not ws or sw[0] == s else workspace_for(s)
            try:
                blk = mine.blk
            except AttributeError:
                blk = mine.blk = new_block()
            po = out.data_ptr()
            cpack(blk, CACHED_AT, s, pa, pc, po, e, wa)
            rc = cfn(blk)
            if rc:
                _cached_failed(b, rc, (pa, pc, po, e) + ((wa,) if ws else ()), s, dev)
            return out
        return run

    launch = b.launch

    def run(*args):
        ins = [_aligned(t) for t in args[:nbufs_in]]
        out = empty_like(tmpl) if tmpl is not None else empty(out_shape, dtype=dtype, device=device)
        s = raw(dev) if raw is not None else 0
        vals = tuple(t.data_ptr() for t in ins) + (out.data_ptr(),) + tuple(args[nbufs_in:])
        if ws:
            vals += (workspace(dev, device, s, ws),)
        try:
            launch(vals, s)
        except AituneError as e:
            _relaunch(b, vals, s, dev, e)
        return out
    return run


def _hot_runner(b, out_shape, dtype, device, dev, nscalars, check_w, wptr, tmpl, raw):
    """_runner's two-buffer run as the hot path's C object (_lib.hot(), src/pyhot.c):
    the same steps, in C, with this module's functions where a step leaves the fast
    path (a copy of x, a weight to check, the workspace, a failed launch)."""
    ws = b.ws_bytes
    slots = "".join("p" if a["role"] in ("in", "out", "inout") else "f" if a["role"] == "scalar" else "x"
                    for a in b.kernel.plan["args"])

    if tmpl is not None:
        alloc, args, kw = torch.empty_like, (tmpl,), None
    else:
        alloc, args, kw = torch.empty, (out_shape,), {"dtype": dtype, "device": device}
    blk = b.cached_block()
    return _lib.hot().Runner(
        dtype, dev, alloc, args, kw, raw, _aligned, lambda c: _weight_for(check_w, c),
        lambda rc, vals, s: _cached_failed(b, rc, vals, s, dev),
        (lambda s: workspace(dev, device, s, ws)) if ws else None,
        blk, ctypes.addressof(blk), ctypes.cast(b._cfn, ctypes.c_void_p).value, slots, nscalars, wptr or 0)


def _gemm_weight(op, dtype, device, rows, k):
    """check_w of a GEMM runner (op: "linear", "swiglu") whose B is [rows, k] (see _runner)."""
    def check(w):
        if w.dim() != 2 or w.shape[1] != k:
            _refuse(op, "x has k = %d, weight [n, k] is %s" % (k, list(w.shape)))
        if w.dtype is not dtype or w.device != device:
            _same(op, (dtype, device), w, "weight")
        return w.shape[0] == rows
    return check


def _norm_weight(op, dtype, device, cols):
    """check_w of a norm runner at cols (see _runner)."""
    def check(w):
        if w.dim() != 1 or w.shape[0] != cols:
            _refuse(op, "'weight' must be [%d] (x's last dim), got %s" % (cols, list(w.shape)))
        if w.dtype is not dtype or w.device != device:
            _same(op, (dtype, device), w, "weight")
        return True
    return check


def gemm_runner(d, op, x, weight, known_weight=False):
    """A runner for a GEMM op ("linear": gemm_nt, weight [n, k]; "swiglu": gemm_swiglu,
    weight [gate; up], [2n, k]) at x's shape: run(x, weight) -> out [..., n], or None (a
    miss, recorded). known_weight binds a launch of its own for this weight's address
    (a module's): its tensor map is encoded once."""
    name = OPS[op][0]
    rows, k = weight.shape
    n = rows // B_ROWS[op]
    m = _rows(x.shape)
    dev = x.get_device()
    if x.dtype not in GEMM_DTYPES or m < 1:
        d.miss(name, str(x.dtype).replace("torch.", ""), (m, n, k),
               "aitune's GEMMs take bf16 and f16" if m >= 1 else "an empty input")
        return None
    if op == "linear" and d.kernel(name, DTYPES[x.dtype], (m, n, k), dev) is dispatch.VENDOR:
        # The vendor holds this size (no template beat cuBLASLt there): PyTorch's
        # own GEMM is the vendor's, with PyTorch's workspace and no second handle.
        # A call through libaitune's cuBLASLt cost a 2048-token Llama-3-8B prefill
        # 5% on an H100 (bench/RESULTS.md, 2026-11-27 third session). (No vendor
        # winner computes gemm_swiglu: the registry holds none.)
        return ref_linear
    known = {"B": weight.data_ptr()} if known_weight and weight.is_contiguous() and not weight.data_ptr() & 15 \
        else None
    b = d.bound(name, DTYPES[x.dtype], (m, n, k), dev, known)
    if b is None:
        return None
    return _runner(b, tuple(x.shape[:-1]) + (n,), x.dtype, x.device, dev, 2, 0,
                   _gemm_weight(op, x.dtype, x.device, rows, k), known["B"] if known else None)


def linear_runner(d, x, weight, known_weight=False):
    """gemm_runner of F.linear at x's shape with weight's [n, k]."""
    return gemm_runner(d, "linear", x, weight, known_weight)


def norm_runner(d, op, x):
    """A runner for rms_norm (run(x, weight, eps)), layer_norm (run(x, weight, bias, eps))
    or softmax (run(x)) at x's shape, or None (a miss, recorded)."""
    name, _ = OPS[op]
    cols = x.shape[-1]
    rows = _rows(x.shape)
    if x.dtype not in DTYPES or rows < 1 or cols < 1:
        d.miss(name, str(x.dtype).replace("torch.", ""), (rows, cols), "not a tuned dtype, or empty")
        return None
    b = d.bound(name, DTYPES[x.dtype], (rows, cols), x.get_device())
    if b is None:
        return None
    nin = {"rms_norm": 2, "layer_norm": 3, "softmax": 1}[op]
    return _runner(b, tuple(x.shape), x.dtype, x.device, x.get_device(), nin, 0 if op == "softmax" else 1,
                   _norm_weight(op, x.dtype, x.device, cols))


def attn_shape(q, k):
    """attn_decode's shape (b, h, g, n, d) for a query q ([b, h, d], or transformers'
    [b, h, 1, d]) over a cache k [b, g, n, d]."""
    return (q.shape[0], q.shape[1], k.shape[1], k.shape[2], q.shape[-1])


def attn_runner(d, q, k):
    """A runner for attn_decode at q's and k's shapes (run(q, k, v, bias, scale)), or None
    (a miss, recorded)."""
    shape = attn_shape(q, k)
    if q.dtype not in GEMM_DTYPES:
        d.miss("attn_decode", str(q.dtype).replace("torch.", ""), shape, "attn_decode takes bf16 and f16")
        return None
    bd = d.bound("attn_decode", DTYPES[q.dtype], shape, q.get_device())
    if bd is None:
        return None
    return _runner(bd, tuple(q.shape), q.dtype, q.device, q.get_device(), 4, 1)


# ---- the CUDA kernels ----

_FALLBACK = object()


def _cached(d, key, make):
    runs = d.runs
    run = runs.get(key)
    if run is None:
        run = make() or _FALLBACK
        runs[key] = run
    return run


def _linear_cuda(x, weight, bias=None):
    check_linear(x, weight, bias)
    d = dispatch.current()
    if d is None:
        return ref_linear(x, weight, bias)
    run = _cached(d, ("linear", x.shape, tuple(weight.shape), x.dtype, x.get_device()),
                  lambda: linear_runner(d, x, weight))
    if run is _FALLBACK:
        d.miss("gemm_nt", DTYPES.get(x.dtype, str(x.dtype)), (_rows(x.shape),) + tuple(weight.shape))
        return ref_linear(x, weight, bias)
    out = run(x, weight)
    if bias is not None:
        out.add_(bias)
    return out


def adjacent(ts):
    """The tensor whose rows are ts' rows in order, when ts (contiguous, one dtype) lie one
    after the other in one storage (a Group's views, aitune.grouping): a view of the
    first one's storage; else None."""
    t0 = ts[0]
    if len(ts) == 1:
        return t0 if t0.is_contiguous() else None
    esz = t0.element_size()
    at, rows = t0.data_ptr(), 0
    for t in ts:
        if t.data_ptr() != at or not t.is_contiguous() or t.dtype is not t0.dtype or t.shape[1:] != t0.shape[1:]:
            return None
        at += t.numel() * esz
        rows += t.shape[0]
    # One allocation holds t0 and everything up to `at` (addresses adjacent to t0's, inside
    # its storage); as_strided refuses what would leave it.
    if (t0.storage_offset() * esz + (at - t0.data_ptr())) > t0.untyped_storage().nbytes():
        return None
    row = t0.stride(0) if t0.dim() > 1 else 1
    return t0.as_strided((rows,) + tuple(t0.shape[1:]), (row,) + tuple(t0.stride()[1:]))


@torch.compiler.assume_constant_result
def static_trace():
    """At trace time: whether every shape is static (torch.compile(dynamic=False)), so
    a product's m is a constant; a constant to Dynamo."""
    c = torch._dynamo.config
    return not c.automatic_dynamic_shapes and c.assume_static_by_default


def own_answer(op, dtype, shape, dev):
    """Whether the registry in use answers op at shape with a template's kernel; a miss
    (recorded) where no tuned bucket holds it."""
    d = dispatch._current
    if d is None or dtype is None:
        return False
    own = d.answer(op, dtype, shape, dev)
    if own is None:
        d.miss(op, dtype, shape, "no tuned bucket holds it (traced without it)")
    return bool(own)


@torch.compiler.assume_constant_result
def own_kernel(op, dtype, m, n, k, dev):
    """At trace time, shapes static: whether the registry in use answers op (gemm_nt,
    gemm_swiglu) at (m, n, k) with a template's kernel (not the vendor's). A shape it
    does not answer is recorded as a miss here, once per trace (the compiled graph
    runs without it)."""
    return own_answer(op, dtype, (m, n, k), dev)


@torch.compiler.assume_constant_result
def own_attention(dtype, b, h, g, n, d, dev):
    """own_kernel's question for attn_decode at (b, h, g, n, d)."""
    return own_answer("attn_decode", dtype, (b, h, g, n, d), dev)


def traced_linear(x, weight, bias=None):
    """F.linear under torch.compile: the aitune op, or F.linear where static shapes let
    the trace ask the registry and it has no kernel of its own there (module doc)."""
    if static_trace():
        n, k = weight.shape
        if not own_kernel("gemm_nt", DTYPES.get(x.dtype), _rows(x.shape), n, k, trace_device(x)):
            return F.linear(x, weight, bias)
    return linear(x, weight, bias)


# The rows a trace asks the registry at where m is symbolic (aitune.grouping's fused
# products, traced_swiglu): Dynamo makes a batch dim symbolic once it has seen two
# sizes (m is then no constant, and isinstance(m, int) still answers True while
# tracing), so the trace asks whether the registry serves (n, k) at all, at the sizes a
# decode or a prefill runs.
_PROBE_ROWS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)


@torch.compiler.assume_constant_result
def tuned_somewhere(op, dtype, n, k, dev):
    """At trace time: whether the registry in use has a tuned bucket holding op (gemm_nt,
    gemm_swiglu) at (m, n, k) for one of _PROBE_ROWS (Dynamo takes the answer as a
    constant)."""
    d = dispatch._current
    if d is None or dtype is None:
        return False
    return any(d.tuned(op, dtype, (m, n, k), dev) for m in _PROBE_ROWS)


def swiglu_in_trace(x, n, k):
    """At trace time: whether aitune::swiglu is traced for x by [n, k] weights (a
    constant to Dynamo): with static shapes, where the registry has a kernel of its own
    for gemm_swiglu at (m, n, k); with dynamic shapes, where it has one at any of
    _PROBE_ROWS (the op then asks per shape at run time)."""
    dtype, dev = DTYPES.get(x.dtype), trace_device(x)
    if static_trace():
        return own_kernel("gemm_swiglu", dtype, _rows(x.shape), n, k, dev)
    return tuned_somewhere("gemm_swiglu", dtype, n, k, dev)


def traced_swiglu(x, gate_weight, up_weight):
    """silu(x @ gate_weight.T) * (x @ up_weight.T) under torch.compile: the aitune op
    where swiglu_in_trace says so, else PyTorch's computation (ref_swiglu)."""
    if swiglu_in_trace(x, gate_weight.shape[0], gate_weight.shape[1]):
        return swiglu(x, gate_weight, up_weight)
    return ref_swiglu(x, gate_weight, up_weight)


def _one_gemm(d, x, w, b=None):
    """x by the rows of w (adjacent members' weights, one storage) as one GEMM: the
    registry's kernel, else PyTorch's one GEMM over w (no copy; a miss)."""
    run = _cached(d, ("linear", x.shape, tuple(w.shape), x.dtype, x.get_device()), lambda: linear_runner(d, x, w))
    if run is not _FALLBACK:
        out = run(x, w)
        if b is not None:
            out.add_(b)
        return out
    d.miss("gemm_nt", DTYPES.get(x.dtype, str(x.dtype)), (_rows(x.shape),) + tuple(w.shape))
    return ref_linear(x, w, b)


def _linear_group_cuda(x, weights, biases):
    check_linear_group(x, weights, biases)
    d = dispatch.current()
    w = adjacent(weights) if d is not None else None
    b = adjacent(biases) if biases and w is not None else None
    if w is not None and (b is not None or not biases):
        return _one_gemm(d, x, w, b)
    # Not one storage: the members' own products, side by side.
    return torch.cat([_linear_cuda(x, wi, biases[i] if biases else None) for i, wi in enumerate(weights)], -1)


def _swiglu_cuda(x, gate_weight, up_weight):
    check_swiglu(x, gate_weight, up_weight)
    d = dispatch.current()
    if d is None:
        return ref_swiglu(x, gate_weight, up_weight)
    w = adjacent([gate_weight, up_weight])
    shape = (_rows(x.shape),) + tuple(gate_weight.shape)
    dt = DTYPES.get(x.dtype, str(x.dtype))
    if w is None:
        d.miss("gemm_swiglu", dt, shape, "gate_weight and up_weight are not adjacent rows of one storage")
        return ref_swiglu(x, gate_weight, up_weight)
    run = _cached(d, ("swiglu", x.shape, tuple(w.shape), x.dtype, x.get_device()),
                  lambda: gemm_runner(d, "swiglu", x, w))
    if run is not _FALLBACK:
        return run(x, w)
    d.miss("gemm_swiglu", dt, shape)
    # Not tuned at this m (a trace with dynamic shapes asks per shape): the weights' one
    # product, then PyTorch's silu * mul.
    g, u = _one_gemm(d, x, w).chunk(2, dim=-1)
    return F.silu(g) * u


def _norm_cuda(op, x, args, ref):
    d = dispatch.current()
    if d is None:
        return ref(x, *args)
    run = _cached(d, (op, x.shape, x.dtype, x.get_device()), lambda: norm_runner(d, op, x))
    if run is _FALLBACK:
        d.miss(OPS[op][0], DTYPES.get(x.dtype, str(x.dtype)), (_rows(x.shape), x.shape[-1]))
        return ref(x, *args)
    return run(x, *args)


def _rms_norm_cuda(x, weight, eps):
    check_norm("rms_norm", x, weight)
    return _norm_cuda("rms_norm", x, (weight, float(eps)), ref_rms_norm)


def _layer_norm_cuda(x, weight, bias, eps):
    check_norm("layer_norm", x, weight, bias)
    if bias is None:
        bias = torch.zeros_like(weight)
    return _norm_cuda("layer_norm", x, (weight, bias, float(eps)), ref_layer_norm)


def _softmax_cuda(x, dim=-1):
    check_softmax(x, dim)
    if dim % x.dim() != x.dim() - 1:
        return ref_softmax(x, dim)
    return _norm_cuda("softmax", x, (), ref_softmax)


def _attn_decode_cuda(q, k, v, bias, scale):
    check_attn_decode(q, k, v, bias)
    d = dispatch.current()
    if d is None:
        return ref_attn_decode(q, k, v, bias, scale)
    run = _cached(d, ("attn_decode", q.shape, k.shape, q.dtype, q.get_device()), lambda: attn_runner(d, q, k))
    if run is _FALLBACK:
        d.miss("attn_decode", DTYPES.get(q.dtype, str(q.dtype)), attn_shape(q, k))
        return ref_attn_decode(q, k, v, bias, scale)
    return run(q, k, v, bias, float(scale))


# ---- CPU kernels (PyTorch's), fakes ----

def _linear_cpu(x, weight, bias=None):
    check_linear(x, weight, bias)
    return ref_linear(x, weight, bias)


def _linear_group_cpu(x, weights, biases):
    check_linear_group(x, weights, biases)
    return torch.cat([ref_linear(x, w, biases[i] if biases else None) for i, w in enumerate(weights)], -1)


def _swiglu_cpu(x, gate_weight, up_weight):
    check_swiglu(x, gate_weight, up_weight)
    return ref_swiglu(x, gate_weight, up_weight)


def _rms_norm_cpu(x, weight, eps):
    check_norm("rms_norm", x, weight)
    return ref_rms_norm(x, weight, eps)


def _layer_norm_cpu(x, weight, bias, eps):
    check_norm("layer_norm", x, weight, bias)
    return ref_layer_norm(x, weight, bias, eps)


def _softmax_cpu(x, dim=-1):
    check_softmax(x, dim)
    return ref_softmax(x, dim)


def _attn_decode_cpu(q, k, v, bias, scale):
    check_attn_decode(q, k, v, bias)
    return ref_attn_decode(q, k, v, bias, scale)


def _attn_decode_fake(q, k, v, bias, scale):
    check_attn_decode(q, k, v, bias)
    return q.new_empty(q.shape)


def _linear_fake(x, weight, bias=None):
    check_linear(x, weight, bias)
    return x.new_empty(tuple(x.shape[:-1]) + (weight.shape[0],))


def _linear_group_fake(x, weights, biases):
    check_linear_group(x, weights, biases)
    return x.new_empty(tuple(x.shape[:-1]) + (sum(w.shape[0] for w in weights),))


def _swiglu_fake(x, gate_weight, up_weight):
    check_swiglu(x, gate_weight, up_weight)
    return x.new_empty(tuple(x.shape[:-1]) + (gate_weight.shape[0],))


def _rms_norm_fake(x, weight, eps):
    check_norm("rms_norm", x, weight)
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _layer_norm_fake(x, weight, bias, eps):
    check_norm("layer_norm", x, weight, bias)
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _softmax_fake(x, dim=-1):
    check_softmax(x, dim)
    return torch.empty_like(x, memory_format=torch.contiguous_format)


SCHEMAS = {
    "linear": ("linear(Tensor x, Tensor weight, Tensor? bias=None) -> Tensor",
               _linear_cuda, _linear_cpu, _linear_fake),
    "linear_group": ("linear_group(Tensor x, Tensor[] weights, Tensor[] biases) -> Tensor",
                     _linear_group_cuda, _linear_group_cpu, _linear_group_fake),
    "rms_norm": ("rms_norm(Tensor x, Tensor weight, float eps) -> Tensor",
                 _rms_norm_cuda, _rms_norm_cpu, _rms_norm_fake),
    "layer_norm": ("layer_norm(Tensor x, Tensor weight, Tensor? bias, float eps) -> Tensor",
                   _layer_norm_cuda, _layer_norm_cpu, _layer_norm_fake),
    "softmax": ("softmax(Tensor x, int dim=-1) -> Tensor", _softmax_cuda, _softmax_cpu, _softmax_fake),
    "swiglu": ("swiglu(Tensor x, Tensor gate_weight, Tensor up_weight) -> Tensor",
               _swiglu_cuda, _swiglu_cpu, _swiglu_fake),
    "attn_decode": ("attn_decode(Tensor q, Tensor k, Tensor v, Tensor bias, float scale) -> Tensor",
                    _attn_decode_cuda, _attn_decode_cpu, _attn_decode_fake),
}


def _register():
    lib = torch.library.Library("aitune", "DEF")
    for name, (schema, cuda, cpu, fake) in SCHEMAS.items():
        lib.define(schema)
        lib.impl(name, cuda, "CUDA")
        lib.impl(name, cpu, "CPU")
        torch.library.register_fake("aitune::" + name, fake, lib=lib)
    return lib


# One registration per process: the Library object must live as long as the ops.
_LIB = _register() if not hasattr(torch.ops.aitune, "linear") else None

linear = torch.ops.aitune.linear
linear_group = torch.ops.aitune.linear_group
rms_norm = torch.ops.aitune.rms_norm
layer_norm = torch.ops.aitune.layer_norm
softmax = torch.ops.aitune.softmax
swiglu = torch.ops.aitune.swiglu
attn_decode = torch.ops.aitune.attn_decode

# The tolerances of check mode, per dtype (templates/<op>/op.lua's for bf16/f16/f32):
# a result differs when |got - ref| > rtol * |ref| + atol * max|ref|.
TOLERANCE = {torch.bfloat16: (1.6e-2, 1.6e-2), torch.float16: (2e-3, 2e-3), torch.float32: (1e-5, 1e-5)}


def differs(got, ref):
    """None when got matches ref within the dtype's tolerance, else a one-line description."""
    rtol, atol = TOLERANCE.get(ref.dtype, (1e-5, 1e-5))
    g, r = got.float(), ref.float()
    scale = r.abs().max().item() if r.numel() else 0.0
    err = (g - r).abs()
    bad = err > rtol * r.abs() + atol * scale
    bad |= g.isnan() & ~r.isnan()
    if not bool(bad.any()):
        return None
    i = int(bad.flatten().nonzero()[0])
    idx = list(torch.unravel_index(torch.tensor(i), r.shape)) if r.dim() else []
    where = [int(v) for v in idx]
    return "max error %.4g at %s (got %.6g, PyTorch %.6g; tolerance %.3g x |ref| + %.3g x %.4g)" % (
        float(err.nan_to_num(math.inf).max()), where, float(g.flatten()[i]), float(r.flatten()[i]), rtol, atol,
        scale)
