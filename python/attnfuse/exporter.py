"""PyTorch module -> AttnFuse MLIR text.

`torch.export`, then `run_decompositions` with torch.export's Core ATen
table minus the ops whose high-level form the fusion or an exact mapping
needs (matmul, linear, softmax, masked_fill, where, SDPA, transpose,
repeat_interleave, layer_norm, silu, tril/triu, dropout). Each remaining
aten op goes to its handler in the registry `attnfuse.ops` (one module per
family: attention, views, masks, elementwise, reductions, norms, products,
convolutions, indexing), which writes it with the typed builders of
`attnfuse.mlir`: attention ops as `attn` ops, so that `attn-opt
--attn-fuse-sdpa` sees the chain as written, everything else as upstream
`linalg`/`tensor`/`arith`/`math`, which the CPU pipeline compiles.

Values known at export time (masks from `torch.ones(L, S).tril()`,
`arange` comparisons, `finfo.min` fills) are folded here, with PyTorch
itself, into dense constants, the form from which the fusion recognises a
causal mask. An aten op without a mapping is an ExportError naming the op
and the module's source line, never a silently wrong graph.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

import torch
import torch.fx

from . import mlir
from .errors import AttnFuseError, ExportError
from .mlir import FunctionBuilder, TensorType, Value
from .package import bounds_of
from .ops import handler_of
from .ops.complex import complex_handler_of, involves_complex
from .quantized_weights import scheme_for
from .sources import describe, location, remember_generated
from .values import Complex, Const, SymSize

aten = torch.ops.aten

# How a train-mode dropout is exported (see `export`): the attn.dropout RNG is
# a counter-based hash, not PyTorch's generator.
TRAIN_DROPOUT_POLICIES = ("error", "warn")

# Ops kept whole by the decomposition: the fusion matches them as written
# (matmul, softmax, masked_fill, where, SDPA, transpose, repeat_interleave,
# tril/triu masks, dropout), their handler computes exactly what PyTorch's
# kernel computes where the decomposition would round differently (linear,
# layer_norm, silu), or writes only what they update (the scatters).
KEEP_WHOLE = (
    aten.matmul.default, aten.linear.default, aten.softmax.int,
    aten._safe_softmax.default,
    aten.masked_fill.Scalar, aten.masked_fill.Tensor,
    aten.scaled_dot_product_attention.default, aten.transpose.int,
    aten.repeat_interleave.self_int, aten.layer_norm.default,
    aten.silu.default, aten.tril.default, aten.triu.default,
    aten.dropout.default, aten.split.Tensor, aten.unbind.int,
    aten.t.default, aten.rsub.Scalar, aten.rsub.Tensor,
    # In-place updates of a slice stay one insert_slice (the decomposition
    # would rewrite the whole destination with a `where`).
    aten.slice_scatter.default, aten.select_scatter.default,
    # index_copy refuses negative indices, which index_put, its
    # decomposition, takes from the end.
    aten.index_copy.default,
)


def decomposition_table() -> dict:
    table = torch.export.default_decompositions()
    for op in KEEP_WHOLE:
        table.pop(op, None)
    return table


@dataclass
class ArgSpec:
    kind: str  # "input", "parameter", "buffer", "constant"
    name: str  # the user input's name or the state's qualified name
    type: TensorType
    dims: tuple  # per dim: int or the sympy symbol of a dynamic dim
    # The module writes it in place: the compiled function writes the
    # caller's tensor (`bufferization.writable = true` and a state result).
    written: bool = False
    # A weight read quantized (attnfuse.quantized_weights): its scheme and
    # its [N, K] shape; `type` is then its bytes, an i8 tensor.
    quant: object = None
    weight_shape: tuple = ()


def _arg_attrs(spec: ArgSpec, mark_weights: bool = True) -> str:
    """A function argument's attributes: a state the module writes is
    written in place; a parameter it only reads is a weight, which
    `attn-compile --prepack-weights` may take packed (unless
    `mark_weights` is off)."""
    if spec.written:
        return " {bufferization.writable = true}"
    if spec.kind == "parameter" and mark_weights and spec.quant is None:
        return " {attn.weight}"
    return ""


@dataclass
class Exported:
    """An exported module: MLIR text and what the function's arguments are."""
    mlir: str
    func_name: str
    args: list[ArgSpec]
    results: list[TensorType]
    # The torch.export ExportedProgram, until `release`.
    program: object
    num_user_inputs: int
    notes: list[str] = field(default_factory=list)
    # How the flat results rebuild the module's output (a pytree spec).
    out_spec: object = None
    # Per flat output of the module: ("result", j), the C function's result
    # j, or ("arg", i), argument i itself (an output that is an input or
    # buffer, maybe written in place: PyTorch returns that very tensor).
    outputs: list = field(default_factory=list)

    # The bounds of its dynamic dims (`package.bounds_of`).
    dims: dict = field(default_factory=dict)

    @property
    def written(self) -> list[int]:
        """The indices (in `args`) of the arguments written in place."""
        return [i for i, a in enumerate(self.args) if a.written]

    def release(self) -> None:
        """Drops the ExportedProgram: its graph, fake tensors and shape
        environment (tens of MiB for a model of a few hundred MiB of
        weights). An entry point bound to its weights needs only the
        signature."""
        self.program = None


