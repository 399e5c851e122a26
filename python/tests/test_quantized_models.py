"""Models with quantized weights: `compile(..., weights=...)`,
`compile_generator(..., weights=...)` and `compile_generator_from_gguf`
against eager PyTorch running the dequantized weights
(`attnfuse.dequantized_model`): logits within 1e-4 relative in f32, greedy
tokens equal to transformers' `generate`, for Llama, Qwen2, Mistral (a
window that decoding runs past), Gemma-2 and Phi-3 built from their
configs (tiny random weights, fixed seeds), each with a different scheme;
a GGUF file written here with the `gguf` package (q8_0, q4_0, q4_k and
q6_k tensors) compiled as stored; the choice of weights (linear layers
only; tied heads and embeddings float), packages, re-quantizing after a
write, and the refusals."""

import functools
import json

import numpy as np
import pytest
import torch

import attnfuse
from attnfuse import dequantized_model
from attnfuse.quant import QuantizedTensor, quantize

T = pytest.importorskip("transformers")
from hf_models import mixtral_block  # noqa: E402
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

VOCAB = 100
NEW_TOKENS = 10
_GQA = dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4,
            num_key_value_heads=2, intermediate_size=96,
            max_position_embeddings=64)

# name: (model builder, weights=, group_size=)
MODELS = {
    "llama": (lambda: T.LlamaForCausalLM(T.LlamaConfig(vocab_size=VOCAB,
                                                       **_GQA)),
              "int4", 32),
    "qwen2": (lambda: T.Qwen2ForCausalLM(T.Qwen2Config(
        vocab_size=VOCAB, tie_word_embeddings=False, **_GQA)), "q8_0", None),
    "mistral": (lambda: T.MistralForCausalLM(T.MistralConfig(
        vocab_size=VOCAB, sliding_window=4, **_GQA)), "int8", None),
    "gemma2": (lambda: T.Gemma2ForCausalLM(T.Gemma2Config(
        vocab_size=VOCAB, head_dim=16, sliding_window=4,
        attn_implementation="eager", **_GQA)), "q4_0", None),
    "phi3": (lambda: T.Phi3ForCausalLM(T.Phi3Config(
        vocab_size=VOCAB, pad_token_id=0, bos_token_id=1, eos_token_id=2,
        **_GQA)), "int4_asym", 32),
}
# Mixtures of experts generate in test_gguf.py (a Qwen3-MoE file, its
# experts read as quantized stacks); test_experts_read_quantized below
# covers the schemes on one block.


def build(name, dtype=torch.float32):
    torch.manual_seed(0)
    return MODELS[name][0]().eval().to(dtype)


@functools.lru_cache(maxsize=None)
def compiled(name, dtype=torch.float32):
    model = build(name, dtype)
    _, weights, group = MODELS[name]
    generator = attnfuse.compile_generator(model, max_batch=3,
                                           max_cache_len=32,
                                           weights=weights, group_size=group)
    return model, generator, dequantized_model(model, generator.quantized)


def prompts(batch, seed=1):
    """Token ids [batch, 7] and a left-padded mask (row 0 by 3)."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, VOCAB, (batch, 7), generator=g)
    mask = torch.ones(batch, 7, dtype=torch.int64)
    mask[0, :3] = 0
    return ids, mask


def linear_weights(model):
    return {f"{n}.weight" for n, m in model.named_modules()
            if isinstance(m, torch.nn.Linear)}


def quantizable_tensors(model):
    """{id: names} of the linear layers' weights and embedding tables."""
    out = {}
    for n, m in model.named_modules(remove_duplicate=False):
        if isinstance(m, (torch.nn.Linear, torch.nn.Embedding)):
            out.setdefault(id(m.weight), set()).add(f"{n}.weight")
    return out


def assert_reads_every_table_quantized(model, quantized):
    """Each linear weight and embedding table is read quantized (under
    either name of a tied head and embedding), and nothing else."""
    tensors = quantizable_tensors(model)
    every = set().union(*tensors.values())
    assert set(quantized) <= every, set(quantized) - every
    for names in tensors.values():
        assert names & set(quantized), names


