"""Complex tensors as real arithmetic (ops/complex.py): torch.polar,
view_as_complex/view_as_real, complex products, sums and views against
eager, and Llama-4, whose rotary embedding rotates the queries' and keys'
pairs by a complex product: built from its config (tiny random weights),
compiled on a left-padded batch and called with two paddings against
eager, every attention fused; torch.compile with no fallback; greedy
generation token for token as transformers' `generate`."""

import pytest
import torch

import attnfuse

T = pytest.importorskip("transformers")
from hf_models import assert_torch_compile_matches  # noqa: E402
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning:transformers")


class ComplexOps(torch.nn.Module):
    def forward(self, x, angle, y):
        z = torch.view_as_complex(x)                    # [3, 5, 2]
        w = torch.polar(torch.ones_like(angle), angle)  # [5, 2]
        u = torch.polar(angle.abs(), angle * 3)
        zw = z * w * 0.5
        v = torch.view_as_complex(y)
        return (torch.view_as_real(zw), torch.view_as_real(z * v + w),
                torch.view_as_real((z - u)[:, 1:4].transpose(0, 1)),
                torch.view_as_real(z.unsqueeze(1).expand(3, 2, 5, 2)[:, 1]),
                torch.view_as_real(zw.permute(2, 0, 1).reshape(2, 15)),
                torch.view_as_real(w * torch.tensor(2.0 - 1.0j)),
                (z * v).real, torch.view_as_real(z * angle))


def test_complex_ops_match_eager():
    x, y = torch.randn(3, 5, 2, 2), torch.randn(3, 5, 2, 2)
    angle = torch.randn(5, 2) * 4
    compiled = attnfuse.compile(ComplexOps(), (x, angle, y))
    for i, (a, e) in enumerate(zip(compiled(x, angle, y),
                                   ComplexOps()(x, angle, y))):
        assert a.shape == e.shape and a.dtype == e.dtype, i
        torch.testing.assert_close(a, e, atol=1e-6, rtol=1e-6,
                                   msg=lambda m: f"{i}: {m}")


class ComplexResult(torch.nn.Module):
    def forward(self, x):
        return torch.view_as_complex(x) * 2


class ComplexBuffer(torch.nn.Module):
    """A complex table as a buffer (Llama-4's vision rotary embedding)."""
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.polar(
            torch.ones(5, 2), torch.randn(5, 2)), persistent=False)

    def forward(self, x):
        return torch.view_as_real(torch.view_as_complex(x) * self.table)


def test_complex_buffer_is_folded_and_complex_io_refused():
    """A complex buffer the module reads is folded as the constant of its
    pairs (the compiled function takes no complex arguments; a note says
    so); a complex input or result is an ExportError saying what to pass
    instead."""
    module, x = ComplexBuffer(), torch.randn(3, 5, 2, 2)
    compiled = attnfuse.compile(module, (x,))
    torch.testing.assert_close(compiled(x), module(x), atol=1e-6, rtol=1e-6)
    assert any("complex buffer table folded" in n
               for n in compiled.exported.notes)
    with pytest.raises(attnfuse.ExportError,
                       match="complex results are not supported"):
        attnfuse.export(ComplexResult(), (torch.randn(3, 2),))

    class ComplexInput(torch.nn.Module):
        def forward(self, z):
            return torch.view_as_real(z * 2)
    with pytest.raises(attnfuse.ExportError,
                       match="input z is complex.*view_as_real"):
        attnfuse.export(ComplexInput(), (torch.randn(3, dtype=torch.cfloat),))


def _llama4(**extra):
    torch.manual_seed(0)
    return T.Llama4ForCausalLM(T.Llama4TextConfig(
        vocab_size=100, hidden_size=32, intermediate_size=64,
        intermediate_size_mlp=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=8, num_local_experts=2,
        num_experts_per_tok=1, max_position_embeddings=64,
        **extra)).eval()


def _batch(pad, seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, 90, (3, 9), generator=g)
    mask = torch.ones(3, 9, dtype=torch.int64)
    mask[0, :pad] = 0
    mask[2, :1] = 0
    return ids, mask


def test_llama4_matches_eager():
    model = _llama4(use_cache=False)
    ids, mask = _batch(2, 0)
    compiled = attnfuse.compile(model, (ids,),
                                example_kwargs={"attention_mask": mask})
    fused, _ = attnfuse.fuse(compiled.mlir)
    assert fused.count('"attn.sdpa"') == 2 and '"attn.softmax"' not in fused
    for pad, seed in ((2, 0), (5, 1)):
        ids, mask = _batch(pad, seed)
        with torch.no_grad():
            want = model(ids, attention_mask=mask).logits
        got = compiled(ids, attention_mask=mask).logits
        torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)


def test_llama4_through_torch_compile():
    ids, mask = _batch(3, 2)
    assert_torch_compile_matches(_llama4(), input_ids=ids,
                                 attention_mask=mask)


def test_llama4_generation_matches_transformers():
    model = _llama4()
    generator = attnfuse.compile_generator(model, max_batch=3,
                                           max_cache_len=16)
    ids, mask = _batch(3, 3)
    ours = generator.generate(ids, attention_mask=mask, max_new_tokens=6,
                              pad_token_id=0)
    with torch.no_grad():
        theirs = model.generate(ids, attention_mask=mask, max_new_tokens=6,
                                do_sample=False, pad_token_id=0)
    assert torch.equal(ours, theirs), (ours, theirs)