def _data_dependent(node: torch.fx.Node) -> bool:
    """Whether the node's value (a size, or a tensor's shape) involves a
    size that depends on tensor values (an unbacked symbol)."""
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols
    val = node.meta.get("val")
    try:
        return bool(free_unbacked_symbols(val))
    except Exception:  # noqa: BLE001 - a value it cannot read: no
        return False


def written_as(node: torch.fx.Node, depth: int = 0):
    """The name of the op the module called that `node` was made from (the
    first entry of its `from_node` provenance, followed to the start): a
    decomposition's nodes name the op decomposed. torch.export's own
    arithmetic and checks on a data-dependent size have no provenance:
    they name the op whose result has that size. None when unknown."""
    sources = node.meta.get("from_node") or []
    if sources:
        # The first op in the chain to the start (a higher-order op, such
        # as the `torch.no_grad()` region the node was inlined from, is not
        # what the user wrote).
        source, found = sources[0], None
        while source is not None:
            target = getattr(source, "target", None)
            if isinstance(target, str) and "." in target:
                found = target
            chain = getattr(source, "from_node", None)
            source = chain[0] if chain else None
        return found
    if depth < 4 and _data_dependent(node):
        for arg in _flat_nodes((node.args, list(node.kwargs.values()))):
            found = written_as(arg, depth + 1)
            if found:
                return found
    return None


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


