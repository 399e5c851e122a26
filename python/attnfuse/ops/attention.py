"""The ops attention is written with, as attn ops the fusion matches:
matmul, softmax, masked_fill, dropout, repeat_interleave (transpose is in
ops/views.py), and F.scaled_dot_product_attention itself, which
`write_sdpa` writes (the one place that writes attn.sdpa)."""

from __future__ import annotations

import math
import warnings

import sympy
import torch

from .. import kvcache  # noqa: F401  (defines torch.ops.attnfuse)
from .. import varlen  # noqa: F401  (defines the attnfuse:: attention ops)
from .. import mlir
from ..mlir import (INDEX, Scalar, SdpaAttrs, TensorType, Value, f64_attr,
                   i64_attr)
from ..sources import describe
from .masks import and_all, split_mask_terms, write_where
from .registry import handles
from .views import extract_slice, reshape_to

aten = torch.ops.aten


@handles(aten.matmul.default, aten.bmm.default, aten.mm.default)
def matmul(ex, a, b):
    out = ex.out_type()
    a, b = ex.tensor(a), ex.tensor(b)
    if a.type.rank < 2 or b.type.rank < 2:
        ex.unsupported("matmul of a vector")
    if not mlir.is_float(out.dtype):
        ex.unsupported(f"{out.dtype} matmul")
    return ex.b.attn("matmul", [a, b], out)


@handles(aten.softmax.int)
def softmax(ex, x, dim, dtype=None):
    x = ex.tensor(x, dtype)
    return ex.b.attn("softmax", [x], x.type, [f"dim = {i64_attr(dim)}"])


@handles(aten._softmax.default)
def _softmax(ex, x, dim, half_to_float):
    return softmax(ex, x, dim, torch.float32 if half_to_float else None)


@handles(aten._safe_softmax.default)
def safe_softmax(ex, x, dim, dtype=None):
    # torch._safe_softmax: 0, not NaN, on a row whose inputs are all -inf.
    x = ex.tensor(x, dtype)
    return ex.b.attn("safe_softmax", [x], x.type, [f"dim = {i64_attr(dim)}"])


@handles(aten.masked_fill.Scalar, aten.masked_fill.Tensor)
def masked_fill(ex, x, mask, value):
    out = ex.out_type()
    x = ex.tensor(x)
    mask = ex.tensor(mask)
    if mask.type.dtype != torch.bool:
        ex.fail(f"masked_fill mask must be bool, not {mask.type.dtype}")
    value = ex.concrete(value)
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            ex.unsupported("masked_fill with a tensor value")
        value = value.item()
    if not isinstance(value, (int, float)):
        ex.unsupported("masked_fill with a run-time value")
    if not mlir.is_float(out.dtype):
        fill = ex.tensor(value, out.dtype)
        return ex.map([mask, x, fill], out, lambda b, m, a, f: b.select(
            m, f, a))
    if mask.name in ex.inverses:
        keep = ex.inverses[mask.name]()
        fill = ex.tensor(float(value), out.dtype)
        return write_where(ex, keep, x, fill, out)
    return ex.b.attn("masked_fill", [x, mask], out,
                     [f"value = {f64_attr(value)}"])


@handles(aten.dropout.default)
def dropout(ex, x, p, train):
    x = ex.tensor(x)
    if not train or p == 0:
        return x
    check_train_dropout(ex, p)
    seed = ex.num_dropouts
    ex.num_dropouts += 1
    return ex.b.attn("dropout", [x], x.type, [
        f"p = {f64_attr(p)}", f"seed = {i64_attr(seed)}", "train = true"])


@handles(aten.native_dropout.default)
def native_dropout(ex, x, p, train):
    if train is False or p == 0:
        return [ex.tensor(x), None]
    return [dropout(ex, x, p, True), None]


def check_train_dropout(ex, p):
    message = (f"train-mode dropout (p={p}): attn.dropout draws its mask "
               f"from a counter-based hash, not PyTorch's generator, so "
               f"the compiled module's numbers differ from the module's")
    if ex.train_dropout == "error":
        ex.fail(f"{message}; call module.eval() before exporting, or "
                f"pass train_dropout='warn' to export it anyway")
    warnings.warn(f"{message} (at {describe(ex.node)})", stacklevel=4)
    ex.notes.append(message)


@handles(aten.repeat_interleave.self_int)
def repeat_interleave(ex, x, repeats, dim=None, output_size=None):
    x = ex.tensor(x)
    if not isinstance(repeats, int) or dim is None:
        ex.unsupported("repeat_interleave needs an int repeats and dim")
    return ex.b.attn("repeat_interleave", [x], ex.out_type(), [
        f"dim = {i64_attr(dim)}", f"repeats = {i64_attr(repeats)}"])


