"""export -> attn-compile -> a loaded library wrapped as a torch callable."""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import re
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.utils._pytree as pytree

from . import varlen
from .errors import AttnFuseError, InPlaceError, InputError, PackageError
from .exporter import Exported, export_program, storage_span, torch_export
from .mlir import TensorType
from .package import (FORMAT, FORMAT_VERSION, Package, WeightsWriter,
                      arg_record, compiler_identity, entry_record,
                      library_string, target_record, write_package)
from .progress import Progress, stage_of
from .quantized_weights import QuantizedWeight, activation_args, weight_plan
from .runtime import CompiledFunction, serial_torch
from .sources import source_line
from .tools import run_tool, tool_identity

TARGETS = ("cpu",)
BACKENDS = ("auto", "flash", "math")


def cache_dir() -> Path:
    """$ATTNFUSE_CACHE_DIR, else ~/.cache/attnfuse."""
    d = os.environ.get("ATTNFUSE_CACHE_DIR")
    return Path(d) if d else Path.home() / ".cache" / "attnfuse"


def _export(module, example_inputs, dynamic_shapes, constants,
            train_dropout, example_kwargs=None, progress=None,
            weights=None) -> Exported:
    with stage_of(progress, "torch.export"):
        program = torch_export(module, example_inputs, dynamic_shapes,
                               example_kwargs)
    with stage_of(progress, "MLIR"):
        return export_program(program, constants=constants,
                              train_dropout=train_dropout, weights=weights)


