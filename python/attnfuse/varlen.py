"""Variable-length batches: attention with per-sequence lengths, and
`attnfuse.compile` of modules called with jagged NestedTensors.

`torch.ops.attnfuse.varlen_attention` is F.scaled_dot_product_attention on
a padded batch `[B, H, L, E]` whose sequence b has `q_lengths[b]` real
query rows and `kv_lengths[b]` real keys (the first ones, or with
`left=True` the last ones). The exporter writes it as one attn.sdpa with
`q_lengths`/`kv_lengths` operands (docs/AttnOps.md), which the CPU
lowerings turn into skipped query and key blocks; in eager PyTorch it is
SDPA with the equivalent boolean mask (padded rows are 0, as SDPA gives a
row its mask removes entirely).

`torch.ops.attnfuse.packed_attention` is the same attention on the packed
layout (FlashAttention's varlen form): the sequences' tokens back to back
along the rows, `[..., T, E]`, with the lengths splitting them; the
exporter writes one attn.sdpa with `padding_side = packed`.

torch.export cannot take NestedTensors. `compile` of a module whose example
inputs include jagged NestedTensors (`torch.nested.nested_tensor(...,
layout=torch.jagged)`) therefore exports the module on their values, the
tokens of all sequences back to back (`[T, ...]`, run as a batch of one:
the projections compute the real tokens only), with one more input, the
sequence lengths; every F.scaled_dot_product_attention the module calls (a
TorchFunctionMode while torch.export traces) becomes packed_attention on
those tokens, so that nothing is gathered or padded: each sequence's query
blocks read its own keys in place. The compiled callable returns each
output over the tokens as a NestedTensor with the input's offsets. This is
exact when every op of the module other than the attention treats tokens
independently (projections, norms, elementwise ops, views that split or
merge feature dims), as the tutorial's CausalSelfAttention does; `compile`
checks it on the example inputs against eager PyTorch on each sequence
alone and refuses a module for which they differ (a sequence-mixing op
such as a softmax over the tokens).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
import torch.utils._pytree as pytree
from torch.overrides import TorchFunctionMode

from .errors import AttnFuseError, InputError


@torch.library.custom_op("attnfuse::varlen_attention", mutates_args=())
def varlen_attention(query: torch.Tensor, key: torch.Tensor,
                     value: torch.Tensor, q_lengths: torch.Tensor | None,
                     kv_lengths: torch.Tensor | None,
                     attn_mask: torch.Tensor | None, is_causal: bool,
                     scale: float | None, left: bool) -> torch.Tensor:
    """SDPA of a padded batch (query `[B, H, L, E]`, key/value `[B, Hkv, S,
    E]`, H a multiple of Hkv) with the sequence lengths (`[B]` integers,
    None: all real): key j of row i of sequence b takes part when both are
    real and `attn_mask` (bool, or added when float) and `is_causal` allow
    it; a row with no key is 0. The reference; the exporter writes one
    attn.sdpa with lengths."""
    L, S = query.shape[-2], key.shape[-2]
    keep = length_mask(q_lengths, kv_lengths, query.shape[0], L, S, left,
                       query.device)
    if is_causal:
        keep = keep & torch.ones(L, S, dtype=torch.bool,
                                 device=query.device).tril()
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        keep = keep & attn_mask
    elif attn_mask is not None:
        keep = torch.zeros(keep.shape, dtype=query.dtype,
                           device=query.device).masked_fill(
                               ~keep, float("-inf")) + attn_mask
    out = F.scaled_dot_product_attention(
        query, key, value, attn_mask=keep, scale=scale,
        enable_gqa=query.shape[-3] != key.shape[-3])
    return _heads_inner(out)


@torch.library.custom_op("attnfuse::packed_attention", mutates_args=())
def packed_attention(query: torch.Tensor, key: torch.Tensor,
                     value: torch.Tensor, q_lengths: torch.Tensor,
                     kv_lengths: torch.Tensor, is_causal: bool,
                     scale: float | None) -> torch.Tensor:
    """SDPA of sequences packed back to back: query `[..., T, E]` holds
    sequence b's rows at `qo[b] ... qo[b] + q_lengths[b] - 1` (`qo` the
    sums of the lengths before b), key/value `[..., S, E]` its keys
    likewise (the head dim, third from the end, may divide the query's:
    GQA); each sequence attends to its own keys only, `is_causal` within
    the sequence, and a sequence without keys gives 0. The reference: SDPA
    on each sequence alone. The exporter writes one attn.sdpa with
    `padding_side = packed`."""
    if q_lengths.numel() != kv_lengths.numel() or \
            bool((q_lengths < 0).any()) or bool((kv_lengths < 0).any()) or \
            int(q_lengths.sum()) != query.shape[-2] or \
            int(kv_lengths.sum()) != key.shape[-2]:
        raise ValueError(
            "packed_attention: q_lengths and kv_lengths need one length "
            "(>= 0) per sequence each, summing to the query's and the "
            "key's rows")
    qo = [0] + torch.cumsum(q_lengths, 0).tolist()
    ko = [0] + torch.cumsum(kv_lengths, 0).tolist()
    out = query.new_zeros(query.shape[:-1] + value.shape[-1:])
    gqa = query.dim() >= 3 and query.shape[-3] != key.shape[-3]
    for b in range(q_lengths.numel()):
        if qo[b + 1] == qo[b] or ko[b + 1] == ko[b]:
            continue
        out[..., qo[b]:qo[b + 1], :] = F.scaled_dot_product_attention(
            query[..., qo[b]:qo[b + 1], :], key[..., ko[b]:ko[b + 1], :],
            value[..., ko[b]:ko[b + 1], :], is_causal=is_causal,
            scale=scale, enable_gqa=gqa)
    return _heads_inner(out)


@packed_attention.register_fake
def _(query, key, value, q_lengths, kv_lengths, is_causal, scale):
    return _fake_result(query, value)


def _heads_inner(out):
    """`out` laid out as `[B, L, H, Ev]` in memory (as SDPA's own result
    is on the CPU), so that modules can `transpose(1, 2).view(B, L, -1)`
    it."""
    if out.dim() != 4:
        return out.contiguous()
    return out.transpose(1, 2).contiguous().transpose(1, 2)


@varlen_attention.register_fake
def _(query, key, value, q_lengths, kv_lengths, attn_mask, is_causal, scale,
      left):
    return _fake_result(query, value)


def _fake_result(query, value):
    """The result's shape, laid out as _heads_inner lays it out."""
    shape = query.shape[:-1] + value.shape[-1:]
    if len(shape) != 4:
        return query.new_empty(shape)
    b, h, L, ev = shape
    return query.new_empty(b, L, h, ev).transpose(1, 2)


