"""Generation with attnfuse.compile_generator: greedy generation equal to
transformers' `generate` token for token (batch 1 and a left-padded batch
of 3; one left-padded row for GPT-OSS) for decoder architectures built from their configs (tiny random
weights, fixed seeds): Llama (grouped-query attention), Mistral with a
sliding window that decoding runs past, GPT-2, Gemma-2 (soft-capping,
alternating sliding layers), Falcon (its own attention code over the
cache), Phi-3, Qwen3, GPT-NeoX and GPT-J (rotary forms) and MPT
(ALiBi). Sampling with a seed, stop tokens, the progress callback, a
multi-token decode step, bf16 and the refusals on the Llama model (step
arguments that disagree, sampling defaults and arguments as transformers
takes them, one call at a time). Each model is compiled once (prefill and
decode in one library)."""

import functools
import json
from pathlib import Path

import pytest
import torch

import attnfuse

T = pytest.importorskip("transformers")
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

VOCAB = 100
MAX_CACHE = 32
NEW_TOKENS = 12
_GQA = dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=4,
            num_key_value_heads=2, intermediate_size=64,
            max_position_embeddings=64)

MODELS = {
    "llama": lambda: T.LlamaForCausalLM(T.LlamaConfig(vocab_size=VOCAB,
                                                      **_GQA)),
    # A window of 4 keys: decoding runs far past it.
    "mistral": lambda: T.MistralForCausalLM(T.MistralConfig(
        vocab_size=VOCAB, sliding_window=4, **_GQA)),
    "gpt2": lambda: T.GPT2LMHeadModel(T.GPT2Config(
        vocab_size=VOCAB, n_layer=2, n_embd=32, n_head=4, n_positions=64,
        bos_token_id=1, eos_token_id=2)),
    "gemma2": lambda: T.Gemma2ForCausalLM(T.Gemma2Config(
        vocab_size=VOCAB, head_dim=8, sliding_window=4,
        attn_implementation="eager", **_GQA)),
    "falcon": lambda: T.FalconForCausalLM(T.FalconConfig(
        vocab_size=VOCAB, num_hidden_layers=2, hidden_size=32,
        num_attention_heads=4, alibi=False)),
    # Rotary over the whole head: its pass-through slice is empty.
    "phi3": lambda: T.Phi3ForCausalLM(T.Phi3Config(
        vocab_size=VOCAB, pad_token_id=0, bos_token_id=1, eos_token_id=2,
        **_GQA)),
    # q and k RMSNorm before the rotary embedding.
    "qwen3": lambda: T.Qwen3ForCausalLM(T.Qwen3Config(
        vocab_size=VOCAB, head_dim=8, **_GQA)),
    # Partial rotary (a quarter of the head), parallel attention and MLP.
    "gpt_neox": lambda: T.GPTNeoXForCausalLM(T.GPTNeoXConfig(
        vocab_size=VOCAB, num_hidden_layers=2, hidden_size=32,
        num_attention_heads=4, intermediate_size=64,
        max_position_embeddings=64, bos_token_id=1, eos_token_id=2)),
    # ALiBi sliced to the query length (sizes bounded by the symbols'
    # ranges: min(1, T) is 1).
    "mpt": lambda: T.MptForCausalLM(T.MptConfig(
        vocab_size=VOCAB, n_layers=2, d_model=32, n_heads=4,
        max_seq_len=64)),
    # Mixture of experts: top-2 of 4 experts, routed by sort and histc
    # into grouped products; Qwen2-MoE adds a gated shared expert.
    "mixtral": lambda: T.MixtralForCausalLM(T.MixtralConfig(
        vocab_size=VOCAB, num_local_experts=4, num_experts_per_tok=2,
        **_GQA)),
    "qwen2_moe": lambda: T.Qwen2MoeForCausalLM(T.Qwen2MoeConfig(
        vocab_size=VOCAB, num_experts=4, num_experts_per_tok=2,
        moe_intermediate_size=32, shared_expert_intermediate_size=32,
        **_GQA)),
    # Attention sinks (the cached attention's sinks operand), a window of
    # 4 keys on alternate layers, a mixture of experts.
    "gpt_oss": lambda: T.GptOssForCausalLM(T.GptOssConfig(
        vocab_size=VOCAB, head_dim=8, num_local_experts=4,
        num_experts_per_tok=2, sliding_window=4, **_GQA)),
    # Interleaved rotary from a position table tiled by the batch.
    "gptj": lambda: T.GPTJForCausalLM(T.GPTJConfig(
        vocab_size=VOCAB, n_layer=2, n_embd=32, n_head=4, rotary_dim=4,
        n_positions=64, bos_token_id=1, eos_token_id=2)),
}


