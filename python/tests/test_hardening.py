"""Silent wrong results and crashes of the front end that must not come
back: SDPA's fully masked rows, repeated example inputs, the compile cache, and the lesser ones (requires_grad inputs, the tools
directory, the cache directory, explain's locations)."""

import os
import platform
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import attnfuse
from attnfuse import compiler, runtime
from conftest import assert_matches
from models import NaiveCausalAttention


class ChainedSdpa(torch.nn.Module):
    """Two SDPA calls, the second reading the first's result: a NaN row in
    the first would spread to every row of the second."""

    def forward(self, q, k, v, mask):
        x = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return F.scaled_dot_product_attention(x, x, x)


def padded_bool_mask(batch, length):
    """True = attend. Batch 0 left-padded by 3 (its first 3 query rows see
    only padding, as in a causal left-padded decoder: all False)."""
    keep = torch.ones(batch, 1, length, length, dtype=torch.bool).tril()
    keep[0, :, :, :3] = False
    return keep


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_sdpa_fully_masked_rows_are_zero_as_in_pytorch(dtype):
    q, k, v = (torch.randn(2, 2, 8, 8, dtype=dtype) for _ in range(3))
    mask = padded_bool_mask(2, 8)
    module = ChainedSdpa()
    text = attnfuse.export(module, (q, k, v, mask))
    assert text.count("safe_softmax = true") == 2
    compiled = attnfuse.compile(module, (q, k, v, mask))
    out = compiled(q, k, v, mask)
    expected = module(q, k, v, mask)
    assert not expected.isnan().any()
    assert not out.isnan().any()
    assert_matches(out, expected)


def test_sdpa_float_mask_rows_of_minus_inf_are_zero():
    q, k, v = (torch.randn(1, 2, 6, 8) for _ in range(3))
    mask = torch.zeros(1, 1, 6, 6)
    mask[0, 0, 2] = float("-inf")

    def f(q, k, v, m):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m)

    class M(torch.nn.Module):
        def forward(self, *a):
            return f(*a)

    out = attnfuse.compile(M(), (q, k, v, mask))(q, k, v, mask)
    assert (out[0, :, 2] == 0).all()
    assert_matches(out, f(q, k, v, mask))


class ThreeInputs(torch.nn.Module):
    def forward(self, q, k, v):
        return (q @ k.transpose(-2, -1) * 0.3).softmax(-1) @ v


def test_repeated_example_inputs_stay_separate_arguments():
    """torch.export merges an example tensor passed twice into one graph
    input; the compiled module must still read q, k and v."""
    x = torch.randn(1, 2, 8, 8)
    compiled = attnfuse.compile(ThreeInputs(), (x, x, x))
    assert compiled.exported.num_user_inputs == 3
    q, k, v = (torch.randn(1, 2, 8, 8) for _ in range(3))
    assert_matches(compiled(q, k, v), ThreeInputs()(q, k, v))


def test_views_of_one_tensor_as_example_inputs():
    base = torch.randn(3, 1, 2, 8, 8)
    compiled = attnfuse.compile(ThreeInputs(), tuple(base))
    q, k, v = (torch.randn(1, 2, 8, 8) for _ in range(3))
    assert_matches(compiled(q, k, v), ThreeInputs()(q, k, v))


def test_explain_locates_blocks_past_attn_opt_locations():
    """A fused attn.sdpa's location lists the locations of the ops it
    replaced; those attn-opt created itself (index arithmetic of dynamic
    sizes) are `<stdin>` ones, which must not be taken for the block's
    Python line (they were: `?:0` or `<stdin>`)."""
    text = "\n".join([
        '%0 = "attn.sdpa"(%a, %b, %c) : () -> () loc(#loc3)',
        '#loc1 = loc("<stdin>":4:10)',
        '#loc2 = loc("/src/model.py":42:1)',
        '#loc3 = loc(fused[#loc1, #loc2])',
    ])
    assert compiler._locate_sdpas(text) == [("/src/model.py", 42)]


def test_explain_with_dynamic_shapes_names_the_line():
    from models import CausalSelfAttention, GPTConfig
    batch = torch.export.Dim("batch", min=1, max=16)
    seq = torch.export.Dim("seq", min=2, max=31)
    why = attnfuse.explain(CausalSelfAttention(GPTConfig()).eval(),
                           (torch.randn(2, 8, 32),),
                           dynamic_shapes=({0: batch, 1: seq},))
    (block,) = why.fused
    assert block.file.endswith("models.py") and block.line > 0


