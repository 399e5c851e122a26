"""Errors, dropout policy, the compile cache, NumPy, explain, the tools."""

import time

import numpy as np
import re

import pytest
import torch

import attnfuse
from conftest import assert_matches
from models import (CausalSelfAttention, UnmappedOpAttention, GPTConfig,
                    NaiveCausalAttention)


def qkv(batch=1):
    return tuple(torch.randn(batch, 2, 8, 8) for _ in range(3))


def test_unsupported_op_names_op_and_source_line():
    with pytest.raises(attnfuse.ExportError) as info:
        attnfuse.export(UnmappedOpAttention(), qkv())
    message = str(info.value)
    assert "aten.cummax" in message
    assert "models.py:" in message
    assert ".cummax(-1)" in message  # the module's source line itself


def test_train_mode_dropout_is_refused():
    module = CausalSelfAttention(GPTConfig()).train()
    with pytest.raises(attnfuse.ExportError) as info:
        attnfuse.export(module, (torch.randn(2, 8, 32),))
    message = str(info.value)
    assert "train-mode dropout (p=0.1)" in message
    assert "module.eval()" in message
    assert "self.attn_dropout(att)" in message


def test_train_mode_dropout_exported_with_warning():
    """train_dropout='warn': attn.dropout (train = true, distinct seeds),
    fused into attn.sdpa's dropout_p; the numbers are not PyTorch's."""
    module = CausalSelfAttention(GPTConfig()).train()
    x = torch.randn(2, 8, 32)
    with pytest.warns(UserWarning, match="not PyTorch's generator"):
        text = attnfuse.export(module, (x,), train_dropout="warn")
    assert text.count('"attn.dropout"') == 2
    assert "seed = 0 : i64" in text and "seed = 1 : i64" in text
    fused, _ = attnfuse.fuse(text)
    assert fused.count('"attn.sdpa"') == 1
    assert "dropout_p = 1.000000e-01" in fused
    with pytest.warns(UserWarning):
        compiled = attnfuse.compile(module, (x,), train_dropout="warn")
    y = compiled(x)
    assert y.shape == x.shape and torch.isfinite(y).all()
    # Deterministic (a hash of the element index and seed), unlike torch.
    torch.testing.assert_close(compiled(x), y)
    with torch.no_grad():
        eval_y = module.eval()(x)
    assert not torch.allclose(y, eval_y)


def test_eval_mode_has_no_dropout():
    text = attnfuse.export(CausalSelfAttention(GPTConfig()).eval(),
                           (torch.randn(2, 8, 32),))
    assert "dropout" not in text


def test_second_compile_hits_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNFUSE_CACHE_DIR", str(tmp_path))
    module = NaiveCausalAttention(8)
    first = attnfuse.compile(module, qkv())
    assert not first.cache_hit
    start = time.perf_counter()
    second = attnfuse.compile(module, qkv())
    assert second.cache_hit
    assert second.library_path == first.library_path
    assert len(list(tmp_path.glob("*.so"))) == 1
    # The library is keyed by content: another backend is another library.
    third = attnfuse.compile(module, qkv(), backend="math")
    assert not third.cache_hit
    assert time.perf_counter() - start > 0  # (timing is reported, not tested)


def test_numpy_in_numpy_out():
    module = NaiveCausalAttention(8)
    q, k, v = qkv()
    compiled = attnfuse.compile(module, (q, k, v))
    out = compiled(q.numpy(), k.numpy(), v.numpy())
    assert isinstance(out, np.ndarray)
    assert_matches(torch.from_numpy(out), module(q, k, v))


def test_weights_are_bound_by_reference():
    module = CausalSelfAttention(GPTConfig()).eval()
    x = torch.randn(2, 8, 32)
    compiled = attnfuse.compile(module, (x,))
    with torch.no_grad():
        module.c_proj.weight.mul_(2.0)
        expected = module(x)
    assert_matches(compiled(x), expected)


def test_call_errors():
    compiled = attnfuse.compile(NaiveCausalAttention(8), qkv())
    q, k, v = qkv()
    with pytest.raises(attnfuse.AttnFuseError, match="dim 0 is 3, compiled for 1"):
        compiled(torch.randn(3, 2, 8, 8), k, v)
    with pytest.raises(attnfuse.AttnFuseError, match="dtype torch.float64"):
        compiled(q.double(), k, v)
    with pytest.raises(attnfuse.AttnFuseError, match="expected 3 inputs"):
        compiled(q, k)


def test_unknown_target_and_backend():
    with pytest.raises(attnfuse.AttnFuseError, match="target 'cuda'"):
        attnfuse.compile(NaiveCausalAttention(8), qkv(), target="cuda")
    with pytest.raises(attnfuse.AttnFuseError, match="backend must be"):
        attnfuse.compile(NaiveCausalAttention(8), qkv(), backend="fast")


def test_explain_near_miss_points_at_python():
    class ReturnsWeights(torch.nn.Module):
        def forward(self, q, k, v):
            w = (q @ k.transpose(-2, -1) * 0.25).softmax(-1)
            return w @ v, w

    why = attnfuse.explain(ReturnsWeights(), qkv())
    assert not why.fused
    (remark,) = why.not_fused
    assert "2 users" in remark.message
    assert remark.file == __file__
    assert remark.source == "w = (q @ k.transpose(-2, -1) * 0.25).softmax(-1)"
    ok = attnfuse.explain(NaiveCausalAttention(8), qkv())
    assert len(ok.fused) == 1 and not ok.not_fused
    assert "softmax" in ok.fused[0].source or "@" in ok.fused[0].source