# Compiled for one row only (the batch of 3 doubles their compile time):
# their generation runs one left-padded prompt.
ONE_ROW = {"gpt_oss"}


def build(name, dtype=torch.float32):
    torch.manual_seed(0)
    return MODELS[name]().eval().to(dtype)


@functools.lru_cache(maxsize=None)
def compiled(name, dtype=torch.float32):
    model = build(name, dtype)
    decode = (1, 3) if name == "llama" and dtype == torch.float32 else (1,)
    generator = attnfuse.compile_generator(model, max_batch=1 if name in
                                           ONE_ROW else 3,
                                           max_cache_len=MAX_CACHE,
                                           decode_lengths=decode)
    return model, generator


def prompts(batch, seed=1):
    """Token ids [batch, 7] and a left-padded mask: row 0 padded by 3, row
    1 by 2 and row 2 by 1."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, VOCAB, (batch, 7), generator=g)
    mask = torch.ones(batch, 7, dtype=torch.int64)
    mask[0, :3] = 0
    if batch > 2:
        mask[1, :2] = 0
        mask[2, :1] = 0
    return ids, mask


def assert_greedy_equal(model, generator, ids, mask):
    """The generator's greedy tokens are transformers' generate's."""
    ours = generator.generate(ids, attention_mask=mask,
                              max_new_tokens=NEW_TOKENS, do_sample=False)
    with torch.no_grad():
        theirs = model.generate(ids, attention_mask=mask,
                                max_new_tokens=NEW_TOKENS, do_sample=False)
    assert torch.equal(ours, theirs), (ours, theirs)


@pytest.mark.parametrize("name", list(MODELS))
def test_greedy_matches_transformers(name):
    model, generator = compiled(name)
    if name in ONE_ROW:
        assert_greedy_equal(model, generator, *prompts(1))
        return
    for batch in (1, 3):
        ids, mask = prompts(batch)
        if batch == 1:
            mask = torch.ones_like(ids)
        assert_greedy_equal(model, generator, ids, mask)
    # The padded batch again, prefilled row by row (too little padding
    # for "auto", which ran one prefill of all its positions above).
    generator.skip_padding = True
    try:
        assert_greedy_equal(model, generator, *prompts(3))
    finally:
        generator.skip_padding = "auto"


def test_max_batch_two_runs_one_and_two_rows():
    """max_batch=2, exported with an example batch of 2: a batch Dim of
    range [1, 2] would become the constant 2 (torch.export starts a
    dynamic size's range at 2) and the steps would refuse one row; both
    batch sizes generate transformers' tokens. (A batch the export fixes
    is tests/test_routing.py's case.)"""
    model = build("mixtral")
    generator = attnfuse.compile_generator(model, max_batch=2,
                                           max_cache_len=MAX_CACHE)
    assert_greedy_equal(model, generator, *prompts(2))
    ids, _ = prompts(1)
    assert_greedy_equal(model, generator, ids, torch.ones_like(ids))


def _decode_text(generator):
    """The MLIR of the one-token decode function."""
    text = open(generator.library_path[:-3] + ".mlir").read()
    text = text[text.index("func.func @decode_1"):]
    end = text.find("func.func", 1)
    return text if end < 0 else text[:end]


def test_decode_reads_the_filled_prefix_only():
    """The decode step's attention takes a slice of the cache as long as
    the attention mask (`?` keys), masks padding with [B, 1, 1, n], and
    has no [.., max_cache_len] operand."""
    _, generator = compiled("llama")
    decode = _decode_text(generator)
    sdpa = [line for line in decode.splitlines() if '"attn.sdpa"' in line]
    assert len(sdpa) == 2
    for line in sdpa:
        assert "tensor<?x2x?x8xf32>" in line  # keys: batch x heads x n x dim
        assert "tensor<?x1x1x?xi1>" in line
        assert str(MAX_CACHE + 1) not in line.split(":", 1)[1]


