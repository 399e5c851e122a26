//===- InPlaceArguments.h - arguments written in place ----------*- C++ -*-===//
//
// A public function may write some of its tensor arguments in place (a KV
// cache, a step counter): the argument is marked `bufferization.writable =
// true` and the function returns its new value as
//
//   %r = bufferization.materialize_in_destination %new in %argN
//       : (tensor<...>, tensor<...>) -> tensor<...>
//
// (a "state result"). One-shot bufferization must then write %new into
// argument N's buffer (it fails to bufferize where it cannot, e.g. when the
// old value is still read afterwards), and the compiled C entry point
// returns only the other results: the caller sees the argument updated.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TRANSFORMS_CPU_INPLACEARGUMENTS_H
#define ATTN_TRANSFORMS_CPU_INPLACEARGUMENTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

namespace mlir::attn {

/// The result attribute that attn-mark-inplace-results puts on a state
/// result: the index of the argument it writes (i64).
inline constexpr StringLiteral kInPlaceArgumentAttrName =
    "attn.inplace_argument";

/// One state result: result `result` is the new value of argument
/// `argument`.
struct InPlaceResult {
  unsigned result;
  unsigned argument;
};

/// The state results of a function on tensors: the return operands that are
/// a `bufferization.materialize_in_destination` into one of its arguments.
SmallVector<InPlaceResult> getInPlaceResults(func::FuncOp func);

/// Whether argument `index` of `func` is marked
/// `bufferization.writable = true`.
bool isWrittenInPlace(func::FuncOp func, unsigned index);

/// The type of the function's C entry point in tensor terms: its type
/// without the state results.
FunctionType getCInterfaceType(func::FuncOp func);

/// Checks the contract: every argument marked `bufferization.writable =
/// true` has exactly one state result, every state result writes such an
/// argument, and no call inside the module uses a function that has them.
/// Reports located errors.
LogicalResult verifyInPlaceResults(func::FuncOp func);

} // namespace mlir::attn

#endif // ATTN_TRANSFORMS_CPU_INPLACEARGUMENTS_H
