"""Vision-language models with an image: transformers merges the image
features into the token embeddings with `masked_scatter` at the image
placeholder tokens, after checking their count with
`torch_compilable_check` (`_is_all_true` and its `.item()`, a run-time
check here); Gemma-3's projector pools with `avg_pool2d`. Gemma-3, LLaVA
and PaliGemma built from their configs (tiny random weights), compiled on a
left-padded batch and called with two paddings against eager, every
attention fused; the count check refuses a prompt whose placeholders do not
match the image; Gemma-3 through torch.compile with no fallback. The ops
themselves (pooling windows, padding, ceil_mode, bf16; broadcast masks,
too short a source) against eager. Vision backbones' pooling: as_strided
views and windows, as torch.export writes Swin's adaptive pooler."""

import pytest
import torch
import torch.nn.functional as F

import attnfuse
from attnfuse.errors import RunTimeCheckError

T = pytest.importorskip("transformers")
from hf_models import assert_torch_compile_matches  # noqa: E402
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning:transformers")

V, IMAGE = 100, 99
_TEXT = dict(vocab_size=V, hidden_size=32, intermediate_size=64,
             num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64)


def _siglip():
    return T.SiglipVisionConfig(hidden_size=32, intermediate_size=64,
                                num_hidden_layers=1, num_attention_heads=4,
                                image_size=16, patch_size=4)


# name: (builder, image tokens per image, attention calls per forward)
MODELS = {
    "gemma3": (lambda: T.Gemma3ForConditionalGeneration(T.Gemma3Config(
        text_config=T.Gemma3TextConfig(head_dim=8, sliding_window=4,
                                       **_TEXT),
        vision_config=_siglip(), mm_tokens_per_image=4,
        image_token_index=IMAGE, boi_token_index=97, eoi_token_index=98)),
        4, 3),
    "llava": (lambda: T.LlavaForConditionalGeneration(T.LlavaConfig(
        vision_config=T.CLIPVisionConfig(
            hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=4, image_size=16, patch_size=4,
            projection_dim=32),
        text_config=T.LlamaConfig(**_TEXT), image_token_index=IMAGE,
        vision_feature_layer=-1)), 16, 4),
    "paligemma": (lambda: T.PaliGemmaForConditionalGeneration(
        T.PaliGemmaConfig(vision_config=_siglip(),
                          text_config=T.GemmaConfig(head_dim=8, **_TEXT),
                          image_token_index=IMAGE, projection_dim=32)),
        16, 3),
}


def _inputs(n_image, pad, seed=0):
    """A batch of 2 prompts with one image each (its placeholders after
    the first token), row 1 left-padded by `pad`."""
    g = torch.Generator().manual_seed(seed)
    L = n_image + 6
    ids = torch.randint(3, 90, (2, L), generator=g)
    ids[:, 1 + pad:1 + pad + n_image] = IMAGE
    ids[0, 1:1 + n_image] = IMAGE
    ids[0, 1 + n_image:1 + n_image + pad] = 5
    mask = torch.ones(2, L, dtype=torch.int64)
    mask[1, :pad] = 0
    return {"input_ids": ids, "pixel_values": torch.randn(
        2, 3, 16, 16, generator=g), "attention_mask": mask}


def _build(name):
    torch.manual_seed(0)
    return MODELS[name][0]().eval()


@pytest.mark.parametrize("name", list(MODELS))
def test_image_prompt_matches_eager(name):
    model = _build(name)
    n_image, calls = MODELS[name][1:]
    example = _inputs(n_image, 1)
    compiled = attnfuse.compile(model, (), example_kwargs=dict(
        example, use_cache=False))
    fused, _ = attnfuse.fuse(compiled.mlir)
    assert fused.count('"attn.sdpa"') == calls
    assert '"attn.softmax"' not in fused
    for pad, seed in ((1, 0), (3, 1)):
        kw = _inputs(n_image, pad, seed)
        with torch.no_grad():
            want = model(**kw, use_cache=False).logits
        got = compiled(**kw, use_cache=False).logits
        torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)
    if name == "gemma3":
        # One placeholder fewer than the image has features: transformers'
        # count check fails, as eager's ValueError does.
        kw = _inputs(n_image, 1)
        kw["input_ids"][0, 1] = 5
        with pytest.raises(ValueError):
            model(**kw, use_cache=False)
        with pytest.raises(RunTimeCheckError, match="_check_tensor_all"):
            compiled(**kw, use_cache=False)