@pytest.mark.parametrize("name", list(MODELS))
def test_generator_equals_the_dequantized_model(name):
    model, generator, reference = compiled(name)
    # Every linear layer's weight and the embeddings, and nothing else,
    # are read quantized.
    assert_reads_every_table_quantized(model, generator.quantized)
    scheme = generator.quantized["model.layers.0.mlp.down_proj.weight"].scheme
    assert scheme.name == attnfuse.quantized_weights.weight_plan(
        MODELS[name][1], MODELS[name][2]).scheme.name
    # The quantization changed the model's results (the test can fail).
    ids, mask = prompts(3)
    with torch.no_grad():
        float_logits = model(ids, attention_mask=mask).logits[:, -1]
        ref = reference(ids, attention_mask=mask).logits[:, -1]
    assert (float_logits - ref).abs().max() > 1e-3
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    ours = generator.prefill(ids, mask, positions)
    scale = ref.abs().max()
    assert (ours - ref).abs().max() <= 1e-4 * scale, (ours - ref).abs().max()
    for batch in (1, 3):
        ids, mask = prompts(batch, seed=batch)
        if batch == 1:
            mask = torch.ones_like(ids)
        got = generator.generate(ids, attention_mask=mask,
                                 max_new_tokens=NEW_TOKENS, do_sample=False)
        with torch.no_grad():
            want_ids = reference.generate(ids, attention_mask=mask,
                                          max_new_tokens=NEW_TOKENS,
                                          do_sample=False)
        assert torch.equal(got, want_ids), (got, want_ids)


def test_bf16_generator_matches_the_dequantized_model():
    model, generator, reference = compiled("llama", torch.bfloat16)
    ids, mask = prompts(3)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    ours = generator.prefill(ids, mask, positions).float()
    with torch.no_grad():
        ref = reference(ids, attention_mask=mask).logits[:, -1].float()
        exact = dequantized_model(model.float(), generator.quantized)
        exact_logits = exact(ids, attention_mask=mask).logits[:, -1]
    # Within what eager bf16 itself differs from the f32 computation.
    eager_error = (ref - exact_logits).abs().max()
    assert (ours - exact_logits).abs().max() <= 3 * eager_error + 1e-3


def test_compiled_module_reads_linear_weights_quantized():
    """compile(weights=...) of a whole model: the MLIR reads every linear
    weight with attn.quantized_matmul; logits equal the dequantized model
    (a left-padded batch); a package of it loads and computes the same."""
    torch.manual_seed(0)
    model = T.LlamaForCausalLM(T.LlamaConfig(vocab_size=VOCAB, use_cache=False,
                                             **_GQA)).eval()
    ids, mask = prompts(2)
    compiled_model = attnfuse.compile(model, (ids,),
                                      example_kwargs={"attention_mask": mask},
                                      weights="int8")
    assert compiled_model.mlir.count("attn.quantized_matmul") == 15
    assert compiled_model.mlir.count("linalg.matmul") == 0
    reference = dequantized_model(model, compiled_model.quantized)
    with torch.no_grad():
        want = reference(ids, attention_mask=mask).logits
    got = compiled_model(ids, attention_mask=mask).logits
    assert (got - want).abs().max() <= 1e-4 * want.abs().max()


def test_package_of_a_quantized_module(tmp_path):
    torch.manual_seed(0)
    lin = torch.nn.Sequential(torch.nn.Linear(64, 48), torch.nn.GELU(),
                              torch.nn.Linear(48, 32, bias=False)).eval()
    x = torch.randn(3, 64)
    with pytest.raises(attnfuse.ExportError, match=r"parameter 2\.weight: "
                       r"group size 32 of int4_sym does not divide K=48.*"
                       r"pass a group_size that divides"):
        attnfuse.compile(lin, (x,), weights="int4", group_size=32)
    c = attnfuse.compile(lin, (x,), weights="int8")
    c.save(tmp_path / "pkg")
    import json
    manifest = json.loads((tmp_path / "pkg" / "manifest.json").read_text())
    quantized = [a for a in manifest["entries"][0]["args"] if "quantized" in a]
    assert [a["name"] for a in quantized] == ["0.weight", "2.weight"]
    assert quantized[0]["quantized"] == {
        "scheme": "int8_asym", "group_size": 64, "scale_dtype": "f32",
        "weight_shape": [48, 64]}
    assert quantized[0]["dtype"] == "int8"
    # Quantized bytes, not floats, are what the package holds.
    nbytes = c.quantized["0.weight"].nbytes
    assert quantized[0]["shape"] == [nbytes] and nbytes < 48 * 64 * 2
    loaded = attnfuse.load(tmp_path / "pkg")
    assert torch.equal(loaded(x), c(x))


