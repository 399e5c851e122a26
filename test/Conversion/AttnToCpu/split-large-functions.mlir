// RUN: attn-opt %s --attn-cpu-split-large-functions=max-calls=2 --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-cpu-split-large-functions=max-calls=2 --split-input-file --convert-scf-to-cf --finalize-memref-to-llvm --convert-arith-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM

// Five calls and a loop between them, at most two calls (or ops with
// regions) per part: three parts, in order after the function. Each part
// takes the values it uses from before it (%w, read by every call; the
// previous part's result) and returns those used after it; constants are
// copied into the parts that use them; the entry calls the parts in order.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<8xf32>, %[[W:[a-z0-9]+]]: memref<8xf32>)
// CHECK-NOT: call @k
// CHECK: %[[P0:.+]] = call @chain_part0(%[[X]], %[[W]]) : (memref<8xf32>, memref<8xf32>) -> memref<8xf32>
// CHECK-NEXT: %[[P1:.+]] = call @chain_part1(%[[P0]], %[[W]]) : (memref<8xf32>, memref<8xf32>) -> memref<8xf32>
// CHECK-NEXT: %[[P2:.+]] = call @chain_part2(%[[P1]], %[[W]]) : (memref<8xf32>, memref<8xf32>) -> memref<8xf32>
// CHECK-NEXT: return %[[P2]] : memref<8xf32>
// CHECK-LABEL: func.func private @chain_part0(
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK-NEXT: %[[A:.+]] = call @k(%arg0, %arg1)
// CHECK-NEXT: %[[A2:.+]] = call @k(%[[A]], %arg1)
// CHECK-NEXT: return %[[A2]]
// The loop counts as a call; the buffer it writes is used after the part.
// CHECK-LABEL: func.func private @chain_part1(
// CHECK-DAG: arith.constant 0 : index
// CHECK-DAG: arith.constant 8 : index
// CHECK: %[[B:.+]] = call @k
// CHECK: scf.for
// CHECK: return %[[B]] : memref<8xf32>
// CHECK-LABEL: func.func private @chain_part2(
// CHECK: call @k
// CHECK: call @k
// CHECK: memref.dealloc %arg0
// CHECK: return

// The parts survive to LLVM as functions of their own (noinline).
// LLVM-LABEL: llvm.func @chain(
// LLVM: llvm.call @chain_part0(
// LLVM-LABEL: llvm.func @chain_part0(
// LLVM-SAME: passthrough = ["noinline"]
func.func private @k(%a: memref<8xf32>, %w: memref<8xf32>) -> memref<8xf32> {
  %r = memref.alloc() : memref<8xf32>
  memref.copy %a, %r : memref<8xf32> to memref<8xf32>
  return %r : memref<8xf32>
}

func.func @chain(%x: memref<8xf32>, %w: memref<8xf32>) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %a = call @k(%x, %w) : (memref<8xf32>, memref<8xf32>) -> memref<8xf32>
  %a2 = call @k(%a, %w) : (memref<8xf32>, memref<8xf32>) -> memref<8xf32>
  %b = call @k(%a2, %w) : (memref<8xf32>, memref<8xf32>) -> memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %w[%i] : memref<8xf32>
    memref.store %v, %b[%i] : memref<8xf32>
  }
  %c = call @k(%b, %w) : (memref<8xf32>, memref<8xf32>) -> memref<8xf32>
  %d = call @k(%c, %b) : (memref<8xf32>, memref<8xf32>) -> memref<8xf32>
  memref.dealloc %b : memref<8xf32>
  return %d : memref<8xf32>
}

// -----

// At most max-calls calls: the function stays whole.
// CHECK-LABEL: func.func @negative_few_calls(
// CHECK-NOT: _part
// CHECK: return
func.func private @k(%a: memref<8xf32>) -> memref<8xf32>
func.func @negative_few_calls(%x: memref<8xf32>) -> memref<8xf32> {
  %a = call @k(%x) : (memref<8xf32>) -> memref<8xf32>
  %b = call @k(%a) : (memref<8xf32>) -> memref<8xf32>
  return %b : memref<8xf32>
}

// -----

// A stack buffer must not outlive a part: the function stays whole.
// CHECK-LABEL: func.func @negative_alloca(
// CHECK-NOT: _part
// CHECK: return
func.func private @k(%a: memref<8xf32>) -> memref<8xf32>
func.func @negative_alloca(%x: memref<8xf32>) -> memref<8xf32> {
  %s = memref.alloca() : memref<8xf32>
  memref.copy %x, %s : memref<8xf32> to memref<8xf32>
  %a = call @k(%s) : (memref<8xf32>) -> memref<8xf32>
  %b = call @k(%a) : (memref<8xf32>) -> memref<8xf32>
  %c = call @k(%b) : (memref<8xf32>) -> memref<8xf32>
  return %c : memref<8xf32>
}
