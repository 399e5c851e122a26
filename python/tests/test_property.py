"""A property test of the exporter against eager PyTorch: random small
attention-like modules (shapes, dtypes, how the scale and the mask are
written, broadcasts, fully masked rows, SDPA or the hand-written chain)
from a seeded generator, each compiled and compared with eager on fresh
inputs. ATTNFUSE_PROPERTY_CASES raises the count outside CI."""

import math
import os
import random

import pytest
import torch
import torch.nn.functional as F

import attnfuse

CASES = int(os.environ.get("ATTNFUSE_PROPERTY_CASES", "24"))
TOL = {torch.float32: (2e-5, 1e-5), torch.bfloat16: (4e-2, 2e-2),
       torch.float16: (5e-3, 5e-3)}


class RandomAttention(torch.nn.Module):
    """One random spec: the chain (or SDPA) as a model might write it."""

    def __init__(self, spec):
        super().__init__()
        self.spec = spec

    def forward(self, q, k, v, mask):
        s = self.spec
        if s["gqa"] > 1:
            k = k.repeat_interleave(s["gqa"], dim=1)
            v = v.repeat_interleave(s["gqa"], dim=1)
        if s["sdpa"]:
            m = mask if s["mask"] != "none" else None
            if m is not None and m.dtype == torch.bool:
                m = ~m  # the generator's masks say where to mask
            return F.scaled_dot_product_attention(
                q, k, v, attn_mask=m, is_causal=s["causal"] and m is None,
                scale=s["scale"])
        scores = q @ k.transpose(-2, -1)
        scores = scores / (1.0 / s["scale"]) if s["divide"] else \
            scores * s["scale"]
        if s["causal"]:
            L, S = scores.shape[-2:]
            causal = torch.ones(L, S, dtype=torch.bool).triu(1)
            scores = scores.masked_fill(causal, float("-inf"))
        if s["mask"] == "bool":
            fill = torch.finfo(scores.dtype).min if s["fill"] == "min" \
                else s["fill"]
            scores = scores.masked_fill(mask, fill)
        elif s["mask"] == "additive":
            scores = scores + mask
        if s["softcap"]:
            scores = torch.tanh(scores / 5.0) * 5.0
        probs = scores.float().softmax(-1).to(q.dtype) if s["upcast"] \
            else scores.softmax(-1)
        return probs @ v


def random_spec(rng):
    dtype = rng.choice([torch.float32, torch.float32, torch.bfloat16,
                        torch.float16])
    sdpa = rng.random() < 0.4
    return {
        "dtype": dtype,
        "batch": rng.randint(1, 3), "heads": rng.choice([1, 2, 4]),
        "gqa": rng.choice([1, 1, 2]),
        "L": rng.randint(1, 9), "S": rng.randint(1, 11),
        "E": rng.choice([4, 8, 16]), "Ev": rng.choice([4, 8]),
        "scale": rng.choice([None, 0.25, 1.0 / math.sqrt(8)]) if sdpa
        else rng.choice([0.25, 0.5, 1.0 / math.sqrt(8)]),
        "divide": rng.random() < 0.3, "sdpa": sdpa,
        "causal": rng.random() < 0.3,
        "mask": rng.choice(["none", "bool", "additive"]),
        "mask_shape": rng.choice(["LS", "B11S", "B1LS"]),
        "fill": rng.choice([float("-inf"), "min", -1e4]),
        "softcap": not sdpa and rng.random() < 0.2,
        "upcast": not sdpa and dtype != torch.float32 and rng.random() < 0.5,
    }


def make_inputs(spec, gen):
    d = spec["dtype"]
    B, H, L, S = spec["batch"], spec["heads"], spec["L"], spec["S"]
    if spec["causal"]:
        S = max(S, L)  # every row keeps a key: PyTorch's causal is top-left
    spec["S"] = S
    kv_heads = H
    H = H * spec["gqa"]
    q = torch.randn(B, H, L, spec["E"], generator=gen).to(d)
    k = torch.randn(B, kv_heads, S, spec["E"], generator=gen).to(d)
    v = torch.randn(B, kv_heads, S, spec["Ev"], generator=gen).to(d)
    shape = {"LS": (L, S), "B11S": (B, 1, 1, S), "B1LS": (B, 1, L, S)}[
        spec["mask_shape"]]
    masked = torch.rand(shape, generator=gen) < 0.3
    masked[0] = True  # a fully masked row (or batch element)
    if spec["mask"] == "additive":
        mask = torch.where(masked, torch.tensor(float("-inf")),
                           torch.randn(shape, generator=gen)).to(d)
    else:
        mask = masked
    return q, k, v, mask


@pytest.mark.parametrize("seed", range(CASES))
def test_random_attention_matches_eager(seed):
    rng = random.Random(seed)
    spec = random_spec(rng)
    gen = torch.Generator().manual_seed(seed)
    module = RandomAttention(spec)
    example = make_inputs(spec, gen)
    compiled = attnfuse.compile(module, example)
    for _ in range(2):
        args = make_inputs(dict(spec), gen)
        expected = module(*args)
        actual = compiled(*args)
        atol, rtol = TOL[spec["dtype"]]
        torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol,
                                   equal_nan=True, msg=lambda m: f"{spec}\n{m}")
