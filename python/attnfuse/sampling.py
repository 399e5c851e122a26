"""The logits processors of `Generator.generate`, computed as transformers'
(5.x) `RepetitionPenaltyLogitsProcessor`, `TemperatureLogitsWarper`,
`TopKLogitsWarper` and `TopPLogitsWarper` compute them, op for op, so that
tokens equal transformers' `generate` and a generator loaded from a package
needs no transformers import. Each is a callable `(input_ids [B, n],
scores [B, V]) -> scores`, as transformers' are (a caller's own
`logits_processor` list runs between the penalty and the warpers)."""

from __future__ import annotations

import operator

import torch

from .errors import InputError


def repetition_penalty(penalty, ignore: torch.Tensor):
    """Divides the scores of tokens already in a row (multiplies negative
    ones) by `penalty`, skipping each row's first `ignore[b]` positions
    (its left padding, as transformers' generate passes it)."""
    if isinstance(penalty, bool) or not isinstance(penalty, (int, float)) \
            or not penalty > 0:
        raise InputError(f"repetition_penalty must be a positive float, "
                         f"not {penalty!r}")
    penalty = float(penalty)

    def apply(input_ids, scores):
        vocab = scores.shape[-1]
        positions = torch.arange(input_ids.shape[1])
        ids = input_ids.masked_fill(positions[None, :] < ignore[:, None],
                                    vocab)
        ids = ids.clamp(max=vocab)
        padded = torch.nn.functional.pad(scores, (0, 1))
        score = torch.gather(padded, 1, ids)
        score = torch.where(score < 0, score * penalty, score / penalty)
        return padded.scatter(1, ids, score)[..., :vocab]
    return apply


def temperature(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not value > 0:
        raise InputError(f"temperature must be a positive float, not "
                         f"{value!r} (for greedy decoding set "
                         f"do_sample=False)")
    value = float(value)
    return lambda input_ids, scores: scores / value


def top_k(k):
    """Keeps the k best scores of each row (ties with the k-th included),
    the others -inf."""
    try:
        k = operator.index(k)
    except TypeError:
        raise InputError(f"top_k must be a positive integer, not "
                         f"{k!r}") from None
    if isinstance(k, bool) or k <= 0:
        raise InputError(f"top_k must be a positive integer, not {k!r}")

    def apply(input_ids, scores):
        kept = min(k, scores.size(-1))
        cut = torch.topk(scores, kept)[0][..., -1, None]
        return scores.masked_fill(scores < cut, -float("inf"))
    return apply


def top_p(p):
    """Keeps the most likely tokens whose probabilities sum to at least p
    (at least one), the others -inf."""
    p = float(p)
    if not 0 <= p <= 1.0:
        raise InputError(f"top_p must be in [0, 1], not {p!r}")

    def apply(input_ids, scores):
        ordered, order = torch.sort(scores, descending=False)
        cumulative = ordered.softmax(dim=-1).cumsum(dim=-1)
        remove = cumulative <= (1 - p)
        remove[..., -1:] = 0
        remove = remove.scatter(1, order, remove)
        return scores.masked_fill(remove, -float("inf"))
    return apply


def chain(processors):
    """The processors applied in order."""
    def apply(input_ids, scores):
        for proc in processors:
            scores = proc(input_ids, scores)
        return scores
    return apply
