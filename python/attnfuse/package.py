"""The files of a saved package, and the checks that loading one makes.

A package is one directory (`CompiledModule.save`, `Generator.save`):

    manifest.json   what the library is and how to call it (below)
    model.so        the library attn-compile built
    model.h         its C header
    weights.bin     every tensor the library reads that is not an input,
                    in the layout it reads them (prepacked weights as their
                    GEMM panels), each at a 64-byte aligned offset

`manifest.json` (format version FORMAT_VERSION) holds: `kind` ("module" or
"generator"); `compiler` (this package's VERSION, the signature ABI the
Python runtime calls, and the SHA-256 of the attn-compile binary that built
the library); `target` (the CPU, LLVM feature string and machine the code
was compiled for, and `requires`, the features checked against the host);
`files` (name, size and SHA-256 of each file; weights.bin's also per
64 MiB chunk, which loading checks on several threads); `tensors` (per
key: dtype, shape, offset and size in weights.bin); `entries` (per entry
point: its name, the signature the library records, every argument's
name, kind, dtype and shape, whether it is written in place, and the
tensor of weights.bin it is bound to, its results, and `dims`, the bounds
of its dynamic dims) and a section of its kind (`module` or
`generator`); last `manifest_sha256`, the SHA-256 of the
rest (canonical JSON), so that an edited manifest is refused.

`read_package` checks, before anything is mapped or loaded: the manifest
parses, its format version and checksum, the fields `check_schema` reads,
the attnfuse version, each file is there with its size and SHA-256
(weights.bin's content only with `verify_weights`), the tensors' places
in weights.bin, the machine and the CPU features the code needs (this
host's /proc/cpuinfo); then `Package.open_library` checks the library's
own record of its target and of each entry's signature
against the manifest. Any failure is a PackageError naming the file.
This module imports no exporter: loading a package needs no torch.export.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import math
import os
import platform
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from .errors import PackageError
from .mlir import TensorType
from .tools import find_tool

VERSION = "0.1.0"  # attnfuse's version (python/pyproject.toml)
FORMAT = "attnfuse-package"
FORMAT_VERSION = 1
# The library's calling convention as the runtime calls it: the prefix of
# every `attn_signature_<f>` it records.
ABI = "attn-signature 1"
MANIFEST = "manifest.json"
LIBRARY = "model.so"
HEADER = "model.h"
WEIGHTS = "weights.bin"
ALIGNMENT = 64

_DTYPES = {str(d).removeprefix("torch."): d for d in (
    torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.bool,
    torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)}

# LLVM's x86 feature names -> the flag Linux prints in /proc/cpuinfo, for
# the instruction-set extensions LLVM may emit from the compiled IR. AMX is
# not among them (AMX code runs behind the runtime's attnrt_amx_available
# check, with a vector path otherwise), nor system features the code never
# uses (rdseed, shstk, xsave, ...): they stay in `target.features`,
# unchecked.
CPUINFO_FLAGS = {
    "64bit": "lm", "cmov": "cmov", "cx8": "cx8", "cx16": "cx16",
    "mmx": "mmx", "fxsr": "fxsr", "sahf": "lahf_lm", "popcnt": "popcnt",
    "movbe": "movbe", "lzcnt": "abm", "bmi": "bmi1", "bmi2": "bmi2",
    "tbm": "tbm", "adx": "adx", "prfchw": "3dnowprefetch",
    "sse": "sse", "sse2": "sse2", "sse3": "pni", "ssse3": "ssse3",
    "sse4.1": "sse4_1", "sse4.2": "sse4_2", "crc32": "sse4_2",
    "sse4a": "sse4a", "aes": "aes", "pclmul": "pclmulqdq", "sha": "sha_ni",
    "avx": "avx", "avx2": "avx2", "fma": "fma", "fma4": "fma4",
    "xop": "xop", "f16c": "f16c", "gfni": "gfni", "vaes": "vaes",
    "vpclmulqdq": "vpclmulqdq", "avxvnni": "avx_vnni",
    "avx512f": "avx512f", "avx512bw": "avx512bw", "avx512cd": "avx512cd",
    "avx512dq": "avx512dq", "avx512vl": "avx512vl",
    "avx512ifma": "avx512ifma", "avx512vbmi": "avx512vbmi",
    "avx512vbmi2": "avx512_vbmi2", "avx512vnni": "avx512_vnni",
    "avx512bitalg": "avx512_bitalg", "avx512vpopcntdq": "avx512_vpopcntdq",
    "avx512bf16": "avx512_bf16", "avx512fp16": "avx512_fp16",
    "avx512vp2intersect": "avx512_vp2intersect",
}


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def dtype_of(name, where) -> torch.dtype:
    if name not in _DTYPES:
        raise PackageError(where, f"unknown dtype {name!r}")
    return _DTYPES[name]


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


# weights.bin's SHA-256 is also recorded per CHUNK bytes, so that loading
# hashes the chunks on several threads (hashlib and reads release the GIL).
CHUNK = 64 << 20


def chunk_sha256(path: Path, size: int, chunk: int = CHUNK) -> list:
    """The SHA-256 of each `chunk` bytes of the file (the last one
    shorter; one digest of nothing for an empty file), hashed from a
    read-only mapping on several threads."""
    import mmap
    from concurrent.futures import ThreadPoolExecutor

    if size == 0:
        return [hashlib.sha256().hexdigest()]
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), size, access=mmap.ACCESS_READ)
    view = memoryview(mapped)
    try:
        starts = range(0, size, chunk)
        workers = max(1, min(len(starts), os.cpu_count() or 1))
        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(
                lambda s: hashlib.sha256(view[s:s + chunk]).hexdigest(),
                starts))
    finally:
        view.release()
        mapped.close()


_tool_digests: dict = {}


def compiler_identity() -> dict:
    """This attnfuse's version, the runtime's ABI and the SHA-256 of the
    attn-compile binary in use (computed once per binary and mtime)."""
    path = find_tool("attn-compile")
    st = os.stat(path)
    key = (path, st.st_size, st.st_mtime_ns)
    if key not in _tool_digests:
        _tool_digests[key] = file_sha256(Path(path))
    return {"attnfuse": VERSION, "abi": ABI,
            "attn_compile_sha256": _tool_digests[key]}


# ---------------------------------------------------------------------------
# The CPU the code needs
# ---------------------------------------------------------------------------


def library_string(library: ctypes.CDLL, symbol: str):
    """The exported C string `symbol` of a loaded library (its bytes as
    text), or None when it has none."""
    try:
        data = ctypes.c_char.in_dll(library, symbol)
    except ValueError:
        return None
    return ctypes.string_at(ctypes.addressof(data)).decode(errors="replace")


def target_record(library_path: str) -> dict:
    """The `target` section of a manifest from the library's own record
    (`attn_target`: "<cpu>\\n<LLVM features>")."""
    text = library_string(ctypes.CDLL(library_path), "attn_target")
    if text is None:
        raise PackageError(library_path, "the library records no target "
                           "(attn_target): rebuild it with this "
                           "attn-compile")
    cpu, _, features = text.partition("\n")
    return {"cpu": cpu, "features": features,
            "machine": platform.machine(),
            "requires": required_features(features)}


def required_features(features: str) -> list:
    """The features of an LLVM feature string ("+avx2,-amx-tile,...") that
    loading checks against the host: those enabled that CPUINFO_FLAGS
    names."""
    enabled = {f[1:] for f in features.split(",") if f.startswith("+")}
    return sorted(f for f in enabled if f in CPUINFO_FLAGS)


def host_cpu_flags():
    """The CPU flags Linux reports for this host (/proc/cpuinfo), or None
    where it cannot be read."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    m = re.search(r"^flags\s*:(.*)$", text, re.M)
    return set(m.group(1).split()) if m else None


