"""Each attention module: export, exactly one attn.sdpa per block after
attn-opt --attn-fuse-sdpa, compile, run, compare with PyTorch (two batch
sizes through a dynamic batch dim, fully masked rows included)."""

import pytest
import torch

import attnfuse
from conftest import assert_matches
from models import (CausalSelfAttention, GPTConfig, GroupedQueryAttention,
                    HFBoolMaskAttention, HFSelfAttention, MaskedAttention,
                    NaiveCausalAttention, SDPAttention, TwoBlocks)

BATCH = torch.export.Dim("batch", min=1, max=16)


def qkv(batch, dtype=torch.float32, shape=(2, 8, 8)):
    return tuple(torch.randn(batch, *shape, dtype=dtype) for _ in range(3))


def hidden(batch, dtype=torch.float32):
    return (torch.randn(batch, 8, 32, dtype=dtype),)


def padding(batch, dtype):
    """A padding mask over 8 keys: batch 0 keeps 5, batch 1 none (every row
    fully masked), the rest all."""
    mask = torch.ones(batch, 8, dtype=dtype)
    mask[0, 5:] = 0
    mask[1, :] = 0
    return mask


def hf_inputs(batch, dtype):
    return hidden(batch, dtype) + (padding(batch, dtype),)


CASES = {
    # name: (module factory, inputs(batch, dtype), dynamic_shapes, sdpa count)
    "naive_masked_fill": (lambda: NaiveCausalAttention(8), qkv,
                          ({0: BATCH},) * 3, 1),
    "naive_masked_fill_": (lambda: NaiveCausalAttention(8, inplace=True), qkv,
                           ({0: BATCH},) * 3, 1),
    "nanogpt": (lambda: CausalSelfAttention(GPTConfig()), hidden,
                ({0: BATCH},), 1),
    "hf_bool_mask": (HFBoolMaskAttention, hf_inputs, ({0: BATCH}, {0: BATCH}),
                     1),
    "gqa": (GroupedQueryAttention, hidden, ({0: BATCH},), 1),
    "sdpa_is_causal": (SDPAttention, hidden, ({0: BATCH},), 1),
    "two_nanogpt_blocks": (lambda: TwoBlocks(GPTConfig()), hidden,
                           ({0: BATCH},), 2),
}


def run_case(name, dtype, expected_sdpa):
    factory, inputs, dynamic, _ = CASES[name]
    module = factory().eval().to(dtype)
    example = inputs(2, dtype)
    text = attnfuse.export(module, example, dynamic_shapes=dynamic)
    assert text.count('"attn.softmax"') + text.count('"attn.sdpa"') >= 1
    assert attnfuse.count_sdpa(text) == expected_sdpa
    compiled = attnfuse.compile(module, example, dynamic_shapes=dynamic)
    for batch in (2, 5):
        args = inputs(batch, dtype)
        with torch.no_grad():
            expected = module(*args)
        assert_matches(compiled(*args), expected)


@pytest.mark.parametrize("name", sorted(CASES))
def test_f32(name):
    run_case(name, torch.float32, CASES[name][3])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", ["hf_bool_mask", "nanogpt", "sdpa_is_causal"])
def test_half(name, dtype):
    run_case(name, dtype, CASES[name][3])


def test_hf_additive_mask_f32():
    """The additive `(1 - mask) * finfo.min` mask fuses in f32."""
    CASES["hf_additive"] = (HFSelfAttention, hf_inputs,
                            ({0: BATCH}, {0: BATCH}), 1)
    run_case("hf_additive", torch.float32, 1)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_hf_additive_mask_half(dtype):
    """In f16/bf16 the chain adds `finfo.min` to the scores in the element
    type; the fusion keeps that rounding in a score_mod region (the
    attribute form, which adds in f32, would differ on fully masked rows),
    and the compiled module matches PyTorch."""
    module = HFSelfAttention().eval().to(dtype)
    example = hf_inputs(2, dtype)
    why = attnfuse.explain(module, example)
    assert len(why.fused) == 1 and not why.not_fused
    assert '"attn.yield"' in why.fused_mlir  # the region (generic form)
    CASES["hf_additive"] = (HFSelfAttention, hf_inputs,
                            ({0: BATCH}, {0: BATCH}), 1)
    run_case("hf_additive", dtype, 1)


def masked_rows_inputs():
    """q, k, v and a mask (True = masked) whose row 3 masks every key."""
    q, k, v = qkv(2)
    mask = torch.zeros(8, 8, dtype=torch.bool)
    mask[3, :] = True
    mask[5, 6:] = True
    return q, k, v, mask


