"""Modules that write their inputs and buffers in place (torch.export's
`buffers_to_mutate`, `user_inputs_to_mutate`): the compiled library writes
the caller's tensors, in place, as PyTorch does. KV-cache updates in each
form PyTorch writes them (index_put, index_copy_, a slice's copy_, a
select's assignment), `x.add_`, outputs that are the written tensor, and
the refusals (overlapping arguments, a written buffer folded as a
constant)."""


import pytest
import torch

import attnfuse


class Cache(torch.nn.Module):
    """A KV-cache-like buffer [B, H, S, D] updated by `write`, then read."""

    def __init__(self, write):
        super().__init__()
        self.write = write
        self.register_buffer("cache", torch.zeros(2, 3, 8, 4))

    def forward(self, k, pos):
        self.write(self.cache, k, pos)
        return self.cache.sum(2) * 2


def _index_put(cache, k, pos):
    cache[:, :, pos] = k


def _index_copy(cache, k, pos):
    cache.index_copy_(2, pos, k)


def _slice_copy(cache, k, pos):
    cache[:, :, 2:4].copy_(k)


def _select(cache, k, pos):
    cache[:, :, -3] = k[:, :, 0]


@pytest.mark.parametrize("write", [_index_put, _index_copy, _slice_copy,
                                   _select])
def test_cache_rows_written_in_place(write):
    """The caller's buffer (the module's own tensor, not a copy) holds the
    update after the call, and the result read the updated buffer."""
    g = torch.Generator().manual_seed(0)
    module, reference = Cache(write), Cache(write)
    example = (torch.randn(2, 3, 2, 4, generator=g), torch.tensor([1, 6]))
    compiled = attnfuse.compile(module, example)
    text = compiled.mlir
    assert "bufferization.writable = true" in text
    buffer = module.cache
    for pos in ([5, 7], [0, 3]):
        k = torch.randn(2, 3, 2, 4, generator=g)
        out = compiled(k, torch.tensor(pos))
        expected = reference(k, torch.tensor(pos))
        assert module.cache is buffer
        torch.testing.assert_close(module.cache, reference.cache, rtol=0,
                                   atol=0)
        torch.testing.assert_close(out, expected)


def test_index_out_of_range_is_a_check_failure():
    """An index past the cache stops the compiled code with
    RunTimeCheckError (as an embedding id out of range does) instead of
    writing outside it, on whichever thread of the parallel loop it
    fails; the cache is not written past it and the library stays
    usable."""
    module = Cache(_index_put)
    compiled = attnfuse.compile(module, (torch.randn(2, 3, 2, 4),
                                         torch.tensor([1, 2])))
    with pytest.raises(attnfuse.RunTimeCheckError,
                       match="index out of range"):
        compiled(torch.randn(2, 3, 2, 4), torch.tensor([1, 8]))
    k = torch.randn(2, 3, 2, 4)
    out = compiled(k, torch.tensor([3, 4]))
    torch.testing.assert_close(module.cache[:, :, 3:5], k, rtol=0, atol=0)
    torch.testing.assert_close(out, module.cache.sum(2) * 2)


class AddsOne(torch.nn.Module):
    def forward(self, x, y):
        x.add_(1)
        return x, y * x


def test_input_written_in_place_and_returned_as_itself():
    """x.add_(1); return x: the output is the caller's x (as PyTorch returns
    it), updated; y * x reads the new x."""
    compiled = attnfuse.compile(AddsOne(), (torch.randn(5), torch.randn(5)))
    x, y = torch.randn(5), torch.randn(5)
    x0 = x.clone()
    out_x, prod = compiled(x, y)
    assert out_x is x
    torch.testing.assert_close(x, x0 + 1, rtol=0, atol=0)
    torch.testing.assert_close(prod, y * (x0 + 1))
    # A strided view is written through a dense copy, copied back.
    base = torch.zeros(5, 2)
    view = base[:, 0]
    compiled(view, y)
    assert torch.equal(base[:, 0], torch.ones(5))
    assert torch.equal(base[:, 1], torch.zeros(5))