def missing_features(required, flags) -> list:
    """The features of `required` (LLVM names) that `flags` (cpuinfo's)
    lacks."""
    return [f for f in required if CPUINFO_FLAGS[f] not in flags]


# ---------------------------------------------------------------------------
# weights.bin
# ---------------------------------------------------------------------------


class WeightsWriter:
    """The tensors of weights.bin: `add(key, tensor)` once per tensor (the
    same tensor added again under another key is stored once and both keys
    name it), then `write(path)`, which returns the `tensors` table."""

    def __init__(self):
        self._tensors = {}  # key -> tensor
        self._alias = {}  # key -> the key stored
        self._seen = {}  # identity -> key

    def add(self, key: str, tensor: torch.Tensor) -> str:
        t = tensor.detach()
        ident = (t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.dtype) \
            if t.numel() else None
        if ident is not None and ident in self._seen:
            self._alias[key] = self._seen[ident]
            return key
        if key in self._tensors or key in self._alias:
            raise ValueError(f"weights key {key!r} added twice")
        self._tensors[key] = t
        if ident is not None:
            self._seen[ident] = key
        return key

    def write(self, path: Path) -> dict:
        table, offset = {}, 0
        with open(path, "wb") as f:
            for key, t in self._tensors.items():
                data = t.cpu().contiguous().reshape(-1).view(torch.uint8)
                pad = -offset % ALIGNMENT
                f.write(b"\0" * pad)
                offset += pad
                f.write(memoryview(data.numpy()))
                table[key] = {"dtype": dtype_name(t.dtype),
                              "shape": list(t.shape), "offset": offset,
                              "nbytes": data.numel()}
                offset += data.numel()
        for key, stored in self._alias.items():
            table[key] = dict(table[stored])
        return table