def _atomic_write(path: Path, data: bytes):
    """Writes `path` as a whole or not at all: a temporary in the same
    directory, then a rename (a concurrent reader sees the old file or the
    new one)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _stamp(key: str, signature: str, compiler: str, lib: Path) -> dict:
    return {"key": key, "signature": signature, "compiler": compiler,
            "size": lib.stat().st_size, "sha256": _file_digest(lib)}


def _valid_entry(lib: Path, stamp_path: Path, want: dict) -> bool:
    """Whether the cached library is the one this key, signature and
    compiler made, whole: a truncated, garbage, empty or foreign library
    (or a missing or damaged stamp) is rebuilt, never loaded (loading a
    truncated library can kill the process with SIGBUS)."""
    try:
        stamp = json.loads(stamp_path.read_text())
        if any(stamp.get(k) != v for k, v in want.items()):
            return False
        return lib.stat().st_size == stamp["size"] and \
            _file_digest(lib) == stamp["sha256"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def _ensure_dir(d: Path):
    try:
        d.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as e:
        raise AttnFuseError(f"the compile cache {d} is not a directory "
                            f"({e.strerror}): set ATTNFUSE_CACHE_DIR to a "
                            f"directory") from e
    except OSError as e:
        raise AttnFuseError(f"cannot create the compile cache {d}: "
                            f"{e.strerror}") from e


def build_library(mlir_text: str, backend: str = "auto",
                  extra_args=(), progress=None) -> tuple[Path, bool]:
    """Compiles MLIR text to a shared library in the cache, keyed by the
    SHA-256 of the text (without the numbers of torch.fx's generated file
    names in its locations), the options and the compiler binary. Each
    library has a stamp (key, the function signature, the compiler's
    identity, the library's size and SHA-256) that is checked before a
    cached library is used. Returns the library's path and whether it came
    from the cache. `progress`: the compile's Progress, told of the cache
    hit or the attn-compile run."""
    compiler = tool_identity("attn-compile")
    key_src = "\n".join([_key_text(mlir_text), backend, *extra_args,
                         compiler])
    key = hashlib.sha256(key_src.encode()).hexdigest()[:24]
    signature = _signature_text(mlir_text)
    d = cache_dir()
    lib, stamp_path = d / f"{key}.so", d / f"{key}.stamp"
    want = {"key": key, "signature": signature, "compiler": compiler}
    manifest = "--prepack-weights" in extra_args
    if d.is_dir() and lib.exists() and _valid_entry(lib, stamp_path, want) \
            and (not manifest or lib.with_suffix(".weights.json").exists()):
        if progress is not None:
            progress.note(f"cache hit {lib.name}")
        return lib, True
    _ensure_dir(d)
    with tempfile.TemporaryDirectory(dir=d) as tmp:
        src = Path(tmp) / "module.mlir"
        src.write_text(mlir_text)
        out = Path(tmp) / "module.so"
        with stage_of(progress, "attn-compile"):
            run_tool("attn-compile", [src, "-o", out, "--emit=so",
                                      f"--backend={backend}", *extra_args],
                     what="attn-compile")
        _atomic_write(d / f"{key}.h", out.with_suffix(".h").read_bytes())
        _atomic_write(d / f"{key}.mlir", mlir_text.encode())
        if manifest:
            _atomic_write(d / f"{key}.weights.json",
                          out.with_suffix(".weights.json").read_bytes())
        stamp = _stamp(key, signature, compiler, out)
        # A new inode: a process that loaded the old library keeps its map.
        os.replace(out, lib)
        _atomic_write(stamp_path, json.dumps(stamp).encode())
    return lib, False


# The file name of code that torch.fx generated (a GraphModule's forward:
# transformers' vmapped mask functions under torch.export), numbered by a
# process-wide counter: `<eval_with_key>.42`.
_GENERATED_FILE = re.compile(r'"<eval_with_key>\.\d+"')


def _key_text(mlir_text: str) -> str:
    """The MLIR as the cache key reads it: locations in code torch.fx
    generated lose the counter in their file name, which differs every
    time the same model is exported (the compiled text keeps them for
    diagnostics)."""
    return _GENERATED_FILE.sub('"<eval_with_key>"', mlir_text)


def _signature_text(mlir_text: str) -> str:
    """The `func.func @name(...) -> (...)` lines (one per entry point):
    what a library must implement to be called with these arguments."""
    return "\n".join(re.findall(r"func\.func @[^\n]*", mlir_text))


class GradientWarning(UserWarning):
    """An input that requires grad: the compiled call records no autograd
    graph, so its results are detached."""


class CompiledModule:
    """A module compiled by AttnFuse. Call it with the module's inputs as
    they were given at compile time (positional, then the keyword ones);
    parameters and buffers are looked up on the module at every call, so
    in-place weight updates and weights assigned anew are seen. Returns
    what the module returns (a tensor, a tuple, a Hugging Face ModelOutput)
    with tensors as leaves; NumPy in gives NumPy out. Results never carry
    autograd history: an input that requires grad, with grad mode on, gets
    a GradientWarning.

    A library compiled with `prepack_weights=True` takes some weights as
    the GEMM's packed panels (its weights manifest lists them): each is
    packed by the library's pack entry point when the module is bound, and
    packed again before a call that finds the weight replaced or written
    since (its `data_ptr()` or `_version` changed). Weights read quantized
    (`compile(..., weights=...)`) are quantized in the same way: when the
    module is bound, and again after a write; `quantized` maps their
    names to the QuantizedTensors passed."""

    def __init__(self, exported: Exported, library: Path, cache_hit: bool,
                 module=None, kwarg_names=(), weights=None):
        self._attach(exported, library, kwarg_names)
        self.cache_hit = cache_hit
        state = {}
        program = exported.program
        state.update(program.state_dict)
        state.update(program.constants)
        if module is not None and isinstance(module, torch.nn.Module):
            # The live tensors, not the export's snapshot: where each one
            # is an attribute of a submodule.
            named = dict(module.named_parameters(remove_duplicate=False))
            named.update(module.named_buffers(remove_duplicate=False))
            for name in named:
                owner_name, _, attr = name.rpartition(".")
                self._owners[name] = (module.get_submodule(owner_name),
                                      attr)
        self._bound = {s.name: state[s.name].detach()
                       for s in exported.args
                       if s.kind not in ("input", "static")
                       and s.name not in self._owners}
        for entry in packed_arguments(library, exported.func_name):
            self._packed[entry["arg"]] = PackedWeight(str(library), entry)
        for i, spec in enumerate(exported.args):
            if spec.quant is not None:
                given = weights.given.get(spec.name) if weights else None
                q = QuantizedWeight(spec.name, spec.quant, spec.weight_shape,
                                    given)
                if given is not None:
                    self._panels[i] = q.get(None)
                else:
                    self._packed[i] = q
                self._quantized[i] = q
        for i in self._packed:
            spec = exported.args[i]
            self._packed[i].get(self._state(i, spec))
        self._compiler = compiler_identity()
        exported.release()

    @property
    def quantized(self) -> dict:
        """{parameter name: the QuantizedTensor passed for it} of the
        weights read quantized (`attnfuse.dequantized_model` makes the
        float model that computes the same)."""
        return {q.name: q.tensor for q in self._quantized.values()}

    def _attach(self, exported, library, kwarg_names):
        """What every CompiledModule has: the function's description (an
        export, or a package's PackagedSignature), the library's entry
        point and the keyword inputs' names; no state bound yet."""
        self.exported = exported
        self.mlir = exported.mlir
        self.library_path = str(library)
        self.package_path = None
        self.cache_hit = False
        self._kwarg_names = list(kwarg_names)
        self._fn = CompiledFunction(str(library), exported.func_name,
                                    exported.results)
        self._owners = {}
        self._bound = {}
        self._packed = {}
        # Argument position -> prepacked panels read from a package, or a
        # quantized weight given as bytes (fixed: the weight they were
        # made from is not here).
        self._panels = {}
        # Argument position -> QuantizedWeight (also in _packed or _panels).
        self._quantized = {}
        self._compiler = None

    @classmethod
    def from_package(cls, package: Package) -> "CompiledModule":
        """The CompiledModule a package of kind "module" holds (attnfuse.load
        reads and checks it first): its state mapped from weights.bin, its
        prepacked weights as the panels saved."""
        m = package.manifest
        where = package.path / "manifest.json"
        section = _module_section(m, where)
        if len(m["entries"]) != 1:
            raise PackageError(where, f"a module package has one entry "
                               f"point, not {len(m['entries'])}")
        sig = package.signatures()[m["entries"][0]["name"]]
        sig.outputs = [tuple(o) for o in section["outputs"]]
        sig.out_spec = _out_spec_of(section["out_spec"], where)
        self = cls.__new__(cls)
        self._attach(sig, package.open_library(), section["kwargs"])
        self.package_path = str(package.path)
        self._compiler = m["compiler"]
        tensors = package.tensors()
        for i, arg in enumerate(sig.args):
            if arg.tensor is None:
                continue
            if arg.packed:
                self._panels[i] = tensors[arg.tensor]
            else:
                self._bound[arg.name] = tensors[arg.tensor]
        missing = [a.name for a in sig.args if a.kind not in
                   ("input", "static") and a.tensor is None]
        if missing:
            raise PackageError(where, f"state arguments without a tensor: "
                               f"{', '.join(missing)}")
        return self

    def save(self, path) -> Path:
        """Writes the module as a package directory `path` (replacing a
        package there): the library, its header, the state it is bound to
        now (the module's current parameters and buffers; prepacked
        weights as their packed panels) in weights.bin, and manifest.json
        (attnfuse.package). `attnfuse.load(path)` gives it back in any
        process, without the module's code. Returns the path."""
        writer = WeightsWriter()
        args = []
        for i, spec in enumerate(self.exported.args):
            if spec.kind in ("input", "static"):
                args.append(arg_record(spec))
                continue
            packed_type = None
            if i in self._panels or i in self._packed:
                t = self._panels[i] if i in self._panels else \
                    self._packed[i].get(self._state(i, spec))
                if i not in self._quantized:
                    packed_type = TensorType(tuple(t.shape), t.dtype)
            else:
                t = self._state(i, spec)
                self._check(i, spec, t, {})
            args.append(arg_record(spec, writer.add(spec.name, t),
                                   packed_type))
        func = self.exported.func_name
        signature = library_string(self._fn.library,
                                   f"attn_signature_{func}")
        manifest = {
            "format": FORMAT, "format_version": FORMAT_VERSION,
            "kind": "module",
            "compiler": self._compiler or compiler_identity(),
            "target": target_record(self.library_path),
            "entries": [entry_record(func, args, self.exported.results,
                                     signature,
                                     dict(self.exported.dims))],
            "module": {"kwargs": self._kwarg_names,
                       "outputs": [list(o) for o in self.exported.outputs],
                       "out_spec": _out_spec_text(self.exported.out_spec)}}
        return write_package(path, manifest, Path(self.library_path),
                             Path(self.header_path), writer)

    def _state(self, i: int, spec) -> torch.Tensor:
        """The tensor bound to state argument `i`: the module's current
        attribute, else the export's."""
        if spec.name not in self._owners:
            return self._bound[spec.name]
        owner, attr = self._owners[spec.name]
        t = getattr(owner, attr, None)
        if not isinstance(t, torch.Tensor):
            raise AttnFuseError(f"argument {i} ({spec.name}) is no longer "
                                f"a tensor of the module")
        # Detached with the other arguments when the call passes them.
        return t

    @property
    def header_path(self) -> str:
        return str(Path(self.library_path).with_suffix(".h"))

    def _check(self, i: int, spec, t: torch.Tensor, symbols: dict):
        where = f"argument {i} ({spec.name})"
        if t.dtype != spec.type.dtype:
            raise AttnFuseError(f"{where}: dtype {t.dtype}, compiled for "
                                f"{spec.type.dtype}")
        if t.dim() != spec.type.rank:
            raise AttnFuseError(f"{where}: rank {t.dim()}, compiled for "
                                f"{spec.type.rank} ({spec.type})")
        for d, (size, want) in enumerate(zip(t.shape, spec.dims)):
            if isinstance(want, int):
                if size != want:
                    raise AttnFuseError(
                        f"{where}: dim {d} is {size}, compiled for {want} "
                        f"(mark it dynamic with torch.export.Dim to vary it)")
            elif want.is_Symbol:
                seen = symbols.setdefault(want, size)
                if seen != size:
                    raise AttnFuseError(
                        f"{where}: dim {d} is {size} but the same dynamic "
                        f"dim {want} is {seen} elsewhere")

    def _flat_inputs(self, args, kwargs) -> list:
        unknown = sorted(set(kwargs) - set(self._kwarg_names))
        missing = [k for k in self._kwarg_names if k not in kwargs]
        if unknown or missing:
            raise AttnFuseError(
                f"keyword inputs {sorted(kwargs)}, compiled for "
                f"{self._kwarg_names}")
        ordered = {k: kwargs[k] for k in self._kwarg_names}
        leaves, _ = pytree.tree_flatten((tuple(args), ordered))
        return leaves

    def _arguments(self, leaves) -> list:
        """The argument tensors in the function's order (user inputs from
        `leaves`, state from the module), checked; None for a static
        input."""
        user = iter(leaves)
        tensors, symbols = [], {}
        for i, spec in enumerate(self.exported.args):
            if spec.kind == "static":
                next(user)  # the graph is specialised on its value
                tensors.append(None)
                continue
            if i in self._panels:
                tensors.append(self._panels[i])
                continue
            t = next(user) if spec.kind == "input" else self._state(i, spec)
            if not isinstance(t, torch.Tensor):
                raise AttnFuseError(f"argument {i} ({spec.name}) is not a "
                                    f"tensor")
            if i in self._quantized:
                t = self._packed[i].get(t)  # checks the float weight
            else:
                self._check(i, spec, t, symbols)
                if i in self._packed:
                    t = self._packed[i].get(t)
            if spec.written and t.requires_grad and t.is_leaf and \
                    torch.is_grad_enabled():
                # What eager PyTorch raises for the module's in-place write.
                raise InPlaceError(
                    f"argument {i} ({spec.name}): a leaf Variable that "
                    f"requires grad is being used in an in-place operation "
                    f"(the module writes it; call it under torch.no_grad() "
                    f"or pass a tensor that does not require grad)")
            if spec.kind == "input" and t.requires_grad and \
                    torch.is_grad_enabled():
                warnings.warn(f"attnfuse: input {spec.name} requires grad; "
                              f"the compiled module records no autograd "
                              f"graph, its results are detached",
                              GradientWarning, stacklevel=2)
            tensors.append(t)
        check_no_overlap(self.exported, tensors)
        return tensors

    def __call__(self, *args, **kwargs):
        numpy_in = any(isinstance(x, np.ndarray) for x in args)
        args = [torch.from_numpy(x) if isinstance(x, np.ndarray) else x
                for x in args]
        leaves = self._flat_inputs(args, kwargs)
        if len(leaves) != self.exported.num_user_inputs:
            raise AttnFuseError(f"expected {self.exported.num_user_inputs} "
                                f"inputs, got {len(leaves)}")
        tensors = self._arguments(leaves)
        # The library reads dense CPU arrays; an argument it writes in place
        # is passed as the caller's own storage when it is one, else through
        # a dense copy that is copied back.
        passed, copy_back = [], []
        for spec, t in zip(self.exported.args, tensors):
            if t is None:
                continue
            dense = t.detach().cpu().contiguous()
            if spec.written and dense.data_ptr() != t.data_ptr():
                copy_back.append((t, dense))
            passed.append(dense)
        results = self._fn(passed)
        with torch.no_grad():
            for t, dense in copy_back:
                t.copy_(dense)
        for spec, t in zip(self.exported.args, tensors):
            if spec.written:
                _bump_version(t)
        out = [results[j] if kind == "result" else tensors[j]
               for kind, j in self.exported.outputs]
        if numpy_in:
            out = [o.numpy() if o.dtype != torch.bfloat16 else o for o in out]
        spec = self.exported.out_spec
        if spec is not None:
            try:
                return pytree.tree_unflatten(out, spec)
            except Exception:  # an output structure we cannot rebuild
                pass
        return out[0] if len(out) == 1 else tuple(out)


def _out_spec_text(spec):
    """The output structure as text (torch's pytree serialization), or None
    where it cannot be written (a namedtuple without a registered name):
    a loaded module then returns the flat outputs as a tuple."""
    if spec is None:
        return None
    try:
        return pytree.treespec_dumps(spec)
    except Exception:  # noqa: BLE001 - a node type without a name
        return None


def _out_spec_of(text, where):
    """The output structure a package recorded. A node type that a library
    registers when imported (transformers' ModelOutput classes) has its
    module imported first; where that fails, the outputs come back flat
    with a warning."""
    if text is None:
        return None
    try:
        return pytree.treespec_loads(text)
    except Exception:  # noqa: BLE001 - a type not registered yet
        pass
    import importlib
    for name in set(re.findall(r'\\?"type\\?": \\?"([\w.]+)', text)):
        module = name.rpartition(".")[0]
        if module and module != "builtins":
            try:
                importlib.import_module(module)
            except ImportError:
                pass
    try:
        return pytree.treespec_loads(text)
    except Exception as e:  # noqa: BLE001
        warnings.warn(f"attnfuse: {where}: the module's output structure "
                      f"cannot be rebuilt here ({e}); calls return the "
                      f"flat outputs as a tuple")
        return None


def _module_section(m: dict, where) -> dict:
    """The `module` section of a manifest, schema-checked."""
    section = m["module"]
    kwargs = section.get("kwargs")
    outputs = section.get("outputs")
    spec = section.get("out_spec", 0)
    if not (isinstance(kwargs, list) and all(isinstance(k, str)
                                             for k in kwargs)):
        raise PackageError(where, "module.kwargs must be a list of names")
    if not (isinstance(outputs, list) and all(
            isinstance(o, list) and len(o) == 2 and o[0] in ("result", "arg")
            and isinstance(o[1], int) and not isinstance(o[1], bool)
            for o in outputs)):
        raise PackageError(where, "module.outputs must be a list of "
                           "[\"result\" or \"arg\", index]")
    if not (spec is None or isinstance(spec, str)):
        raise PackageError(where, "module.out_spec must be a string or null")
    n_args = len(m["entries"][0]["args"]) if m["entries"] else 0
    n_results = len(m["entries"][0]["results"]) if m["entries"] else 0
    for kind, j in outputs:
        if not 0 <= j < (n_results if kind == "result" else n_args):
            raise PackageError(where, f"module.outputs names {kind} {j}, "
                               f"which the entry point does not have")
    return section


def packed_arguments(library: Path, func_name: str) -> list:
    """The packed arguments of `func_name` that attn-compile listed in the
    library's weights manifest (none without one): one dict per argument,
    its position `arg`, for `PackedWeight`. Shared with
    `attnfuse.generation`, whose entry points take packed weights too."""
    path = Path(library).with_suffix(".weights.json")
    if not path.exists():
        return []
    try:
        manifest = json.loads(path.read_text())
        return list(manifest["functions"].get(func_name, []))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise AttnFuseError(f"the weights manifest {path} is damaged: "
                            f"{e}") from e


class PackedWeight:
    """One weight argument taken as packed panels: the library's pack
    entry point, and the panels of the weight last packed with the
    `data_ptr()` and `_version` it had then. `get(weight)` gives the
    panels to pass for `weight` (packed again when needed); `entry` is one
    of `packed_arguments`."""

    DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}

    def __init__(self, library: str, entry: dict):
        self.weight_shape = tuple(entry["weight_shape"])
        dtype = entry.get("dtype", "f32")
        if dtype not in self.DTYPES:
            raise AttnFuseError(f"the weights manifest of {library} packs "
                                f"{dtype} weights, which this front end "
                                f"does not know")
        self.dtype = self.DTYPES[dtype]
        packed = TensorType(tuple(entry["packed_shape"]), self.dtype)
        self._pack = CompiledFunction(library, entry["entry"], [packed])
        self._source = None
        self._key = None
        self.panels = None

    def get(self, weight: torch.Tensor) -> torch.Tensor:
        """The panels of `weight`, packed again when it is another tensor
        than last time or was written since."""
        # The source is held, so that its storage cannot be freed and
        # reused by a new weight at the same address.
        key = (weight.data_ptr(), weight._version, weight.stride())
        if self.panels is None or self._key != key:
            dense = weight.detach().cpu().contiguous()
            if tuple(dense.shape) != self.weight_shape or \
                    dense.dtype != self.dtype:
                raise AttnFuseError(
                    f"a prepacked weight is {tuple(dense.shape)} "
                    f"{dense.dtype}, compiled for {self.weight_shape} "
                    f"{self.dtype}")
            self.panels = self._pack([dense])[0]
            self._source, self._key = weight, key
        return self.panels


