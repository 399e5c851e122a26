"""Reading GGUF files (llama.cpp's model format) without dequantizing them.

    from attnfuse.gguf_file import GGUFFile
    with GGUFFile("model.gguf") as f:
        f.tensors["blk.0.attn_q.weight"]   # GGUFTensor: type, shape, mmap view
        config = f.config()                # a transformers config
        weights = f.hf_weights()           # {HF parameter name: GGUFWeight}

The file is parsed with the `gguf` package's GGUFReader, memory-mapped:
a tensor's `data` is a read-only view of the file, never a copy. The
model config and the GGUF -> Hugging Face name mapping are transformers'
own GGUF support (`load_gguf_checkpoint`'s config, `get_gguf_hf_weights_map`,
the per-architecture `TENSOR_PROCESSORS`), so a file means here what it
means to `from_pretrained(..., gguf_file=...)`. What differs: quantized
tensors (q8_0, q4_0, q4_k, q6_k) stay packed, as `QuantizedTensor`s over
the mapped bytes. A transformers conversion that reorders whole rows (Llama's
reverse of llama.cpp's rotary q/k permutation) is applied to the rows of
blocks, exact because blocks run along K; one that changes values or
columns of a quantized tensor is refused. Float tensors (F32, F16, BF16)
come back as float32 torch tensors, as transformers loads them.

A mixture of experts' tensors (`blk.N.ffn_{gate,up,down}_exps`, [E, N, K]
in torch order) are stacks: `ffn_down_exps` stays a mapped view; the
gate and up stacks, which transformers merges into one `gate_up_proj`
([E, 2N, K]: each expert's gate rows, then its up rows), are merged the
same way byte for byte (a copy of those two tensors, still packed; both
must have one type).

Every problem with a file (truncated, not GGUF, an unknown or unsupported
ggml type, an architecture transformers cannot read, tensor shapes that
disagree with the metadata, missing tensors) raises `GGUFError`, naming the
file and the tensor.
"""

from __future__ import annotations

import mmap
import os
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Optional, Union

import numpy as np
import torch

from .errors import AttnFuseError
from .quant import GGUF_SCHEMES, QuantizedTensor

_F32, _F16, _BF16 = 0, 1, 30
FLOAT_TYPES = {_F32: "F32", _F16: "F16", _BF16: "BF16"}
SUPPORTED_TYPES = ("F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_K", "Q6_K")


class GGUFError(AttnFuseError, ValueError):
    """A GGUF file that attnfuse cannot read: the message names the file,
    the tensor and what is wrong."""


class _Bad(Exception):
    """A problem found inside the reader, before the path is known."""


