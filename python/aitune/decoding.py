"""A Hugging Face causal LM's decode step, as a server runs it: for timing and racing.

    cfg = decoding.load_config("llama3-8b/config.json")       # a config.json or its folder
    model = decoding.random_model(cfg)                          # random weights, no download
    step = decoding.DecodeStep(model, cfg, batch=8)             # prompt prefilled once
    step()                                                      # one token for each sequence
    capture = aitune.racing.replayable(step, step.state())      # what race() replays

The model is built from its config with random weights in the config's dtype (bf16
unless it says float16), on the device, in eval mode without gradients: a decode step's
time does not depend on the weights' values. DecodeStep holds a static KV cache of
prompt + steps positions, prefills a random prompt once, and then each call decodes one
token per sequence: the model at (ids, position), ids <- the argmax, position + 1, all
on the device, so the call can be captured in a CUDA graph. state() lists the device
tensors a call advances: ids, the position and the cache's own per-layer counters
(transformers 5's StaticLayer.cumulative_length), which a replay of one step must set
back (racing.replayable does). compiled=True runs the model's forward through
torch.compile (default mode, static shapes, as transformers' compiled generation does).

transformers is imported when first needed; 4.x and 5.x caches are both handled.
"""

import inspect

import torch

from ._lib import AituneError
from .tuning import read_config


def transformers_module():
    """transformers, or AituneError saying how to install it."""
    try:
        import transformers
    except ImportError:
        raise AituneError("decoding: needs transformers (pip install transformers)") from None
    return transformers


def load_config(path):
    """The transformers config of a config.json (or the folder holding one). Raises
    AituneError naming the file when it is missing, too large or not a model's config."""
    d, path = read_config(path)
    return load_config_dict(d, "config '%s'" % path)


def load_config_dict(d, where="config"):
    """The transformers config of a config.json's contents d (where names it in errors)."""
    if not isinstance(d, dict) or not isinstance(d.get("model_type"), str):
        raise AituneError("%s: no model_type (not a Hugging Face model config)" % where)
    tf = transformers_module()
    try:
        return tf.AutoConfig.for_model(**d)
    except (ValueError, KeyError, TypeError) as e:
        raise AituneError("%s: %s" % (where, str(e).splitlines()[0] if str(e) else type(e).__name__)) from None


def config_dtype(cfg):
    """The dtype the model runs in: float16 where the config says so, else bfloat16."""
    name = str(getattr(cfg, "dtype", None) or getattr(cfg, "torch_dtype", None) or "")
    return torch.float16 if name.endswith("float16") and "bfloat" not in name else torch.bfloat16


def random_model(cfg, device="cuda", dtype=None, seed=0):
    """The config's causal LM with random weights, built in dtype on device (no float32
    copy, nothing downloaded), in eval mode without gradients."""
    tf = transformers_module()
    dtype = dtype or config_dtype(cfg)
    cfg.use_cache = True
    torch.manual_seed(seed)
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = tf.AutoModelForCausalLM.from_config(cfg)
    finally:
        torch.set_default_dtype(old)
    return model.eval().requires_grad_(False)


def cache_kw(model):
    """The name model.forward takes its cache by: cache (transformers 5) or past_key_values."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def static_cache(cfg, batch, length, device, dtype):
    """A static KV cache of length positions (transformers 5 sizes it at the first
    update; 4.x is told the batch, device and dtype here)."""
    tf = transformers_module()
    kw = dict(config=cfg, max_cache_len=length)
    if "max_batch_size" in inspect.signature(tf.StaticCache.__init__).parameters:
        kw.update(max_batch_size=batch, device=device, dtype=dtype)
    return tf.StaticCache(**kw)


def cache_counters(cache):
    """The position counters a static cache keeps on the device, one per layer
    (transformers 5's StaticLayer.cumulative_length; none in 4.x): every update
    advances them whatever cache_position says."""
    return [layer.cumulative_length for layer in getattr(cache, "layers", ())
            if isinstance(getattr(layer, "cumulative_length", None), torch.Tensor)]


class DecodeStep:
    """One decode step of model over a static cache, in place (see the module doc)."""

    def __init__(self, model, cfg, batch, prompt=128, steps=64, compiled=False, seed=1):
        if batch < 1 or prompt < 1 or steps < 1:
            raise AituneError("DecodeStep: batch, prompt and steps must be >= 1")
        p = next(model.parameters())
        dev, self.dtype = p.device, p.dtype
        self.model, self.batch = model, batch
        self.kw = cache_kw(model)
        self.cache = static_cache(cfg, batch, prompt + steps + 8, dev, self.dtype)
        g = torch.Generator(device=dev).manual_seed(seed)
        ids = torch.randint(0, cfg.vocab_size, (batch, prompt), device=dev, generator=g)
        with torch.no_grad():
            out = model(input_ids=ids, cache_position=torch.arange(prompt, device=dev), use_cache=True,
                        logits_to_keep=1, **{self.kw: self.cache})
        self.ids = out.logits[:, -1:].argmax(-1)
        self.pos = torch.full((1,), prompt, dtype=torch.long, device=dev)
        self.fn = torch.compile(self.forward, mode="default", dynamic=False) if compiled else self.forward

    def forward(self, ids, pos):
        out = self.model(input_ids=ids, cache_position=pos, position_ids=pos.view(1, 1).expand(ids.shape[0], 1),
                         use_cache=True, logits_to_keep=1, **{self.kw: self.cache})
        return out.logits

    def __call__(self):
        with torch.no_grad():
            logits = self.fn(self.ids, self.pos)
            self.ids.copy_(logits[:, -1:].argmax(-1))
            self.pos.add_(1)
        return logits

    def state(self):
        """The device tensors a call advances: ids, the position, the cache's counters."""
        return [self.ids, self.pos] + cache_counters(self.cache)
