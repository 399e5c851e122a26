"""attnfuse.compile(..., profile=True): each op of the compiled module is a
torch.profiler event named after the op and its Python source line
(attnfuse.profiling; docs/python.md, "Profiling")."""

import inspect
import json

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

import attnfuse
from attnfuse.profiling import trace_names


class Block(torch.nn.Module):
    """Attention (fused into attn.sdpa), a product and elementwise ops, each
    on a line of its own."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 24)

    def forward(self, q, k, v):
        scores = q @ k.transpose(-2, -1) * 0.25  # ATTN
        probs = torch.softmax(scores, dim=-1)  # ATTN
        out = probs @ v  # ATTN
        return torch.tanh(self.proj(out)) * 2.0  # PROJ


def _lines(tag):
    source, first = inspect.getsourcelines(Block.forward)
    return {first + i for i, text in enumerate(source)
            if text.rstrip().endswith(f"# {tag}")}


def _inputs(seed=0):
    g = torch.Generator().manual_seed(seed)
    # Odd sizes: 7 queries, 9 keys.
    return (torch.randn(2, 3, 7, 16, generator=g),
            torch.randn(2, 3, 9, 16, generator=g),
            torch.randn(2, 3, 9, 16, generator=g))


def _reference(module, inputs):
    with torch.no_grad():
        return module.double()(*(t.double() for t in inputs)).float()


@pytest.fixture(scope="module")
def compiled():
    torch.manual_seed(0)
    module = Block().eval()
    return module, attnfuse.compile(module, _inputs(), profile=True)


def _event_line(name):
    """The line of an event named `attn.<op> test_profiling.py:<line>`."""
    op, where = name.split(" ")
    file, line = where.split(":")
    assert file == "test_profiling.py", name
    return op, int(line)


def test_ops_are_profiler_events_named_by_source_line(compiled, tmp_path):
    module, fn = compiled
    inputs = _inputs(1)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        out = fn(*inputs)
    torch.testing.assert_close(out, _reference(_copy(module), inputs),
                               atol=2e-5, rtol=1e-5)

    events = prof.events()
    calls = [e for e in events if e.name == "attnfuse.forward"]
    assert len(calls) == 1
    call = calls[0]
    ops = [e for e in events if e.name.startswith(("attn.", "linalg."))]
    by_op = {}
    for e in ops:
        op, line = _event_line(e.name)
        by_op.setdefault(op, set()).add(line)
        # Inside the call's event, on its thread, with a duration.
        assert e.thread == call.thread
        assert call.time_range.start <= e.time_range.start
        assert e.time_range.end <= call.time_range.end
        assert e.time_range.elapsed_us() >= 0
    # The attention is one fused op located on the attention's lines (no
    # matmul or softmax of its own left); the product (linalg, as the
    # exporter writes nn.Linear) and the elementwise ops on the
    # projection's line.
    assert len(by_op["attn.sdpa"]) == 1 and by_op["attn.sdpa"] <= _lines("ATTN")
    assert "attn.softmax" not in by_op and "attn.matmul" not in by_op
    assert by_op["linalg.matmul"] == _lines("PROJ")
    assert by_op["attn.tanh"] == _lines("PROJ")
    assert by_op["attn.mul"] == _lines("PROJ")
    assert len([e for e in ops if e.name.startswith("attn.sdpa")]) == 1
    # The spans do not overlap: together they take no longer than the call.
    spans = sorted((e.time_range.start, e.time_range.end) for e in ops)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    assert sum(e.time_range.elapsed_us() for e in ops) \
        <= call.time_range.elapsed_us()

    # The table groups by name; the Chrome trace has the same events.
    table = prof.key_averages().table(sort_by="cpu_time_total",
                                      max_name_column_width=80)
    sdpa_line = min(by_op["attn.sdpa"])
    assert f"attn.sdpa test_profiling.py:{sdpa_line}" in table
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    names = {e["name"] for e in trace if e.get("ph") == "X"}
    assert {e.name for e in ops} <= names
    assert "attnfuse.forward" in names


def _copy(module):
    copy = Block().eval()
    copy.load_state_dict(module.state_dict())
    return copy


def test_profiled_module_outside_the_profiler(compiled):
    """No profiler: no hook installed, the same results."""
    module, fn = compiled
    inputs = _inputs(2)
    torch.testing.assert_close(fn(*inputs), _reference(_copy(module), inputs),
                               atol=2e-5, rtol=1e-5)
    assert fn._fn.profiler._active == 0


def test_without_profile_the_library_has_no_trace_calls():
    module = Block().eval()
    fn = attnfuse.compile(module, _inputs())
    assert fn._fn.profiler is None
    with pytest.raises(attnfuse.AttnFuseError, match="profile=True"):
        trace_names(fn._fn.library)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn(*_inputs(3))
    assert not [e for e in prof.events()
                if e.name.startswith(("attn", "linalg."))]


def test_profile_must_be_a_bool():
    with pytest.raises(attnfuse.AttnFuseError, match="profile must be"):
        attnfuse.compile(Block().eval(), _inputs(), profile="yes")
