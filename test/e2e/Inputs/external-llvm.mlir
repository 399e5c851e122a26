// An LLVM dialect op in the input, for attn-run-jit-symbols.test.

func.func private @puts(!llvm.ptr) -> i32
func.func @calls_puts(%x: tensor<4xf32>) -> tensor<4xf32> {
  %p = llvm.mlir.zero : !llvm.ptr
  %r = call @puts(%p) : (!llvm.ptr) -> i32
  return %x : tensor<4xf32>
}