def _checked_reader_class():
    """GGUFReader with bounds checks: every read inside the file, every
    tensor's type known, its rows whole blocks, its data inside the file."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, GGUFReader, GGUFValueType

    class CheckedReader(GGUFReader):
        def _get_field_parts(self, orig_offs, raw_type):
            # An array's count must fit in the file before the reader loops
            # over it (a corrupt count would otherwise exhaust memory).
            if raw_type == GGUFValueType.ARRAY:
                item = int(self._get(orig_offs, np.uint32)[0])
                count = int(self._get(orig_offs + 4, np.uint64)[0])
                scalar = self.gguf_scalar_to_np.get(item)
                least = np.dtype(scalar).itemsize if scalar is not None else (8 if item == 8 else 12)
                if orig_offs + 12 + count * least > self.data.size:
                    raise _Bad(f"truncated: a metadata array of {count} elements at byte "
                               f"{orig_offs} runs past the end of the file ({self.data.size} bytes)")
            return super()._get_field_parts(orig_offs, raw_type)

        def _get(self, offset, dtype, count=1, override_order=None):
            end = int(offset) + np.dtype(dtype).itemsize * int(count)
            if int(count) < 0 or end > self.data.size:
                raise _Bad(f"truncated: reading bytes up to {end} but the file "
                           f"has {self.data.size}")
            return super()._get(offset, dtype, count, override_order)

        def _build_tensors(self, start_offs, fields):
            for field in fields:
                _, name, _, dims, raw_type, offset = field.parts
                name = bytes(name).decode("utf-8", "replace")
                try:
                    kind = GGMLQuantizationType(int(raw_type[0]))
                except ValueError:
                    raise _Bad(f"tensor {name!r} has unknown ggml type id "
                               f"{int(raw_type[0])}") from None
                block, size = GGML_QUANT_SIZES[kind]
                shape = [int(d) for d in reversed(dims.tolist())]
                if shape and shape[-1] % block:
                    raise _Bad(f"tensor {name!r} ({kind.name} {shape}): rows of "
                               f"{shape[-1]} are not whole {kind.name} blocks of {block}")
                if int(offset[0]) % self.alignment:
                    raise _Bad(f"tensor {name!r}: data offset {int(offset[0])} is not "
                               f"aligned to {self.alignment}")
                start = start_offs + int(offset[0])
                end = start + int(np.prod(shape, dtype=np.int64)) // block * size
                if end > self.data.size:
                    raise _Bad(f"truncated: tensor {name!r} ({kind.name} {shape}) needs "
                               f"bytes [{start}, {end}) but the file has {self.data.size}")
            super()._build_tensors(start_offs, fields)

    return CheckedReader


def _drop_mapped_pages(view: np.ndarray) -> None:
    """Drops the whole pages of a read-only file mapping under `view` from
    this process's resident set (madvise MADV_DONTNEED): the file's page
    cache keeps them and a later read maps them again, so the values are
    unchanged."""
    # The memmap made over the mapping (a slice of it is a memmap too,
    # sharing its mmap): its base is the mmap object.
    root = view
    while root is not None and not isinstance(root.base, mmap.mmap):
        root = root.base
    if root is None or view.nbytes == 0:
        return
    region = root.base
    # The memmap's data starts `offset` into the file, the mapping at that
    # offset rounded down to the allocation granularity.
    start = (view.ctypes.data - root.ctypes.data
             + root.offset % mmap.ALLOCATIONGRANULARITY)
    page = mmap.PAGESIZE
    lo = -(-start // page) * page
    hi = (start + view.nbytes) // page * page
    if hi > lo:
        region.madvise(mmap.MADV_DONTNEED, lo, hi - lo)


def _open_reader(path: str):
    """A memory-mapped GGUFReader for `path`, or GGUFError."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError as e:
        raise GGUFError(f"{path}: cannot open: {e}") from e
    if magic != b"GGUF":
        raise GGUFError(f"{path}: not a GGUF file (magic {magic!r}, expected b'GGUF')")
    if size < 24:
        raise GGUFError(f"{path}: truncated: {size} bytes, shorter than a GGUF header")
    try:
        return _checked_reader_class()(path, "r")
    except _Bad as e:
        raise GGUFError(f"{path}: {e}") from None
    except (ValueError, KeyError, IndexError, OverflowError, TypeError,
            UnicodeDecodeError, MemoryError) as e:
        raise GGUFError(f"{path}: malformed GGUF header: {type(e).__name__}: {e}") from e


