"""Tuning a model in one command: its config -> the spec of its shapes -> `aitune sweep`.

A decoder's GEMMs and norms have shapes fixed by its config but for the number of
token rows m: the batch when decoding, batch x prompt length when prefilling.
model_spec() writes one task per distinct weight (F.linear's layout, gemm_nt, n x k)
and per norm width, n and k (a norm's cols) at their exact sizes (docs/SPEC.md
"Exact sizes": `n: {values: [6144], exact: true}`: a bucket of that one size, whose
winner no other weight's tuning replaces), with m as a range (`m: {range: [lo, hi]}`), split
at a power of two between decoding (m up to the largest batch, timed as a decode
loop runs in a model's graph: `timing: neighbour`, another kernel between launches) and prefilling (up to batch x prompt, timed as
a chain of launches back to back: `timing: stream`; see PREFILL_TIMING). From a
Hugging Face config.json (Llama, Mistral, Mixtral, Qwen2, Qwen3 and their kin):

    q_proj  heads*head_dim x hidden     k_proj, v_proj  kv_heads*head_dim x hidden
    o_proj  hidden x heads*head_dim     gate/up  intermediate x hidden
    down    hidden x intermediate       lm_head  vocab x hidden (decode rows only:
    norms   rms over hidden (and over head_dim for Qwen3's q/k norms)     logits of the
    router  experts x hidden (Mixtral-like configs)                       last token)

group: "on" (the default, as aitune.patch groups): q/k/v as one weight of
(heads + 2 kv_heads) * head_dim rows and gate/up as one of 2 * intermediate rows
(aitune.grouping) in place of the separate ones; "off": the separate ones (for
patch(model, group=False)); "only": the fused ones alone, to add them to a
registry tuned with "off". Each weight gets its own buckets, its n and k being
exact: Llama-3-8B's fused q/k/v (6144 x 4096) and o_proj (4096 x 4096) share the
log2 bucket of n, which held one winner for both before exact sizes; now each has
its own, and lookup answers 6144 from the one tuned there.

gemm_swiglu (a gated MLP's gate and up products and silu(gate) * up in one kernel,
aitune.gated; n = intermediate, k = hidden): at the decode and the
prefill rows and at each exact batch, timed as that phase's GEMMs (wgmma computes it
at prefill sizes, swapab's decode kernel at m <= 64, rowdot at m <= 4: at m = 1 on an
H100 74.6-74.8 us a layer against 77.4-77.6 for the grouped product and silu * mul,
bench/RESULTS.md, ninth session). Written where the projections are grouped (group
"on" or "only": patch fuses only grouped gate/up), with gemm_swiglu among ops (the
default).

attn_decode (a decode step's attention, aitune.attention; h heads over g kv heads of
head dim d, exact) at every batch of the decode range and every cache length n of the
cache range (`--cache`: the length of the static cache the application allocates,
whose masked positions the kernel skips), both ranges, timed as the decode's.

misses_spec() writes the same from a registry's misses table (the shapes libaitune
was asked for and had no tuned bucket for): per op and fixed dims, a range over the
first dim covering the sizes missed. run_sweep() runs the aitune binary.

Configs and registries are untrusted: every number is checked to be an integer in
range before it becomes spec text, and names are reduced to [a-z0-9_-].
"""

import json
import os
import re
import shutil
import sqlite3
import subprocess

from ._lib import AituneError, CORRUPT

DTYPES = {"bfloat16": "bf16", "bf16": "bf16", "float16": "f16", "f16": "f16", "half": "f16"}
MAX_DIM = 1 << 24
MAX_ROWS = 1 << 32


# A config.json larger than this is not a model's config.
CONFIG_MAX_BYTES = 1 << 20


class SpecError(AituneError):
    """A config, a range or a misses table that cannot become a spec (exit 3)."""

    def __init__(self, msg):
        super().__init__(msg, CORRUPT)


