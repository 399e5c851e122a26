"""Hybrid linear attention: Qwen3-Next (gated delta-rule layers beside
full attention), built from its config (tiny random weights). Its
whole-sequence forward matches eager on a padded batch through
torch.compile with no fallback (under torch.compile transformers solves
the chunks' unit lower-triangular systems with
`torch.linalg.solve_triangular`, mapped to forward substitution; under
torch.export it substitutes row by row in Python, 64 rows unrolled, which
attnfuse.compile also matches but takes over a minute to build, so it is
left out here); the generator, whose cache holds keys and values, refuses
the linear-attention layers by name. Triangular solves themselves (both
triangles, unit diagonal, right-hand side, batch broadcast) against a
float64 reference."""

import pytest
import torch

import attnfuse

T = pytest.importorskip("transformers")
from hf_models import assert_torch_compile_matches  # noqa: E402
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _qwen3_next():
    torch.manual_seed(0)
    return T.Qwen3NextForCausalLM(T.Qwen3NextConfig(
        vocab_size=100, hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        head_dim=8, linear_num_value_heads=2, linear_num_key_heads=2,
        linear_key_head_dim=8, linear_value_head_dim=8,
        linear_conv_kernel_dim=2, num_experts=2, num_experts_per_tok=1,
        moe_intermediate_size=32, shared_expert_intermediate_size=32,
        layer_types=["linear_attention", "full_attention"],
        max_position_embeddings=64)).eval()


def _batch(pad, seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, 90, (3, 7), generator=g)
    mask = torch.ones(3, 7, dtype=torch.int64)
    mask[0, :pad] = 0
    return ids, mask


def test_qwen3_next_through_torch_compile():
    ids, mask = _batch(2, 2)
    assert_torch_compile_matches(_qwen3_next(), input_ids=ids,
                                 attention_mask=mask)


def test_generator_refuses_linear_attention_layers():
    with pytest.raises(attnfuse.AttnFuseError,
                       match=r"layer 0 of the model, Qwen3NextDecoderLayer "
                       r"with Qwen3NextGatedDeltaNet, layer type "
                       r"'linear_attention' keeps a linear-attention state"):
        attnfuse.compile_generator(_qwen3_next(), max_batch=2,
                                   max_cache_len=16)


class Solves(torch.nn.Module):
    def forward(self, a, b, c):
        unit = torch.tril(a, -1) + torch.eye(a.shape[-1])
        solve = torch.linalg.solve_triangular
        return (solve(unit, b, upper=False, unitriangular=True),
                solve(a, b, upper=True), solve(a, b, upper=False),
                solve(a[0], c, upper=True, left=False),
                solve(a[:, :1], b, upper=False, unitriangular=True))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_solve_triangular(dtype):
    """Forward and back substitution read only the triangle (the other
    one holds random values, the unit diagonal's too): within twice
    eager's own error of the float64 solution."""
    g = torch.Generator().manual_seed(0)
    a = (torch.randn(2, 3, 7, 7, generator=g) + 4 * torch.eye(7)).to(dtype)
    b = torch.randn(2, 3, 7, 3, generator=g).to(dtype)
    c = torch.randn(3, 7, generator=g).to(dtype)
    compiled = attnfuse.compile(Solves(), (a, b, c))
    exact = Solves()(a.double(), b.double(), c.double())
    for ours, eager, truth in zip(compiled(a, b, c), Solves()(a, b, c),
                                  exact):
        assert ours.shape == eager.shape and ours.dtype == dtype
        err = (ours.double() - truth).abs().max()
        bound = (eager.double() - truth).abs().max()
        assert err <= 2 * bound + 1e-6 * truth.abs().max(), (err, bound)