def test_a_written_weight_is_quantized_again():
    torch.manual_seed(0)
    lin = torch.nn.Linear(64, 16).eval()
    x = torch.randn(4, 64)
    c = attnfuse.compile(lin, (x,), weights="q8_0")
    before = c(x)
    with torch.no_grad():
        lin.weight.mul_(2)
    after = c(x)
    want = dequantized_model(lin, {"weight": quantize(lin.weight, "q8_0")})(x)
    assert not torch.allclose(before, after)
    assert (after - want).abs().max() <= 1e-5 * want.abs().max()


def test_tied_head_and_embeddings_read_one_quantized_table():
    """A LM head tied to the embeddings is one quantized tensor that the
    head's product and the embedding's lookup (attn.quantized_embedding)
    both read; a token id out of range fails the lookup's check."""
    torch.manual_seed(0)
    model = T.LlamaForCausalLM(T.LlamaConfig(
        vocab_size=VOCAB, use_cache=False, tie_word_embeddings=True,
        **_GQA)).eval()
    ids = torch.randint(0, VOCAB, (1, 5))
    c = attnfuse.compile(model, (ids,), weights="q4_0")
    assert_reads_every_table_quantized(model, c.quantized)
    assert len(c.quantized) == 15
    assert c.mlir.count("attn.quantized_embedding") == 1
    assert c.mlir.count("attn.quantized_matmul") == 15
    with torch.no_grad():
        want = dequantized_model(model, c.quantized)(ids).logits
    got = c(ids).logits
    assert (got - want).abs().max() <= 1e-4 * want.abs().max()
    for bad in (VOCAB, -1):
        with pytest.raises(attnfuse.RunTimeCheckError,
                           match="index out of range"):
            c(torch.tensor([[1, 2, bad, 3, 4]]))
    assert torch.equal(c(ids).logits, got)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("weights", ["q8_0", "q4_0", "int8", "int4_asym"])
def test_embedding_rows_are_the_dequantized_rows(weights, dtype):
    """attn.quantized_embedding: each row exactly the dequantized row,
    rounded once to the table's dtype; any index shape."""
    torch.manual_seed(0)
    emb = torch.nn.Embedding(40, 96).eval().to(dtype)
    ids = torch.randint(0, 40, (2, 3, 5))
    c = attnfuse.compile(emb, (ids,), weights=weights,
                         group_size=32 if weights == "int4_asym" else None)
    want = dequantized_model(emb, c.quantized)(ids)
    assert torch.equal(c(ids), want)


@pytest.mark.parametrize("weights,group,dtype", [
    ("q4_0", None, torch.float32), ("int4_asym", 32, torch.float32),
    ("int4", 32, torch.bfloat16)])
def test_experts_read_quantized(weights, group, dtype, tmp_path):
    """A mixture of experts' [E, N, K] parameters are read as quantized
    stacks, one attn.quantized_matmul per expert in the loop over groups,
    for every token count (dynamic): results equal the block on the
    dequantized weights."""
    block = mixtral_block(dtype, 64, 96)
    tokens = torch.export.Dim("tokens", min=1, max=64)
    c = attnfuse.compile(block, (torch.randn(2, 7, 64).to(dtype),),
                         dynamic_shapes=({1: tokens},), weights=weights,
                         group_size=group)
    stacks = {n: qt for n, qt in c.quantized.items() if qt.is_stack}
    assert sorted(stacks) == ["experts.down_proj", "experts.gate_up_proj"]
    assert stacks["experts.down_proj"].shape == (4, 64, 96)
    # The router stays float; one product per stack in the loop.
    assert sorted(c.quantized) == sorted(stacks)
    assert c.mlir.count("attn.quantized_matmul") == 2
    reference = dequantized_model(block, c.quantized)
    # f32 on the same dequantized weights (the bf16 case's exact result).
    exact = dequantized_model(block, c.quantized).float()
    for n in (7, 1, 40):
        x = torch.randn(2, n, 64).to(dtype)
        with torch.no_grad():
            want, plain = reference(x), block(x)
        got = c(x)
        scale = want.float().abs().max()
        if dtype == torch.float32:
            assert (got - want).abs().max() <= 1e-5 * scale
        else:
            with torch.no_grad():
                ref32 = exact(x.float())
            eager_error = (want.float() - ref32).abs().max()
            assert (got.float() - ref32).abs().max() <= \
                2 * eager_error + 1e-2 * scale
        # Quantizing changed the result (the comparison can fail).
        assert (plain.float() - want.float()).abs().max() > 1e-4 * scale
    # A package holds the stacks' bytes and records their [E, N, K] shape.
    c.save(tmp_path / "moe")
    loaded = attnfuse.load(tmp_path / "moe")
    x = torch.randn(2, 5, 64).to(dtype)
    assert torch.equal(loaded(x), c(x))
    manifest = json.loads((tmp_path / "moe" / "manifest.json").read_text())
    shapes = sorted(a["quantized"]["weight_shape"]
                    for e in manifest["entries"] for a in e["args"]
                    if a.get("quantized"))
    assert shapes == [[4, 64, 96], [4, 192, 64]]