def write_sdpa(ex, q: Value, k: Value, v: Value, mask: Value | None,
               out: TensorType, scale: float, window_left=None,
               window_right=None, dropout_p=0.0, seed=None,
               safe_softmax=True, score_mod=None, q_lengths=None,
               kv_lengths=None, padding_side=None, sinks=None) -> Value:
    """The one writer of attn.sdpa. `window_right == 0` is spelt
    `is_causal` (the dialect's canonical form of that band); `seed` is
    written only with a dropout. `score_mod`: the lines of a score_mod
    region (`fn(score) -> (lines, result)` over the names of the region's
    score argument), without extra operands. `q_lengths`/`kv_lengths`:
    sequence lengths of a padded batch (`padding_side` "right" or
    "left") or of sequences back to back ("packed"). `sinks`: one sink logit per query head ([H])."""
    attrs = SdpaAttrs(
        scale=scale, is_causal=window_right == 0,
        window_right=None if window_right == 0 else window_right,
        window_left=window_left, dropout_p=dropout_p,
        seed=seed if dropout_p else None, safe_softmax=safe_softmax,
        padding_side=padding_side)
    if score_mod is None:
        return ex.b.sdpa(q, k, v, mask, out, attrs, q_lengths=q_lengths,
                         kv_lengths=kv_lengths, sinks=sinks)
    score_type = "f64" if q.type.dtype == torch.float64 else "f32"
    indices = ", ".join(f"%i{d}: index" for d in range(out.rank))
    lines, result = score_mod("%s", score_type)
    region = [f"^bb0(%s: {score_type}, {indices}):", *lines,
              f'"attn.yield"({result}) : ({score_type}) -> ()']
    return ex.b.sdpa(q, k, v, mask, out, attrs, region=region, sinks=sinks)


@handles(aten.scaled_dot_product_attention.default)
def sdpa(ex, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False,
         scale=None, enable_gqa=False):
    """F.scaled_dot_product_attention. A boolean mask built as a
    conjunction (transformers' causal & window & padding) gives its band
    terms to is_causal/window attributes and the rest to the mask operand
    (ops/masks.py). PyTorch (>= 2.5) gives 0, not NaN, for a query row no
    key may attend to (its math path uses _safe_softmax, its CPU flash
    kernel does the same), hence safe_softmax."""
    out = ex.out_type()
    q, k, v = ex.tensor(q), ex.tensor(k), ex.tensor(v)
    seed = None
    if dropout_p:
        check_train_dropout(ex, dropout_p)
        seed = ex.num_dropouts
        ex.num_dropouts += 1
    mask, left, right = _mask_and_band(ex, q, attn_mask, is_causal)
    if scale is None:
        scale = _default_scale(ex, q.type.dims[-1])
    return write_sdpa(ex, q, k, v, mask, out, scale, left, right, dropout_p,
                      seed)


@handles(torch.ops.attnfuse.varlen_attention.default)
def varlen_attention(ex, q, k, v, q_lengths, kv_lengths, attn_mask,
                     is_causal, scale, left):
    """torch.ops.attnfuse.varlen_attention (attnfuse/varlen.py): SDPA of a
    padded batch with sequence lengths, one attn.sdpa with q_lengths and
    kv_lengths."""
    out = ex.out_type()
    q, k, v = ex.tensor(q), ex.tensor(k), ex.tensor(v)
    mask, band_left, band_right = _mask_and_band(ex, q, attn_mask, is_causal)
    lengths = [None if x is None else ex.tensor(x)
               for x in (q_lengths, kv_lengths)]
    if scale is None:
        scale = _default_scale(ex, q.type.dims[-1])
    return write_sdpa(ex, q, k, v, mask, out, scale, band_left, band_right,
                      q_lengths=lengths[0], kv_lengths=lengths[1],
                      padding_side="left" if left else "right")


@handles(torch.ops.attnfuse.packed_attention.default)
def packed_attention(ex, q, k, v, q_lengths, kv_lengths, is_causal, scale):
    """torch.ops.attnfuse.packed_attention (attnfuse/varlen.py): SDPA of
    sequences packed back to back, one attn.sdpa with q_lengths,
    kv_lengths and `padding_side = packed`."""
    out = ex.out_type()
    q, k, v = ex.tensor(q), ex.tensor(k), ex.tensor(v)
    _, band_left, band_right = _mask_and_band(ex, q, None, is_causal)
    if scale is None:
        scale = _default_scale(ex, q.type.dims[-1])
    return write_sdpa(ex, q, k, v, None, out, scale, band_left, band_right,
                      q_lengths=ex.tensor(q_lengths),
                      kv_lengths=ex.tensor(kv_lengths),
                      padding_side="packed")


def _mask_and_band(ex, q, attn_mask, is_causal):
    """SDPA's mask operand and band (window_left, window_right) from its
    attn_mask and is_causal."""
    left = right = None
    if is_causal:
        right = 0
    mask = None
    if attn_mask is not None:
        dtype = ex.dtype_of(attn_mask)
        if dtype == torch.bool:
            band, rest = split_mask_terms(ex, attn_mask)
            if band is not None:
                left = band[0]
                right = band[1] if right is None or band[1] is None else \
                    min(right, band[1])
            mask = and_all(ex, rest) if rest else None
        else:
            mask = ex.tensor(attn_mask)
            if mask.type.dtype != q.type.dtype:
                mask = ex.convert(mask, q.type.dtype)
    return mask, left, right


