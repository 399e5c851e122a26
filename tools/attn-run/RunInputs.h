//===- RunInputs.h - attn-run's inputs: --shape, --input, --output -*- C++ -*-===//

#ifndef ATTN_TOOLS_ATTNRUN_RUNINPUTS_H
#define ATTN_TOOLS_ATTNRUN_RUNINPUTS_H

#include "HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <string>
#include <vector>

namespace attnrun {

/// What attn-run's options say about the entry's arguments and results.
struct InputOptions {
  /// The entry's name, for messages.
  std::string entryName;
  /// Seed of the random inputs; normal: N(0, 1) floats, else U(-1, 1).
  uint64_t seed = 1;
  bool normalDist = false;
  /// The items of --shape (I=AxBx...), --input and --output (I=path.npy).
  std::vector<std::string> shapes, inputs, outputs;
};

/// --shape, --input and --output, by argument or result index.
struct IndexedOptions {
  llvm::DenseMap<unsigned, llvm::SmallVector<int64_t>> shapes;
  llvm::DenseMap<unsigned, std::string> inputPaths;
  llvm::DenseMap<unsigned, std::string> outputPaths;
};

/// Parses the indexed options against the entry's type: malformed items and
/// indices past its arguments or results are errors (printed as
/// "attn-run: error: ...").
mlir::FailureOr<IndexedOptions> parseIndexedOptions(const InputOptions &options,
                                                    mlir::FunctionType type);

/// Every argument of `entry`, in order: from its --input file, else seeded
/// random data of its type's shape (dynamic dims from --shape). Errors are
/// printed (located at the entry for unsupported argument types).
mlir::FailureOr<llvm::SmallVector<HostTensor>>
makeInputs(mlir::func::FuncOp entry, const InputOptions &inputOptions,
           const IndexedOptions &options);

/// "AxBx..." (empty: rank 0) into `shape`; false when malformed or negative.
bool parseShape(llvm::StringRef text, llvm::SmallVectorImpl<int64_t> &shape);
/// "2x8x128".
std::string shapeString(llvm::ArrayRef<int64_t> shape);
/// The type as MLIR prints it.
std::string typeString(mlir::Type type);
/// The element type of a ranked tensor type whose elements attn-run handles.
std::optional<DType> getTensorDType(mlir::Type type);

} // namespace attnrun

#endif // ATTN_TOOLS_ATTNRUN_RUNINPUTS_H
