"""Whole Hugging Face models (tests/hf_models.py: 19 architectures built
from their configs, eager and sdpa attention) through attnfuse.compile:
every attention call fuses into one attn.sdpa, no softmax is left, and the
compiled model matches eager PyTorch on padded inputs (left padding for
decoders, right for encoders, a fully padded row), in f32 and, for three
of them, bf16. Each model is compiled once; several inputs run on the same
library (weights are arguments)."""

import functools
import re
import os
import itertools
import warnings
import inspect

import pytest
import torch

import attnfuse
from hf_models import ARCHS, IMPLS, ROUTER_SOFTMAXES, VOCAB, inputs, build

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning:transformers")

F32_TOL = dict(atol=1e-4, rtol=1e-4)
# PyTorch's own bf16 tolerance (torch.testing's default for bf16).
BF16_TOL = dict(atol=1e-5, rtol=1.6e-2)
BATCH = torch.export.Dim("batch", min=1, max=16)
SEQ = torch.export.Dim("seq", min=2, max=32)


def outputs_of(result):
    """The tensors of a model's output (a ModelOutput or a tuple)."""
    if isinstance(result, torch.Tensor):
        return [result]
    if hasattr(result, "to_tuple"):
        result = result.to_tuple()
    return [t for t in torch.utils._pytree.tree_leaves(result)
            if isinstance(t, torch.Tensor)]


def compiled_model(name, impl, dtype=torch.float32, dynamic=False):
    """dynamic: False, "batch" (dim 0 of every input) or "sequence" (dims 0
    and 1 of the token inputs). One compilation per model and arguments,
    however they are spelt (lru_cache keys `f(a, b)` and `f(a, b, c)`
    apart)."""
    return _compiled_model(name, impl, dtype, dynamic)


@functools.lru_cache(maxsize=None)
def _compiled_model(name, impl, dtype, dynamic):
    model = build(name, impl, dtype)
    args, kwargs = inputs(name, dtype=dtype)
    dynamic_shapes = None
    if dynamic:
        dims = {0: BATCH, 1: SEQ} if dynamic == "sequence" else {0: BATCH}
        first = next(iter(inspect.signature(model.forward).parameters))
        dynamic_shapes = {first: dims}
        dynamic_shapes.update({k: dims for k in kwargs})
    compiled = attnfuse.compile(model, args, example_kwargs=kwargs,
                                dynamic_shapes=dynamic_shapes)
    return model, compiled


def check(name, impl, dtype=torch.float32, seeds=(0, 1), batches=(3,),
          dynamic=False, seqs=(8,)):
    """f32: within 1e-4 of eager. bf16: eager bf16 itself differs from the
    f32 model by its roundings; the compiled model must stay as close to
    the f32 model as eager bf16 is (twice its largest error, or PyTorch's
    bf16 tolerance where that is larger)."""
    model, compiled = compiled_model(name, impl, dtype, dynamic)
    reference = build(name, impl) if dtype != torch.float32 else None
    if reference is not None:
        reference.load_state_dict({k: v.float() for k, v in
                                   model.state_dict().items()})
    for seed, batch, seq in itertools.product(seeds, batches, seqs):
        args, kwargs = inputs(name, batch=batch, seq=seq, dtype=dtype,
                              seed=seed)
        with torch.no_grad():
            expected = outputs_of(model(*args, **kwargs))
        actual = outputs_of(compiled(*args, **kwargs))
        assert len(actual) == len(expected)
        if reference is None:
            for a, e in zip(actual, expected):
                assert not e.isnan().any()
                torch.testing.assert_close(a, e, **F32_TOL)
            continue
        args32 = tuple(a.float() if a.is_floating_point() else a
                       for a in args)
        with torch.no_grad():
            truth = outputs_of(reference(*args32, **kwargs))
        for a, e, t in zip(actual, expected, truth):
            assert a.dtype == e.dtype
            eager_err = (e.float() - t).abs().max().item()
            our_err = (a.float() - t).abs().max().item()
            bound = max(2 * eager_err, BF16_TOL["rtol"] *
                        t.abs().max().item())
            assert our_err <= bound, (our_err, eager_err)
    return compiled


CASES = [(name, impl) for name in ARCHS for impl in IMPLS[name]]


@pytest.mark.parametrize("name, impl", CASES,
                         ids=[f"{n}-{i}" for n, i in CASES])
def test_whole_model_fuses_and_matches_eager(name, impl):
    compiled = check(name, impl)
    fused, _ = attnfuse.fuse(compiled.mlir)
    assert fused.count('"attn.sdpa"') == ARCHS[name][2]
    assert fused.count('"attn.softmax"') == ROUTER_SOFTMAXES.get(name, 0)
    assert '"attn.safe_softmax"' not in fused


@pytest.mark.parametrize("name", ["llama", "bert", "gpt2"])
def test_whole_model_bf16(name):
    check(name, "sdpa", torch.bfloat16, seeds=(0,))


