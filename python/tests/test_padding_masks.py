"""Padded Hugging Face batches whose padding spans whole key blocks (64
keys): the fused attn.sdpa reads transformers' boolean padding mask, and
the CPU lowerings skip every tile that mask removes (AttnOps.md, step 3).
Tiny models (tests/hf_models.py builders, sdpa attention) on a batch of
mixed lengths up to 150 tokens, left and right padding and a fully padded
row, compiled once and equal to eager PyTorch on every position, padded
ones included; the generator's batched prefill of prompts of mixed
lengths gives transformers' generate tokens."""

import functools

import pytest
import torch

import transformers as T

import attnfuse
from hf_models import _GQA, _SMALL, VOCAB

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

SEQ = 150
# Real tokens per row: whole key blocks of padding (150 - 20 = 130), one
# token, none at all, and a full row.
LENGTHS = [SEQ, 20, 1, 0, 90]


def batch(side, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, VOCAB, (len(LENGTHS), SEQ), generator=g)
    mask = torch.zeros(len(LENGTHS), SEQ, dtype=torch.long)
    for row, n in enumerate(LENGTHS):
        if side == "left":
            mask[row, SEQ - n:] = 1
        else:
            mask[row, :n] = 1
    return ids, mask


# hf_models' BERT and Llama with room for SEQ positions.
MODELS = {
    "bert": lambda: T.BertModel(T.BertConfig(
        vocab_size=VOCAB, attn_implementation="sdpa",
        **dict(_SMALL, max_position_embeddings=SEQ))),
    "llama": lambda: T.LlamaModel(T.LlamaConfig(
        vocab_size=VOCAB, attn_implementation="sdpa", use_cache=False,
        **dict(_GQA, max_position_embeddings=SEQ))),
}


@functools.lru_cache(maxsize=None)
def compiled(name):
    torch.manual_seed(0)
    model = MODELS[name]().eval()
    ids, mask = batch("right")
    return model, attnfuse.compile(model, (ids,),
                                   example_kwargs={"attention_mask": mask})


@pytest.mark.parametrize("name", ["bert", "llama"])
def test_padded_batch_matches_eager_on_every_position(name):
    """One library for right and left padding: the padding is a boolean
    [B, 1, 1, S] operand of every attn.sdpa (what the skipping reads),
    and every position of the output is eager's."""
    model, lib = compiled(name)
    fused, _ = attnfuse.fuse(lib.mlir)
    sdpas = [l for l in fused.splitlines() if '"attn.sdpa"' in l]
    assert len(sdpas) == 2
    for line in sdpas:
        assert f"tensor<{len(LENGTHS)}x1x1x{SEQ}xi1>" in line, line
        assert "masked_value" not in line, line
    for side in ("right", "left"):
        ids, mask = batch(side, seed=1)
        with torch.no_grad():
            want = model(ids, attention_mask=mask).last_hidden_state
        got = lib(ids, attention_mask=mask).last_hidden_state
        assert not want.isnan().any()
        torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)


def test_generator_batched_prefill_matches_generate():
    """Prompts of 140, 10 and 70 tokens left-padded to 140: the prefill's
    attention reads the padding as a boolean [B, 1, 1, T] mask (whole key
    blocks of it for the short prompts) and the greedy tokens are
    transformers' generate's."""
    torch.manual_seed(0)
    model = T.LlamaForCausalLM(T.LlamaConfig(
        vocab_size=VOCAB, **dict(_GQA, max_position_embeddings=SEQ))).eval()
    generator = attnfuse.compile_generator(model, max_batch=3,
                                           max_cache_len=SEQ)
    text = open(generator.library_path[:-3] + ".mlir").read()
    prefill = text[text.index("func.func @prefill"):]
    prefill = prefill[:prefill.find("func.func", 1)]
    sdpas = [l for l in prefill.splitlines() if '"attn.sdpa"' in l]
    assert sdpas and all("tensor<?x1x1x?xi1>" in l for l in sdpas), sdpas
    g = torch.Generator().manual_seed(2)
    ids = torch.randint(3, VOCAB, (3, 140), generator=g)
    mask = torch.ones(3, 140, dtype=torch.long)
    mask[1, :130] = 0
    mask[2, :70] = 0
    ours = generator.generate(ids, attention_mask=mask, max_new_tokens=4,
                              do_sample=False)
    with torch.no_grad():
        theirs = model.generate(ids, attention_mask=mask, max_new_tokens=4,
                                do_sample=False)
    assert torch.equal(ours, theirs), (ours, theirs)