def map_weights(path: Path, table: dict, size: int) -> dict:
    """key -> tensor over weights.bin mapped copy-on-write (no copy: the
    pages are the file's until a tensor is written, then the process's
    own), checked against the file's size."""
    mapped = np.memmap(path, dtype=np.uint8, mode="c") if size else None
    out = {}
    for key, e in table.items():
        dtype = dtype_of(e["dtype"], path)
        shape = tuple(e["shape"])
        nbytes = math.prod(shape) * torch.empty((), dtype=dtype).element_size()
        end = e["offset"] + nbytes
        if e["nbytes"] != nbytes or e["offset"] % ALIGNMENT or end > size:
            raise PackageError(path, f"tensor {key!r} ({e['dtype']} "
                               f"{list(shape)}) does not lie at an aligned "
                               f"offset inside the file's {size} bytes")
        if nbytes == 0:
            out[key] = torch.empty(shape, dtype=dtype)
            continue
        raw = torch.from_numpy(mapped[e["offset"]:end])
        out[key] = raw.view(dtype).reshape(shape)
    return out


# ---------------------------------------------------------------------------
# The manifest
# ---------------------------------------------------------------------------


def _canonical(manifest: dict) -> bytes:
    body = {k: v for k, v in manifest.items() if k != "manifest_sha256"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True, allow_nan=True).encode()


def sign(manifest: dict) -> dict:
    """The manifest with its checksum (`manifest_sha256`) set."""
    manifest = dict(manifest)
    manifest["manifest_sha256"] = hashlib.sha256(
        _canonical(manifest)).hexdigest()
    return manifest


def dim_text(d):
    """A dim as the manifest writes it: an int, or the text of a dynamic
    dim (a symbol's name, or an expression of symbols)."""
    return int(d) if isinstance(d, int) else str(d)


class DimExpr(str):
    """A dynamic dim that is an expression of others: the callable checks
    only symbols' agreement and static sizes, as the original does."""
    is_Symbol = False


def dim_value(d, dims: dict):
    """A manifest dim as the callable checks it: int, a sympy Symbol (a
    dynamic dim named in `dims`), or a DimExpr."""
    if isinstance(d, int):
        return d
    if d in dims:
        import sympy
        return sympy.Symbol(d, integer=True, positive=True)
    return DimExpr(d)


