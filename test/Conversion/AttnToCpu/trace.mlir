// RUN: attn-opt %s --attn-instrument-trace | FileCheck %s --check-prefix=INSTR
// RUN: attn-opt %s --attn-instrument-trace --attn-lower-to-cpu | FileCheck %s
// RUN: attn-opt %s --attn-instrument-trace --attn-lower-to-cpu \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --convert-linalg-to-loops | FileCheck %s --check-prefix=LOOPS
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="trace=true num-threads=1" | FileCheck %s --check-prefix=LLVM

// attn-instrument-trace puts each attn op (not attn.yield) between
// attnrt_trace_begin(id) and attnrt_trace_end(id); the module records the
// names by id.

// INSTR: module attributes {attn.trace_names = ["transpose", "matmul", "mul", "softmax", "sdpa"]}
// INSTR-DAG: func.func private @attnrt_trace_begin(i64)
// INSTR-DAG: func.func private @attnrt_trace_end(i64)
// INSTR-LABEL: func.func @chain
// INSTR: %[[ID0:.+]] = arith.constant 0 : i64
// INSTR-NEXT: call @attnrt_trace_begin(%[[ID0]]) : (i64) -> ()
// INSTR-NEXT: attn.transpose
// INSTR-NEXT: call @attnrt_trace_end(%[[ID0]]) : (i64) -> ()
// INSTR: %[[ID4:.+]] = arith.constant 4 : i64
// INSTR-NEXT: call @attnrt_trace_begin(%[[ID4]]) : (i64) -> ()
// INSTR-NEXT: attn.sdpa
// INSTR: math.tanh
// INSTR-NEXT: attn.yield
// INSTR-NEXT: }
// INSTR-NEXT: call @attnrt_trace_end(%[[ID4]]) : (i64) -> ()
// INSTR-NEXT: return

// attn-lower-to-cpu then puts each op's code where the op was, between its
// two calls.

// CHECK: module attributes {attn.trace_names = ["transpose", "matmul", "mul", "softmax", "sdpa"]}
// CHECK-DAG: func.func private @attnrt_trace_begin(i64)
// CHECK-DAG: func.func private @attnrt_trace_end(i64)
// CHECK-LABEL: func.func @chain
// CHECK-DAG: %[[ID0:.+]] = arith.constant 0 : i64
// CHECK-DAG: %[[ID1:.+]] = arith.constant 1 : i64
// CHECK: call @attnrt_trace_begin(%[[ID0]]) : (i64) -> ()
// CHECK: linalg.transpose
// CHECK: call @attnrt_trace_end(%[[ID0]]) : (i64) -> ()
// CHECK: call @attnrt_trace_begin(%[[ID1]])
// CHECK: scf.forall
// CHECK: vector.fma
// CHECK: call @attnrt_trace_end(%[[ID1]])
// CHECK: call @attnrt_trace_begin(%{{.+}})
// CHECK: arith.mulf
// CHECK: call @attnrt_trace_end(%{{.+}})
// CHECK: call @attnrt_trace_begin(%{{.+}})
// CHECK: math.exp
// CHECK: call @attnrt_trace_end(%{{.+}})
// CHECK: call @attnrt_trace_begin(%{{.+}})
// CHECK: scf.forall
// CHECK: call @attnrt_trace_end(%{{.+}})
// CHECK-NEXT: return

// After bufferization and linalg-to-loops, the loops stay between the calls.
// LOOPS-LABEL: func.func @chain
// LOOPS: call @attnrt_trace_begin
// LOOPS: scf.for
// LOOPS: memref.store
// LOOPS: call @attnrt_trace_end
// LOOPS-NEXT: call @attnrt_trace_begin
// LOOPS: scf.forall
// LOOPS: vector.fma
// LOOPS: call @attnrt_trace_end
// LOOPS: call @attnrt_trace_begin
// LOOPS: scf.for
// LOOPS: arith.mulf
// LOOPS: call @attnrt_trace_end
// LOOPS: call @attnrt_trace_begin
// LOOPS: scf.for
// LOOPS: math.exp
// LOOPS: call @attnrt_trace_end
// LOOPS: call @attnrt_trace_begin
// LOOPS: scf.forall
// LOOPS: math.exp
// LOOPS: call @attnrt_trace_end

// In the LLVM dialect, the calls survive as external calls.
// LLVM-DAG: llvm.func @attnrt_trace_begin(i64)
// LLVM-DAG: llvm.func @attnrt_trace_end(i64)
// LLVM-LABEL: llvm.func @chain
// LLVM: llvm.call @attnrt_trace_begin
// LLVM: llvm.call @attnrt_trace_end
// LLVM: llvm.call @attnrt_trace_begin
// LLVM: llvm.fmul
// LLVM: llvm.call @attnrt_trace_end
func.func @chain(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>) -> (tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x2x8x4xf32> -> tensor<1x2x4x8xf32>
  %s = attn.matmul %q, %kt : (tensor<1x2x8x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x8x8xf32>
  %c = arith.constant dense<5.000000e-01> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %ss dim(-1) : tensor<1x2x8x8xf32>
  %o = attn.sdpa %q, %k, %k : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> score_mod {
  ^bb0(%s0: f32, %b: index, %h: index, %i: index, %j: index):
    %t = math.tanh %s0 : f32
    attn.yield %t : f32
  }
  return %p, %o : tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>
}