@dataclass(frozen=True, eq=False)
class GGUFTensor:
    """One tensor of a GGUF file. shape is in torch order (rows first: a
    matrix is [N, K]); data is a read-only memory-mapped view of the stored
    elements (float32/float16 for F32/F16, the raw bytes [..., row_bytes]
    for BF16 and block types); offset is the absolute byte offset."""

    file: str
    name: str
    ggml_type: str
    type_id: int
    shape: tuple
    offset: int
    nbytes: int
    data: np.ndarray

    @property
    def quantized(self) -> bool:
        """Stored as blocks (any block type, supported or not)."""
        return self.type_id not in FLOAT_TYPES and self.data.dtype == np.uint8

    @property
    def supported(self) -> bool:
        return self.ggml_type in SUPPORTED_TYPES

    def _unsupported(self) -> GGUFError:
        return GGUFError(f"{self.file}: tensor {self.name!r} has ggml type {self.ggml_type}, "
                         f"which attnfuse does not read (supported: {', '.join(SUPPORTED_TYPES)})")

    def to_quantized(self) -> QuantizedTensor:
        """The packed tensor over the mapped bytes (no copy): an [N, K]
        matrix, or an [E, N, K] stack (experts: matrices back to back)."""
        if self.type_id not in GGUF_SCHEMES:
            raise self._unsupported()
        if len(self.shape) not in (2, 3):
            raise GGUFError(f"{self.file}: tensor {self.name!r} is a {len(self.shape)}-D "
                            f"{self.ggml_type} tensor {list(self.shape)}; attnfuse reads "
                            "quantized 2-D [N, K] matrices and 3-D [E, N, K] stacks only")
        return QuantizedTensor(self.data.reshape(-1), self.shape, GGUF_SCHEMES[self.type_id])

    def to_numpy(self) -> np.ndarray:
        """A float32 copy of a float tensor (exact for F16 and BF16)."""
        if self.type_id == _F32:
            return np.array(self.data, dtype=np.float32)
        if self.type_id == _F16:
            return self.data.astype(np.float32)
        if self.type_id == _BF16:
            bits = self.data.view("<u2").astype(np.uint32) << 16
            return bits.view(np.float32).reshape(self.shape)
        raise self._unsupported()


@dataclass(frozen=True, eq=False)
class GGUFWeight:
    """A model parameter read from a GGUF file: `value` is a QuantizedTensor
    (q8_0/q4_0/q4_k/q6_k, still packed) or a float32 torch.Tensor.
    row_permutation: HF row r is the file's row row_permutation[r] (None when
    the rows are as stored)."""

    hf_name: str
    gguf_name: str
    ggml_type: str
    value: Union[QuantizedTensor, torch.Tensor]
    row_permutation: Optional[np.ndarray] = None

    @property
    def quantized(self) -> bool:
        return isinstance(self.value, QuantizedTensor)

    @property
    def shape(self) -> tuple:
        return tuple(self.value.shape)


