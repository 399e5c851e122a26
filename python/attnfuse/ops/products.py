"""Matrix products around attention: nn.Linear (`linear`), GPT-2's Conv1D
(`addmm`), as one `linalg.matmul` onto an f32 (f64) accumulator that the
CPU lowering runs as its GEMM; f16/bf16 accumulate in f32 and round once,
as PyTorch does. (q.kT and p.v stay attn.matmul: ops/attention.py.)"""

from __future__ import annotations

import torch

from .. import mlir
from ..mlir import TensorType, Value, affine_map
from .elementwise import binary
from .registry import handles
from .views import collapse_shape, expand_shape, plain_dim

aten = torch.ops.aten


def _accumulator(ex, out: TensorType, bias) -> Value | None:
    """The f32 (f64) accumulator of `out`'s shape holding the bias
    broadcast; None for zero."""
    acc_dtype = torch.float64 if out.dtype == torch.float64 else torch.float32
    acc_type = out.with_dtype(acc_dtype)
    if bias is None:
        return None
    bias = ex.tensor(bias)
    return ex.map([bias], acc_type, lambda b, a: b.convert(a, acc_dtype))


def _rows_matmul(ex, x: Value, wt: Value, init: Value | None,
                 acc_type: TensorType) -> Value:
    """linalg.matmul of x[lead..., K] (its leading dims collapsed into
    rows) and wt[K, N] onto init[lead..., N], or onto zeros (a fill of the
    2-D accumulator itself, which the CPU GEMM starts from without reading
    a buffer)."""
    r = x.type.rank
    lead = list(range(r - 1))
    groups = [lead, [r - 1]]
    rows = 1
    for i in lead:
        rows = rows * x.type.dims[i]
    rows = plain_dim(rows)
    x2 = collapse_shape(ex, x, groups, TensorType((rows, x.type.dims[-1]),
                                                  x.type.dtype))
    acc2 = TensorType((rows, acc_type.dims[-1]), acc_type.dtype)
    if init is None:
        init2 = ex.b.fill(0, acc2)
        y = ex.b.named("linalg.matmul", [x2, wt], init2)
        return expand_shape(ex, y, groups, acc_type)
    init2 = collapse_shape(ex, init, groups, acc2)
    y = ex.b.named("linalg.matmul", [x2, wt], init2)
    return expand_shape(ex, y, groups, init.type)


def _generic_matmul(ex, x: Value, wt: Value, init: Value) -> Value:
    """The same contraction as a linalg.generic, for a 1-D x."""
    r = init.type.rank
    loops = r + 1
    lead = [f"d{i}" for i in range(r - 1)]
    maps = [affine_map(loops, lead + [f"d{r - 1}"]),
            affine_map(loops, [f"d{r - 1}", f"d{r}"]),
            affine_map(loops, lead + [f"d{r}"])]
    iters = ["parallel"] * (r - 1) + ["reduction", "parallel"]
    acc = init.type.dtype

    def body(b, a, o):
        xa, wa = (b.convert(v, acc) for v in a)
        return b.arith("addf", o, b.arith("mulf", xa, wa))
    return ex.b.generic([x, wt], maps, init.type, iters, body, init=init)


def matmul_onto(ex, x: Value, wt: Value, init: Value | None,
                out: TensorType):
    """x[..., K] . wt[K, N] + init (None: zero), rounded to out's dtype."""
    r = out.rank
    lead = list(range(r - 1))
    acc_dtype = torch.float64 if out.dtype == torch.float64 else torch.float32
    acc_type = out.with_dtype(acc_dtype)
    if r >= 2:
        y = _rows_matmul(ex, x, wt, init, acc_type)
    else:
        y = _generic_matmul(ex, x, wt, init if init is not None
                            else ex.b.fill(0, acc_type))
    if y.type.dtype == out.dtype:
        return y
    return ex.map([y], out, lambda b, a: b.convert(a, out.dtype))


@handles(aten.linear.default)
def linear(ex, x, weight, bias=None):
    """x[..., K] . weight[N, K]^T + bias[N]: the weight transposed once to
    [K, N], then matmul_onto; a weight read quantized is
    attn.quantized_matmul's, plus the bias."""
    out = ex.out_type()
    x, w = ex.tensor(x), ex.tensor(weight)
    fmt = ex.quantized.get(w.name)
    if fmt is not None:
        y = ex.b.attn("quantized_matmul", [x, w], out,
                      attrs=[f"format = {fmt}"])
        return y if bias is None else binary(ex, "add", y, bias, out)
    if not mlir.is_float(out.dtype) or w.type.rank != 2:
        ex.unsupported("linear needs a float 2-D weight")
    n, k = w.type.dims
    wt = ex.b.transpose(w, [1, 0], TensorType((k, n), w.type.dtype))
    return matmul_onto(ex, x, wt, _accumulator(ex, out, bias), out)


