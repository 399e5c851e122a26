//===- HostTensor.h - host buffers, dtypes and .npy files for attn-run ----===//

#ifndef ATTN_TOOLS_ATTNRUN_HOSTTENSOR_H
#define ATTN_TOOLS_ATTNRUN_HOSTTENSOR_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace attnrun {

enum class DType { F16, BF16, F32, F64, I1, I8, I16, I32, I64 };

/// The DType of an MLIR element type, if attn-run handles it.
std::optional<DType> getDType(mlir::Type type);
/// Bytes per element in memory (i1 is one byte, as LLVM stores it).
int64_t getByteSize(DType dtype);
llvm::StringRef getName(DType dtype);
bool isFloat(DType dtype);

/// Owns a 64-byte aligned, densely packed row-major buffer.
class HostTensor {
public:
  HostTensor() = default;
  HostTensor(DType dtype, llvm::ArrayRef<int64_t> shape);

  DType getDType() const { return dtype; }
  llvm::ArrayRef<int64_t> getShape() const { return shape; }
  int64_t getNumElements() const;
  int64_t getNumBytes() const { return getNumElements() * getByteSize(dtype); }
  void *getData() const { return data.get(); }

  double get(int64_t i) const;
  void set(int64_t i, double value);
  HostTensor clone() const;

  /// A strided memref descriptor (allocated, aligned, offset, sizes,
  /// strides) over this buffer, as 64-bit words.
  llvm::SmallVector<int64_t> makeDescriptor() const;

  /// "2x8x128x64xf32".
  std::string describe() const;

private:
  struct FreeDeleter {
    void operator()(void *p) const;
  };
  DType dtype = DType::F32;
  llvm::SmallVector<int64_t> shape;
  std::unique_ptr<void, FreeDeleter> data;
};

/// Copies a (possibly strided) memref descriptor of `rank` and `dtype`
/// returned by compiled code into a dense HostTensor.
HostTensor copyFromDescriptor(const int64_t *desc, int64_t rank, DType dtype);

/// Deterministic across platforms: splitmix64 (std:: distributions are
/// implementation-defined).
class Rng {
public:
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t next();
  /// Uniform in [0, 1).
  double uniform();
  /// Standard normal (Box-Muller).
  double normal();

private:
  uint64_t state;
};

/// Reads a .npy file (versions 1-3, C order, little endian). `error` says
/// what is wrong on failure.
std::optional<HostTensor> readNpy(llvm::StringRef path, std::string &error);
/// Writes a version 1.0 .npy file; bf16 is written as '<u2' bit patterns
/// (numpy has no bf16).
bool writeNpy(llvm::StringRef path, const HostTensor &tensor,
              std::string &error);

} // namespace attnrun

#endif // ATTN_TOOLS_ATTNRUN_HOSTTENSOR_H