def check_no_overlap(exported, tensors):
    """An argument written in place must not share memory with another
    argument: PyTorch would let the other see each write as it happens,
    the compiled function reads its inputs before or after, unordered."""
    written = [(i, storage_span(tensors[i])) for i in exported.written]
    if not written:
        return
    for i, span in written:
        if span is None:
            continue
        for j, t in enumerate(tensors):
            if j == i or t is None:
                continue
            other = storage_span(t)
            if other and other[0] == span[0] and other[1] < span[2] and \
                    span[1] < other[2]:
                a, b = exported.args[i], exported.args[j]
                raise AttnFuseError(
                    f"argument {i} ({a.name}) is written in place and shares "
                    f"memory with argument {j} ({b.name}); pass separate "
                    f"tensors")


def _bump_version(t: torch.Tensor):
    """Tells autograd that `t` was written (as an in-place op would), so a
    graph that saved it refuses to use the old value."""
    bump = getattr(torch.autograd.graph, "increment_version", None)
    if bump is not None:
        bump(t)


def compile(module, example_inputs, target="cpu", backend="auto",
            dynamic_shapes=None, constants=False, train_dropout="error",
            example_kwargs=None, prepack_weights=False, weights=None,
            group_size=None, activations=None, progress=None,
            profile=False, skip_padding=False):
    """Exports `module` (see `export`), fuses and compiles it ahead of time
    with `attn-compile` into a shared library (cached by content hash, so a
    second call does not recompile), loads it and returns a CompiledModule.
    `backend` picks the CPU lowering of attn.sdpa: auto, flash or math.
    `example_kwargs`: keyword inputs (a Hugging Face model's
    `attention_mask=`), passed by name to the compiled module too.
    `prepack_weights=True`: f32 weights that only feed GEMMs (and bf16
    ones where the target's GEMMs multiply bf16 pairs) are packed
    once into the GEMM's panels (`attn-compile --prepack-weights`), which
    saves the packing on every call and keeps a packed copy of each such
    weight beside the module's own (docs/python.md). `weights`: read the
    linear layers' weights quantized, "int8" or "int4" (NNCF's INT8_ASYM
    and INT4_SYM), another scheme of attnfuse.quant ("q4_0", "int4_asym",
    ...), or {parameter name: QuantizedTensor}; `group_size` overrides
    the scheme's group (attnfuse.quantized_weights, docs/quantization.md).
    `activations="int8"`: the products of the quantized weights quantize
    their input rows to int8 per block of 32 and multiply in integers
    where the CPU has an integer dot (decode products of at most 8 rows;
    prefill GEMMs of the same weights on VNNI;
    opt-in: the numbers change; None keeps the exact float path;
    docs/quantization.md).
    `progress`: show the
    stages on stderr (True), never (False), or as ATTNFUSE_PROGRESS and
    whether stderr is a terminal say (None; attnfuse.progress); they are
    logged on the "attnfuse" logger either way. `profile=True`: each op
    of the compiled module (each fused attention, product and elementwise
    op, named with its Python source line) is an event in torch.profiler's
    table and trace while it records (attnfuse.profiling; compiled with
    trace calls and without elementwise fusion, a library of its own).
    `skip_padding=True`: the module (a Hugging Face model) is compiled on
    the real tokens of its padded batch only, packed back to back with the
    `attention_mask` argument's lengths; positions that the mask marks as
    padding return 0 instead of what eager computes there (an
    UnpaddedCompiledModule; docs/python.md, "Padded batches")."""
    if skip_padding not in (True, False):
        raise AttnFuseError(f"skip_padding must be True or False, not "
                            f"{skip_padding!r}")
    # The front ends that compile a packed module through this function.
    packing = _compile_unpadded if skip_padding else \
        _compile_nested if isinstance(example_inputs, tuple) and \
        any(varlen.is_jagged(x) for x in example_inputs) else None
    if packing is not None:
        return packing(
            module, example_inputs, target=target, backend=backend,
            dynamic_shapes=dynamic_shapes, constants=constants,
            train_dropout=train_dropout, example_kwargs=example_kwargs,
            prepack_weights=prepack_weights, weights=weights,
            group_size=group_size, activations=activations, progress=progress,
            profile=profile)
    if target not in TARGETS:
        raise AttnFuseError(f"target {target!r} is not supported by the "
                            f"Python front end (supported: {TARGETS})")
    if backend not in BACKENDS:
        raise AttnFuseError(f"backend must be one of {BACKENDS}, not "
                            f"{backend!r}")
    if not isinstance(profile, bool):
        raise AttnFuseError(f"profile must be True or False, not "
                            f"{profile!r}")
    plan = weight_plan(weights, group_size)
    activation_flags = activation_args(activations, plan)
    if plan is not None and constants not in (False, None, "buffers"):
        raise AttnFuseError(f"weights={weights!r} reads the parameters as "
                            f"quantized arguments, and constants="
                            f"{constants!r} folds them into the module: use "
                            f"one or the other")
    with Progress("compile", progress) as p:
        exported = _export(module, example_inputs, dynamic_shapes,
                           constants, train_dropout, example_kwargs, p, plan)
        extra = ["--prepack-weights"] if prepack_weights else []
        if profile:
            extra += ["--trace", "--trace-locations", "--trace-linalg-ops"]
        extra += activation_flags
        lib, hit = build_library(exported.mlir, backend, extra, p)
        with p.stage("load"):
            compiled = CompiledModule(exported, lib, hit, module,
                                      list(example_kwargs or {}), plan)
            if profile:
                compiled._fn.enable_profiling()
            return compiled


