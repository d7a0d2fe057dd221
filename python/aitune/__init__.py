"""aitune: CUDA kernels tuned by `aitune sweep`, from Python and inside PyTorch.

For a PyTorch model (modules that need torch are imported on first use):

    import aitune
    p = aitune.patch(model, "registry.db")   # nn.Linear, RMSNorm, LayerNorm -> tuned ops;
                                              # q/k/v and gate/up projections: one GEMM each
    model(x)                                  # warm-up: binds each shape (outside graph capture)
    p.misses()                                # shapes the registry had no tuned bucket for
    aitune.unpatch(model)

The ops live in the torch.library namespace ``aitune`` (torch.ops.aitune.linear,
linear_group, rms_norm, layer_norm, softmax, swiglu), with fake implementations, so torch.compile traces
them; aitune.nn has the drop-in modules; ``python -m aitune tune --help`` tunes a
model's shapes in one command. The modules, by what they do:

    aitune._lib      loading libaitune.so, its C signatures
    aitune.registry  Registry, Kernel, Bound: lookups, kernels, bound launches
    aitune.dispatch  the cache per (op, dtype, shape) of bound launches; misses
    aitune.ops       the torch.library ops and their fake implementations
    aitune.nn        Linear, RMSNorm, LayerNorm
    aitune.grouping  sibling projections (q/k/v, gate/up) run as one GEMM
    aitune.gated     a gated MLP's gate/up and silu(gate) * up as one kernel (aitune::swiglu)
    aitune.racing    a bucket's finalists raced in the application's own step (race)
    aitune.decoding  a Hugging Face model's decode step from its config (random weights)
    aitune.patching  patch / unpatch of a model's modules; check mode
    aitune.tuning    a model's config -> the spec of its shapes -> `aitune sweep`

Without torch, Registry launches kernels on anything with
``__cuda_array_interface__``:

    reg = aitune.Registry("registry.db")
    reg.launch("softmax", x, y, shape=(4096, 1024))      # y = softmax(x) by rows

``launch(op, *args, shape)`` takes the op's arguments in op.lua's order, leaving
out its dims: buffers as tensors, scalars as numbers; each buffer is checked
against the kernel's launch plan first (dtype, element count, contiguity,
device, 16-byte alignment), a mismatch raising AituneError with one line.
"""

from ._lib import AituneError
from .registry import Bound, Kernel, Registry, check_args, eval_expr

__all__ = ["Registry", "Kernel", "Bound", "AituneError", "check_args", "eval_expr", "patch", "unpatch", "use",
           "misses", "flush_misses", "nn", "ops", "dispatch", "patching", "tuning", "grouping", "gated", "racing",
           "decoding"]

_LAZY = {"nn", "ops", "patching", "tuning", "dispatch", "grouping", "gated", "racing", "decoding"}


def __getattr__(name):
    # torch is imported only by what needs it, so `import aitune` works without it.
    if name in _LAZY:
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError("module 'aitune' has no attribute %r" % name)


def patch(model, registry=None, **options):
    """Swap model's nn.Linear, RMSNorm and LayerNorm modules for aitune's (see aitune.patching.patch)."""
    from . import patching
    return patching.patch(model, registry, **options)


def unpatch(model):
    """Put back the modules patch swapped; flush the misses to the registry."""
    from . import patching
    return patching.unpatch(model)


def use(registry=None):
    """Make registry (a path or a Registry; default $AITUNE_DB or ~/.local/share/aitune/registry.db)
    the one the aitune ops dispatch from; returns its Dispatcher."""
    from . import dispatch
    return dispatch.use(registry)


def misses():
    """{(op, dtype, shape): {"count": calls, "why": reason}} of the shapes that fell back to PyTorch."""
    from . import dispatch
    d = dispatch.current()
    return d.misses() if d else {}


def flush_misses():
    """Write the registry answers' misses to its misses table (the input of `tune --from-misses`)."""
    from . import dispatch
    d = dispatch.current()
    if d:
        d.flush_misses()