def test_experts_read_other_ways_stay_float():
    """A 3-D parameter read other than by grouped products (here one
    expert's matrix indexed and multiplied) is not quantized."""
    class Indexed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(4, 32, 64))
            self.proj = torch.nn.Linear(64, 32, bias=False)

        def forward(self, x):
            return torch.nn.functional.linear(x, self.w[1]) + self.proj(x)

    m = Indexed().eval()
    x = torch.randn(3, 64)
    c = attnfuse.compile(m, (x,), weights="int8")
    assert sorted(c.quantized) == ["proj.weight"]
    reference = dequantized_model(m, c.quantized)
    with torch.no_grad():
        want = reference(x)
    assert (c(x) - want).abs().max() <= 1e-5 * want.abs().max()


def test_refusals():
    torch.manual_seed(0)
    lin = torch.nn.Linear(48, 8).eval()
    x = torch.randn(2, 48)
    with pytest.raises(attnfuse.ExportError,
                       match=r"weights=q4_0: parameter weight: block size 32 "
                             r"of q4_0 does not divide K=48.*its blocks are "
                             r"fixed"):
        attnfuse.compile(lin, (x,), weights="q4_0")
    with pytest.raises(attnfuse.AttnFuseError,
                       match="q4_k weights come only from GGUF files"):
        attnfuse.compile(lin, (x,), weights="q4_k")
    with pytest.raises(attnfuse.AttnFuseError,
                       match="unknown quantization scheme 'int3'"):
        attnfuse.compile(lin, (x,), weights="int3")
    with pytest.raises(attnfuse.AttnFuseError,
                       match="group_size is given without weights="):
        attnfuse.compile(lin, (x,), group_size=32)
    with pytest.raises(attnfuse.AttnFuseError,
                       match="constants=True folds them into the module"):
        attnfuse.compile(lin, (x,), weights="int8", constants=True)
    with pytest.raises(attnfuse.AttnFuseError,
                       match=r"weights\['weight'\] is a Parameter, not a "
                             r"QuantizedTensor"):
        attnfuse.compile(lin, (x,), weights={"weight": lin.weight})
    class Transposed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.randn(10, 32))

        def forward(self, x):
            return x @ self.weight.t()
    given = {"weight": quantize(torch.randn(10, 32), "q8_0")}
    with pytest.raises(attnfuse.ExportError,
                       match="parameter weight is given quantized .q8_0. but "
                             "the module reads it other than as an "
                             "nn.Linear weight or an nn.Embedding table"):
        attnfuse.compile(Transposed(), (torch.randn(2, 32),), weights=given)
    # The same module with weights="q8_0": that weight stays float.
    assert attnfuse.compile(Transposed(), (torch.randn(2, 32),),
                            weights="q8_0").quantized == {}
    lin32 = torch.nn.Linear(32, 8)
    with pytest.raises(attnfuse.ExportError,
                       match=r"parameter weight is \[8, 32\], the quantized "
                             r"tensor given for it \[10, 32\]"):
        attnfuse.compile(lin32, (torch.randn(2, 32),), weights=given)