@handles(aten.addmm.default)
def addmm(ex, bias, x, w, beta=1, alpha=1):
    """bias + x . w (GPT-2's Conv1D); other beta/alpha are scaled steps."""
    out = ex.out_type()
    if not mlir.is_float(out.dtype):
        ex.unsupported(f"{out.dtype} addmm")
    x, w = ex.tensor(x), ex.tensor(w)
    if beta != 1 or alpha != 1:
        prod = matmul_onto(ex, x, w, _accumulator(ex, out, None), out)
        prod = binary(ex, "mul", prod, alpha) if alpha != 1 else prod
        scaled = binary(ex, "mul", bias, beta) if beta != 1 else bias
        return binary(ex, "add", scaled, prod)
    return matmul_onto(ex, x, w, _accumulator(ex, out, bias), out)



def _expert_weights(ex, node_arg, w: Value):
    """The experts' weights as stored: (base, True) when `w` is a swap of
    the last two dims of a rank-3 tensor `base` (transformers passes
    `weight.transpose(-2, -1)` of [E, N, K] parameters), so that each
    expert's slice is transposed alone (the nn.Linear form the GEMM reads
    in place) instead of all experts' weights per call; else (w, False)."""
    import torch.fx
    if isinstance(node_arg, torch.fx.Node) and node_arg.op == "call_function":
        t = node_arg.target
        swap = None
        if t == aten.transpose.int:
            swap = sorted(d % 3 for d in node_arg.args[1:3])
        elif t == aten.permute.default and \
                [d % 3 for d in node_arg.args[1]] == [0, 2, 1]:
            swap = [1, 2]
        base = ex.env.get(node_arg.args[0])
        if swap == [1, 2] and isinstance(base, Value) and base.type.rank == 3:
            return base, True
    return w, False


def _group_rows(ex, offs: Value, e: str, rows: str) -> tuple[str, str]:
    """Lines of the loop body giving group e's first row and row count:
    rows [offs[e-1], offs[e]) (from 0 for e = 0), clamped to [0, rows) as
    Python slicing clamps; an offset below 0 fails a run-time check."""
    b = ex.b
    zero, one = b.index(0), b.index(1)
    names = {k: b.fresh() for k in ("pm", "prev", "first", "raw_s", "raw_e",
                                     "s0", "e0", "neg", "start", "end",
                                     "count", "lo", "hi")}
    n = names
    elt = offs.type.elt
    lines = [
        f"{n['first']} = arith.cmpi eq, {e}, {zero} : index",
        f"{n['pm']} = arith.subi {e}, {one} : index",
        f"{n['prev']} = arith.maxsi {n['pm']}, {zero} : index",
        f"{n['raw_s']} = tensor.extract {offs.name}[{n['prev']}] : {offs.type}",
        f"{n['raw_e']} = tensor.extract {offs.name}[{e}] : {offs.type}",
        f"{n['s0']} = arith.index_cast {n['raw_s']} : {elt} to index",
        f"{n['e0']} = arith.index_cast {n['raw_e']} : {elt} to index",
        f"{n['neg']} = arith.cmpi sge, {n['e0']}, {zero} : index",
        f'cf.assert {n["neg"]}, "grouped product offsets must not be '
        f'negative"',
        f"{n['lo']} = arith.select {n['first']}, {zero}, {n['s0']} : index",
        f"{n['start']} = arith.minsi {n['lo']}, {rows} : index",
        f"{n['hi']} = arith.minsi {n['e0']}, {rows} : index",
        f"{n['end']} = arith.maxsi {n['hi']}, {n['start']} : index",
        f"{n['count']} = arith.subi {n['end']}, {n['start']} : index"]
    ex.b.lines.extend(f"      {line} {ex.b.loc}" for line in lines)
    return n["start"], n["count"]


