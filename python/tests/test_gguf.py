"""attnfuse.gguf_file: GGUF files written here with gguf.GGUFWriter for a
tiny random Llama (llama.cpp's names, metadata and rotary q/k permutation),
read back without dequantizing: the config, every weight against the
source model's after the same quantization (q/k rows un-permuted), against
transformers' own GGUF loader, and the errors for broken files."""

import shutil

import numpy as np
import pytest
import torch

gguf = pytest.importorskip("gguf")
transformers = pytest.importorskip("transformers")

from attnfuse.gguf_file import GGUFError, GGUFFile, load_gguf  # noqa: E402
from attnfuse.quant import QuantizedTensor, dequantize, quantize  # noqa: E402

GGML = gguf.GGMLQuantizationType
HEADS, KV_HEADS, LAYERS = 4, 2, 2

LEAVES = [("self_attn.q_proj", "attn_q"), ("self_attn.k_proj", "attn_k"),
          ("self_attn.v_proj", "attn_v"), ("self_attn.o_proj", "attn_output"),
          ("mlp.gate_proj", "ffn_gate"), ("mlp.up_proj", "ffn_up"),
          ("mlp.down_proj", "ffn_down"), ("input_layernorm", "attn_norm"),
          ("post_attention_layernorm", "ffn_norm")]
NAMES = {"model.embed_tokens.weight": "token_embd.weight",
         "model.norm.weight": "output_norm.weight", "lm_head.weight": "output.weight"}
NAMES.update({f"model.layers.{i}.{hf}.weight": f"blk.{i}.{g}.weight"
              for i in range(LAYERS) for hf, g in LEAVES})

# The stored type of each matrix: layer 0 in q8_0, layer 1 in q4_0 except
# its q/k in random q4_k/q6_k blocks (no quantizer: they test the reading
# and the un-permutation), the embedding in F16, the head in BF16.
TYPES = {hf: GGML.Q8_0 if ".layers.0." in hf else GGML.Q4_0
         for hf in NAMES if ".layers." in hf and "norm" not in hf}
TYPES.update({"model.layers.1.self_attn.q_proj.weight": GGML.Q4_K,
              "model.layers.1.self_attn.k_proj.weight": GGML.Q6_K,
              "model.embed_tokens.weight": GGML.F16, "lm_head.weight": GGML.BF16})


def llama_permute(w, n_head, n_kv):
    """convert_hf_to_gguf.py's LlamaModel.permute for q/k rows."""
    if n_kv is not None and n_head != n_kv:
        n_head = n_kv
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def permutation_of(hf_name, rows):
    """File row i holds HF row p[i]; identity for tensors not permuted."""
    idx = np.arange(rows)
    if ".q_proj." in hf_name:
        return llama_permute(idx, HEADS, HEADS)
    if ".k_proj." in hf_name:
        return llama_permute(idx, HEADS, KV_HEADS)
    return idx


