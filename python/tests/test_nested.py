"""attnfuse.compile of modules called with jagged NestedTensors
(attnfuse.varlen): the SDPA tutorial's CausalSelfAttention, causal and not,
f32 and bf16, against eager PyTorch on each sequence alone (float64) and
on the padded equivalent; the attention is one attn.sdpa in the packed
layout, moving no data; packed_attention itself (GQA, cross lengths) against
SDPA on each sequence; varlen_attention itself (left padding, GQA, a mask)
against SDPA with the equivalent mask; what is refused."""

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import attnfuse
from attnfuse.varlen import length_mask

from conftest import assert_matches

# What the exporter writes for lengths on queries and keys.
LENGTHS_SEGMENTS = "operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 1, 0, 0>"


class CausalSelfAttention(nn.Module):
    """The module of PyTorch's SDPA tutorial, as written there."""

    def __init__(self, num_heads, embed_dimension, bias=False,
                 is_causal=False, dropout=0.0):
        super().__init__()
        assert embed_dimension % num_heads == 0
        self.c_attn = nn.Linear(embed_dimension, 3 * embed_dimension,
                                bias=bias)
        self.c_proj = nn.Linear(embed_dimension, embed_dimension, bias=bias)
        self.dropout = dropout
        self.resid_dropout = nn.Dropout(dropout)
        self.num_heads = num_heads
        self.embed_dimension = embed_dimension
        self.is_causal = is_causal

    def forward(self, x):
        query_projected = self.c_attn(x)
        batch_size = query_projected.size(0)
        embed_dim = query_projected.size(2)
        head_dim = embed_dim // (self.num_heads * 3)
        query, key, value = query_projected.chunk(3, -1)
        query = query.view(batch_size, -1, self.num_heads,
                           head_dim).transpose(1, 2)
        key = key.view(batch_size, -1, self.num_heads,
                       head_dim).transpose(1, 2)
        value = value.view(batch_size, -1, self.num_heads,
                           head_dim).transpose(1, 2)
        dropout = self.dropout if self.training else 0.0
        y = F.scaled_dot_product_attention(query, key, value,
                                           attn_mask=None, dropout_p=dropout,
                                           is_causal=self.is_causal)
        y = y.transpose(1, 2).view(batch_size, -1,
                                   self.num_heads * head_dim)
        y = self.resid_dropout(self.c_proj(y))
        return y


def nested(lengths, dim, dtype):
    seqs = [torch.randn(n, dim).to(dtype) for n in lengths]
    return torch.nested.nested_tensor(seqs, layout=torch.jagged), seqs


def components(nt):
    o = nt.offsets().tolist()
    return [nt.values()[a:b] for a, b in zip(o[:-1], o[1:])]


@pytest.mark.parametrize("dtype,is_causal", [
    (torch.float32, True), (torch.float32, False), (torch.bfloat16, True)])
def test_tutorial_module_on_nested_tensors(dtype, is_causal):
    m = CausalSelfAttention(4, 64, bias=True, is_causal=is_causal).eval()
    m = m.to(dtype)
    reference = copy.deepcopy(m).double()
    x, _ = nested([5, 17, 1, 9], 64, dtype)
    c = attnfuse.compile(m, (x,))
    assert LENGTHS_SEGMENTS in c.mlir and c.mlir.count('"attn.sdpa"') == 1
    # Another batch size and other lengths (the longest past the
    # example's) without recompiling: batch and length are dynamic.
    for lengths in ([5, 17, 1, 9], [3, 30, 1], [12]):
        x, seqs = nested(lengths, 64, dtype)
        y = c(x)
        assert y.is_nested and y.layout == torch.jagged
        assert torch.equal(y.offsets(), x.offsets())
        with torch.no_grad():
            for got, s in zip(components(y), seqs):
                # The module on that sequence alone, in float64.
                want = reference(s.double()[None])[0].to(dtype)
                assert_matches(got, want)
            if is_causal:
                # The padded equivalent: right padding leaves the real rows
                # of a causal attention as they are.
                padded = m(x.to_padded_tensor(0.0))
                for b, got in enumerate(components(y)):
                    assert_matches(got, padded[b, :got.shape[0]])


def test_packed_attention_moves_no_data():
    """The attention runs on the packed tokens in place: one attn.sdpa in
    the packed layout, no gather (a linalg.generic that extracts) into or
    out of a padded batch, and the transposes the packing adds (tokens to
    heads and back) fold against the module's own, so the fused IR has no
    more attn.transpose than the padded module's."""
    from attnfuse.compiler import fuse
    m = CausalSelfAttention(4, 64).eval()
    x, _ = nested([5, 17, 1, 9], 64, torch.float32)
    packed, _ = fuse(attnfuse.compile(m, (x,)).mlir)
    padded, _ = fuse(attnfuse.compile(m, (torch.randn(2, 9, 64),)).mlir)
    assert "padding_side = #attn.padding_side<packed>" in packed
    assert "linalg.generic" not in packed and "tensor.extract " not in packed
    assert packed.count('"attn.transpose"') == padded.count('"attn.transpose"')


