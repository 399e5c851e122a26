"""PyTorch module -> AttnFuse MLIR text.

`torch.export(...).run_decompositions({})` keeps the ops a hand-written
attention is made of (`matmul`, `softmax.int`, `masked_fill.Scalar`,
`scaled_dot_product_attention`, `transpose.int`, `view`, `split.Tensor`,
`linear`), which map one to one onto `attn` ops, so `attn-opt
--attn-fuse-sdpa` sees the chain as written. Everything around the attention
(projections, reshapes, slices, comparisons) becomes upstream
`linalg`/`tensor`/`arith` ops, which the CPU pipeline compiles.

Masks built in the module from static sizes (`torch.ones(L, S).tril()`,
`triu`, `arange` comparisons, `finfo.min` fills) are folded here, with
PyTorch itself, into dense `i1` constants, the form from which the fusion
recognises a causal mask. An aten op without a mapping is an ExportError
naming the op and the module's source line, never a silently wrong graph.
"""

from __future__ import annotations

import linecache
import math
import operator
import os
import re
import warnings
from dataclasses import dataclass, field

import torch
import torch.fx

from . import mlir
from .errors import ExportError
from .mlir import FunctionBuilder, TensorType, Value, affine_map, f64_attr

aten = torch.ops.aten

# How a train-mode dropout is exported (see `export`): the attn.dropout RNG is
# a counter-based hash, not PyTorch's generator.
TRAIN_DROPOUT_POLICIES = ("error", "warn")


@dataclass
class Const:
    """A value known at export time (folded with PyTorch)."""
    value: object


@dataclass
class SymSize:
    """A dynamic size (a sympy expression); never folded."""
    expr: object


@dataclass
class ArgSpec:
    kind: str  # "input", "parameter", "buffer", "constant"
    name: str  # the user input's name or the state's qualified name
    type: TensorType
    dims: tuple  # per dim: int or the sympy symbol of a dynamic dim


@dataclass
class Exported:
    """An exported module: MLIR text and what the function's arguments are."""
    mlir: str
    func_name: str
    args: list[ArgSpec]
    results: list[TensorType]
    program: object  # the torch.export ExportedProgram
    num_user_inputs: int
    notes: list[str] = field(default_factory=list)


_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep


def source_of(node: torch.fx.Node):
    """(file, line, code) of the innermost frame of the node's stack trace:
    the module's own source line."""
    trace = node.meta.get("stack_trace") or ""
    frames = re.findall(r'File "([^"]+)", line (\d+), in [^\n]*\n\s*([^\n]*)',
                        trace)
    if not frames:
        return None
    # The innermost frame outside torch itself: the module's line, not
    # nn.Linear's.
    user = [f for f in frames if not f[0].startswith(_TORCH_DIR)]
    file, line, code = (user or frames)[-1]
    return file, int(line), code.strip()


def describe(node: torch.fx.Node) -> str:
    src = source_of(node)
    if not src:
        return f"node {node.name}"
    file, line, code = src
    return f"{file}:{line}: {code}"


def _loc(node: torch.fx.Node) -> str:
    src = source_of(node)
    if not src:
        return f'loc("{node.name}")'
    file = src[0].replace("\\", "\\\\").replace('"', '\\"')
    return f'loc("{file}":{src[1]}:1)'


def _flat_nodes(args):
    for a in args:
        if isinstance(a, torch.fx.Node):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from _flat_nodes(a)


def _is_seeded_random(target) -> bool:
    tags = getattr(target, "tags", ())
    return torch.Tag.nondeterministic_seeded in tags


# Ops that are the identity on values (tensors have value semantics here).
_IDENTITY_OPS = {
    aten.clone.default, aten.contiguous.default, aten.alias.default,
    aten.detach.default, aten.lift_fresh_copy.default,
}
# Ops that only check metadata at run time in PyTorch.
_NO_OP_OPS = {
    aten._assert_tensor_metadata.default, aten._assert_scalar.default,
    aten.sym_constrain_range_for_size.default,
}