def test_window_layers_read_only_their_window():
    """Mistral's decode reads the keys from max(0, n - window): one slice
    per attention whose start is an arith.maxsi of the length."""
    _, generator = compiled("mistral")
    decode = _decode_text(generator)
    assert decode.count("arith.maxsi") >= 1
    assert "window_left" not in decode


def test_sampling_matches_transformers_with_a_seed():
    model, generator = compiled("llama")
    ids, mask = prompts(3)
    options = dict(do_sample=True, temperature=0.7, top_k=20, top_p=0.9,
                   max_new_tokens=NEW_TOKENS)
    ours = generator.generate(ids, attention_mask=mask, seed=123, **options)
    torch.manual_seed(123)
    with torch.no_grad():
        theirs = model.generate(ids, attention_mask=mask, **options)
    assert torch.equal(ours, theirs)
    again = generator.generate(ids, attention_mask=mask, seed=123, **options)
    assert torch.equal(ours, again)


def test_stop_tokens_and_progress():
    """Rows stop at any of a list of eos ids and continue with the pad id;
    generation ends when every row has stopped; progress sees each step."""
    model, generator = compiled("llama")
    ids, mask = prompts(3)
    free = generator.generate(ids, attention_mask=mask,
                              max_new_tokens=NEW_TOKENS, do_sample=False)
    new = free[:, ids.shape[1]:]
    # An empty list of stop tokens overrides the config's eos: all steps.
    endless = generator.generate(ids, attention_mask=mask,
                                 max_new_tokens=NEW_TOKENS, do_sample=False,
                                 eos_token_id=[])
    assert endless.shape[1] == ids.shape[1] + NEW_TOKENS
    eos = [int(new[0, 2]), int(new[1, 4])]
    steps = []
    ours = generator.generate(
        ids, attention_mask=mask, max_new_tokens=NEW_TOKENS, do_sample=False,
        eos_token_id=eos, pad_token_id=0,
        progress=lambda step, total, tokens: steps.append(
            (step, total, tokens.clone())))
    with torch.no_grad():
        theirs = model.generate(ids, attention_mask=mask,
                                max_new_tokens=NEW_TOKENS, do_sample=False,
                                eos_token_id=eos, pad_token_id=0)
    assert torch.equal(ours, theirs)
    assert [s for s, _, _ in steps] == list(range(1, ours.shape[1] -
                                                   ids.shape[1] + 1))
    assert all(total == NEW_TOKENS for _, total, _ in steps)
    assert torch.equal(steps[-1][2], ours[:, -1])


def test_torch_runs_serially_inside_the_loop_and_is_restored():
    """The loop's own torch ops run on one thread (torch's OpenMP team
    would spin on the cores the compiled steps use); the caller's thread
    count comes back afterwards, also when a callback raises."""
    _, generator = compiled("llama")
    ids, mask = prompts(3)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        seen = []
        generator.generate(ids, attention_mask=mask, max_new_tokens=3,
                           progress=lambda *_: seen.append(
                               torch.get_num_threads()))
        assert seen == [1, 1, 1] and torch.get_num_threads() == 2

        def stop(*_):
            raise KeyboardInterrupt
        with pytest.raises(KeyboardInterrupt):
            generator.generate(ids, attention_mask=mask, max_new_tokens=3,
                               progress=stop)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_decode_of_several_tokens_matches_the_full_forward():
    """decode_lengths=(1, 3): three new tokens at once (a speculative
    verification step) give the logits of a full forward at their
    positions."""
    model, generator = compiled("llama")
    ids, mask = prompts(3)
    more = torch.randint(3, VOCAB, (3, 3), generator=torch.Generator()
                         .manual_seed(5))
    position = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
    generator.prefill(ids, mask, position)
    full_mask = torch.cat([mask, torch.ones(3, 3, dtype=torch.int64)], -1)
    new_pos = position[:, -1:] + torch.arange(1, 4)
    logits = generator.decode(more, full_mask, new_pos)
    all_ids = torch.cat([ids, more], -1)
    all_pos = torch.cat([position, new_pos], -1)
    with torch.no_grad():
        expected = model(all_ids, attention_mask=full_mask,
                         position_ids=all_pos).logits[:, -3:]
    torch.testing.assert_close(logits, expected, atol=1e-4, rtol=1e-4)