@dataclass
class PackagedArg:
    """An argument of an entry point as a package describes it (the
    attributes of the exporter's ArgSpec that calling it needs)."""
    kind: str
    name: str
    type: TensorType | None
    dims: tuple
    written: bool = False
    tensor: str | None = None  # the key in weights.bin it is bound to
    packed: bool = False  # the tensor is a weight's GEMM panels


@dataclass
class PackagedSignature:
    """An entry point as a package describes it: what CompiledModule and
    Generator read of an export (`args`, `results`, `outputs`, `out_spec`,
    `func_name`, `num_user_inputs`, `written`)."""
    func_name: str
    args: list
    results: list
    outputs: list = field(default_factory=list)
    out_spec: object = None
    dims: dict = field(default_factory=dict)
    mlir: str | None = None
    program: object = None

    @property
    def num_user_inputs(self) -> int:
        return sum(1 for a in self.args if a.kind in ("input", "static"))

    @property
    def written(self) -> list:
        return [i for i, a in enumerate(self.args) if a.written]


def arg_record(spec, tensor_key=None, packed_type=None) -> dict:
    """An argument of `entries[...].args`: an exporter ArgSpec (or a
    PackagedArg), with the weights.bin key of its value (state) and, for a
    prepacked weight, the panels' type the function takes instead."""
    t = packed_type or spec.type
    record = {"name": spec.name, "kind": spec.kind,
              "dtype": dtype_name(t.dtype) if t is not None else None,
              "shape": [dim_text(d) for d in (t.dims if packed_type else
                                               spec.dims)],
              "written": bool(spec.written), "tensor": tensor_key,
              "packed": packed_type is not None}
    scheme = getattr(spec, "quant", None)
    if scheme is not None:
        # A weight read quantized: the bytes of its [N, K] layout (or of
        # an [E, N, K] stack of them).
        shape = [int(d) for d in spec.weight_shape]
        record["quantized"] = {"scheme": scheme.name,
                               "group_size":
                                   scheme.resolved_group_size(shape[-1]),
                               "scale_dtype": scheme.scale_dtype,
                               "weight_shape": shape}
    return record


def entry_record(name: str, args: list, results, signature: str,
                 dims: dict) -> dict:
    """An entry of `entries`: the function `name`, the signature its
    library records, its arguments (`arg_record`s), result types and the
    bounds of its dynamic dims (`bounds_of`)."""
    return {"name": name, "signature": signature, "args": args,
            "dims": dims,
            "results": [{"dtype": dtype_name(r.dtype),
                         "shape": [dim_text(d) for d in r.dims]}
                        for r in results]}


def bounds_of(range_constraints) -> dict:
    """`dims` of a manifest from torch.export's range constraints: per
    dynamic dim, its least and greatest value (None: unbounded)."""
    out = {}
    for sym, vr in (range_constraints or {}).items():
        def finite(v):
            try:
                return int(v) if math.isfinite(float(v)) else None
            except (TypeError, ValueError, OverflowError):
                return None
        out[str(sym)] = {"min": finite(vr.lower), "max": finite(vr.upper)}
    return out


def signature_of(entry: dict, dims: dict, where) -> PackagedSignature:
    """The PackagedSignature of a manifest entry (schema-checked)."""
    args = []
    for a in entry["args"]:
        if a["kind"] == "static":
            args.append(PackagedArg("static", a["name"], None, ()))
            continue
        shape = tuple(dim_value(d, dims) for d in a["shape"])
        t = TensorType(shape, dtype_of(a["dtype"], where))
        args.append(PackagedArg(a["kind"], a["name"], t, shape,
                                a["written"], a["tensor"], a["packed"]))
    results = [TensorType(tuple(dim_value(d, dims) for d in r["shape"]),
                          dtype_of(r["dtype"], where))
               for r in entry["results"]]
    return PackagedSignature(entry["name"], args, results, dims=dims)