class _Exporter:
    def __init__(self, program, constants, train_dropout: str):
        if train_dropout not in TRAIN_DROPOUT_POLICIES:
            raise ValueError(f"train_dropout must be one of "
                             f"{TRAIN_DROPOUT_POLICIES}, not {train_dropout!r}")
        self.program = program
        self.constants = constants
        self.train_dropout = train_dropout
        self.b = FunctionBuilder()
        self.env: dict = {}
        self.args: list[tuple[ArgSpec, Value]] = []
        self.notes: list[str] = []
        self.num_dropouts = 0
        self.node = None
        # Boolean values whose exact negation is cheap to build (a `not`, a
        # comparison): masked_fill(x, m, v) with such an m is written
        # where(not m, x, v), so the fusion gets a keep-mask and need not
        # invert a run-time mask (it cannot when the mask is dynamic).
        self.inverses: dict = {}
        self.all_true: set = set()  # run-time all-true masks (ones(T, T))

    # ---- errors -----------------------------------------------------------
    def fail(self, message: str):
        raise ExportError(f"{message}\n  at {describe(self.node)}")

    def unsupported(self, what: str = ""):
        target = self.node.target
        name = getattr(target, "__name__", str(target))
        if isinstance(target, torch._ops.OpOverload):
            name = f"aten.{target.__name__}"
        detail = f" ({what})" if what else ""
        self.fail(f"aten op {name} has no AttnFuse mapping{detail}; "
                  f"rewrite that line with supported ops or leave the module "
                  f"to PyTorch")

    # ---- signature --------------------------------------------------------
    def _state(self, spec):
        p = self.program
        name = spec.target
        if name in p.state_dict:
            return p.state_dict[name]
        return p.constants[name]

    def _fold_state(self, kind: str, name: str) -> bool:
        c = self.constants
        if kind == "constant":
            return True
        if c is True:
            return True
        if c in (False, None):
            return False
        if c == "buffers":
            return kind == "buffer"
        return name in set(c)

    def _signature(self):
        from torch.export.graph_signature import InputKind
        kinds = {InputKind.PARAMETER: "parameter", InputKind.BUFFER: "buffer",
                 InputKind.CONSTANT_TENSOR: "constant",
                 InputKind.USER_INPUT: "input"}
        specs = self.program.graph_signature.input_specs
        placeholders = [n for n in self.program.graph.nodes
                        if n.op == "placeholder"]
        for node, spec in zip(placeholders, specs):
            self.node = node
            kind = kinds.get(spec.kind)
            if kind is None:
                self.fail(f"input kind {spec.kind} is not supported")
            fake = node.meta.get("val")
            if not isinstance(fake, torch.Tensor):
                self.fail(f"input {node.name} is not a tensor ({fake!r}); "
                          f"only tensor inputs are supported")
            name = spec.target if kind != "input" else spec.arg.name
            if kind != "input" and self._fold_state(kind, name):
                self.env[node] = Const(self._state(spec).detach())
                continue
            type_ = TensorType.of(fake)
            type_.elt  # raises for unsupported element types
            value = Value(f"%arg{len(self.args)}", type_)
            self.args.append((ArgSpec(kind, name, type_, type_.dims), value))
            self.env[node] = value

    def _bind_symbols(self):
        """Each symbol of a dynamic dim gets `tensor.dim` of the first
        argument that has it as a plain dim."""
        for spec, value in self.args:
            for i, d in enumerate(value.type.dims):
                if isinstance(d, int) or not d.is_Symbol:
                    continue
                if d not in self.b.symbols:
                    c = self.b.index(i)
                    self.b.symbols[d] = self.b.emit(
                        f"tensor.dim {value.name}, {c} : {value.type}")

    # ---- values -----------------------------------------------------------
    def resolve(self, a):
        if isinstance(a, torch.fx.Node):
            return self.env[a]
        if isinstance(a, (list, tuple)):
            return type(a)(self.resolve(x) for x in a)
        return a

    @staticmethod
    def concrete(a):
        if isinstance(a, Const):
            return a.value
        if isinstance(a, (list, tuple)):
            return type(a)(_Exporter.concrete(x) for x in a)
        return a

    def out_type(self, node=None) -> TensorType:
        fake = (node or self.node).meta.get("val")
        if not isinstance(fake, torch.Tensor):
            self.fail("expected a tensor result")
        return TensorType.of(fake)

    def tensor(self, x, dtype=None) -> Value:
        """`x` (SSA value, folded constant or Python scalar) as an SSA tensor
        of element type `dtype` (default: its own)."""
        if isinstance(x, Value):
            return x if dtype is None else self.convert(x, dtype)
        if isinstance(x, Const) and isinstance(x.value, torch.Tensor):
            t = x.value if dtype is None else x.value.to(dtype)
            mlir.element_type(t.dtype)
            return self.b.constant(t)
        value = x.value if isinstance(x, Const) else x
        if isinstance(value, (int, float, bool)):
            return self.b.scalar_tensor(value, dtype or torch.float32)
        self.fail(f"unexpected operand {value!r}")

    def scalar_operand(self, x, result_dtype) -> Value:
        """A binary op's operand. Python scalars become rank-0 constants in
        the op's compute type (f32 for f16/bf16, as PyTorch computes
        `half_tensor * 0.125` in f32)."""
        if isinstance(x, (int, float)) or (
                isinstance(x, Const) and not isinstance(x.value, torch.Tensor)):
            wide = torch.float64 if result_dtype == torch.float64 \
                else torch.float32
            return self.tensor(x, wide)
        if isinstance(x, Const) and x.value.dim() == 0:
            wide = torch.float64 if result_dtype == torch.float64 \
                else torch.float32
            return self.tensor(Const(x.value.to(wide)))
        return self.tensor(x, result_dtype)

    # ---- conversions ------------------------------------------------------
    @staticmethod
    def _convert_scalar(src, dst, name):
        """(lines, result) converting one element `name` from src to dst."""
        if src == dst:
            return [], name
        s, d = mlir.element_type(src), mlir.element_type(dst)
        if mlir.is_float(src) and mlir.is_float(dst):
            bits = {torch.float16: 16, torch.bfloat16: 16, torch.float32: 32,
                    torch.float64: 64}
            if bits[src] == bits[dst]:  # f16 <-> bf16 through f32
                return [f"%w = arith.extf {name} : {s} to f32",
                        f"%c = arith.truncf %w : f32 to {d}"], "%c"
            op = "arith.extf" if bits[dst] > bits[src] else "arith.truncf"
            return [f"%c = {op} {name} : {s} to {d}"], "%c"
        if mlir.is_float(dst):
            op = "arith.uitofp" if src == torch.bool else "arith.sitofp"
            return [f"%c = {op} {name} : {s} to {d}"], "%c"
        if dst == torch.bool:
            if mlir.is_float(src):
                return [f"%z = arith.constant 0.0 : {s}",
                        f"%c = arith.cmpf une, {name}, %z : {s}"], "%c"
            return [f"%z = arith.constant 0 : {s}",
                    f"%c = arith.cmpi ne, {name}, %z : {s}"], "%c"
        return None

    def convert(self, v: Value, dtype) -> Value:
        if v.type.dtype == dtype:
            return v
        out = v.type.with_dtype(dtype)
        if mlir.is_float(v.type.dtype) and mlir.is_float(dtype):
            return self.b.attn("cast", [v], out)
        conv = self._convert_scalar(v.type.dtype, dtype, "%a0")
        if conv is None:
            self.fail(f"conversion from {v.type.dtype} to {dtype} has no "
                      f"AttnFuse mapping")
        return self.b.elementwise([v], out, lambda a, o: conv)

    # ---- main loop --------------------------------------------------------
    def run(self, func_name: str) -> Exported:
        graph = self.program.graph
        self._signature()
        self._bind_symbols()
        outputs = None
        for node in graph.nodes:
            self.node = node
            self.b.loc = _loc(node)
            if node.op == "placeholder":
                continue
            if node.op == "output":
                outputs = node.args[0]
                continue
            if node.op != "call_function":
                self.fail(f"graph node kind {node.op} is not supported")
            self.env[node] = self.call(node)
        results = []
        for out in _flat_nodes(outputs):
            self.node = out
            self.b.loc = _loc(out)
            v = self.env[out]
            if isinstance(v, Const) and not isinstance(v.value, torch.Tensor):
                self.fail("non-tensor results are not supported")
            results.append(self.tensor(v))
        return self._finish(func_name, results)

    def _finish(self, func_name, results) -> Exported:
        args = ", ".join(f"{v.name}: {v.type}" for _, v in self.args)
        rtypes = ", ".join(str(r.type) for r in results)
        body = "\n".join(self.b.lines)
        names = ", ".join(r.name for r in results)
        text = (f"module {{\n  func.func @{func_name}({args}) -> ({rtypes}) {{\n"
                f"{body}\n    return {names} : {rtypes}\n  }}\n}}\n")
        n_inputs = sum(1 for s, _ in self.args if s.kind == "input")
        return Exported(text, func_name, [s for s, _ in self.args],
                        [r.type for r in results], self.program, n_inputs,
                        self.notes)

    def call(self, node):
        target = node.target
        if target is operator.getitem:
            seq, i = self.resolve(node.args[0]), node.args[1]
            return seq[i]
        args = self.resolve(node.args)
        kwargs = {k: self.resolve(v) for k, v in node.kwargs.items()}
        inputs = [self.env[n] for n in _flat_nodes((node.args, node.kwargs))]
        if all(isinstance(x, Const) for x in inputs) and \
                isinstance(target, torch._ops.OpOverload) and \
                not _is_seeded_random(target):
            # Everything known: fold with PyTorch itself (masks, aranges).
            value = target(*self.concrete(args), **self.concrete(kwargs))
            if isinstance(value, (list, tuple)):
                return [Const(v) for v in value]
            return Const(value)
        if target in _IDENTITY_OPS:
            return args[0]
        if target in _NO_OP_OPS:
            return None
        if isinstance(target, torch._ops.OpOverload) and \
                target.overloadpacket is aten.sym_size:
            size = mlir.as_dim(node.meta["val"])
            return Const(size) if isinstance(size, int) else SymSize(size)
        handler = _HANDLERS.get(target)
        if handler is None:
            self.unsupported()
        return handler(self, *args, **kwargs)

    # ---- handlers: attention ---------------------------------------------
    def matmul(self, a, b):
        out = self.out_type()
        a, b = self.tensor(a), self.tensor(b)
        if a.type.rank < 2 or b.type.rank < 2:
            self.unsupported("matmul of a vector")
        if not mlir.is_float(out.dtype):
            self.unsupported(f"{out.dtype} matmul")
        return self.b.attn("matmul", [a, b], out)

    def transpose(self, x, dim0, dim1):
        out = self.out_type()
        x = self.tensor(x)
        r = x.type.rank
        dim0, dim1 = dim0 % max(r, 1), dim1 % max(r, 1)
        if dim0 == dim1:
            return x
        if not mlir.is_float(x.type.dtype):
            perm = list(range(r))
            perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
            return self._linalg_transpose(x, perm, out)
        # Negative dims, as the seed writes k.transpose(-2, -1): the fusion
        # reads them either way.
        d0, d1 = (dim0 - r, dim1 - r) if node_negative(self.node) else (
            dim0, dim1)
        return self.b.attn("transpose", [x], out,
                           [f"dim0 = {d0} : i64", f"dim1 = {d1} : i64"])

    def _linalg_transpose(self, x: Value, perm, out: TensorType) -> Value:
        init = self.b.empty(out)
        name = self.b.fresh()
        self.b.lines.append(
            f"    {name} = linalg.transpose ins({x.name} : {x.type}) "
            f"outs({init.name} : {out}) permutation = {list(perm)} {self.b.loc}")
        return Value(name, out)

    def permute(self, x, dims):
        x = self.tensor(x)
        r = x.type.rank
        perm = [d % r for d in dims]
        moved = [i for i in range(r) if perm[i] != i]
        if not moved:
            return x
        if len(moved) == 2 and mlir.is_float(x.type.dtype):
            return self.transpose(x, moved[0], moved[1])
        return self._linalg_transpose(x, perm, self.out_type())

    def t(self, x):
        x = self.tensor(x)
        return x if x.type.rank < 2 else self.transpose(x, 0, 1)

    def softmax(self, x, dim, dtype=None):
        x = self.tensor(x, dtype)
        out = x.type
        return self.b.attn("softmax", [x], out, [f"dim = {dim} : i64"])

    def _softmax(self, x, dim, half_to_float):
        return self.softmax(x, dim, torch.float32 if half_to_float else None)

    def _safe_softmax(self, x, dim, dtype=None):
        # torch._safe_softmax: 0, not NaN, on a row whose inputs are all -inf.
        x = self.tensor(x, dtype)
        return self.b.attn("safe_softmax", [x], x.type, [f"dim = {dim} : i64"])

    def masked_fill(self, x, mask, value):
        out = self.out_type()
        x = self.tensor(x)
        mask = self.tensor(mask)
        if mask.type.dtype != torch.bool:
            self.fail(f"masked_fill mask must be bool, not {mask.type.dtype}")
        value = self.concrete(value)
        if isinstance(value, torch.Tensor):
            if value.numel() != 1:
                self.unsupported("masked_fill with a tensor value")
            value = value.item()
        if not isinstance(value, (int, float)):
            self.unsupported("masked_fill with a run-time value")
        if mask.name in self.inverses:
            keep = self.inverses[mask.name]()
            fill = self.scalar_operand(float(value), out.dtype)
            return self.b.attn("where", [keep, x, fill], out)
        return self.b.attn("masked_fill", [x, mask], out,
                           [f"value = {f64_attr(value)}"])

    def where(self, cond, a, b):
        out = self.out_type()
        if not mlir.is_float(out.dtype):
            self.unsupported(f"where on {out.dtype}")
        cond = self.tensor(cond)
        a, b = (self.scalar_operand(v, out.dtype) for v in (a, b))
        return self.b.attn("where", [cond, a, b], out)

    def binary(self, op, lhs, rhs):
        out = self.out_type()
        if not mlir.is_float(out.dtype):
            self.unsupported(f"{out.dtype} arithmetic on run-time values")
        lhs = self.scalar_operand(lhs, out.dtype)
        rhs = self.scalar_operand(rhs, out.dtype)
        return self.b.attn(op, [lhs, rhs], out)

    def add(self, lhs, rhs, alpha=1):
        if alpha != 1:
            rhs = self._scaled(rhs, alpha)
        return self.binary("add", lhs, rhs)

    def sub(self, lhs, rhs, alpha=1):
        if alpha != 1:
            rhs = self._scaled(rhs, alpha)
        return self.binary("sub", lhs, rhs)

    def rsub(self, x, other, alpha=1):
        if alpha != 1:
            x = self._scaled(x, alpha)
        return self.binary("sub", other, x)

    def _scaled(self, x, alpha):
        if isinstance(x, (int, float)):
            return x * alpha
        self.unsupported("add/sub with alpha != 1")

    def div(self, lhs, rhs, rounding_mode=None):
        if rounding_mode is not None:
            self.unsupported(f"div with rounding_mode={rounding_mode!r}")
        return self.binary("div", lhs, rhs)

    def dropout(self, x, p, train):
        x = self.tensor(x)
        if not train or p == 0:
            return x
        self._check_train_dropout(p)
        seed = self.num_dropouts
        self.num_dropouts += 1
        return self.b.attn("dropout", [x], x.type, [
            f"p = {f64_attr(p)}", f"seed = {seed} : i64", "train = true"])

    def native_dropout(self, x, p, train):
        if train is False or p == 0:
            return [self.tensor(x), None]
        return [self.dropout(x, p, True), None]

    def _check_train_dropout(self, p):
        message = (f"train-mode dropout (p={p}): attn.dropout draws its mask "
                   f"from a counter-based hash, not PyTorch's generator, so "
                   f"the compiled module's numbers differ from the module's")
        if self.train_dropout == "error":
            self.fail(f"{message}; call module.eval() before exporting, or "
                      f"pass train_dropout='warn' to export it anyway")
        warnings.warn(f"{message} (at {describe(self.node)})", stacklevel=3)
        self.notes.append(message)

    def sdpa(self, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False,
             scale=None, enable_gqa=False):
        out = self.out_type()
        q, k, v = self.tensor(q), self.tensor(k), self.tensor(v)
        if dropout_p:
            self._check_train_dropout(dropout_p)
        operands = [q, k, v]
        if attn_mask is not None:
            mask = self.tensor(attn_mask)
            if mask.type.dtype != torch.bool and mask.type.dtype != q.type.dtype:
                mask = self.convert(mask, q.type.dtype)
            operands.append(mask)
        if scale is None:
            scale = 1.0 / math.sqrt(q.type.dims[-1])
        attrs = [f"scale = {f64_attr(scale)}"]
        if is_causal:
            attrs.append("is_causal = true")
        if dropout_p:
            attrs.append(f"dropout_p = {f64_attr(dropout_p)}")
        # PyTorch (>= 2.5) gives 0, not NaN, for a query row that no key may
        # attend to (an all-False boolean row, an all -inf float row): its
        # math path uses _safe_softmax and its CPU flash kernel does the same.
        attrs.append("safe_softmax = true")
        return self.b.attn("sdpa", operands, out, attrs)

    def repeat_interleave(self, x, repeats, dim=None, output_size=None):
        x = self.tensor(x)
        if not isinstance(repeats, int) or dim is None:
            self.unsupported("repeat_interleave needs an int repeats and dim")
        out = self.out_type()
        return self.b.attn("repeat_interleave", [x], out, [
            f"dim = {dim} : i64", f"repeats = {repeats} : i64"])

    def to_dtype(self, x, dtype=None, *_, **__):
        return self.tensor(x, dtype)

    # ---- handlers: projections -------------------------------------------
    def linear(self, x, weight, bias=None):
        """x[..., K] . weight[N, K]^T + bias[N] as linalg: the weight is
        transposed once to [K, N]; the leading dims of x collapse into the
        rows of one `linalg.matmul` onto the f32 (f64) accumulator (the bias
        broadcast, or zero), which the CPU lowering runs as its GEMM;
        f16/bf16 accumulate in f32 and round once, as PyTorch does. (A 1-D
        x, or leading dims that would expand back into two dynamic dims, use
        a linalg.generic instead.)"""
        out = self.out_type()
        x, w = self.tensor(x), self.tensor(weight)
        if not mlir.is_float(out.dtype) or w.type.rank != 2:
            self.unsupported("linear needs a float 2-D weight")
        n, kdim = w.type.dims
        wt = self._linalg_transpose(w, [1, 0], TensorType((kdim, n),
                                                          w.type.dtype))
        acc_dtype = torch.float64 if out.dtype == torch.float64 \
            else torch.float32
        acc_type = out.with_dtype(acc_dtype)
        r = out.rank
        ident = affine_map(r, [f"d{i}" for i in range(r)])
        if bias is not None:
            bias = self.tensor(bias)
            conv = self._convert_scalar(bias.type.dtype, acc_dtype, "%a0")
            init = self.b.generic([bias], [mlir.broadcast_map(bias.type, out),
                                           ident], acc_type,
                                  ["parallel"] * r, lambda a, o: conv)
        else:
            zero = self.b.emit(f"arith.constant {mlir.scalar_literal(0, acc_dtype)}")
            empty = self.b.empty(acc_type)
            init = self.b.op(f"linalg.fill ins({zero} : {acc_type.elt}) outs("
                             f"{empty.name} : {acc_type}) -> {acc_type}",
                             acc_type)
        lead = list(range(r - 1))
        if r >= 2 and sum(not out.is_static(i) for i in lead) <= 1:
            return self.convert_generic(
                self._rows_matmul(x, wt, init, lead), out.dtype)
        # Loops (batch..., m, k, n): x reads (batch..., m, k), wt (k, n).
        loops = r + 1
        lead = [f"d{i}" for i in range(r - 1)]
        maps = [affine_map(loops, lead + [f"d{r - 1}"]),
                affine_map(loops, [f"d{r - 1}", f"d{r}"]),
                affine_map(loops, lead + [f"d{r}"])]
        iters = ["parallel"] * (r - 1) + ["reduction", "parallel"]
        a_dtype, acc = x.type.dtype, acc_type.elt

        def body(a, o):
            lines = []
            xa, wa = a
            if a_dtype != acc_dtype:
                lines += [f"%xe = arith.extf {xa} : {x.type.elt} to {acc}",
                          f"%we = arith.extf {wa} : {w.type.elt} to {acc}"]
                xa, wa = "%xe", "%we"
            lines += [f"%m = arith.mulf {xa}, {wa} : {acc}",
                      f"%s = arith.addf {o}, %m : {acc}"]
            return lines, "%s"

        y = self.b.generic([x, wt], maps, acc_type, iters, body, init=init)
        return self.convert_generic(y, out.dtype)

    def _rows_matmul(self, x, wt, init, lead):
        """linalg.matmul of x[lead..., K] (its leading dims collapsed into
        rows) and wt[K, N] onto init[lead..., N]."""
        r = x.type.rank
        groups = [lead, [r - 1]]
        rows = 1
        for i in lead:
            rows = rows * x.type.dims[i]
        rows = int(rows) if _is_int(rows) else rows
        x2 = self._collapse_shape(
            x, groups, TensorType((rows, x.type.dims[-1]), x.type.dtype))
        acc2 = TensorType((rows, init.type.dims[-1]), init.type.dtype)
        init2 = self._collapse_shape(init, groups, acc2)
        y = self.b.op(
            f"linalg.matmul ins({x2.name}, {wt.name} : {x2.type}, "
            f"{wt.type}) outs({init2.name} : {acc2}) -> {acc2}", acc2)
        return self._expand_shape(y, groups, init.type)

    def convert_generic(self, v: Value, dtype) -> Value:
        if v.type.dtype == dtype:
            return v
        conv = self._convert_scalar(v.type.dtype, dtype, "%a0")
        return self.b.elementwise([v], v.type.with_dtype(dtype),
                                  lambda a, o: conv)

    def addmm(self, bias, x, w, beta=1, alpha=1):
        if beta != 1 or alpha != 1:
            self.unsupported("addmm with beta or alpha != 1")
        y = self.matmul(x, w)
        return self.binary("add", y, bias)

    # ---- handlers: shapes -------------------------------------------------
    def reshape(self, x, *_):
        """A row-major reshape as one tensor.expand_shape or collapse_shape
        grouping the dims whose products agree, else a collapse to 1-D and an
        expand. (MLIR 22's expand-strided-metadata crashes on an expand group
        with two dynamic dims, so such a reshape is refused.)"""
        x = self.tensor(x)
        out = self.out_type()
        if x.type.dims == out.dims:
            return x
        groups = _reassociation(x.type.dims, out.dims)
        if groups is not None and out.rank > x.type.rank:
            return self._expand_shape(x, groups, out)
        if groups is not None:
            return self._collapse_shape(x, groups, out)
        n = 1
        for d in x.type.dims:
            n = n * d
        flat_type = TensorType((int(n) if _is_int(n) else n,), x.type.dtype)
        flat = self._collapse_shape(x, [list(range(x.type.rank))], flat_type)
        return self._expand_shape(flat, [list(range(out.rank))], out)

    def _collapse_shape(self, x, groups, out):
        if x.type.rank == 1 and out.rank == 1:
            return x
        return self.b.op(f"tensor.collapse_shape {x.name} {groups} : "
                         f"{x.type} into {out}", out)

    def _expand_shape(self, x, groups, out):
        if x.type.rank == 1 and out.rank == 1:
            return x
        for g in groups:
            if sum(not out.is_static(i) for i in g) > 1:
                self.unsupported(f"reshape {x.type} -> {out} splits a dim "
                                 f"into two dynamic dims")
        return self.b.op(
            f"tensor.expand_shape {x.name} {groups} output_shape "
            f"{self.b.mixed_sizes(out.dims)} : {x.type} into {out}", out)

    def expand(self, x, sizes, implicit=False):
        x = self.tensor(x)
        out = self.out_type()
        if x.type.dims == out.dims:
            return x
        return self.b.elementwise([x], out, lambda a, o: ([], a[0]))

    def _slice(self, x: Value, offsets, sizes, strides=None,
               result: TensorType | None = None) -> Value:
        strides = strides or [1] * len(sizes)
        result = result or TensorType(tuple(sizes), x.type.dtype)
        return self.b.op(
            f"tensor.extract_slice {x.name}{self.b.mixed_sizes(offsets)} "
            f"{self.b.mixed_sizes(sizes)} {self.b.mixed_sizes(strides)} : "
            f"{x.type} to {result}", result)

    def split(self, x, split_size, dim=0):
        x = self.tensor(x)
        outs = [TensorType.of(f) for f in self.node.meta["val"]]
        dim %= x.type.rank
        results, offset = [], 0
        for t in outs:
            offsets = [0] * x.type.rank
            offsets[dim] = offset
            results.append(self._slice(x, offsets, list(t.dims)))
            offset = offset + t.dims[dim]
        return results

    def split_with_sizes(self, x, sizes, dim=0):
        return self.split(x, None, dim)

    def chunk(self, x, chunks, dim=0):
        return self.split(x, None, dim)

    def unbind(self, x, dim=0):
        x = self.tensor(x)
        outs = [TensorType.of(f) for f in self.node.meta["val"]]
        dim %= x.type.rank
        results = []
        for i, t in enumerate(outs):
            offsets = [0] * x.type.rank
            offsets[dim] = i
            sizes = list(x.type.dims)
            sizes[dim] = 1
            results.append(self._slice(x, offsets, sizes, result=t))
        return results

    def select(self, x, dim, index):
        x = self.tensor(x)
        dim %= x.type.rank
        if not isinstance(index, int) or not x.type.is_static(dim):
            self.unsupported("select with a dynamic index or dim")
        offsets = [0] * x.type.rank
        offsets[dim] = index % x.type.dims[dim]
        sizes = list(x.type.dims)
        sizes[dim] = 1
        return self._slice(x, offsets, sizes, result=self.out_type())

    def slice(self, x, dim=0, start=None, end=None, step=1):
        x = self.tensor(x)
        out = self.out_type()
        dim %= x.type.rank
        start = self.concrete(start)
        if start is None:
            start = 0
        if isinstance(start, int) and start < 0:
            if not x.type.is_static(dim):
                self.unsupported("negative slice start on a dynamic dim")
            start = max(start + x.type.dims[dim], 0)
        if not isinstance(start, int):
            self.unsupported("slice with a run-time start")
        if out.dims == x.type.dims and start == 0:
            return x
        offsets = [0] * x.type.rank
        offsets[dim] = start
        strides = [1] * x.type.rank
        strides[dim] = step
        return self._slice(x, offsets, list(out.dims), strides, out)

    # ---- handlers: comparisons, masks ------------------------------------
    _CMP = {"eq": ("oeq", "eq"), "ne": ("une", "ne"), "lt": ("olt", "slt"),
            "le": ("ole", "sle"), "gt": ("ogt", "sgt"), "ge": ("oge", "sge")}

    _NEGATED = {"eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "le": "gt",
                 "gt": "le"}

    def compare(self, pred, lhs, rhs, negate=False, out=None):
        out = out or self.out_type()
        operands = [v for v in (lhs, rhs)
                    if isinstance(v, (Value, Const)) and not (
                        isinstance(v, Const) and not isinstance(v.value, torch.Tensor))]
        dtypes = [v.type.dtype if isinstance(v, Value) else v.value.dtype
                  for v in operands]
        ctype = dtypes[0]
        for d in dtypes[1:]:
            ctype = torch.promote_types(ctype, d)
        if isinstance(ctype, torch.dtype) and ctype == torch.bool:
            ctype = torch.int8 if any(not isinstance(v, (Value, Const))
                                      for v in (lhs, rhs)) else torch.bool
        fpred, ipred = self._CMP[self._NEGATED[pred] if negate else pred]
        if negate and pred not in ("eq", "ne"):
            fpred = "u" + fpred[1:]  # the exact negation: true for NaN
        elt = mlir.element_type(ctype)
        tensors, slots = [], []
        for v in (lhs, rhs):
            if isinstance(v, Value) or (isinstance(v, Const) and
                                        isinstance(v.value, torch.Tensor)):
                tensors.append(self.tensor(v, ctype))
                slots.append(None)
            else:
                slots.append(self.concrete(v))

        def body(a, o):
            lines, names, it = [], [], iter(a)
            for i, s in enumerate(slots):
                if s is None:
                    names.append(next(it))
                else:
                    lines.append(f"%k{i} = arith.constant "
                                 f"{mlir.scalar_literal(s, ctype)}")
                    names.append(f"%k{i}")
            op = f"arith.cmpf {fpred}" if mlir.is_float(ctype) else \
                f"arith.cmpi {ipred}"
            lines.append(f"%r = {op}, {names[0]}, {names[1]} : {elt}")
            return lines, "%r"

        result = self.b.elementwise(tensors, out, body)
        if not negate:
            self.inverses[result.name] = lambda: self.compare(
                pred, lhs, rhs, negate=True, out=out)
        return result

    def logical(self, op, *operands):
        out = self.out_type()
        if out.dtype != torch.bool:
            self.unsupported(f"{op} on {out.dtype}")
        vals = [self.tensor(v, torch.bool) for v in operands]
        if op == "not":
            inner = vals[0]

        def body(a, o):
            if op == "not":
                return ["%t = arith.constant true",
                        f"%r = arith.xori {a[0]}, %t : i1"], "%r"
            return [f"%r = arith.{op}i {a[0]}, {a[1]} : i1"], "%r"

        result = self.b.elementwise(vals, out, body)
        if op == "not":
            self.inverses[result.name] = lambda: inner
        return result

    def fill(self, value, dtype):
        out = self.out_type()
        empty = self.b.empty(out)
        cst = self.b.emit(f"arith.constant {mlir.scalar_literal(value, out.dtype)}")
        result = self.b.op(f"linalg.fill ins({cst} : {out.elt}) outs("
                           f"{empty.name} : {out}) -> {out}", out)
        if out.dtype == torch.bool and value:
            self.all_true.add(result.name)
        return result

    def full(self, size, value, **_):
        return self.fill(value, None)

    def ones(self, size, **_):
        return self.fill(1, None)

    def zeros(self, size, **_):
        return self.fill(0, None)

    def arange(self, *args, **_):
        """arange over a run-time size (a static one is folded)."""
        start, step = 0, 1
        if len(args) >= 2:
            start = self.concrete(args[0])
        if len(args) >= 3:
            step = self.concrete(args[2])
        out = self.out_type()
        if not isinstance(start, int) or not isinstance(step, int) or \
                mlir.is_float(out.dtype):
            self.unsupported("arange with a run-time start/step or floats")
        elt = out.elt

        def body(a, o):
            return ["%i = linalg.index 0 : index",
                    f"%c = arith.index_cast %i : index to {elt}",
                    f"%st = arith.constant {step} : {elt}",
                    f"%s0 = arith.constant {start} : {elt}",
                    f"%m = arith.muli %c, %st : {elt}",
                    f"%r = arith.addi %m, %s0 : {elt}"], "%r"

        return self.b.elementwise([], out, body)

    def tri(self, upper, x, diagonal=0):
        """tril/triu of a run-time tensor: keep x[.., i, j] where
        j - i <= diagonal (tril) or >= diagonal (triu), else 0."""
        x = self.tensor(x)
        out = x.type
        r = out.rank
        pred = "sge" if upper else "sle"
        zero = mlir.scalar_literal(0, out.dtype)

        def body(a, o):
            return [f"%i = linalg.index {r - 2} : index",
                    f"%j = linalg.index {r - 1} : index",
                    "%d = arith.subi %j, %i : index",
                    f"%k = arith.constant {diagonal} : index",
                    f"%keep = arith.cmpi {pred}, %d, %k : index",
                    f"%z = arith.constant {zero}",
                    f"%r = arith.select %keep, {a[0]}, %z : {out.elt}"], "%r"

        result = self.b.elementwise([x], out, body)
        if x.name in self.all_true:
            # not triu(ones, k) == tril(ones, k - 1); not tril(ones, k) ==
            # triu(ones, k + 1).
            self.inverses[result.name] = lambda: self.tri(
                not upper, x, diagonal - 1 if upper else diagonal + 1)
        return result


