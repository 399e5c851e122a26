"""Tiny Hugging Face models built from their config classes (random
weights, no downloads): 2 layers, hidden size 32, 4 heads, vocabulary 100,
with `attn_implementation` "eager" or "sdpa"."""

import warnings

import torch
import transformers as T

VOCAB = 100
DECODER = "decoder"  # left padding, causal attention
ENCODER = "encoder"  # right padding, bidirectional attention
SEQ = 8


def _lm(cls, config_cls, **kw):
    def build(impl):
        cfg = config_cls(vocab_size=VOCAB, use_cache=False,
                         attn_implementation=impl, **kw)
        return cls(cfg)
    return build


_SMALL = dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=4,
              intermediate_size=64, max_position_embeddings=64)
_GQA = dict(_SMALL, num_key_value_heads=2)

# name: (builder(impl), kind, attention calls per forward, impls)
ARCHS = {
    "gpt2": (_lm(T.GPT2Model, T.GPT2Config, n_layer=2, n_embd=32, n_head=4,
                 n_positions=64), DECODER, 2),
    "llama": (_lm(T.LlamaModel, T.LlamaConfig, **_GQA), DECODER, 2),
    "mistral": (_lm(T.MistralModel, T.MistralConfig, sliding_window=4,
                    **_GQA), DECODER, 2),
    "qwen2": (_lm(T.Qwen2Model, T.Qwen2Config, **_GQA), DECODER, 2),
    "qwen3": (_lm(T.Qwen3Model, T.Qwen3Config, head_dim=8, **_GQA), DECODER,
              2),
    "gemma2": (_lm(T.Gemma2Model, T.Gemma2Config, head_dim=8,
                   sliding_window=4, **_GQA), DECODER, 2),
    "phi": (_lm(T.PhiModel, T.PhiConfig, **_SMALL), DECODER, 2),
    "gpt_neox": (_lm(T.GPTNeoXModel, T.GPTNeoXConfig, **_SMALL), DECODER, 2),
    "falcon": (_lm(T.FalconModel, T.FalconConfig, num_hidden_layers=2,
                   hidden_size=32, num_attention_heads=4, alibi=False),
               DECODER, 2),
    "falcon_alibi": (_lm(T.FalconModel, T.FalconConfig, num_hidden_layers=2,
                         hidden_size=32, num_attention_heads=4, alibi=True),
                     DECODER, 2),
    "bloom": (_lm(T.BloomModel, T.BloomConfig, n_layer=2, hidden_size=32,
                  n_head=4), DECODER, 2),
    "mpt": (_lm(T.MptModel, T.MptConfig, n_layers=2, d_model=32, n_heads=4,
                max_seq_len=64), DECODER, 2),
    "opt": (_lm(T.OPTModel, T.OPTConfig, num_hidden_layers=2, hidden_size=32,
                num_attention_heads=4, ffn_dim=64, max_position_embeddings=64,
                word_embed_proj_dim=32), DECODER, 2),
    "gpt_bigcode": (_lm(T.GPTBigCodeModel, T.GPTBigCodeConfig, n_layer=2,
                        n_embd=32, n_head=4, n_positions=64), DECODER, 2),
    # Attention sinks (one logit per head in each softmax), a sliding
    # window on alternate layers, a mixture of experts.
    "gpt_oss": (_lm(T.GptOssModel, T.GptOssConfig, num_hidden_layers=2,
                    hidden_size=32, num_attention_heads=4,
                    num_key_value_heads=2, head_dim=8, intermediate_size=32,
                    num_local_experts=4, num_experts_per_tok=2,
                    sliding_window=4, max_position_embeddings=64),
                DECODER, 2),
    "bert": (_lm(T.BertModel, T.BertConfig, **_SMALL), ENCODER, 2),
    "distilbert": (_lm(T.DistilBertModel, T.DistilBertConfig, n_layers=2,
                       dim=32, n_heads=4, hidden_dim=64,
                       max_position_embeddings=64), ENCODER, 2),
    "bart": (_lm(T.BartModel, T.BartConfig, encoder_layers=2,
                 decoder_layers=2, d_model=32, encoder_attention_heads=4,
                 decoder_attention_heads=4, encoder_ffn_dim=64,
                 decoder_ffn_dim=64, max_position_embeddings=64), "seq2seq",
             6),
    "t5": (_lm(T.T5Model, T.T5Config, num_layers=2, num_decoder_layers=2,
               d_model=32, d_kv=8, num_heads=4, d_ff=64), "seq2seq", 6),
    "vit": (lambda impl: T.ViTModel(T.ViTConfig(
        num_hidden_layers=2, hidden_size=32, num_attention_heads=4,
        intermediate_size=64, image_size=16, patch_size=4,
        attn_implementation=impl)), "image", 2),
    "whisper": (lambda impl: T.WhisperModel(T.WhisperConfig(
        encoder_layers=2, decoder_layers=2, d_model=32,
        encoder_attention_heads=4, decoder_attention_heads=4,
        encoder_ffn_dim=64, decoder_ffn_dim=64, num_mel_bins=8,
        max_source_positions=16, vocab_size=VOCAB, pad_token_id=0,
        bos_token_id=1, eos_token_id=2, decoder_start_token_id=1,
        use_cache=False, attn_implementation=impl)).get_encoder(), "audio",
                2),
}

