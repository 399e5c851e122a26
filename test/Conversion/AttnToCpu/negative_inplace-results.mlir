// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-mark-inplace-results --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --attn-drop-inplace-results

// expected-error @+1 {{argument 0 of @writable_not_written is marked 'bufferization.writable = true' but no result writes its new value in place (return 'bufferization.materialize_in_destination %new in %arg0')}}
func.func @writable_not_written(%x: tensor<4xf32> {bufferization.writable = true}) -> tensor<4xf32> {
  %c = arith.constant dense<1.0> : tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

func.func @not_writable(%x: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{writes argument 0 of @not_writable in place, which is not marked 'bufferization.writable = true'}}
  %m = bufferization.materialize_in_destination %v in %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument 0 of @written_twice is written in place by results 0 and 1}}
func.func @written_twice(%x: tensor<4xf32> {bufferization.writable = true}, %v: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %m = bufferization.materialize_in_destination %v in %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %n = bufferization.materialize_in_destination %v in %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %m, %n : tensor<4xf32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{@step writes arguments in place and is called inside the module; only an entry point may write its arguments}}
func.func @step(%x: tensor<4xf32> {bufferization.writable = true}, %v: tensor<4xf32>) -> tensor<4xf32> {
  %m = bufferization.materialize_in_destination %v in %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %m : tensor<4xf32>
}

func.func @caller(%x: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<4xf32> {
  %r = call @step(%x, %v) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @returns_disagree(%x: tensor<4xf32> {bufferization.writable = true}, %v: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  cf.cond_br %c, ^a, ^b
^a:
  %m = bufferization.materialize_in_destination %v in %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %m : tensor<4xf32>
^b:
  // expected-error @+1 {{returns of @returns_disagree disagree on which results write arguments in place}}
  return %v : tensor<4xf32>
}

// -----

// The old value is read after the new one is written: no in-place
// bufferization exists, and one-shot bufferization says so instead of
// copying.
func.func @old_value_read_later(%x: tensor<4xf32> {bufferization.writable = true}, %v: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{not bufferizable under the given constraints: cannot avoid RaW conflict}}
  %m = bufferization.materialize_in_destination %v in %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %old = linalg.copy ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %m, %old : tensor<4xf32>, tensor<4xf32>
}

// -----

// A marked result that is not the argument's buffer (hand-written IR after
// bufferization).
func.func @not_the_argument(%x: memref<4xf32>) -> (memref<4xf32> {attn.inplace_argument = 0 : i64}) {
  %a = memref.alloc() : memref<4xf32>
  // expected-error @+1 {{the new value of argument 0 of @not_the_argument was not written in place (result 0 is not the argument's buffer)}}
  return %a : memref<4xf32>
}

// -----

// expected-error @+1 {{result 0 of @no_such_argument names argument 3, which does not exist}}
func.func @no_such_argument(%x: memref<4xf32>) -> (memref<4xf32> {attn.inplace_argument = 3 : i64}) {
  return %x : memref<4xf32>
}
