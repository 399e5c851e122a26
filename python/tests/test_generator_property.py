"""A property test of Generator's step arguments: seeded random prefill and
decode calls, most of them malformed in one or more ways (batch sizes that
disagree, lengths, dtypes, positions and masks outside the cache, token ids
outside the vocabulary), each checked against the steps' contract written
out here independently of generation.py:

- a malformed call raises InputError and writes nothing to the cache;
- a well-formed call with an id outside the vocabulary raises
  RunTimeCheckError (the embedding's check, on whichever thread it
  fails), and the generator stays usable;
- a well-formed prefill returns the model's logits at the last position;
- a well-formed decode of L tokens with a mask of n positions writes only
  cache rows n - L .. n - 1 of its batch rows.

ATTNFUSE_PROPERTY_CASES raises the count outside CI."""

import os
import random

import pytest
import torch

import attnfuse
from test_generation import MAX_CACHE, VOCAB, compiled

CASES = int(os.environ.get("ATTNFUSE_PROPERTY_CASES", "40"))
MAX_BATCH = 3
DECODE_LENGTHS = (1, 3)
INT_DTYPES = (torch.int64, torch.int32)


def _int_tensor(rng, shape, low, high, dtype=torch.int64):
    g = torch.Generator().manual_seed(rng.randrange(1 << 30))
    return torch.randint(low, high, shape, generator=g, dtype=torch.int64) \
        .to(dtype)


def _random_call(rng, prefill):
    """Arguments of one step (a well-formed call, then none, one or two of
    its sizes, dtypes or values made wrong), whether they are well-formed
    by the contract, and whether every id is in the vocabulary."""
    b = rng.choice([1, 2, 3])
    L = rng.choice([2, 3, 7]) if prefill else rng.choice(DECODE_LENGTHS)
    n = L if prefill else rng.choice([L, L + 4, 12, MAX_CACHE])
    bm = bp = b
    Lp = L
    ids_dtype = rng.choice(INT_DTYPES)
    mask_dtype = rng.choice((torch.int64, torch.bool, torch.int32))
    ids_high = VOCAB
    pos_start = n - L
    wrong = rng.sample(["batch", "mask_batch", "pos_batch", "length",
                        "pos_length", "mask_length", "cache", "ids_dtype",
                        "mask_dtype", "pos_low", "pos_high", "vocab"],
                       rng.choice([0, 0, 1, 1, 2]))
    for w in wrong:
        if w == "batch":
            b = bm = bp = rng.choice([MAX_BATCH + 1, 0])
        elif w == "mask_batch":
            bm = rng.choice([x for x in range(1, 5) if x != b])
        elif w == "pos_batch":
            bp = rng.choice([x for x in range(1, 5) if x != b])
        elif w == "length":
            L = rng.choice([1, 0]) if prefill else rng.choice([2, 4, 0])
            Lp = L
        elif w == "pos_length":
            Lp = L + rng.choice([-1, 1])
        elif w == "mask_length":
            n = L + 1 if prefill else L - 1
        elif w == "cache":
            n = MAX_CACHE + 1
        elif w == "ids_dtype":
            ids_dtype = torch.float32
        elif w == "mask_dtype":
            mask_dtype = torch.float32
        elif w == "pos_low":
            pos_start = -rng.choice([1, 5])
        elif w == "pos_high":
            pos_start = MAX_CACHE - 1
        elif w == "vocab":
            ids_high = VOCAB + 400
    L, Lp, n = max(L, 0), max(Lp, 0), max(n, 0)
    ids = _int_tensor(rng, (b, L), 0, ids_high, ids_dtype)
    if ids_high > VOCAB and ids.numel():
        ids[rng.randrange(b), rng.randrange(L)] = VOCAB + 7
    mask = torch.ones(bm, n, dtype=mask_dtype)
    pos = (pos_start + torch.arange(Lp)).expand(bp, Lp).contiguous()
    well_formed = (
        1 <= b <= MAX_BATCH and bm == b and bp == b and Lp == L
        and ids_dtype in INT_DTYPES and mask_dtype != torch.float32
        and (L >= 2 if prefill else L in DECODE_LENGTHS)
        and (n == L if prefill else L <= n)
        and n <= MAX_CACHE
        and (pos.numel() == 0 or (int(pos.min()) >= 0
                                  and int(pos.max()) < MAX_CACHE)))
    in_vocab = ids.numel() == 0 or (int(ids.min()) >= 0
                                    and int(ids.max()) < VOCAB)
    return (ids, mask, pos), well_formed, in_vocab, n, L, b


def _cache(generator):
    return [(k.clone(), v.clone()) for k, v in generator.cache]


@pytest.mark.parametrize("seed", range(2))
def test_step_arguments_property(seed):
    model, generator = compiled("llama")
    rng = random.Random(seed)
    seen = {"refused": 0, "out_of_vocab": 0, "prefill": 0, "decode": 0}
    for _ in range(CASES // 2):
        prefill = rng.random() < 0.4
        args, well_formed, in_vocab, n, L, b = _random_call(rng, prefill)
        before = _cache(generator)
        step = generator.prefill if prefill else generator.decode
        if not well_formed:
            with pytest.raises(attnfuse.InputError):
                step(*args)
            for (k, v), (k0, v0) in zip(generator.cache, before):
                assert torch.equal(k, k0) and torch.equal(v, v0)
            seen["refused"] += 1
            continue
        if not in_vocab:
            with pytest.raises(attnfuse.RunTimeCheckError,
                               match="index out of range"):
                step(*args)
            seen["out_of_vocab"] += 1
            continue
        logits = step(*args)
        if prefill:
            ids, mask, pos = args
            with torch.no_grad():
                expected = model(ids.long(), attention_mask=mask.long(),
                                 position_ids=pos).logits[:, -1]
            torch.testing.assert_close(logits, expected, atol=1e-4,
                                       rtol=1e-4)
            seen["prefill"] += 1
        else:
            assert logits.shape == (b, L, VOCAB)
            for (k, v), (k0, v0) in zip(generator.cache, before):
                for new, old in ((k, k0), (v, v0)):
                    keep = torch.ones(new.shape[0], new.shape[2],
                                      dtype=torch.bool)
                    keep[:b, n - L:n] = False
                    assert torch.equal(new.transpose(1, 2)[keep],
                                       old.transpose(1, 2)[keep])
            seen["decode"] += 1
    # The cases reach every outcome (the draw is seeded).
    assert all(seen.values()), seen