def test_fully_masked_rows_are_nan_as_in_pytorch():
    module = MaskedAttention()
    q, k, v, mask = masked_rows_inputs()
    compiled = attnfuse.compile(module, (q, k, v, mask))
    assert attnfuse.count_sdpa(compiled.mlir) == 1
    out = compiled(q, k, v, mask)
    assert out[:, :, 3].isnan().all()
    assert not out[:, :, 4].isnan().any()
    assert_matches(out, module(q, k, v, mask))


class SafeSoftmaxAttention(torch.nn.Module):
    """PyTorch's own SDPA math path: _safe_softmax gives 0 on a fully
    masked row where softmax gives NaN."""

    def forward(self, q, k, v, mask):
        s = (q @ k.transpose(-2, -1)) * q.shape[-1] ** -0.5
        s = s.masked_fill(mask, float("-inf"))
        return torch._safe_softmax(s, -1) @ v


def test_safe_softmax_gives_zero_rows_as_in_pytorch():
    module = SafeSoftmaxAttention()
    q, k, v, mask = masked_rows_inputs()
    compiled = attnfuse.compile(module, (q, k, v, mask))
    fused, _ = attnfuse.fuse(compiled.mlir)
    assert fused.count('"attn.sdpa"') == 1
    assert "safe_softmax = true" in fused
    out = compiled(q, k, v, mask)
    assert (out[:, :, 3] == 0).all()
    assert not out.isnan().any()
    assert_matches(out, module(q, k, v, mask))


def test_dynamic_sequence_length():
    """nanoGPT with dynamic batch and sequence: the sliced causal buffer is
    a run-time mask, the block still fuses."""
    seq = torch.export.Dim("seq", min=2, max=31)
    module = CausalSelfAttention(GPTConfig()).eval()
    dynamic = ({0: BATCH, 1: seq},)
    compiled = attnfuse.compile(module, hidden(2), dynamic_shapes=dynamic)
    assert "tensor<?x?x32xf32>" in compiled.mlir
    assert attnfuse.count_sdpa(compiled.mlir) == 1
    # Rows from two dynamic dims go back to [batch, T] through a
    # tensor.reshape: the projections are the GEMM too.
    assert compiled.mlir.count("linalg.matmul") == 2
    assert "tensor.reshape" in compiled.mlir
    for batch, length in ((2, 8), (3, 13)):
        x = torch.randn(batch, length, 32)
        assert_matches(compiled(x), module(x))


def test_projections_are_one_linalg_matmul_each():
    """nn.Linear on [batch, T, C] collapses [batch, T] into the rows of one
    linalg.matmul (the CPU lowering's GEMM) onto the broadcast bias."""
    module = CausalSelfAttention(GPTConfig()).eval()
    text = attnfuse.export(module, hidden(2), dynamic_shapes=({0: BATCH},))
    assert text.count("linalg.matmul") == 2  # c_attn, c_proj
    assert "tensor.collapse_shape" in text and "tensor.expand_shape" in text
    compiled = attnfuse.compile(module, hidden(2), dynamic_shapes=({0: BATCH},))
    for batch in (1, 7):
        x = torch.randn(batch, 8, 32)
        assert_matches(compiled(x), module(x))


def test_buffers_as_constants_give_is_causal():
    module = CausalSelfAttention(GPTConfig()).eval()
    text = attnfuse.export(module, hidden(2), constants="buffers")
    fused, _ = attnfuse.fuse(text)
    assert fused.count('"attn.sdpa"') == 1
    assert "is_causal = true" in fused
    assert "%arg4" in text and "%arg5" not in text  # the buffer is no argument


@pytest.mark.parametrize("name", ["gqa", "naive_masked_fill"])
def test_masks_built_from_dynamic_sizes(name):
    """With a dynamic sequence length, `arange(T)` comparisons and
    `ones(T, T).triu(1)` are computed at run time (linalg.generic), and the
    block still fuses with a run-time mask."""
    factory, inputs, _, _ = CASES[name]
    seq = torch.export.Dim("seq", min=2, max=16)
    module = factory().eval()
    example = inputs(2)
    seq_dim = 1 if name == "gqa" else 2
    dynamic = tuple({0: BATCH, seq_dim: seq} for _ in example)
    compiled = attnfuse.compile(module, example, dynamic_shapes=dynamic)
    assert "linalg.index" in compiled.mlir
    assert attnfuse.count_sdpa(compiled.mlir) == 1
    for batch, length in ((2, 8), (3, 5)):
        shape = list(example[0].shape)
        shape[0], shape[seq_dim] = batch, length
        args = tuple(torch.randn(shape) for _ in example)
        assert_matches(compiled(*args), module(*args))