# ---- the compile cache --------------------------------------------------
def _cached(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNFUSE_CACHE_DIR", str(tmp_path))
    q, k, v = (torch.randn(1, 2, 8, 8) for _ in range(3))
    first = attnfuse.compile(NaiveCausalAttention(8), (q, k, v))
    return Path(first.library_path), (q, k, v)


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty",
                                    "foreign", "no_stamp"])
def test_damaged_cache_entry_is_rebuilt(tmp_path, monkeypatch, damage):
    """A truncated library used to kill the process with SIGBUS when
    loaded; garbage or empty ones raised OSError; another module's library
    under the key was called with the wrong signature. Each is rebuilt."""
    lib, args = _cached(tmp_path, monkeypatch)
    good = lib.read_bytes()

    def replace(data):
        # A new file, as a crashed writer leaves it: this process has the
        # good library mapped, and truncating that inode under it would
        # SIGBUS the test itself.
        tmp = lib.with_name("damaged")
        tmp.write_bytes(data)
        os.replace(tmp, lib)

    if damage == "truncate":
        replace(good[:len(good) // 3])
    elif damage == "garbage":
        replace(os.urandom(len(good)))
    elif damage == "empty":
        replace(b"")
    elif damage == "foreign":
        other = attnfuse.compile(ThreeInputs(), args)
        replace(Path(other.library_path).read_bytes())
    else:
        lib.with_suffix(".stamp").unlink()
    again = attnfuse.compile(NaiveCausalAttention(8), args)
    assert not again.cache_hit
    assert again.library_path == str(lib)
    assert lib.read_bytes() == good or damage == "no_stamp"
    torch.testing.assert_close(again(*args), NaiveCausalAttention(8)(*args))
    assert attnfuse.compile(NaiveCausalAttention(8), args).cache_hit


def test_cache_writes_leave_no_temporaries(tmp_path, monkeypatch):
    lib, _ = _cached(tmp_path, monkeypatch)
    names = sorted(p.name for p in tmp_path.iterdir())
    stem = lib.stem
    assert names == sorted(f"{stem}{s}" for s in (".h", ".mlir", ".so",
                                                   ".stamp"))


def test_cache_dir_that_is_a_file(tmp_path, monkeypatch):
    path = tmp_path / "not-a-dir"
    path.write_text("x")
    monkeypatch.setenv("ATTNFUSE_CACHE_DIR", str(path))
    q, k, v = (torch.randn(1, 2, 8, 8) for _ in range(3))
    with pytest.raises(attnfuse.AttnFuseError, match="is not a directory"):
        attnfuse.compile(NaiveCausalAttention(8), (q, k, v))


def test_empty_tools_dir_is_an_error(monkeypatch):
    monkeypatch.setenv("ATTNFUSE_TOOLS_DIR", "")
    with pytest.raises(attnfuse.ToolError, match="set but empty"):
        attnfuse.find_tool("attn-opt")


def test_requires_grad_inputs_warn():
    q, k, v = (torch.randn(1, 2, 8, 8) for _ in range(3))
    compiled = attnfuse.compile(NaiveCausalAttention(8), (q, k, v))
    with pytest.warns(compiler.GradientWarning, match="requires grad"):
        out = compiled(q.requires_grad_(), k, v)
    assert not out.requires_grad
    with warnings.catch_warnings():
        warnings.simplefilter("error", compiler.GradientWarning)
        compiled(q.detach(), k, v)
        with torch.no_grad():  # the user asked for no autograd
            compiled(q, k, v)


class WithKeywords(torch.nn.Module):
    def forward(self, q, k, v, mask=None):
        s = (q @ k.transpose(-2, -1)) * 0.3
        if mask is not None:
            s = s.masked_fill(mask, float("-inf"))
        return s.softmax(-1) @ v


def test_keyword_inputs():
    q, k, v = (torch.randn(1, 2, 8, 8) for _ in range(3))
    mask = torch.rand(8, 8) < 0.2
    compiled = attnfuse.compile(WithKeywords(), (q, k, v),
                                example_kwargs={"mask": mask})
    torch.testing.assert_close(compiled(q, k, v, mask=mask),
                               WithKeywords()(q, k, v, mask=mask),
                               equal_nan=True)
    with pytest.raises(attnfuse.AttnFuseError, match="keyword inputs"):
        compiled(q, k, v, attention_mask=mask)
    with pytest.raises(attnfuse.AttnFuseError, match="keyword inputs"):
        compiled(q, k, v)


class AddTwo(torch.nn.Module):
    def forward(self, a, b):
        return a + b


def test_failed_run_time_check_raises_and_library_stays_usable():
    """A run-time check of the compiled code (here: two dynamic dims that
    must be equal, reached by calling the entry point without the Python
    checks) raises RunTimeCheckError with the check's message; it used to
    end the interpreter with exit status 70. The next good call works."""
    batch = torch.export.Dim("batch", min=1, max=64)
    a, b = torch.randn(3, 4), torch.randn(3, 4)
    compiled = attnfuse.compile(AddTwo(), (a, b),
                                dynamic_shapes=({0: batch}, {0: batch}))
    with pytest.raises(attnfuse.RunTimeCheckError,
                       match="dynamic dims that broadcast must be equal"):
        compiled._fn([torch.randn(3, 4), torch.randn(5, 4)])
    (out,) = compiled._fn([a, b])
    assert torch.equal(out, a + b)
    assert torch.equal(compiled(a, b), a + b)


def test_model_returning_its_kv_cache_gets_a_hint():
    """A Hugging Face model built with use_cache=True returns a DynamicCache,
    which torch.export cannot output: the error says what to do."""
    import transformers
    config = transformers.LlamaConfig(
        num_hidden_layers=1, hidden_size=16, intermediate_size=32,
        num_attention_heads=2, num_key_value_heads=1, vocab_size=32)
    model = transformers.LlamaForCausalLM(config).eval()
    ids = torch.randint(0, 32, (1, 4))
    with pytest.raises(attnfuse.ExportError, match="use_cache=False"):
        attnfuse.export(model, (ids,))


# glibc keeps freed memory for the compiled code's next call (runtime.
# keep_freed_heap): a 16 MiB block and a 96 MiB one (above the largest mmap
# threshold glibc accepts) then come from the heap, below the program
# break, where glibc's default (a 128 KiB mmap threshold in a fresh
# process) maps them apart, above. Each case runs in a fresh interpreter
# (the setting is process-wide, once).
_HEAP_PROBE = """
import ctypes, ctypes.util, platform, sys
from attnfuse import runtime
applied = runtime.keep_freed_heap()
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.sbrk.restype = ctypes.c_void_p
libc.sbrk.argtypes = [ctypes.c_ssize_t]
small = libc.malloc(16 << 20)
large = libc.malloc(96 << 20)
top = libc.sbrk(0)
print(applied, small < top, large < top)
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc only")
@pytest.mark.parametrize("env, expected", [
    ({}, "True True True"),
    ({"ATTNFUSE_KEEP_FREED_HEAP": "0"}, "False False False"),
    ({"GLIBC_TUNABLES": "glibc.malloc.check=0"}, "False False False"),
    ({"MALLOC_TRIM_THRESHOLD_": "131072"}, "False False False"),
    ({"MALLOC_MMAP_MAX_": "65536"}, "False False False"),
])
def test_keep_freed_heap(env, expected):
    chosen = ("ATTNFUSE_KEEP_FREED_HEAP", "GLIBC_TUNABLES",
              *runtime.MALLOC_ENVIRONMENT)
    environment = {k: v for k, v in os.environ.items() if k not in chosen}
    environment.update(env)
    out = subprocess.run([sys.executable, "-c", _HEAP_PROBE], env=environment,
                         capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[0] == expected


def test_same_hf_model_compiled_twice_hits_the_cache(tmp_path, monkeypatch):
    """transformers' mask functions run as code torch.fx generates, whose
    file name `<eval_with_key>.N` counts up in the process and was in the
    locations of the exported MLIR: it was in the cache key, so compiling
    the same model again (another instance of the same config) built a
    second library. The key leaves the number out; the locations now name
    the user's lines the generated code came from (attnfuse.sources)."""
    import hf_models
    monkeypatch.setenv("ATTNFUSE_CACHE_DIR", str(tmp_path))
    args, kwargs = hf_models.inputs("llama", batch=2)
    first = attnfuse.compile(hf_models.build("llama", "sdpa"), args,
                             example_kwargs=kwargs)
    model = hf_models.build("llama", "sdpa")
    second = attnfuse.compile(model, args, example_kwargs=kwargs)
    assert "<eval_with_key>." not in first.mlir
    assert not first.cache_hit and second.cache_hit
    assert second.library_path == first.library_path
    assert len(list(tmp_path.glob("*.so"))) == 1
    with torch.no_grad():
        expected = model(*args, **kwargs).last_hidden_state
    torch.testing.assert_close(second(*args, **kwargs).last_hidden_state,
                               expected, atol=1e-4, rtol=1e-4)


# ---- the command line ---------------------------------------------------
@pytest.mark.parametrize("options, message", [
    (["--shape", "2xa"], r"argument --shape: '2xa' is not a shape"),
    (["--shape", "2x"], r"argument --shape: '2x' is not a shape"),
    (["--shape", "2x8:int"], r"unknown input kind 'int' in '2x8:int'"),
    (["--shape", "2x8x32", "--dynamic", "b=0"],
     r"argument --dynamic: 'b=0': expected DIM=NAME with DIM a "
     r"non-negative integer"),
    (["--shape", "2x8x32", "--dynamic=-1=batch"], r"'-1=batch': expected"),
    (["--shape", "2x8x32", "--dynamic", "0=2nd"],
     r"the name '2nd' is not a Python identifier"),
    (["--shape", "2x8x32", "--dynamic", "3=seq"],
     r"--dynamic 3=seq: no input has dim 3 \(ranks: 3\)"),
    (["--shape", "2x8x32", "--dynamic", "0=a", "--dynamic", "0=b"],
     r"dim 0 is given twice"),
    (["--shape", "2x8x32", "--kwargs", "{x"],
     r"argument --kwargs: '\{x' is not JSON"),
])
def test_cli_malformed_options_are_usage_errors(options, message, capsys):
    """Malformed --shape, --dynamic or --kwargs printed a Python traceback
    (int() of the text), and a --dynamic dim no input has was ignored:
    each is argparse's usage error, exit status 2, with a message."""
    from attnfuse.__main__ import main
    module = f"{Path(__file__).parent / 'models.py'}:gpt_block"
    with pytest.raises(SystemExit) as e:
        main(["export", module, *options])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "usage: python -m attnfuse" in err
    assert re.search(message, err), err


def test_cli_malformed_shape_prints_no_traceback():
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(
        [root] + [p for p in [env.get("PYTHONPATH")] if p])
    r = subprocess.run([sys.executable, "-m", "attnfuse", "export",
                        "models.py:gpt_block", "--shape", "2x8xq"],
                       capture_output=True, text=True, env=env,
                       cwd=Path(__file__).parent)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert "'2x8xq' is not a shape" in r.stderr


# ---- bad inputs the exporter and the callable must refuse as eager does ----
class SdpaOf(torch.nn.Module):
    def __init__(self, **options):
        super().__init__()
        self.options = options

    def forward(self, q, k, v, mask=None):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                              **self.options)


@pytest.mark.parametrize("options", [{}, {"is_causal": True}, {"mask": True}])
def test_sdpa_with_head_dim_zero_is_pytorchs(options):
    """Queries and keys of head dim 0: PyTorch's scores are empty sums, 0,
    and the result the (masked) mean of the values; the default scale
    1 / sqrt(0) was a raw ZeroDivisionError."""
    q, k = torch.randn(1, 2, 4, 0), torch.randn(1, 2, 5, 0)
    v = torch.randn(1, 2, 5, 3)
    args = (q, k, v)
    if options.pop("mask", False):
        args += (torch.rand(4, 5) < 0.6,)
    module = SdpaOf(**options)
    out = attnfuse.compile(module, args)(*args)
    assert_matches(out, module(*args))


class RepeatByTensor(torch.nn.Module):
    def forward(self, x, repeats):
        return (x.repeat_interleave(torch.tensor([1, 2, 3]), dim=0),
                x.repeat_interleave(repeats, dim=0))


def test_unmapped_op_is_named_as_written_not_as_decomposed():
    """`x.repeat_interleave(tensor)` reached the exporter as torch.export's
    check of its data-dependent size, and the error named `ge`; it names
    the op the module called (with what it was written as)."""
    x, repeats = torch.randn(3, 2), torch.tensor([2, 1, 1])
    with pytest.raises(attnfuse.ExportError) as info:
        attnfuse.export(RepeatByTensor(), (x, repeats))
    message = str(info.value)
    assert message.startswith("aten op aten.repeat_interleave.self_Tensor "
                              "has no AttnFuse mapping"), message
    assert "operator.ge" in message and "depends on tensor values" in message
    assert "torch.tensor([1, 2, 3])" in message  # the source line

    class ByInput(torch.nn.Module):
        def forward(self, x, repeats):
            return x.repeat_interleave(repeats, dim=0)
    with pytest.raises(attnfuse.ExportError,
                       match=r"^aten op aten.repeat_interleave.self_Tensor "
                       r"has no AttnFuse mapping \(torch.export wrote it "
                       r"with aten.repeat_interleave.Tensor"):
        attnfuse.export(ByInput(), (x, repeats))


class NoGradUnmapped(torch.nn.Module):
    def forward(self, x):
        with torch.no_grad():
            y = torch.lgamma(x * 2)
        return y + 1


def test_unmapped_op_in_a_no_grad_region_names_the_users_line():
    """torch.export writes a `torch.no_grad()` region (Llama-4's rotary
    embedding) as a higher-order op whose body its decomposition inlines
    with stack traces into the generated FX code: the error named
    `wrap_with_set_grad_enabled` at `<eval_with_key>.N:6`; it names the op
    and the module's own line."""
    with pytest.raises(attnfuse.ExportError) as info:
        attnfuse.export(NoGradUnmapped(), (torch.rand(3),))
    message = str(info.value)
    assert message.startswith("aten op aten.lgamma.default has no AttnFuse "
                              "mapping;"), message
    assert "eval_with_key" not in message
    assert "test_hardening.py" in message and \
        "y = torch.lgamma(x * 2)" in message, message


class AliasedBuffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        shared = torch.zeros(4)
        self.register_buffer("total", shared)
        self.register_buffer("alias", shared)

    def forward(self, x):
        self.total.add_(x)
        return self.alias * 2


def test_written_buffer_registered_twice_is_an_export_error():
    """A buffer registered under two names and written in place: torch's
    decomposition failed with a bare AssertionError."""
    with pytest.raises(attnfuse.ExportError,
                       match="registered under two names, 'alias' and "
                       "'total'"):
        attnfuse.compile(AliasedBuffer(), (torch.ones(4),))


class AddOne(torch.nn.Module):
    def forward(self, x):
        x.add_(1)
        return x * 2


def test_writing_a_leaf_that_requires_grad_raises_as_eager():
    """Eager PyTorch refuses the module's in-place write of a leaf that
    requires grad (with grad mode on); the compiled module wrote it."""
    compiled = attnfuse.compile(AddOne(), (torch.zeros(3),))
    leaf = torch.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires "
                       "grad is being used in an in-place operation"):
        AddOne()(leaf)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires "
                       "grad is being used in an in-place operation"):
        compiled(leaf)
    assert isinstance(pytest.raises(attnfuse.InPlaceError, compiled,
                                    leaf).value, attnfuse.AttnFuseError)
    assert torch.equal(leaf.detach(), torch.zeros(3))
    with torch.no_grad():  # eager writes it, so does the compiled module
        assert torch.equal(compiled(leaf), torch.full((3,), 2.0))
    assert torch.equal(leaf.detach(), torch.ones(3))


class IndexCopy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(2, 6, 3))

    def forward(self, pos, k):
        self.cache.index_copy_(1, pos, k)
        return k * 2


def test_index_copy_with_a_negative_index_raises_as_eager():
    """index_copy_ refuses index -1 in eager (IndexError); its
    decomposition, index_put, counts it from the end, and the compiled
    module wrote the last row."""
    module = IndexCopy()
    k = torch.randn(2, 1, 3)
    compiled = attnfuse.compile(module, (torch.tensor([1]), k))
    compiled(torch.tensor([4]), k)
    expected = torch.zeros(2, 6, 3)
    expected[:, 4:5] = k
    assert torch.equal(module.cache, expected)
    for index in (-1, -6, 6):
        pos = torch.tensor([index])
        with pytest.raises(IndexError, match="out of bounds"):
            IndexCopy()(pos, k)
        with pytest.raises(attnfuse.RunTimeCheckError,
                           match="index out of range"):
            compiled(pos, k)
