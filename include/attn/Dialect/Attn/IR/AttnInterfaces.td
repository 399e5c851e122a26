//===- AttnInterfaces.td - attn op interfaces ----------------*- tablegen -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNINTERFACES_TD
#define ATTN_DIALECT_ATTN_IR_ATTNINTERFACES_TD

include "mlir/IR/OpBase.td"

def Attn_ScalarElementwiseOpInterface
    : OpInterface<"ScalarElementwiseOpInterface"> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    An elementwise attn op (NumPy broadcasting) whose value at each position
    is a scalar function of its operands' elements at that position.
    `buildScalar` emits that function once, on scalars of the operands'
    element types, computing in the compute type (f32 for f16/bf16) and
    rounding to the result element type once. The CPU lowering's loop body
    and the fusion's score-modifier region both call it, so an op means the
    same thing unfused and fused.
  }];
  let methods = [
    InterfaceMethod<
      "Emits the scalar function; `operands` has one scalar per operand.",
      "::mlir::Value", "buildScalar",
      (ins "::mlir::OpBuilder &":$b, "::mlir::Location":$loc,
           "::mlir::ValueRange":$operands)>
  ];
}

def Attn_SoftmaxOpInterface : OpInterface<"SoftmaxOpInterface"> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    A softmax along one dim: `attn.softmax` and `attn.safe_softmax`, which
    differ only on slices whose entries are all `-inf`. The fusion matches
    both through this interface.
  }];
  let methods = [
    InterfaceMethod<"The input.",
      "::mlir::TypedValue<::mlir::RankedTensorType>", "getInput">,
    InterfaceMethod<"The result.",
      "::mlir::TypedValue<::mlir::RankedTensorType>", "getResult">,
    InterfaceMethod<"The softmax dim as written (may be negative).",
      "uint64_t", "getDim">,
    InterfaceMethod<"The softmax dim, made non-negative.",
      "int64_t", "getNormalizedDim">
  ];
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNINTERFACES_TD
