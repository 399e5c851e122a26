// RUN: attn-opt %s --attn-instrument-trace=locations=true | FileCheck %s
// RUN: attn-opt %s --attn-instrument-trace | FileCheck %s --check-prefix=NAMES
// RUN: attn-opt %s --attn-instrument-trace="locations=true linalg-ops=true" | FileCheck %s --check-prefix=LINALG
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="trace=true trace-locations=true trace-linalg-ops=true num-threads=1" | FileCheck %s --check-prefix=PIPELINE

// With `locations`, each span name also gives the first file location of
// its op (through fused, call-site and name locations, skipping attn-opt's
// own `<stdin>` and `-`), as the Python front end's profiler events show
// it (attnfuse.compile(..., profile=True)); an op without one keeps its
// bare name (@negative_no_file_location). Without the option the names are
// the op names. With `linalg-ops`, the linalg ops of function bodies (the
// Python exporter's products) are spans too, named with their dialect; not
// those nested in another op's region (@negative_nested_linalg).

// CHECK: attn.trace_names = ["transpose model.py:3", "matmul model.py:4", "mul layers/mlp.py:7", "softmax model.py:9", "softmax", "sdpa"]
// CHECK-LABEL: func.func @chain
// CHECK: %[[ID0:.+]] = arith.constant 0 : i64
// CHECK-NEXT: call @attnrt_trace_begin(%[[ID0]])
// CHECK-NEXT: attn.transpose
// CHECK-NEXT: call @attnrt_trace_end(%[[ID0]])
// NAMES: attn.trace_names = ["transpose", "matmul", "mul", "softmax", "softmax", "sdpa"]
// LINALG: attn.trace_names = ["transpose model.py:3", "matmul model.py:4", "mul layers/mlp.py:7", "softmax model.py:9", "linalg.matmul model.py:11", "softmax", "sdpa"]
// LINALG-LABEL: func.func @chain
// LINALG: %[[ID4:.+]] = arith.constant 4 : i64
// LINALG-NEXT: call @attnrt_trace_begin(%[[ID4]])
// LINALG-NEXT: linalg.matmul
// LINALG-NEXT: call @attnrt_trace_end(%[[ID4]])
// LINALG-LABEL: func.func @negative_nested_linalg
// LINALG-NOT: call @attnrt_trace_begin
// LINALG: linalg.matmul
// LINALG-NOT: call @attnrt_trace_end
// LINALG: return
// PIPELINE: attn.trace_names = ["transpose model.py:3", "matmul model.py:4", "mul layers/mlp.py:7", "softmax model.py:9", "linalg.matmul model.py:11", "softmax", "sdpa"]
func.func @chain(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<1x2x8x8xf32>, tensor<4x4xf32>) {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x2x8x4xf32> -> tensor<1x2x4x8xf32> loc("model.py":3:1)
  %s = attn.matmul %q, %kt : (tensor<1x2x8x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x8x8xf32> loc(fused["<stdin>":1:1, "model.py":4:1, "model.py":5:1])
  %c = arith.constant dense<5.000000e-01> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8x8xf32> loc(callsite("mlp"("layers/mlp.py":7:5) at "model.py":6:1))
  %p = attn.softmax %ss dim(-1) : tensor<1x2x8x8xf32> loc("softmax"("model.py":9:1))
  %zero = arith.constant dense<0.0> : tensor<4x4xf32>
  %ab = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%zero : tensor<4x4xf32>) -> tensor<4x4xf32> loc("model.py":11:1)
  return %p, %ab : tensor<1x2x8x8xf32>, tensor<4x4xf32>
}

func.func @negative_no_file_location(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %p = attn.softmax %q dim(-1) : tensor<1x2x8x4xf32> loc(fused["-":2:1, "node_name"])
  %o = attn.sdpa %q, %k, %k : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> loc(unknown)
  return %p, %o : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}

func.func @negative_nested_linalg(%a: tensor<4x4xf32>, %c: i1) -> tensor<4x4xf32> {
  %r = scf.if %c -> tensor<4x4xf32> {
    %zero = arith.constant dense<0.0> : tensor<4x4xf32>
    %m = linalg.matmul ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%zero : tensor<4x4xf32>) -> tensor<4x4xf32>
    scf.yield %m : tensor<4x4xf32>
  } else {
    scf.yield %a : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}
