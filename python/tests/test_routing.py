"""Mixture-of-experts routing and grouped expert products against eager
PyTorch: topk, sort and histc (ties, NaN, values on the bin edges), the
grouped products (empty groups, rows after the last offset, bf16), and
the MoE blocks of Hugging Face models through `compile` with a dynamic
number of tokens. (Whole MoE models generate in test_generation.py.)"""

import pytest
import torch

import attnfuse

T = pytest.importorskip("transformers")
from hf_models import mixtral_block  # noqa: E402
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


class Routing(torch.nn.Module):
    def forward(self, x, ids, v):
        top = torch.topk(x, 3)
        low = torch.topk(x, 2, dim=0, largest=False)
        up = torch.sort(x, dim=-1)
        down = torch.sort(x, dim=0, descending=True)
        keys = torch.sort(ids, stable=True)
        return (top.values, top.indices, low.values, low.indices,
                up.values, up.indices, down.values, down.indices,
                keys.values, keys.indices, torch.histc(v, 4, 0, 3),
                torch.histc(v, 7, -0.5, 2.25), torch.topk(ids, 1).values)


def routing_inputs():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(5, 6, generator=g)
    x[1, 2] = float("nan")  # NaN is the largest, in both orders
    x[3, 0] = float("-inf")
    ids = torch.randint(0, 4, (37,), generator=g)  # many ties
    v = torch.tensor([0.0, 1.0, 2.0, 3.0, 3.0000002, -1e-8, float("nan"),
                      2.9999998, 0.99999994, -0.5, 2.25, 1.5, 0.75, 0.0])
    return x, ids, v


def test_topk_sort_and_histc_match_eager():
    x, ids, v = routing_inputs()
    compiled = attnfuse.compile(Routing(), (x, ids, v))
    ours = compiled(x, ids, v)
    theirs = Routing()(x, ids, v)
    for i, (a, e) in enumerate(zip(ours, theirs)):
        assert a.dtype == e.dtype and a.shape == e.shape, i
        assert torch.equal(a.nan_to_num(7.5), e.nan_to_num(7.5)), (i, a, e)


def test_ties_come_in_index_order():
    """PyTorch leaves the order of equal values open (unstable sort, topk):
    the compiled code puts the lower index first, which sort(stable=True)
    asks for."""
    class M(torch.nn.Module):
        def forward(self, x):
            return torch.topk(x, 4).indices, torch.sort(x).indices
    x = torch.tensor([1.0, 2.0, 2.0, 0.0, 2.0, 1.0, float("nan")])
    top, order = attnfuse.compile(M(), (x,))(x)
    assert top.tolist() == [6, 1, 2, 4]
    assert order.tolist() == [3, 0, 5, 1, 2, 4, 6]


def test_histc_without_a_range_is_refused():
    class M(torch.nn.Module):
        def forward(self, x):
            return torch.histc(x, 5)
    with pytest.raises(attnfuse.ExportError,
                       match="histc with min >= max"):
        attnfuse.compile(M(), (torch.randn(8),))


class Grouped(torch.nn.Module):
    """Rows grouped by the sorted offsets, as transformers' experts call it
    (their weights [E, N, K] transposed to [E, K, N])."""
    def __init__(self, groups=4, k=16, n=24, dtype=torch.float32):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(groups, n, k, dtype=dtype))
        self.plain = torch.nn.Parameter(torch.randn(groups, k, n, dtype=dtype))

    def forward(self, x, offs):
        op = torch.ops.transformers.grouped_mm_fallback
        return op(x, self.w.transpose(-2, -1), offs), op(x, self.plain, offs)


@pytest.fixture(scope="module")
def moe_ops():
    import transformers.integrations.moe  # noqa: F401  (registers the op)


def test_grouped_products_match_the_reference(moe_ops):
    x = torch.randn(11, 16)
    module = Grouped()
    compiled = attnfuse.compile(module, (x, torch.tensor([3, 3, 7, 9],
                                                         dtype=torch.int32)))
    # Empty groups, rows after the last offset (zero), one group of all.
    for offs in ([3, 3, 7, 9], [0, 0, 11, 11], [11, 11, 11, 11],
                 [0, 5, 5, 5], [0, 0, 0, 0]):
        offs = torch.tensor(offs, dtype=torch.int32)
        for a, e in zip(compiled(x, offs), module(x, offs)):
            torch.testing.assert_close(a, e, atol=1e-5, rtol=1e-5)


