"""A static KV cache that a compiled library updates in place, and the
modules that export a transformers decoder's prefill and decode steps over
it (attnfuse.generation drives them).

The cache is one key and one value tensor per layer, `[max_batch, kv_heads,
capacity, head_dim]`. A step takes the rows of its batch, `[B, ...]` (the
leading rows: a dense view), as inputs that it writes in place: torch.export
lists them in `user_inputs_to_mutate`, the exporter writes the new rows
with `tensor.insert_slice` into arguments marked `bufferization.writable`,
and prefill and decode, two functions of one library, take the same
tensors.

The filled length is a run-time size, not a mask: each step gets the
attention mask of every position so far, `[B, n]` (as transformers'
`generate` keeps it), and `n` is a dynamic dim of that input. A step of L
new tokens writes rows `n - L .. n - 1` and attends over the prefix `[0,
n)` only: the keys are a slice of the cache whose length is `n`, so the
attention lowering visits `n` keys, not `max_cache_len`.

Attention goes through `torch.ops.attnfuse.cached_attention` (registered
here as a transformers attention function, for the models that dispatch
through `ALL_ATTENTION_FUNCTIONS`): causal alignment to the end of the
keys, a sliding window and Gemma-2's soft-capping as arguments, so that the
exporter writes one `attn.sdpa` with `is_causal`/`window_left` and a
`[B, 1, 1, n]` padding mask (prefill), or over the window's slice of keys
(decode). Models with their own attention code (Falcon) keep it, with the
masks transformers builds from this cache's sizes."""

from __future__ import annotations

import contextlib
import math

import torch

# ---------------------------------------------------------------------------
# The attention op
# ---------------------------------------------------------------------------


@torch.library.custom_op("attnfuse::cached_attention", mutates_args=())
def cached_attention(query: torch.Tensor, key: torch.Tensor,
                     value: torch.Tensor, padding: torch.Tensor,
                     scale: float, causal: bool, window: int,
                     softcap: float,
                     sinks: torch.Tensor | None = None) -> torch.Tensor:
    """Attention of L queries `[B, H, L, E]` over S keys `[B, Hkv, S, E]`
    (values `[B, Hkv, S, Ev]`, H a multiple of Hkv) that end at the same
    position: query i is at position `i + S - L` of the keys. Key j takes
    part when `padding[b, j]` (bool `[B, S]`) and, with `causal`, `j <= i +
    S - L`, and, with `window > 0`, `j > i + S - L - window` (transformers'
    sliding window). Scores are `(q . k) * scale`, soft-capped to `softcap *
    tanh(s / softcap)` when `softcap > 0`; a query with no key gives 0.
    `sinks` (`[H]`, GPT-OSS): one more logit per head in each softmax,
    whose probability is dropped. Returns `[B, H, L, Ev]`. This is the
    reference (PyTorch); the exporter writes it as one attn.sdpa."""
    b, h, L, _ = query.shape
    S = key.shape[2]
    groups = h // key.shape[1]
    k = key.repeat_interleave(groups, dim=1)
    v = value.repeat_interleave(groups, dim=1)
    keep = _keep_mask(padding, L, S, causal, window)
    s = torch.matmul(query.float(), k.float().transpose(-1, -2)) * scale
    if softcap > 0:
        s = softcap * torch.tanh(s / softcap)
    s = s.masked_fill(~keep, -math.inf)
    if sinks is not None:
        # A row with no key puts all of its probability on the sink: 0.
        sink = sinks.float().view(1, h, 1, 1).expand(b, h, L, 1)
        p = torch.softmax(torch.cat([s, sink], dim=-1), dim=-1)[..., :-1]
    else:
        p = torch.softmax(s, dim=-1)
        # No key for the row: 0 (PyTorch's SDPA does the same).
        p = torch.where(keep.any(-1, keepdim=True), p, 0.0)
    return torch.matmul(p, v.float()).to(query.dtype)


def _keep_mask(padding, L, S, causal, window):
    """`[B, 1, L, S]` bool: the keys each query row takes."""
    i = torch.arange(L, device=padding.device).view(L, 1) + (S - L)
    j = torch.arange(S, device=padding.device).view(1, S)
    keep = padding[:, None, None, :].bool()
    if causal:
        keep = keep & (j <= i)
    if window > 0:
        keep = keep & (j > i - window)
    return keep


@cached_attention.register_fake
def _(query, key, value, padding, scale, causal, window, softcap,
      sinks=None):
    return query.new_empty(query.shape[:-1] + value.shape[-1:])


