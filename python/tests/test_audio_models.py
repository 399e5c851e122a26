"""Audio encoders on padded batches: Wav2Vec2 and HuBERT (and the others
that share transformers' Wav2Vec2 frame-mask helper: WavLM,
Data2VecAudio, UniSpeech, SEW) build the mask of their feature frames
with `mask[(arange(B), lengths - 1)] = 1`, an index_put with two index
tensors. Built from their configs (tiny random weights), compiled with an
attention mask and called with two different paddings, against eager;
every attention fused. The index_put form itself: tests/test_state.py."""

import pytest
import torch

import attnfuse

T = pytest.importorskip("transformers")
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

_CONV = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
             intermediate_size=64, conv_dim=(16, 16), conv_stride=(5, 2),
             conv_kernel=(10, 3), num_feat_extract_layers=2,
             num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
             mask_time_prob=0.0, apply_spec_augment=False)

MODELS = {
    "wav2vec2": lambda: T.Wav2Vec2Model(T.Wav2Vec2Config(
        feat_extract_norm="layer", do_stable_layer_norm=True, **_CONV)),
    "hubert": lambda: T.HubertModel(T.HubertConfig(
        feat_extract_norm="layer", do_stable_layer_norm=True, **_CONV)),
}


def padded(first_pad, second_pad, samples=800):
    mask = torch.ones(3, samples, dtype=torch.long)
    mask[1, first_pad:] = 0
    mask[2, second_pad:] = 0
    return mask


@pytest.mark.parametrize("name", list(MODELS))
def test_padded_audio_batch_matches_eager(name):
    torch.manual_seed(0)
    model = MODELS[name]().eval()
    x = torch.randn(3, 800)
    mask = padded(500, 650)
    compiled = attnfuse.compile(model, (x,),
                                example_kwargs={"attention_mask": mask})
    assert attnfuse.count_sdpa(compiled.mlir) == 2
    for m in (mask, padded(300, 790)):
        with torch.no_grad():
            want = model(x, attention_mask=m).last_hidden_state
        got = compiled(x, attention_mask=m).last_hidden_state
        assert (got - want).abs().max() <= 1e-4, (got - want).abs().max()
