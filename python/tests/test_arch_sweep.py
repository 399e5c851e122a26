"""The wider architecture sweep, outside CI (`ATTNFUSE_TEST_ALL_ARCHS=1`):
models the CI tests do not build, from their config classes with tiny
random weights. Decoders through `compile_generator` (greedy tokens equal
to transformers' `generate`, a left-padded batch of 3); encoders, vision
and audio models through `compile` (every tensor of the output against
eager, padded positions left out); vision-language models with an image
prompt through `compile`."""

import os

import pytest
import torch

import attnfuse

T = pytest.importorskip("transformers")
pytestmark = [
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.skipif(os.environ.get("ATTNFUSE_TEST_ALL_ARCHS") != "1",
                       reason="the wide sweep: ATTNFUSE_TEST_ALL_ARCHS=1"),
]

V = 100
_S = dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=4,
          intermediate_size=64, max_position_embeddings=64)
_G = dict(_S, num_key_value_heads=2)

DECODERS = {
    "qwen2": lambda: T.Qwen2ForCausalLM(T.Qwen2Config(vocab_size=V, **_G)),
    "qwen2_window": lambda: T.Qwen2ForCausalLM(T.Qwen2Config(
        vocab_size=V, use_sliding_window=True, sliding_window=4,
        max_window_layers=1, **_G)),
    "phi": lambda: T.PhiForCausalLM(T.PhiConfig(vocab_size=V, **_G)),
    "gemma": lambda: T.GemmaForCausalLM(T.GemmaConfig(
        vocab_size=V, head_dim=8, **_G)),
    "gemma3": lambda: T.Gemma3ForCausalLM(T.Gemma3TextConfig(
        vocab_size=V, head_dim=8, sliding_window=4, **_G)),
    "olmo": lambda: T.OlmoForCausalLM(T.OlmoConfig(vocab_size=V, **_G)),
    "olmo2": lambda: T.Olmo2ForCausalLM(T.Olmo2Config(vocab_size=V, **_G)),
    "stablelm": lambda: T.StableLmForCausalLM(T.StableLmConfig(
        vocab_size=V, **_G)),
    "starcoder2": lambda: T.Starcoder2ForCausalLM(T.Starcoder2Config(
        vocab_size=V, **_G)),
    "granite": lambda: T.GraniteForCausalLM(T.GraniteConfig(
        vocab_size=V, **_G)),
    "cohere": lambda: T.CohereForCausalLM(T.CohereConfig(vocab_size=V, **_G)),
    "nemotron": lambda: T.NemotronForCausalLM(T.NemotronConfig(
        vocab_size=V, **_G)),
    "glm": lambda: T.GlmForCausalLM(T.GlmConfig(
        vocab_size=V, pad_token_id=0, head_dim=8, **_G)),
    "helium": lambda: T.HeliumForCausalLM(T.HeliumConfig(
        vocab_size=V, head_dim=8, **_G)),
    "smollm3": lambda: T.SmolLM3ForCausalLM(T.SmolLM3Config(
        vocab_size=V, pad_token_id=0, **_G)),
    "persimmon": lambda: T.PersimmonForCausalLM(T.PersimmonConfig(
        vocab_size=V, **_S)),
    "olmoe": lambda: T.OlmoeForCausalLM(T.OlmoeConfig(
        vocab_size=V, num_experts=4, num_experts_per_tok=2, pad_token_id=0,
        eos_token_id=2, **_G)),
    "qwen3_moe": lambda: T.Qwen3MoeForCausalLM(T.Qwen3MoeConfig(
        vocab_size=V, num_experts=4, num_experts_per_tok=2,
        moe_intermediate_size=32, **_G)),
    "gpt_oss": lambda: T.GptOssForCausalLM(T.GptOssConfig(
        vocab_size=V, num_local_experts=4, num_experts_per_tok=2,
        head_dim=8, sliding_window=4, **_G)),
    "granitemoe": lambda: T.GraniteMoeForCausalLM(T.GraniteMoeConfig(
        vocab_size=V, num_local_experts=4, num_experts_per_tok=2, **_G)),
    "phimoe": lambda: T.PhimoeForCausalLM(T.PhimoeConfig(
        vocab_size=V, num_local_experts=4, num_experts_per_tok=2, **_G)),
    "ernie4_5_moe": lambda: T.Ernie4_5_MoeForCausalLM(T.Ernie4_5_MoeConfig(
        vocab_size=V, moe_num_experts=4, moe_k=2, moe_intermediate_size=32,
        **_G)),
    "hunyuan_moe": lambda: T.HunYuanMoEV1ForCausalLM(T.HunYuanMoEV1Config(
        vocab_size=V, num_experts=4, moe_topk=2, head_dim=8, **_G)),
    # Multi-head latent attention and group-limited routing (scatter).
    "deepseek_v3": lambda: T.DeepseekV3ForCausalLM(T.DeepseekV3Config(
        vocab_size=V, n_routed_experts=4, num_experts_per_tok=2, n_group=2,
        topk_group=1, moe_intermediate_size=32, first_k_dense_replace=1,
        q_lora_rank=16, kv_lora_rank=16, qk_rope_head_dim=4,
        qk_nope_head_dim=4, v_head_dim=8, **dict(_G, num_key_value_heads=4))),
    "glm4_moe": lambda: T.Glm4MoeForCausalLM(T.Glm4MoeConfig(
        vocab_size=V, n_routed_experts=4, num_experts_per_tok=2, n_group=1,
        topk_group=1, moe_intermediate_size=32, first_k_dense_replace=0,
        head_dim=8, **_G)),
    "llama3_rope": lambda: T.LlamaForCausalLM(T.LlamaConfig(
        vocab_size=V, rope_scaling={
            "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
            "high_freq_factor": 4.0, "original_max_position_embeddings": 16},
        **_G)),
    "llama_yarn": lambda: T.LlamaForCausalLM(T.LlamaConfig(
        vocab_size=V, rope_scaling={"rope_type": "yarn", "factor": 2.0,
                                    "original_max_position_embeddings": 16},
        **_G)),
    "llama_bias_tied": lambda: T.LlamaForCausalLM(T.LlamaConfig(
        vocab_size=V, attention_bias=True, mlp_bias=True,
        tie_word_embeddings=True, **_G)),
    "falcon_alibi": lambda: T.FalconForCausalLM(T.FalconConfig(
        vocab_size=V, num_hidden_layers=2, hidden_size=32,
        num_attention_heads=4, alibi=True)),
    "bloom": lambda: T.BloomForCausalLM(T.BloomConfig(
        vocab_size=V, n_layer=2, hidden_size=32, n_head=4)),
    "opt": lambda: T.OPTForCausalLM(T.OPTConfig(
        vocab_size=V, num_hidden_layers=2, hidden_size=32,
        num_attention_heads=4, ffn_dim=64, max_position_embeddings=64,
        word_embed_proj_dim=32)),
    "gpt_bigcode": lambda: T.GPTBigCodeForCausalLM(T.GPTBigCodeConfig(
        vocab_size=V, n_layer=2, n_embd=32, n_head=4, n_positions=64)),
    "codegen": lambda: T.CodeGenForCausalLM(T.CodeGenConfig(
        vocab_size=V, n_layer=2, n_embd=32, n_head=4, rotary_dim=4,
        n_positions=64)),
    "xglm": lambda: T.XGLMForCausalLM(T.XGLMConfig(
        vocab_size=V, num_layers=2, d_model=32, attention_heads=4,
        ffn_dim=64, max_position_embeddings=64)),
}