def test_tensor_subclass_weights_are_refused():
    """A torchao-quantized weight (a tensor subclass from torchao, here a
    stand-in of that module's name: torchao is not a CI dependency) says
    what to use instead; any other subclass is refused as such."""
    lin = torch.nn.Linear(32, 8).eval()

    class AffineQuantizedTensor(torch.Tensor):
        pass
    AffineQuantizedTensor.__module__ = "torchao.dtypes.affine_quantized_tensor"
    lin.weight = torch.nn.Parameter(
        lin.weight.detach().as_subclass(AffineQuantizedTensor))
    with pytest.raises(attnfuse.ExportError,
                       match=r"parameter weight is a AffineQuantizedTensor "
                             r"\(weights quantized by torchao\).*"
                             r"weights='int8_sym'"):
        attnfuse.compile(lin, (torch.randn(2, 32),))

    class Other(torch.Tensor):
        pass
    lin.weight = torch.nn.Parameter(lin.weight.detach().as_subclass(Other))
    with pytest.raises(attnfuse.ExportError,
                       match=r"weight is a tensor subclass .*Other, which "
                             r"AttnFuse does not compile"):
        attnfuse.compile(lin, (torch.randn(2, 32),))


# ---- GGUF ------------------------------------------------------------------

gguf = pytest.importorskip("gguf")


def gguf_source(seed):
    """The float Llama a GGUF file of test_gguf's layout is written from
    (hidden 256: whole k-quant super-blocks)."""
    torch.manual_seed(seed)
    return T.LlamaForCausalLM(T.LlamaConfig(
        vocab_size=64, hidden_size=256, intermediate_size=512,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=128, tie_word_embeddings=False)).eval()


@pytest.fixture(scope="module")
def gguf_model(tmp_path_factory):
    from test_gguf import write_llama
    path = tmp_path_factory.mktemp("gguf") / "tiny-llama.gguf"
    write_llama(path, gguf_source(48))
    return path


def test_generator_from_gguf_reads_the_file_as_stored(gguf_model):
    generator = attnfuse.compile_generator_from_gguf(gguf_model, max_batch=2,
                                                     max_cache_len=32)
    from attnfuse.gguf_file import GGUFFile
    reference, given = GGUFFile(gguf_model).model(dequantize=True)
    kinds = {name: qt.scheme.name for name, qt in generator.quantized.items()}
    # Layer 0 q8_0, layer 1 q4_0 with q/k in q4_k/q6_k (test_gguf's file);
    # the head is stored in BF16 and stays float.
    assert kinds["model.layers.0.mlp.up_proj.weight"] == "q8_0"
    assert kinds["model.layers.1.mlp.up_proj.weight"] == "q4_0"
    assert kinds["model.layers.1.self_attn.q_proj.weight"] == "q4_k"
    assert kinds["model.layers.1.self_attn.k_proj.weight"] == "q6_k"
    # The embedding is F16 in this file: float.
    assert len(kinds) == 14 and "lm_head.weight" not in kinds
    # The bytes passed are the file's mapping, not a copy (except the
    # rows of q/k, which transformers' conversion reorders).
    up = generator.quantized["model.layers.0.mlp.up_proj.weight"]
    assert isinstance(up.data.base, np.memmap) or isinstance(
        getattr(up.data.base, "base", None), np.memmap)
    ids, mask = prompts(2)
    ids = ids % 64
    with torch.no_grad():
        want = reference.generate(ids, attention_mask=mask,
                                  max_new_tokens=NEW_TOKENS, do_sample=False)
    got = generator.generate(ids, attention_mask=mask,
                             max_new_tokens=NEW_TOKENS, do_sample=False)
    assert torch.equal(got, want), (got, want)


def test_gguf_tied_q8_0_embeddings_read_packed(tmp_path):
    """A GGUF file without output.weight (the head tied to token_embd)
    whose token_embd is q8_0: the one packed table serves the lookup and
    the head."""
    from test_gguf import TYPES, write_llama
    from attnfuse.gguf_file import GGUFFile
    source = gguf_source(3)
    types = dict(TYPES)
    types["model.embed_tokens.weight"] = gguf.GGMLQuantizationType.Q8_0
    path = tmp_path / "tied-q8.gguf"
    write_llama(path, source, types=types, drop=("output.weight",))
    generator = attnfuse.compile_generator_from_gguf(path, max_cache_len=32)
    reference, given = GGUFFile(path).model(dequantize=True)
    assert set(given) >= {"model.embed_tokens.weight", "lm_head.weight"}
    assert given["lm_head.weight"] is given["model.embed_tokens.weight"]
    assert_reads_every_table_quantized(reference, generator.quantized)
    ids = torch.randint(0, 64, (1, 6))
    with torch.no_grad():
        want = reference.generate(ids, attention_mask=torch.ones_like(ids),
                                  max_new_tokens=NEW_TOKENS, do_sample=False)
    got = generator.generate(ids, max_new_tokens=NEW_TOKENS, do_sample=False)
    assert torch.equal(got, want), (got, want)