class NestedCompiledModule:
    """A module compiled for jagged NestedTensor inputs (attnfuse.varlen):
    called with NestedTensors at the positions it was compiled with, it
    runs the compiled packed module on their values (the tokens back to
    back) and returns its outputs over the tokens as NestedTensors with
    the inputs' offsets. `packed` is the CompiledModule of the packed
    module (its `mlir` holds the attn.sdpa with lengths)."""

    def __init__(self, packed: CompiledModule, positions: tuple[int, ...]):
        self.packed = packed
        self.positions = positions
        self.mlir = packed.mlir

    def __call__(self, *args):
        if tuple(n for n, x in enumerate(args)
                 if varlen.is_jagged(x)) != self.positions:
            raise InputError(f"this module was compiled for jagged "
                             f"NestedTensor inputs at positions "
                             f"{list(self.positions)}")
        with serial_torch():
            inputs, offsets = varlen.pack_inputs(args)
        out = self.packed(*inputs)
        with serial_torch():
            return varlen.repack_outputs(out, offsets)


def _tolerance(dtype) -> float:
    return {torch.float32: 1e-4, torch.float64: 1e-10}.get(dtype, 5e-2)


def _compile_nested(module, example_inputs, dynamic_shapes=None,
                    example_kwargs=None, **options) -> NestedCompiledModule:
    """compile() of a module called with jagged NestedTensors (see
    attnfuse.varlen): the packed module with lengths reaching its
    attention, checked on the example against eager PyTorch on each
    sequence alone."""
    if dynamic_shapes is not None or example_kwargs:
        raise AttnFuseError("with NestedTensor inputs, compile takes no "
                            "dynamic_shapes (the batch and the padded "
                            "length are dynamic) and no example_kwargs")
    positions = tuple(n for n, x in enumerate(example_inputs)
                      if varlen.is_jagged(x))
    inputs, offsets = varlen.pack_inputs(example_inputs)
    inner = compile(varlen.PackedModule(module, positions), inputs,
                    dynamic_shapes=varlen.dynamic_packed_shapes(
                        example_inputs, positions), **options)
    nested = NestedCompiledModule(inner, positions)
    _check_nested(module, nested, example_inputs, offsets)
    return nested