def read_config(path):
    """(the dict of a model's config.json, its path): path or the folder holding it.
    SpecError naming the file when it is missing, larger than 1 MiB or not JSON."""
    if os.path.isdir(path):
        path = os.path.join(path, "config.json")
    try:
        if os.path.getsize(path) > CONFIG_MAX_BYTES:
            raise SpecError("config '%s': larger than 1 MiB" % path)
        with open(path) as f:
            return json.load(f), path
    except OSError as e:
        raise SpecError("config '%s': %s" % (path, e.strerror or e)) from None
    except ValueError as e:
        raise SpecError("config '%s': not JSON: %s" % (path, e)) from None


def _int(cfg, key, where, default=None, lo=1, hi=MAX_DIM):
    v = cfg.get(key, default)
    if v is None:
        raise SpecError("%s: field '%s' is missing" % (where, key))
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise SpecError("%s: field '%s' must be an integer in %d..%d, got %r" % (where, key, lo, hi, v))
    return v


def parse_range(text, what):
    """'1:32' or '8' -> (lo, hi)."""
    m = re.fullmatch(r"\s*(\d+)\s*(?::\s*(\d+)\s*)?", text or "")
    if not m:
        raise SpecError("%s: want LO:HI or N (e.g. 1:32), got %r" % (what, text))
    lo = int(m.group(1))
    hi = int(m.group(2)) if m.group(2) else lo
    if not 1 <= lo <= hi <= MAX_ROWS:
        raise SpecError("%s: want 1 <= LO <= HI <= %d, got %s" % (what, MAX_ROWS, text))
    return lo, hi


GROUP_MODES = ("on", "off", "only")