def test_attention_sinks_bf16():
    """GPT-OSS in bf16 on the padded batch: transformers' eager mask is a
    where of two 0-d bf16 tensors (exported in bf16, as PyTorch types it);
    both attentions fuse with their sinks."""
    compiled = check("gpt_oss", "eager", torch.bfloat16, seeds=(0,))
    fused, _ = attnfuse.fuse(compiled.mlir)
    assert len(re.findall(r'"attn.sdpa".*operandSegmentSizes = '
                          r'array<i32: (?:\d+, ){6}1, ', fused)) == 2


def test_attention_sinks_torch_compile():
    """GPT-OSS through torch.compile: one graph, no fallback, both
    attentions fused with their sinks."""
    from attnfuse.dynamo import FallbackWarning, attnfuse_backend
    graphs = []

    def backend(gm, example_inputs):
        run = attnfuse_backend(gm, example_inputs)
        graphs.append(getattr(run, "attnfuse_compiled", None))
        return run

    torch._dynamo.reset()
    model = build("gpt_oss", "eager")
    args, kwargs = inputs("gpt_oss")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        with torch.no_grad():
            got = torch.compile(model, backend=backend, dynamic=False)(
                *args, **kwargs).last_hidden_state
            want = model(*args, **kwargs).last_hidden_state
    assert len(graphs) == 1 and graphs[0] is not None
    fused, _ = attnfuse.fuse(graphs[0].mlir)
    assert len(re.findall(r'"attn.sdpa".*operandSegmentSizes = '
                          r'array<i32: (?:\d+, ){6}1, ', fused)) == 2
    torch.testing.assert_close(got, want, **F32_TOL)


@pytest.mark.parametrize("name", ["llama", "bert"])
def test_dynamic_batch(name):
    check(name, "sdpa", seeds=(0,), batches=(2, 5), dynamic="batch")


@pytest.mark.parametrize("name", ["llama", "mistral", "bert"])
def test_dynamic_batch_and_sequence(name):
    """`?` batch and sequence dims, two sizes of each (a fully padded row
    and a padded one in each batch): the causal and sliding-window masks
    transformers builds from run-time positions reach attn.sdpa as
    attributes, the padding as a [B, 1, 1, S] mask."""
    _, compiled = compiled_model(name, "sdpa", dynamic="sequence")
    fused, _ = attnfuse.fuse(compiled.mlir)
    operands = _mask_operands(fused)
    assert len(operands) == ARCHS[name][2]
    for types in operands:
        assert types == ["tensor<?x1x1x?xi1>"], types
    sdpas = [l for l in fused.splitlines() if "attn.sdpa" in l]
    causal = ARCHS[name][1] == "decoder"
    assert all(("is_causal = true" in l) == causal for l in sdpas)
    if name == "mistral":
        assert all("window_left = 3" in l for l in sdpas)
    check(name, "sdpa", seeds=(0,), batches=(2, 5), seqs=(8, 5),
          dynamic="sequence")


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_dynamic_sequence_without_attention_mask(name):
    """One sequence of token ids alone, its length `?`: transformers builds
    the causal mask from positions and indexes it (the export checks each
    index with an `index out of range` assert in a loop whose values are
    then unused), at two lengths."""
    model = build(name, "sdpa")
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(3, VOCAB, (1, 8), generator=g)
    compiled = attnfuse.compile(model, (ids,), dynamic_shapes=({1: SEQ},))
    for seq in (8, 5):
        x = torch.randint(3, VOCAB, (1, seq), generator=g)
        with torch.no_grad():
            expected = outputs_of(model(x))
        actual = outputs_of(compiled(x))
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            torch.testing.assert_close(a, e, **F32_TOL)


def test_decoder_masks_reach_sdpa_as_attributes():
    """Mistral's sliding window and causal mask, built by transformers, are
    attributes of attn.sdpa; the padding is a [B, 1, 1, S] mask."""
    _, compiled = compiled_model("mistral", "sdpa")
    sdpas = [l for l in compiled.mlir.splitlines() if '"attn.sdpa"' in l]
    assert len(sdpas) == 2
    for line in sdpas:
        assert "is_causal = true" in line and "window_left = 3" in line
        assert "tensor<3x1x1x8xi1>" in line


# CI compiles three; ATTNFUSE_TEST_ALL_ARCHS=1 runs every architecture and
# implementation of hf_models.py through torch.compile.
DYNAMO_CASES = ([(n, i) for n in ARCHS for i in IMPLS[n]]
                if os.environ.get("ATTNFUSE_TEST_ALL_ARCHS") == "1"
                else [("gpt2", "eager"), ("bert", "eager"), ("llama", "sdpa")])


