// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-cpu-reject-openmp-input
// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-cpu-lowering-pipeline

// The CPU pipeline makes its own OpenMP loops: input that already has them
// is refused at the first one (upstream's deallocation would otherwise
// leave invalid IR inside the omp.wsloop).
func.func @parallel_loop(%m: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{the CPU pipeline's input must not contain OpenMP ops}}
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        %v = arith.constant 1.0 : f32
        memref.store %v, %m[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