# Gemma-2 soft-caps its scores (refused by transformers' sdpa path); BLOOM
# and MPT have eager attention only; Falcon's ALiBi (cumsum positions) is
# on its eager path.
# Softmaxes that are no attention and stay: a mixture of experts' router.
ROUTER_SOFTMAXES = {"gpt_oss": 2}

IMPLS = {name: ("eager",) if name in ("gemma2", "bloom", "mpt",
                                      "falcon_alibi", "gpt_oss")
         else ("eager", "sdpa")
         for name in ARCHS}


def build(name, impl, dtype=torch.float32):
    torch.manual_seed(0)
    model = ARCHS[name][0](impl).eval().to(dtype)
    return model


def padding_mask(batch, kind, seq=SEQ):
    """1 = token, 0 = padding. Row 0 padded by 3 (left for decoders, right
    for encoders), row 1 fully padded, the rest not at all."""
    mask = torch.ones(batch, seq, dtype=torch.long)
    if kind == DECODER:
        mask[0, :3] = 0
    else:
        mask[0, seq - 3:] = 0
    if batch > 1:
        mask[1, :] = 0
    return mask


def inputs(name, batch=3, seq=SEQ, dtype=torch.float32, seed=0):
    """(args, kwargs) for one forward."""
    kind = ARCHS[name][1]
    g = torch.Generator().manual_seed(seed)
    if kind == "image":
        return (torch.randn(batch, 3, 16, 16, generator=g, dtype=dtype),), {}
    if kind == "audio":
        # Whisper wants 2 * max_source_positions frames.
        return (torch.randn(batch, 8, 32, generator=g, dtype=dtype),), {}
    ids = torch.randint(3, VOCAB, (batch, seq), generator=g)
    kw = {"attention_mask": padding_mask(batch, DECODER if kind == DECODER
                                         else ENCODER, seq)}
    if kind == "seq2seq":
        kw["decoder_input_ids"] = torch.randint(3, VOCAB, (batch, seq),
                                                generator=g)
    return (ids,), kw


def mixtral_block(dtype=torch.float32, hidden=32, inner=48):
    """Mixtral's sparse MoE block with transformers' grouped_mm experts
    (top-2 of 4), weights drawn with std 0.3 (seed 0)."""
    from transformers.models.mixtral.modeling_mixtral import \
        MixtralSparseMoeBlock
    cfg = T.MixtralConfig(num_local_experts=4, num_experts_per_tok=2,
                          hidden_size=hidden, intermediate_size=inner)
    cfg._experts_implementation = "grouped_mm"
    torch.manual_seed(0)
    block = MixtralSparseMoeBlock(cfg).eval()
    for p in block.parameters():
        torch.nn.init.normal_(p, std=0.3)
    return block.to(dtype)


def assert_torch_compile_matches(model, **kwargs):
    """torch.compile(model, backend="attnfuse") on `kwargs` (use_cache off)
    with no graph falling back to eager (a FallbackWarning is an error):
    the logits equal eager's within 1e-4."""
    from attnfuse.dynamo import FallbackWarning
    torch._dynamo.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        with torch.no_grad():
            got = torch.compile(model, backend="attnfuse", dynamic=False)(
                **kwargs, use_cache=False).logits
            want = model(**kwargs, use_cache=False).logits
    torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)