@pytest.mark.parametrize("name, impl", DYNAMO_CASES)
def test_torch_compile_whole_model(name, impl):
    """torch.compile(model, backend="attnfuse"): Dynamo captures the whole
    model as one graph, in which the layers drop the attention weights
    (GPT-2 and BERT's attention modules return them: compiled alone, they
    would not fuse); the backend compiles it with no fallback, every
    attention fuses, and the result matches eager."""
    from attnfuse.dynamo import FallbackWarning, attnfuse_backend
    torch._dynamo.reset()
    model = build(name, impl)
    compiled_graphs = []

    def backend(gm, example_inputs):
        run = attnfuse_backend(gm, example_inputs)
        compiled_graphs.append(getattr(run, "attnfuse_compiled", None))
        return run

    args, kwargs = inputs(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        with torch.no_grad():
            actual = outputs_of(torch.compile(model, backend=backend,
                                              dynamic=False)(*args, **kwargs))
            expected = outputs_of(model(*args, **kwargs))
    assert len(compiled_graphs) == 1 and compiled_graphs[0] is not None
    fused, _ = attnfuse.fuse(compiled_graphs[0].mlir)
    assert fused.count('"attn.sdpa"') == ARCHS[name][2]
    assert '"attn.softmax"' not in fused
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e, **F32_TOL)


@pytest.mark.parametrize("name", ["llama", "mistral"])
def test_eager_masks_are_not_materialised(name):
    """Eager attention adds `where(causal & window & padding, 0, min)` to
    the scores; the exporter distributes the sum over the terms, so the
    fused attn.sdpa reads the [B, 1, 1, S] padding term and computes the
    band from positions, instead of reading a [B, 1, L, S] mask."""
    from attnfuse.tools import run_tool
    _, compiled = compiled_model(name, "eager")
    fused = run_tool("attn-opt", ["-", "--attn-fuse-sdpa"],
                     input_text=compiled.mlir).stdout
    sdpas = [l for l in fused.splitlines() if "attn.sdpa" in l]
    assert len(sdpas) == 2
    for line in sdpas:
        operands = line.split(" : (")[1].split(") ->")[0]
        assert "tensor<3x1x1x8xi1>" in operands
        assert "3x1x8x8" not in operands


def _mask_operands(fused):
    """Per fused attn.sdpa, the types of its operands after q, k, v."""
    result = []
    for line in fused.splitlines():
        if '"attn.sdpa"' in line or "attn.sdpa " in line:
            types = line.split(" : (")[1].split(") ->")[0]
            result.append(types.split(", ")[3:])
    return result


def _fused_mask_operands(name, impl="eager"):
    """_mask_operands of the model after attn-fuse-sdpa, one per attention
    call."""
    from attnfuse.tools import run_tool
    _, compiled = compiled_model(name, impl)
    fused = run_tool("attn-opt", ["-", "--attn-fuse-sdpa"],
                     input_text=compiled.mlir).stdout
    operands = _mask_operands(fused)
    assert len(operands) == ARCHS[name][2]
    return operands


@pytest.mark.parametrize("name", ["t5", "bart"])
def test_seq2seq_position_masks_are_not_materialised(name):
    """T5's bucketed relative position bias, a function of j - i, reaches
    attn.sdpa as one [1, H, 1, 1] row per bucket run, chosen per score
    from positions in its score_mod region; the decoders' causal masks,
    folded to constants by the export, as a band: no attn.sdpa reads an
    [L, S] operand."""
    operands = _fused_mask_operands(name)
    for types in operands:
        assert not [t for t in types if "x8x8x" in t], types
    if name == "t5":
        assert any("tensor<1x4x1x1xf32>" in types for types in operands)


@pytest.mark.parametrize("name", ["bloom", "falcon_alibi", "mpt"])
def test_alibi_is_not_materialised(name):
    """ALiBi biases built from cumsum positions (BLOOM, Falcon with
    alibi=True) or an arange (MPT) reach attn.sdpa as [B, H, 1, S] or
    [H, 1, S] operands of its score_mod region, never an [L, S] tensor;
    the causal band is computed per tile."""
    operands = _fused_mask_operands(name)
    for types in operands:
        assert types and not [t for t in types if "x8x8x" in t], types
        assert [t for t in types if "x4x1x8x" in t or "<4x1x8x" in t], types


def _is_score_sized(type_text):
    """True for a tensor type whose last two dims are both > 1: an [L, S]
    operand read per score (the test inputs have L, S > 1)."""
    dims = type_text.split("<")[1].split("x")[:-1]
    return len(dims) >= 2 and all(d != "1" for d in dims[-2:])


@pytest.mark.parametrize("name, impl", CASES,
                         ids=[f"{n}-{i}" for n, i in CASES])
def test_no_attention_reads_a_score_sized_mask(name, impl):
    """Every mask and bias that transformers builds (causal, sliding
    window, padding, ALiBi, relative position, encoder-decoder padding,
    through eager code or F.scaled_dot_product_attention) reaches attn.sdpa
    as attributes, [B, 1, 1, S]-like operands or score_mod leaves: no
    operand after q, k and v is [L, S] per score. T5 with sdpa attention
    adds its zero position bias [1, H, L, S] to the padding mask, which is
    read as the [B, 1, 1, S] padding term."""
    for types in _fused_mask_operands(name, impl):
        assert not [t for t in types if _is_score_sized(t)], types
