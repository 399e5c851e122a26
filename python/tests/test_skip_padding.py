"""attnfuse.compile(..., skip_padding=True): a Hugging Face model compiled
on the real tokens of its padded batch only, packed back to back with the
attention_mask's lengths (attnfuse.varlen.UnpaddedModule). Tiny models
(tests/hf_models.py shapes, sdpa attention): an encoder, two decoders and
a causal LM, equal to eager PyTorch on the padded batch at every real
token (right and left padding, holes, a row without padding, f32 and
bf16), 0 at padded positions, one library for every batch; what is
refused at compile time and at call time."""

import functools

import pytest
import torch
import transformers as T

import attnfuse
from attnfuse.errors import AttnFuseError, InputError
from hf_models import _GQA, _SMALL, VOCAB

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

MODELS = {
    "bert": lambda: T.BertModel(T.BertConfig(
        vocab_size=VOCAB, attn_implementation="sdpa", **_SMALL),
        add_pooling_layer=False),
    "gpt2": lambda: T.GPT2Model(T.GPT2Config(
        vocab_size=VOCAB, n_layer=2, n_embd=32, n_head=4, n_positions=64,
        use_cache=False, attn_implementation="sdpa")),
    "llama": lambda: T.LlamaForCausalLM(T.LlamaConfig(
        vocab_size=VOCAB, use_cache=False, attn_implementation="sdpa",
        **_GQA)),
}