class GGUFFile:
    """A GGUF file, memory-mapped; see the module docstring."""

    def __init__(self, path: Union[str, os.PathLike]):
        self.path = os.fspath(path)
        self._reader = _open_reader(self.path)
        self.tensors = {t.name: self._record(t) for t in self._reader.tensors}

    def _record(self, t) -> GGUFTensor:
        shape = tuple(int(d) for d in reversed(t.shape.tolist()))
        return GGUFTensor(self.path, t.name, t.tensor_type.name, int(t.tensor_type),
                          shape, int(t.data_offset), int(t.n_bytes), t.data)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        """Drop this object's references to the mapping (views handed out
        keep it alive until they go)."""
        self._reader = None
        self.tensors = {}

    def __repr__(self):
        return f"GGUFFile({self.path!r}, {len(self.tensors)} tensors)"

    @cached_property
    def metadata(self) -> dict:
        """The key/value metadata (`general.architecture`, `llama.block_count`,
        ...), values as Python scalars, strings or lists."""
        out = {}
        for key, field in self._reader.fields.items():
            if not key.startswith("GGUF."):
                out[key] = self._contents(key, field)
        return out

    def _contents(self, key, field):
        try:
            return field.contents()
        except (ValueError, IndexError, TypeError) as e:  # bad UTF-8, bad array
            raise GGUFError(f"{self.path}: malformed metadata value {key!r}: {e}") from e

    @property
    def architecture(self) -> str:
        field = self._reader.fields.get("general.architecture") if self._reader else None
        if field is None:
            raise GGUFError(f"{self.path}: no general.architecture in the metadata")
        return self._contents("general.architecture", field)

    @cached_property
    def _config_parts(self):
        """(transformers' parsed config dict, the config object)."""
        from transformers.integrations.gguf import GGUF_ARCHS
        from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint
        from transformers.models.auto.configuration_auto import CONFIG_MAPPING

        arch = self.architecture
        if arch in GGUF_ARCHS:
            raise GGUFError(f"{self.path}: architecture {arch!r} goes through transformers' "
                            "weight-conversion GGUF loader, which attnfuse does not follow yet")
        try:
            parsed = load_gguf_checkpoint(self.path, return_tensors=False)["config"]
            self._expert_sizes(arch, parsed, CONFIG_MAPPING[parsed["model_type"]])
            config = CONFIG_MAPPING[parsed["model_type"]].from_dict(dict(parsed))
        except Exception as e:  # transformers' parsing and config validation
            raise GGUFError(f"{self.path}: architecture {arch!r} is not supported by "
                            f"transformers' GGUF support: {type(e).__name__}: {e}") from e
        return parsed, config

    # GGUF keys of experts' sizes that transformers' GGUF config mapping
    # leaves out (so Qwen2/3-MoE files got the config class's default
    # moe_intermediate_size, whatever the file holds): config attribute.
    _EXPERT_SIZES = {"expert_feed_forward_length": "moe_intermediate_size",
                     "expert_shared_feed_forward_length": "shared_expert_intermediate_size"}

    def _expert_sizes(self, arch: str, parsed: dict, config_class) -> None:
        """Fills the experts' sizes transformers does not read into
        `parsed`, where its config class has them."""
        defaults = config_class()
        for key, attr in self._EXPERT_SIZES.items():
            field = self._reader.fields.get(f"{arch}.{key}")
            if field is not None and attr not in parsed and hasattr(defaults, attr):
                parsed[attr] = int(self._contents(key, field))

    def config(self):
        """The transformers config the metadata describes (what
        `AutoConfig.from_pretrained(dir, gguf_file=name)` gives, plus the
        experts' sizes it leaves out: `_EXPERT_SIZES`)."""
        return self._config_parts[1]

    def hf_weights(self) -> dict:
        """{HF parameter name: GGUFWeight} for every tensor transformers maps
        (see the module docstring). Quantized ones are not dequantized."""
        from transformers.modeling_gguf_pytorch_utils import (
            TENSOR_PROCESSORS, TensorProcessor, get_gguf_hf_weights_map)

        parsed, config = self._config_parts
        self._check_block_count(config)
        model = self._meta_model(config)
        processor = TENSOR_PROCESSORS.get(self.architecture, TensorProcessor)(config=parsed)
        mapping = get_gguf_hf_weights_map(model, processor)
        expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
        weights, halves = {}, {}
        converted = [self._convert(t, processor, mapping, halves)
                     for t in self.tensors.values()]
        converted += [self._merge_gate_up(hf, parts) for hf, parts in halves.items()]
        for tensor, weight in converted:
            if weight is None:
                continue
            want = expected.get(weight.hf_name)
            if want is not None and weight.shape != want:
                raise GGUFError(
                    f"{self.path}: tensor {tensor.name!r} ({tensor.ggml_type} "
                    f"{list(tensor.shape)}) holds {weight.hf_name}, which the metadata's "
                    f"config makes {list(want)}: {self._config_summary(config)}")
            weights[weight.hf_name] = weight
        self._check_complete(weights, expected, model, config)
        return weights

    def model(self, dtype=torch.float32, dequantize: bool = False):
        """(transformers causal LM of the file's config, {parameter name:
        QuantizedTensor}): every `nn.Linear` weight, `nn.Embedding`
        table and experts' stack stored quantized is in the dict (under
        each name of a tied parameter), as stored (packed, mapped from the
        file; the merged gate/up experts a packed copy), and its
        parameter in the model is left uninitialised (allocated, never
        written, so it takes no memory) unless `dequantize` fills it with
        the dequantized values (the float reference). Other tensors (float
        ones, and quantized ones that another kind of module reads) are
        loaded into the model in `dtype`, dequantized where stored
        quantized."""
        from transformers import AutoModelForCausalLM
        config = self.config()
        weights = self.hf_weights()
        with _uninitialised_weights():
            try:
                model = AutoModelForCausalLM.from_config(config, dtype=dtype)
            except Exception as e:  # transformers' model construction
                raise GGUFError(f"{self.path}: no transformers causal-LM "
                                f"model for {type(config).__name__}: "
                                f"{e}") from e
        # Uninitialised, the model has not tied its head to the embeddings
        # either (transformers ties them in init_weights).
        model.tie_weights()
        model.eval()
        aliases = _quantizable_weights(model)
        params = dict(model.named_parameters(remove_duplicate=False))
        given, loaded = {}, set()
        with torch.no_grad():
            for name, w in weights.items():
                p = params.get(name)
                if p is None:
                    continue
                loaded.add(id(p))
                if w.quantized and (name in aliases or w.value.is_stack):
                    # A stack: the experts' [E, N, K] parameter, which the
                    # compiled model's grouped products read quantized.
                    given.update({alias: w.value for alias in aliases.get(name, [name])})
                    if dequantize:
                        p.copy_(w.value.dequantize().to(dtype))
                else:
                    value = w.value.dequantize() if w.quantized else w.value
                    p.copy_(value.to(dtype))
        unloaded = sorted(n for n, p in params.items() if id(p) not in loaded)
        if unloaded:
            raise GGUFError(f"{self.path}: no tensor for {unloaded[0]} of the "
                            f"model the metadata describes "
                            f"({self._config_summary(config)})")
        # The stored bytes nothing reads again (tensors loaded into the
        # model as floats, q/k rows and merged experts copied) leave the
        # process's resident set; the given tensors' stay mapped.
        kept = [qt.data for qt in given.values()]
        for tensor in self.tensors.values():
            if not any(np.may_share_memory(tensor.data, k) for k in kept):
                _drop_mapped_pages(tensor.data)
        return model, given

    def _check_block_count(self, config) -> None:
        """The layer count the metadata states against the file's `blk.N.`
        tensors, before a model of that many layers is built."""
        layers = getattr(config, "num_hidden_layers", None)
        blocks = {name.split(".")[1] for name in self.tensors if name.startswith("blk.")}
        if isinstance(layers, int) and blocks and layers != len(blocks):
            raise GGUFError(f"{self.path}: the metadata says {layers} layers (block_count) "
                            f"but the file has tensors for {len(blocks)} blocks")

    def _meta_model(self, config):
        """The HF model on the meta device: names and shapes, no memory."""
        from transformers import AutoModelForCausalLM
        try:
            with torch.device("meta"):
                return AutoModelForCausalLM.from_config(config)
        except Exception as e:  # transformers' model construction
            raise GGUFError(f"{self.path}: no transformers causal-LM model for "
                            f"{type(config).__name__}: {e}") from e

    def _convert(self, tensor: GGUFTensor, processor, mapping, halves):
        """(tensor, its GGUFWeight as transformers maps it), the weight None
        when it maps to no parameter (transformers skips those too) or is
        half of a merged experts' stack (kept in `halves` by HF name)."""
        pattern = getattr(processor, "GGUF_MOE_WEIGHTS_PATTERN", None)
        m = re.fullmatch(pattern, tensor.name) if pattern is not None else None
        if m is not None and m["name"] in mapping:
            return tensor, self._experts(tensor, m["w"], mapping[m["name"]], halves)
        return tensor, self._convert_one(tensor, processor, mapping)

    def _experts(self, tensor: GGUFTensor, which: str, hf_name: str, halves):
        """An experts' stack [E, N, K]: down as it is, gate and up kept
        until both are read (`_merge_gate_up`)."""
        if len(tensor.shape) != 3:
            raise GGUFError(f"{self.path}: tensor {tensor.name!r} holds experts, "
                            f"so it must be 3-D [E, N, K], not {list(tensor.shape)}")
        if not tensor.supported:
            raise tensor._unsupported()
        if which != "down":
            parts = halves.setdefault(hf_name, {})
            if which in parts:
                raise GGUFError(f"{self.path}: two ffn_{which}_exps tensors for "
                                f"{hf_name}")
            parts[which] = tensor
            return None
        value = tensor.to_quantized() if tensor.quantized else \
            torch.from_numpy(tensor.to_numpy().reshape(tensor.shape))
        return GGUFWeight(hf_name, tensor.name, tensor.ggml_type, value)

    def _merge_gate_up(self, hf_name: str, parts: dict):
        """transformers' gate_up_proj [E, 2N, K] from ffn_gate_exps and
        ffn_up_exps [E, N, K]: expert e's gate rows, then its up rows; for
        quantized stacks the rows of blocks, exactly."""
        if set(parts) != {"gate", "up"}:
            have = next(iter(parts.values()))
            missing = ({"gate", "up"} - set(parts)).pop()
            raise GGUFError(f"{self.path}: tensor {have.name!r} has no ffn_{missing}_exps "
                            f"beside it ({hf_name} needs both)")
        gate, up = parts["gate"], parts["up"]
        if gate.shape != up.shape or gate.type_id != up.type_id:
            raise GGUFError(f"{self.path}: {gate.name!r} ({gate.ggml_type} {list(gate.shape)}) "
                            f"and {up.name!r} ({up.ggml_type} {list(up.shape)}) differ; "
                            f"{hf_name} merges them, so they need one type and shape")
        e, n, k = gate.shape
        if gate.quantized:
            g, u = gate.to_quantized(), up.to_quantized()
            data = np.concatenate([g.data.reshape(e, -1), u.data.reshape(e, -1)], axis=1)
            value = QuantizedTensor(data.reshape(-1), (e, 2 * n, k), g.scheme)
        else:
            value = torch.from_numpy(np.concatenate(
                [gate.to_numpy().reshape(gate.shape), up.to_numpy().reshape(up.shape)], axis=1))
        return gate, GGUFWeight(hf_name, f"{gate.name}+{up.name}", gate.ggml_type, value)

    def _convert_one(self, tensor: GGUFTensor, processor, mapping) -> Optional[GGUFWeight]:
        """One file tensor as transformers maps it, or None when it maps to
        no parameter (transformers skips those too)."""
        kwargs = {"tensor_key_mapping": mapping, "parsed_parameters": {"tensors": {}, "config": {}}}
        perm, values = None, None
        if tensor.quantized:
            name, perm = self._row_order(tensor, processor, kwargs)
        else:
            if tensor.type_id not in FLOAT_TYPES:
                name = tensor.name if tensor.name in mapping else None
            else:
                try:
                    result = processor.process(weights=tensor.to_numpy(), name=tensor.name, **kwargs)
                except Exception as e:  # transformers' conversion of this tensor
                    raise GGUFError(f"{self.path}: tensor {tensor.name!r}: transformers' "
                                    f"{type(processor).__name__} fails on it: {e}") from e
                name, values = result.name, result.weights
        if name is None and tensor.name in mapping:
            raise GGUFError(f"{self.path}: tensor {tensor.name!r}: transformers' "
                            f"{type(processor).__name__} merges it into other tensors "
                            "(experts), which attnfuse does not support")
        if name not in mapping:
            return None
        if not tensor.supported:
            raise tensor._unsupported()
        if tensor.quantized:
            qt = tensor.to_quantized()
            value = qt if perm is None else qt.permute_rows(perm)
        else:
            value = torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32))
        return GGUFWeight(mapping[name], tensor.name, tensor.ggml_type, value, perm)

    def _row_order(self, tensor: GGUFTensor, processor, kwargs):
        """Run transformers' processor on a column of row indices: a
        conversion that only reorders whole rows gives a permutation of them,
        which is applied to the packed rows; anything else is refused."""
        if len(tensor.shape) != 2:
            return (tensor.name, None)
        n = tensor.shape[0]
        probe = np.arange(n, dtype=np.float64).reshape(n, 1)
        what = f"{self.path}: tensor {tensor.name!r} ({tensor.ggml_type} {list(tensor.shape)})"
        try:
            result = processor.process(weights=probe, name=tensor.name, **kwargs)
        except Exception as e:  # the processor assumed dequantized values
            raise GGUFError(f"{what}: transformers' {type(processor).__name__} cannot "
                            f"convert it without dequantizing: {type(e).__name__}: {e}") from e
        if result.name is None:
            return None, None
        out = np.asarray(result.weights)
        if out.shape != (n, 1) or not np.array_equal(np.sort(out[:, 0]), probe[:, 0]):
            raise GGUFError(f"{what}: transformers' {type(processor).__name__} changes its "
                            "values or columns, not only the order of its rows, so it "
                            "cannot stay packed")
        perm = out[:, 0].astype(np.int64)
        return result.name, (None if np.array_equal(perm, np.arange(n)) else perm)

    def _check_complete(self, weights, expected, model, config) -> None:
        tied = getattr(model, "_tied_weights_keys", None) or {}
        text = config.get_text_config() if hasattr(config, "get_text_config") else config
        skip = set(tied) if getattr(text, "tie_word_embeddings", False) else set()
        missing = sorted(set(expected) - set(weights) - skip)
        if missing:
            shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            raise GGUFError(f"{self.path}: no tensor for {shown} "
                            f"(the metadata describes {self._config_summary(config)})")

    @staticmethod
    def _config_summary(config) -> str:
        keys = ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                "num_key_value_heads", "head_dim", "vocab_size")
        return ", ".join(f"{k}={getattr(config, k)}" for k in keys if hasattr(config, k))


