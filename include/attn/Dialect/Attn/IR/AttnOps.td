//===- AttnOps.td - attn dialect ops -------------------------*- tablegen -*-===//
//
// Op and attribute names here are a contract (docs/dialect.md, docs/AttnOps.md):
// other tools write this IR in generic form, so they must not change.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "attn/Dialect/Attn/IR/AttnInterfaces.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Attn_FloatElement : AnyTypeOf<[F16, BF16, F32, F64], "f16, bf16, f32 or f64">;
def Attn_FloatTensor : RankedTensorOf<[F16, BF16, F32, F64]>;
def Attn_BoolTensor : RankedTensorOf<[I1]>;
def Attn_MaskTensor : RankedTensorOf<[I1, F16, BF16, F32, F64]>;
def Attn_AnyTensor : RankedTensorOf<[I1, F16, BF16, F32, F64]>;

/// Ops whose value is a scalar function of their operands' elements.
defvar Attn_Scalar = DeclareOpInterfaceMethods<Attn_ScalarElementwiseOpInterface>;

//===----------------------------------------------------------------------===//
// attn.matmul
//===----------------------------------------------------------------------===//

def Attn_MatmulOp : Attn_Op<"matmul", [Pure]> {
  let summary = "batched matrix product (torch.matmul)";
  let description = [{
    `torch.matmul` for operands of rank >= 2: `lhs` is `[..., M, K]`, `rhs`
    is `[..., K, N]`, the result is `[..., M, N]`; the batch dims broadcast
    as in NumPy. Both operands have the same element type; products
    accumulate in f32 (f64 for f64) and round to the element type once.

    ```mlir
    %s = attn.matmul %q, %kt : (tensor<2x8x128x64xf16>, tensor<2x1x64x128xf16>)
                               -> tensor<2x8x128x128xf16>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$lhs, Attn_FloatTensor:$rhs);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let builders = [
    // Infers the result type from the operands (static where they are).
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs)>
  ];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.transpose
//===----------------------------------------------------------------------===//

def Attn_TransposeOp : Attn_Op<"transpose", [Pure]> {
  let summary = "swap two dims (torch.transpose)";
  let description = [{
    `torch.transpose(input, dim0, dim1)`; negative dims count from the end.

    ```mlir
    %kt = attn.transpose %k dims(-2, -1) : tensor<2x8x128x64xf32> -> tensor<2x8x64x128xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, I64Attr:$dim0, I64Attr:$dim1);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `dims` `(` $dim0 `,` $dim1 `)` attr-dict `:` type($input) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "int64_t":$dim0, "int64_t":$dim1)>
  ];
  let extraClassDeclaration = [{
    /// The two dims, made non-negative (valid after verification).
    std::pair<int64_t, int64_t> getNormalizedDims();
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops
//===----------------------------------------------------------------------===//

class Attn_BinaryOp<string mnemonic, string torchName, list<Trait> traits = []>
    : Attn_Op<mnemonic, !listconcat(traits, [Pure, Attn_Scalar])> {
  let summary = "elementwise " # torchName # " with broadcasting";
  let description = [{
    Elementwise `}] # torchName # [{` with NumPy broadcasting. A rank-0
    operand is a scalar: as in PyTorch, it takes the other operand's element
    type. Otherwise both element types match.

    ```mlir
    %c = arith.constant dense<0.125> : tensor<f32>
    %r = attn.}] # mnemonic # [{ %s, %c : (tensor<8x128x128xf32>, tensor<f32>) -> tensor<8x128x128xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$lhs, Attn_FloatTensor:$rhs);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs), [{
      build($_builder, $_state,
            ::mlir::attn::inferElementwiseType({lhs, rhs}), lhs, rhs);
    }]>
  ];
  let hasVerifier = 1;
}

def Attn_MulOp : Attn_BinaryOp<"mul", "multiplication (torch.mul)", [Commutative]> {
  let hasFolder = 1;
}
def Attn_DivOp : Attn_BinaryOp<"div", "true division (torch.div)"> {
  let hasFolder = 1;
}
def Attn_AddOp : Attn_BinaryOp<"add", "addition (torch.add)", [Commutative]>;
def Attn_SubOp : Attn_BinaryOp<"sub", "subtraction (torch.sub)">;
def Attn_MaximumOp : Attn_BinaryOp<"maximum", "maximum, NaN if either is NaN (torch.maximum)", [Commutative]>;
def Attn_MinimumOp : Attn_BinaryOp<"minimum", "minimum, NaN if either is NaN (torch.minimum)", [Commutative]>;

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

class Attn_UnaryOp<string mnemonic, string torchName>
    : Attn_Op<mnemonic, [Pure, Attn_Scalar, AllTypesMatch<["input", "result"]>]> {
  let summary = "elementwise " # torchName;
  let description = [{
    Elementwise `}] # torchName # [{`, computed in the compute type (f32
    for f16/bf16) and rounded to the element type once.

    ```mlir
    %r = attn.}] # mnemonic # [{ %s : tensor<8x128x128xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Attn_TanhOp : Attn_UnaryOp<"tanh", "hyperbolic tangent (torch.tanh)">;
def Attn_ExpOp : Attn_UnaryOp<"exp", "exponential (torch.exp)">;
def Attn_NegOp : Attn_UnaryOp<"neg", "negation (torch.neg)">;
def Attn_AbsOp : Attn_UnaryOp<"abs", "absolute value (torch.abs)">;

//===----------------------------------------------------------------------===//
// attn.cmp
//===----------------------------------------------------------------------===//

def Attn_CmpPredicate : I64EnumAttr<"CmpPredicate", "comparison predicate", [
    I64EnumAttrCase<"eq", 0>, I64EnumAttrCase<"ne", 1>,
    I64EnumAttrCase<"lt", 2>, I64EnumAttrCase<"le", 3>,
    I64EnumAttrCase<"gt", 4>, I64EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::mlir::attn";
}

def Attn_CmpOp : Attn_Op<"cmp", [Pure, Attn_Scalar]> {
  let summary = "elementwise comparison to a boolean tensor (torch.eq, lt, ...)";
  let description = [{
    `torch.eq/ne/lt/le/gt/ge(lhs, rhs)` with NumPy broadcasting, giving i1.
    The operands compare at compute precision; as in PyTorch, every
    comparison with NaN is false except `ne`, which is true. A rank-0
    operand is a scalar (`mask == 0`).

    ```mlir
    %c = arith.constant dense<0.0> : tensor<f32>
    %keep = attn.cmp eq, %mask, %c : (tensor<2x1x1x128xf32>, tensor<f32>) -> tensor<2x1x1x128xi1>
    ```
  }];
  let arguments = (ins Attn_CmpPredicate:$predicate, Attn_FloatTensor:$lhs,
                       Attn_FloatTensor:$rhs);
  let results = (outs Attn_BoolTensor:$result);
  let assemblyFormat = [{
    $predicate `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.iota
//===----------------------------------------------------------------------===//

def Attn_IotaOp : Attn_Op<"iota", [Pure]> {
  let summary = "positions along one dim (torch.arange, viewed to broadcast)";
  let description = [{
    A tensor whose element at index `(x_0, ..., x_{n-1})` is `x_dimension`,
    as a float of the result's element type: `torch.arange(n)` viewed with
    size 1 in the other dims, so that it broadcasts against the scores.
    Position masks are written with it, without constants: causal
    `j <= i`, a sliding window `j > i - w`, ALiBi `-(i - j).abs() * slope`.
    Every position must be exact in the element type: along a static
    `dimension`, positions up to 2048 for f16, 256 for bf16, 2^24 for f32;
    along a dynamic (`?`) one the type must be f64, exact for any size a
    tensor can have. The dynamic sizes are operands, one per `?` dim in
    order, as for `tensor.empty`.

    ```mlir
    %i = attn.iota 0 : tensor<128x1xf32>
    %j = attn.iota 1 : tensor<1x128xf32>
    %future = attn.cmp gt, %j, %i : (tensor<1x128xf32>, tensor<128x1xf32>) -> tensor<128x128xi1>
    // The same with run-time sequence lengths %l and %s.
    %di = attn.iota 0 (%l) : tensor<?x1xf64>
    %dj = attn.iota 1 (%s) : tensor<1x?xf64>
    ```
  }];
  let arguments = (ins I64Attr:$dimension, Variadic<Index>:$dynamic_sizes);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $dimension (` ` `(` $dynamic_sizes^ `)`)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The value of `position` (the element's index along `dimension`).
    ::mlir::Value buildScalar(::mlir::OpBuilder &b, ::mlir::Location loc,
                              ::mlir::Value position);
  }];
}

//===----------------------------------------------------------------------===//
// attn.masked_fill
//===----------------------------------------------------------------------===//

def Attn_MaskedFillOp : Attn_Op<"masked_fill", [Pure, Attn_Scalar]> {
  let summary = "fill positions where a mask is true (Tensor.masked_fill)";
  let description = [{
    `Tensor.masked_fill(mask, value)` and the in-place `masked_fill_`: the
    result equals `input` except where the broadcast `mask` is true, where it
    is `value` rounded to the element type. The mask broadcasts to the
    input's shape; the result has the input's type.

    ```mlir
    %m = attn.masked_fill %s, %mask value(0xFFF0000000000000)
        : (tensor<2x8x128x128xf32>, tensor<128x128xi1>) -> tensor<2x8x128x128xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_BoolTensor:$mask, F64Attr:$value);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $mask `value` `(` $value `)` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.where
//===----------------------------------------------------------------------===//

def Attn_WhereOp : Attn_Op<"where", [Pure, Attn_Scalar]> {
  let summary = "select elementwise (torch.where)";
  let description = [{
    `torch.where(cond, a, b)`: `a` where `cond` is true, else `b`; the three
    operands broadcast together. A rank-0 `a` or `b` is a scalar.

    ```mlir
    %r = attn.where %mask, %s, %neg : (tensor<128x128xi1>, tensor<8x128x128xf32>, tensor<f32>)
                                      -> tensor<8x128x128xf32>
    ```
  }];
  let arguments = (ins Attn_BoolTensor:$cond, Attn_FloatTensor:$a, Attn_FloatTensor:$b);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $cond `,` $a `,` $b attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.softmax
//===----------------------------------------------------------------------===//

def Attn_SoftmaxOp : Attn_Op<"softmax", [Pure, AllTypesMatch<["input", "result"]>,
                                         Attn_SoftmaxOpInterface]> {
  let summary = "softmax along one dim (torch.softmax)";
  let description = [{
    `torch.softmax(input, dim)`, computed in the element type's accumulation
    precision (f32 for f16/bf16). A slice whose entries are all `-inf` gives
    NaN, as in PyTorch.

    ```mlir
    %p = attn.softmax %m dim(-1) : tensor<2x8x128x128xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, I64Attr:$dim);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input `dim` `(` $dim `)` attr-dict `:` type($input)";
  let extraClassDeclaration = [{
    /// The softmax dim, made non-negative (valid after verification).
    int64_t getNormalizedDim();
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.safe_softmax
//===----------------------------------------------------------------------===//

def Attn_SafeSoftmaxOp : Attn_Op<"safe_softmax", [Pure,
    AllTypesMatch<["input", "result"]>, Attn_SoftmaxOpInterface]> {
  let summary = "softmax that gives 0 on a fully masked slice (torch._safe_softmax)";
  let description = [{
    `torch._safe_softmax(input, dim)`, the softmax of PyTorch's own SDPA math
    path: `attn.softmax`, except that a slice whose entries are all `-inf`
    gives 0 instead of NaN. A slice holding a NaN is NaN, whatever else it
    holds (NaN is not `-inf`). Same types and verifier as `attn.softmax`.

    ```mlir
    %p = attn.safe_softmax %m dim(-1) : tensor<2x8x128x128xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, I64Attr:$dim);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input `dim` `(` $dim `)` attr-dict `:` type($input)";
  let extraClassDeclaration = [{
    /// The softmax dim, made non-negative (valid after verification).
    int64_t getNormalizedDim();
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.cast
//===----------------------------------------------------------------------===//

def Attn_CastOp : Attn_Op<"cast", [Pure, Attn_Scalar]> {
  let summary = "convert the element type (Tensor.to(dtype))";
  let description = [{
    `Tensor.to(dtype)` between f16, bf16, f32 and f64 (round to nearest
    even). The shape does not change.

    ```mlir
    %f = attn.cast %s : tensor<8x128x128xf16> -> tensor<8x128x128xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// attn.dropout
//===----------------------------------------------------------------------===//

def Attn_DropoutOp : Attn_Op<"dropout", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "dropout (F.dropout)";
  let description = [{
    `F.dropout(input, p, training=train)`: with `train` true, each element
    is zeroed with probability `p` and the rest are scaled by `1 / (1 - p)`;
    with `train` false, or `p = 0`, it is the identity and folds away.
    `p` is in [0, 1).

    Which elements are kept is a counter-based hash of the element's
    row-major index and `seed` (an absent `seed` is 0), not a random-number
    state: the op is a pure function of its input and attributes, so the
    same op gives the same mask on every call, fusion into `attn.sdpa`
    (which carries the seed) keeps the mask, and CSE may merge two identical
    ops. Give independent dropouts distinct seeds. The stream cannot match
    PyTorch's generator.

    ```mlir
    %d = attn.dropout %p p(1.000000e-01) train(true) {seed = 7 : i64} : tensor<8x128x128xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, F64Attr:$p, BoolAttr:$train,
                       OptionalAttr<I64Attr>:$seed);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `p` `(` $p `)` `train` `(` $train `)` attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// attn.repeat_interleave
//===----------------------------------------------------------------------===//

def Attn_RepeatInterleaveOp : Attn_Op<"repeat_interleave", [Pure]> {
  let summary = "repeat each slice along a dim (torch.repeat_interleave)";
  let description = [{
    `torch.repeat_interleave(input, repeats, dim)` with an integer
    `repeats`: slice `i` of `dim` becomes slices `i * repeats` ...
    `i * repeats + repeats - 1`. Grouped-query attention uses it to expand
    `H_kv` key/value heads to `H` query heads.

    ```mlir
    %k8 = attn.repeat_interleave %k repeats(4) dim(1)
        : tensor<2x2x128x64xf16> -> tensor<2x8x128x64xf16>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, I64Attr:$repeats, I64Attr:$dim);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `repeats` `(` $repeats `)` `dim` `(` $dim `)` attr-dict `:` type($input) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The dim, made non-negative (valid after verification).
    int64_t getNormalizedDim();
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// attn.pack_weight, attn.unpack_weight
//===----------------------------------------------------------------------===//

def Attn_PackWeightOp : Attn_Op<"pack_weight", [Pure]> {
  let summary = "a GEMM's right operand in the CPU GEMM's panel layout";
  let description = [{
    The `[K, N]` right operand of a GEMM (nn.Linear's `[N, K]` weight as
    stored when `transposed` is set) in the panels that the CPU GEMM reads:
    the result `[NB, KB, kc, nc]` holds in `[j, b, r, c]` the element
    `(b * kc + r, j * nc + c)` of the `[K, N]` operand, zero beyond `K` and
    `N`, with `NB = ceil(N / nc)` and `KB = ceil(K / kc)`. `kc` and `nc`
    are the GEMM's k and column blocks for the target
    (`attn-cpu-prepack-weights` picks them); a weight packed once serves
    every call. Static shapes only.

    A bf16 weight is packed in pairs of k for AVX512-BF16's `vdpbf16ps`:
    the result `[NB, KB, kc / 2, 2 * nc]` (kc even, or the whole of an odd
    `K` rounded up) holds in `[j, b, p, 2 * c + i]` the element
    `(b * kc + 2 * p + i, j * nc + c)`, zero beyond `K` and `N`. For an AMX
    target, `kc` and `nc` are multiples of 32 (whole tiles, zero-padded), and
    the AMX path and its `vdpbf16ps` fallback read the same panels. Panels
    of whole tiles (`kc / 2` a multiple of 16, `2 * nc` of 64) are grouped:
    each panel's `kc / 2 * 2 * nc` elements hold its 32-wide groups of
    columns `x = 2 * c + i` one after the other, so that `(p, x)` above is
    at row-major position `(x / 32) * (kc / 2) * 32 + p * 32 + x % 32` of
    the panel `[j, b]` (16 pair rows of one group, an AMX B tile, are 1 KiB
    of consecutive memory).

    ```mlir
    %p = attn.pack_weight %w transposed
        : tensor<3072x768xf32> -> tensor<48x3x256x64xf32>
    %q = attn.pack_weight %v transposed
        : tensor<3072x768xbf16> -> tensor<48x3x128x128xbf16>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32, BF16]>:$weight,
                       UnitAttr:$transposed);
  let results = (outs RankedTensorOf<[F32, BF16]>:$packed);
  let assemblyFormat = [{
    $weight (`transposed` $transposed^)? attr-dict `:` type($weight) `->`
    type($packed)
  }];
  let hasVerifier = 1;
}

def Attn_UnpackWeightOp : Attn_Op<"unpack_weight", [Pure]> {
  let summary = "the GEMM operand that packed panels hold";
  let description = [{
    The `[K, N]` matrix whose panels `packed` holds (see
    `attn.pack_weight`, f32 panels or bf16 pairs). The CPU lowering takes
    it only as the right operand of a 2-D `linalg.matmul` with an f32
    result (and, for bf16 pairs, a bf16 left operand on a target that
    multiplies pairs with `vdpbf16ps`), whose GEMM then reads the panels in
    place instead of packing them on every call; with `amx`, bf16 panels of
    whole tiles are also the B tiles of the AMX path.

    ```mlir
    %wt = attn.unpack_weight %p : tensor<48x3x256x64xf32> -> tensor<768x3072xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32, BF16]>:$packed);
  let results = (outs RankedTensorOf<[F32, BF16]>:$result);
  let assemblyFormat = "$packed attr-dict `:` type($packed) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// #attn.quant, attn.quantized_matmul
//===----------------------------------------------------------------------===//

def Attn_QuantScheme : I32EnumAttr<"QuantScheme",
    "a quantized weight format (docs/quantization.md, attnfuse.quant)", [
      I32EnumAttrCase<"q8_0", 0>, I32EnumAttrCase<"q4_0", 1>,
      I32EnumAttrCase<"q4_k", 2>, I32EnumAttrCase<"q6_k", 3>,
      I32EnumAttrCase<"int8_sym", 4>, I32EnumAttrCase<"int8_asym", 5>,
      I32EnumAttrCase<"int4_sym", 6>, I32EnumAttrCase<"int4_asym", 7>]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_QuantFormatAttr : AttrDef<Attn_Dialect, "QuantFormat"> {
  let mnemonic = "quant";
  let summary = "the byte layout of a quantized [N, K] weight";
  let description = [{
    A scheme of `attnfuse.quant` (docs/quantization.md gives the bytes):
    `scheme`, `group` (elements along K that share a scale: a GGUF block or
    an NNCF-style group) and `scale` (the scales' type). The GGUF schemes
    have fixed blocks and print without them: `#attn.quant<q4_0>` (group
    32, f16 scales; q8_0 too), `#attn.quant<q4_k>` (super-blocks of 256;
    q6_k too). The int schemes spell both:
    `#attn.quant<int4_asym, group = 128, scale = f16>`; `group` is K for
    one group per output channel, a multiple of 32 for 4 bits, and
    `scale` is f16 or f32.
  }];
  let parameters = (ins EnumParameter<Attn_QuantScheme>:$scheme,
                        "int64_t":$group, "::mlir::Type":$scale);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Bits per code: 8, 6 or 4.
    int64_t getBits() const;
    /// q8_0, q4_0, q4_k, q6_k: blocks with their scales inside.
    bool isGguf() const;
    /// int8_asym, int4_asym: a zero point per group (q4_k's mins are in
    /// its blocks).
    bool hasZeroPoints() const;
    /// GGUF: the bytes of one block of `group` elements.
    int64_t getBlockBytes() const;
    /// Bytes of one stored scale (2 for f16, 4 for f32).
    int64_t getScaleBytes() const;
    /// The layout's sections for an [n, k] weight (k a multiple of the
    /// group): byte offsets of the scales and zero points (int schemes;
    /// 0 where there are none) and the total size. Fails when a size
    /// overflows int64.
    struct Layout {
      int64_t scales = 0, zeroPoints = 0, bytes = 0;
    };
    ::mlir::FailureOr<Layout> getLayout(int64_t n, int64_t k) const;
  }];
}

def Attn_QuantizedMatmulOp : Attn_Op<"quantized_matmul", [Pure]> {
  let summary = "product with a quantized [N, K] weight (nn.Linear's x . W^T)";
  let description = [{
    `nn.Linear` without bias on a quantized weight: `input` is
    `[batch..., M, K]` (any rank >= 2; batch dims and M may be dynamic, K
    is static) in f32, bf16 or f16; `weight` holds the bytes of an
    `[N, K]` weight, exactly as docs/quantization.md lays them out for
    `format` (`#attn.quant<...>`), as a static 1-D `i8` tensor of the
    layout's size; the result is `[batch..., M, N]` in the input's element
    type, N static. K and N are the input's and the result's last dims.

    `result[..., m, n] = sum_k input[..., m, k] * W[n, k]`, where `W` is
    the weight dequantized exactly (the formulas of docs/quantization.md,
    `attnfuse.quant.dequantize`), the products accumulated in f32 and the
    sum rounded once to the element type. The order of the additions is
    not specified, and a lowering may fuse a weight's scale multiplication
    with the product (one rounding less).

    Formats (`#attn.quant<scheme[, group = G, scale = T]>`):

    | scheme | group | scale | bytes of an [N, K] weight |
    | --- | --- | --- | --- |
    | `q8_0` | 32 | f16 | N * K / 32 * 34 |
    | `q4_0` | 32 | f16 | N * K / 32 * 18 |
    | `q4_k` | 256 | f16 | N * K / 256 * 144 |
    | `q6_k` | 256 | f16 | N * K / 256 * 210 |
    | `int8_sym`, `int8_asym` | G dividing K | f16 or f32 | codes N * K, then scales (and zero points), each section at a multiple of 64 |
    | `int4_sym`, `int4_asym` | G dividing K, a multiple of 32 | f16 or f32 | codes N * K / 2, then scales (and zero points), each section at a multiple of 64 |

    The GGUF schemes print without their fixed group and scale. The
    verifier checks that K is a multiple of the group and that the
    weight's size is the layout's, and names the size it expects.

    ```mlir
    %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>}
        : (tensor<1x7x4096xbf16>, tensor<9437184xi8>) -> tensor<1x7x4096xbf16>
    %z = attn.quantized_matmul %x2, %w2
        {format = #attn.quant<int4_asym, group = 128, scale = f16>}
        : (tensor<?x1024xf32>, tensor<3018752xi8>) -> tensor<?x5632xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F16, BF16, F32]>:$input,
                       RankedTensorOf<[I8]>:$weight,
                       Attn_QuantFormatAttr:$format);
  let results = (outs RankedTensorOf<[F16, BF16, F32]>:$result);
  let assemblyFormat = [{
    $input `,` $weight attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// N: the weight's rows (the result's last dim).
    int64_t getN() { return getType().getShape().back(); }
    /// K: the contraction (the input's last dim).
    int64_t getK() { return getInput().getType().getShape().back(); }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.quantized_embedding
//===----------------------------------------------------------------------===//

def Attn_QuantizedEmbeddingOp : Attn_Op<"quantized_embedding", [Pure]> {
  let summary = "rows of a quantized [N, K] table (nn.Embedding's lookup)";
  let description = [{
    `nn.Embedding` (`aten.embedding`) on a quantized table: `weight` holds
    the bytes of an `[N, K]` table (N = `num_rows`) exactly as
    docs/quantization.md lays them out for `format`, as a static 1-D `i8`
    tensor of the layout's size (attn.quantized_matmul's weights: one
    tensor serves both, a LM head tied to the embeddings); `indices` is an
    integer tensor of any shape (dims may be dynamic); the result is
    `indices`' shape followed by K (static), in f32, bf16 or f16.

    `result[i..., k] = W[indices[i...], k]`, the row dequantized exactly
    (docs/quantization.md) and rounded once to the element type. An index
    outside `[0, N)` (negative ones included, as `nn.Embedding` refuses
    them) fails a run-time check ("index out of range"). The verifier
    checks what attn.quantized_matmul's checks of the format and the
    weight's size, and that the result's shape is the indices' and K.

    ```mlir
    %e = attn.quantized_embedding %ids, %table
        {format = #attn.quant<q8_0>, num_rows = 32000 : i64}
        : (tensor<1x?xi64>, tensor<34816000xi8>) -> tensor<1x?x1024xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I32, I64]>:$indices,
                       RankedTensorOf<[I8]>:$weight,
                       Attn_QuantFormatAttr:$format,
                       ConfinedAttr<I64Attr, [IntPositive]>:$num_rows);
  let results = (outs RankedTensorOf<[F16, BF16, F32]>:$result);
  let assemblyFormat = [{
    $indices `,` $weight attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// N: the table's rows.
    int64_t getN() { return getNumRows(); }
    /// K: a row's elements (the result's last dim).
    int64_t getK() { return getType().getShape().back(); }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.reshape
//===----------------------------------------------------------------------===//

def Attn_ReshapeOp : Attn_Op<"reshape", [Pure]> {
  let summary = "same elements in another static shape (Tensor.view, reshape)";
  let description = [{
    `Tensor.view(shape)` and `torch.reshape(input, shape)`: the elements in
    row-major order, laid out in the result's shape. Both shapes are static
    and hold the same number of elements; the element type does not change.
    The fusion sees through one that only splits or merges batch dims (all
    but the last two): it becomes the equivalent `tensor.expand_shape` or
    `tensor.collapse_shape`.

    ```mlir
    %s4 = attn.reshape %s : tensor<16x128x128xf32> -> tensor<2x8x128x128xf32>
    ```
  }];
  let arguments = (ins Attn_AnyTensor:$input);
  let results = (outs Attn_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// attn.sdpa
//===----------------------------------------------------------------------===//

def Attn_MaskPolarity : I32EnumAttr<"MaskPolarity",
    "what the true elements of attn.sdpa's boolean mask mean", [
      I32EnumAttrCase<"keep", 0>, I32EnumAttrCase<"drop", 1>]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_MaskPolarityAttr : EnumAttr<Attn_Dialect, Attn_MaskPolarity,
                                     "mask_polarity"> {
  let summary = "keep: true = the position takes part; drop: true = masked out";
  let assemblyFormat = "`<` $value `>`";
}

def Attn_PaddingSide : I32EnumAttr<"PaddingSide",
    "where attn.sdpa's padded layout puts the padding of a shorter sequence "
    "(packed: there is none, the sequences are back to back)", [
      I32EnumAttrCase<"right", 0>, I32EnumAttrCase<"left", 1>,
      I32EnumAttrCase<"packed", 2>]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_PaddingSideAttr : EnumAttr<Attn_Dialect, Attn_PaddingSide,
                                    "padding_side"> {
  let summary = "right: a sequence's tokens come first; left: they come "
                "last; packed: the sequences are back to back, unpadded";
  let assemblyFormat = "`<` $value `>`";
}

/// Per-sequence lengths of attn.sdpa's padded layout: [B] of i32 or i64.
def Attn_LengthsTensor : TensorRankOf<[I32, I64], [1]>;

/// attn.sdpa's attention sinks: one logit per query head, [H].
def Attn_SinksTensor : TensorRankOf<[F16, BF16, F32, F64], [1]>;

/// attn.sdpa written in generic form without `operandSegmentSizes` (as other
/// tools write it) gets its segment sizes from its operands and its
/// score_mod region; structural, so it runs before they are checked.
def Attn_InferSdpaOperandSegments
    : NativeOpTrait<"InferSdpaOperandSegments">, StructuralOpTrait {
  let cppNamespace = "::mlir::attn";
}

def Attn_SdpaOp : Attn_Op<"sdpa", [NoMemoryEffect, IsolatedFromAbove,
    Attn_InferSdpaOperandSegments, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<ConditionallySpeculatable>]> {
  let summary = "fused scaled dot-product attention (F.scaled_dot_product_attention)";
  let description = [{
    `F.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
    is_causal, scale)` with query `[..., L, E]`, key `[..., S, E]`, value
    `[..., S, Ev]` and result `[..., L, Ev]`.

    The exact function (this is the contract the fusion pass and every
    lowering keep):

    1. `s = (query . key^T) * scale`, accumulated in f32 (f64 for f64 inputs).
       `scale` defaults to `1/sqrt(E)` when absent.
    2. With a `score_mod` region (FlexAttention's `score_mod`), `s` becomes
       what the region yields for it: the region receives `s` (f32; f64 for
       f64 inputs), the index of every score dim (`index` values: the batch
       dims, then the query row `i` and the key column `j`) and one element
       of each extra operand, broadcast to the scores `[..., L, S]` as in
       NumPy (a static 1 broadcasts, a `?` dim must equal the scores dim),
       and yields the new score (same type) with `attn.yield`. It is scalar
       code (arith, math; the fusion writes each raised op's exact scalar
       function, f16/bf16 rounding included). A `-inf` it yields is a
       masked position and a NaN poisons the row, as in the chain.
    3. A float `mask` (any float type; added at f32 precision) is added to
       `s`. Then a boolean `mask` (i1) sets the positions it removes to
       `masked_value`: those where it is false with `mask_polarity = keep`
       (the default: true = the position takes part, PyTorch's convention),
       those where it is true with `mask_polarity = drop` (a `masked_fill`
       mask, as written); and `is_causal` sets the positions `j > i` (top-left
       aligned, as PyTorch's `torch.ones(L, S).tril()`) to `masked_value`:
       these replace the score, whatever the additive mask added.
       `masked_value` defaults to `-inf` and is first rounded to the element
       type, as a `masked_fill` on a tensor of that type would. `is_causal`
       and a mask may be given together; both apply.
       A sliding window (`window_left`, `window_right`, each optional and
       unbounded when absent) likewise sets to `masked_value` every position
       outside the band `i - window_left <= j <= i + window_right`, indices
       top-left aligned as for `is_causal` (a band mask `j > i - w`,
       `j <= i` is `window_left = w - 1` with `is_causal`). It combines with
       `is_causal` and the mask by intersection; a window may be empty for
       some rows, which are then fully masked. With the default `-inf` the
       lowerings skip key blocks outside the band, and those of a boolean
       mask's tiles (query rows x key block) that it removes entirely (a
       padding mask's padded keys: no lengths needed); both skips are
       exact, since such positions add `exp(-inf) = 0` and a row that no
       tile keeps ends as its all `-inf` scores would. An additive mask
       (`-inf + NaN` is NaN), or a finite `masked_value` (a fully masked
       row averages all keys), is applied to every score.
    4. `p = softmax(s)` along S. A row whose scores are all `-inf` gives NaN
       (exactly as `torch.softmax` does for the unfused chain); with a finite
       `masked_value`, a fully masked row averages `value` uniformly. With
       `safe_softmax` (the chain used `attn.safe_softmax`, as PyTorch's own
       SDPA math path does) such a row gives `p = 0` instead, so its result
       row is `0 . value`; a row holding a NaN score is still NaN.
    5. With `dropout_p > 0`, `p` is dropped out as `F.dropout(p, dropout_p)`,
       with the mask of `attn.dropout` on the `[..., L, S]` probabilities
       with the same `seed` (absent: 0).
    6. `result = p . value`, rounded to the element type once.

    Sequence lengths (the padded layout of a variable-length batch): with
    `q_lengths` and/or `kv_lengths` (`[B]`, i32 or i64, B the query's first
    dim; the operands need rank >= 3), sequence `b` holds `q_lengths[b]`
    real query rows among the L and `kv_lengths[b]` real keys among the S,
    the others being padding: with `padding_side = right` (the default) the
    real rows are `i < q_lengths[b]` and the real keys `j < kv_lengths[b]`,
    with `padding_side = left` they are `i >= L - q_lengths[b]` and
    `j >= S - kv_lengths[b]`. A side without lengths is all real. The
    result is exactly PyTorch's SDPA with the equivalent boolean mask
    (`keep[b, i, j] = real row i and real key j`) intersected with
    everything above: padded keys take no part in any row; a padded query
    row, and a real row left with no key (a length 0, or its band or mask
    removes every real key), is 0 (what PyTorch's SDPA returns for a row
    its mask removes entirely: with lengths the softmax is always safe, as
    `safe_softmax`). Indices are those of the padded layout: `is_causal`,
    the window, the mask and the score_mod region see row `i` and key `j`
    as above (so with left padding of equal lengths causal attention is
    causal within each sequence). `masked_value` must stay `-inf` with
    lengths. A length below 0 or above L (S) is a run-time error
    ("attn.sdpa: a q_lengths (kv_lengths) value is out of range"). The CPU
    lowerings skip the key blocks past a sequence's keys and the query
    blocks past its rows; the CUDA kernels take the lengths too
    ([cuda.md](cuda.md)).

    The packed layout (FlashAttention's varlen form; `padding_side =
    packed`, both `q_lengths` and `kv_lengths` given, of one size B that
    need not be a dim of the query): the sequences are back to back along
    L and S with no padding, in every slice of the batch dims (e.g. a query
    `[1, H, T, E]` of T tokens). Sequence `b` has query rows
    `qo[b] <= i < qo[b] + q_lengths[b]` and keys `ko[b] <= j < ko[b] +
    kv_lengths[b]`, where `qo` and `ko` are the exclusive prefix sums of
    the lengths; row `i` attends to the keys of its own sequence only, and
    `is_causal` and the window see the positions within the sequence (`i -
    qo[b]`, `j - ko[b]`), as PyTorch's SDPA on each sequence alone does. A
    row whose sequence has no key is 0. The lengths must sum to L and to S
    (a run-time error, "attn.sdpa: the packed q_lengths (kv_lengths) must
    sum to the query's (key's) length"). A mask, a score_mod region and
    `dropout_p > 0` are not allowed with the packed layout. The CPU flash
    lowering runs each sequence's query blocks against its own keys only.

    Attention sinks (GPT-OSS's `sinks`, the `s_aux` of other code): with
    `sinks` (`[H]`, any float type, H the query's head dim, third from the
    end; the operands need rank >= 3), query head `h` has one more logit,
    `sinks[h]`, in its softmax's denominator and no value: step 4 becomes
    `p_j = exp(s_j - m) / (exp(sinks[h] - m) + sum_k exp(s_k - m))` with
    `m = max(sinks[h], max_k s_k)`, the softmax of the scores with the sink
    joined as one more column, that column then dropped (what
    `cat([scores, sinks], -1).softmax(-1)[..., :-1]` computes). The sink is
    read at f32 precision (f64 for f64 inputs) and is not multiplied by
    `scale` nor seen by the mask, the band, the lengths or the score_mod
    region. A row whose every score is masked therefore gives 0 (all of its
    probability goes to the sink) rather than NaN; it is NaN only when the
    sink is `-inf` too or a score is NaN. Sinks and `dropout_p > 0` are not
    allowed together. The CUDA lowering keeps an op with sinks on the CPU.

    Batch dims: key and value share their batch dims; each equals the
    query's or is 1 (broadcast); the head dim (third from the end) may also
    divide the query's (grouped-query attention: query head `h` reads
    key/value head `h / (Hq / Hkv)`, as `repeat_interleave` gives). The mask
    broadcasts to `[..., L, S]`.

    The op has no memory effects. It is speculatable when every operand has
    a static shape and it has no lengths (their values are checked at run
    time); a `?` dim is checked at run time (it never broadcasts),
    so such an op is not hoisted out of the code that guards it.

    ```mlir
    %o = attn.sdpa %q, %k, %v {is_causal = true, scale = 1.250000e-01 : f64}
        : (tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>)
          -> tensor<2x8x128x64xf16>
    %o2 = attn.sdpa %q, %k, %v, %mask
        : (tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>,
           tensor<2x1x1x128xi1>) -> tensor<2x8x128x64xf32>
    // A masked_fill mask (true = masked out), as the fusion passes it.
    %o3 = attn.sdpa %q, %k, %v, %pad {mask_polarity = #attn.mask_polarity<drop>}
        : (tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>,
           tensor<2x1x1x128xi1>) -> tensor<2x8x128x64xf32>
    // A left-padded batch of 2 sequences (the generator's prompts): row i
    // of sequence b is real iff i >= 128 - len[b]; so is key j.
    %o5 = attn.sdpa %q, %k, %v q_lengths(%len) kv_lengths(%len)
        {is_causal = true, padding_side = #attn.padding_side<left>}
        : (tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>,
           tensor<2xi32>, tensor<2xi32>) -> tensor<2x8x128x64xf32>
    // GPT-OSS: one sink logit per query head in each softmax's denominator.
    %o6 = attn.sdpa %q, %k, %v sinks(%sinks) {is_causal = true}
        : (tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>,
           tensor<8xbf16>) -> tensor<2x8x128x64xbf16>
    // Gemma-2 soft-capping, cap * tanh(s / cap), with a padding mask that the
    // chain added in f16 (one extra operand, broadcast to the scores).
    %o4 = attn.sdpa %q, %k, %v extras(%pad) {scale = 1.0 : f64}
        : (tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>,
           tensor<2x1x1x128xf16>) -> tensor<2x8x128x64xf16>
        score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %m: f16):
      %c = arith.constant 5.000000e+01 : f32
      %d = arith.divf %s, %c : f32
      %t = math.tanh %d : f32
      %r = arith.mulf %t, %c : f32
      %mf = arith.extf %m : f16 to f32
      %a = arith.addf %r, %mf : f32
      attn.yield %a : f32
    }
    ```

    In generic form the operands are `query`, `key`, `value`, the optional
    mask, `q_lengths`, `kv_lengths`, `sinks`, then the extra operands, and
    the region is the op's optional only region. `operandSegmentSizes` may
    be left out when there are no lengths and no sinks: the extra operands
    are then as many as the region has arguments past the score and the
    indices, and an operand between `value` and them is the mask. IR written
    before the sinks (7 segment sizes: no `sinks` entry) or before the
    lengths (5: mask, then extras) still parses.
  }];
  let arguments = (ins
    Attn_FloatTensor:$query,
    Attn_FloatTensor:$key,
    Attn_FloatTensor:$value,
    Optional<Attn_MaskTensor>:$mask,
    Optional<Attn_LengthsTensor>:$q_lengths,
    Optional<Attn_LengthsTensor>:$kv_lengths,
    Optional<Attn_SinksTensor>:$sinks,
    Variadic<Attn_AnyTensor>:$extras,
    OptionalAttr<F64Attr>:$scale,
    DefaultValuedAttr<BoolAttr, "false">:$is_causal,
    DefaultValuedAttr<F64Attr, "0.0">:$dropout_p,
    OptionalAttr<F64Attr>:$masked_value,
    OptionalAttr<I64Attr>:$seed,
    OptionalAttr<I64Attr>:$window_left,
    OptionalAttr<I64Attr>:$window_right,
    DefaultValuedAttr<BoolAttr, "false">:$safe_softmax,
    DefaultValuedAttr<Attn_MaskPolarityAttr,
                      "::mlir::attn::MaskPolarity::keep">:$mask_polarity,
    DefaultValuedAttr<Attn_PaddingSideAttr,
                      "::mlir::attn::PaddingSide::right">:$padding_side
  );
  let results = (outs Attn_FloatTensor:$result);
  let regions = (region VariadicRegion<SizedRegion<1>>:$score_mod);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` $mask^)?
    (`q_lengths` `(` $q_lengths^ `)`)? (`kv_lengths` `(` $kv_lengths^ `)`)?
    (`sinks` `(` $sinks^ `)`)?
    (`extras` `(` $extras^ `)`)?
    attr-dict `:` functional-type(operands, results)
    (`score_mod` $score_mod^)?
  }];
  let builders = [
    // Every attribute at its default (absent); set them afterwards. With
    // `withScoreMod`, one empty score_mod region for the caller to fill.
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$query,
                   "::mlir::Value":$key, "::mlir::Value":$value,
                   CArg<"::mlir::Value", "{}">:$mask,
                   CArg<"::mlir::ValueRange", "{}">:$extras,
                   CArg<"bool", "false">:$withScoreMod)>
  ];
  let extraClassDeclaration = [{
    /// The score_mod region's block, or null when the op has none.
    ::mlir::Block *getScoreModBlock();
    /// Emits the score_mod region's scalar code at `b`'s insertion point for
    /// one score (the region's block arguments take `score`, `indices` and
    /// `extraElements`) and returns the yielded score; `score` itself when
    /// the op has no region. Lowerings call this per score (or per vector
    /// of scores: the code is elementwise).
    ::mlir::Value buildScoreMod(::mlir::OpBuilder &b, ::mlir::Value score,
                                ::mlir::ValueRange indices,
                                ::mlir::ValueRange extraElements);
    /// The scale applied to q.k^T: the attribute, or 1/sqrt(E) when absent,
    /// with E from the query's or the key's static head dim; nullopt when
    /// both are dynamic (the scale is then only known at run time).
    std::optional<double> getEffectiveScale();
    /// The score given to masked-out positions: the attribute or -inf.
    double getEffectiveMaskedValue();
    /// True when the mask operand is boolean (i1).
    bool hasBoolMask();
    /// True when the mask operand is additive (a float tensor).
    bool hasAdditiveMask();
    /// True when the boolean mask's true elements are the masked-out
    /// positions (`mask_polarity = drop`).
    bool maskDrops() {
      return getMaskPolarity() == ::mlir::attn::MaskPolarity::drop;
    }
    /// True when the op has q_lengths or kv_lengths (the padded layout of a
    /// variable-length batch).
    bool hasLengths() { return getQLengths() || getKvLengths(); }
    /// True when the padding of a shorter sequence comes first.
    bool padsLeft() {
      return getPaddingSide() == ::mlir::attn::PaddingSide::left;
    }
    /// True when the sequences are back to back without padding (the
    /// packed layout: q_lengths and kv_lengths split L and S).
    bool isPacked() {
      return getPaddingSide() == ::mlir::attn::PaddingSide::packed;
    }
    /// The band of keys a query row attends to, from `is_causal` and the
    /// window attributes (the intersection): key j of row i takes part iff
    /// i - left <= j <= i + right; nullopt means unbounded on that side.
    ::mlir::attn::MaskBand getBand();
    /// A copy of this op, created at `b`'s insertion point with the same
    /// location, result type and attributes (discardable ones included),
    /// with `changes` applied. Every rewrite that needs another operand list
    /// or region (which an op cannot change in place) goes through this.
    SdpaOp cloneWith(::mlir::OpBuilder &b,
                     const ::mlir::attn::SdpaChanges &changes);
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// attn.yield
//===----------------------------------------------------------------------===//

def Attn_YieldOp : Attn_Op<"yield", [Pure, Terminator, ReturnLike,
                                     HasParent<"SdpaOp">]> {
  let summary = "yield the modified score of an attn.sdpa score_mod region";
  let arguments = (ins AnyFloat:$score);
  let assemblyFormat = "$score attr-dict `:` type($score)";
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