def _group_loop(ex, x: Value, offs: Value, groups: int, acc_t: TensorType,
                product) -> Value:
    """An scf.for over the groups onto `acc_t` (zeros at first): for group
    e, rows [offs[e-1], offs[e]) of `x` (`_group_rows`), `product(e, xs,
    slot)` gives the lines computing the group's rows of the result from
    `xs` (those rows of x, tensor<?xKx...>) and `slot` (those rows of the
    accumulator), and their value; it is written into the group's rows (an
    extract/insert pair that bufferizes in place: no copy per group)."""
    b = ex.b
    rows_dim, k = x.type.dims
    n = acc_t.dims[1]
    zeros = b.fill(0, acc_t)
    zero, one, count_g = b.index(0), b.index(1), b.index(groups)
    rows = b.index(rows_dim)
    loop, e, acc = b.fresh(), b.fresh(), b.fresh()
    b.lines.append(f"    {loop} = scf.for {e} = {zero} to {count_g} step "
                   f"{one} iter_args({acc} = {zeros.name}) -> ({acc_t}) {{")
    start, count = _group_rows(ex, offs, e, rows)
    rows_t = f"tensor<?x{k}x{x.type.elt}>"
    part_t = f"tensor<?x{n}x{acc_t.elt}>"
    xs, slot, new = b.fresh(), b.fresh(), b.fresh()
    lines, y = product(e, (xs, rows_t), (slot, part_t))
    body = [f"{xs} = tensor.extract_slice {x.name}[{start}, 0] [{count}, {k}]"
            f" [1, 1] : {x.type} to {rows_t}",
            f"{slot} = tensor.extract_slice {acc}[{start}, 0] [{count}, {n}] "
            f"[1, 1] : {acc_t} to {part_t}",
            *lines,
            f"{new} = tensor.insert_slice {y} into {acc}[{start}, 0] "
            f"[{count}, {n}] [1, 1] : {part_t} into {acc_t}",
            f"scf.yield {new} : {acc_t}"]
    b.lines.extend(f"      {line} {b.loc}" for line in body)
    b.lines.append(f"    }} {b.loc}")
    return Value(loop, acc_t)


def _grouped_mm(ex, x, w, offs, out: TensorType) -> Value:
    """out[r] = x[r] . w[g] for the rows r of group g, rows [offs[g-1],
    offs[g]) in group order (a later group's rows overwrite an earlier
    one's, as the sequential reference does), the rows after the last
    offset 0. An scf.for over the groups, one GEMM of run-time row count
    per group on the f32 (f64) accumulator."""
    w_arg = ex.node.args[1]
    x, w, offs = ex.tensor(x), ex.tensor(w), ex.tensor(offs)
    if w.name in ex.quantized_stacks:
        return _quantized_grouped_mm(ex, x, w, offs, out)
    if x.type.rank != 2 or w.type.rank != 3 or offs.type.rank != 1 or \
            not mlir.is_float(out.dtype) or mlir.is_float(offs.type.dtype):
        ex.unsupported("grouped products other than 2-D rows x 3-D weights "
                       "with 1-D integer offsets")
    rows_dim, k = x.type.dims
    groups, _, n = w.type.dims
    if not isinstance(groups, int) or not isinstance(k, int) or \
            not isinstance(n, int):
        ex.unsupported("grouped products with dynamic weight sizes")
    base, transposed = _expert_weights(ex, w_arg, w)
    acc_dtype = torch.float64 if out.dtype == torch.float64 else torch.float32
    acc_elt = mlir.element_type(acc_dtype)
    b = ex.b

    def product(e, rows, slot):
        (xs, rows_t), (slot, part_t) = rows, slot
        wt, ws, zero_f, filled, y = (b.fresh() for _ in range(5))
        wt_t = f"tensor<{k}x{n}x{w.type.elt}>"
        if transposed:
            nk_t = f"tensor<{n}x{k}x{w.type.elt}>"
            init = b.fresh()
            lines = [f"{ws} = tensor.extract_slice {base.name}[{e}, 0, 0] "
                     f"[1, {n}, {k}] [1, 1, 1] : {base.type} to {nk_t}",
                     f"{init} = tensor.empty() : {wt_t}",
                     f"{wt} = linalg.transpose ins({ws} : {nk_t}) outs("
                     f"{init} : {wt_t}) permutation = [1, 0]"]
        else:
            lines = [f"{wt} = tensor.extract_slice {w.name}[{e}, 0, 0] "
                     f"[1, {k}, {n}] [1, 1, 1] : {w.type} to {wt_t}"]
        return lines + [
            f"{zero_f} = arith.constant {mlir.scalar_literal(0, acc_dtype)}",
            f"{filled} = linalg.fill ins({zero_f} : {acc_elt}) outs({slot} : "
            f"{part_t}) -> {part_t}",
            f"{y} = linalg.matmul ins({xs}, {wt} : {rows_t}, {wt_t}) "
            f"outs({filled} : {part_t}) -> {part_t}"], y

    y = _group_loop(ex, x, offs, groups, TensorType((rows_dim, n), acc_dtype),
                    product)
    if out.dtype == acc_dtype:
        return y
    return ex.map([y], out, lambda bb, a: bb.convert(a, out.dtype))


