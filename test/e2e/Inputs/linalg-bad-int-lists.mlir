// Custom-form linalg ops whose integer list is malformed: LLVM 22's parser
// reports an error and then dereferences a null attribute. One case per
// file (split-file); each must be one located error. fine.mlir: well-formed
// lists (with line breaks and comments between the integers) and a
// generic-form attribute named like the keyword pass the scan.
//--- transpose.mlir
func.func @transpose(%w: tensor<48x64xf32>, %t: tensor<64x48xf32>) -> tensor<64x48xf32> {
  %wt = linalg.transpose ins(%w : tensor<48x64xf32>) outs(%t : tensor<64x48xf32>) permutation = foo
  return %wt : tensor<64x48xf32>
}
//--- broadcast.mlir
func.func @broadcast(%w: tensor<48xf32>, %t: tensor<64x48xf32>) -> tensor<64x48xf32> {
  %b = linalg.broadcast ins(%w : tensor<48xf32>) outs(%t : tensor<64x48xf32>)
      dimensions = [0, x]
  return %b : tensor<64x48xf32>
}
//--- reduce.mlir
func.func @reduce(%w: tensor<48x64xf32>, %t: tensor<48xf32>) -> tensor<48xf32> {
  %r = linalg.reduce ins(%w : tensor<48x64xf32>) outs(%t : tensor<48xf32>) dimensions = 1
  (%a: f32, %b: f32) {
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  return %r : tensor<48xf32>
}
//--- formfeed.mlir
// A form feed between the integers: a space to C's isspace, an unexpected
// character to MLIR's lexer.
func.func @formfeed(%w: tensor<48x64xf32>, %t: tensor<64x48xf32>) -> tensor<64x48xf32> {
  %wt = linalg.transpose ins(%w : tensor<48x64xf32>) outs(%t : tensor<64x48xf32>) permutation = [1, 0]
  return %wt : tensor<64x48xf32>
}
//--- fine.mlir
func.func @fine(%w: tensor<48x64xf32>, %t: tensor<64x48xf32>, %v: tensor<48xf32>, %u: tensor<48x64xf32>) -> (tensor<64x48xf32>, tensor<48x64xf32>) {
  %wt = linalg.transpose ins(%w : tensor<48x64xf32>) outs(%t : tensor<64x48xf32>) permutation = [ 1 , 0 ]
  %b = linalg.broadcast ins(%v : tensor<48xf32>) outs(%u : tensor<48x64xf32>) dimensions = [
      1 // the column
  ]
  %g = "linalg.transpose"(%w, %t) <{permutation = array<i64: 1, 0>}> ({
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }) : (tensor<48x64xf32>, tensor<64x48xf32>) -> tensor<64x48xf32>
  return %wt, %b : tensor<64x48xf32>, tensor<48x64xf32>
}
