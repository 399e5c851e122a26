"""The attention modules the tests export, written as their sources write
them (the seed article, nanoGPT, Hugging Face, a GQA block, SDPA)."""

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


class NaiveCausalAttention(nn.Module):
    """The seed article's attention: q, k, v in, causal mask built inside."""

    def __init__(self, head_dim=8, inplace=False):
        super().__init__()
        self.head_dim = head_dim
        self.inplace = inplace

    def forward(self, q, k, v):
        L = q.size(-2)
        mask = torch.ones(L, L, dtype=torch.bool).triu(1)
        scores = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(self.head_dim))
        if self.inplace:
            scores.masked_fill_(mask, float("-inf"))
        else:
            scores = scores.masked_fill(mask, float("-inf"))
        return scores.softmax(-1) @ v


class MaskedAttention(nn.Module):
    """The seed's chain with the mask as an input (rows may be fully
    masked: PyTorch gives NaN there, and so must the compiled module)."""

    def forward(self, q, k, v, mask):
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        scores = scores.masked_fill(mask, float("-inf"))
        return torch.softmax(scores, dim=-1) @ v


@dataclass
class GPTConfig:
    block_size: int = 32
    n_embd: int = 32
    n_head: int = 4
    dropout: float = 0.1
    bias: bool = True


class CausalSelfAttention(nn.Module):
    """nanoGPT's block without flash (the hand-written path)."""

    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.register_buffer("bias", torch.tril(torch.ones(
            config.block_size, config.block_size)).view(
                1, 1, config.block_size, config.block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = self.attn_dropout(att)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        y = self.resid_dropout(self.c_proj(y))
        return y


def gpt_block():
    """A factory for the command line (the class needs a config)."""
    return CausalSelfAttention(GPTConfig())


class HFSelfAttention(nn.Module):
    """BERT-style self-attention: an additive padding mask
    `(1 - mask) * finfo(dtype).min`, as Hugging Face builds it."""

    def __init__(self, hidden=32, heads=4):
        super().__init__()
        self.num_heads = heads
        self.head_size = hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)

    def split_heads(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.head_size).permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask):
        q = self.split_heads(self.query(hidden_states))
        k = self.split_heads(self.key(hidden_states))
        v = self.split_heads(self.value(hidden_states))
        dtype = hidden_states.dtype
        extended = attention_mask[:, None, None, :].to(dtype)
        extended = (1.0 - extended) * torch.finfo(dtype).min
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size)
        scores = scores + extended
        probs = nn.functional.softmax(scores, dim=-1)
        context = torch.matmul(probs, v).permute(0, 2, 1, 3)
        B, T = context.shape[:2]
        return context.reshape(B, T, self.num_heads * self.head_size)


class HFBoolMaskAttention(HFSelfAttention):
    """The same block with a boolean padding mask filled with
    `finfo(dtype).min` (masked_fill), as newer Hugging Face code does."""

    def forward(self, hidden_states, attention_mask):
        q = self.split_heads(self.query(hidden_states))
        k = self.split_heads(self.key(hidden_states))
        v = self.split_heads(self.value(hidden_states))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size)
        pad = attention_mask[:, None, None, :] == 0
        scores = scores.masked_fill(pad, torch.finfo(scores.dtype).min)
        probs = nn.functional.softmax(scores, dim=-1)
        context = torch.matmul(probs, v).permute(0, 2, 1, 3)
        B, T = context.shape[:2]
        return context.reshape(B, T, self.num_heads * self.head_size)


class GroupedQueryAttention(nn.Module):
    """Grouped-query attention: 4 query heads share 2 k/v heads through
    repeat_interleave; causal mask from arange comparisons."""

    def __init__(self, hidden=32, q_heads=4, kv_heads=2):
        super().__init__()
        self.q_heads, self.kv_heads = q_heads, kv_heads
        self.head_dim = hidden // q_heads
        self.q_proj = nn.Linear(hidden, q_heads * self.head_dim, bias=False)
        self.kv_proj = nn.Linear(hidden, 2 * kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(q_heads * self.head_dim, hidden, bias=False)

    def forward(self, x):
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.q_heads, self.head_dim).transpose(1, 2)
        kv = self.kv_proj(x).view(B, T, 2 * self.kv_heads, self.head_dim)
        k, v = kv.transpose(1, 2).chunk(2, dim=1)
        groups = self.q_heads // self.kv_heads
        k = k.repeat_interleave(groups, dim=1)
        v = v.repeat_interleave(groups, dim=1)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        causal = torch.arange(T)[:, None] >= torch.arange(T)[None, :]
        att = att.masked_fill(~causal, torch.finfo(att.dtype).min).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, -1)
        return self.o_proj(y)


class SDPAttention(nn.Module):
    """A block calling F.scaled_dot_product_attention(is_causal=True)."""

    def __init__(self, hidden=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2)
                   for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(B, T, C))


class UnmappedOpAttention(nn.Module):
    """Not supported: cummax has no mapping."""

    def forward(self, q, k, v):
        scores = (q @ k.transpose(-2, -1)).cummax(-1).values
        return scores.softmax(-1) @ v


class TwoBlocks(nn.Module):
    """Two nanoGPT blocks in a row: two attn.sdpa."""

    def __init__(self, config):
        super().__init__()
        self.a = CausalSelfAttention(config)
        self.b = CausalSelfAttention(config)

    def forward(self, x):
        return self.b(self.a(x))