def test_gguf_model_linear_parameters_are_not_loaded(gguf_model):
    from attnfuse.gguf_file import GGUFFile
    model, given = GGUFFile(gguf_model).model()
    assert all(isinstance(qt, QuantizedTensor) for qt in given.values())
    assert set(given) == {n for n in linear_weights(model)
                          if n != "lm_head.weight"}
    with pytest.raises(TypeError, match="no weights= or group_size="):
        attnfuse.compile_generator_from_gguf(gguf_model, weights="int8")


def host_multiplies_int8(byte_codes):
    """Whether attn-compile's host target multiplies int8 activations in
    integers: with VNNI (cpu::Target::vnni: AVX-VNNI, or AVX512-VNNI with
    VL) every scheme, with AVX2 alone the weights whose codes are narrower
    than a byte (`byte_codes` False: 4- and 6-bit)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f
                          if line.startswith("flags")), [])
    except OSError:
        return False
    if "avx_vnni" in flags or ("avx512_vnni" in flags and "avx512vl" in flags):
        return True
    return "avx2" in flags and not byte_codes


INT8_ACTIVATIONS_BOUND = 2e-2


def test_int8_activations_generate_close_to_the_dequantized_model():
    """weights="int4", activations="int8": the decode products (here also
    the prefill of one 7-token prompt: 7 rows) quantize their input rows
    to int8 per block of 32. Logits within INT8_ACTIVATIONS_BOUND of the
    largest reference logit (the activations' rounding, 1/254 of each
    block's largest element, through two layers), and not equal to the
    exact float path's on a VNNI or AVX2 host (the integer path ran), equal
    to it within 1e-4 elsewhere (the float fallback)."""
    model = build("llama")
    generator = attnfuse.compile_generator(model, max_batch=1,
                                           max_cache_len=32, weights="int4",
                                           group_size=32, activations="int8")
    reference = dequantized_model(model, generator.quantized)
    ids, _ = prompts(1, seed=5)
    mask = torch.ones_like(ids)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    with torch.no_grad():
        ref = reference(ids, attention_mask=mask).logits[:, -1]
    ours = generator.prefill(ids, mask, positions)
    scale = ref.abs().max()
    err = (ours - ref).abs().max()
    if host_multiplies_int8(byte_codes=False):
        assert 1e-4 * scale < err <= INT8_ACTIVATIONS_BOUND * scale, \
            (err, scale)
    else:
        assert err <= 1e-4 * scale, (err, scale)
    got = generator.generate(ids, attention_mask=mask,
                             max_new_tokens=NEW_TOKENS, do_sample=False)
    assert got.shape == (1, ids.shape[1] + NEW_TOKENS)
    assert torch.equal(got[:, :ids.shape[1]], ids)
    assert ((got >= 0) & (got < VOCAB)).all()


def check_prefill_quantized_as_decode(lin, x, weights):
    """`lin` with `weights` and activations="int8" on the rows of `x` (more
    than 8: prefill, the GEMM) and on its first row (decode): on a VNNI
    host both quantize their rows (the same rule per row and block of 32),
    so the prefill's first row equals the decode result up to the f32
    accumulations' order, and every output is within the activations'
    rounding of the exact product: at most amax / 254 per element of each
    block of 32 (amax its largest |x|), times |W|. Without VNNI the prefill
    is the exact f32 GEMM."""
    rows, k = x.shape
    prefill = attnfuse.compile(lin, (x,), weights=weights, activations="int8")
    decode = attnfuse.compile(lin, (x[:1],), weights=weights,
                              activations="int8")
    with torch.no_grad():
        w = dequantized_model(lin, prefill.quantized).weight.double()
    ref = x.double() @ w.T
    got = prefill(x).double()
    f32_slack = 1e-6 * (x.double().abs() @ w.abs().T)
    if not host_multiplies_int8(byte_codes=True):
        assert ((got - ref).abs() <= 10 * f32_slack).all()
        return
    amax = x.double().reshape(rows, k // 32, 32).abs().amax(-1)
    rounding = (amax / 254).repeat_interleave(32, dim=-1) @ w.abs().T
    err = (got - ref).abs()
    assert (err <= rounding + f32_slack).all(), (err / rounding).max()
    assert (err > f32_slack).any()
    assert ((got[:1] - decode(x[:1]).double()).abs() <= f32_slack[:1]).all()


def test_int8_activations_prefill_quantized_as_decode():
    """A q8_0 linear layer (check_prefill_quantized_as_decode)."""
    torch.manual_seed(7)
    lin = torch.nn.Linear(96, 40, bias=False).eval()
    check_prefill_quantized_as_decode(lin, torch.randn(13, 96), "q8_0")


@pytest.mark.parametrize("scheme", ["q4_k", "q6_k"])
def test_int8_activations_kquant_prefill_quantized_as_decode(scheme):
    """The two types of a Q4_K_M GGUF file (random valid blocks: there is
    no k-quant quantizer) given as the layer's weight, K two super-blocks,
    N odd (check_prefill_quantized_as_decode): the integer GEMM reads
    q4_k's mins and q6_k's scales per 16 elements as the decode GEMV
    does."""
    from attnfuse.quant import get_scheme
    from test_quant import random_k_blocks
    torch.manual_seed(7)
    n, k = 37, 512
    blocks = random_k_blocks(np.random.default_rng(7), scheme, n, k)
    qt = QuantizedTensor(blocks.reshape(-1), (n, k), get_scheme(scheme))
    lin = torch.nn.Linear(k, n, bias=False).eval()
    check_prefill_quantized_as_decode(lin, torch.randn(13, k),
                                      {"weight": qt})


@pytest.mark.parametrize("weights", ["int8", "int4_asym"])
def test_int8_activations_asym_prefill_quantized_as_decode(weights):
    """NNCF's INT8_ASYM (per output channel) and INT4_ASYM (groups of 128)
    layers, N odd (check_prefill_quantized_as_decode): the integer GEMM
    takes each unit's zero point as a min, as the decode GEMV subtracts
    it."""
    torch.manual_seed(7)
    lin = torch.nn.Linear(256, 37, bias=False).eval()
    check_prefill_quantized_as_decode(lin, torch.randn(13, 256), weights)


def test_activations_refusals_and_cache_key():
    from attnfuse.quantized_weights import activation_args, weight_plan
    lin = torch.nn.Linear(32, 8).eval()
    x = torch.randn(2, 32)
    with pytest.raises(attnfuse.AttnFuseError,
                       match=r"activations='int4': expected None .float "
                             r"inputs, exact. or 'int8'"):
        attnfuse.compile(lin, (x,), weights="q8_0", activations="int4")
    with pytest.raises(attnfuse.AttnFuseError,
                       match=r"activations='int8' applies to quantized "
                             r"weights: pass weights="):
        attnfuse.compile(lin, (x,), activations="int8")
    with pytest.raises(attnfuse.AttnFuseError, match="activations='fp8'"):
        attnfuse.compile_generator(build("llama"), weights="int4",
                                   activations="fp8")
    # The flag is one of the library's build arguments, so part of its
    # cache key: the two compiles are two libraries.
    plan = weight_plan("q8_0")
    assert activation_args(None, plan) == []
    assert activation_args("int8", plan) == ["--quantized-activations=int8"]
    exact = attnfuse.compile(lin, (x,), weights="q8_0")
    int8 = attnfuse.compile(lin, (x,), weights="q8_0", activations="int8")
    assert exact.library_path != int8.library_path
    with torch.no_grad():
        ref = dequantized_model(lin, exact.quantized)(x)
    assert (exact(x) - ref).abs().max() <= 1e-5 * ref.abs().max()
    bound = (INT8_ACTIVATIONS_BOUND if host_multiplies_int8(byte_codes=True)
             else 1e-5)
    assert (int8(x) - ref).abs().max() <= bound * ref.abs().max()