def _is_int(d) -> bool:
    return isinstance(d, int) or bool(getattr(d, "is_Integer", False))


def _same_size(a, b) -> bool:
    if _is_int(a) and _is_int(b):
        return int(a) == int(b)
    import sympy
    return sympy.simplify(sympy.sympify(a) - sympy.sympify(b)) == 0


def _reassociation(src, dst):
    """Groups of the higher-rank shape's dims, one per dim of the lower-rank
    shape, whose sizes multiply to it (trailing 1s join the last group), or
    None when the reshape is not a pure expand or collapse."""
    large, small = (dst, src) if len(dst) >= len(src) else (src, dst)
    if len(large) == len(small):
        return None
    if not small:
        return [] if all(_is_int(d) and int(d) == 1 for d in large) else None
    groups, j = [], 0
    for d in small:
        group, prod = [], 1
        while j < len(large):
            group.append(j)
            prod = prod * large[j]
            j += 1
            if _same_size(prod, d):
                break
        else:
            return None
        groups.append(group)
    while j < len(large) and _is_int(large[j]) and int(large[j]) == 1 and groups:
        groups[-1].append(j)
        j += 1
    return groups if j == len(large) else None


def node_negative(node) -> bool:
    """Whether the transpose was written with negative dims."""
    args = node.args[1:3]
    return any(isinstance(a, int) and a < 0 for a in args)


