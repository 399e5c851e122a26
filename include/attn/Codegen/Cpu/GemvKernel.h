//===- GemvKernel.h - the instruction families of the CPU GEMV --*- C++ -*-===//
//
// The few-rows product's microkernels (GemvToCpu.cpp), one class per
// instruction family: FMAs on rows widened to the compute type, AVX512-BF16
// pair dots on bf16 rows as stored, and AMX tiles. The vector kernels are
// one step of a dot product along K: load a step of a weight row and of an
// lhs row, accumulate their products. The AMX kernel multiplies blocks of
// weight rows by all the lhs rows at once on tiles; its weight's last rows
// run its fallback's dot products. The lowering keeps the work items,
// their threading, the loops over K and the output. A product's kernel is
// chosen once, from Target::getProductKernels, by GemvKernel::create.
//
// Not the GEMM's kernels (GemmKernel.h): a GEMV reads both operands in
// place along K and reduces each accumulator to one output, where a GEMM
// tile broadcasts lhs elements over packed panels of columns; the two
// share no step.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_CPU_GEMVKERNEL_H
#define ATTN_CODEGEN_CPU_GEMVKERNEL_H

#include "attn/Codegen/Cpu/Emitter.h"
#include "attn/Codegen/Cpu/Target.h"

#include <memory>

namespace mlir::attn::cpu {

/// The most lhs rows a tile kernel multiplies (one B tile's columns).
inline constexpr int64_t kGemvTileMaxRows = 16;

/// A GEMV's operands as its kernels read them, set once per product by the
/// lowering.
struct GemvKernelOperands {
  /// The buffers of lhs [M, K] and the weight [N, K].
  Value lhs, weight;
  /// M (at most kGemvTileMaxRows for the tile kernel).
  Value m;
};

/// The instruction family's part of a GEMV.
class GemvKernel : protected Emitter {
public:
  virtual ~GemvKernel();

  /// The kernel of a product computing in `ct` (vectors of `lanes`) on
  /// `operands`, given the target's kernels for its element types: AMX
  /// tiles where the target offers them and the weight suits them (static,
  /// at least a block of rows, K whole steps), pair dots where the target
  /// offers them, FMAs otherwise; tiles and pairs need dense rows.
  /// `operands` must be set (its buffers' types are read).
  static std::unique_ptr<GemvKernel> create(OpBuilder &b, Location loc,
                                            Type ct, int64_t lanes,
                                            const GemvKernelOperands &operands,
                                            ProductKernels kernels);

  /// Emits `emit(kernel)` with this kernel where it may run anywhere;
  /// else (AMX tiles) the run-time choice between it and its fallback.
  virtual void emitVersions(function_ref<void(GemvKernel &)> emit) {
    emit(*this);
  }

  /// The dot products' step: elements of K per vector, the vector at
  /// (row, col) of `mem` as the step reads it, and `acc` plus the products
  /// of the steps `x` (lhs) and `w` (weight).
  virtual int64_t getStepElements() const = 0;
  virtual Value loadStep(Value mem, Value row, Value col) = 0;
  virtual Value accumulate(Value acc, Value x, Value w) = 0;

  /// The weight rows per tile block, or 0 for a kernel without tiles.
  virtual int64_t getTileBlockRows() const { return 0; }
  /// Tile kernels: emits the lhs rows in the layout the blocks read (once
  /// per call) and returns it.
  virtual Value packTileRows() { return nullptr; }
  /// Tile kernels: acc[j, r] = sum_k weight[n0 + j, k] * lhs[r, k] for j
  /// < getTileBlockRows(), r < M, in a new f32 buffer (returned) from the
  /// packed rows.
  virtual Value emitTileBlock(Value n0, Value packedRows) { return nullptr; }

protected:
  GemvKernel(OpBuilder &b, Location loc, Type ct, int64_t lanes,
             const GemvKernelOperands &operands)
      : Emitter(b, loc, ct, lanes), ops(operands), lanes(lanes) {}

  const GemvKernelOperands &ops;
  int64_t lanes;
};

} // namespace mlir::attn::cpu

#endif // ATTN_CODEGEN_CPU_GEMVKERNEL_H