def _check_nested(module, nested, example_inputs, offsets):
    """The compiled module against eager PyTorch on each sequence of the
    example alone (a dense batch of one): they differ where an op other
    than the attention mixes tokens, which padding changes."""
    got = nested(*example_inputs)
    got_leaves = pytree.tree_leaves(got)
    for b, (start, end) in enumerate(zip(offsets[:-1].tolist(),
                                         offsets[1:].tolist())):
        if end == start:
            continue
        one = tuple(x.values()[start:end].unsqueeze(0)
                    if varlen.is_jagged(x) else x for x in example_inputs)
        with torch.no_grad():
            want = pytree.tree_leaves(module(*one))
        for g, w in zip(got_leaves, want):
            if not isinstance(g, torch.Tensor):
                continue
            if g.is_nested:
                g = g.values()[start:end].unsqueeze(0)
            tol = _tolerance(w.dtype)
            if g.shape != w.shape or not torch.allclose(
                    g.float(), w.float(), atol=tol, rtol=tol):
                raise AttnFuseError(
                    f"the module on NestedTensors is not the packed module "
                    f"with lengths: on the example, sequence {b} differs "
                    f"from eager PyTorch on that sequence alone (an op "
                    f"other than scaled_dot_product_attention mixes "
                    f"tokens, or its output is not [B, j, ...])")