def test_clone_before_update_keeps_the_old_value():
    class Snapshot(torch.nn.Module):
        def forward(self, x):
            old = x.clone()
            x.mul_(2)
            return old
    compiled = attnfuse.compile(Snapshot(), (torch.randn(4),))
    x = torch.randn(4)
    x0 = x.clone()
    old = compiled(x)
    assert torch.equal(old, x0) and torch.equal(x, x0 * 2)


def test_written_argument_must_not_overlap_another():
    compiled = attnfuse.compile(AddsOne(), (torch.randn(5), torch.randn(5)))
    x = torch.randn(5)
    with pytest.raises(attnfuse.AttnFuseError, match="shares memory"):
        compiled(x, x)


def test_written_buffer_cannot_be_a_constant():
    with pytest.raises(attnfuse.ExportError, match="written in place"):
        attnfuse.export(Cache(_index_put), (torch.randn(2, 3, 2, 4),
                                            torch.tensor([1, 2])),
                        constants=True)


def test_header_declares_the_written_arguments():
    compiled = attnfuse.compile(AddsOne(), (torch.randn(5), torch.randn(5)))
    header = open(compiled.header_path).read()
    assert "Written in place: arg0" in header
    assert "attn_memref_f32_1d *arg0, const attn_memref_f32_1d *arg1" in header


class _FrameMask(torch.nn.Module):
    """transformers' Wav2Vec2 frame mask: one index per row, written with
    two index tensors."""

    def forward(self, x, lengths):
        mask = torch.zeros(x.shape[0], x.shape[1], dtype=x.dtype)
        mask[(torch.arange(x.shape[0]), lengths - 1)] = 1
        return x * mask.flip([-1]).cumsum(-1).flip([-1]).bool()


class _TwoIndices(torch.nn.Module):
    """x[:, i, j] = v: index tensors on adjacent dims 1 and 2 that
    broadcast ([3, 1] and [2] to [3, 2])."""

    def forward(self, x, i, j, v):
        x = x.clone()
        x[:, i, j] = v
        return x


def test_index_put_with_several_index_tensors():
    x = torch.randn(3, 10)
    lengths = torch.tensor([10, 4, 7])
    c = attnfuse.compile(_FrameMask(), (x, lengths))
    assert torch.equal(c(x, lengths), _FrameMask()(x, lengths))
    assert torch.equal(c(x, torch.tensor([1, 1, 10])),
                       _FrameMask()(x, torch.tensor([1, 1, 10])))
    x = torch.randn(2, 5, 6, 3)
    i, j = torch.tensor([[0], [-1], [2]]), torch.tensor([1, -2])
    v = torch.randn(3, 2, 3)
    c = attnfuse.compile(_TwoIndices(), (x, i, j, v))
    assert torch.equal(c(x, i, j, v), _TwoIndices()(x, i, j, v))
    # Each component is checked against its own dim (a flat index in range
    # is not enough), negative ones from the end, as eager's IndexError.
    for bad_i, bad_j in ((torch.tensor([[0], [5], [2]]), j),
                         (i, torch.tensor([1, 6])),
                         (i, torch.tensor([1, -7]))):
        with pytest.raises(IndexError):
            _TwoIndices()(x, bad_i, bad_j, v)
        with pytest.raises(attnfuse.RunTimeCheckError,
                           match="index out of range"):
            c(x, bad_i, bad_j, v)
    assert torch.equal(c(x, i, j, v), _TwoIndices()(x, i, j, v))


def test_index_put_on_dims_that_are_not_adjacent_is_refused():
    class Apart(torch.nn.Module):
        def forward(self, x, i, j):
            x = x.clone()
            x[i, :, j] = 0.0
            return x
    with pytest.raises(attnfuse.ExportError,
                       match="index_put with index tensors on dims that are "
                             "not adjacent"):
        attnfuse.export(Apart(), (torch.randn(3, 4, 5), torch.tensor([0]),
                                  torch.tensor([1])))