def test_multiple_results():
    class TwoOutputs(torch.nn.Module):
        def forward(self, q, k, v):
            o = (q @ k.transpose(-2, -1) * 0.25).softmax(-1) @ v
            return o, o.transpose(1, 2)

    args = qkv()
    out = attnfuse.compile(TwoOutputs(), args)(*args)
    expected = TwoOutputs()(*args)
    assert isinstance(out, tuple) and len(out) == 2
    for a, b in zip(out, expected):
        assert_matches(a, b)


def test_tools_dir_must_hold_the_tools(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNFUSE_TOOLS_DIR", str(tmp_path))
    with pytest.raises(attnfuse.ToolError, match="has no executable attn-opt"):
        attnfuse.find_tool("attn-opt")


def test_wheel_tools_are_found_inside_the_package(tmp_path, monkeypatch):
    """A wheel's tools (attnfuse/_native/bin) come after ATTNFUSE_TOOLS_DIR
    and ATTN_BUILD_DIR, before the checkout's build and PATH; its C API
    (_native/include, _native/lib) before the checkout's."""
    import attnfuse.tools as tools
    native = tmp_path / "_native"
    (native / "bin").mkdir(parents=True)
    tool = native / "bin" / "attn-opt"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    (native / "lib").mkdir()
    (native / "lib" / "libAttnPackage.so").write_bytes(b"")
    (native / "include" / "attn" / "Package").mkdir(parents=True)
    (native / "include" / "attn" / "Package" / "AttnPackage.h").write_text("")
    monkeypatch.setattr(tools, "NATIVE_DIR", native)
    monkeypatch.delenv("ATTNFUSE_TOOLS_DIR", raising=False)
    monkeypatch.delenv("ATTN_BUILD_DIR", raising=False)
    assert attnfuse.find_tool("attn-opt") == str(tool)
    assert tools.c_api_dirs() == (str(native / "include"),
                                  str(native / "lib"))
    build = tmp_path / "build"
    (build / "bin").mkdir(parents=True)
    built = build / "bin" / "attn-opt"
    built.write_text("#!/bin/sh\n")
    built.chmod(0o755)
    monkeypatch.setenv("ATTN_BUILD_DIR", str(build))
    assert attnfuse.find_tool("attn-opt") == str(built)


def test_results_use_the_library_buffers_for_as_long_as_they_live():
    """Results are tensors over the buffers the library allocated (no
    copy); each buffer is freed with the last tensor over it, so results
    and views of them outlive the compiled module and later calls."""
    import gc

    class M(torch.nn.Module):
        def forward(self, x):
            y = x * 2
            return y, y[1:], (x + 1).t()

    x = torch.randn(64, 48)
    compiled = attnfuse.compile(M(), (x,))
    y, tail, t = compiled(x)
    row = y[3]
    del compiled, y
    gc.collect()
    # Calls and allocations that would reuse a freed buffer.
    again = attnfuse.compile(M(), (x,))
    scratch = [again(torch.randn(64, 48)) for _ in range(8)]
    scratch += [torch.full((64 * 48,), 7.0) for _ in range(64)]
    assert torch.equal(row, x[3] * 2)
    assert torch.equal(tail, (x * 2)[1:])
    assert torch.equal(t, (x + 1).t())


def test_explain_reports_softmaxes_with_attention_sinks():
    """GPT-OSS joins each head's sink logit to the scores before the
    softmax and drops its column after: both layers fuse into attn.sdpa
    with the op's sinks, and explain says so."""
    T = pytest.importorskip("transformers")
    torch.manual_seed(0)
    model = T.GptOssForCausalLM(T.GptOssConfig(
        vocab_size=100, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=8,
        intermediate_size=32, num_local_experts=4, num_experts_per_tok=2,
        use_cache=False, attn_implementation="eager")).eval()
    e = attnfuse.explain(model, (torch.randint(0, 100, (1, 8)),))
    assert len(e.fused) == 2 and len(e.not_fused) == 0
    # Generic form: the sinks are the 7th operand segment.
    assert len(re.findall(r'"attn.sdpa".*operandSegmentSizes = '
                          r'array<i32: (?:\d+, ){6}1, ', e.fused_mlir)) == 2


def _live_exported_programs() -> int:
    import gc
    gc.collect()
    return sum(1 for o in gc.get_objects()
               if isinstance(o, torch.export.ExportedProgram))


def test_compiled_module_keeps_no_exported_program(tmp_path):
    """The export's graph, fake tensors and shape environment are released
    once the weights are bound: the compiled module keeps its signature
    (it still runs and saves), not the ExportedProgram."""
    module = CausalSelfAttention(GPTConfig()).eval()
    x = torch.randn(2, 8, 32)
    before = _live_exported_programs()
    compiled = attnfuse.compile(module, (x,))
    assert _live_exported_programs() == before
    assert_matches(compiled(x), module(x))
    loaded = attnfuse.load(compiled.save(tmp_path / "pkg"))
    assert_matches(loaded(x), module(x))