def signature_text(sig: PackagedSignature) -> tuple:
    """The argument and result types of `sig` as the library's record
    prints them (lists of MLIR types)."""
    args = [str(a.type) for a in sig.args if a.kind != "static"]
    return args, [str(r) for r in sig.results]


def parse_signature(text: str):
    """(argument types, result types) of an `attn_signature_<f>` record,
    or None when it is not one of this ABI."""
    m = re.fullmatch(re.escape(ABI) + r": \((.*?)\) -> (.*)", text, re.S)
    if not m:
        return None
    args = [t for t in m.group(1).split(", ") if t]
    results = m.group(2)
    if results.startswith("(") and results.endswith(")"):
        results = results[1:-1]
    return args, [t for t in results.split(", ") if t]


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------


def write_package(path, manifest: dict, library: Path, header: Path | None,
                  weights: WeightsWriter) -> Path:
    """Writes the package directory `path`: the library and header copied,
    weights.bin, and the manifest (`manifest` with `files`, `tensors` and
    its checksum added). The directory is written beside `path` and
    renamed into place, so a reader sees the old package or the new one;
    an existing package there is replaced, anything else there is
    refused."""
    path = Path(path)
    if path.exists() and not (path.is_dir() and (
            not any(path.iterdir()) or (path / MANIFEST).exists())):
        raise PackageError(path, "exists and is not an attnfuse package "
                           "(no manifest.json): not overwritten")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}."))
    try:
        shutil.copyfile(library, tmp / LIBRARY)
        files = {"library": LIBRARY, "weights": WEIGHTS}
        if header is not None and Path(header).exists():
            shutil.copyfile(header, tmp / HEADER)
            files["header"] = HEADER
        tensors = weights.write(tmp / WEIGHTS)
        manifest = dict(manifest, tensors=tensors, files={
            role: {"name": name, "size": (tmp / name).stat().st_size,
                   "sha256": file_sha256(tmp / name)}
            for role, name in files.items()})
        weights_size = manifest["files"]["weights"]["size"]
        manifest["files"]["weights"].update(
            chunk_size=CHUNK,
            chunk_sha256=chunk_sha256(tmp / WEIGHTS, weights_size))
        text = json.dumps(sign(manifest), indent=1, sort_keys=True)
        (tmp / MANIFEST).write_text(text + "\n")
        os.chmod(tmp, 0o755)
        _replace_dir(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def _replace_dir(new: Path, path: Path):
    """Renames `new` to `path`; an old package there is renamed aside
    first and removed (a process that mapped its files keeps them)."""
    old = None
    if path.exists():
        old = Path(tempfile.mkdtemp(dir=path.parent,
                                    prefix=f".{path.name}.old."))
        os.rename(path, old / "package")
    os.rename(new, path)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------


def _typename(kind) -> str:
    if isinstance(kind, tuple):
        return " or ".join(_typename(k) for k in kind)
    return {str: "a string", int: "an integer", bool: "a boolean",
            list: "a list", dict: "an object",
            type(None): "null"}.get(kind, kind.__name__)


def _field(obj, key, kind, ctx, where):
    """obj[key], which must be of `kind` (a type or a tuple of them;
    int never takes a bool)."""
    if not isinstance(obj, dict):
        raise PackageError(where, f"{ctx} must be an object")
    if key not in obj:
        raise PackageError(where, f"{ctx} has no {key!r}")
    v = obj[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(v, kinds) or (isinstance(v, bool) and
                                    bool not in kinds):
        raise PackageError(where, f"{ctx}.{key} must be "
                           f"{_typename(kind)}, not {v!r:.60}")
    return v


def _list_of(obj, key, kind, ctx, where) -> list:
    items = _field(obj, key, list, ctx, where)
    for i, v in enumerate(items):
        if not isinstance(v, kind) or (isinstance(v, bool) and
                                       bool not in (kind if isinstance(
                                           kind, tuple) else (kind,))):
            raise PackageError(where, f"{ctx}.{key}[{i}] must be "
                               f"{_typename(kind)}, not {v!r:.60}")
    return items


def _check_entries(m: dict, where):
    entries = _field(m, "entries", list, "manifest", where)
    if not entries:
        raise PackageError(where, "manifest.entries is empty")
    for i, e in enumerate(entries):
        ctx = f"entries[{i}]"
        name = _field(e, "name", str, ctx, where)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise PackageError(where, f"{ctx}.name {name!r} is not a C name")
        _field(e, "signature", str, ctx, where)
        for key, d in _field(e, "dims", dict, ctx, where).items():
            _field(d, "min", (int, type(None)), f"{ctx}.dims[{key!r}]", where)
            _field(d, "max", (int, type(None)), f"{ctx}.dims[{key!r}]", where)
        for j, a in enumerate(_field(e, "args", list, ctx, where)):
            actx = f"{ctx}.args[{j}]"
            _field(a, "name", str, actx, where)
            _field(a, "kind", str, actx, where)
            _field(a, "dtype", (str, type(None)), actx, where)
            _list_of(a, "shape", (int, str), actx, where)
            _field(a, "written", bool, actx, where)
            _field(a, "tensor", (str, type(None)), actx, where)
            _field(a, "packed", bool, actx, where)
            if a["dtype"] is None and a["kind"] != "static":
                raise PackageError(where, f"{actx} has no dtype")
        for j, r in enumerate(_field(e, "results", list, ctx, where)):
            _field(r, "dtype", str, f"{ctx}.results[{j}]", where)
            _list_of(r, "shape", (int, str), f"{ctx}.results[{j}]", where)


def check_schema(m: dict, where):
    """The manifest's fields and their types (a PackageError naming the
    first one wrong); `module` and `generator` sections are checked by
    their loaders."""
    kind = _field(m, "kind", str, "manifest", where)
    if kind not in ("module", "generator"):
        raise PackageError(where, f"manifest.kind {kind!r} is neither "
                           f"'module' nor 'generator'")
    _field(m, kind, dict, "manifest", where)
    comp = _field(m, "compiler", dict, "manifest", where)
    for key in ("attnfuse", "abi", "attn_compile_sha256"):
        _field(comp, key, str, "compiler", where)
    target = _field(m, "target", dict, "manifest", where)
    for key in ("cpu", "features", "machine"):
        _field(target, key, str, "target", where)
    _list_of(target, "requires", str, "target", where)
    files = _field(m, "files", dict, "manifest", where)
    for role in ("library", "weights"):
        _field(files, role, dict, "files", where)
    chunk = _field(files["weights"], "chunk_size", int, "files.weights", where)
    digests = _list_of(files["weights"], "chunk_sha256", str, "files.weights",
                       where)
    size = _field(files["weights"], "size", int, "files.weights", where)
    if chunk <= 0 or len(digests) != max(1, -(-size // chunk)):
        raise PackageError(where, "files.weights.chunk_sha256 must hold one "
                           "digest per chunk_size bytes")
    for role, f in files.items():
        name = _field(f, "name", str, f"files.{role}", where)
        if "/" in name or name in ("", ".", ".."):
            raise PackageError(where, f"files.{role}.name {name!r} is not a "
                               f"file name")
        _field(f, "size", int, f"files.{role}", where)
        _field(f, "sha256", str, f"files.{role}", where)
    for key, t in _field(m, "tensors", dict, "manifest", where).items():
        ctx = f"tensors[{key!r}]"
        _field(t, "dtype", str, ctx, where)
        _list_of(t, "shape", int, ctx, where)
        _field(t, "offset", int, ctx, where)
        _field(t, "nbytes", int, ctx, where)
    _check_entries(m, where)


def _read_manifest(path: Path) -> dict:
    where = path / MANIFEST
    if not path.is_dir():
        raise PackageError(path, "no such package directory" if not
                           path.exists() else "not a directory")
    try:
        text = where.read_text()
    except FileNotFoundError:
        raise PackageError(where, "missing: not an attnfuse package "
                           "(CompiledModule.save or Generator.save writes "
                           "one)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise PackageError(where, f"cannot be read: {e}") from None
    try:
        m = json.loads(text)
    except ValueError as e:
        raise PackageError(where, f"is not valid JSON ({e}): the manifest "
                           f"is damaged or truncated") from None
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise PackageError(where, f"is not an attnfuse package manifest "
                           f"(no format {FORMAT!r})")
    version = m.get("format_version")
    if version != FORMAT_VERSION:
        raise PackageError(where, f"has format version {version!r}; this "
                           f"attnfuse {VERSION} reads version "
                           f"{FORMAT_VERSION}: save the package again with "
                           f"this attnfuse")
    digest = m.get("manifest_sha256")
    if digest != hashlib.sha256(_canonical(m)).hexdigest():
        raise PackageError(where, "was changed after it was saved (its "
                           "manifest_sha256 does not match its content): "
                           "a hand-edited or damaged manifest is refused; "
                           "save the package again")
    check_schema(m, where)
    comp = m["compiler"]
    if comp["attnfuse"] != VERSION or comp["abi"] != ABI:
        raise PackageError(where, f"was saved by attnfuse "
                           f"{comp['attnfuse']} ({comp['abi']}); this is "
                           f"attnfuse {VERSION} ({ABI}): save the package "
                           f"again with this version")
    return m


def _check_files(path: Path, m: dict, verify_weights: bool) -> dict:
    """The package's files, each present with the size and (the weights
    with `verify_weights`) the SHA-256 that the manifest records."""
    out = {}
    for role, f in m["files"].items():
        file = path / f["name"]
        try:
            size = file.stat().st_size
        except FileNotFoundError:
            raise PackageError(file, f"missing (the package's {role})") \
                from None
        if size != f["size"]:
            what = "truncated or not the package's" if size < f["size"] \
                else "not the package's"
            raise PackageError(file, f"is {what}: {size} bytes, the "
                               f"manifest records {f['size']}")
        if role == "weights":
            if verify_weights and chunk_sha256(
                    file, size, f["chunk_size"]) != f["chunk_sha256"]:
                raise PackageError(file, "was changed after it was saved "
                                   "(the SHA-256 of a chunk is not the "
                                   "manifest's)")
        elif file_sha256(file) != f["sha256"]:
            raise PackageError(file, "was changed after it was saved (its "
                               "SHA-256 is not the manifest's)")
        out[role] = file
    return out


def _check_target(m: dict, library: Path):
    target = m["target"]
    if target["machine"] != platform.machine():
        raise PackageError(library, f"was compiled for "
                           f"{target['machine']}; this host is "
                           f"{platform.machine()}")
    unknown = [f for f in target["requires"] if f not in CPUINFO_FLAGS]
    if unknown or target["requires"] != required_features(
            target["features"]):
        raise PackageError(library.parent / MANIFEST, "target.requires is "
                           "not the checked features of target.features")
    flags = host_cpu_flags()
    if flags is None:
        raise PackageError(library, "cannot read this host's CPU features "
                           "(/proc/cpuinfo) to check that it can run the "
                           "code")
    missing = missing_features(target["requires"], flags)
    if missing:
        raise PackageError(library, f"was compiled for CPU "
                           f"'{target['cpu']}' and this host cannot run it: "
                           f"it lacks {', '.join(missing)} (compile the "
                           f"model on a host like the one that runs it)")


def _check_tensors(m: dict, weights: Path):
    size = m["files"]["weights"]["size"]
    table = m["tensors"]
    for key, e in table.items():
        dtype = dtype_of(e["dtype"], weights)
        n = math.prod(e["shape"]) * torch.empty((), dtype=dtype).element_size()
        if e["nbytes"] != n or e["offset"] < 0 or \
                e["offset"] % ALIGNMENT or e["offset"] + n > size:
            raise PackageError(weights, f"tensor {key!r} ({e['dtype']} "
                               f"{e['shape']}) does not lie at an aligned "
                               f"offset inside the file's {size} bytes")
    for entry in m["entries"]:
        for a in entry["args"]:
            key = a["tensor"]
            if key is None:
                continue
            if key not in table:
                raise PackageError(weights, f"{entry['name']} argument "
                                   f"{a['name']} is bound to tensor {key!r}, "
                                   f"which the file does not hold")
            t = table[key]
            if t["dtype"] != a["dtype"] or t["shape"] != a["shape"]:
                raise PackageError(weights, f"tensor {key!r} is "
                                   f"{t['dtype']} {t['shape']}; "
                                   f"{entry['name']} argument {a['name']} "
                                   f"takes {a['dtype']} {a['shape']}")


@dataclass
class Package:
    """A package directory whose manifest and files passed the checks of
    `read_package`. `open_library()` loads and checks the library;
    `tensors()` maps weights.bin."""
    path: Path
    manifest: dict
    files: dict

    @property
    def kind(self) -> str:
        return self.manifest["kind"]

    @property
    def library(self) -> str:
        return str(self.files["library"])

    def signatures(self) -> dict:
        """Entry name -> PackagedSignature."""
        return {e["name"]: signature_of(e, e["dims"], self.path / MANIFEST)
                for e in self.manifest["entries"]}

    def open_library(self) -> str:
        """Loads the library and checks its own records against the
        manifest: its target, and each entry's signature, which must also
        be the manifest's arguments and results. Returns its path."""
        lib_path = self.files["library"]
        try:
            lib = ctypes.CDLL(str(lib_path))
        except OSError as e:
            raise PackageError(lib_path, f"cannot be loaded: {e}") from None
        target = library_string(lib, "attn_target")
        want = f"{self.manifest['target']['cpu']}\n" \
               f"{self.manifest['target']['features']}"
        if target != want:
            raise PackageError(lib_path, "records another target than the "
                               "manifest's (the library or the manifest "
                               "is not the package's)")
        sigs = self.signatures()
        for e in self.manifest["entries"]:
            self._check_entry(lib, lib_path, e, sigs[e["name"]])
        return str(lib_path)

    def _check_entry(self, lib, lib_path, e, sig):
        name = e["name"]
        recorded = library_string(lib, f"attn_signature_{name}")
        if recorded is None or not hasattr(lib, "attn_packed_" + name):
            raise PackageError(lib_path, f"has no entry point {name} (no "
                               f"attn_signature_{name} or attn_packed_{name})")
        if recorded != e["signature"]:
            raise PackageError(lib_path, f"records the signature "
                               f"{recorded!r} for {name}; the manifest says "
                               f"{e['signature']!r}")
        parsed = parse_signature(recorded)
        args, results = signature_text(sig)
        if parsed is None or parsed[0] != args or \
                parsed[1][:len(results)] != results:
            raise PackageError(self.path / MANIFEST, f"entry {name}: its "
                               f"arguments ({', '.join(args)}) -> "
                               f"({', '.join(results)}) are not those of "
                               f"the library's {recorded!r}")

    def tensors(self) -> dict:
        """key -> tensor over weights.bin (mapped, not copied)."""
        return map_weights(self.files["weights"], self.manifest["tensors"],
                           self.manifest["files"]["weights"]["size"])


def read_package(path, verify_weights: bool = True) -> Package:
    """Reads and checks the package at `path` (module docstring); no code
    of it is loaded yet. `verify_weights=False` checks weights.bin's size
    but not its SHA-256 (which reads the whole file)."""
    path = Path(path)
    m = _read_manifest(path)
    files = _check_files(path, m, verify_weights)
    _check_tensors(m, files["weights"])
    _check_target(m, files["library"])
    return Package(path, m, files)