def length_mask(q_lengths, kv_lengths, batch, L, S, left=False,
                device=None) -> torch.Tensor:
    """`[B, 1, L, S]` bool: real query row and real key (the padded
    equivalent of the lengths)."""
    i = torch.arange(L, device=device).view(1, L, 1)
    j = torch.arange(S, device=device).view(1, 1, S)
    keep = torch.ones(batch, L, S, dtype=torch.bool, device=device)
    if q_lengths is not None:
        n = q_lengths.view(-1, 1, 1)
        keep = keep & ((i >= L - n) if left else (i < n))
    if kv_lengths is not None:
        n = kv_lengths.view(-1, 1, 1)
        keep = keep & ((j >= S - n) if left else (j < n))
    return keep[:, None]


# ---- jagged NestedTensors --------------------------------------------------
def is_jagged(x) -> bool:
    return isinstance(x, torch.Tensor) and x.is_nested and \
        x.layout == torch.jagged


_SDPA_ARGS = ("query", "key", "value", "attn_mask", "dropout_p",
              "is_causal", "scale", "enable_gqa")


class _PackedMode(TorchFunctionMode):
    """Calls of F.scaled_dot_product_attention on the packed tokens
    (`[1, H, T, E]`: the module ran on the tokens of all sequences as a
    batch of one) become packed_attention with the sequence lengths: each
    sequence attends to its own tokens, in place.

    `causal`: None (NestedTensors), where a call's attn_mask is refused and
    its is_causal kept; or, for a padded batch packed by `skip_padding`,
    the list that _PackedMaskProbe made of each call in order (whether its
    mask and is_causal are the causal or the full attention within each
    sequence), which replaces the mask the model built."""

    def __init__(self, lengths, tokens, causal=None,
                 what="NestedTensors"):
        super().__init__()
        self.lengths = lengths
        self.tokens = tokens
        self.causal = causal
        self.what = what
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func is not F.scaled_dot_product_attention:
            return func(*args, **kwargs)
        bound = _sdpa_bound(args, kwargs, self.tokens, self.what)
        is_causal = bool(bound.get("is_causal", False))
        if self.causal is not None:
            if self.calls >= len(self.causal):
                raise AttnFuseError(
                    f"the module called scaled_dot_product_attention more "
                    f"often while exported ({self.calls + 1}) than on the "
                    f"example ({len(self.causal)})")
            is_causal = self.causal[self.calls]
        elif bound.get("attn_mask") is not None:
            raise AttnFuseError(
                f"scaled_dot_product_attention with an attn_mask on "
                f"{self.what} is not supported (is_causal is)")
        self.calls += 1
        return torch.ops.attnfuse.packed_attention(
            bound["query"], bound["key"], bound["value"], self.lengths,
            self.lengths, is_causal, bound.get("scale"))