def _binary(op):
    return lambda self, lhs, rhs: self.binary(op, lhs, rhs)


def _compare(pred):
    return lambda self, lhs, rhs: self.compare(pred, lhs, rhs)


def _logical(op):
    return lambda self, *a: self.logical(op, *a)


_E = _Exporter
_HANDLERS = {
    aten.matmul.default: _E.matmul,
    aten.bmm.default: _E.matmul,
    aten.mm.default: _E.matmul,
    aten.addmm.default: _E.addmm,
    aten.linear.default: _E.linear,
    aten.transpose.int: _E.transpose,
    aten.permute.default: _E.permute,
    aten.t.default: _E.t,
    aten.softmax.int: _E.softmax,
    aten._softmax.default: _E._softmax,
    aten._safe_softmax.default: _E._safe_softmax,
    aten.masked_fill.Scalar: _E.masked_fill,
    aten.masked_fill.Tensor: _E.masked_fill,
    aten.where.self: _E.where,
    aten.where.ScalarSelf: _E.where,
    aten.where.ScalarOther: _E.where,
    aten.where.Scalar: _E.where,
    aten.mul.Tensor: _binary("mul"),
    aten.mul.Scalar: _binary("mul"),
    aten.div.Tensor: _E.div,
    aten.div.Scalar: _E.div,
    aten.div.Tensor_mode: _E.div,
    aten.add.Tensor: _E.add,
    aten.add.Scalar: _E.add,
    aten.sub.Tensor: _E.sub,
    aten.sub.Scalar: _E.sub,
    aten.rsub.Scalar: _E.rsub,
    aten.rsub.Tensor: _E.rsub,
    aten.dropout.default: _E.dropout,
    aten.native_dropout.default: _E.native_dropout,
    aten.scaled_dot_product_attention.default: _E.sdpa,
    aten.repeat_interleave.self_int: _E.repeat_interleave,
    aten._to_copy.default: _E.to_dtype,
    aten.to.dtype: _E.to_dtype,
    aten.view.default: _E.reshape,
    aten.reshape.default: _E.reshape,
    aten._unsafe_view.default: _E.reshape,
    aten.unsqueeze.default: _E.reshape,
    aten.squeeze.dim: _E.reshape,
    aten.squeeze.dims: _E.reshape,
    aten.squeeze.default: _E.reshape,
    aten.flatten.using_ints: _E.reshape,
    aten.unflatten.int: _E.reshape,
    aten.expand.default: _E.expand,
    aten.split.Tensor: _E.split,
    aten.split_with_sizes.default: _E.split_with_sizes,
    aten.chunk.default: _E.chunk,
    aten.unbind.int: _E.unbind,
    aten.select.int: _E.select,
    aten.slice.Tensor: _E.slice,
    aten.eq.Scalar: _compare("eq"), aten.eq.Tensor: _compare("eq"),
    aten.ne.Scalar: _compare("ne"), aten.ne.Tensor: _compare("ne"),
    aten.lt.Scalar: _compare("lt"), aten.lt.Tensor: _compare("lt"),
    aten.le.Scalar: _compare("le"), aten.le.Tensor: _compare("le"),
    aten.gt.Scalar: _compare("gt"), aten.gt.Tensor: _compare("gt"),
    aten.ge.Scalar: _compare("ge"), aten.ge.Tensor: _compare("ge"),
    aten.bitwise_not.default: _logical("not"),
    aten.logical_not.default: _logical("not"),
    aten.bitwise_and.Tensor: _logical("and"),
    aten.logical_and.default: _logical("and"),
    aten.bitwise_or.Tensor: _logical("or"),
    aten.logical_or.default: _logical("or"),
    aten.full.default: _E.full,
    aten.ones.default: _E.ones,
    aten.zeros.default: _E.zeros,
    aten.arange.default: _E.arange,
    aten.arange.start: _E.arange,
    aten.arange.start_step: _E.arange,
    aten.tril.default: lambda self, x, diagonal=0: self.tri(False, x, diagonal),
    aten.triu.default: lambda self, x, diagonal=0: self.tri(True, x, diagonal),
}