def _ids():
    g = torch.Generator().manual_seed(1)
    return torch.randint(3, V, (3, 7), generator=g)


@pytest.mark.parametrize("name", list(DECODERS))
def test_generation_matches_transformers(name):
    torch.manual_seed(0)
    model = DECODERS[name]().eval()
    generator = attnfuse.compile_generator(model, max_batch=3,
                                           max_cache_len=32)
    ids = _ids()
    mask = torch.ones(3, 7, dtype=torch.int64)
    mask[0, :3] = 0
    mask[2, :1] = 0
    ours = generator.generate(ids, attention_mask=mask, max_new_tokens=12,
                              pad_token_id=0)
    with torch.no_grad():
        theirs = model.generate(ids, attention_mask=mask, max_new_tokens=12,
                                do_sample=False, pad_token_id=0)
    assert torch.equal(ours, theirs), (ours, theirs)


_IMG = dict(image_size=32, patch_size=8, **{k: v for k, v in _S.items()
                                            if k != "max_position_embeddings"})
_AUDIO = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
              intermediate_size=64, conv_dim=(16, 16), conv_stride=(5, 2),
              conv_kernel=(10, 3), num_conv_pos_embeddings=16,
              num_conv_pos_embedding_groups=4)

# name: (builder, input kind: "text" (right-padded ids), "image", "audio")
MODELS = {
    "roberta": (lambda: T.RobertaModel(T.RobertaConfig(vocab_size=V, **_S)),
                "text"),
    "electra": (lambda: T.ElectraModel(T.ElectraConfig(
        vocab_size=V, embedding_size=32, **_S)), "text"),
    "albert": (lambda: T.AlbertModel(T.AlbertConfig(
        vocab_size=V, embedding_size=16, **_S)), "text"),
    "deberta_v2": (lambda: T.DebertaV2Model(T.DebertaV2Config(
        vocab_size=V, **_S)), "text"),
    "mobilebert": (lambda: T.MobileBertModel(T.MobileBertConfig(
        vocab_size=V, num_hidden_layers=2, hidden_size=32,
        num_attention_heads=4, intermediate_size=64, embedding_size=16,
        intra_bottleneck_size=16, true_hidden_size=16)), "text"),
    "modernbert": (lambda: T.ModernBertModel(T.ModernBertConfig(
        vocab_size=V, num_hidden_layers=2, hidden_size=32,
        num_attention_heads=4, intermediate_size=64, pad_token_id=0,
        global_attn_every_n_layers=2, local_attention=4)), "text"),
    "squeezebert": (lambda: T.SqueezeBertModel(T.SqueezeBertConfig(
        vocab_size=V, embedding_size=32, **_S)), "text"),
    "esm_rotary": (lambda: T.EsmModel(T.EsmConfig(
        vocab_size=V, pad_token_id=1, mask_token_id=2,
        position_embedding_type="rotary", **_S)), "text"),
    "clip_text": (lambda: T.CLIPTextModel(T.CLIPTextConfig(
        vocab_size=V, **_S)), "text"),
    "clip_vision": (lambda: T.CLIPVisionModel(T.CLIPVisionConfig(**_IMG)),
                    "image"),
    "siglip_vision": (lambda: T.SiglipVisionModel(T.SiglipVisionConfig(
        **_IMG)), "image"),
    "dinov2": (lambda: T.Dinov2Model(T.Dinov2Config(
        image_size=32, patch_size=8, num_hidden_layers=2, hidden_size=32,
        num_attention_heads=4, mlp_ratio=2)), "image"),
    "segformer": (lambda: T.SegformerModel(T.SegformerConfig(
        num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1],
        hidden_sizes=[16, 32], num_attention_heads=[1, 2],
        patch_sizes=[7, 3], strides=[4, 2], mlp_ratios=[2, 2])), "image"),
    # Pooling that torch.export writes with as_strided (Swin's), avg_pool2d
    # without padding in the divisor (PoolFormer's token mixer).
    "swin": (lambda: T.SwinModel(T.SwinConfig(
        image_size=32, patch_size=4, embed_dim=16, depths=[1, 1],
        num_heads=[2, 2], window_size=4)), "image"),
    "swinv2": (lambda: T.Swinv2Model(T.Swinv2Config(
        image_size=32, patch_size=4, embed_dim=16, depths=[1, 1],
        num_heads=[2, 2], window_size=4)), "image"),
    "donut_swin": (lambda: T.DonutSwinModel(T.DonutSwinConfig(
        image_size=32, patch_size=4, embed_dim=16, depths=[1, 1],
        num_heads=[2, 2], window_size=4)), "image"),
    "poolformer": (lambda: T.PoolFormerModel(T.PoolFormerConfig(
        hidden_sizes=[16, 32], depths=[1, 1], num_encoder_blocks=2,
        patch_sizes=[7, 3], strides=[4, 2], padding=[2, 1])), "image"),
    "wav2vec2": (lambda: T.Wav2Vec2Model(T.Wav2Vec2Config(**_AUDIO)),
                 "audio"),
    "hubert": (lambda: T.HubertModel(T.HubertConfig(**_AUDIO)), "audio"),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_model_matches_eager(name):
    build, kind = MODELS[name]
    torch.manual_seed(0)
    model = build().eval()
    kwargs, keep = {}, None
    if kind == "text":
        x = torch.randint(3, V, (2, 8))
        if name != "clip_text":  # CLIP pools at the argmax of the ids
            mask = torch.ones(2, 8, dtype=torch.int64)
            mask[0, 5:] = 0
            kwargs, keep = {"attention_mask": mask}, mask.bool()
    elif kind == "image":
        x = torch.randn(2, 3, 32, 32)
    else:
        x = torch.randn(2, 800)
    compiled = attnfuse.compile(model, (x,), example_kwargs=kwargs)
    ours = compiled(x, **kwargs)
    with torch.no_grad():
        theirs = model(x, **kwargs)
    for key, want in theirs.items():
        if not isinstance(want, torch.Tensor):
            continue
        got = ours[key]
        if keep is not None and got.shape[:2] == keep.shape:
            got, want = got[keep], want[keep]
        torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)