def batch(lengths, seq, side="right", seed=0):
    """ids and a 0/1 mask of `lengths` tokens per row; side "right",
    "left", or "holes" (the row's tokens at every other position first)."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, VOCAB, (len(lengths), seq), generator=g)
    mask = torch.zeros(len(lengths), seq, dtype=torch.long)
    for row, n in enumerate(lengths):
        if side == "left":
            mask[row, seq - n:] = 1
        elif side == "right":
            mask[row, :n] = 1
        else:
            cols = list(range(0, seq, 2)) + list(range(1, seq, 2))
            mask[row, cols[:n]] = 1
    return ids, mask


def output(out):
    return out.logits if hasattr(out, "logits") else out.last_hidden_state


@functools.lru_cache(maxsize=None)
def compiled(name, dtype=torch.float32):
    torch.manual_seed(0)
    model = MODELS[name]().eval().to(dtype)
    ids, mask = batch([9, 4, 1], 9, "left" if name != "bert" else "right")
    return model, attnfuse.compile(model, (ids,),
                                   example_kwargs={"attention_mask": mask},
                                   skip_padding=True)


@pytest.mark.parametrize("name", list(MODELS))
def test_real_tokens_match_eager_and_padding_is_zero(name):
    """Other batch sizes, lengths and padding sides than the example's,
    one library: eager's value at every real token, 0 elsewhere. The
    attention is packed: no [B, 1, 1, S] mask operand is left."""
    model, lib = compiled(name)
    sdpas = [line for line in attnfuse.fuse(lib.mlir)[0].splitlines()
             if '"attn.sdpa"' in line]
    assert len(sdpas) == 2
    assert all("padding_side<packed>" in line and "xi1>" not in line
               for line in sdpas), sdpas
    for lengths, seq, side in (([13, 7, 0, 1, 12], 13, "right"),
                               ([5, 11, 11], 11, "left"),
                               ([6, 3], 10, "holes"),
                               ([17], 17, "right")):
        ids, mask = batch(lengths, seq, side, seed=seq)
        with torch.no_grad():
            want = output(model(ids, attention_mask=mask))
        got = output(lib(ids, attention_mask=mask))
        keep = mask.bool()
        assert got.shape == want.shape
        torch.testing.assert_close(got[keep], want[keep], atol=1e-4,
                                   rtol=1e-4)
        assert not got[~keep].any()


def test_bf16_matches_eager():
    model, lib = compiled("bert", torch.bfloat16)
    ids, mask = batch([12, 3, 8], 12)
    with torch.no_grad():
        want = model(ids, attention_mask=mask).last_hidden_state
    got = lib(ids, attention_mask=mask).last_hidden_state
    assert got.dtype == torch.bfloat16
    keep = mask.bool()
    torch.testing.assert_close(got[keep].float(), want[keep].float(),
                               atol=6e-2, rtol=6e-2)


def test_positional_mask_and_given_position_ids():
    """The mask passed by position; position_ids given by the caller are
    packed with the tokens (a [1, T] row stands for every row)."""
    torch.manual_seed(0)
    model = MODELS["gpt2"]().eval()
    ids, mask = batch([6, 2, 4], 6, "left")
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    lib = attnfuse.compile(model, (ids, None, mask),
                           example_kwargs={"position_ids": pos},
                           skip_padding=True)
    ids, mask = batch([7, 5], 7, "left", seed=3)
    for pos in ((mask.cumsum(-1) - 1).clamp(min=0),
                torch.arange(7)[None]):
        with torch.no_grad():
            want = model(ids, None, mask, position_ids=pos).last_hidden_state
        got = lib(ids, None, mask, position_ids=pos).last_hidden_state
        keep = mask.bool()
        torch.testing.assert_close(got[keep], want[keep], atol=1e-4,
                                   rtol=1e-4)


@pytest.mark.parametrize("build, kwargs, message", [
    # BertModel's pooler reads the first token of each row.
    (lambda: T.BertModel(T.BertConfig(vocab_size=VOCAB,
                                      attn_implementation="sdpa", **_SMALL)),
     {}, r"output \['pooler_output'\] \(3, 32\) is not per token"),
    (lambda: T.MistralModel(T.MistralConfig(
        vocab_size=VOCAB, sliding_window=4, use_cache=False,
        attn_implementation="sdpa", **_GQA)),
     {}, "MistralConfig declares sliding_window=4"),
    # OPT counts its positions from the attention mask, not position_ids.
    (lambda: T.OPTModel(T.OPTConfig(
        vocab_size=VOCAB, num_hidden_layers=2, hidden_size=32,
        num_attention_heads=4, ffn_dim=64, max_position_embeddings=64,
        word_embed_proj_dim=32, use_cache=False,
        attn_implementation="sdpa")),
     {}, r"at real token \d+ differs from eager PyTorch"),
    # Falcon's ALiBi adds a bias to the scores.
    (lambda: T.FalconModel(T.FalconConfig(
        vocab_size=VOCAB, num_hidden_layers=2, hidden_size=32,
        num_attention_heads=4, alibi=True, use_cache=False,
        attn_implementation="sdpa")),
     {}, "adds a mask with values other than 0 and -inf"),
])
def test_refused_models(build, kwargs, message):
    torch.manual_seed(0)
    ids, mask = batch([9, 4, 6], 9, "left")
    with pytest.raises(AttnFuseError, match=message):
        attnfuse.compile(build().eval(), (ids,),
                         example_kwargs={"attention_mask": mask, **kwargs},
                         skip_padding=True)


def test_refused_examples():
    model = MODELS["bert"]().eval()
    ids, mask = batch([9, 4], 9)
    with pytest.raises(AttnFuseError, match="needs the padding mask"):
        attnfuse.compile(model, (ids,), skip_padding=True)
    with pytest.raises(AttnFuseError, match="at least 2 rows"):
        attnfuse.compile(model, (ids[:1],),
                         example_kwargs={"attention_mask": mask[:1]},
                         skip_padding=True)
    with pytest.raises(AttnFuseError, match="a sequence of at least 2"):
        attnfuse.compile(model, (ids,), example_kwargs={
            "attention_mask": torch.eye(2, 9, dtype=torch.long)},
            skip_padding=True)
    with pytest.raises(AttnFuseError, match="only 0 and 1"):
        attnfuse.compile(model, (ids,),
                         example_kwargs={"attention_mask": mask * 2},
                         skip_padding=True)
    with pytest.raises(AttnFuseError, match="no dynamic_shapes"):
        attnfuse.compile(model, (ids,),
                         example_kwargs={"attention_mask": mask},
                         dynamic_shapes={}, skip_padding=True)
    with pytest.raises(AttnFuseError, match="True or False"):
        attnfuse.compile(model, (ids,),
                         example_kwargs={"attention_mask": mask},
                         skip_padding="yes")


def test_options_by_name_are_fixed():
    """An option of the model's **kwargs (output_hidden_states) reaches it
    by its own name: every hidden state is per token and eager's at the
    real tokens. Another value of an option than the compiled one is an
    InputError."""
    torch.manual_seed(0)
    model = MODELS["bert"]().eval()
    ids, mask = batch([9, 4, 6], 9)
    lib = attnfuse.compile(model, (ids,), example_kwargs={
        "attention_mask": mask, "output_hidden_states": True},
        skip_padding=True)
    ids, mask = batch([5, 2], 5, seed=4)
    got = lib(ids, attention_mask=mask, output_hidden_states=True)
    with torch.no_grad():
        want = model(ids, attention_mask=mask, output_hidden_states=True)
    keep = mask.bool()
    assert len(got.hidden_states) == len(want.hidden_states) == 3
    for g, w in zip(got.hidden_states, want.hidden_states):
        torch.testing.assert_close(g[keep], w[keep], atol=1e-4, rtol=1e-4)
    with pytest.raises(InputError, match="compiled with "
                       "output_hidden_states=True, called with False"):
        lib(ids, attention_mask=mask, output_hidden_states=False)


def test_bad_calls_are_input_errors():
    _, lib = compiled("bert")
    ids, mask = batch([5, 3], 5)
    for bad, message in (
            (dict(attention_mask=mask * 3), "only 0 and 1"),
            (dict(attention_mask=mask[:, None]), r"\[B, T\] tensor"),
            (dict(attention_mask=None), r"\[B, T\] tensor"),
            (dict(attention_mask=torch.zeros_like(mask)), "marks no token"),
            (dict(attention_mask=mask[:, :4]), r"input_ids is \(2, 5\)"),
            (dict(attention_mask=mask, inputs_embeds=torch.ones(2, 5, 32)),
             "compiled without the tensor arguments")):
        with pytest.raises(InputError, match=message):
            lib(ids, **bad)
    with pytest.raises(InputError, match="compiled with the tensor"):
        lib(attention_mask=mask)
