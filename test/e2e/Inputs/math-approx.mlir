// Inputs of math-approximation.test: the transcendental functions the CPU
// lowering approximates (attn-cpu-math-approximation), alone and in the
// formulas the exporter emits (GELU erf and tanh, silu) and in a Gemma-2
// soft-capping score_mod region, for a Python reference to check.

func.func @tanh(%in: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %in, %c0 : tensor<?xf32>
  %init = tensor.empty(%n) : tensor<?xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%in : tensor<?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

func.func @tanh_bf16(%in: tensor<?xbf16>) -> tensor<?xbf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %in, %c0 : tensor<?xbf16>
  %init = tensor.empty(%n) : tensor<?xbf16>
  %0 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%in : tensor<?xbf16>) outs(%init : tensor<?xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    %a = arith.extf %x : bf16 to f32
    %r = math.tanh %a : f32
    %rt = arith.truncf %r : f32 to bf16
    linalg.yield %rt : bf16
  } -> tensor<?xbf16>
  return %0 : tensor<?xbf16>
}

func.func @erf(%in: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %in, %c0 : tensor<?xf32>
  %init = tensor.empty(%n) : tensor<?xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%in : tensor<?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.erf %a : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

func.func @exp(%in: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %in, %c0 : tensor<?xf32>
  %init = tensor.empty(%n) : tensor<?xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%in : tensor<?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

func.func @expm1(%in: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %in, %c0 : tensor<?xf32>
  %init = tensor.empty(%n) : tensor<?xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%in : tensor<?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.expm1 %a : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

func.func @log(%in: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %in, %c0 : tensor<?xf32>
  %init = tensor.empty(%n) : tensor<?xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%in : tensor<?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.log %a : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

func.func @log1p(%in: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %in, %c0 : tensor<?xf32>
  %init = tensor.empty(%n) : tensor<?xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%in : tensor<?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.log1p %a : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

func.func @log2(%in: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %in, %c0 : tensor<?xf32>
  %init = tensor.empty(%n) : tensor<?xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%in : tensor<?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.log2 %a : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

func.func @gelu_erf(%in: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %in, %c0 : tensor<?xf32>
  %init = tensor.empty(%n) : tensor<?xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%in : tensor<?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %h = arith.constant 5.000000e-01 : f32
    %one = arith.constant 1.000000e+00 : f32
    %is2 = arith.constant 0.707106769 : f32
    %s = arith.mulf %a, %is2 : f32
    %e = math.erf %s : f32
    %ah = arith.mulf %a, %h : f32
    %p = arith.addf %one, %e : f32
    %r = arith.mulf %ah, %p : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

func.func @gelu_erf_bf16(%in: tensor<?xbf16>) -> tensor<?xbf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %in, %c0 : tensor<?xbf16>
  %init = tensor.empty(%n) : tensor<?xbf16>
  %0 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%in : tensor<?xbf16>) outs(%init : tensor<?xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    %a = arith.extf %x : bf16 to f32
    %h = arith.constant 5.000000e-01 : f32
    %one = arith.constant 1.000000e+00 : f32
    %is2 = arith.constant 0.707106769 : f32
    %s = arith.mulf %a, %is2 : f32
    %e = math.erf %s : f32
    %ah = arith.mulf %a, %h : f32
    %p = arith.addf %one, %e : f32
    %r = arith.mulf %ah, %p : f32
    %rt = arith.truncf %r : f32 to bf16
    linalg.yield %rt : bf16
  } -> tensor<?xbf16>
  return %0 : tensor<?xbf16>
}

func.func @gelu_tanh(%in: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %in, %c0 : tensor<?xf32>
  %init = tensor.empty(%n) : tensor<?xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%in : tensor<?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %h = arith.constant 5.000000e-01 : f32
    %one = arith.constant 1.000000e+00 : f32
    %beta = arith.constant 0.797884583 : f32
    %kappa = arith.constant 4.471500e-02 : f32
    %a2 = arith.mulf %a, %a : f32
    %a3 = arith.mulf %a2, %a : f32
    %k3 = arith.mulf %kappa, %a3 : f32
    %in0 = arith.addf %a, %k3 : f32
    %arg = arith.mulf %beta, %in0 : f32
    %t = math.tanh %arg : f32
    %ha = arith.mulf %h, %a : f32
    %p = arith.addf %one, %t : f32
    %r = arith.mulf %ha, %p : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

func.func @gelu_tanh_bf16(%in: tensor<?xbf16>) -> tensor<?xbf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %in, %c0 : tensor<?xbf16>
  %init = tensor.empty(%n) : tensor<?xbf16>
  %0 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%in : tensor<?xbf16>) outs(%init : tensor<?xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    %a = arith.extf %x : bf16 to f32
    %h = arith.constant 5.000000e-01 : f32
    %one = arith.constant 1.000000e+00 : f32
    %beta = arith.constant 0.797884583 : f32
    %kappa = arith.constant 4.471500e-02 : f32
    %a2 = arith.mulf %a, %a : f32
    %a3 = arith.mulf %a2, %a : f32
    %k3 = arith.mulf %kappa, %a3 : f32
    %in0 = arith.addf %a, %k3 : f32
    %arg = arith.mulf %beta, %in0 : f32
    %t = math.tanh %arg : f32
    %ha = arith.mulf %h, %a : f32
    %p = arith.addf %one, %t : f32
    %r = arith.mulf %ha, %p : f32
    %rt = arith.truncf %r : f32 to bf16
    linalg.yield %rt : bf16
  } -> tensor<?xbf16>
  return %0 : tensor<?xbf16>
}

func.func @silu(%in: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %in, %c0 : tensor<?xf32>
  %init = tensor.empty(%n) : tensor<?xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%in : tensor<?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %one = arith.constant 1.000000e+00 : f32
    %neg = arith.negf %a : f32
    %e = math.exp %neg : f32
    %d = arith.addf %one, %e : f32
    %r = arith.divf %a, %d : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

func.func @silu_bf16(%in: tensor<?xbf16>) -> tensor<?xbf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %in, %c0 : tensor<?xbf16>
  %init = tensor.empty(%n) : tensor<?xbf16>
  %0 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%in : tensor<?xbf16>) outs(%init : tensor<?xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    %a = arith.extf %x : bf16 to f32
    %one = arith.constant 1.000000e+00 : f32
    %neg = arith.negf %a : f32
    %e = math.exp %neg : f32
    %d = arith.addf %one, %e : f32
    %r = arith.divf %a, %d : f32
    %rt = arith.truncf %r : f32 to bf16
    linalg.yield %rt : bf16
  } -> tensor<?xbf16>
  return %0 : tensor<?xbf16>
}

func.func @softcap_f32(%q: tensor<1x2x37x16xf32>, %k: tensor<1x2x37x16xf32>, %v: tensor<1x2x37x16xf32>) -> tensor<1x2x37x16xf32> {
  %o = attn.sdpa %q, %k, %v {is_causal = true} : (tensor<1x2x37x16xf32>, tensor<1x2x37x16xf32>, tensor<1x2x37x16xf32>) -> tensor<1x2x37x16xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 3.000000e+01 : f32
    %d = arith.divf %s, %c : f32
    %th = math.tanh %d : f32
    %r = arith.mulf %th, %c : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x2x37x16xf32>
}

func.func @softcap_bf16(%q: tensor<1x2x37x16xbf16>, %k: tensor<1x2x37x16xbf16>, %v: tensor<1x2x37x16xbf16>) -> tensor<1x2x37x16xbf16> {
  %o = attn.sdpa %q, %k, %v {is_causal = true} : (tensor<1x2x37x16xbf16>, tensor<1x2x37x16xbf16>, tensor<1x2x37x16xbf16>) -> tensor<1x2x37x16xbf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 3.000000e+01 : f32
    %d = arith.divf %s, %c : f32
    %th = math.tanh %d : f32
    %r = arith.mulf %th, %c : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x2x37x16xbf16>
}