def test_prefill_writes_the_cache_transformers_writes():
    """The keys (rotary embedded) and values the prefill writes are the
    model's own, head by head: the logits of a tiny random model hardly
    depend on the keys, so a wrong head would pass the other tests."""
    model, generator = compiled("llama")
    ids, mask = prompts(3)
    position = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
    generator.prefill(ids, mask, position)
    with torch.no_grad():
        cache = model(ids, attention_mask=mask, position_ids=position,
                      use_cache=True).past_key_values
    t = ids.shape[1]
    for layer, (keys, values) in enumerate(generator.cache):
        theirs = cache.layers[layer]
        torch.testing.assert_close(keys[:3, :, :t], theirs.keys,
                                   atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(values[:3, :, :t], theirs.values,
                                   atol=1e-5, rtol=1e-5)


def test_generate_prefills_left_padded_rows_alone():
    """generate's prompt of a left-padded batch runs one prefill per row
    on its real tokens: each row's keys and values land at the positions
    the padded prefill writes (transformers' cache there), its padding
    positions hold zeros (the padded prefill writes the pad tokens' keys
    there), and the first token is transformers'. A mask that is not left
    padding (a gap) takes the padded prefill."""
    model, generator = compiled("llama")
    ids, mask = prompts(3)
    position = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
    for layer in generator.cache:
        for tensor in layer:
            tensor.fill_(float("nan"))
    generator.skip_padding = True
    try:
        _check_rows_prefilled_alone(model, generator, ids, mask, position)
    finally:
        generator.skip_padding = "auto"
        for layer in generator.cache:
            for tensor in layer:
                tensor.zero_()


def test_generate_chooses_row_prefills_by_the_padding():
    """skip_padding="auto" (the default) prefills row by row only where
    the padding pays for reading the weights once more per row: not for
    prompts(3)'s 6 padded tokens, but for 2 rows of 30 with 20 and 14
    padded; the row-by-row prefill leaves zeros at padded positions, the
    padded one the pad tokens' keys."""
    _, generator = compiled("llama")
    assert generator.skip_padding == "auto"
    ids, mask = prompts(3)
    generator.generate(ids, attention_mask=mask, max_new_tokens=1)
    assert generator.cache[0][0][0, :, :3].any()
    ids = torch.randint(3, VOCAB, (2, 30), generator=torch.Generator()
                        .manual_seed(2))
    mask = torch.ones(2, 30, dtype=torch.int64)
    mask[0, :20] = 0
    mask[1, :14] = 0
    generator.generate(ids, attention_mask=mask, max_new_tokens=1)
    keys = generator.cache[0][0]
    assert not keys[0, :, :20].any() and not keys[1, :, :14].any()
    assert keys[0, :, 20:30].all() and keys[1, :, 14:30].all()
    for bad in ("yes", 1, None):
        with pytest.raises(attnfuse.InputError, match="skip_padding must be "
                           "True, False or \"auto\""):
            generator.skip_padding = bad
    assert generator.skip_padding == "auto"


def _check_rows_prefilled_alone(model, generator, ids, mask, position):
    first = generator.generate(ids, attention_mask=mask, max_new_tokens=1)
    with torch.no_grad():
        out = model(ids, attention_mask=mask, position_ids=position,
                    use_cache=True)
    assert torch.equal(first[:, -1], out.logits[:, -1].argmax(-1))
    t = ids.shape[1]
    real = mask.bool()
    for layer, pair in enumerate(generator.cache):
        theirs = out.past_key_values.layers[layer]
        for ours, expected in zip(pair, (theirs.keys, theirs.values)):
            ours = ours[:3, :, :t].transpose(1, 2)
            expected = expected.transpose(1, 2)
            torch.testing.assert_close(ours[real], expected[real],
                                       atol=1e-5, rtol=1e-5)
            assert not ours[~real].any()
    gap = mask.clone()
    gap[1, 4] = 0
    generator.generate(ids, attention_mask=gap, max_new_tokens=1)
    assert generator.cache[0][0][1, :, 4].any()


def test_bf16_model_keeps_bf16_weights_and_cache():
    """A bf16 model generates with bf16 weights and cache; its first
    logits are as close to the f32 model's as eager bf16's are."""
    model, generator = compiled("llama", torch.bfloat16)
    assert generator.dtype == torch.bfloat16
    assert all(k.dtype == torch.bfloat16 for k, _ in generator.cache)
    ids, mask = prompts(3)
    position = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
    ours = generator.prefill(ids, mask, position)
    assert ours.dtype == torch.bfloat16
    reference = build("llama")
    with torch.no_grad():
        eager = model(ids, attention_mask=mask).logits[:, -1].float()
        truth = reference(ids, attention_mask=mask).logits[:, -1]
    eager_err = (eager - truth).abs().max().item()
    assert (ours.float() - truth).abs().max().item() <= max(2 * eager_err,
                                                             0.05)
    tokens = generator.generate(ids, attention_mask=mask, max_new_tokens=4,
                                do_sample=False)
    assert tokens.shape == (3, 11)


def test_prepacked_prefill_matches_transformers():
    """prepack_weights=True: the prefill step reads packed panels (its
    entries in the weights manifest), the decode step the weights as
    stored; greedy generation is still transformers', also after a weight
    is written in place (packed again before the next prefill)."""
    model = build("llama")
    generator = attnfuse.compile_generator(model, max_batch=3,
                                           max_cache_len=MAX_CACHE,
                                           prepack_weights=True)
    manifest = json.loads(Path(generator.library_path)
                          .with_suffix(".weights.json").read_text())
    assert set(manifest["functions"]) == {"prefill"}
    # q, k, v, o, gate, up and down of both layers, and the lm_head.
    assert len(manifest["functions"]["prefill"]) == 15

    assert_greedy_equal(model, generator, *prompts(3))
    with torch.no_grad():
        model.model.layers[0].mlp.up_proj.weight.mul_(-2)
    assert_greedy_equal(model, generator, *prompts(3))


class CachedAttentions(torch.nn.Module):
    """torch.ops.attnfuse.cached_attention in each form its handler
    writes: a whole prompt (is_causal and window_left), one query (the
    window's slice of the keys), three queries (a slice and a run-time
    band), soft-capping (a score_mod region), no causality."""

    def forward(self, prompt, q, k, v, padding):
        op = torch.ops.attnfuse.cached_attention
        return (op(prompt, k, v, padding, 0.3, True, 3, 0.0),
                op(q[:, :, :1], k, v, padding, 0.3, True, 3, 0.0),
                op(q, k, v, padding, 0.3, True, 3, 0.0),
                op(q, k, v, padding, 0.3, True, 0, 5.0),
                op(q[:, :, :1], k, v, padding, 0.3, False, 0, 0.0))


def test_cached_attention_forms_match_the_reference():
    s = torch.export.Dim("s", min=4, max=20)
    g = torch.Generator().manual_seed(3)

    def inputs(n):
        padding = torch.ones(2, n, dtype=torch.bool)
        padding[0, :2] = False
        padding[1, :] = False  # no key at all: 0
        return (torch.randn(2, 4, n, 8, generator=g),
                torch.randn(2, 4, 3, 8, generator=g),
                torch.randn(2, 2, n, 8, generator=g),
                torch.randn(2, 2, n, 8, generator=g), padding)
    module = CachedAttentions()
    dynamic = ({2: s}, None, {2: s}, {2: s}, {1: s})
    compiled = attnfuse.compile(module, inputs(6), dynamic_shapes=dynamic)
    text = compiled.mlir
    assert "is_causal = true" in text and "window_left = 2" in text
    assert "math.tanh" in text and "arith.maxsi" in text
    for n in (5, 11):
        args = inputs(n)
        for ours, ref in zip(compiled(*args), module(*args)):
            torch.testing.assert_close(ours, ref, atol=1e-5, rtol=1e-5)


def test_state_updated_in_forward_is_refused():
    """Phi-3's longrope rotary embedding re-registers its inv_freq buffer
    from the positions' maximum in forward: the export specialises that
    branch on the example, so the generator refuses the model by name."""
    torch.manual_seed(0)
    model = T.Phi3ForCausalLM(T.Phi3Config(
        vocab_size=VOCAB, pad_token_id=0, bos_token_id=1, eos_token_id=2,
        original_max_position_embeddings=16,
        rope_scaling={"type": "longrope", "short_factor": [1.0] * 4,
                      "long_factor": [2.0] * 4}, **_GQA)).eval()
    with pytest.raises(attnfuse.AttnFuseError,
                       match="rotary_emb.inv_freq besides the KV cache"):
        attnfuse.compile_generator(model, max_batch=1,
                                   max_cache_len=MAX_CACHE)


def test_refusals():
    _, generator = compiled("llama")
    ids, mask = prompts(3)
    with pytest.raises(attnfuse.AttnFuseError, match="exceed the cache"):
        generator.generate(ids, attention_mask=mask, max_new_tokens=MAX_CACHE)
    with pytest.raises(attnfuse.AttnFuseError, match="compiled for 1 to 3"):
        generator.generate(torch.ones(4, 5, dtype=torch.int64),
                           max_new_tokens=2)
    with pytest.raises(attnfuse.AttnFuseError, match="decode of 2 tokens"):
        generator.decode(ids[:, :2], mask, mask)


# ---- arguments the steps and the loop must not trust (issue 47) ----------
def _positions(mask):
    return (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)


def test_step_arguments_that_disagree_are_refused():
    """prefill and decode check their three arguments against each other
    and the cache before the compiled code runs: a batch-1 mask for two
    rows, a narrower positions tensor and the like used to change the
    logits without an error. Nothing is written to the cache."""
    _, generator = compiled("llama")
    ids, mask = prompts(3)
    pos = _positions(mask)
    before = [k.clone() for k, _ in generator.cache]
    step = torch.ones(2, 1, dtype=torch.int64)
    bad_prefills = [
        ((ids[:2], mask[:1], pos[:2]), r"batch sizes differ: input_ids "
         r"\[2, 7\], attention_mask \[1, 7\], position_ids \[2, 7\]"),
        ((ids[:2], mask[:2], pos[:2, :5]), r"position_ids \[2, 5\]: one "
         r"position per token of input_ids \[2, 7\]"),
        ((ids, mask[:, 2:], pos), r"attention_mask \[3, 5\]: prefill takes "
         r"the mask of the prompt input_ids \[3, 7\]"),
        ((ids.float(), mask, pos), r"input_ids \[3, 7\] must hold integers, "
         r"not torch.float32"),
        ((ids, mask.float(), pos), r"attention_mask \[3, 7\] must hold "
         r"integers or booleans"),
        ((ids[0], mask[0], pos[0]), r"input_ids \[7\] must be \[batch, "
         r"length\]"),
        ((ids.tolist(), mask, pos), r"input_ids must be a torch.Tensor"),
        ((ids[:, :1], mask[:, :1], pos[:, :1]), "at least 2 tokens"),
        ((torch.ones(4, 7, dtype=torch.int64),) * 3, r"batch 4: the "
         r"generator was compiled for 1 to 3 rows"),
        ((ids, mask, pos - 1), r"position_ids \[3, 7\] hold -1 \.\. 4: "
         r"positions must lie in \[0, 32\)"),
        ((ids, mask, pos + MAX_CACHE - 3), r"hold 29 \.\. 34"),
    ]
    for args, message in bad_prefills:
        with pytest.raises(attnfuse.InputError, match=message):
            generator.prefill(*args)
    long_mask = torch.ones(2, MAX_CACHE + 1, dtype=torch.int64)
    bad_decodes = [
        ((step, long_mask, step), r"attention_mask \[2, 33\]: 33 positions "
         r"do not fit the cache of 32"),
        ((step, mask[:2], pos[:2, -2:]), r"position_ids \[2, 2\]: one "
         r"position per token of input_ids \[2, 1\]"),
        ((step, mask[:1], step), "batch sizes differ"),
        ((step, mask[:2].bool(), step.float()), r"position_ids \[2, 1\] must "
         r"hold integers"),
        ((step, mask[:2], step + MAX_CACHE), "positions must lie in"),
    ]
    for args, message in bad_decodes:
        with pytest.raises(ValueError, match=message):
            generator.decode(*args)
    for k, old in zip((k for k, _ in generator.cache), before):
        assert torch.equal(k, old)


def test_decode_with_a_mask_shorter_than_its_tokens_is_refused():
    """decode(ids [2, 1], mask [2, 0], ...) wrote cache row -1 (n - L) and
    then the process died; n >= L is checked, and no argument reaches the
    compiled code with an index outside the cache (positions past the cache
    or negative are refused too)."""
    _, generator = compiled("llama")
    ids = torch.ones(2, 1, dtype=torch.int64)
    with pytest.raises(attnfuse.InputError, match=r"attention_mask \[2, 0\]"
                       r": decode takes the mask of all positions so far, "
                       r"the cached ones and the 1 new tokens of input_ids "
                       r"\[2, 1\], at least 1"):
        generator.decode(ids, torch.ones(2, 0, dtype=torch.int64), ids)
    three = torch.ones(2, 3, dtype=torch.int64)
    with pytest.raises(attnfuse.InputError, match="at least 3"):
        generator.decode(three, torch.ones(2, 2, dtype=torch.int64), three)
    for pos in (-ids, ids * MAX_CACHE):
        with pytest.raises(attnfuse.InputError, match="must lie in"):
            generator.decode(ids, torch.ones(2, 4, dtype=torch.int64), pos)


def test_sampling_defaults_are_transformers():
    """With do_sample=True and top_k, top_p and temperature unset,
    transformers' generate takes them from the model's generation_config
    and else its global defaults (top_k=50): so does the generator (it
    sampled the whole vocabulary)."""
    model, generator = compiled("llama")
    ids, mask = prompts(3)
    assert model.generation_config.top_k is None
    ours = generator.generate(ids, attention_mask=mask, do_sample=True,
                              max_new_tokens=NEW_TOKENS, seed=5)
    torch.manual_seed(5)
    with torch.no_grad():
        theirs = model.generate(ids, attention_mask=mask, do_sample=True,
                                max_new_tokens=NEW_TOKENS)
    assert torch.equal(ours, theirs)


def test_repetition_penalty_skips_left_padding_as_transformers():
    """transformers' repetition penalty ignores each row's left padding
    (the ids under attention-mask zeros); a reward (penalty < 1) on those
    ids changed the greedy tokens."""
    model, generator = compiled("llama")
    ids, mask = prompts(3)
    options = dict(do_sample=False, repetition_penalty=0.5,
                   max_new_tokens=NEW_TOKENS)
    ours = generator.generate(ids, attention_mask=mask, **options)
    with torch.no_grad():
        theirs = model.generate(ids, attention_mask=mask, **options)
    assert torch.equal(ours, theirs)


def test_one_call_at_a_time():
    """The generator's steps write its one KV cache: a call from another
    thread while a generation runs, or from that generation's progress
    callback, is a BusyError (a RuntimeError), and the running generation
    still gives its tokens. They used to run and corrupt the cache."""
    import threading
    _, generator = compiled("llama")
    ids, mask = prompts(3)
    expected = generator.generate(ids, attention_mask=mask,
                                  max_new_tokens=4, do_sample=False)
    errors = []

    def other_thread():
        try:
            generator.generate(ids, attention_mask=mask, max_new_tokens=4)
        except Exception as e:  # noqa: BLE001 - checked below
            errors.append(e)

    def progress(step, total, tokens):
        if step != 2:
            return
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        with pytest.raises(RuntimeError, match="Generator is in use by "
                           "another call"):
            generator.decode(tokens[:, None], torch.ones(3, 9,
                                                         dtype=torch.int64),
                             torch.full((3, 1), 8))
        with pytest.raises(attnfuse.BusyError):
            generator.prefill(ids, mask, _positions(mask))
        with pytest.raises(attnfuse.BusyError):
            generator.generate(ids, attention_mask=mask, max_new_tokens=2)

    ours = generator.generate(ids, attention_mask=mask, max_new_tokens=4,
                              do_sample=False, progress=progress)
    assert torch.equal(ours, expected)
    assert len(errors) == 1 and isinstance(errors[0], attnfuse.BusyError)
    assert isinstance(errors[0], RuntimeError)
    assert "Generator is in use by another call" in str(errors[0])
    # Free again once the call returned (also after a failing callback).
    assert torch.equal(generator.generate(ids, attention_mask=mask,
                                          max_new_tokens=4, do_sample=False),
                       expected)


def test_generate_refuses_float_ids_and_negative_lengths():
    """Float token ids were truncated to integers, max_new_tokens=-3 was
    taken; eos_token_id as an integer tensor (which transformers takes)
    raised a raw TypeError."""
    model, generator = compiled("llama")
    ids, mask = prompts(3)
    with pytest.raises(attnfuse.InputError, match="input_ids must hold "
                       "integer token ids, not torch.float32"):
        generator.generate(ids.float() + 0.5, attention_mask=mask,
                           max_new_tokens=2)
    with pytest.raises(attnfuse.InputError, match="attention_mask must "
                       "hold integers or booleans"):
        generator.generate(ids, attention_mask=mask.float(),
                           max_new_tokens=2)
    with pytest.raises(ValueError, match="max_new_tokens must be >= 0, "
                       "not -3"):
        generator.generate(ids, attention_mask=mask, max_new_tokens=-3)
    with pytest.raises(ValueError, match="max_new_tokens must be an "
                       "integer"):
        generator.generate(ids, attention_mask=mask, max_new_tokens=2.5)
    with pytest.raises(ValueError, match="eos_token_id must be"):
        generator.generate(ids, attention_mask=mask, max_new_tokens=2,
                           eos_token_id=[2.5])
    with pytest.raises(ValueError, match="eos_token_id must be"):
        generator.generate(ids, attention_mask=mask, max_new_tokens=2,
                           eos_token_id=torch.tensor(2.0))
    free = generator.generate(ids, attention_mask=mask,
                              max_new_tokens=NEW_TOKENS, do_sample=False)
    eos = int(free[0, ids.shape[1] + 2])
    options = dict(attention_mask=mask, max_new_tokens=NEW_TOKENS,
                   do_sample=False)
    as_int = generator.generate(ids, eos_token_id=eos, **options)
    with torch.no_grad():
        theirs = model.generate(ids, eos_token_id=torch.tensor(eos),
                                **options)
    for eos_id in (torch.tensor(eos), torch.tensor([eos]), [eos]):
        ours = generator.generate(ids, eos_token_id=eos_id, **options)
        assert torch.equal(ours, as_int) and torch.equal(ours, theirs)
    ours = generator.generate(ids, eos_token_id=torch.tensor(eos),
                              pad_token_id=torch.tensor(0), **options)
    assert torch.equal(ours, generator.generate(ids, eos_token_id=eos,
                                                pad_token_id=0, **options))


def test_generator_keeps_no_exported_program(tmp_path):
    """Each step's ExportedProgram is released once its weights are bound
    (the generator's memory is its weights, cache and library); the
    generator still generates and saves, and its package generates the
    same tokens."""
    import gc

    def programs():
        gc.collect()
        return sum(1 for o in gc.get_objects()
                   if isinstance(o, torch.export.ExportedProgram))

    model = build("llama", torch.float32)
    before = programs()
    generator = attnfuse.compile_generator(model, max_batch=1,
                                           max_cache_len=MAX_CACHE)
    assert programs() == before
    ids = torch.randint(3, VOCAB, (1, 5), generator=torch.Generator().manual_seed(3))
    tokens = generator.generate(ids, max_new_tokens=4, do_sample=False)
    loaded = attnfuse.load(generator.save(tmp_path / "pkg"))
    assert torch.equal(loaded.generate(ids, max_new_tokens=4, do_sample=False),
                       tokens)