def _quantized_grouped_mm(ex, x: Value, w: Value, offs: Value,
                          out: TensorType) -> Value:
    """_grouped_mm with the experts read quantized: `w` is the bytes of an
    [E, N, K] stack (attnfuse.quant), whose matrix e, at byte e * stride,
    is group e's attn.quantized_matmul weight; its result (rounded once to
    the rows' element type, as the float path rounds its f32 sums) fills
    the group's rows, the rows after the last offset 0."""
    (groups, n, k), stride, nbytes = ex.quantized_stacks[w.name]
    rows_dim, xk = x.type.dims
    if xk != k or x.type.dtype != out.dtype:
        ex.unsupported(f"a grouped product of {x.type} rows with quantized "
                       f"[{groups}, {n}, {k}] experts giving {out.dtype}")
    b = ex.b
    stride_c = b.index(stride)
    bytes_t = f"tensor<{nbytes}xi8>"

    def product(e, rows, slot):
        (xs, rows_t), (_, part_t) = rows, slot
        off, wb, y = b.fresh(), b.fresh(), b.fresh()
        return [f"{off} = arith.muli {e}, {stride_c} : index",
                f"{wb} = tensor.extract_slice {w.name}[{off}] [{nbytes}] [1] "
                f": {w.type} to {bytes_t}",
                f'{y} = "attn.quantized_matmul"({xs}, {wb}) {{format = '
                f'{ex.quantized[w.name]}}} : ({rows_t}, {bytes_t}) -> '
                f'{part_t}'], y

    acc_t = TensorType((rows_dim, n), out.dtype)
    return _group_loop(ex, x, offs, groups, acc_t, product)


@handles("transformers.grouped_mm_fallback.default")
def grouped_mm_fallback(ex, x, w, offs):
    """transformers' grouped experts product (rows sorted by expert)."""
    return _grouped_mm(ex, x, w, offs, ex.out_type())


@handles(aten._grouped_mm.default)
def grouped_mm(ex, x, w, offs=None, bias=None, out_dtype=None):
    """torch._grouped_mm of 2-D rows and 3-D weights with offsets (rows
    after the last offset are 0; PyTorch leaves them unwritten)."""
    if offs is None or bias is not None:
        ex.unsupported("_grouped_mm without offsets or with a bias")
    return _grouped_mm(ex, x, w, offs, ex.out_type())


@handles(aten.linalg_solve_triangular.default)
def solve_triangular(ex, a, rhs, upper, left=True, unitriangular=False):
    """X with A X = B (X A = B with left=False) for triangular A [..., n,
    n], by forward (lower) or back (upper) substitution, one row of X per
    step of an scf.for: x_i = (b_i - sum over the solved j of a_ij x_j) /
    a_ii, the sum in order; with `unitriangular` the diagonal is 1 and
    not read (exact for the unit lower systems Qwen3-Next's gated delta
    rule solves). Only the triangle is read, as LAPACK does."""
    out = ex.out_type()
    if out.dtype not in (torch.float32, torch.float64):
        ex.unsupported(f"triangular solve in {out.dtype}")
    a, rhs = ex.tensor(a, out.dtype), ex.tensor(rhs, out.dtype)
    if not left:
        # X A = B is A^T X^T = B^T, the other triangle.
        def swap_dims(dims):
            return tuple(dims[:-2]) + (dims[-1], dims[-2])

        def swap(v):
            r = v.type.rank
            perm = list(range(r - 2)) + [r - 1, r - 2]
            return ex.b.transpose(v, perm, v.type.with_dims(
                swap_dims(v.type.dims)))
        at, bt = swap(a), swap(rhs)
        xt_type = out.with_dims(swap_dims(out.dims))
        xt = _substitute(ex, at, bt, not upper, unitriangular, xt_type)
        return swap(xt)
    return _substitute(ex, a, rhs, upper, unitriangular, out)