class UnpaddedCompiledModule:
    """A module compiled with skip_padding=True: called as the module is
    (positional or keyword arguments), it takes the real tokens of each
    `[B, T, ...]` argument where `attention_mask` ([B, T], 1 for a token)
    says so, runs the compiled module on them packed back to back (`packed`,
    the CompiledModule of varlen.UnpaddedModule; `mlir` is its MLIR), and
    returns each per-token output as `[B, T, ...]` with 0 at the padded
    positions. Each batch size, length and padding runs without
    recompiling."""

    def __init__(self, packed: CompiledModule, signature, names, tokens,
                 constants: dict, positions: str | None, leaves: frozenset):
        self.packed = packed
        self.mlir = packed.mlir
        self.signature = signature
        self.names = names
        self.tokens = tokens
        self.constants = constants  # the other arguments, fixed
        self.positions = positions  # the position_ids argument it makes
        self.leaves = leaves

    def __call__(self, *args, **kwargs):
        with serial_torch():
            packed, keep = self._unpad(args, kwargs)
        if not bool(keep.any()):
            raise InputError("the attention_mask marks no token")
        out = self.packed(*packed)
        with serial_torch():
            return varlen.repad(out, keep, self.leaves)

    def _unpad(self, args, kwargs):
        try:
            bound = _bind_by_name(self.signature, args, kwargs)
        except (TypeError, AttnFuseError) as e:
            raise InputError(f"the compiled module's arguments: {e}") from e
        keep = varlen.padding_keep(bound.get("attention_mask"))
        for name, value in bound.items():
            if name != "attention_mask" and \
                    not isinstance(value, torch.Tensor) and \
                    (name not in self.constants or
                     self.constants[name] != value):
                raise InputError(
                    f"this module was compiled with "
                    f"{name}={self.constants.get(name)!r}, called with "
                    f"{value!r}")
        values = {}
        for name in self.names:
            if name == self.positions and name not in bound:
                values[name] = _column_positions(keep)
            elif name not in bound or \
                    not isinstance(bound[name], torch.Tensor):
                raise InputError(f"this module was compiled with the tensor "
                                 f"argument {name}")
            else:
                values[name] = _batch_positions(name, bound[name], keep)
        extra = set(bound) - set(self.names) - {"attention_mask"}
        extra = [n for n in extra if isinstance(bound[n], torch.Tensor)]
        if extra:
            raise InputError(f"this module was compiled without the tensor "
                             f"arguments {sorted(extra)}")
        packed, lengths = varlen.unpad(values, self.tokens, keep)
        return packed + [lengths], keep


def _column_positions(keep):
    """Each token's column in the padded batch: the positions a Hugging
    Face model uses when it is given none."""
    return torch.arange(keep.shape[1]).expand(keep.shape)


def _batch_positions(name, x, keep):
    """`position_ids` given as `[1, T]` (one row for the batch) expanded to
    the batch's rows; other arguments as they are."""
    if name == "position_ids" and x.dim() == 2 and x.shape[0] == 1 and \
            keep.shape[0] != 1:
        return x.expand(keep.shape[0], -1)
    return x


