// RUN: attn-opt %s --split-input-file --attn-cpu-reject-recursion --verify-diagnostics | FileCheck %s

func.func @self(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{recursion is not supported (compiled code has no bound on its stack depth): this use of @self closes the cycle @self -> @self}}
  %y = call @self(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @a(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = call @b(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @b(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = call @c(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @c(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{this use of @a closes the cycle @a -> @b -> @c -> @a}}
  %y = call @a(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Through a function value and call_indirect.
func.func @indirect(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{this use of @indirect closes the cycle @indirect -> @indirect}}
  %f = func.constant @indirect : (tensor<4xf32>) -> tensor<4xf32>
  %y = func.call_indirect %f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Calls without a cycle (a diamond, a declaration) stay as they are.
// CHECK-LABEL: func.func @negative_diamond
// CHECK: call @left
// CHECK: call @right
func.func @negative_diamond(%x: tensor<4xf32>) -> tensor<4xf32> {
  %l = call @left(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %r = call @right(%l) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func private @left(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = call @leaf(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @right(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = call @leaf(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @leaf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = call @external(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @external(tensor<4xf32>) -> tensor<4xf32>