def attention_function(module, query, key, value, attention_mask,
                       scaling=None, dropout=0.0, sliding_window=None,
                       softcap=None, **kwargs):
    """A transformers attention function (`ALL_ATTENTION_FUNCTIONS`) over
    the static cache: the padding mask comes from the step being exported
    (the model's own mask creation is skipped), causality from the module.
    Attention sinks (GPT-OSS's `s_aux`) become the op's sinks. Refuses
    what it cannot compute exactly (position bias, dropout)."""
    step = _ACTIVE.get("step")
    if step is None:
        raise RuntimeError("the attnfuse attention function runs only inside "
                           "an attnfuse generation step")
    sinks = kwargs.get("s_aux")
    if sinks is None:
        sinks = kwargs.get("sinks")
    if kwargs.get("position_bias") is not None:
        raise NotImplementedError(
            "attnfuse generation: attention with position_bias is not "
            "supported")
    if dropout:
        raise NotImplementedError("attnfuse generation: attention dropout "
                                  "(call model.eval())")
    if scaling is None:
        scaling = query.shape[-1] ** -0.5
    step.attention_calls += 1
    padding = step.padding
    if key.shape[2] != padding.shape[1]:
        raise RuntimeError(f"keys {tuple(key.shape)} do not end at the step's "
                           f"last position ({padding.shape[1]})")
    causal = kwargs.get("is_causal")
    if causal is None:
        causal = getattr(module, "is_causal", True)
    out = torch.ops.attnfuse.cached_attention(
        query, key, value, padding, float(scaling), bool(causal),
        int(sliding_window or 0), float(softcap or 0.0), sinks)
    return out.transpose(1, 2).contiguous(), None


ATTENTION_NAME = "attnfuse_static_cache"
_ACTIVE: dict = {}


def _register_attention():
    from transformers import AttentionInterface
    AttentionInterface.register(ATTENTION_NAME, attention_function)


# ---------------------------------------------------------------------------
# The cache
# ---------------------------------------------------------------------------


def _cache_layer_class():
    from transformers.cache_utils import CacheLayerMixin

    class StepLayer(CacheLayerMixin):
        """One layer of the static cache during one exported step: writes
        the step's rows in place and returns the keys of the prefix."""
        is_compileable = True
        is_sliding = False

        def __init__(self, step, keys, values):
            super().__init__()
            self.step = step
            self.keys, self.values = keys, values
            self.is_initialized = True

        def lazy_initialization(self, key_states, value_states):
            pass

        def update(self, key_states, value_states, *args, **kwargs):
            s = self.step
            s.cache_updates += 1
            self.keys[:, :, s.past:s.total] = key_states
            self.values[:, :, s.past:s.total] = value_states
            if s.past_is_empty:
                # Prefill: the prefix is exactly the new rows.
                return key_states, value_states
            return self.keys[:, :, :s.total], self.values[:, :, :s.total]

        def get_mask_sizes(self, query_length):
            return self.step.total, 0

        def get_seq_length(self):
            return self.step.past

        def get_max_length(self):
            return self.keys.shape[2]

    return StepLayer


class Step:
    """What one exported step knows: the number of positions so far
    (`total`, the attention mask's length: a dynamic size) and before this
    step (`past`), and the padding mask `[B, total]`."""

    def __init__(self, attention_mask, new_tokens, past_is_empty):
        self.total = attention_mask.shape[1]
        self.past = self.total - new_tokens
        self.past_is_empty = past_is_empty
        self.padding = attention_mask.bool()
        # Whether every layer's attention went through attention_function.
        self.cache_updates = 0
        self.attention_calls = 0


def make_cache(step, keys, values):
    from transformers.cache_utils import Cache

    layer = _cache_layer_class()
    cache = Cache(layers=[layer(step, k, v) for k, v in zip(keys, values)])
    # The query offset transformers' mask creation reads.
    cache.get_query_offset = lambda layer_idx=0: step.past
    return cache


class StepModule(torch.nn.Module):
    """A decoder step over the static cache: `forward(input_ids [B, L],
    attention_mask [B, n], position_ids [B, L], keys, values) -> logits`,
    the last position's `[B, V]` for prefill, all L positions' `[B, L, V]`
    for decode. `keys` and `values` are the cache's rows of the batch, one
    `[B, kv_heads, capacity, head_dim]` tensor per layer each, written in
    place (the generator passes the leading B rows of its cache, a dense
    view). Prefill starts at position 0 (the cache's earlier contents are
    ignored); decode appends L tokens after `n - L` cached ones."""

    def __init__(self, model, prefill: bool, use_cache_attention: bool):
        super().__init__()
        _register_attention()
        self.model = model
        self.prefill = prefill
        self.use_cache_attention = use_cache_attention

    def forward(self, input_ids, attention_mask, position_ids, keys, values):
        step = Step(attention_mask, input_ids.shape[1], self.prefill)
        self.last_step = step
        cache = make_cache(step, keys, values)
        kwargs = {}
        if self.prefill and _accepts(self.model, "logits_to_keep"):
            kwargs["logits_to_keep"] = 1
        with self._attention(step):
            out = self.model(input_ids=input_ids,
                             attention_mask=attention_mask,
                             position_ids=position_ids,
                             past_key_values=cache, use_cache=True, **kwargs)
        logits = out.logits
        return logits[:, -1] if self.prefill else logits

    @contextlib.contextmanager
    def _attention(self, step):
        config = self.model.config
        old = config._attn_implementation
        _ACTIVE["step"] = step
        if self.use_cache_attention:
            config._attn_implementation = ATTENTION_NAME
        try:
            yield
        finally:
            config._attn_implementation = old
            _ACTIVE.pop("step", None)


def _accepts(model, name) -> bool:
    import inspect
    return name in inspect.signature(model.forward).parameters