def _sdpa_bound(args, kwargs, tokens, what) -> dict:
    """F.scaled_dot_product_attention's arguments by name, checked to be
    self-attention over the `tokens` packed tokens without dropout."""
    bound = dict(zip(_SDPA_ARGS, args))
    bound.update(kwargs)
    q, k, v = bound["query"], bound["key"], bound["value"]
    if bound.get("dropout_p", 0.0):
        raise AttnFuseError(
            f"scaled_dot_product_attention with dropout_p > 0 on {what} "
            f"is not supported (call the module in eval mode)")
    if q.dim() != 4 or q.shape[0] != 1 or \
            not (q.shape[-2] == k.shape[-2] == v.shape[-2]) or \
            q.shape[-2] != tokens:
        raise AttnFuseError(
            f"scaled_dot_product_attention on {what}: only self-attention "
            f"over the tokens ([B, H, j, E] query, key and value of one "
            f"length) is supported")
    return bound


class _PackedMaskProbe(TorchFunctionMode):
    """Runs the packed module eagerly on the example (real tensors) and
    records, per call of F.scaled_dot_product_attention, whether the
    attention it asks for within each sequence of `lengths` (its attn_mask,
    boolean or added, and is_causal, restricted to pairs of tokens of one
    sequence) is causal or full: an encoder called on packed tokens builds
    no mask (full), a decoder given per-sequence `position_ids` the causal
    one (transformers' packed-sequence masks) or is_causal. Across
    sequences the packed attention replaces whatever the mask says. Other
    forms (a sliding window, a mask that drops keys of the sequence) are
    an AttnFuseError, and so is an example where the two cannot be told
    apart (no sequence of 2 tokens)."""

    def __init__(self, lengths, tokens):
        super().__init__()
        self.lengths = lengths
        self.tokens = tokens
        self.causal = []
        seq = torch.repeat_interleave(torch.arange(lengths.numel()),
                                      lengths)
        self.same = seq[:, None] == seq[None, :]
        self.lower = torch.ones(tokens, tokens, dtype=torch.bool).tril()
        if not bool((lengths >= 2).any()):
            raise AttnFuseError(
                "skip_padding=True needs an example with a sequence of at "
                "least 2 tokens (its attention masks tell causal from full "
                "attention)")

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func is not F.scaled_dot_product_attention:
            return func(*args, **kwargs)
        n = len(self.causal)
        bound = _sdpa_bound(args, kwargs, self.tokens,
                            "a batch packed by skip_padding")
        keep = self.lower if bound.get("is_causal", False) else \
            torch.ones_like(self.lower)
        mask = bound.get("attn_mask")
        if mask is not None:
            mask = mask.detach().cpu()
            if mask.dtype != torch.bool:
                dropped = mask <= torch.finfo(mask.dtype).min / 2
                if not bool(((mask == 0) | dropped).all()):
                    raise AttnFuseError(
                        f"skip_padding=True: attention call {n} adds a "
                        f"mask with values other than 0 and -inf (a "
                        f"bias): only masks that keep or drop keys can "
                        f"become sequence lengths")
                mask = ~dropped
            mask = mask.expand(mask.shape[:-2] + (self.tokens, self.tokens))
            keep = keep & mask
        # Within each sequence; what the mask says across sequences is
        # what packing replaces (in the padded batch they are other rows).
        keep = keep.reshape(-1, self.tokens, self.tokens) & self.same
        if bool((keep == (self.same & self.lower)).all()):
            self.causal.append(True)
        elif bool((keep == self.same).all()):
            self.causal.append(False)
        else:
            raise AttnFuseError(
                f"skip_padding=True: attention call {n} is not causal or "
                f"full attention within each sequence of the packed "
                f"example (a sliding window, or a mask that does not come "
                f"from the padding), so its padding cannot become "
                f"sequence lengths")
        return func(*args, **kwargs)