def _compile_unpadded(module, example_inputs, dynamic_shapes=None,
                      example_kwargs=None, **options):
    """compile(skip_padding=True): the module on the example's real tokens
    (varlen.UnpaddedModule), checked on the example against eager PyTorch
    on the padded batch at every real token."""
    if dynamic_shapes is not None:
        raise AttnFuseError("skip_padding=True takes no dynamic_shapes (the "
                            "batch and the tokens are dynamic)")
    if not isinstance(module, torch.nn.Module):
        raise AttnFuseError("skip_padding=True compiles a torch.nn.Module")
    window = _declared_window(module)
    if window:
        raise AttnFuseError(
            f"skip_padding=True: {window}; packed attention does not take "
            f"windows yet (without skip_padding the padded batch's fully "
            f"masked key blocks are skipped)")
    signature = inspect.signature(module.forward)
    example_kwargs = dict(example_kwargs or {})
    try:
        bound = _bind_by_name(signature, tuple(example_inputs),
                              example_kwargs)
    except TypeError as e:
        raise AttnFuseError(f"the example does not fit {type(module).__name__}"
                            f".forward: {e}") from e
    if not isinstance(bound.get("attention_mask"), torch.Tensor):
        raise AttnFuseError("skip_padding=True needs the padding mask as the "
                            "module's attention_mask argument ([B, T], 1 for "
                            "a token) in the example")
    try:
        keep = varlen.padding_keep(bound["attention_mask"])
    except InputError as e:
        raise AttnFuseError(f"the example's {e}") from e
    params = signature.parameters
    positions = "position_ids" if "position_ids" in params and \
        "position_ids" not in bound else None
    names, tokens, constants, values = [], set(), {}, {}
    for name, x in bound.items():
        if name == "attention_mask":
            continue
        if not isinstance(x, torch.Tensor):
            constants[name] = x
            continue
        x = _batch_positions(name, x, keep)
        names.append(name)
        values[name] = x
        if x.dim() >= 2 and tuple(x.shape[:2]) == tuple(keep.shape):
            tokens.add(name)
    if positions is not None:
        names.append(positions)
        values[positions] = _column_positions(keep)
        tokens.add(positions)
    if not tokens:
        raise AttnFuseError("skip_padding=True: no argument of the example is "
                            "[B, T, ...] like its attention_mask")
    if keep.shape[0] < 2 or not bool(keep.any(1).all()):
        raise AttnFuseError("skip_padding=True needs an example batch of at "
                            "least 2 rows, each with a token (so that "
                            "per-token outputs can be told from others)")
    packed, lengths = varlen.unpad(values, tokens, keep)
    wrapper = varlen.UnpaddedModule(module, names, tokens, constants)
    with torch.no_grad():
        wrapper(*packed, lengths)  # records each attention's form
    dims = tuple({0: torch.export.Dim.DYNAMIC} if n in tokens else None
                 for n in names) + ({0: torch.export.Dim.DYNAMIC},)
    inner = compile(wrapper, tuple(packed) + (lengths,),
                    dynamic_shapes=(dims,), **options)
    with torch.no_grad():
        got = inner(*packed, lengths)
        want = module(*tuple(example_inputs), **example_kwargs)
    leaves = _check_unpadded(got, want, keep)
    return UnpaddedCompiledModule(inner, signature, names, frozenset(tokens),
                                  constants, positions, leaves)


def _bind_by_name(signature, args, kwargs) -> dict:
    """The arguments of a call by parameter name, those of a `**kwargs`
    parameter under their own names (a TypeError where they do not fit
    the signature; an AttnFuseError for values of a `*args` parameter,
    which have no name)."""
    bound = signature.bind_partial(*args, **kwargs).arguments
    named = {}
    for name, value in bound.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            named.update(value)
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            if value:
                raise AttnFuseError(
                    f"skip_padding=True takes the module's arguments by "
                    f"name: pass those of *{name} by keyword")
        else:
            named[name] = value
    return named


def _declared_window(module) -> str | None:
    """What a Hugging Face configuration in `module` declares of sliding-
    window or chunked attention (None: none). The attention's form is
    read from the example's masks, which cannot show a window longer than
    the example's sequences."""
    for sub in module.modules():
        config = getattr(sub, "config", None)
        if config is None or not hasattr(config, "to_dict"):
            continue
        name = type(config).__name__
        layer_types = getattr(config, "layer_types", None)
        if layer_types:
            other = sorted(set(layer_types) - {"full_attention"})
            if other:
                return f"{name} has layers of {', '.join(other)}"
            continue
        for attr in ("sliding_window", "attention_chunk_size"):
            value = getattr(config, attr, None)
            if value is not None and \
                    getattr(config, "use_sliding_window", True) is not False:
                return f"{name} declares {attr}={value}"
    return None


def _check_unpadded(got, want, keep) -> frozenset:
    """The indices of the per-token outputs: each output of the packed
    module over the real tokens (`got`) against eager PyTorch's on the
    padded batch (`want`) at those tokens. An output that is not per
    token, or that differs at a token (relative L2 error per token; the
    module mixes tokens in another way than its attention, or computes its
    positions otherwise than from position_ids), is an AttnFuseError."""
    got_leaves = pytree.tree_leaves(got)
    want_paths = pytree.tree_flatten_with_path(want)[0]
    total = int(keep.sum())
    leaves = set()
    if len(got_leaves) != len(want_paths):
        raise AttnFuseError("skip_padding=True: the module returns other "
                            "outputs on the packed tokens than on the "
                            "padded batch")
    for i, (g, (path, w)) in enumerate(zip(got_leaves, want_paths)):
        if not isinstance(w, torch.Tensor):
            continue
        name = pytree.keystr(path) or "the output"
        if not isinstance(g, torch.Tensor) or g.dim() < 1 or \
                g.shape[0] != total or w.dim() < 2 or \
                tuple(w.shape[:2]) != tuple(keep.shape) or \
                tuple(g.shape[1:]) != tuple(w.shape[2:]):
            raise AttnFuseError(
                f"skip_padding=True: output {name} {tuple(w.shape)} is not "
                f"per token ([B, T, ...] like the attention_mask "
                f"{tuple(keep.shape)}); compile a module that returns "
                f"per-token outputs only (e.g. BertModel(config, "
                f"add_pooling_layer=False), use_cache=False), or leave "
                f"skip_padding off")
        w = w[keep.to(w.device)].reshape(total, -1).double()
        g = g.reshape(total, -1).double()
        err = (g - w).norm(dim=1) / w.norm(dim=1).clamp(min=1e-30)
        tol = {torch.float32: 1e-3, torch.float64: 1e-8}.get(
            want_paths[i][1].dtype, 0.1)
        if bool((err > tol).any()):
            t = int(err.argmax())
            raise AttnFuseError(
                f"skip_padding=True: on the example, output {name} at real "
                f"token {t} differs from eager PyTorch on the padded batch "
                f"(relative error {float(err[t]):.2g}): the module mixes "
                f"tokens other than through scaled_dot_product_attention, "
                f"or computes positions without its position_ids argument")
        leaves.add(i)
    return frozenset(leaves)