class Exporter:
    """Walks the graph and dispatches each op to its handler (ops/); holds
    what handlers share: the builder, the values, the mask bookkeeping."""

    def __init__(self, program, constants, train_dropout: str,
                 mark_weights: bool = True, weights=None):
        if train_dropout not in TRAIN_DROPOUT_POLICIES:
            raise ValueError(f"train_dropout must be one of "
                             f"{TRAIN_DROPOUT_POLICIES}, not {train_dropout!r}")
        self.program = program
        self.constants = constants
        self.mark_weights = mark_weights
        # The WeightPlan of `weights=` (None: every weight as stored), and
        # the quantized weight arguments: SSA name -> their format attribute.
        self.weights = weights
        self.quantized: dict = {}
        self.quantized_rows: dict = {}  # SSA name -> N
        # The [E, N, K] stacks among them (experts): SSA name -> (shape,
        # bytes from one matrix to the next, bytes of a matrix).
        self.quantized_stacks: dict = {}
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
        # Boolean values that are a conjunction (`a & b`, broadcast): their
        # terms, so that masks reach attn.sdpa as attributes plus the small
        # terms instead of one materialised [B, 1, L, S] tensor (ops/masks).
        self.conjuncts: dict = {}
        # Float values where(cond, c1, c2) with scalar branches and a
        # conjunction cond: an additive mask distributed over its terms.
        self.selects: dict = {}
        # Placeholder name -> the output node holding its new value, for the
        # inputs and buffers the module writes in place.
        self.mutations: dict = self._mutations()
        self.written: set = set()  # SSA names of the arguments written
        # Integer values that are affine in their indices (arange and its
        # views, ops/positions.py), and boolean comparisons of them known
        # to keep a band: (window_left, window_right).
        self.positions: dict = {}
        self.bands: dict = {}
        # Values that depend only on their key, written once and reused
        # (band masks): every use comes later in the one block.
        self.memo: dict = {}
        # Nodes whose value is a condition checked at run time, known true
        # past the check.
        self.checked: set = set()

    # ---- errors -----------------------------------------------------------
    def fail(self, message: str):
        raise ExportError(f"{message}\n  at {describe(self.node)}")

    def unsupported(self, what: str = ""):
        """An ExportError naming the op without a mapping: the one the user
        wrote, where the node came from a decomposition of it or from
        torch.export's size arithmetic on its result (`x.repeat_interleave(
        t)` is exported as `repeat_interleave.Tensor`, `index_select` and an
        `operator.ge` check of the data-dependent size)."""
        target = self.node.target
        name = getattr(target, "__name__", str(target))
        on_sizes = not isinstance(target, torch._ops.OpOverload)
        if not on_sizes:
            name = f"aten.{target.__name__}"
        elif getattr(target, "__module__", None) in ("_operator", "operator"):
            name = f"operator.{name}"
        notes = [what] if what else []
        written = written_as(self.node)
        if written and written != name:
            notes.append(
                f"its result's size depends on tensor values, which "
                f"torch.export checks with {name}, which has none"
                if on_sizes else
                f"torch.export wrote it with {name}, which has none")
            name = written
        detail = f" ({'; '.join(notes)})" if notes else ""
        self.fail(f"aten op {name} has no AttnFuse mapping{detail}; "
                  f"rewrite that line with supported ops or leave the module "
                  f"to PyTorch")

    # ---- signature --------------------------------------------------------
    def _mutations(self) -> dict:
        """The graph signature's mutations: placeholder name -> the output
        node of the new value (buffers, parameters and user inputs)."""
        from torch.export.graph_signature import InputKind, OutputKind
        sig = self.program.graph_signature
        kinds = {OutputKind.BUFFER_MUTATION, OutputKind.USER_INPUT_MUTATION}
        kinds.add(getattr(OutputKind, "PARAMETER_MUTATION", None))
        by_target = {}
        for spec in sig.input_specs:
            key = spec.arg.name if spec.kind == InputKind.USER_INPUT \
                else spec.target
            by_target[key] = spec.arg.name
        nodes = {n.name: n for n in self.program.graph.nodes}
        out = {}
        for spec in sig.output_specs:
            if spec.kind in kinds:
                out[by_target[spec.target]] = nodes[spec.arg.name]
        return out

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
            if kind == "input" and not isinstance(fake, torch.Tensor):
                # A Python constant the module was called with: torch.export
                # specialised the graph on it.
                self.env[node] = Const(fake)
                self.args.append((ArgSpec("static", spec.arg.name, None, ()),
                                  None))
                continue
            if not isinstance(fake, torch.Tensor):
                self.fail(f"input {node.name} is not a tensor ({fake!r}); "
                          f"only tensor inputs are supported")
            name = spec.target if kind != "input" else spec.arg.name
            written = node.name in self.mutations
            if fake.is_complex():
                self._complex_state(node, spec, kind, name, written)
                continue
            if kind != "input" and self._fold_state(kind, name):
                if written:
                    self.fail(f"{kind} '{name}' is written in place by the "
                              f"module, so it cannot be folded into the "
                              f"compiled module as a constant (constants="
                              f"{self.constants!r})")
                self.env[node] = Const(self._state(spec).detach())
                continue
            type_ = TensorType.of(fake)
            type_.elt  # raises for unsupported element types
            n = sum(1 for s, v in self.args if v is not None)
            spec = ArgSpec(kind, name, type_, type_.dims, written)
            if kind == "parameter" and not written:
                self._quantize(spec, node, fake)
            value = Value(f"%arg{n}", spec.type)
            if spec.quant is not None:
                self.quantized[value.name] = spec.quant.mlir_attr(
                    spec.weight_shape[-1])
                self.quantized_rows[value.name] = spec.weight_shape[-2]
                if len(spec.weight_shape) == 3:
                    matrix = spec.weight_shape[1:]
                    self.quantized_stacks[value.name] = (
                        spec.weight_shape, spec.quant.matrix_stride(*matrix),
                        spec.quant.nbytes(*matrix))
            self.args.append((spec, value))
            self.env[node] = value
            if written:
                self.written.add(value.name)

    def _complex_state(self, node, spec, kind, name, written):
        """A complex input or state: the compiled function takes no
        complex arguments. A buffer the module only reads (Llama-4's
        vision rotary table) is folded into the module as the constant of
        its (re, im) pairs (ops/complex.py); the others are refused."""
        if kind not in ("buffer", "constant") or written:
            what = "written in place" if written else f"a {kind}"
            self.fail(f"{kind} {name} is complex ({what}): the compiled "
                      f"function takes no complex arguments; pass "
                      f"torch.view_as_real of it and view_as_complex it "
                      f"in the module")
        self.env[node] = Const(self._state(spec).detach())
        self.notes.append(f"complex buffer {name} folded into the compiled "
                          f"module as a constant (a later write to it is "
                          f"not seen)")

    def _quantize(self, spec: ArgSpec, node, fake):
        """Makes `spec` a quantized weight where the WeightPlan says so:
        its type becomes the bytes of its layout."""
        try:
            scheme = scheme_for(self.weights, spec.name, node, fake.shape)
        except AttnFuseError as e:
            self.fail(str(e))
        if scheme is None:
            return
        shape = tuple(int(d) for d in fake.shape)
        spec.quant, spec.weight_shape = scheme, shape
        spec.type = TensorType((scheme.nbytes(*shape),), torch.int8)
        spec.dims = spec.type.dims

    def _bind_symbols(self):
        """Each symbol of a dynamic dim gets `tensor.dim` of the first
        argument that has it as a plain dim."""
        for spec, value in self.args:
            if value is None:
                continue
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
            return type(a)(Exporter.concrete(x) for x in a)
        return a

    def out_type(self, node=None) -> TensorType:
        fake = (node or self.node).meta.get("val")
        if not isinstance(fake, torch.Tensor):
            self.fail("expected a tensor result")
        return TensorType.of(fake)

    def out_types(self) -> list[TensorType]:
        return [TensorType.of(f) for f in self.node.meta["val"]]

    def dtype_of(self, x):
        """The dtype of a tensor operand (Value or constant tensor), None for
        a Python scalar."""
        if isinstance(x, Value):
            return x.type.dtype
        if isinstance(x, Const) and isinstance(x.value, torch.Tensor):
            return x.value.dtype
        return None

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
            if dtype is None:
                dtype = torch.bool if isinstance(value, bool) else (
                    torch.int64 if isinstance(value, int) else torch.float32)
            return self.b.scalar_tensor(value, dtype)
        if isinstance(x, SymSize):
            # A dynamic size in arithmetic (`arange(L) + past_length`): a
            # rank-0 integer tensor of its run-time value.
            return self.b.size_tensor(x.expr, dtype or torch.int64)
        self.fail(f"unexpected operand {value!r}")

    def is_scalar(self, x) -> bool:
        """A Python number (or a folded one, or a dynamic size): PyTorch's
        wrapped scalar."""
        if isinstance(x, SymSize):
            return True
        v = x.value if isinstance(x, Const) else x
        return isinstance(v, (int, float, bool)) and not isinstance(
            x, torch.Tensor)

    def scalar_operand(self, x, result_dtype) -> Value:
        """A binary op's operand. Python scalars and 0-d tensors become
        rank-0 constants in the op's compute type (f32 for f16/bf16, as
        PyTorch computes `half_tensor * 0.125` in f32)."""
        wide = mlir.opmath(result_dtype)
        if self.is_scalar(x):
            return self.tensor(x, wide)
        if isinstance(x, Const) and x.value.dim() == 0:
            return self.tensor(Const(x.value.to(wide)))
        return self.tensor(x, result_dtype)

    def convert(self, v: Value, dtype) -> Value:
        if v.type.dtype == dtype:
            return v
        out = v.type.with_dtype(dtype)
        if mlir.is_float(v.type.dtype) and mlir.is_float(dtype):
            return self.b.attn("cast", [v], out)
        return self.b.elementwise([v], out,
                                  lambda b, a, o: b.convert(a[0], dtype))

    def map(self, inputs, out: TensorType, fn) -> Value:
        """An elementwise linalg.generic: `fn(body, *scalars)` computes one
        element of `out` from one (broadcast) element of each input."""
        return self.b.elementwise(inputs, out, lambda b, a, o: fn(b, *a))

    # ---- main loop --------------------------------------------------------
    def run(self, func_name: str) -> Exported:
        graph = self.program.graph
        self._signature()
        self._bind_symbols()
        outputs = None
        for node in graph.nodes:
            self.node = node
            self.b.loc = location(node)
            if node.op == "placeholder":
                continue
            if node.op == "output":
                outputs = node.args[0]
                continue
            if node.op != "call_function":
                self.fail(f"graph node kind {node.op} is not supported")
            try:
                self.env[node] = self.call(node)
            except ExportError as e:
                if "\n  at " in str(e):
                    raise
                # A builder's error (a size without a mapping): name the
                # node it came from.
                raise ExportError(f"{e}\n  at {describe(self.node)}") \
                    from None
        if any(not isinstance(o, torch.fx.Node) for o in (outputs or ())):
            self.fail("non-tensor results are not supported")
        # torch.export lists the new values of mutated state first.
        user = list(outputs or ())[len(self.mutations):]
        results, kinds = self._user_results(user)
        state = self._state_results()
        return self._finish(func_name, results, state, kinds)

    def _argument_of(self, node):
        """The index in `args` of the argument `node` is (a placeholder) or
        writes in place (a mutation's new value), else None."""
        names = [n for n, new in self.mutations.items() if new is node]
        names.append(node.name)
        for name in names:
            v = self.env.get(self._placeholder(name))
            for i, (spec, value) in enumerate(self.args):
                if value is not None and value is v:
                    return i
        return None

    def _placeholder(self, name):
        for n in self.program.graph.nodes:
            if n.op == "placeholder" and n.name == name:
                return n
        return None

    def _user_results(self, user):
        """The module's outputs: an output that is an argument, or the new
        value of one written in place, is that argument (PyTorch returns
        the same tensor); the others are results."""
        results, kinds = [], []
        for out in user:
            self.node = out
            self.b.loc = location(out)
            arg = self._argument_of(out)
            if arg is not None:
                kinds.append(("arg", arg))
                continue
            v = self.env[out]
            if isinstance(v, Const) and not isinstance(v.value, torch.Tensor):
                self.fail("non-tensor results are not supported")
            if isinstance(v, Complex) or (isinstance(v, Const) and
                                          v.value.is_complex()):
                self.fail("complex results are not supported: return "
                          "torch.view_as_real of them")
            kinds.append(("result", len(results)))
            results.append(self.tensor(v))
        return results, kinds

    def _state_results(self) -> list[Value]:
        """For each argument written in place, its new value materialized in
        the argument (upstream bufferization writes it in place or fails)."""
        state = []
        for name, new in self.mutations.items():
            arg = self.env[self._placeholder(name)]
            self.node = new
            self.b.loc = location(new)
            v = self.tensor(self.env[new], arg.type.dtype)
            if v.type.dims != arg.type.dims:
                v = self.b.cast(v, arg.type)
            state.append(self.b.materialize_in_destination(v, arg))
        return state

    def _finish(self, func_name, results, state, kinds) -> Exported:
        values = [(s, v) for s, v in self.args if v is not None]
        args = ", ".join(
            f"{v.name}: {v.type}{_arg_attrs(s, self.mark_weights)}"
            for s, v in values)
        rtypes = ", ".join(str(r.type) for r in results + state)
        body = "\n".join(self.b.lines)
        names = ", ".join(r.name for r in results + state)
        text = (f"module {{\n  func.func @{func_name}({args}) -> ({rtypes}) {{\n"
                f"{body}\n    return {names} : {rtypes}\n  }}\n}}\n")
        n_inputs = sum(1 for s, _ in self.args if s.kind in ("input",
                                                             "static"))
        out_spec = getattr(self.program.call_spec, "out_spec", None)
        return Exported(text, func_name, [s for s, _ in self.args],
                        [r.type for r in results], self.program, n_inputs,
                        self.notes, out_spec, kinds,
                        bounds_of(self.program.range_constraints))

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
            # A copy of an argument written in place must not read its
            # buffer after the write: a real copy (else bufferization would
            # have to refuse the in-place update).
            if isinstance(args[0], Value) and args[0].name in self.written:
                return self.b.copy(args[0])
            return args[0]
        if target in _NO_OP_OPS:
            return None
        if not isinstance(target, torch._ops.OpOverload):
            return self.sym_call(node, args)
        if target.overloadpacket is aten.sym_size:
            size = mlir.as_dim(node.meta["val"])
            return Const(size) if isinstance(size, int) else SymSize(size)
        if involves_complex(node, args, kwargs):
            handler = complex_handler_of(target)
            if handler is None:
                self.unsupported("on complex tensors")
            return handler(self, *args, **kwargs)
        handler = handler_of(target)
        if handler is None:
            self.unsupported()
        return handler(self, *args, **kwargs)

    def sym_call(self, node, args):
        """Python arithmetic on sizes (operator.mul of SymInts...): the
        value is the node's symbolic result."""
        sources = list(_flat_nodes((node.args, node.kwargs)))
        if sources and all(isinstance(self.env[n], Const) for n in sources) \
                and any(n in self.checked for n in sources):
            # Arithmetic on a condition checked at run time (a `.item()`
            # that is true past its check, ops/reductions.py): fold it.
            self.checked.add(node)
            return Const(node.target(*self.concrete(args)))
        val = node.meta.get("val")
        if isinstance(val, (torch.SymInt, int)):
            size = mlir.as_dim(val)
            return Const(size) if isinstance(size, int) else SymSize(size)
        self.unsupported()