def test_negative_offsets_fail_a_run_time_check(moe_ops):
    x = torch.randn(6, 16)
    compiled = attnfuse.compile(Grouped(), (x, torch.tensor(
        [1, 2, 4, 6], dtype=torch.int32)))
    with pytest.raises(attnfuse.RunTimeCheckError,
                       match="grouped product offsets must not be negative"):
        compiled(x, torch.tensor([1, -2, 4, 6], dtype=torch.int32))


def test_bf16_grouped_mm_matches_eager():
    """torch._grouped_mm (transformers' bf16 path): rows up to the last
    offset (PyTorch leaves the rest unwritten)."""
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(3, 16, 24).bfloat16())

        def forward(self, x, offs):
            return torch._grouped_mm(x, self.w, offs=offs)
    x = torch.randn(10, 16).bfloat16()
    offs = torch.tensor([4, 4, 9], dtype=torch.int32)
    module = M()
    ours = attnfuse.compile(module, (x, offs))(x, offs)
    theirs = module(x, offs)
    torch.testing.assert_close(ours[:9], theirs[:9], atol=0, rtol=0)
    assert not ours[9:].any()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_mixtral_block_with_a_dynamic_token_count(dtype):
    block = mixtral_block(dtype)
    tokens = torch.export.Dim("tokens", min=1, max=64)
    compiled = attnfuse.compile(block, (torch.randn(2, 7, 32).to(dtype),),
                                dynamic_shapes=({1: tokens},))
    tol = 1e-5 if dtype == torch.float32 else 2e-2
    for n in (7, 1, 13, 40):
        x = torch.randn(2, n, 32).to(dtype)
        torch.testing.assert_close(compiled(x), block(x), atol=tol, rtol=tol)


def test_mixtral_block_with_a_batch_the_export_fixes():
    """A batch Dim of range [1, 2] with an example of 2: torch.export
    starts a dynamic size at 2, so the batch symbol has one value, and the
    sizes of the flattened tokens (batch x positions) still name it; they
    must use its value."""
    block = mixtral_block(torch.float32)
    batch = torch.export.Dim("batch", min=1, max=2)
    tokens = torch.export.Dim("tokens", min=1, max=64)
    compiled = attnfuse.compile(block, (torch.randn(2, 7, 32),),
                                dynamic_shapes=({0: batch, 1: tokens},))
    for n in (7, 3):
        x = torch.randn(2, n, 32)
        torch.testing.assert_close(compiled(x), block(x), atol=1e-5,
                                   rtol=1e-5)


class Masks(torch.nn.Module):
    """DeepSeek-V3's group-limited routing writes a mask by scatter; PhiMoE
    clamps by a tensor bound."""
    def forward(self, scores, groups, perm, lo, hi):
        mask = torch.zeros_like(scores).scatter_(1, groups, 1)
        placed = torch.zeros(3, 5).scatter(1, perm, scores[:, :5])
        return (mask, placed, scores.clamp(lo, hi), torch.clamp(scores,
                                                                min=lo),
                torch.clamp(scores, max=hi))


def test_scatter_and_tensor_clamp_match_eager():
    g = torch.Generator().manual_seed(2)
    scores = torch.randn(3, 6, generator=g)
    scores[0, 1] = float("nan")
    groups = torch.tensor([[1, 4], [4, 4], [0, 5]])  # repeats write alike
    perm = torch.stack([torch.randperm(5, generator=g) for _ in range(3)])
    lo = torch.tensor([[-0.5], [0.1], [float("nan")]])
    hi = torch.full((6,), 0.3)
    args = (scores, groups, perm, lo, hi)
    ours = attnfuse.compile(Masks(), args)(*args)
    for a, e in zip(ours, Masks()(*args)):
        torch.testing.assert_close(a, e, atol=0, rtol=0, equal_nan=True)


def test_scatter_index_out_of_range_fails_a_run_time_check():
    class M(torch.nn.Module):
        def forward(self, x, i):
            return x.scatter(1, i, 1.0)
    x, i = torch.zeros(2, 4), torch.tensor([[0], [3]])
    compiled = attnfuse.compile(M(), (x, i))
    with pytest.raises(attnfuse.RunTimeCheckError, match="index out of range"):
        compiled(x, torch.tensor([[0], [-1]]))