def random_k_blocks(rng, ggml, n, k):
    bb = {GGML.Q4_K: 144, GGML.Q6_K: 210}[ggml]
    raw = rng.integers(0, 256, size=(n, k // 256 * bb), dtype=np.uint8)
    blocks = raw.reshape(-1, bb)
    for off in ((0, 2) if ggml == GGML.Q4_K else (208,)):
        blocks[:, off:off + 2] = rng.uniform(-0.01, 0.01, (blocks.shape[0], 1)).astype("<f2").view(np.uint8)
    return raw


def write_llama(path, model, *, arch="llama", types=TYPES, drop=(), replace=None, meta=None):
    """Write `model` as llama.cpp's converter would; returns {hf name:
    expected HF weight (float32) after the stored type's rounding}."""
    cfg = model.config
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name("tiny-llama")
    values = dict(context_length=cfg.max_position_embeddings, embedding_length=cfg.hidden_size,
                  block_count=cfg.num_hidden_layers, feed_forward_length=cfg.intermediate_size,
                  head_count=cfg.num_attention_heads, head_count_kv=cfg.num_key_value_heads,
                  rope_dimension_count=cfg.head_dim, rope_freq_base=cfg.rope_parameters["rope_theta"],
                  layer_norm_rms_eps=cfg.rms_norm_eps, vocab_size=cfg.vocab_size)
    values.update(meta or {})
    for key, value in values.items():
        getattr(w, f"add_{key}")(value)
    rng = np.random.default_rng(0)
    expected = {}
    for hf, gname in NAMES.items():
        if gname in drop:
            continue
        x = model.state_dict()[hf].numpy()
        p = permutation_of(hf, x.shape[0])
        kind = types.get(hf, GGML.F32)
        if kind in (GGML.Q4_K, GGML.Q6_K):
            data = random_k_blocks(rng, kind, *x.shape)
            hf_rows = gguf.quants.dequantize(data, kind)[np.argsort(p)]
        elif kind in (GGML.F32, GGML.F16):
            data = x[p].astype(np.float32 if kind == GGML.F32 else np.float16)
            hf_rows = data[np.argsort(p)].astype(np.float32)
        else:
            data = gguf.quants.quantize(x[p], kind)
            hf_rows = gguf.quants.dequantize(gguf.quants.quantize(x, kind), kind)
        if replace and gname in replace:
            data, kind = replace[gname]
        if kind in (GGML.F32, GGML.F16):
            w.add_tensor(gname, data)
        else:
            w.add_tensor(gname, data, raw_dtype=kind)
        expected[hf] = torch.from_numpy(np.ascontiguousarray(hf_rows, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return expected


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    cfg = transformers.LlamaConfig(
        vocab_size=64, hidden_size=256, intermediate_size=512, num_hidden_layers=LAYERS,
        num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, max_position_embeddings=128,
        rms_norm_eps=2.0 ** -16, tie_word_embeddings=False)
    torch.manual_seed(48)
    model = transformers.LlamaForCausalLM(cfg).eval()
    with torch.no_grad():  # norms away from 1, so a lost norm shows
        for name, p in model.named_parameters():
            if "norm" in name:
                p.uniform_(0.5, 1.5)
    path = tmp_path_factory.mktemp("gguf") / "tiny-llama.gguf"
    expected = write_llama(path, model)
    return model, path, expected


def test_lists_tensors_as_mapped_views(tiny):
    _, path, _ = tiny
    with GGUFFile(path) as f:
        assert f.architecture == "llama"
        assert f.metadata["llama.block_count"] == LAYERS
        assert len(f.tensors) == len(NAMES)
        q = f.tensors["blk.1.attn_q.weight"]
        assert (q.ggml_type, q.shape, q.quantized) == ("Q4_K", (256, 256), True)
        assert isinstance(q.data, np.memmap) and q.data.shape == (256, 144)
        assert q.nbytes == 256 * 144 and q.offset % 32 == 0
        emb = f.tensors["token_embd.weight"]
        assert (emb.ggml_type, emb.shape, emb.data.dtype) == ("F16", (64, 256), np.float16)
        assert f.tensors["output.weight"].ggml_type == "BF16"
        assert f.tensors["blk.0.ffn_down.weight"].shape == (256, 512)
        with open(path, "rb") as raw:
            raw.seek(q.offset)
            assert raw.read(144) == bytes(q.data[0])


def test_config_matches_source_and_transformers(tiny):
    model, path, _ = tiny
    config = GGUFFile(path).config()
    src = model.config
    assert type(config) is type(src)
    for key in ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
                "num_attention_heads", "num_key_value_heads", "head_dim", "rms_norm_eps",
                "max_position_embeddings", "tie_word_embeddings", "rope_parameters"):
        assert getattr(config, key) == getattr(src, key), key
    auto = transformers.AutoConfig.from_pretrained(str(path.parent), gguf_file=path.name,
                                                   local_files_only=True)
    ours, theirs = config.to_dict(), auto.to_dict()
    theirs["_name_or_path"] = ours["_name_or_path"]  # from_pretrained records the folder
    assert ours == theirs


def test_weights_equal_source_after_same_quantization(tiny):
    model, path, expected = tiny
    config, weights = load_gguf(path)
    assert set(weights) == set(model.state_dict()) == set(expected)
    for name, weight in weights.items():
        want_type = TYPES.get(name, GGML.F32)
        assert weight.ggml_type == want_type.name, name
        assert weight.quantized == (want_type not in (GGML.F32, GGML.F16, GGML.BF16))
        got = dequantize(weight.value) if weight.quantized else weight.value
        assert got.dtype == torch.float32
        if want_type == GGML.BF16:
            want = model.state_dict()[name].bfloat16().float()
        else:
            want = expected[name]
        assert torch.equal(got, want), name
    # q8_0/q4_0: the same as quantizing the HF weight here
    v = weights["model.layers.1.mlp.down_proj.weight"].value
    assert np.array_equal(v.data, quantize(model.state_dict()["model.layers.1.mlp.down_proj.weight"], "q4_0").data)


def test_qk_rows_unpermuted_packed(tiny):
    model, path, _ = tiny
    with GGUFFile(path) as f:
        weights = f.hf_weights()
        v = weights["model.layers.0.self_attn.v_proj.weight"]
        assert v.row_permutation is None
        assert np.shares_memory(v.value.data, f.tensors["blk.0.attn_v.weight"].data)  # no copy
        for layer in range(LAYERS):
            for leaf, gname, heads in (("q_proj", "attn_q", HEADS), ("k_proj", "attn_k", KV_HEADS)):
                w = weights[f"model.layers.{layer}.self_attn.{leaf}.weight"]
                n = w.shape[0]
                assert w.row_permutation is not None
                assert np.array_equal(w.row_permutation, np.argsort(llama_permute(np.arange(n), heads, heads)))
                stored = f.tensors[f"blk.{layer}.{gname}.weight"].to_quantized()
                assert torch.equal(dequantize(w.value), dequantize(stored)[torch.from_numpy(w.row_permutation)])
        q8 = weights["model.layers.0.self_attn.q_proj.weight"].value
        src = model.state_dict()["model.layers.0.self_attn.q_proj.weight"]
        assert torch.equal(dequantize(q8), dequantize(quantize(src, "q8_0")))


def test_same_weights_as_transformers_loader(tiny):
    _, path, _ = tiny
    f = GGUFFile(path)
    with torch.device("meta"):
        meta = transformers.AutoModelForCausalLM.from_config(f.config())
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint
    theirs = load_gguf_checkpoint(str(path), return_tensors=True, model_to_load=meta)["tensors"]
    ours = f.hf_weights()
    assert set(theirs) == set(ours)
    for name, weight in ours.items():
        got = dequantize(weight.value) if weight.quantized else weight.value
        assert torch.equal(got, theirs[name]), name


def test_tied_embeddings(tiny, tmp_path):
    model, _, _ = tiny
    path = tmp_path / "tied.gguf"
    write_llama(path, model, drop=("output.weight",))
    config, weights = load_gguf(path)
    assert config.tie_word_embeddings is True
    assert "lm_head.weight" not in weights and "model.embed_tokens.weight" in weights


# ---- broken files --------------------------------------------------------------

def test_bad_magic(tiny, tmp_path):
    bad = tmp_path / "bad.gguf"
    data = bytearray(tiny[1].read_bytes())
    data[:4] = b"GGUX"
    bad.write_bytes(bytes(data))
    with pytest.raises(GGUFError, match=r"bad\.gguf: not a GGUF file \(magic b'GGUX'"):
        GGUFFile(bad)
    empty = tmp_path / "empty.gguf"
    empty.write_bytes(b"")
    with pytest.raises(GGUFError, match="not a GGUF file"):
        GGUFFile(empty)
    with pytest.raises(GGUFError, match="cannot open"):
        GGUFFile(tmp_path / "missing.gguf")


@pytest.mark.parametrize("keep", [10, 200, -100])
def test_truncated(tiny, tmp_path, keep):
    data = tiny[1].read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[:keep] if keep > 0 else data[:keep])
    with pytest.raises(GGUFError, match=r"cut\.gguf: .*truncated") as err:
        GGUFFile(cut)
    if keep < 0:  # in the tensor data: the message names the tensor
        last = GGUFFile(tiny[1]).tensors
        name = max(last.values(), key=lambda t: t.offset).name
        assert f"tensor {name!r}" in str(err.value) and "needs bytes" in str(err.value)


def test_unknown_ggml_type_id(tiny, tmp_path):
    path = tmp_path / "unknown.gguf"
    shutil.copy(tiny[1], path)
    reader = gguf.GGUFReader(str(path), "r+")
    field = next(t.field for t in reader.tensors if t.name == "blk.0.attn_v.weight")
    field.parts[4][0] = 99
    reader.data.flush()
    del reader, field
    with pytest.raises(GGUFError, match="tensor 'blk.0.attn_v.weight' has unknown ggml type id 99"):
        GGUFFile(path)


def test_unsupported_type(tiny, tmp_path):
    model, _, _ = tiny
    path = tmp_path / "q4_1.gguf"
    write_llama(path, model, types={**TYPES, "model.layers.0.mlp.up_proj.weight": GGML.Q4_1})
    f = GGUFFile(path)
    assert f.tensors["blk.0.ffn_up.weight"].ggml_type == "Q4_1"  # listing works
    with pytest.raises(GGUFError, match=r"q4_1\.gguf: tensor 'blk\.0\.ffn_up\.weight' has ggml type Q4_1, "
                                        r"which attnfuse does not read"):
        f.hf_weights()


def test_shape_disagrees_with_metadata(tiny, tmp_path):
    model, _, _ = tiny
    path = tmp_path / "shape.gguf"
    wrong = gguf.quants.quantize(np.random.default_rng(0).standard_normal((64, 256)).astype(np.float32), GGML.Q8_0)
    write_llama(path, model, replace={"blk.0.attn_v.weight": (wrong, GGML.Q8_0)})
    with pytest.raises(GGUFError, match=r"tensor 'blk\.0\.attn_v\.weight' \(Q8_0 \[64, 256\]\) holds "
                                        r"model\.layers\.0\.self_attn\.v_proj\.weight, which the metadata's "
                                        r"config makes \[128, 256\].*num_key_value_heads=2"):
        GGUFFile(path).hf_weights()
    path2 = tmp_path / "heads.gguf"
    write_llama(path2, model, meta={"head_count_kv": 4})
    with pytest.raises(GGUFError, match=r"blk\.0\.attn_k\.weight.*\[256, 256\]"):
        GGUFFile(path2).hf_weights()


def test_rows_not_whole_blocks(tiny, tmp_path):
    path = tmp_path / "rows.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    data = gguf.quants.quantize(np.ones((4, 64), np.float32), GGML.Q8_0)
    # a non-uint8 dtype makes the writer keep the element shape as given
    w.add_tensor_info("x.weight", (4, 48), np.dtype(np.float32), data.nbytes, raw_dtype=GGML.Q8_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.fout[0].write(b"\0" * 512)
    w.close()
    with pytest.raises(GGUFError, match=r"tensor 'x\.weight' \(Q8_0 \[4, 48\]\): rows of 48 are not whole Q8_0 blocks of 32"):
        GGUFFile(path)


def test_missing_tensor(tiny, tmp_path):
    model, _, _ = tiny
    path = tmp_path / "missing.gguf"
    write_llama(path, model, drop=("blk.1.ffn_down.weight",))
    with pytest.raises(GGUFError, match=r"missing\.gguf: no tensor for model\.layers\.1\.mlp\.down_proj\.weight"):
        GGUFFile(path).hf_weights()


def test_unsupported_architecture(tiny, tmp_path):
    model, _, _ = tiny
    path = tmp_path / "arch.gguf"
    write_llama(path, model, arch="notanarch", meta=None)
    with pytest.raises(GGUFError, match=r"arch\.gguf: architecture 'notanarch' is not supported"):
        GGUFFile(path).config()


def test_packed_conversion_refused(tiny):
    """A transformers conversion that is not a row reordering (GPT-2's
    transpose) cannot keep a quantized tensor packed."""
    from transformers.modeling_gguf_pytorch_utils import GPT2TensorProcessor
    f = GGUFFile(tiny[1])
    tensor = f.tensors["blk.0.ffn_up.weight"]
    kwargs = {"tensor_key_mapping": {}, "parsed_parameters": {"tensors": {}}}
    with pytest.raises(GGUFError, match="not only the order of its rows"):
        f._row_order(tensor, GPT2TensorProcessor(), kwargs)
    assert isinstance(tensor.to_quantized(), QuantizedTensor)


def test_block_count_disagrees(tiny, tmp_path):
    model, _, _ = tiny
    path = tmp_path / "blocks.gguf"
    write_llama(path, model, meta={"block_count": 1000000})
    with pytest.raises(GGUFError, match="says 1000000 layers .* tensors for 2 blocks"):
        GGUFFile(path).hf_weights()


def test_corrupt_headers_raise_gguferror(tiny, tmp_path):
    """Random byte flips in the header and tensor table: the file opens and
    loads, or GGUFError; never another exception."""
    src = tiny[1].read_bytes()
    header = GGUFFile(tiny[1])._reader.data_offset
    rng = np.random.default_rng(1)
    path = tmp_path / "flip.gguf"
    outcomes = set()
    for _ in range(40):
        data = bytearray(src)
        for _ in range(rng.integers(1, 3)):
            data[int(rng.integers(4, header))] = int(rng.integers(0, 256))
        path.write_bytes(bytes(data))
        try:
            GGUFFile(path).hf_weights()
            outcomes.add("ok")
        except GGUFError:
            outcomes.add("error")
    assert "error" in outcomes


# A mixture of experts (Qwen3-MoE): the experts as [E, N, K] stacks, gate
# and up in separate tensors that transformers merges into gate_up_proj.
MOE_LEAVES = [("self_attn.q_proj.weight", "attn_q.weight"),
              ("self_attn.k_proj.weight", "attn_k.weight"),
              ("self_attn.v_proj.weight", "attn_v.weight"),
              ("self_attn.o_proj.weight", "attn_output.weight"),
              ("self_attn.q_norm.weight", "attn_q_norm.weight"),
              ("self_attn.k_norm.weight", "attn_k_norm.weight"),
              ("input_layernorm.weight", "attn_norm.weight"),
              ("post_attention_layernorm.weight", "ffn_norm.weight"),
              ("mlp.gate.weight", "ffn_gate_inp.weight"),
              ("mlp.experts.down_proj", "ffn_down_exps.weight")]


def qwen3_moe():
    cfg = transformers.Qwen3MoeConfig(
        vocab_size=64, hidden_size=64, intermediate_size=96, moe_intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
        num_experts=4, num_experts_per_tok=2, norm_topk_prob=True,
        max_position_embeddings=64, tie_word_embeddings=False)
    torch.manual_seed(3)
    model = transformers.Qwen3MoeForCausalLM(cfg).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.uniform_(0.5, 1.5)
            elif "experts" in name:
                p.normal_(0, 0.05)
    return model


def write_qwen3_moe(path, model, kinds, up_kind=None, drop=()):
    """`model` as llama.cpp's converter writes Qwen3-MoE: matrices in
    kinds[0] (layer 0) and kinds[1] (layer 1), norms and routers F32."""
    cfg = model.config
    w = gguf.GGUFWriter(str(path), "qwen3moe")
    for key, value in dict(
            context_length=cfg.max_position_embeddings, embedding_length=cfg.hidden_size,
            block_count=cfg.num_hidden_layers, feed_forward_length=cfg.intermediate_size,
            head_count=cfg.num_attention_heads, head_count_kv=cfg.num_key_value_heads,
            key_length=cfg.head_dim, value_length=cfg.head_dim,
            rope_freq_base=cfg.rope_parameters["rope_theta"], layer_norm_rms_eps=cfg.rms_norm_eps,
            vocab_size=cfg.vocab_size, expert_count=cfg.num_experts,
            expert_used_count=cfg.num_experts_per_tok,
            expert_feed_forward_length=cfg.moe_intermediate_size).items():
        getattr(w, f"add_{key}")(value)
    sd = {k: v.numpy() for k, v in model.state_dict().items()}
    tensors = {"token_embd.weight": sd["model.embed_tokens.weight"],
               "output_norm.weight": sd["model.norm.weight"], "output.weight": sd["lm_head.weight"]}
    inner = cfg.moe_intermediate_size
    for i in range(cfg.num_hidden_layers):
        for hf, g in MOE_LEAVES:
            tensors[f"blk.{i}.{g}"] = sd[f"model.layers.{i}.{hf}"]
        gate_up = sd[f"model.layers.{i}.mlp.experts.gate_up_proj"]
        tensors[f"blk.{i}.ffn_gate_exps.weight"] = gate_up[:, :inner]
        tensors[f"blk.{i}.ffn_up_exps.weight"] = gate_up[:, inner:]
    for name, x in tensors.items():
        if name in drop:
            continue
        kind = GGML.F32
        if x.ndim >= 2 and "gate_inp" not in name and "token_embd" not in name:
            kind = kinds[0] if name.startswith("blk.0.") else kinds[1]
            if up_kind is not None and "ffn_up_exps" in name:
                kind = up_kind
        x = np.ascontiguousarray(x, dtype=np.float32)
        if kind == GGML.F32:
            w.add_tensor(name, x)
        else:
            w.add_tensor(name, gguf.quants.quantize(x, kind), raw_dtype=kind)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


@pytest.fixture(scope="module")
def moe_file(tmp_path_factory):
    model = qwen3_moe()
    path = tmp_path_factory.mktemp("gguf") / "tiny-moe.gguf"
    write_qwen3_moe(path, model, (GGML.Q8_0, GGML.Q4_0))
    return model, path


def test_moe_experts_read_as_stacks(moe_file):
    """The experts' tensors as [E, N, K] stacks: down_proj a view of the
    file, gate_up_proj the gate and up stacks merged per expert, each equal
    to the source weights after the same quantization; the config's
    expert size is the file's (transformers leaves it at its default)."""
    model, path = moe_file
    f = GGUFFile(path)
    assert f.config().moe_intermediate_size == 64
    weights = f.hf_weights()
    for i, kind in enumerate((GGML.Q8_0, GGML.Q4_0)):
        down = weights[f"model.layers.{i}.mlp.experts.down_proj"]
        assert isinstance(down.value, QuantizedTensor) and down.value.is_stack
        assert not down.value.data.flags.owndata  # the file's bytes
        gate_up = weights[f"model.layers.{i}.mlp.experts.gate_up_proj"]
        assert gate_up.value.shape == (4, 128, 64)
        for name, wq in (("down_proj", down), ("gate_up_proj", gate_up)):
            src = model.state_dict()[f"model.layers.{i}.mlp.experts.{name}"].numpy()
            want = gguf.quants.dequantize(gguf.quants.quantize(src, kind), kind)
            assert np.array_equal(dequantize(wq.value).numpy(), want), name
    # The router stays the file's F32 values.
    assert torch.equal(weights["model.layers.0.mlp.gate.weight"].value,
                       model.state_dict()["model.layers.0.mlp.gate.weight"])


def test_moe_generator_from_gguf_equals_the_dequantized_model(moe_file):
    import attnfuse
    _, path = moe_file
    generator = attnfuse.compile_generator_from_gguf(path, max_batch=2, max_cache_len=32)
    stacks = [n for n, qt in generator.quantized.items() if qt.is_stack]
    assert len(stacks) == 4
    # The routers stay float (F32 in the file; weights= would keep them).
    assert not any(n.endswith("mlp.gate.weight") for n in generator.quantized)
    reference, _ = GGUFFile(path).model(dequantize=True)
    ids = torch.randint(0, 64, (2, 6), generator=torch.Generator().manual_seed(0))
    mask = torch.ones_like(ids)
    mask[0, :2] = 0
    got = generator.generate(ids, attention_mask=mask, max_new_tokens=6, do_sample=False)
    with torch.no_grad():
        want = reference.generate(ids, attention_mask=mask, max_new_tokens=6, do_sample=False)
    assert torch.equal(got, want)


def test_moe_gate_and_up_of_different_types(tmp_path):
    model = qwen3_moe()
    path = tmp_path / "mixed.gguf"
    write_qwen3_moe(path, model, (GGML.Q8_0, GGML.Q8_0), up_kind=GGML.Q4_0)
    with pytest.raises(GGUFError, match=r"ffn_gate_exps.*Q8_0.*ffn_up_exps.*Q4_0.*one type"):
        GGUFFile(path).hf_weights()


def test_moe_up_missing(tmp_path):
    model = qwen3_moe()
    path = tmp_path / "noup.gguf"
    write_qwen3_moe(path, model, (GGML.Q8_0, GGML.Q8_0), drop=("blk.1.ffn_up_exps.weight",))
    with pytest.raises(GGUFError, match=r"blk\.1\.ffn_gate_exps.*no ffn_up_exps"):
        GGUFFile(path).hf_weights()


def _mapped_kib(path) -> int:
    """Resident KiB of this process's mappings of `path` (/proc/self/smaps)."""
    total, inside = 0, False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if head and "-" in head[0] and len(head) >= 5 and ":" not in head[0]:
                inside = len(head) >= 6 and head[5] == str(path)
            elif inside and line.startswith("Rss:"):
                total += int(head[1])
    return total


def test_copied_tensors_leave_the_resident_set(tmp_path):
    """The pages of a mapped tensor that was copied (q/k rows reordered,
    floats loaded into the model) are dropped from the resident set; the
    values read through the mapping stay the same."""
    import mmap
    from attnfuse.gguf_file import _drop_mapped_pages
    page = mmap.PAGESIZE
    path = tmp_path / "pages.bin"
    values = np.random.default_rng(0).integers(0, 256, 64 * page, dtype=np.uint8)
    values.tofile(path)
    mapped = np.memmap(path, mode="r")
    assert int(mapped.sum(dtype=np.int64)) == int(values.sum(dtype=np.int64))
    assert _mapped_kib(path) == 64 * page // 1024
    # Pages 8..39 whole, plus half pages on either side that stay.
    view = mapped[8 * page - page // 2:40 * page + page // 2].reshape(-1, 16)
    _drop_mapped_pages(view)
    assert _mapped_kib(path) == (64 - 32) * page // 1024
    assert np.array_equal(view.reshape(-1), values[8 * page - page // 2:40 * page + page // 2])