def export_program(program, func_name="forward", constants=False,
                   train_dropout="error", mark_weights=True,
                   weights=None) -> Exported:
    """ExportedProgram -> Exported (see `attnfuse.export`). With
    `mark_weights` off, parameters are not marked `attn.weight`, so that
    `attn-compile --prepack-weights` leaves this function's weights as
    stored. `weights`: a WeightPlan (attnfuse.quantized_weights) of the
    weights read quantized, None for none."""
    remember_generated(program.graph_module)
    try:
        program = program.run_decompositions(decomposition_table())
    except Exception as e:  # torch's own message says what it could not do
        _check_aliased_writes(program)
        raise ExportError(f"torch.export's decomposition failed: "
                          f"{type(e).__name__}: {e}") from e
    return Exporter(program, constants, train_dropout,
                    mark_weights, weights).run(func_name)


def storage_span(t: torch.Tensor):
    """(storage pointer, first byte, end byte) of what `t` reads; None
    when it is empty."""
    if t.numel() == 0:
        return None
    base = t.untyped_storage().data_ptr()
    start = t.storage_offset() * t.element_size()
    extent = 1 + sum((s - 1) * abs(st) for s, st in zip(t.shape, t.stride()))
    return base, start, start + extent * t.element_size()


def _written_state(program) -> list:
    """The names of the buffers and parameters the program writes: its
    signature's mutations, and (before functionalization, as
    torch.export's graph has them) the state arguments of in-place ops."""
    from torch.export.graph_signature import InputKind
    sig = program.graph_signature
    written = list(sig.buffers_to_mutate.values())
    written += list(getattr(sig, "parameters_to_mutate", {}).values())
    state = {spec.arg.name: spec.target for spec in sig.input_specs
             if spec.kind in (InputKind.BUFFER, InputKind.PARAMETER)}
    for node in program.graph.nodes:
        schema = getattr(node.target, "_schema", None)
        if node.op != "call_function" or schema is None:
            continue
        for i, arg in enumerate(schema.arguments):
            info = arg.alias_info
            value = node.args[i] if i < len(node.args) else \
                node.kwargs.get(arg.name)
            if info is not None and info.is_write and \
                    isinstance(value, torch.fx.Node) and value.name in state:
                written.append(state[value.name])
    return written


