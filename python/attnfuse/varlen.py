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

torch.export cannot take NestedTensors. `compile` of a module whose example
inputs include jagged NestedTensors (`torch.nested.nested_tensor(...,
layout=torch.jagged)`) therefore exports the module on the padded batch
(`NestedTensor.to_padded_tensor(0)`, `[B, max length, ...]`, batch and
length dynamic) plus the sequence lengths, with every
F.scaled_dot_product_attention the module calls replaced by
varlen_attention with those lengths (a TorchFunctionMode while torch.export
traces). The compiled callable pads the NestedTensor inputs the same way
and returns each output that keeps the padded `[B, L, ...]` layout as a
NestedTensor with the input's offsets. This is exact when every op of the
module other than the attention treats tokens independently (projections,
norms, elementwise ops, views that split or merge feature dims), as the
tutorial's CausalSelfAttention does; `compile` checks it on the example
inputs against eager PyTorch on the NestedTensors and refuses a module for
which they differ (a sequence-mixing op such as a mean over tokens).
"""

from __future__ import annotations

import contextlib

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


class _LengthsMode(TorchFunctionMode):
    """Calls of F.scaled_dot_product_attention become varlen_attention
    with `lengths` for queries and keys (self-attention over the padded
    tokens)."""

    def __init__(self, lengths):
        super().__init__()
        self.lengths = lengths

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func is not F.scaled_dot_product_attention:
            return func(*args, **kwargs)
        names = ("query", "key", "value", "attn_mask", "dropout_p",
                 "is_causal", "scale", "enable_gqa")
        bound = dict(zip(names, args))
        bound.update(kwargs)
        q, k = bound["query"], bound["key"]
        if bound.get("dropout_p", 0.0):
            raise AttnFuseError(
                "scaled_dot_product_attention with dropout_p > 0 on "
                "NestedTensors is not supported (call the module in eval "
                "mode)")
        if q.dim() < 3 or q.shape[-2] != k.shape[-2]:
            raise AttnFuseError(
                "scaled_dot_product_attention on NestedTensors: only "
                "self-attention over the nested tokens ([B, H, j, E] query "
                "and key of one length) is supported")
        return torch.ops.attnfuse.varlen_attention(
            q, k, bound["value"], self.lengths, self.lengths,
            bound.get("attn_mask"), bool(bound.get("is_causal", False)),
            bound.get("scale"), False)


class PaddedModule(torch.nn.Module):
    """`module` on padded batches: its NestedTensor inputs arrive as
    `[B, L, ...]` padded tensors (their positions in `nested`) and one
    lengths tensor `[B]` last."""

    def __init__(self, module, nested: tuple[int, ...]):
        super().__init__()
        self.module = module
        self.nested = nested

    def forward(self, *args):
        *inputs, lengths = args
        with _LengthsMode(lengths):
            return self.module(*inputs)


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


@contextlib.contextmanager
def serial_torch():
    """torch's own ops on the calling thread: the padding and repacking
    copies are small, and a parallel one leaves torch's OpenMP team
    spinning on the cores the compiled module's parallel loops (another
    OpenMP runtime) need next (as attnfuse.generation does)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def pad_inputs(args, offsets):
    """The padded inputs and the lengths tensor (int64 `[B]`)."""
    lengths = offsets.diff().to(torch.int64)
    padded = tuple(x.to_padded_tensor(0.0) if is_jagged(x) else x
                   for x in args)
    return padded, lengths


def repack_outputs(outputs, offsets, length):
    """Each output `[B, L, ...]` with the padded batch's B and L as a
    jagged NestedTensor of the real tokens; other outputs as they are."""
    lengths = offsets.diff()
    batch = lengths.numel()

    def repack(t):
        if not isinstance(t, torch.Tensor) or t.dim() < 2 or \
                t.shape[0] != batch or t.shape[1] != length:
            return t
        values = torch.cat([t[b, :n] for b, n in
                            enumerate(lengths.tolist())])
        return torch.nested.nested_tensor_from_jagged(values, offsets)
    return pytree.tree_map(repack, outputs)


def dynamic_padded_shapes(padded, nested_positions):
    """torch.export's dynamic_shapes for the padded module: the batch and
    the padded length of every padded input, and the lengths' batch."""
    batch = torch.export.Dim("batch", min=1)
    seq = torch.export.Dim("seq", min=1)
    shapes = []
    for n, x in enumerate(padded):
        if n in nested_positions:
            shapes.append({0: batch, 1: seq})
        else:
            shapes.append(None)
    shapes.append({0: batch})
    return (tuple(shapes),)
