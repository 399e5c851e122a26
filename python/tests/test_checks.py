"""Run-time checks of compiled code reach the caller as RunTimeCheckError
on whichever thread they fail, and the library stays usable: index checks
inside parallel loops (embedding ids, index_put rows), integer division by
zero (eager's ZeroDivisionError), and the one signed overflow of a
division, which returns what eager returns instead of trapping."""

import pytest
import torch

import attnfuse


class Embed(torch.nn.Module):
    def __init__(self, rows=128, dim=64):
        super().__init__()
        self.e = torch.nn.Embedding(rows, dim)

    def forward(self, ids):
        return self.e(ids) * 2


@pytest.mark.parametrize("dynamic", [False, True])
def test_embedding_id_out_of_range_in_parallel_loop_raises(dynamic):
    """A [2, 4096] lookup runs on every thread of the team: an id out of
    the vocabulary in the second row (a worker's share) raises, and the
    next call is right (before: the process exited with status 70)."""
    model = Embed().eval()
    ids = torch.randint(0, 128, (2, 4096), generator=torch.Generator()
                        .manual_seed(0))
    kwargs = {}
    if dynamic:
        kwargs["dynamic_shapes"] = ({1: torch.export.Dim("t", max=8192)},)
    compiled = attnfuse.compile(model, (ids,), **kwargs)
    for row, col, bad in [(1, 3000, 500), (0, 0, -1), (1, 4095, 128)]:
        wrong = ids.clone()
        wrong[row, col] = bad
        with pytest.raises(attnfuse.RunTimeCheckError,
                           match="index out of range"):
            compiled(wrong)
    torch.testing.assert_close(compiled(ids), model(ids), rtol=0, atol=0)


class PutRows(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(4096, 8))

    def forward(self, rows, pos):
        self.cache[pos] = rows
        return self.cache.sum(0)


def test_index_put_row_out_of_range_raises_and_leaves_library_usable():
    pos = torch.arange(0, 4096, 2)
    rows = torch.randn(2048, 8)
    model = PutRows()
    compiled = attnfuse.compile(PutRows(), (rows, pos))
    wrong = pos.clone()
    wrong[1500] = 5000
    with pytest.raises(attnfuse.RunTimeCheckError,
                       match="index out of range"):
        compiled(rows, wrong)
    torch.testing.assert_close(compiled(rows, pos), model(rows, pos))


class Divide(torch.nn.Module):
    def forward(self, a, b):
        return a // b, a % b, torch.div(a, b, rounding_mode="trunc")


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int8,
                                   torch.uint8])
def test_integer_division_by_zero_raises_as_eager(dtype):
    """Eager raises RuntimeError("ZeroDivisionError"); the compiled code
    raises RunTimeCheckError (a RuntimeError too) instead of SIGFPE."""
    g = torch.Generator().manual_seed(1)
    a = torch.randint(0, 100, (3, 1000), generator=g).to(dtype)
    b = torch.randint(1, 9, (3, 1000), generator=g).to(dtype)
    compiled = attnfuse.compile(Divide(), (a, b))
    zero = b.clone()
    zero[2, 999] = 0
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        Divide()(a, zero)
    with pytest.raises(attnfuse.RunTimeCheckError,
                       match="ZeroDivisionError") as info:
        compiled(a, zero)
    assert isinstance(info.value, RuntimeError)
    for got, want in zip(compiled(a, b), Divide()(a, b)):
        torch.testing.assert_close(got, want, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int8])
def test_integer_division_overflow_returns_what_eager_returns(dtype):
    """The minimum divided by -1 overflows: eager's floor division returns
    the minimum and its remainder 0; x86's idiv traps. (Eager's own
    rounding_mode="trunc" division traps on it too: there the compiled
    code gives the same wrapped minimum.)"""
    low = torch.iinfo(dtype).min
    a = torch.tensor([low, low, -7, 7, low + 1], dtype=dtype)
    b = torch.tensor([-1, 1, -2, -2, -1], dtype=dtype)
    compiled = attnfuse.compile(Divide(), (a, b))
    floor, rem, trunc = compiled(a, b)
    torch.testing.assert_close(floor, a // b, rtol=0, atol=0)
    torch.testing.assert_close(rem, a % b, rtol=0, atol=0)
    want = torch.tensor([low, low, 3, -3, -(low + 1)], dtype=dtype)
    torch.testing.assert_close(trunc, want, rtol=0, atol=0)


@pytest.mark.parametrize("value", ["", "-1", "abc", "99999999999", "0",
                                   "4,x"])
def test_malformed_omp_num_threads_is_an_error(monkeypatch, value):
    """The library's libomp would stop the interpreter (an assertion) on
    these when the first call forks threads: loading refuses them."""
    a = torch.ones(4, 300)
    monkeypatch.setenv("OMP_NUM_THREADS", value)
    with pytest.raises(attnfuse.AttnFuseError, match="OMP_NUM_THREADS"):
        attnfuse.compile(Divide(), (a.long(), a.long()))


def test_omp_num_threads_list_is_accepted(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "2,1")
    a = torch.arange(1, 9).reshape(2, 4)
    compiled = attnfuse.compile(Divide(), (a, a))
    for got, want in zip(compiled(a, a), Divide()(a, a)):
        torch.testing.assert_close(got, want)


class Rows(torch.nn.Module):
    def forward(self, x, i):
        return x.index_select(0, i) * 2


def test_index_select_checks_each_index_once_and_raises():
    """index_select checks its indices in one pass before copying rows
    (ops/indexing.py `_checked_indices`): an index out of range (negative
    or past the rows) anywhere in a long index raises, and the next call
    is right."""
    x = torch.randn(300, 64)
    idx = torch.randint(0, 300, (5000,), generator=torch.Generator().manual_seed(0))
    compiled = attnfuse.compile(Rows(), (x, idx))
    for pos, bad in [(4999, 300), (0, -1), (2500, 10 ** 6)]:
        wrong = idx.clone()
        wrong[pos] = bad
        with pytest.raises(attnfuse.RunTimeCheckError, match="index out of range"):
            compiled(x, wrong)
    torch.testing.assert_close(compiled(x, idx), Rows()(x, idx), rtol=0, atol=0)
