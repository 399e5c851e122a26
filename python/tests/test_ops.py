"""Each handler family of the exporter against eager PyTorch, with the edge
cases that break mappings: broadcasts, negative dims, dtype promotion
(Python scalars, 0-d tensors, bool and int operands), int64 indices,
negative indices, odd and empty sizes, f32/bf16/f16. One module per family
returns many results, so one library covers many ops."""

import pytest
import torch
import torch.nn.functional as F

import attnfuse

TOL = {torch.float32: (1e-5, 1e-5), torch.bfloat16: (1e-2, 1.6e-2),
       torch.float16: (1e-3, 1e-3), torch.int64: (0, 0), torch.bool: (0, 0),
       torch.int32: (0, 0), torch.uint8: (0, 0)}


def check(module, args, **kw):
    compiled = attnfuse.compile(module, args, **kw)
    expected = module(*args)
    actual = compiled(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    actual = actual if isinstance(actual, tuple) else (actual,)
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert a.dtype == e.dtype and a.shape == e.shape, i
        atol, rtol = TOL[e.dtype]
        torch.testing.assert_close(a, e, atol=atol, rtol=rtol,
                                   equal_nan=True, msg=lambda m: f"{i}: {m}")
    return compiled


class Elementwise(torch.nn.Module):
    def forward(self, x, y):
        a = x.abs() + 0.5
        return (torch.add(x, y, alpha=2.0), x - y, x * y, x / a, -x, x.abs(),
                x.exp(), x.tanh(), x.sin(), x.cos(), a.sqrt(), a.rsqrt(),
                a.log(), torch.erf(x), torch.sigmoid(x), F.silu(x),
                F.relu(x), F.gelu(x), F.gelu(x, approximate="tanh"),
                x ** 2, x ** 3, a ** 0.5, a ** -0.5, a ** 1.7, 1.0 / a,
                x.clamp(-0.5, 0.25), torch.maximum(x, y),
                torch.minimum(x, y), x * 0.125, 1.0 - x,
                x * torch.tensor(3.0), (x > y).to(x.dtype) * 2,
                torch.where(x > 0, x, y), x.masked_fill(y < 0, 7.0))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16,
                                   torch.float16])
def test_elementwise(dtype):
    x = torch.randn(3, 1, 5).to(dtype)
    y = torch.randn(4, 5).to(dtype)
    check(Elementwise(), (x, y))


class RankZeroOperands(torch.nn.Module):
    """Float operands without dims beside a bool mask or alone: PyTorch
    ranks a 0-d tensor above a Python scalar, and computes add and sub with
    the scalar rounded to the result type, mul and div with it as is."""

    def forward(self, x, mask, s):
        zero = torch.tensor(0.0, dtype=x.dtype)
        low = torch.tensor(torch.finfo(x.dtype).min, dtype=x.dtype)
        # transformers' eager masks: where(mask, 0-d 0, 0-d min).
        return (torch.where(mask, zero, low), torch.where(mask, zero, 0.1),
                x.masked_fill(mask, 0.1), 1.0 - s, 0.1 * s, s / 3.0,
                x + 0.1, 0.1 - x, x * 0.1)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_rank_zero_operands_take_pytorchs_type_and_values(dtype):
    x = torch.randn(2, 1, 4, 4).to(dtype) * 3
    mask = torch.rand(2, 1, 4, 4) > 0.5
    s = torch.tensor(0.3, dtype=dtype)
    args = (x, mask, s)
    module = RankZeroOperands()
    for i, (a, e) in enumerate(zip(attnfuse.compile(module, args)(*args),
                                   module(*args))):
        assert a.dtype == e.dtype and torch.equal(a, e), i