class PackedModule(torch.nn.Module):
    """`module` on the packed tokens of NestedTensors: the inputs at
    `nested` arrive as their values `[T, ...]` (a batch of one inside),
    then the sequence lengths `[B]` (int64)."""

    def __init__(self, module, nested: tuple[int, ...]):
        super().__init__()
        self.module = module
        self.nested = nested

    def forward(self, *args):
        *inputs, lengths = args
        total = inputs[self.nested[0]].shape[0]
        inputs = [x.unsqueeze(0) if n in self.nested else x
                  for n, x in enumerate(inputs)]
        with _PackedMode(lengths, total):
            out = self.module(*inputs)
        return _tokens_out(out, total)


def _tokens_out(out, total):
    """Each output `[1, total, ...]` of a module run on `total` packed
    tokens as a batch of one, as `[total, ...]`; other outputs as they
    are."""
    return pytree.tree_map(
        lambda t: t.squeeze(0) if isinstance(t, torch.Tensor) and
        t.dim() >= 2 and t.shape[0] == 1 and t.shape[1] == total else t,
        out)


def nested_offsets(args) -> torch.Tensor:
    """The one offsets tensor the jagged NestedTensor inputs share (an
    InputError when they differ)."""
    offsets = None
    for x in args:
        if not is_jagged(x):
            continue
        if x.dim() < 3 or x._ragged_idx != 1:
            raise InputError(
                f"a NestedTensor input must be [B, j, ...] ragged in dim 1, "
                f"got {x.dim()} dims ragged in dim {x._ragged_idx}")
        o = x.offsets()
        if offsets is None:
            offsets = o
        elif not torch.equal(o, offsets):
            raise InputError("the NestedTensor inputs have different "
                             "sequence lengths")
    return offsets


def pack_inputs(args):
    """The NestedTensor inputs as their values, then the sequence lengths
    (int64), and the offsets."""
    offsets = nested_offsets(args)
    if int(offsets[-1]) == 0:
        raise InputError("the NestedTensor inputs hold no token")
    values = tuple(x.values() if is_jagged(x) else x for x in args)
    return values + (offsets.to(torch.int64).diff(),), offsets


def repack_outputs(outputs, offsets):
    """Each output `[T, ...]` with the inputs' T tokens as a jagged
    NestedTensor with their offsets; other outputs as they are."""
    total = int(offsets[-1])

    def repack(t):
        if not isinstance(t, torch.Tensor) or t.dim() < 2 or \
                t.shape[0] != total:
            return t
        return torch.nested.nested_tensor_from_jagged(t, offsets)
    return pytree.tree_map(repack, outputs)