def _check_aliased_writes(program):
    """Why a decomposition failed, when a buffer or parameter the module
    writes in place is the same tensor as another one: torch.export cannot
    write state registered under two names (its decomposition fails with
    a bare AssertionError)."""
    written = _written_state(program)
    if not written:
        return
    state = dict(program.state_dict)
    state.update(program.constants)
    spans = {name: storage_span(t) for name, t in state.items()
             if isinstance(t, torch.Tensor) and t.layout == torch.strided
             and t.device.type != "meta"}
    spans = {name: span for name, span in spans.items() if span}
    for name in written:
        span = spans.get(name)
        if span is None:
            continue
        for other, o in spans.items():
            if other != name and o[0] == span[0] and o[1] < span[2] and \
                    span[1] < o[2]:
                a, b = sorted((name, other))
                raise ExportError(
                    f"the module writes in place state that is registered "
                    f"under two names, '{a}' and '{b}' (one tensor, or "
                    f"views of one): torch.export cannot trace writes to "
                    f"aliased state; register the tensor once, or give "
                    f"each name its own copy")


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


def _check_plain_state(module):
    """Refuses parameters and buffers that are tensor subclasses: a
    torchao-quantized weight (AffineQuantizedTensor and the like) or any
    other, whose export AttnFuse cannot map."""
    if not isinstance(module, torch.nn.Module):
        return
    state = list(module.named_parameters(remove_duplicate=False))
    state += list(module.named_buffers(remove_duplicate=False))
    for name, t in state:
        cls = type(t.data)
        if cls is torch.Tensor:
            continue
        if cls.__module__.split(".")[0] == "torchao":
            raise ExportError(
                f"parameter {name} is a {cls.__name__} (weights quantized by "
                f"torchao), which AttnFuse does not compile; compile the float "
                f"model with attnfuse's own quantization instead: "
                f"weights='int8_sym' (per output channel, as torchao's int8 "
                f"weight-only) or weights='int4_asym', group_size=128 (as its "
                f"int4 weight-only), docs/quantization.md")
        raise ExportError(f"parameter or buffer {name} is a tensor subclass "
                          f"{cls.__module__}.{cls.__name__}, which AttnFuse "
                          f"does not compile; give the module plain tensors")


def torch_export(module, example_inputs, dynamic_shapes=None,
                 example_kwargs=None):
    _check_plain_state(module)
    if not isinstance(example_inputs, tuple):
        example_inputs = tuple(example_inputs)
    kwargs = dict(example_kwargs or {})
    flat = _distinct_inputs(tuple(example_inputs) + tuple(kwargs.values()))
    example_inputs = flat[:len(example_inputs)]
    kwargs = dict(zip(kwargs, flat[len(example_inputs):]))
    try:
        return torch.export.export(module, example_inputs, kwargs or None,
                                   dynamic_shapes=dynamic_shapes)
    except Exception as e:  # torch's own message says what it could not trace
        hint = ""
        if "Cache" in str(e) and "not a known type" in str(e):
            hint = (" (the model returns its KV cache: build it with "
                    "use_cache=False in its config or pass use_cache=False "
                    "in example_kwargs; for generation with a cache use "
                    "attnfuse.compile_generator)")
        raise ExportError(
            f"torch.export failed: {type(e).__name__}: {e}{hint}") from e