class Integers(torch.nn.Module):
    def forward(self, ids, mask):
        pos = mask.cumsum(-1) - 1
        return (pos, pos * mask, ids // 3, torch.div(-ids, 4,
                                                      rounding_mode="trunc"),
                ids % 7, (-ids) % 7, ids.neg(), ids > 40, ids == 5,
                (ids >= 10) & (mask == 1), (ids < 3) | (mask == 0),
                ~(mask.bool()), torch.where(mask.bool(), ids, -1),
                ids.to(torch.float32) / 7, mask.to(torch.bool).to(torch.int32),
                ids.amax(-1),
                ids.sum(-1), (ids * 1.5), mask.bool() + (ids > 0),
                mask.bool() * (ids > 0))


def test_integers():
    ids = torch.randint(-50, 50, (2, 7))
    mask = torch.ones(2, 7, dtype=torch.long)
    mask[0, :3] = 0
    check(Integers(), (ids, mask))


class Reductions(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(5)
        self.w = torch.nn.Parameter(torch.randn(5))
        # wav2vec2's per-channel group norm; two groups of three channels.
        self.gn = torch.nn.GroupNorm(3, 3)
        self.gn2 = torch.nn.GroupNorm(2, 6)

    def forward(self, x):
        var = x.float().pow(2).mean(-1, keepdim=True)
        rms = (x.float() * torch.rsqrt(var + 1e-6)).type_as(x) * self.w
        return (x.mean(dim=-2), x.mean((0, 2), keepdim=True), x.sum(1),
                x.amax(-1), x.amin(0), self.ln(x), rms, x.softmax(-2),
                x.float().cumsum(1), F.layer_norm(x, (3, 5)), self.gn(x),
                self.gn2(torch.cat([x, x.flip(-1) * 2], 1)),
                F.group_norm(x, 1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_reductions_and_norms(dtype):
    module = Reductions().to(dtype)
    with torch.no_grad():
        for p in (module.ln, module.gn, module.gn2):
            p.weight.normal_()
            p.bias.normal_()
    check(module, (torch.randn(2, 3, 5).to(dtype),))


class Views(torch.nn.Module):
    def forward(self, x, table, ids, idx):
        head = x[..., :2]
        tail = x[..., 2:]
        rot = torch.cat((-tail, head), dim=-1)
        return (rot, x.select(-1, -1), x.permute(2, 0, 1), x[:, 1:, ::2],
                x.unsqueeze(-2).expand(2, 3, 4, 5), x.flatten(0, 1),
                torch.cat([x, x * 2], dim=-2),
                torch.gather(x, -1, idx), x[:, ids[1]], table[ids],
                F.embedding(ids.abs(), table),
                x.transpose(-1, 0).contiguous().view(5, -1),
                # Empty slices from the dim's end (Phi-3's rotary
                # pass-through): alone and concatenated.
                x[..., 5:], torch.cat((x * 3, x[..., 5:]), dim=-1),
                x.repeat(2, 1, 3), x.repeat(3, 1, 1, 2), x.repeat(1, 0, 1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_views_and_indexing(dtype):
    x = torch.randn(2, 3, 5).to(dtype)
    table = torch.randn(11, 4).to(dtype)
    ids = torch.tensor([[0, 10, 3], [-1, 2, 2]])
    idx = torch.randint(0, 5, (2, 3, 2))
    check(Views(), (x, table, ids, idx))


class PadsAndPicks(torch.nn.Module):
    """F.pad (constant, negative amounts crop), index_select,
    argmax/argmin and max/min with and without a dim (ties: the first
    index; NaN counts as the extremum), on floats, int64, uint8 and bool."""

    def forward(self, x, ids, n):
        u = (n * 60 + 10).to(torch.uint8)  # 10, 70, 130, 190, 250
        return (F.pad(x, (1, 2)), F.pad(x, (0, 0, 2, 0, 1, 1), value=-3.0),
                F.pad(x, (-1, 2, 1, -2)), F.pad(x, (-5, 1)),
                x.index_select(-1, ids), x.index_select(0, ids[1:2]),
                x.argmax(-1), x.argmin(1, keepdim=True), x.argmax(),
                n.argmax(-1), n.argmin(0), (n > 2).to(torch.uint8).argmax(-1),
                *x.max(-1), *x.min(0, keepdim=True), x.max(), n.min(),
                *n.max(1), x[0, 0, 0].argmax(), *x[0, 0, 0].max(0),
                # Unsigned: uint8 above 127 and bool's true are the larger.
                u.amax(-1), u.amin(0), u.max(), *u.min(1), u.argmax(-1),
                (u > 100).amax(-1), (u > 100).amin(-1), u >= 130,
                torch.maximum(u, u.flip(-1)), u // 7, u % 7,
                torch.div(u, u.flip(-1) + 1, rounding_mode="floor"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_pads_selects_and_arg_extrema(dtype):
    x = torch.randn(2, 3, 5)
    x[0, 1, 3] = x[0, 1, 1] = 9.0  # a tie: the first index wins
    x[1, 2, 4] = float("nan")
    n = torch.tensor([[3, 1, 3, 0], [0, 2, 2, 5]])
    check(PadsAndPicks(), (x.to(dtype), torch.tensor([4, 0, 4]), n))


def test_pad_that_crops_past_the_dim_is_refused():
    """PyTorch refuses it when run (a negative narrow); the export must not
    compile it into a result."""
    class M(torch.nn.Module):
        def forward(self, x):
            return F.pad(x, (3, -4))
    with pytest.raises(attnfuse.ExportError, match="F.pad crops 4 elements"
                       " from dim 0 of size 1"):
        attnfuse.compile(M(), (torch.randn(1),))


class Products(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv1d(3, 4, 3, padding=1, stride=2)
        self.conv2 = torch.nn.Conv2d(3, 4, 2, stride=2)
        # Grouped (wav2vec2's positional conv) and depthwise with stride
        # and dilation (SegFormer's).
        self.grouped = torch.nn.Conv1d(4, 8, 3, padding=2, groups=2,
                                       dilation=2)
        self.depthwise = torch.nn.Conv2d(3, 3, 3, padding=1, stride=2,
                                         groups=3, bias=False)
        self.conv3 = torch.nn.Conv3d(3, 2, (1, 2, 2), stride=(1, 2, 1))
        self.lin = torch.nn.Linear(5, 3)
        self.w = torch.nn.Parameter(torch.randn(5, 2))
        self.b = torch.nn.Parameter(torch.randn(2))

    def forward(self, seq, img, x):
        flat = x.reshape(-1, 5)
        return (self.conv1(seq), self.conv2(img),
                self.grouped(torch.cat([seq, seq[:, :1]], 1)),
                self.depthwise(img), self.conv3(img[:, :, None]),
                self.lin(x),
                torch.addmm(self.b, flat, self.w),
                torch.baddbmm(x[..., :3].transpose(1, 2), x, x.transpose(1, 2),
                              alpha=0.5))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_products_and_convolutions(dtype):
    module = Products().to(dtype)
    args = (torch.randn(2, 3, 7), torch.randn(2, 3, 6, 6),
            torch.randn(2, 3, 5))
    check(module, tuple(a.to(dtype) for a in args))


class Empty(torch.nn.Module):
    def forward(self, x, y):
        return x + y, (x * 2).sum(-1), torch.cat([x, y], 0)


def test_empty_sizes():
    check(Empty(), (torch.randn(0, 4), torch.randn(0, 4)))


def test_dynamic_sizes_in_reductions_and_indexing():
    batch = torch.export.Dim("batch", min=1, max=8)
    table = torch.randn(11, 4)

    class M(torch.nn.Module):
        def forward(self, ids, x):
            # GPT-J tiles its position table by the batch.
            return (F.embedding(ids, table).sum(1), x.cumsum(0), x.mean(-1),
                    table.repeat(ids.shape[0], 1, 2), x.repeat(2, 1))

    ids = torch.randint(0, 11, (3, 5))
    x = torch.randn(3, 6)
    compiled = attnfuse.compile(M(), (ids, x),
                                dynamic_shapes=({0: batch}, {0: batch}))
    for b in (2, 7):
        ids = torch.randint(0, 11, (b, 5))
        x = torch.randn(b, 6)
        for a, e in zip(compiled(ids, x), M()(ids, x)):
            torch.testing.assert_close(a, e)


class NormBlock(torch.nn.Module):
    """A pre-norm MLP's loops around its product: RMSNorm, SiLU gate,
    residual, LayerNorm, over rows of 96."""

    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(96)
        self.w = torch.nn.Parameter(torch.randn(96))

    def forward(self, x):
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w
        return self.ln(x + F.silu(h) * h)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_dynamic_rows_in_parallel_blocks(dtype):
    """Norms and activations of a sequence of run-time length run in blocks
    of rows (85 rows of 96 per block with the default tile size): one
    block, several with a shorter last one, and a batch of blocks, each
    against eager on the same library. bf16: eager rounds after every op
    and the library keeps the fused chain in f32, so both are compared
    with the f32 computation on the same inputs (a few of 28,800 values
    differ from eager by a few bf16 steps after the LayerNorm)."""
    seq = torch.export.Dim("seq", min=1, max=1024)
    batch = torch.export.Dim("batch", min=1, max=8)
    module = NormBlock().to(dtype)
    reference = NormBlock()
    reference.load_state_dict(module.state_dict())
    compiled = attnfuse.compile(module, (torch.randn(2, 5, 96).to(dtype),),
                                dynamic_shapes=({0: batch, 1: seq},))
    for b, t in ((1, 1), (1, 300), (3, 171), (2, 1)):
        x = torch.randn(b, t, 96).to(dtype)
        with torch.no_grad():
            expected = module(x)
            exact = reference(x.float())
        actual = compiled(x)
        assert actual.dtype == dtype and actual.shape == expected.shape
        if dtype == torch.float32:
            torch.testing.assert_close(actual, expected, atol=1e-5,
                                       rtol=1e-5)
        else:
            ours = (actual.float() - exact).abs().max()
            eager = (expected.float() - exact).abs().max()
            assert ours <= 2 * eager + 1e-2, (b, t, ours, eager)


class SumAndPrefixSum(torch.nn.Module):
    def forward(self, x):
        return x.sum(-1), x.mean(0), F.layer_norm(x, (5,)), x.cumsum(-1)


def test_sums_are_reassociable_prefix_sums_are_not():
    """PyTorch's CPU sums add in vector lanes, in no sequential order: the
    exporter writes the steps of sum, mean and layer_norm's statistics as
    `arith.addf ... fastmath<reassoc>`, so LLVM vectorises the reduction
    loops. cumsum's steps are each an output: they stay in order."""
    x = torch.randn(2, 3, 5)
    compiled = check(SumAndPrefixSum(), (x,))
    adds = [line.strip() for line in compiled.mlir.splitlines()
            if "arith.addf" in line]
    reassoc = [line for line in adds if "fastmath<reassoc>" in line]
    # sum, mean, layer_norm's mean and variance; cumsum's one add without.
    assert len(reassoc) == 4, adds
    assert len(adds) - len(reassoc) >= 1, adds


class Checks(torch.nn.Module):
    def forward(self, x):
        torch._check_tensor_all(x.abs() < 100)
        pos = x > 0
        return (pos.all(), pos.any(-1), pos.all(0), pos.any(), (x * 2).sum())


def test_all_any_and_run_time_checks():
    """all/any (of all elements, along a dim) against eager; the check of
    torch._check_tensor_all (transformers' torch_compilable_check) is a
    run-time check: a false one raises RunTimeCheckError, as eager raises
    RuntimeError."""
    from attnfuse.errors import RunTimeCheckError
    x = torch.randn(4, 5)
    x[1] = x[1].abs() + 0.1
    compiled = check(Checks(), (x,))
    bad = torch.full((4, 5), 200.0)
    with pytest.raises(RuntimeError):
        Checks()(bad)
    with pytest.raises(RunTimeCheckError, match="_check_tensor_all"):
        compiled(bad)