_SIGLIP = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
               num_attention_heads=4, image_size=16, patch_size=4)

# Vision-language models with one 16x16 image per prompt: name: (builder,
# image placeholder tokens per image).
VLMS = {
    "aya_vision": (lambda: T.AyaVisionForConditionalGeneration(
        T.AyaVisionConfig(vision_config=T.SiglipVisionConfig(**_SIGLIP),
                          text_config=T.CohereConfig(vocab_size=V, **_G),
                          image_token_index=99, downsample_factor=2)), 4),
    "internvl": (lambda: T.InternVLForConditionalGeneration(T.InternVLConfig(
        vision_config=T.InternVLVisionConfig(
            hidden_size=32, intermediate_size=64, num_hidden_layers=1,
            num_attention_heads=4, image_size=[16, 16], patch_size=[4, 4]),
        text_config=T.Qwen2Config(vocab_size=V, **_G), image_token_id=99,
        downsample_ratio=0.5)), 4),
    # Complex rotary embeddings in the vision tower (a complex buffer) and
    # the language model.
    "llama4": (lambda: T.Llama4ForConditionalGeneration(T.Llama4Config(
        vision_config=T.Llama4VisionConfig(
            hidden_size=32, intermediate_size=128, num_hidden_layers=1,
            num_attention_heads=4, image_size=16, patch_size=4,
            vision_output_dim=32, projector_input_dim=32,
            projector_output_dim=32, pixel_shuffle_ratio=0.5),
        text_config=T.Llama4TextConfig(
            vocab_size=V, head_dim=8, intermediate_size_mlp=64,
            num_local_experts=2, num_experts_per_tok=1, **_G),
        image_token_index=99)), 4),
}


@pytest.mark.parametrize("name", list(VLMS))
def test_image_prompt_matches_eager(name):
    build, n_image = VLMS[name]
    torch.manual_seed(0)
    model = build().eval()
    ids = torch.randint(3, 90, (2, n_image + 6))
    ids[:, 1:1 + n_image] = 99
    mask = torch.ones_like(ids)
    mask[1, 0] = 0
    kw = {"input_ids": ids, "attention_mask": mask,
          "pixel_values": torch.randn(2, 3, 16, 16), "use_cache": False}
    compiled = attnfuse.compile(model, (), example_kwargs=kw)
    with torch.no_grad():
        want = model(**kw).logits
    torch.testing.assert_close(compiled(**kw).logits, want, atol=1e-4,
                               rtol=1e-4)
