//===- HostTensor.h - host buffers, dtypes and .npy files for attn-run ----===//

#ifndef ATTN_TOOLS_ATTNRUN_HOSTTENSOR_H
#define ATTN_TOOLS_ATTNRUN_HOSTTENSOR_H

#include "mlir/ExecutionEngine/CRunnerUtils.h"
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

/// Bytes of a dense `shape` array of `dtype`; nullopt when a dim is negative
/// or the count does not fit in int64_t.
std::optional<int64_t> getNumBytes(DType dtype, llvm::ArrayRef<int64_t> shape);

/// Owns a 64-byte aligned, densely packed row-major buffer.
class HostTensor {
public:
  HostTensor() = default;
  /// A zeroed buffer. Fails with `error` set, rather than aborting, when the
  /// shape is negative or its byte count overflows, exceeds the machine's
  /// physical memory, or cannot be allocated.
  static std::optional<HostTensor>
  allocate(DType dtype, llvm::ArrayRef<int64_t> shape, std::string &error);

  DType getDType() const { return dtype; }
  llvm::ArrayRef<int64_t> getShape() const { return shape; }
  int64_t getNumElements() const;
  /// Cannot overflow: allocate checked it.
  int64_t getNumBytes() const { return getNumElements() * getByteSize(dtype); }
  void *getData() const { return data.get(); }

  double get(int64_t i) const;
  void set(int64_t i, double value);
  std::optional<HostTensor> clone(std::string &error) const;

  /// The buffer as a dense row-major memref, in the layout of
  /// StridedMemRefType (see MemRefDescriptors).
  void writeDescriptor(void *descriptor) const;

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

/// Memref descriptors of run-time ranks stored one after the other, as
/// compiled code takes a tensor argument and packs its results: each one is
/// MLIR's StridedMemRefType<T, rank> (mlir/ExecutionEngine/CRunnerUtils.h,
/// the layout include/attn/Runtime/AttnRuntime.h describes for C), whose
/// fields are all 64 bits wide, so a struct of them has no padding.
class MemRefDescriptors {
public:
  explicit MemRefDescriptors(llvm::ArrayRef<int64_t> ranks);

  /// The first descriptor (or the struct of all of them).
  void *data() { return words.data(); }
  void *get(unsigned i) { return words.data() + offsets[i]; }
  /// Descriptor `i` as MLIR's runner utils read one of unknown rank.
  DynamicMemRefType<char> read(unsigned i) const;

private:
  llvm::SmallVector<int64_t> ranks;
  llvm::SmallVector<size_t> offsets; // in words
  llvm::SmallVector<int64_t> words;
};

/// Copies a (possibly strided) memref of `dtype` returned by compiled code
/// into a dense HostTensor; fails like allocate.
std::optional<HostTensor> copyFromMemRef(const DynamicMemRefType<char> &memref,
                                         DType dtype, std::string &error);

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

/// Reads a .npy file (versions 1-3, C order, little endian): a regular file
/// whose size is exactly its header's plus the bytes its shape and dtype
/// need; bool arrays hold only bytes 0 and 1. `error` says what is wrong on
/// failure, naming the file.
std::optional<HostTensor> readNpy(llvm::StringRef path, std::string &error);
/// readNpy on the bytes of a file named `path`.
std::optional<HostTensor> readNpyBytes(llvm::StringRef path,
                                       llvm::StringRef bytes,
                                       std::string &error);
/// A version 1.0 .npy file of `tensor`; bf16 as '<u2' bit patterns (numpy
/// has no bf16).
std::string serializeNpy(const HostTensor &tensor);
/// Writes serializeNpy(tensor) to `path` through a temporary file renamed
/// over it (a path that is not a regular file is written in place).
bool writeNpy(llvm::StringRef path, const HostTensor &tensor,
              std::string &error);

} // namespace attnrun

#endif // ATTN_TOOLS_ATTNRUN_HOSTTENSOR_H