def _decoder(cfg, where):
    """The decoder's config (multimodal configs nest it as text_config) and its hidden
    size, heads, kv heads and head dim."""
    if not isinstance(cfg, dict):
        raise SpecError("%s: not a JSON object" % where)
    text = cfg.get("text_config")
    if isinstance(text, dict) and "hidden_size" not in cfg:
        cfg = text                     # multimodal configs nest the decoder's
    h = _int(cfg, "hidden_size", where)
    heads = _int(cfg, "num_attention_heads", where, hi=1 << 12)
    kv = _int(cfg, "num_key_value_heads", where, default=heads, hi=1 << 12)
    hd = _int(cfg, "head_dim", where, default=h // heads if h % heads == 0 else None, hi=1 << 14)
    return cfg, h, heads, kv, hd


def model_shapes(cfg, where="config", group="off"):
    """(weights, norms, lm_head, model_type, mlps, attention) of a Hugging Face config dict:
    weights a sorted list of distinct (n, k) (the sibling projections fused or not as group
    says: see the module doc), norms of distinct (cols, rows per token), mlps of the gated
    MLPs' distinct (n, k) (gemm_swiglu's: n the intermediate size, k the hidden size),
    attention (heads, kv heads, head dim)."""
    if group not in GROUP_MODES:
        raise SpecError("group must be one of %s, not %r" % (", ".join(GROUP_MODES), group))
    cfg, h, heads, kv, hd = _decoder(cfg, where)
    inter = _int(cfg, "intermediate_size", where)
    vocab = _int(cfg, "vocab_size", where, hi=1 << 22)
    experts = cfg.get("num_local_experts") or cfg.get("num_experts")
    mtype = str(cfg.get("model_type", "model"))
    # Read by one input each: the sibling sets aitune.grouping fuses; the others.
    mlps = {(inter, h)}              # gate/up: one n x k weight each
    separate = {(heads * hd, h), (kv * hd, h)}
    others = {(h, heads * hd), (h, inter)}
    if experts is not None:
        others.add((_int(cfg, "num_local_experts" if "num_local_experts" in cfg else "num_experts", where,
                         hi=1 << 12), h))
        moe = cfg.get("moe_intermediate_size")
        if moe is not None:
            moe = _int(cfg, "moe_intermediate_size", where)
            mlps.add((moe, h))
            others.add((h, moe))
    separate |= mlps
    fused = {((heads + 2 * kv) * hd, h)} | {(2 * n, k) for n, k in mlps}
    weights = fused if group == "only" else others | (fused if group == "on" else separate)
    norms = {(h, 1)}
    if mtype.startswith("qwen3"):
        norms |= {(hd, heads), (hd, kv)}
    return sorted(weights), sorted(norms), (vocab, h), mtype, sorted(mlps), (heads, kv, hd)


# How each phase's tasks are timed (docs/SPEC.md "timing"). Decode: between other
# kernels, as a decode step's graph runs its GEMMs. Prefill: a chain back to back, as
# a prefill runs 32 layers of compute-bound GEMMs: the GPU then works at its power
# limit (an H100's SM clock fell from 1980 to 1200-1400 MHz), where one launch at a
# time after an idle gap (the default timing) runs at full clock. Timed one at a time,
# wgmma held Llama-3-8B's 2048-token GEMMs at 0.99-1.05x cuBLASLt; back to back, the
# vendor held all four, and the patched prefill had lost 2.5-5% to torch.compile's
# (bench/RESULTS.md, 2026-11-27 fourth session).
DECODE_TIMING, PREFILL_TIMING = "neighbour", "stream"

# The ops a model's spec may hold (model_spec's ops; `tune --ops`), all by default.
OPS = ("gemm_nt", "rmsnorm", "gemm_swiglu", "attn_decode")


def _timing(hi):
    """The timing of a task whose token rows reach hi: a decode's up to 64, else a prefill's."""
    return DECODE_TIMING if hi <= 64 else PREFILL_TIMING


def _name(s):
    return re.sub(r"[^a-z0-9_-]+", "-", s.lower()).strip("-")[:40] or "model"


def _task(op, dtype, shapes, timing=None, comment=None):
    """A task's lines: a dim given as (lo, hi) is a range of token rows, a size is a
    weight's or a norm's width, exact (docs/SPEC.md "Exact sizes")."""
    lines = []
    if comment:
        lines.append("  # " + comment)
    lines += ["  - op: %s" % op, "    dtypes: [%s]" % dtype]
    if timing:
        lines.append("    timing: %s" % timing)
    lines.append("    shapes:")
    for dim, v in shapes:
        if isinstance(v, tuple):
            lines.append("      %s: {range: [%d, %d], align: [1]}" % (dim, v[0], v[1]))
        else:
            lines.append("      %s: {values: [%d], exact: true}" % (dim, v))
    return lines


def _header(name, arch, search, max_evals, what):
    return ["# Written by `python -m aitune tune` (python/aitune/tuning.py): %s." % what,
            "# Ranges: docs/SPEC.md. m (a GEMM's rows) and a norm's rows are token rows;",
            "# their alignment does not decide the kernel, so `align: [1]`. A weight's n and k",
            "# and a norm's width are the model's constants: tuned at their exact sizes.",
            "name: %s" % name, "arch: %s" % arch, "seed: 1", "search: %s" % search,
            "max_evals: %d" % max_evals, "top_k: 4",
            "warm: 4                  # exact sizes too start from their neighbours' winners",
            "tasks:"]


def _split(batch, prompt):
    """(decode rows, prefill rows or None): every m from the least batch to the most
    batch x prompt, cut at the power of two above the largest batch."""
    blo, bhi = batch
    plo, phi = prompt
    cut = 1 << bhi.bit_length()            # the power of two above bhi
    top = bhi * phi
    if top < cut:
        return (blo, top), None
    dec = (blo, cut - 1)
    pre = (max(cut, blo * plo), top)
    return dec, pre


def parse_batches(text, batch, what="--exact-batch", served="batch sizes"):
    """'1,8,32' -> (1, 8, 32): sizes (each >= 1), inside the served range batch (lo, hi)
    unless it is None; what names the option in the error, served what they are (plural)."""
    out = []
    for part in (text or "").split(","):
        if not re.fullmatch(r"\s*\d{1,6}\s*", part):
            raise SpecError("%s: want sizes like 1,8,32, got %r" % (what, text))
        b = int(part)
        if batch is not None and not batch[0] <= b <= batch[1]:
            raise SpecError("%s: %d is outside the %s served (%d..%d)" % (what, b, served, batch[0], batch[1]))
        if b < 1:
            raise SpecError("%s: a %s is at least 1, got %d" % (what, served[:-1], b))
        if b in out:
            raise SpecError("%s: %d is listed twice" % (what, b))
        out.append(b)
    return tuple(out)


def model_spec(cfg, batch=(1, 32), prompt=(1, 2048), dtype=None, arch="sm_90a", ops=None, search="model",
               max_evals=48, where="config", group="on", exact_batches=(), exact_prompts=(), cache=None):
    """The spec text (YAML) of a model's shapes. batch, prompt: (lo, hi). ops: a set of
    OPS to keep (default all). group: "on", "off" or "only" (see the module doc; "only"
    writes GEMMs alone, gemm_swiglu included; "off" no gemm_swiglu). exact_batches: batch sizes whose decode
    GEMMs (lm_head's included) get buckets of their own at m exactly, beside the range
    that holds them (which is tuned at its upper edge, where its kernels are slowest:
    a server that captures a decode graph per batch size runs those m most; on an H100,
    Llama-3-8B's batch-8 GEMMs tuned at m = 8 made its step 1.089x -> 1.102x faster
    than torch.compile's, bench/RESULTS.md fifth session). exact_prompts: prompt lengths
    whose batch-1 prefill GEMMs (m = the prompt's tokens; gate/up's gemm_swiglu included,
    lm_head not: it takes the last token only) get buckets of their own the same way,
    timed as the prefill's: a range bucket of prefill rows is tuned at its upper edge and
    holds the vendor wherever its search was cut short, so a prompt length an application
    prefills most is worth its own search (on an H200 a 2048-token prefill's range
    buckets, tuned within a 470 s budget, were all the vendor's: bench/RESULTS.md,
    twelfth session). cache: (lo, hi) of the static cache's length n for attn_decode
    (default: 1 up to the longest prompt plus 2048 generated tokens)."""
    weights, norms, head, mtype, mlps, (heads, kv, hd) = model_shapes(cfg, where, group)
    if dtype is None:
        dt = cfg.get("torch_dtype") or cfg.get("dtype") or (cfg.get("text_config") or {}).get("torch_dtype")
        if dt not in DTYPES:
            raise SpecError("%s: torch_dtype %r is not bf16 or f16 (give --dtype)" % (where, dt))
        dtype = DTYPES[dt]
    elif dtype not in DTYPES:
        raise SpecError("dtype must be bf16 or f16, not %r" % (dtype,))
    dtype = DTYPES[dtype]
    if not re.fullmatch(r"sm_\d{2,3}[af]?", arch):
        raise SpecError("arch must be like sm_90a, not %r" % (arch,))
    ops = set(ops or OPS)
    unknown = ops - set(OPS)
    if unknown:
        raise SpecError("ops: unknown %s (%s)" % (", ".join(sorted(unknown)), ", ".join(OPS)))
    if group == "only":
        if not ops & {"gemm_nt", "gemm_swiglu"}:
            raise SpecError("group only: the fused projections are GEMMs, and ops leaves out gemm_nt and gemm_swiglu")
        ops, norms = ops & {"gemm_nt", "gemm_swiglu"}, []
    if group == "off":
        ops.discard("gemm_swiglu")     # patch(group=False) fuses no MLP
    if cache is None:
        cache = (1, min(prompt[1] + 2048, MAX_DIM))
    if not 1 <= cache[0] <= cache[1] <= MAX_DIM:
        raise SpecError("cache: want 1 <= LO <= HI <= %d, got %s" % (MAX_DIM, cache))
    dec, pre = _split(batch, prompt)
    out = _header("model-" + _name(mtype), arch, search, max_evals,
                  "%s, batch %d..%d, prompt %d..%d tokens, projections grouped: %s" % (
                      _name(mtype), batch[0], batch[1], prompt[0], prompt[1], group))
    phases = [(dec, DECODE_TIMING, "decode")] + ([(pre, PREFILL_TIMING, "prefill")] if pre else [])
    for rows, timing, phase in phases:
        if "gemm_nt" in ops:
            for n, k in weights:
                out += _task("gemm_nt", dtype, [("m", rows), ("n", n), ("k", k)], timing,
                             "%s: %d x %d weight" % (phase, n, k))
        if "rmsnorm" in ops:
            for cols, per in norms:
                r = (rows[0] * per, rows[1] * per)
                if r[1] > MAX_ROWS:
                    raise SpecError("%d rows of %d-wide norms: too many" % (r[1], cols))
                out += _task("rmsnorm", dtype, [("rows", r), ("cols", cols)], timing,
                             "%s: RMSNorm over %d" % (phase, cols))
        if "gemm_swiglu" in ops:
            for n, k in mlps:
                out += _task("gemm_swiglu", dtype, [("m", rows), ("n", n), ("k", k)],
                             timing, "%s: gated MLP, silu(gate) * up, %d x %d weights" % (phase, n, k))
    if "gemm_nt" in ops and group != "only":
        out += _task("gemm_nt", dtype, [("m", (batch[0], batch[1])), ("n", head[0]), ("k", head[1])], DECODE_TIMING,
                     "lm_head: the last token's logits")
    if "attn_decode" in ops and group != "only":
        if heads % kv:
            raise SpecError("%s: %d heads over %d kv heads" % (where, heads, kv))
        out += _task("attn_decode", dtype, [("b", (batch[0], batch[1])), ("h", heads), ("g", kv), ("n", cache),
                                            ("d", hd)], DECODE_TIMING,
                     "decode attention: %d heads over %d kv heads of %d, caches of %d..%d" % (
                         heads, kv, hd, cache[0], cache[1]))
    every = (weights + ([head] if group != "only" else [])) if "gemm_nt" in ops else []
    def exact(m, gemms, timing, label):
        # The GEMMs (and gated MLPs) at m exactly, in buckets of their own.
        for n, k in gemms:
            out.extend(_task("gemm_nt", dtype, [("m", m), ("n", n), ("k", k)], timing,
                             "%s: %d x %d weight" % (label, n, k)))
        for n, k in (mlps if "gemm_swiglu" in ops else []):
            out.extend(_task("gemm_swiglu", dtype, [("m", m), ("n", n), ("k", k)], timing,
                             "%s: gated MLP, %d x %d weights" % (label, n, k)))
    for b in exact_batches:
        if not batch[0] <= b <= batch[1]:
            raise SpecError("exact batch %d is outside the batch sizes served (%d..%d)" % (b, batch[0], batch[1]))
        exact(b, every, DECODE_TIMING, "batch %d exactly" % b)
    for t in exact_prompts:
        if not prompt[0] <= t <= prompt[1]:
            raise SpecError("exact prompt %d is outside the prompt lengths served (%d..%d)" % (t, prompt[0], prompt[1]))
        exact(t, weights if "gemm_nt" in ops else [], PREFILL_TIMING, "prompt %d exactly (batch 1)" % t)
    return "\n".join(out) + "\n"


_SHAPE = re.compile(r"\d{1,13}(,\d{1,13}){0,5}")
_OPNAME = re.compile(r"[a-z][a-z0-9_]{0,31}")
_DTYPE = re.compile(r"[a-z0-9]{1,8}(>[a-z0-9]{1,8})?")


def read_misses(db_path):
    """[(op, arch, dtype, shape tuple, count)] of a registry's misses table, checked."""
    if not os.path.isfile(db_path):
        raise SpecError("registry '%s': not a file" % db_path)
    try:
        db = sqlite3.connect("file:%s?mode=ro" % db_path, uri=True)
        rows = db.execute("SELECT op, arch, dtype, shape, count FROM misses ORDER BY op, dtype, shape").fetchall()
        db.close()
    except sqlite3.Error as e:
        raise SpecError("registry '%s': %s" % (db_path, e)) from None
    out = []
    for op, arch, dtype, shape, count in rows:
        if not (isinstance(op, str) and _OPNAME.fullmatch(op) and isinstance(arch, str)
                and re.fullmatch(r"sm_\d{2,3}", arch) and isinstance(dtype, str) and _DTYPE.fullmatch(dtype)
                and isinstance(shape, str) and _SHAPE.fullmatch(shape)):
            raise SpecError("registry '%s': misses row %r is malformed" % (db_path, (op, arch, dtype, shape)))
        dims = tuple(int(s) for s in shape.split(","))
        if not all(1 <= d <= MAX_ROWS for d in dims):
            raise SpecError("registry '%s': misses shape %s is out of range" % (db_path, shape))
        out.append((op, arch, dtype, dims, count))
    return out


DIMS = {"gemm_nt": ("m", "n", "k"), "gemm_nn": ("m", "n", "k"), "gemm_swiglu": ("m", "n", "k"), "rmsnorm": ("rows", "cols"),
        "layernorm": ("rows", "cols"), "softmax": ("rows", "cols"), "attn_decode": ("b", "h", "g", "n", "d")}


def misses_spec(misses, arch=None, search="model", max_evals=48):
    """The spec text of the shapes in misses (read_misses'), for arch (default: the
    arch most misses were asked for, with its 'a' target for sm_90 and later)."""
    misses = [m for m in misses if m[0] in DIMS]
    if not misses:
        raise SpecError("no misses of the ops aitune.patch uses (%s): nothing to tune" % ", ".join(DIMS))
    archs = {}
    for m in misses:
        archs[m[1]] = archs.get(m[1], 0) + m[4]
    if arch is None:
        base = max(sorted(archs), key=lambda a: archs[a])
        arch = base + "a" if int(base[3:]) >= 90 else base
    base = re.sub(r"[af]$", "", arch)
    groups = {}
    for op, a, dtype, dims, _ in misses:
        if a != base or len(dims) != len(DIMS[op]):
            continue
        key = (op, dtype, dims[1:])
        lo, hi = groups.get(key, (dims[0], dims[0]))
        groups[key] = (min(lo, dims[0]), max(hi, dims[0]))
    if not groups:
        raise SpecError("no misses for %s" % base)
    out = _header("misses-" + base, arch, search, max_evals, "the shapes libaitune missed")
    for (op, dtype, rest), (lo, hi) in sorted(groups.items()):
        names = DIMS[op]
        shapes = [(names[0], (lo, hi))] + list(zip(names[1:], rest))
        out += _task(op, dtype, shapes, _timing(hi))
    return "\n".join(out) + "\n"


def find_aitune(explicit=None):
    """The aitune binary: explicit, $AITUNE_BIN, the PATH's, or build/aitune of this tree."""
    here = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build",
                                         "aitune"))
    for c in (explicit, os.environ.get("AITUNE_BIN"), shutil.which("aitune"), here):
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise AituneError("no aitune binary: build it (make), install it (make install), or pass --aitune PATH")


def run_sweep(spec_path, db, aitune=None, extra=()):
    """`aitune sweep SPEC --db DB ...`; its exit code."""
    cmd = [find_aitune(aitune), "sweep", spec_path, "--db", db] + list(extra)
    return subprocess.call(cmd)
