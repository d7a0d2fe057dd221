"""Decode attention for Hugging Face models: aitune::attn_decode in a model's decode steps.

install(model) points the model's config at the attention implementation "aitune",
which transformers' AttentionInterface and AttentionMaskInterface hold once this
module has registered it: the masks are sdpa's (sdpa_mask), and attention_forward
runs aitune::attn_decode where a step has one query per sequence (a decode step)
and the registry has a kernel for its shape; everything else (a prefill, a mask it
cannot take, a shape without a kernel: a miss) runs transformers' sdpa_attention_forward,
as the model did before. uninstall(model) gives the config its implementation back.

Only models that used "sdpa" are taken (eager, flash and flex attention are left as
they are), and only where the installed transformers has the interfaces (4.53 and
later).

The step's keys and values are the cache's own [b, kv heads, n, d] tensors (a static
cache's whole length n): the kernel reads only the keys the mask keeps (bias -inf
costs no key or value read), so a cache far longer than the prompt costs the mask's
bytes, not its rows. The mask (bool, or float and additive) becomes a [b, n] bias in
the query's dtype; under torch.compile that conversion fuses into the kernel that
makes the mask.
"""

import torch

from . import dispatch, ops

NAME = "aitune"
# transformers' sdpa_attention_forward, once install() has found it. attention_forward
# imports nothing: torch.compile (2.11) breaks the graph at an import of transformers'
# lazy modules, and Dynamo then compiles each attention layer apart, past its
# recompile limit (eager from the ninth layer on).
_sdpa = []


def _interfaces():
    """(AttentionInterface, AttentionMaskInterface, sdpa_attention_forward, sdpa_mask), or None
    where transformers lacks them."""
    try:
        from transformers import AttentionInterface
        from transformers.masking_utils import AttentionMaskInterface, sdpa_mask
        from transformers.integrations.sdpa_attention import sdpa_attention_forward
    except ImportError:
        return None
    return AttentionInterface, AttentionMaskInterface, sdpa_attention_forward, sdpa_mask


def _bias(mask, b, n, dtype, device):
    """[b, n] bias in dtype from sdpa's mask of a one-query step ([b or 1, 1, 1, n]: bool,
    True where a key takes part, or float and additive; None: every key), or None where
    it is another shape."""
    if mask is None:
        return torch.zeros(b, n, dtype=dtype, device=device)
    if mask.dim() != 4 or mask.shape[1] != 1 or mask.shape[2] != 1 or mask.shape[3] != n or \
            mask.shape[0] not in (1, b):
        return None
    m = mask[:, 0, 0, :]
    if m.dtype == torch.bool:
        m = torch.where(m, 0.0, float("-inf"))
    return m.to(dtype).expand(b, n).contiguous()


def decode_ok(query, key, value, mask, kwargs):
    """Whether attn_decode computes what sdpa would for this call: one query per
    sequence, no dropout, no sliding window, soft cap or attention sinks."""
    if query.dim() != 4 or query.shape[2] != 1 or key.dim() != 4 or key.shape != value.shape:
        return False
    if query.dtype not in ops.GEMM_DTYPES or key.dtype != query.dtype or value.dtype != query.dtype:
        return False
    if kwargs.get("sliding_window") or kwargs.get("softcap") or kwargs.get("s_aux") is not None:
        return False
    b, h, _, d = query.shape
    g = key.shape[1]
    return g >= 1 and h % g == 0 and key.shape[0] == b and key.shape[3] == d and \
        (mask is None or mask.dim() == 4)


def _has_kernel(query, key):
    """Whether the registry has attn_decode of its own at this call's shape (a miss,
    recorded, where not). At trace time with static shapes the answer is a constant of
    the trace; with dynamic ones the op asks per shape at run time (True here). Eager
    calls ask the dispatcher, which keeps each shape's kernel (the one the op then
    launches)."""
    shape = ops.attn_shape(query, key)
    dt, dev = ops.DTYPES.get(query.dtype), ops.trace_device(query)
    if torch.compiler.is_compiling():
        return not ops.static_trace() or ops.own_attention(dt, *shape, dev)
    disp = dispatch.current()
    k = disp.kernel("attn_decode", dt, shape, dev) if disp is not None else None
    return k is not None and k is not dispatch.VENDOR


def attention_forward(module, query, key, value, attention_mask, dropout=0.0, scaling=None, **kwargs):
    """transformers' attention function signature: (attn_output [b, q, h, d], None)."""
    sdpa = _sdpa[0]
    if dropout or not decode_ok(query, key, value, attention_mask, kwargs) or not _has_kernel(query, key):
        return sdpa(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs)
    b, h, _, d = query.shape
    n = key.shape[2]
    bias = _bias(attention_mask, b, n, query.dtype, query.device)
    if bias is None:
        return sdpa(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs)
    scale = scaling if scaling is not None else d ** -0.5
    q = query.reshape(b, h, d)
    out = ops.attn_decode(q, key, value, bias, float(scale))
    tag = module.__dict__.get("_aitune_attn")
    if tag is not None and tag[1] is not None and not torch.compiler.is_compiling():
        tag[1].compare(tag[0], "attn_decode", ops.attn_shape(q, key), out,
                       ops.ref_attn_decode(q, key, value, bias, float(scale)))
    return out.view(b, 1, h, d), None


def _register(ifaces):
    if not _sdpa:
        AttentionInterface, AttentionMaskInterface, sdpa, sdpa_mask = ifaces
        AttentionInterface.register(NAME, attention_forward)
        AttentionMaskInterface.register(NAME, sdpa_mask)
        _sdpa.append(sdpa)


def install(model, checker=None):
    """Point model's config at "aitune" (see the module doc); returns the implementation it
    had, or None where it was not "sdpa" or transformers lacks the interfaces (nothing
    changed). Marks each attention module (a child with layer_idx and is_causal) with its
    name and checker, for check mode."""
    cfg = getattr(model, "config", None)
    ifaces = _interfaces()
    if cfg is None or ifaces is None or getattr(cfg, "_attn_implementation", None) != "sdpa":
        return None
    _register(ifaces)
    cfg._attn_implementation = NAME
    for name, mod in model.named_modules():
        if hasattr(mod, "layer_idx") and hasattr(mod, "is_causal") and getattr(mod, "config", None) is cfg:
            mod.__dict__["_aitune_attn"] = (name, checker)
    return "sdpa"


def uninstall(model, old):
    """Undo install(model): the config's implementation back to old, the marks dropped."""
    if old is None:
        return
    model.config._attn_implementation = old
    for _, mod in model.named_modules():
        mod.__dict__.pop("_aitune_attn", None)