def _substitute(ex, a: Value, rhs: Value, upper: bool, unit: bool,
                out: TensorType) -> Value:
    r = out.rank
    batch = out.dims[:-2]
    n, k = out.dims[-2:]
    a_type = TensorType(batch + (n, n), out.dtype)
    if a.type.dims != a_type.dims:
        a = ex.map([a], a_type, lambda b, x: x)
    if rhs.type.dims != out.dims:
        rhs = ex.map([rhs], out, lambda b, x: x)
    b = ex.b
    row_t = TensorType(batch + (1, k), out.dtype)
    a_row_t = TensorType(batch + (1, n), out.dtype)
    zero, one, count = b.index(0), b.index(1), b.index(n)
    last = b.index(plain_dim(n - 1)) if isinstance(n, int) else \
        b.emit(f"arith.subi {count}, {one} : index")
    sizes_b = [d if isinstance(d, int) else b.index(d) for d in batch]
    b.dynamic_sizes(row_t)
    b.dynamic_sizes(a_row_t)
    x0 = b.fill(0, out)
    loop, t, x = b.fresh(), b.fresh(), b.fresh()
    b.lines.append(f"    {loop} = scf.for {t} = {zero} to {count} step {one} "
                   f"iter_args({x} = {x0.name}) -> ({out}) {{")
    i = t
    if upper:
        i = b.fresh()
        b.lines.append(f"      {i} = arith.subi {last}, {t} : index {b.loc}")

    def mixed(values):
        return "[" + ", ".join(str(v) for v in values) + "]"
    ones = mixed([1] * r)
    a_row, b_row = b.fresh(), b.fresh()
    b.lines += [
        f"      {a_row} = tensor.extract_slice {a.name}"
        f"{mixed([0] * (r - 2) + [i, 0])} {mixed(sizes_b + [1, n if isinstance(n, int) else count])} "
        f"{ones} : {a.type} to {a_row_t} {b.loc}",
        f"      {b_row} = tensor.extract_slice {rhs.name}"
        f"{mixed([0] * (r - 2) + [i, 0])} "
        f"{mixed(sizes_b + [1, k if isinstance(k, int) else b.index(k)])} "
        f"{ones} : {rhs.type} to {row_t} {b.loc}"]
    a_row_v, b_row_v = Value(a_row, a_row_t), Value(b_row, row_t)
    x_v = Value(x, out)
    row = mlir.Scalar(i, mlir.INDEX)
    # Loops (batch..., 0, col, j): s[.., 0, col] = b - sum over solved j
    # (j < i lower, j > i upper) of a[.., 0, j] * x[.., j, col].
    lead = [f"d{d}" for d in range(r - 2)]
    j, col = f"d{r}", f"d{r - 1}"
    one_row = f"d{r - 2}"  # the row's dim of 1
    maps = [affine_map(r + 1, lead + [one_row, j]),
            affine_map(r + 1, lead + [j, col]),
            affine_map(r + 1, lead + [one_row, col])]
    iters = ["parallel"] * r + ["reduction"]

    def body(bb, args, o):
        jj = bb.index(r)
        solved = bb.cmp("gt" if upper else "lt", jj, row)
        prod = bb.arith("mulf", args[0], args[1])
        return bb.select(solved, bb.arith("subf", o, prod), o)
    s = b.generic([a_row_v, x_v], maps, row_t, iters, body,
                  init=b_row_v)
    if not unit:
        diag = b.fresh()
        b.lines.append(
            f"      {diag} = tensor.extract_slice {a.name}"
            f"{mixed([0] * (r - 2) + [i, i])} {mixed(sizes_b + [1, 1])} "
            f"{ones} : {a.type} to {TensorType(batch + (1, 1), out.dtype)} "
            f"{b.loc}")
        s = b.elementwise([s, Value(diag, TensorType(batch + (1, 1),
                                                     out.dtype))], row_t,
                          lambda bb, args, o: bb.arith("divf", args[0],
                                                       args[1]))
    new = b.fresh()
    b.lines += [
        f"      {new} = tensor.insert_slice {s.name} into {x}"
        f"{mixed([0] * (r - 2) + [i, 0])} "
        f"{mixed(sizes_b + [1, k if isinstance(k, int) else b.index(k)])} "
        f"{ones} : {row_t} into {out} {b.loc}",
        f"      scf.yield {new} : {out} {b.loc}",
        f"    }} {b.loc}"]
    return Value(loop, out)