def dynamic_packed_shapes(args, nested_positions):
    """torch.export's dynamic_shapes for the packed module: the tokens and
    the number of sequences."""
    tokens = batch = torch.export.Dim.DYNAMIC
    shapes = [{0: tokens} if n in nested_positions else None
              for n in range(len(args))]
    shapes += [{0: batch}]
    return (tuple(shapes),)


# ---- padded batches packed by compile(skip_padding=True) -------------------
class UnpaddedModule(torch.nn.Module):
    """`module` on the real tokens of a padded batch, packed back to back
    as a batch of one (attnfuse.compiler's skip_padding): called with the
    tensors of `names` (those in `tokens` as their real tokens `[T, ...]`,
    the others as they are) and then the sequence lengths `[B]` (int64),
    it calls `module(**{name: tensor}, **constants)` under _PackedMode.
    Its first call (eager, on the example) runs _PackedMaskProbe instead
    and keeps what each attention call asks for; torch.export then traces
    the later calls."""

    def __init__(self, module, names, tokens, constants):
        super().__init__()
        self.module = module
        self.names = tuple(names)
        self.tokens = frozenset(tokens)
        self.constants = dict(constants)
        self.causal = None

    def forward(self, *args):
        *inputs, lengths = args
        total = next(x.shape[0] for n, x in zip(self.names, inputs)
                     if n in self.tokens)
        kwargs = {n: x.unsqueeze(0) if n in self.tokens else x
                  for n, x in zip(self.names, inputs)}
        if self.causal is None:
            mode = _PackedMaskProbe(lengths, total)
        else:
            mode = _PackedMode(lengths, total, self.causal,
                               "a batch packed by skip_padding")
        with mode:
            out = self.module(**kwargs, **self.constants)
        if self.causal is None:
            self.causal = mode.causal
        return _tokens_out(out, total)


def padding_keep(mask, name="attention_mask") -> torch.Tensor:
    """The `[B, T]` padding mask (bool, or integers / floats 0 and 1; 1 for
    a token) as bool; an InputError for anything else."""
    if not isinstance(mask, torch.Tensor) or mask.dim() != 2 or \
            mask.is_nested:
        got = tuple(mask.shape) if isinstance(mask, torch.Tensor) else \
            type(mask).__name__
        raise InputError(f"{name} must be a [B, T] tensor of 0 and 1 "
                         f"(1 for a token) with skip_padding=True, got "
                         f"{got}")
    if mask.dtype == torch.bool:
        return mask.cpu()
    if mask.is_complex() or not bool(((mask == 0) | (mask == 1)).all()):
        raise InputError(f"{name} must hold only 0 and 1 (1 for a token) "
                         f"with skip_padding=True")
    return (mask == 1).cpu()


def unpad(values: dict, tokens, keep) -> tuple[list, torch.Tensor]:
    """`values` (name: tensor) with those in `tokens` reduced to their real
    tokens (`[T, ...]`, row by row), then the lengths (int64)."""
    out = []
    for name, x in values.items():
        if name in tokens:
            if x.dim() < 2 or tuple(x.shape[:2]) != tuple(keep.shape):
                raise InputError(
                    f"{name} is {tuple(x.shape)}: with skip_padding=True it "
                    f"must be [B, T, ...] like the attention_mask "
                    f"{tuple(keep.shape)}")
            x = x[keep.to(x.device)]
        out.append(x)
    return out, keep.sum(1, dtype=torch.int64)


def repad(out, keep, leaves: frozenset):
    """The outputs with each leaf at index in `leaves` (over the real
    tokens, `[T, ...]`) put back at its tokens' places in a `[B, T, ...]`
    zero tensor."""
    flat, spec = pytree.tree_flatten(out)
    for i in leaves:
        t = flat[i]
        full = t.new_zeros(tuple(keep.shape) + tuple(t.shape[1:]))
        full[keep.to(t.device)] = t
        flat[i] = full
    return pytree.tree_unflatten(flat, spec)