def export_program(program, func_name="forward", constants=False,
                   train_dropout="error") -> Exported:
    """ExportedProgram -> Exported (see `attnfuse.export`)."""
    program = program.run_decompositions({})
    check_no_mutations(program)
    return _Exporter(program, constants, train_dropout).run(func_name)


def _distinct_inputs(example_inputs) -> tuple:
    """The example inputs with every tensor that shares memory with an
    earlier one cloned: torch.export merges the graph inputs of aliased
    example tensors (`(x, x, x)` reads only one of them), while each user
    input must stay its own argument of the compiled function."""
    seen = set()
    out = []
    for x in example_inputs:
        if isinstance(x, torch.Tensor) and x.layout == torch.strided:
            key = x.untyped_storage().data_ptr() if x.numel() else id(x)
            if key in seen:
                x = x.clone()
                key = x.untyped_storage().data_ptr() if x.numel() else id(x)
            seen.add(key)
        out.append(x)
    return tuple(out)


def check_no_mutations(program):
    """A functionalised program lists the inputs and buffers the module
    writes in place; the compiled function returns new tensors and writes
    nothing, so such a module is refused, naming the tensor and the line
    that writes it."""
    from torch.export.graph_signature import OutputKind
    kinds = {OutputKind.BUFFER_MUTATION: "buffer",
             OutputKind.USER_INPUT_MUTATION: "input"}
    nodes = {n.name: n for n in program.graph.nodes}
    for spec in program.graph_signature.output_specs:
        kind = kinds.get(spec.kind)
        if kind is None:
            continue
        node = nodes.get(getattr(spec.arg, "name", None))
        where = f"\n  at {describe(node)}" if node is not None else ""
        raise ExportError(
            f"the module updates {kind} '{spec.target}' in place; the "
            f"compiled function returns new tensors and writes no input or "
            f"buffer, so the update would be lost: return the new value "
            f"instead{where}")


def torch_export(module, example_inputs, dynamic_shapes=None):
    if not isinstance(example_inputs, tuple):
        example_inputs = tuple(example_inputs)
    example_inputs = _distinct_inputs(example_inputs)
    try:
        return torch.export.export(module, example_inputs,
                                   dynamic_shapes=dynamic_shapes)
    except Exception as e:  # torch's own message says what it could not trace
        raise ExportError(f"torch.export failed: {type(e).__name__}: {e}") from e


def source_line(file: str, line: int) -> str:
    return linecache.getline(file, line).strip()