def test_image_prompt_through_torch_compile():
    """torch.compile(backend="attnfuse") of Gemma-3 with an image: no graph
    falls back to eager."""
    assert_torch_compile_matches(_build("gemma3"),
                                 **_inputs(MODELS["gemma3"][1], 2))


class Pools(torch.nn.Module):
    def forward(self, x):
        return (F.avg_pool2d(x, 2), F.avg_pool2d(x, 3, stride=2, padding=1),
                F.avg_pool2d(x, 3, stride=2, padding=1,
                             count_include_pad=False),
                F.avg_pool2d(x, 2, stride=2, ceil_mode=True),
                F.avg_pool2d(x, (3, 2), stride=(2, 1), ceil_mode=True,
                             padding=1, count_include_pad=False),
                F.avg_pool2d(x, 2, divisor_override=3),
                F.avg_pool2d(x[0], 2))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_avg_pool2d(dtype):
    """Average pooling windows (odd sizes, padding, windows past the end,
    both divisors, an override, an unbatched input) as PyTorch's kernel
    computes them: bit-equal."""
    x = torch.randn(2, 3, 7, 5).to(dtype)
    compiled = attnfuse.compile(Pools(), (x,))
    for a, e in zip(compiled(x), Pools()(x)):
        assert a.shape == e.shape and a.dtype == e.dtype
        assert torch.equal(a, e), (a - e).abs().max()


class Scatter(torch.nn.Module):
    def forward(self, x, mask, src, rows):
        return (x.masked_scatter(mask, src),
                x.masked_scatter(rows[..., None], src),
                x[0].masked_scatter(mask, src))


def test_masked_scatter():
    """masked_scatter with a full mask, one broadcast along the last dim
    and one that broadcasts the input, odd sizes; a mask with more true elements than the source has is
    a run-time check failure, as in eager PyTorch."""
    x = torch.randn(3, 5, 7)
    mask = torch.rand(3, 5, 7) > 0.5
    rows = torch.rand(3, 5) > 0.4
    src = torch.randn(3, 5, 7)
    compiled = attnfuse.compile(Scatter(), (x, mask, src, rows))
    for a, e in zip(compiled(x, mask, src, rows),
                    Scatter()(x, mask, src, rows)):
        assert torch.equal(a, e)
    short = torch.randn(3, 5, 2)
    compiled = attnfuse.compile(Scatter(), (x, mask, short, rows))
    few = torch.zeros(3, 5, dtype=torch.bool)
    few[0, :4] = True
    none = torch.zeros_like(mask)
    for a, e in zip(compiled(x, none, short, few),
                    Scatter()(x, none, short, few)):
        assert torch.equal(a, e)
    with pytest.raises(RuntimeError):
        Scatter()(x, mask, short, rows)
    with pytest.raises(RunTimeCheckError, match="masked_scatter"):
        compiled(x, mask, short, rows)


class Strided(torch.nn.Module):
    def forward(self, x):
        y = x * 2  # a fresh contiguous tensor
        return (y.as_strided((3, 4, 2), (8, 2, 1)),       # a view
                y.as_strided((5, 3), (4, 1), 2),          # windows
                y.as_strided((2, 3, 4), (0, 8, 1)),       # a broadcast
                F.adaptive_avg_pool1d(y.view(3, 8).t(), 1))


def test_as_strided():
    """as_strided where its strides describe a view, overlapping windows
    or a broadcast of a contiguous tensor, and adaptive average pooling
    (which torch.export writes with one: Swin's pooler; Swin itself is in
    test_arch_sweep.py): equal to eager.
    A read past the end and a strided read of a non-contiguous view are
    refused."""
    x = torch.randn(3, 8)
    compiled = attnfuse.compile(Strided(), (x,))
    for a, e in zip(compiled(x), Strided()(x)):
        assert a.shape == e.shape and torch.equal(a, e)

    class PastEnd(torch.nn.Module):
        def forward(self, x):
            return (x * 2).as_strided((4, 8), (8, 1), 1)
    with pytest.raises(attnfuse.ExportError, match="reads element 32 of a "
                       "tensor of 32"):
        attnfuse.export(PastEnd(), (torch.randn(4, 8),))

    class OfTranspose(torch.nn.Module):
        def forward(self, x):
            return (x * 2).t().as_strided((2, 2), (1, 2))
    with pytest.raises(attnfuse.ExportError, match="not contiguous"):
        attnfuse.export(OfTranspose(), (torch.randn(4, 8),))
