"""Whole Hugging Face models (tests/hf_models.py: 19 architectures built
from their configs, eager and sdpa attention) through attnfuse.compile:
every attention call fuses into one attn.sdpa, no softmax is left, and the
compiled model matches eager PyTorch on padded inputs (left padding for
decoders, right for encoders, a fully padded row), in f32 and, for three
of them, bf16. Each model is compiled once; several inputs run on the same
library (weights are arguments)."""

import functools
import inspect

import pytest
import torch

import attnfuse
from hf_models import ARCHS, IMPLS, inputs, build

pytestmark = pytest.mark.filterwarnings("ignore")

F32_TOL = dict(atol=1e-4, rtol=1e-4)
# PyTorch's own bf16 tolerance (torch.testing's default for bf16).
BF16_TOL = dict(atol=1e-5, rtol=1.6e-2)
BATCH = torch.export.Dim("batch", min=1, max=16)


def outputs_of(result):
    """The tensors of a model's output (a ModelOutput or a tuple)."""
    if isinstance(result, torch.Tensor):
        return [result]
    if hasattr(result, "to_tuple"):
        result = result.to_tuple()
    return [t for t in torch.utils._pytree.tree_leaves(result)
            if isinstance(t, torch.Tensor)]


@functools.lru_cache(maxsize=None)
def compiled_model(name, impl, dtype=torch.float32, dynamic=False):
    model = build(name, impl, dtype)
    args, kwargs = inputs(name, dtype=dtype)
    dynamic_shapes = None
    if dynamic:
        first = next(iter(inspect.signature(model.forward).parameters))
        dynamic_shapes = {first: {0: BATCH}}
        dynamic_shapes.update({k: {0: BATCH} for k in kwargs})
    compiled = attnfuse.compile(model, args, example_kwargs=kwargs,
                                dynamic_shapes=dynamic_shapes)
    return model, compiled


def check(name, impl, dtype=torch.float32, seeds=(0, 1), batches=(3,),
          dynamic=False):
    model, compiled = compiled_model(name, impl, dtype, dynamic)
    tol = F32_TOL if dtype == torch.float32 else BF16_TOL
    for seed in seeds:
        for batch in batches:
            args, kwargs = inputs(name, batch=batch, dtype=dtype, seed=seed)
            with torch.no_grad():
                expected = outputs_of(model(*args, **kwargs))
            actual = outputs_of(compiled(*args, **kwargs))
            assert len(actual) == len(expected)
            for a, e in zip(actual, expected):
                assert not e.isnan().any()
                torch.testing.assert_close(a, e, **tol)
    return compiled


CASES = [(name, impl) for name in ARCHS for impl in IMPLS[name]]


@pytest.mark.parametrize("name, impl", CASES,
                         ids=[f"{n}-{i}" for n, i in CASES])
def test_whole_model_fuses_and_matches_eager(name, impl):
    compiled = check(name, impl)
    fused, _ = attnfuse.fuse(compiled.mlir)
    assert fused.count('"attn.sdpa"') == ARCHS[name][2]
    assert '"attn.softmax"' not in fused
    assert '"attn.safe_softmax"' not in fused


@pytest.mark.parametrize("name", ["llama", "bert", "gpt2"])
def test_whole_model_bf16(name):
    check(name, "sdpa", torch.bfloat16, seeds=(0,))


@pytest.mark.parametrize("name", ["llama", "bert"])
def test_dynamic_batch(name):
    check(name, "sdpa", seeds=(0,), batches=(2, 5), dynamic=True)


def test_decoder_masks_reach_sdpa_as_attributes():
    """Mistral's sliding window and causal mask, built by transformers, are
    attributes of attn.sdpa; the padding is a [B, 1, 1, S] mask."""
    _, compiled = compiled_model("mistral", "sdpa")
    sdpas = [l for l in compiled.mlir.splitlines() if '"attn.sdpa"' in l]
    assert len(sdpas) == 2
    for line in sdpas:
        assert "is_causal = true" in line and "window_left = 3" in line
        assert "tensor<3x1x1x8xi1>" in line