@dataclass
class Remark:
    """One fusion remark, located in the module's Python source."""
    file: str
    line: int
    message: str
    source: str  # the Python source line

    def __str__(self):
        return f"{self.file}:{self.line}: {self.message}\n    {self.source}"


@dataclass
class Explanation:
    fused: list[Remark]  # one per attn.sdpa after fusion
    not_fused: list[Remark]  # attn-fuse-sdpa's remarks on near misses
    fused_mlir: str

    def __str__(self):
        lines = [f"{len(self.fused)} attention block(s) fused, "
                 f"{len(self.not_fused)} not fused"]
        lines += [f"fused: {r}" for r in self.fused]
        lines += [f"not fused: {r}" for r in self.not_fused]
        return "\n".join(lines)


_REMARK = re.compile(r'^(.*?):(\d+):\d+: remark: (.*)$')


def fuse(mlir_text: str, explain: bool = False):
    """Runs `attn-opt --attn-fuse-sdpa` on MLIR text; returns (fused text in
    generic form with locations, stderr)."""
    opts = "explain=true" if explain else ""
    proc = run_tool("attn-opt", [
        "-", f"--attn-fuse-sdpa={opts}" if opts else "--attn-fuse-sdpa",
        "--mlir-print-op-generic", "--mlir-print-debuginfo",
        "--mlir-pretty-debuginfo=false", "--mlir-print-op-on-diagnostic=false"
    ], input_text=mlir_text, what="attn-opt --attn-fuse-sdpa")
    return proc.stdout, proc.stderr


def _locate_sdpas(fused_text: str) -> list[tuple[str, int]]:
    """(file, line) of each attn.sdpa in generic-form output printed with
    `--mlir-print-debuginfo`: its `loc(#locN)` alias is a file location or
    a fused one listing aliases; the first location in a Python file wins
    (ops the fusion creates, such as the index computations of dynamic
    sizes, carry attn-opt's own `<stdin>` locations)."""
    aliases = dict(re.findall(r'^(#loc\d*) = loc\((.*)\)$', fused_text, re.M))
    file_loc = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):\d+')

    def python_loc(text, depth=0):
        for m in file_loc.finditer(text):
            if m.group(1) not in ("<stdin>", "-"):
                return m.group(1), int(m.group(2))
        if depth > 8:
            return None
        for alias in re.findall(r'#loc\d*', text):
            found = python_loc(aliases.get(alias, ""), depth + 1)
            if found:
                return found
        return None

    found = []
    for line in fused_text.splitlines():
        if '"attn.sdpa"' not in line:
            continue
        m = re.search(r'loc\((#loc\d*)\)\s*$', line)
        text = aliases.get(m.group(1), "") if m else line
        found.append(python_loc(text) or ("?", 0))
    return found


def explain(module, example_inputs, dynamic_shapes=None, constants=False,
            train_dropout="error", example_kwargs=None) -> Explanation:
    """Exports the module and runs the fusion with remarks: which attention
    blocks became attn.sdpa and why the others did not, each with the Python
    source line it concerns."""
    exported = _export(module, example_inputs, dynamic_shapes, constants,
                       train_dropout, example_kwargs)
    fused_text, stderr = fuse(exported.mlir, explain=True)
    not_fused = []
    for line in stderr.splitlines():
        m = _REMARK.match(line)
        # "fused into attn.sdpa ..." remarks say which form a fusion took;
        # the fused list below comes from the output's locations.
        if m and m.group(3).startswith("not fused"):
            file, ln = m.group(1), int(m.group(2))
            not_fused.append(Remark(file, ln, m.group(3),
                                    source_line(file, ln)))
    fused = [Remark(f, ln, "fused into attn.sdpa", source_line(f, ln))
             for f, ln in _locate_sdpas(fused_text)]
    return Explanation(fused, not_fused, fused_text)


def export(module, example_inputs, dynamic_shapes=None, constants=False,
           train_dropout="error", example_kwargs=None) -> str:
    """torch.export `module` on `example_inputs` and return AttnFuse MLIR
    text (one `func.func @forward`).

    Arguments of the function: parameters and buffers first (in
    `module.state_dict` order, as torch.export lifts them), then the user
    inputs. Weights are arguments by default so that the compiled library
    depends only on the architecture: one library serves every checkpoint
    (the compile cache still hits after the weights change), the MLIR stays
    small, and in-place weight updates are seen by the compiled callable.
    `constants=True` folds all parameters and buffers into the module as
    dense constants, `constants="buffers"` only the buffers (a registered
    causal-mask buffer then becomes `is_causal`), or pass a list of names.

    `dynamic_shapes` is torch.export's: dims given a `torch.export.Dim`
    become `?` dims. `train_dropout`: a train-mode dropout is an ExportError
    by default ("error"), since attn.dropout's RNG is not PyTorch's; with
    "warn" it is exported as attn.dropout (train = true) with a warning that
    the numbers will differ from PyTorch's. An eval-mode module has no
    dropout in its export."""
    return _export(module, example_inputs, dynamic_shapes, constants,
                   train_dropout, example_kwargs).mlir


def count_sdpa(mlir_text: str) -> int:
    """The number of attn.sdpa ops after `attn-opt --attn-fuse-sdpa`."""
    fused, _ = fuse(mlir_text)
    return fused.count('"attn.sdpa"')


__all__ = ["compile", "export", "explain", "fuse", "count_sdpa",
           "CompiledModule", "Explanation", "Remark", "build_library"]