def _default_scale(ex, head_dim) -> float:
    """SDPA's scale when none is given, 1 / sqrt(E). With E = 0 every score
    is an empty sum, 0, and PyTorch's result is the (masked) mean of the
    values (its 1 / sqrt(0) multiplies empty operands): any finite scale
    gives that, an infinite one would give 0 * inf = NaN. A dynamic E
    needs the scale spelt out (it is an attribute)."""
    if not isinstance(head_dim, int):
        ex.fail(f"scaled_dot_product_attention with a dynamic head dim "
                f"({head_dim}) needs an explicit scale=")
    return 1.0 / math.sqrt(head_dim) if head_dim > 0 else 1.0



# ---- attention over a static KV cache (attnfuse.kvcache) -------------------
def _softcap_region(cap: float):
    """Gemma-2's soft-capping `cap * tanh(s / cap)` as score_mod code."""
    def body(score, t):
        dtype = torch.float64 if t == "f64" else torch.float32
        c = f"arith.constant {mlir.scalar_literal(cap, dtype)}"
        return [f"%cap = {c}", f"%d = arith.divf {score}, %cap : {t}",
                f"%t = math.tanh %d : {t}",
                f"%r = arith.mulf %t, %cap : {t}"], "%r"
    return body


def _size(d):
    """A size expression simplified (an int when it is one)."""
    if isinstance(d, int):
        return d
    d = sympy.simplify(d)
    return int(d) if d.is_Integer else d


def _keys_from(ex, x: Value, start, dim=-2) -> Value:
    """x[..., start:, ...] along `dim` (the keys), start a size."""
    if start == 0:
        return x
    dims = list(x.type.dims)
    offsets = [0] * len(dims)
    offsets[dim] = start
    dims[dim] = _size(dims[dim] - start)
    return extract_slice(ex, x, offsets, dims, result=x.type.with_dims(dims))


def _band(ex, rows, keys, window) -> Value:
    """`[rows, keys]` bool for queries that end where the keys end: query i
    is at key `i + keys - rows`; key j takes part when it is at most there
    and, with a window, within `window` keys of it."""
    out = TensorType((rows, keys), torch.bool)
    shift = Scalar(ex.b.index(_size(keys - rows)), INDEX)
    low = Scalar(ex.b.index(1 - window), INDEX) if window > 0 else None

    def body(b, args, o):
        i, j = b.index(0), b.index(1)
        last = b.arith("addi", i, shift)
        keep = b.cmp("le", j, last)
        if low is not None:
            first = b.arith("addi", last, low)
            keep = b.arith("andi", keep, b.cmp("ge", j, first))
        return keep
    return ex.b.generic([], [mlir.identity_map(2)], out,
                        ["parallel", "parallel"], body)


def _padding_mask(ex, pad: Value, q: Value) -> Value:
    """The `[B, S]` padding mask as `[B, 1, ..., 1, S]` for the scores."""
    shape = (pad.type.dims[0],) + (1,) * (q.type.rank - 2) + \
        (pad.type.dims[1],)
    return reshape_to(ex, pad, pad.type.with_dims(shape))


@handles(torch.ops.attnfuse.cached_attention.default)
def cached_attention(ex, q, k, v, padding, scale, causal, window, softcap,
                     sinks=None):
    """torch.ops.attnfuse.cached_attention (attnfuse/kvcache.py) as one
    attn.sdpa: queries ending where the keys end. With as many queries as
    keys (prefill) that is `is_causal` (and `window_left`); one query
    (decode) takes every key, so with a window only the window's slice of
    the keys is read; other steps slice to the window and mask the band
    they need at run time. The padding mask is `[B, 1, 1, S]`;
    soft-capping is a score_mod region; `sinks` (GPT-OSS) the op's sinks."""
    out = ex.out_type()
    q, k, v, pad = (ex.tensor(x) for x in (q, k, v, padding))
    if sinks is not None:
        sinks = ex.tensor(sinks)
    L, S = q.type.dims[-2], k.type.dims[-2]
    window = int(window)
    if window > 0 and not causal:
        ex.unsupported("a sliding window without causality")
    left = right = None
    start, band = 0, False
    if causal and _size(sympy.sympify(L) - S) == 0:
        right = 0
        left = window - 1 if window > 0 else None
    elif window > 0:
        # The first key of the first query's window.
        start = _size(sympy.Max(0, sympy.sympify(S) - L - window + 1))
        band = L != 1
    else:
        band = causal and L != 1
    k, v = _keys_from(ex, k, start), _keys_from(ex, v, start)
    mask = _padding_mask(ex, _keys_from(ex, pad, start, dim=-1), q)
    if band:
        keys = k.type.dims[-2]
        mask = and_all(ex, [mask, _band(ex, L, keys, window)])
    region = _softcap_region(float(softcap)) if softcap > 0 else None
    return write_sdpa(ex, q, k, v, mask, out, float(scale), left, right,
                      score_mod=region, sinks=sinks)