def test_packed_attention_op_gqa_cross_lengths():
    """packed_attention compiled (one attn.sdpa in the packed layout: GQA,
    different query and key lengths, a sequence without keys, causal
    within each sequence) equals its eager definition, which is SDPA on
    each sequence alone; rows without keys are 0 in both."""
    class M(nn.Module):
        def forward(self, q, k, v, ql, kl):
            return torch.ops.attnfuse.packed_attention(q, k, v, ql, kl, True,
                                                       None)
    ql = torch.tensor([7, 0, 20, 3])
    kl = torch.tensor([9, 4, 20, 0])
    q = torch.randn(1, 4, 30, 16)
    k, v = torch.randn(1, 2, 33, 16), torch.randn(1, 2, 33, 16)
    c = attnfuse.compile(M(), (q, k, v, ql, kl))
    assert "padding_side = #attn.padding_side<packed>" in c.mlir
    got = c(q, k, v, ql, kl)
    qo, ko = [0, 7, 7, 27, 30], [0, 9, 13, 33, 33]
    for b in range(4):
        qs, ks = slice(qo[b], qo[b + 1]), slice(ko[b], ko[b + 1])
        if ko[b + 1] == ko[b]:
            want = torch.zeros(1, 4, qo[b + 1] - qo[b], 16)
        else:
            want = F.scaled_dot_product_attention(
                q[:, :, qs].double(), k[:, :, ks].double(),
                v[:, :, ks].double(), is_causal=True, enable_gqa=True)
        assert_matches(got[:, :, qs], want.float())
        assert_matches(M()(q, k, v, ql, kl)[:, :, qs], want.float())
    assert torch.equal(got[:, :, 27:], torch.zeros_like(got[:, :, 27:]))
    # Lengths that do not cover the rows: refused by both.
    short = torch.tensor([7, 0, 20, 2])
    with pytest.raises(ValueError, match="summing to the query's"):
        M()(q, k, v, short, kl)
    with pytest.raises(attnfuse.AttnFuseError,
                       match="the packed q_lengths must sum to the query's "
                             "length"):
        c(q, k, v, short, kl)


def test_varlen_attention_left_padding_gqa_mask():
    """varlen_attention compiled (one attn.sdpa with lengths, left padding,
    GQA, a boolean mask) equals its eager definition, which is SDPA with the
    equivalent mask; rows without keys are 0 in both."""
    class M(nn.Module):
        def forward(self, q, k, v, ql, kl, mask):
            return torch.ops.attnfuse.varlen_attention(q, k, v, ql, kl, mask,
                                                       True, None, True)
    q = torch.randn(3, 4, 20, 16)
    k, v = torch.randn(3, 2, 20, 16), torch.randn(3, 2, 20, 16)
    ql = torch.tensor([20, 0, 7], dtype=torch.int32)
    kl = torch.tensor([20, 3, 7], dtype=torch.int32)
    mask = torch.rand(3, 1, 1, 20) < 0.8
    c = attnfuse.compile(M(), (q, k, v, ql, kl, mask))
    assert "padding_side = #attn.padding_side<left>" in c.mlir
    got = c(q, k, v, ql, kl, mask)
    keep = length_mask(ql, kl, 3, 20, 20, left=True) & mask & \
        torch.ones(20, 20, dtype=torch.bool).tril()
    want = F.scaled_dot_product_attention(q, k, v, attn_mask=keep,
                                          enable_gqa=True)
    assert_matches(got, want)
    assert_matches(M()(q, k, v, ql, kl, mask), want)
    assert torch.equal(got[1], torch.zeros_like(got[1]))
    assert torch.equal(got[2, :, :13], torch.zeros_like(got[2, :, :13]))


def test_nested_refusals():
    m = CausalSelfAttention(2, 32, is_causal=True).eval()
    x, _ = nested([3, 5], 32, torch.float32)
    c = attnfuse.compile(m, (x,))
    with pytest.raises(attnfuse.InputError, match="jagged NestedTensor"):
        c(torch.randn(2, 5, 32))
    empty = torch.nested.nested_tensor([torch.zeros(0, 32)] * 2,
                                       layout=torch.jagged)
    with pytest.raises(attnfuse.InputError, match="no token"):
        c(empty)
    # A sequence without tokens among others: no output rows for it.
    x0 = torch.nested.nested_tensor([torch.zeros(0, 32), torch.randn(3, 32)],
                                    layout=torch.jagged)
    y0 = c(x0)
    assert torch.equal(y0.offsets(), x0.offsets())
    with torch.no_grad():
        assert_matches(components(y0)[1], m(components(x0)[1][None])[0])

    class TwoInputs(nn.Module):
        def forward(self, a, b):
            return a + b
    y, _ = nested([4, 4], 32, torch.float32)
    with pytest.raises(attnfuse.InputError, match="different sequence"):
        attnfuse.compile(TwoInputs(), (x, y))

    class MixesTokens(nn.Module):
        """A softmax over the tokens mixes the sequences once packed."""
        def __init__(self):
            super().__init__()
            self.attn = CausalSelfAttention(2, 32, is_causal=True)

        def forward(self, x):
            return self.attn(torch.softmax(x, dim=1))
    with pytest.raises(attnfuse.AttnFuseError,
                       match="is not the packed module with lengths"):
        attnfuse.compile(MixesTokens().eval(), (x,))