def _quantizable_weights(model) -> dict:
    """{name: every name of that parameter} for the parameters that only
    `nn.Linear` (as its weight) and `nn.Embedding` (as its table) modules
    hold: those attn.quantized_matmul and attn.quantized_embedding read
    (a LM head tied to the embeddings is one, under two names)."""
    holders = {}
    for mod_name, module in model.named_modules(remove_duplicate=False):
        for attr, p in module.named_parameters(recurse=False):
            name = f"{mod_name}.{attr}" if mod_name else attr
            ok = isinstance(module, (torch.nn.Linear, torch.nn.Embedding)) \
                and attr == "weight"
            holders.setdefault(id(p), []).append((name, ok))
    out = {}
    for names in holders.values():
        if all(ok for _, ok in names):
            every = [name for name, _ in names]
            out.update({name: every for name in every})
    return out


def _uninitialised_weights():
    """transformers' context in which a model's parameters are allocated
    but not initialised (from_pretrained's); a no-op where this version
    of transformers has none (the model is then initialised first)."""
    import contextlib
    try:
        from transformers.initialization import no_init_weights
    except ImportError:  # pragma: no cover - other transformers versions
        return contextlib.nullcontext()
    return no_init_weights()


def compile_generator_from_gguf(path: Union[str, os.PathLike], max_batch: int = 1,
                                max_cache_len: int = 256, dtype=torch.float32,
                                **options):
    """A Generator for the causal LM in GGUF file `path`: the model built
    from the file's metadata with transformers' GGUF mapping, every linear
    layer's weight read as the file stores it (q8_0, q4_0, q4_k, q6_k:
    memory-mapped, never dequantized or copied; float types as floats),
    the other weights loaded in `dtype` (the activations' and the KV
    cache's type: float32 or bfloat16). `options` are
    `attnfuse.compile_generator`'s (decode_lengths, backend, huge_pages,
    activations, progress; `activations="int8"`: the quantized tensors'
    products on int8-quantized inputs in integers where the CPU has an
    integer dot, `attnfuse.compile`'s option). A file attnfuse cannot read
    is a GGUFError naming the file and the tensor."""
    from .generation import compile_generator
    if "weights" in options or "group_size" in options:
        raise TypeError("compile_generator_from_gguf reads the weights as "
                        "the file stores them: no weights= or group_size=")
    model, given = GGUFFile(path).model(dtype)
    generator = compile_generator(model, max_batch, max_cache_len,
                                  weights=given, **options)
    # Every tensor left packed must be read packed: its float parameter
    # was never loaded.
    read = {id(qt) for qt in generator.quantized.values()}
    unread = sorted(name for name, qt in given.items() if id(qt) not in read)
    if unread:
        raise GGUFError(f"{path}: the compiled model reads {unread[0]} "
                        f"other than as a linear layer's weight or an "
                        f"embedding table, which attnfuse cannot read packed")
    return generator


def load_gguf(path: Union[str, os.PathLike]):
    """(transformers config, {HF parameter name: GGUFWeight}) of a GGUF file."""
    f = GGUFFile(path)
    return f.config(), f.hf_weights()
